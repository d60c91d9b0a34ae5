package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// A fork is a new run whose state is an earlier run's at the end of one of its turns — the
// interactions ended by then, the replies, messages and rounds of those still going (replayed
// from the fork points, without the agents), the spend so far, each worker's sandbox files as
// they were then, each CLI's session where its backend can resume it — and that goes on from
// there, live, under the flow as it is now, with the changes the person asks for (fork_set.go).
// What a fork cannot restore is said before it starts, per agent (fork_limits.go).

// ForkRequest asks for a fork of run RunID from the end of its turn At (the transcript's
// numbering: `agentcanvas run show`).
type ForkRequest struct {
	RunID string `json:"runId"`
	At    int    `json:"at"`
	// Set are changes to the flow for the fork, "agent.<id>.backend=codex" or "task=…"
	// (fork_set.go).
	Set []string `json:"set,omitempty"`
}

// ForkOrigin is where a fork left its parent; a fork's state.json keeps it.
type ForkOrigin struct {
	RunID string `json:"runId"`
	Turn  int    `json:"turn"`
}

// ForkPlan is what a fork will do, worked out before anything is written: which run and
// flow, what each agent gets back and what it cannot, and what no fork undoes.
type ForkPlan struct {
	RunID  string     `json:"runId"` // the fork's
	Origin ForkOrigin `json:"forkOf"`
	// Turns is how many turns the parent has (in its transcript).
	Turns int `json:"turns"`
	// Flow is the flow file the fork runs; Changes what --set changed in it.
	FlowFile string      `json:"flowFile"`
	Changes  []string    `json:"changes,omitempty"`
	Agents   []ForkAgent `json:"agents"`
	// Limits are what the fork cannot restore for the whole run.
	Limits []string `json:"limits"`
	// Cleaned are forks a killed process left half-made, removed before this one.
	Cleaned []string `json:"cleaned,omitempty"`

	workspace string
	parent    *State
	flow      *flow.Flow
	flowText  []byte // the changed flow, written into the fork's folder; nil: the file as it is
	task      string // a changed task ("" keeps the parent's)
	// clearBackend: the parent's run-wide backend is written into the fork's flow instead.
	clearBackend bool
	points       map[int]*forkPoint
	turns        []transcript.Turn
	replay       *forkReplay
	kept         []InteractionOutcome
	restore      map[string]*forkPoint // agent → its last fork point with a sandbox, up to the turn
	homes        map[string]*forkPoint // agent → its last fork point with a CLI home
	at           *forkPoint
}

// Flow is the flow the fork runs (with the changes --set made).
func (p *ForkPlan) Flow() *flow.Flow { return p.flow }

// ForkAgent is what one agent of the flow gets back in the fork.
type ForkAgent struct {
	ID string `json:"id"`
	// Files and Session say, in words, what becomes of its files and of its CLI session.
	Files   string `json:"files"`
	Session string `json:"session,omitempty"`
	// Restored: its sandbox comes back as it was; Resumed: its CLI session goes on.
	Restored bool `json:"restored"`
	Resumed  bool `json:"resumed"`
	// Limits are what cannot be restored for it.
	Limits []string `json:"limits,omitempty"`
}

// ForkError is a fork refused before anything was written, naming what is wrong.
type ForkError struct{ Msg string }

func (e *ForkError) Error() string { return e.Msg }

func forkErr(format string, a ...any) error { return &ForkError{Msg: fmt.Sprintf(format, a...)} }

// PlanFork works out a fork of req.RunID from the end of turn req.At, without writing
// anything but the removal of forks a killed process left half-made. Its errors name the run,
// the turn or the --set key that is wrong.
func PlanFork(workspace string, req ForkRequest) (*ForkPlan, error) {
	if err := checkRunID(req.RunID); err != nil {
		return nil, forkErr("%v", err)
	}
	cleaned := cleanAbandonedForks(workspace)
	parent, err := ReadState(workspace, req.RunID)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, forkErr("there is no run %s in %s", req.RunID, workspace)
	}
	if err != nil {
		return nil, err
	}
	p := &ForkPlan{RunID: NewRunID(time.Now()), Origin: ForkOrigin{RunID: req.RunID, Turn: req.At}, Cleaned: cleaned, workspace: workspace, parent: parent}
	if err := p.readTurns(); err != nil {
		return nil, err
	}
	if err := p.loadFlow(req.Set); err != nil {
		return nil, err
	}
	p.analyse()
	p.sayLimits()
	return p, nil
}

// readTurns reads the parent's transcript and fork points, and checks the turn.
func (p *ForkPlan) readTurns() error {
	id, at := p.Origin.RunID, p.Origin.Turn
	turns, err := transcript.Read(p.workspace, id)
	var torn *transcript.SkippedError // lines a power cut tore: their turns' fork points say
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &torn) {
		return fmt.Errorf("fork: the transcript of run %s: %w", id, err)
	}
	p.turns, p.Turns = turns, 0
	if len(turns) > 0 {
		p.Turns = turns[len(turns)-1].Seq
	}
	if p.points, err = readForkPoints(p.workspace, id); err != nil {
		return fmt.Errorf("fork: %w", err)
	}
	switch {
	case p.Turns == 0:
		return forkErr("run %s has no turns to fork from (its transcript is empty or was pruned)", id)
	case at < 1 || at > p.Turns:
		return forkErr("run %s has turns 1 to %d; there is no turn %d (agentcanvas run show %s lists them)", id, p.Turns, at, id)
	case len(p.points) == 0:
		return forkErr("run %s kept no fork points (it was run by a version of AgentCanvas without forks); it cannot be forked", id)
	}
	for seq := 1; seq <= at; seq++ {
		if p.points[seq] == nil {
			return forkErr("turn %d of run %s was not kept for forks (its fork point is missing: the run's log has a warning saying why); fork from an earlier turn", seq, id)
		}
	}
	p.at = p.points[at]
	return nil
}

// loadFlow reads the flow the parent ran, as it is now, and applies the changes.
func (p *ForkPlan) loadFlow(set []string) error {
	file := p.parent.FlowFile
	if !filepath.IsAbs(file) {
		if _, err := os.Stat(file); err != nil {
			file = filepath.Join(p.workspace, file)
		}
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return forkErr("run %s ran the flow %s, which cannot be read now: %v", p.parent.RunID, p.parent.FlowFile, err)
	}
	p.FlowFile = file
	changes, err := parseSets(set)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		p.flow = flow.Parse(file, src)
		return nil
	}
	return p.applySets(file, src, changes)
}

// Fork runs the plan: the fork's sandboxes, CLI homes, transcript and fork points are made
// first (a kill meanwhile leaves a fork the next plan removes), then its state, then it runs
// like any run. o.Workspace, o.RunID and o.Resume are the plan's.
func Fork(ctx context.Context, plan *ForkPlan, o Options) (*Outcome, error) {
	r, err := plan.newRun(o)
	if err != nil {
		return nil, err
	}
	if err := r.materialize(plan); err != nil {
		r.close()
		return nil, err
	}
	return r.execute(ctx), nil
}

// newRun is the fork as a run: a resume of a state made from the fork point, with the turns
// to replay.
func (p *ForkPlan) newRun(o Options) (*run, error) {
	st := &State{RunID: p.RunID, Flow: p.flow.Name, FlowFile: recordedPath(p.workspace, p.flow.File), Status: StatusRunning, DryRun: p.parent.DryRun,
		Backend: p.parent.Backend, Task: firstNonEmpty(p.task, p.parent.Task), Started: time.Now().UTC(),
		Interactions: p.kept, Spend: p.at.Spend, Agents: p.at.AgentSpend, ForkOf: &p.Origin}
	st.PID, st.PIDStart = thisEngine()
	if st.Spend.Tokens == 0 && st.Spend.CostUSD == 0 && len(st.Spend.Unreported) == 0 {
		st.Spend = newSpend()
	}
	if p.clearBackend {
		st.Backend = ""
	}
	o.Workspace, o.RunID, o.Resume, o.fork = p.workspace, p.RunID, st, p.replay
	return newRun(p.flow, o)
}

// StartFork makes the fork of plan and runs it in the background, as Start does a run; its
// questions reach the Manager's inbox.
func (m *Manager) StartFork(plan *ForkPlan, p StartParams) (RunInfo, error) {
	m.init()
	r, err := plan.newRun(Options{Env: p.Env, Human: m.inbox, Sink: m.Event, Limits: m.Limits})
	if err != nil {
		return RunInfo{}, err
	}
	if err := r.materialize(plan); err != nil {
		r.close()
		return RunInfo{}, err
	}
	return m.launchRun(r, nil), nil
}
