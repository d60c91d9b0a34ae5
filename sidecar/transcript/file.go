package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// RunsDir holds one folder per run (the engine's checkpoints live there too).
const RunsDir = ".agentcanvas/runs"

// Retention: a run's transcript is removed when it is older than MaxAge or when more than
// MaxRuns newer transcripts exist (Prune, when a run starts).
const (
	MaxAge  = 30 * 24 * time.Hour
	MaxRuns = 50
)

// appendLine appends line to the run's transcript (AppendRunFile).
func appendLine(workspace, runID string, line []byte) error {
	return AppendRunFile(workspace, runID, FileName, line)
}

// AppendRunFile appends data (whole lines) to .agentcanvas/runs/<runID>/<name>, inside the
// workspace through os.Root (a run id cannot lead outside it), readable by the user only: a
// run's transcript and fork points hold prompts and replies, which may hold the task's private
// details. A write cut short (a full disk) is cut off again, so the next line does not join a
// torn one; a torn line already there (a power cut) gets a newline of its own first.
func AppendRunFile(workspace, runID, name string, data []byte) error {
	if err := sandbox.ValidateRunID(runID); err != nil {
		return err
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	dir := filepath.Join(RunsDir, runID)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := root.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	err = appendWhole(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// appendWhole appends line to f (opened O_APPEND), whole or not at all.
func appendWhole(f *os.File, line []byte) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	n, err := f.Write(line)
	if err != nil && n > 0 {
		if fi, serr := f.Stat(); serr == nil && fi.Size() == size+int64(n) {
			f.Truncate(size) // nobody wrote after it: the torn line goes
		}
	}
	return err
}

func fileSize(workspace, runID string) int64 {
	st, err := os.Stat(filepath.Join(workspace, RunsDir, runID, FileName))
	if err != nil {
		return 0
	}
	return st.Size()
}

// SkippedError names the lines Read skipped: lines that do not parse, such as a write cut
// short by a full disk or a power cut. Read returns every other turn with it.
type SkippedError struct {
	File  string
	Lines []int
	First error
}

func (e *SkippedError) Error() string {
	return fmt.Sprintf("%s: skipped %d %s that %s not parse (line %s: %v)", e.File, len(e.Lines),
		map[bool]string{true: "line", false: "lines"}[len(e.Lines) == 1], map[bool]string{true: "does", false: "do"}[len(e.Lines) == 1], joinInts(e.Lines, 10), e.First)
}

func joinInts(ns []int, most int) string {
	var parts []string
	for i, n := range ns {
		if i == most {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ", ")
}

// salvage reads the last whole turn of a line that does not parse: before appends started on
// a line of their own, a turn written after a torn one joined it.
func salvage(line []byte) (Turn, bool) {
	var t Turn
	i := bytes.LastIndex(line, []byte(`{"seq":`))
	return t, i > 0 && json.Unmarshal(line[i:], &t) == nil
}

// Read returns a run's turns in the order they ended. A run without a transcript (one from
// before transcripts, or whose agents never ran) has none: fs.ErrNotExist. A line that does
// not parse is skipped and the reading goes on past it: the turns come with a *SkippedError
// naming the lines.
func Read(workspace, runID string) ([]Turn, error) {
	if err := sandbox.ValidateRunID(runID); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	name := filepath.Join(RunsDir, runID, FileName)
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Turn
	var skipped *SkippedError
	br := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var t Turn
			if err := json.Unmarshal(line, &t); err != nil {
				if skipped == nil {
					skipped = &SkippedError{File: name, First: err}
				}
				skipped.Lines = append(skipped.Lines, n)
				if t, ok := salvage(line); ok {
					out = append(out, t) // a whole turn appended to a torn one
				}
			} else {
				out = append(out, t)
			}
		}
		if rerr == io.EOF {
			break
		} else if rerr != nil {
			return out, rerr
		}
	}
	if skipped != nil {
		return out, skipped
	}
	return out, nil
}

// Prune removes transcripts past the retention (older than MaxAge, or beyond the MaxRuns
// newest), keeping the runs' other files. It returns how many it removed.
func Prune(workspace string, now time.Time) (int, error) {
	entries, err := os.ReadDir(filepath.Join(workspace, RunsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	type kept struct {
		path string
		mod  time.Time
	}
	var all []kept
	for _, e := range entries {
		if !e.IsDir() || sandbox.ValidateRunID(e.Name()) != nil {
			continue
		}
		p := filepath.Join(workspace, RunsDir, e.Name(), FileName)
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			all = append(all, kept{p, st.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	removed := 0
	for i, k := range all {
		if i >= MaxRuns || now.Sub(k.mod) > MaxAge {
			if os.Remove(k.path) == nil {
				removed++
			}
		}
	}
	return removed, nil
}
