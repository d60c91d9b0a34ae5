package transcript

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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

// appendLine appends line to the run's transcript.
func appendLine(workspace, runID string, line []byte) error {
	return AppendRunFile(workspace, runID, FileName, line)
}

// AppendRunFile appends data to .agentcanvas/runs/<runID>/<name>, inside the workspace through
// os.Root (a run id cannot lead outside it), readable by the user only: a run's transcript and
// fork points hold prompts and replies, which may hold the task's private details.
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
	f, err := root.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fileSize(workspace, runID string) int64 {
	st, err := os.Stat(filepath.Join(workspace, RunsDir, runID, FileName))
	if err != nil {
		return 0
	}
	return st.Size()
}

// Read returns a run's turns in the order they ended. A run without a transcript (one from
// before transcripts, or whose agents never ran) has none: fs.ErrNotExist.
func Read(workspace, runID string) ([]Turn, error) {
	if err := sandbox.ValidateRunID(runID); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(filepath.Join(RunsDir, runID, FileName))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Turn
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 2*MaxFile)
	for n := 1; sc.Scan(); n++ {
		var t Turn
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			// a line cut by a crash mid-write is the last one: keep what came before
			return out, fmt.Errorf("%s/%s/%s:%d: %w", RunsDir, runID, FileName, n, err)
		}
		out = append(out, t)
	}
	return out, sc.Err()
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
