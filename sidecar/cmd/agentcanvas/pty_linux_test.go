package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// terminal is a pseudo-terminal for tests: the command gets slave as its stdin, stdout and
// stderr, the test reads what it shows from the master side and types into it.
type terminal struct {
	master, slave *os.File
	mu            sync.Mutex
	out           bytes.Buffer
	changed       chan struct{}
	done          chan struct{}
}

// openTerminal opens a pty of cols×rows (Linux /dev/ptmx).
func openTerminal(t *testing.T, cols, rows uint16) *terminal {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var n int
	var ioErr error
	rc, _ := m.SyscallConn()
	rc.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr != nil {
			return
		}
		if n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN); ioErr != nil {
			return
		}
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	})
	if ioErr != nil {
		m.Close()
		t.Fatalf("pty: %v", ioErr)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	tm := &terminal{master: m, slave: s, changed: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 4096)
		for {
			k, err := m.Read(buf)
			if k > 0 {
				tm.mu.Lock()
				tm.out.Write(bytes.ReplaceAll(buf[:k], []byte("\r\n"), []byte("\n")))
				tm.mu.Unlock()
				select {
				case tm.changed <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return // EIO once the slave side is closed
			}
		}
	}()
	t.Cleanup(func() { s.Close(); m.Close() })
	return tm
}

// output is everything shown so far.
func (tm *terminal) output() []byte {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return bytes.Clone(tm.out.Bytes())
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\r`)

// plainText is what was shown without escape sequences (every redraw of the block stays in).
func plainText(raw []byte) string { return string(ansi.ReplaceAll(raw, nil)) }

// waitFor waits until the output, without escape sequences, matches re. It waits for the
// condition, not for a time; the deadline only turns a hang into a failure with the output.
func (tm *terminal) waitFor(t *testing.T, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(2 * time.Minute)
	for {
		if rx.MatchString(plainText(tm.output())) {
			return
		}
		select {
		case <-tm.changed:
		case <-deadline:
			t.Fatalf("the terminal never showed %s:\n%s", re, plainText(tm.output()))
		}
	}
}

// close ends the slave side and waits until everything written is read.
func (tm *terminal) close() []byte {
	tm.slave.Close()
	<-tm.done
	return tm.output()
}
