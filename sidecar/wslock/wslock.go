// Package wslock is the workspace lock: one writer at a time of a workspace and of its
// .agentcanvas/ state, across processes (the editor's sidecar, a terminal's command, two runs).
// It is an OS file lock (flock) on .agentcanvas/lock, so the kernel releases it when its
// holder dies, however it dies: a killed process never leaves a stale lock behind, unlike a
// lock that is a file's existence. The holder writes its pid and what it is doing into the
// file, so a second writer can say who it is waiting for.
//
// flock locks belong to an open file, not to a process: two goroutines of one process that
// each Acquire exclude each other too. A holder must not Acquire again (it would wait for
// itself until the timeout).
package wslock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// File is the lock's workspace-relative path.
const File = ".agentcanvas/lock"

// TimeoutEnv overrides DefaultTimeout (a Go duration such as "90s").
const TimeoutEnv = "AGENTCANVAS_LOCK_TIMEOUT"

// DefaultTimeout is how long a second writer waits before it gives up.
const DefaultTimeout = 60 * time.Second

// pollEvery is how often a waiting writer tries again (flock has no timed wait).
const pollEvery = 20 * time.Millisecond

// Options of Acquire.
type Options struct {
	Timeout time.Duration // 0: TimeoutEnv, else DefaultTimeout
	// Waiting, if set, is told once, with the holder's description, when the lock is taken.
	Waiting func(holder string)
}

// Lock is a held workspace lock.
type Lock struct{ f *os.File }

// BusyError is returned when the lock stayed taken for the whole timeout.
type BusyError struct {
	Workspace string
	Holder    string // "pid 123 (agentcanvas): applying …", or "" when unknown
	Waited    time.Duration
}

func (e *BusyError) Error() string {
	h := e.Holder
	if h == "" {
		h = "another process"
	}
	return fmt.Sprintf("the workspace %s is busy: %s has held its lock (%s) for more than %s; try again when it is done (%s sets how long to wait)",
		e.Workspace, h, File, e.Waited.Round(time.Second), TimeoutEnv)
}

// Acquire takes the lock of workspace for what (a few words: "applying coder's proposal"),
// waiting while another writer holds it, up to the timeout or until ctx ends.
func Acquire(ctx context.Context, workspace, what string, o Options) (*Lock, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// Through the root: a .agentcanvas that is a symlink out of the workspace is refused.
	if err := root.MkdirAll(filepath.Dir(File), 0o755); err != nil {
		return nil, fmt.Errorf("workspace lock: %w", err)
	}
	f, err := root.OpenFile(File, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("workspace lock: %w", err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = timeoutFromEnv()
	}
	start := time.Now()
	told := false
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("workspace lock %s: %w", File, err)
		}
		if ok {
			break
		}
		holder := readHolder(f)
		if !told && o.Waiting != nil {
			o.Waiting(holder)
			told = true
		}
		if time.Since(start) >= timeout {
			f.Close()
			return nil, &BusyError{Workspace: workspace, Holder: holder, Waited: timeout}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
	writeHolder(f, what)
	return &Lock{f: f}, nil
}

// Release gives the lock up (closing the file releases the flock).
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0) // nobody holds it: a later reader sees no stale holder
	unlock(l.f)
	l.f.Close()
	l.f = nil
}

func timeoutFromEnv() time.Duration {
	if v := os.Getenv(TimeoutEnv); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
	}
	return DefaultTimeout
}

// Describe is how a holder is written: "pid 123 (agentcanvas): applying …".
func Describe(pid int, what string) string {
	name := filepath.Base(os.Args[0])
	return "pid " + strconv.Itoa(pid) + " (" + name + "): " + what
}

func writeHolder(f *os.File, what string) {
	line := Describe(os.Getpid(), strings.ReplaceAll(what, "\n", " "))
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(line+"\n"), 0)
	}
}

// readHolder reads who holds the lock (best effort: a holder may be writing it right now).
func readHolder(f *os.File) string {
	b := make([]byte, 512)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, ioEOF) && n == 0 {
		return ""
	}
	return strings.TrimSpace(string(b[:n]))
}
