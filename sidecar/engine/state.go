package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/procalive"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// RunsDir is the workspace-relative folder of run checkpoints.
const RunsDir = ".agentcanvas/runs"

// State is a run's checkpoint, .agentcanvas/runs/<runId>/state.json. It is rewritten
// atomically (temp file + rename) at every step and pause, so a reader never sees half of it.
type State struct {
	RunID    string    `json:"runId"`
	Flow     string    `json:"flow"`
	FlowFile string    `json:"flowFile"`
	Status   string    `json:"status"`
	Reason   string    `json:"reason,omitempty"`
	DryRun   bool      `json:"dryRun,omitempty"`
	Backend  string    `json:"backend,omitempty"` // the run's Options.Backend and Task: a resumed run
	Task     string    `json:"task,omitempty"`    // is run the same way (Options.Env, secrets, is never written)
	Started  time.Time `json:"started"`
	Updated  time.Time `json:"updated"`
	Finished time.Time `json:"finished,omitzero"`
	PID      int       `json:"pid"` // the engine's process, to tell a crashed run
	// PIDStart is when that process started (procalive.StartTime; 0 where unknown), so a
	// process that got the same id later is not taken for the run's.
	PIDStart uint64 `json:"pidStart,omitempty"`
	// Resumable is set by ListStates on a run that --resume (Resume Run) can go on with.
	Resumable    bool                 `json:"resumable,omitempty"`
	Interactions []InteractionOutcome `json:"interactions"`
	Pending      []Request            `json:"pending,omitempty"` // questions waiting for a person
	Proposals    []string             `json:"proposals,omitempty"`
	// Spend is what the run's agents reported spending so far (spend.go); a resumed run
	// goes on counting from it against its budget.
	Spend Spend `json:"spend"`
	// Agents is each agent's share of Spend (numbers only), so the Runs view and the canvas
	// show it again after a reload; a resumed run goes on adding to it.
	Agents map[string]AgentSpend `json:"agentSpend,omitempty"`
	// ForkOf is the run and turn a fork left from (fork.go).
	ForkOf *ForkOrigin `json:"forkOf,omitempty"`
}

func checkRunID(id string) error { return sandbox.ValidateRunID(id) }

func newState(r *run) *State {
	now := r.now().UTC()
	st := &State{RunID: r.id, Flow: r.f.Name, FlowFile: recordedPath(r.o.Workspace, r.f.File), Status: StatusRunning, DryRun: r.o.DryRun, Backend: r.o.Backend, Task: r.o.Task,
		Started: now, Updated: now, Spend: newSpend()}
	st.PID, st.PIDStart = thisEngine()
	return st
}

// thisEngine is this process as a run's state records it: its id and start time.
func thisEngine() (pid int, start uint64) {
	pid = os.Getpid()
	start, _ = procalive.StartTime(pid)
	return pid, start
}

// recordedPath is a path a run records for later use (a revision finds the run's flow by it):
// an absolute path as it is; a relative one (to the folder the run was started from) made
// relative to the workspace when it lies inside it, else absolute: never relative to a folder
// a later command may not be started from.
func recordedPath(workspace, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil || p == "" || filepath.IsAbs(p) {
		return p
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(ws, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return abs
}

// checkpoint writes state.json (and the log). Errors are reported as events, never fatal:
// the run goes on.
func (r *run) checkpoint() {
	r.writeCheckpoint(true)
	r.flushLog()
}

// checkpointRound is the checkpoint at the end of a round: atomic like every other (the
// rename), but not fsynced — a round is cheap to redo, and an fsync a round cost more than
// the turn itself. Pauses, interaction ends and the run's end are fsynced. A round that
// changed nothing the checkpoint records (most rounds: outcomes change when an interaction
// ends, pending requests at pauses, which checkpoint themselves) is not written again:
// creating and renaming the file cost more than a small agent turn.
func (r *run) checkpointRound() { r.writeCheckpoint(false) }

func (r *run) writeCheckpoint(durable bool) {
	if r.sessionEnded() {
		return // left as it was when the session ended: running, with its pending requests
	}
	// Checkpoints come from every interaction's goroutine: one at a time, snapshot and write
	// together, so two writers never share the temporary file and the newest snapshot is
	// the one left on disk.
	r.ckMu.Lock()
	defer r.ckMu.Unlock()
	r.mu.Lock()
	// Checked again under the lock: a request is dropped from Pending only after the ask
	// was cancelled, so a snapshot taken before the session ended still holds it.
	if r.sessionEnded() {
		r.mu.Unlock()
		return
	}
	st := *r.state
	st.Updated = r.now().UTC()
	st.Interactions = nil
	for _, in := range r.f.Interactions {
		if oc, ok := r.outcomes[in.ID]; ok {
			st.Interactions = append(st.Interactions, *oc)
		}
	}
	st.Pending = append([]Request(nil), r.state.Pending...)
	st.Agents = maps.Clone(r.state.Agents) // charges go on changing the run's map
	st.Proposals = append([]string(nil), r.proposals...)
	r.mu.Unlock()
	if !durable && r.written != nil && sameCheckpoint(r.written, &st) {
		return
	}
	if err := writeState(r.o.Workspace, &st, durable); err != nil {
		r.emit("", "", "warning", map[string]any{"message": "checkpoint: " + err.Error()})
		return
	}
	r.written = &st
}

// sameCheckpoint: a and b record the same run state (they may differ in Updated only).
func sameCheckpoint(a, b *State) bool {
	x := *a
	x.Updated = b.Updated
	return reflect.DeepEqual(&x, b)
}

func writeState(workspace string, st *State, durable bool) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeRunFile(workspace, st.RunID, "state.json", append(b, '\n'), durable)
}

// writeRunFile replaces .agentcanvas/runs/<runID>/<name> atomically (a temporary file renamed
// over it), inside the workspace through os.Root; durable also syncs it first.
func writeRunFile(workspace, runID, name string, data []byte, durable bool) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	dir := filepath.Join(RunsDir, runID)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d.tmp", name, os.Getpid()))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		root.Remove(tmp)
		return err
	}
	if err := syncIf(durable, f); err != nil {
		f.Close()
		root.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		root.Remove(tmp)
		return err
	}
	return root.Rename(tmp, filepath.Join(dir, name))
}

// readRunFile reads .agentcanvas/runs/<runID>/<name> (a checkpoint, a transcript, fork
// points), inside the workspace through os.Root.
func readRunFile(workspace, runID, name string) ([]byte, error) {
	if err := checkRunID(runID); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(filepath.Join(RunsDir, runID, name))
}

// ReadState reads one run's checkpoint.
func ReadState(workspace, runID string) (*State, error) {
	b, err := readRunFile(workspace, runID, "state.json")
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s/%s/state.json: %w", RunsDir, runID, err)
	}
	return &st, nil
}

// ListStates lists every run checkpoint of a workspace, newest first. A run recorded as
// running whose engine process is gone is reported as "interrupted": it crashed or was
// killed, and can be resumed or closed.
func ListStates(workspace string) ([]State, error) {
	entries, err := os.ReadDir(filepath.Join(workspace, RunsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []State
	for _, e := range entries {
		if !e.IsDir() || checkRunID(e.Name()) != nil {
			continue
		}
		st, err := ReadState(workspace, e.Name())
		if err != nil {
			continue
		}
		if st.engineGone() {
			st.Status = StatusInterrupted
		}
		st.Resumable = Resumable(st) == nil
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out, nil
}

// StatusInterrupted marks a run whose engine died before it finished.
const StatusInterrupted = "interrupted"

// CloseRun marks an interrupted run as stopped, so it is no longer offered for resuming.
func CloseRun(workspace, runID string) error {
	st, err := ReadState(workspace, runID)
	if err != nil {
		return err
	}
	if st.Status != StatusRunning && st.Status != StatusWaiting {
		return fmt.Errorf("run %s is %s, not interrupted", runID, st.Status)
	}
	if st.engineAlive() {
		return fmt.Errorf("run %s is still running (process %d)", runID, st.PID)
	}
	st.Status, st.Reason, st.Finished = StatusStopped, "closed after an interruption", time.Now().UTC()
	return writeState(workspace, st, true)
}

// ReasonStopped is the reason of a run a person stopped (Ctrl-C, Stop Run).
const ReasonStopped = "stopped"

// engineRunning: the run is recorded as running and the process that runs it is this one or
// another still there (the same id and start time).
func (st *State) engineRunning() bool {
	return (st.Status == StatusRunning || st.Status == StatusWaiting) && (st.PID == os.Getpid() || procalive.Same(st.PID, st.PIDStart))
}

// engineAlive: the run is recorded as running and the process that runs it is another,
// still there.
func (st *State) engineAlive() bool { return st.engineRunning() && st.PID != os.Getpid() }

// engineGone: the run is recorded as running, but the process that ran it is gone (killed,
// crashed, or its id taken by another process since).
func (st *State) engineGone() bool {
	return (st.Status == StatusRunning || st.Status == StatusWaiting) && !st.engineRunning()
}

// Resumable says why the run st cannot be resumed, or nil when it can: its engine is gone
// before the end (killed, crashed, a window reload), or a person stopped it.
func Resumable(st *State) error {
	switch {
	case st.engineAlive():
		return fmt.Errorf("run %s is still running (process %d); stop it first", st.RunID, st.PID)
	case st.Status == StatusRunning || st.Status == StatusWaiting || st.Status == StatusInterrupted:
		return nil
	case st.Status == StatusStopped && st.Reason == ReasonStopped:
		return nil
	case st.Status == StatusStopped && st.Reason == "budget":
		return fmt.Errorf("run %s was stopped by its spend limit (policy.budget), which counts what it spent before: a resumed run would stop again at once", st.RunID)
	case st.Status == StatusStopped:
		return fmt.Errorf("run %s is stopped (%s); only a run stopped by a person or killed before its end can be resumed", st.RunID, st.Reason)
	}
	return fmt.Errorf("run %s is %s; only a run stopped by a person or killed before its end can be resumed", st.RunID, st.Status)
}

// ResumableOutcome: the run just ended can be resumed (a person stopped it).
func ResumableOutcome(out *Outcome) bool {
	return out.Status == StatusStopped && out.Reason == ReasonStopped
}

func syncIf(durable bool, f *os.File) error {
	if !durable {
		return nil
	}
	return f.Sync()
}
