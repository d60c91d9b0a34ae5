package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// Manager runs flows for the server: several at once, each stoppable, with questions and
// dependency requests answered through its Inbox (answerQuestion, provideDependency,
// rejectDependency). Runs outlive the request that started them.
type Manager struct {
	Workspace string
	// Event receives every run event (agentcanvas/runEvent).
	Event func(eventlog.Event)
	// Asked is told about each request waiting for a person, once it can take an answer
	// (after its question_asked, dependency_requested or phase_completed event).
	Asked func(Request)
	// Limits gives every run the person's current restrictions (Options.Limits).
	Limits func() Limits

	once  sync.Once
	inbox *Inbox
	mu    sync.Mutex
	runs  map[string]*managedRun
}

// ErrSessionEnded is the cause a run is cancelled with when its session ends (Close: the
// editor's window reloads or the sidecar restarts). Unlike a user's Stop it does not end the
// run: its agents are stopped but its checkpoint is left as it was — running, with the
// requests it was waiting on — so the next session lists it as interrupted, to resume or close.
var ErrSessionEnded = errors.New("the sidecar session ended")

type managedRun struct {
	info    RunInfo
	cancel  context.CancelCauseFunc
	done    chan struct{}
	outcome *Outcome
}

// StartParams start a run.
type StartParams struct {
	DryRun  bool   `json:"dryRun,omitempty"`
	Backend string `json:"backend,omitempty"`
	Task    string `json:"task,omitempty"`
	// ResumeRunID continues that interrupted run instead of starting a new one, with the
	// DryRun, Backend and Task it was started with unless these are given.
	ResumeRunID string            `json:"resumeRunId,omitempty"`
	Env         map[string]string `json:"-"` // secret values from the editor; never logged or persisted
}

// RunInfo is a run as listRuns shows it.
type RunInfo struct {
	RunID        string               `json:"runId"`
	Flow         string               `json:"flow"`
	FlowFile     string               `json:"flowFile"`
	Status       string               `json:"status"`
	Reason       string               `json:"reason,omitempty"`
	DryRun       bool                 `json:"dryRun,omitempty"`
	Started      time.Time            `json:"started"`
	Finished     time.Time            `json:"finished,omitzero"`
	Updated      time.Time            `json:"updated,omitzero"` // the last checkpoint
	Interactions []InteractionOutcome `json:"interactions"`
	// Pending: the requests waiting for an answer; for an interrupted run, those it was
	// waiting on at its last checkpoint (not answerable: resuming asks them again).
	Pending   []Request `json:"pending"`
	Proposals []string  `json:"proposals"`
	Metrics   *Metrics  `json:"metrics,omitempty"`
	// Spend is what the run's agents reported spending so far (docs/runs.md, Spend limits).
	Spend Spend `json:"spend"`
	// AgentSpend is each agent's share of Spend, from the run's last checkpoint.
	AgentSpend map[string]AgentSpend `json:"agentSpend,omitempty"`
	// ForkOf is the run and turn a fork left from (fork.go).
	ForkOf *ForkOrigin `json:"forkOf,omitempty"`
	// Resumable: startRun with resumeRunId can go on with the run (interrupted, or stopped by
	// a person; Resumable).
	Resumable bool `json:"resumable,omitempty"`
}

func (m *Manager) init() {
	m.once.Do(func() {
		m.runs = map[string]*managedRun{}
		m.inbox = &Inbox{Notify: func(r Request) {
			if m.Asked != nil {
				m.Asked(r)
			}
		}}
	})
}

// Start starts f and returns at once with the new run's id; the run goes on in the
// background. A flow with validation errors is refused here.
func (m *Manager) Start(f *flow.Flow, p StartParams) (RunInfo, error) {
	return m.start(f, p, NewRunID(time.Now()))
}

// StartSkill starts a person's invocation of a skill: its flow is written into the run's
// folder (so the run is listed, logged and resumable like any other) and run.
func (m *Manager) StartSkill(inv SkillInvocation, p StartParams) (RunInfo, error) {
	id := NewRunID(time.Now())
	f, err := WriteSkillFlow(m.Workspace, id, inv)
	if err != nil {
		return RunInfo{}, err
	}
	p.ResumeRunID = ""
	return m.start(f, p, id)
}

// StartRevision starts a revision run of a pending proposal (Revise) in the background;
// when it ends, the proposal has its next revision (or says why not).
func (m *Manager) StartRevision(req RevisionRequest, p StartParams) (RunInfo, error) {
	m.init()
	o := Options{Workspace: m.Workspace, DryRun: p.DryRun, Backend: p.Backend, Env: p.Env, RunID: NewRunID(time.Now()), Human: m.inbox, Sink: m.Event, Limits: m.Limits}
	rv, err := prepareRevision(req, o)
	if err != nil {
		return RunInfo{}, err
	}
	info, err := m.launch(rv.f, rv.o, func(out *Outcome) { rv.finish(out) })
	if err != nil {
		rv.abandon()
	}
	return info, err
}

func (m *Manager) start(f *flow.Flow, p StartParams, runID string) (RunInfo, error) {
	m.init()
	o := Options{Workspace: m.Workspace, DryRun: p.DryRun, Backend: p.Backend, Task: p.Task, Env: p.Env, RunID: runID, Human: m.inbox, Sink: m.Event, Limits: m.Limits}
	if p.ResumeRunID != "" {
		st, err := ReadState(m.Workspace, p.ResumeRunID)
		if err != nil {
			return RunInfo{}, err
		}
		if err := Resumable(st); err != nil {
			return RunInfo{}, err
		}
		m.mu.Lock()
		mr, seen := m.runs[st.RunID]
		live := seen && mr.outcome == nil
		m.mu.Unlock()
		if live {
			return RunInfo{}, fmt.Errorf("run %s is running in this session", st.RunID)
		}
		o.Resume, o.RunID = st, st.RunID
	}
	return m.launch(f, o, nil)
}

// launch starts a run of f in the background; after, when set, gets its outcome before the
// run counts as ended (Wait returns).
func (m *Manager) launch(f *flow.Flow, o Options, after func(*Outcome)) (RunInfo, error) {
	r, err := newRun(f, o)
	if err != nil {
		return RunInfo{}, err
	}
	return m.launchRun(r, after), nil
}

// launchRun runs r in the background.
func (m *Manager) launchRun(r *run, after func(*Outcome)) RunInfo {
	id, f := r.id, r.f
	ctx, cancel := context.WithCancelCause(context.Background())
	mr := &managedRun{cancel: cancel, done: make(chan struct{}), info: RunInfo{RunID: id, Flow: f.Name, FlowFile: f.File, Status: StatusRunning, DryRun: r.o.DryRun, Started: r.state.Started, ForkOf: r.state.ForkOf}}
	m.mu.Lock()
	m.runs[id] = mr
	m.mu.Unlock()
	go func() {
		defer close(mr.done)
		out := r.execute(ctx)
		if after != nil {
			after(out)
		}
		m.mu.Lock()
		mr.outcome = out
		m.mu.Unlock()
	}()
	return mr.info
}

// Stop stops a run: every agent's process group gets SIGTERM, then SIGKILL.
func (m *Manager) Stop(runID string) error {
	m.init()
	m.mu.Lock()
	mr, ok := m.runs[runID]
	m.mu.Unlock()
	if !ok {
		if err := CloseRun(m.Workspace, runID); err == nil {
			return nil
		}
		return fmt.Errorf("no running run %q", runID)
	}
	mr.cancel(nil)
	return nil
}

// Wait blocks until a run started here ends (tests, the mcp command).
func (m *Manager) Wait(runID string) (*Outcome, error) {
	m.init()
	m.mu.Lock()
	mr, ok := m.runs[runID]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no run %q started here", runID)
	}
	<-mr.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return mr.outcome, nil
}

// List returns every run: those of this sidecar, live, and those on disk (finished, or
// interrupted by a crash), newest first.
func (m *Manager) List() ([]RunInfo, error) {
	m.init()
	states, err := ListStates(m.Workspace)
	if err != nil {
		return nil, err
	}
	pending := m.inbox.Pending()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []RunInfo
	seen := map[string]bool{}
	for _, st := range states {
		info := RunInfo{RunID: st.RunID, Flow: st.Flow, FlowFile: st.FlowFile, Status: st.Status, Reason: st.Reason, DryRun: st.DryRun, Started: st.Started, Finished: st.Finished, Updated: st.Updated, Interactions: st.Interactions, Proposals: st.Proposals, Pending: []Request{}, Spend: st.Spend, AgentSpend: st.Agents, ForkOf: st.ForkOf}
		if st.Status == StatusInterrupted && st.Pending != nil {
			info.Pending = st.Pending
		}
		info.Resumable = st.Resumable
		if mr, ok := m.runs[st.RunID]; ok {
			info.Resumable = mr.outcome != nil && ResumableOutcome(mr.outcome)
			if mr.outcome != nil {
				info.Status, info.Reason = mr.outcome.Status, mr.outcome.Reason
				met := mr.outcome.Metrics
				info.Metrics = &met
			} else if info.Status == StatusInterrupted {
				// Its engine is this process: it is running, not interrupted. A final status
				// on disk (written before run_finished) is kept.
				info.Status = StatusRunning
			}
		}
		for _, q := range pending {
			if q.RunID == st.RunID {
				info.Pending = append(info.Pending, q)
			}
		}
		if len(info.Pending) > 0 && info.Status == StatusRunning {
			info.Status = StatusWaiting
		}
		if info.Proposals == nil {
			info.Proposals = []string{}
		}
		seen[st.RunID] = true
		out = append(out, info)
	}
	for id, mr := range m.runs { // started but not yet checkpointed
		if !seen[id] {
			info := mr.info
			info.Pending, info.Proposals = []Request{}, []string{}
			out = append(out, info)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out, nil
}

// Answer answers a USER_QUESTION (or approves a phase).
func (m *Manager) Answer(runID, id, value string) error {
	m.init()
	return m.inbox.Answer(runID, id, Response{Value: value})
}

// Provide supplies a dependency's value (kept in memory and given to the agent only).
func (m *Manager) Provide(runID, id, value string) error {
	m.init()
	return m.inbox.Answer(runID, id, Response{Value: value})
}

// Reject rejects a dependency request (or declines a phase).
func (m *Manager) Reject(runID, id, reason string) error {
	m.init()
	return m.inbox.Answer(runID, id, Response{Reject: true, Reason: reason})
}

// Close stops every run's agents and waits for them to end. The runs are left interrupted
// (ErrSessionEnded), not stopped: the next session can resume them.
func (m *Manager) Close() {
	m.init()
	m.mu.Lock()
	var runs []*managedRun
	for _, mr := range m.runs {
		mr.cancel(ErrSessionEnded)
		runs = append(runs, mr)
	}
	m.mu.Unlock()
	for _, mr := range runs {
		<-mr.done
	}
}
