// Package engine runs flows: interactions in dependency order (independent ones in
// parallel), each executed by its pattern's executor with termination enforced here, never
// left to the agents. Agents run through the runtime package; workers get sandboxes and their
// handoffs become proposals; every step goes to the JSONL event log; run state is
// checkpointed atomically so a crashed run is listed again with its last checkpoint.
package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/doctor"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

// Options configure one run.
type Options struct {
	// Workspace is the workspace root (absolute).
	Workspace string
	// DryRun runs every node with the built-in dry-run backend.
	DryRun bool
	// Pace, in a dry run, waits this long before each agent turn, so a person can watch the
	// run unfold (the terminal view, the canvas); a real run ignores it.
	Pace time.Duration
	// Backend, when set, overrides every node's runtime.backendId (the extension's pick);
	// "auto" keeps each node's own.
	Backend string
	// RunID, when set, names the run (it must pass sandbox.ValidateRunID); else a fresh id.
	RunID string
	// Human answers questions, dependency requests and phase approvals. Nil: questions take
	// their default or fail the run, dependencies are rejected, phases are approved.
	Human Human
	// Env supplies values for the environment-variable names the flow lists; a name missing
	// here is read from the sidecar's own environment.
	Env map[string]string
	// Sink receives every event as it is logged (stdout for the command line, runEvent
	// notifications for the server). It must not block for long.
	Sink func(eventlog.Event)
	// Task, when set, is the run's task (the flow's description otherwise).
	Task string
	// RoundCap bounds the rounds of an interaction whose flow sets no bound on rounds or
	// time and no params.round_cap (default flow.DefaultRoundCap): the engine never loops
	// forever, and never cuts short a loop the flow bounds itself.
	RoundCap int
	// StopGrace is the time between SIGTERM and SIGKILL when agents are stopped.
	StopGrace time.Duration
	// Resume continues an interrupted run from its checkpoint: the same run id, the
	// interactions it completed kept, not run again, and DryRun, Backend and Task as the run
	// was started with where these options leave them unset. Set by Resume.
	Resume *State
	// fork is what a fork replays, its Resume then the state made from its parent's fork point
	// (fork.go): a new run, not one to take over from another process.
	fork *forkReplay
	// DependencyTimeout bounds how long a dependency request waits for its value; zero keeps
	// the flow's policy.dependencyTimeoutMs, else one hour.
	DependencyTimeout time.Duration
	// rateWindow is the rate limits' period (tests shorten it; 0: a minute).
	rateWindow time.Duration
	// modelCalls is the default limit of model calls (tests lower it; 0: DefaultMaxModelCalls).
	modelCalls int
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// SandboxOf gives nodes the sandbox an earlier run prepared for them instead of a new
	// one (a revision run works in the sandbox of the proposal it revises): node id → the
	// run that owns the sandbox. Their proposals are made there too.
	SandboxOf map[string]string
	// Limits returns the person's restrictions (allowed and blocked folders, auto-apply),
	// called at each use so a change reaches a run already going; nil restricts nothing.
	Limits func() Limits
	// Gateway is how agents are routed through the run's model gateway (gateway.go):
	// GatewayAuto ("" too), GatewayLogins or GatewayOff. Pricing overrides entries of the
	// gateway's pricing table.
	Gateway string
	Pricing gateway.Pricing
}

// Status of a run or interaction.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusStopped   = "stopped"
	StatusSkipped   = "skipped"
	StatusWaiting   = "waiting" // waiting for a person
)

// Outcome is what a finished run yields.
type Outcome struct {
	RunID        string               `json:"runId"`
	Flow         string               `json:"flow"`
	Status       string               `json:"status"`
	Reason       string               `json:"reason,omitempty"`
	Interactions []InteractionOutcome `json:"interactions"`
	Proposals    []string             `json:"proposals,omitempty"` // workspace-relative proposal.json paths
	Metrics      Metrics              `json:"metrics"`
	Spend        Spend                `json:"spend"` // what its agents reported spending (spend.go)
}

// InteractionOutcome is one interaction's end.
type InteractionOutcome struct {
	ID        string `json:"id"`
	PatternID string `json:"patternId"`
	Status    string `json:"status"`
	Reason    string `json:"reason,omitempty"` // the termination reason
	Rounds    int    `json:"rounds"`
	Result    string `json:"result,omitempty"` // what the pattern yields (a decision, an answer…)
	Error     string `json:"error,omitempty"`
	Spend     *Spend `json:"spend,omitempty"` // what its agents reported spending (spend.go)
}

// ErrInvalidFlow is returned when the flow has validation errors; a run never starts then.
var ErrInvalidFlow = errors.New("the flow has validation errors")

// InvalidFlowError lists them.
type InvalidFlowError struct{ Diagnostics []diag.Diagnostic }

func (e *InvalidFlowError) Error() string {
	var b strings.Builder
	b.WriteString("the flow has validation errors; fix them before running:")
	n := 0
	for _, d := range e.Diagnostics {
		if d.Severity == diag.Error {
			b.WriteString("\n  " + d.String())
			if n++; n == 10 {
				b.WriteString("\n  …")
				break
			}
		}
	}
	return b.String()
}

func (e *InvalidFlowError) Unwrap() error { return ErrInvalidFlow }

// Run runs a flow to its end and returns its outcome. Cancelling ctx stops the run: every
// agent's process group is stopped and the run ends with status stopped.
func Run(ctx context.Context, f *flow.Flow, o Options) (*Outcome, error) {
	r, err := newRun(f, o)
	if err != nil {
		return nil, err
	}
	return r.execute(ctx), nil
}

// run is one execution of a flow.
type run struct {
	f *flow.Flow
	// uses are the workspace files the flows use, found once (flowuses.go).
	usesOnce sync.Once
	uses     []proposal.FlowUse
	o        Options
	id       string
	log      *eventlog.Log
	now      func() time.Time
	key      []byte // per-run signing key, memory only
	state    *State
	ctx      context.Context // execute's; set before any goroutine starts
	// stop cancels the run with a cause (ErrBudget when policy.budget is reached).
	stop   context.CancelCauseFunc
	budget limits // policy.budget

	mu        sync.Mutex
	ckMu      sync.Mutex // serialises checkpoint writes
	written   *State     // the last checkpoint written (under ckMu)
	outcomes  map[string]*InteractionOutcome
	proposals []string
	metrics   *metricSet
	mcp       mcpState       // the workspace's MCP servers and allowlist, read once (mcp.go)
	files     promptFiles    // rules, skills and memory for prompts (prompt.go)
	asks      sync.WaitGroup // handlePending goroutines: the log is closed after them
	// told holds the one-time warnings already given (firstTime).
	told sync.Map
	// confined is what the kernel offered agent confinement when the run started.
	confined confine.Status
	gw       runGateway // the model gateway (gateway.go)
	// turns is the run's transcript (transcript.go).
	turns *transcript.Writer
	// fp writes the run's fork points (forkpoints.go); fork is what a fork replays (nil for
	// any other run; fork_replay.go).
	fp   *forkPoints
	fork *forkReplay
	// flowWarnings are what validating the flow found (warnings and notes only: errors
	// refuse the run), said at its start as `validate` says them.
	flowWarnings []diag.Diagnostic
	// resumeLock is held while a resumed run runs (runlock.go).
	resumeLock *os.File
	// logPolicy is what the flow's observability asks the log to hold (observability.go).
	logPolicy logPolicy
	// secrets are the run's secret values, redacted wherever text leaves the engine (secrets.go).
	secrets secretSet
	// hidden are the folders of skills no agent may read (skill.go, hiddenSkills).
	hidden     []string
	hiddenOnce sync.Once
}

func newRun(f *flow.Flow, o Options) (*run, error) {
	if f.Doc == nil {
		return nil, &InvalidFlowError{Diagnostics: f.Problems}
	}
	if o.Workspace == "" {
		return nil, errors.New("engine: no workspace")
	}
	ds := validate.Flow(f, validate.Workspace{Root: o.Workspace, Rules: o.limits().Rules})
	if diag.HasErrors(ds) {
		return nil, &InvalidFlowError{Diagnostics: ds}
	}
	if err := checkCommands(f, o); err != nil {
		return nil, err
	}
	if err := checkCLIs(f, o); err != nil {
		return nil, err
	}
	confined, err := checkConfinement(f, o)
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RoundCap <= 0 {
		o.RoundCap = flow.DefaultRoundCap
	}
	id := o.RunID
	if o.Resume != nil {
		id = o.Resume.RunID
		// Resumed as it was started, unless the resume says otherwise (a dry run stays dry).
		o.Backend = firstNonEmpty(o.Backend, o.Resume.Backend)
		o.Task = firstNonEmpty(o.Task, o.Resume.Task)
		o.DryRun = o.DryRun || o.Resume.DryRun
	}
	if id == "" {
		id = NewRunID(o.Now())
	}
	if err := checkRunID(id); err != nil {
		return nil, err
	}
	var resumeLock *os.File
	if o.Resume != nil && o.fork == nil {
		if resumeLock, err = lockResume(o.Workspace, id); err != nil {
			return nil, err
		}
		// Read again under the lock: another process may have resumed or closed it since the
		// caller read it (its checkpoint then moved on).
		if st, err := ReadState(o.Workspace, id); err != nil || !st.Updated.Equal(o.Resume.Updated) {
			resumeLock.Close()
			if err == nil {
				err = fmt.Errorf("run %s changed while it was being resumed (another process resumed or closed it); it is %s now", id, st.Status)
			}
			return nil, err
		}
	}
	log, err := eventlog.OpenBuffered(o.Workspace, f.Name)
	if err != nil {
		if resumeLock != nil {
			resumeLock.Close()
		}
		return nil, fmt.Errorf("engine: event log: %w", err)
	}
	r := &run{f: f, o: o, id: id, log: log, now: o.Now, key: bus.NewKey(), outcomes: map[string]*InteractionOutcome{}, metrics: newMetricSet(), files: promptFiles{ws: o.Workspace}, confined: confined}
	r.state = newState(r)
	r.flowWarnings, r.resumeLock, r.fork = ds, resumeLock, o.fork
	r.logPolicy = newLogPolicy(f)
	for n, v := range o.Env { // the editor's values come from its secret storage: secrets all
		r.secrets.add(n, v)
	}
	r.turns = transcript.NewWriter(o.Workspace, id)
	r.fp = newForkPoints()
	r.budget = budgetLimits(f.Policy.Budget)
	if o.Resume != nil {
		r.state.Started = o.Resume.Started
		r.proposals = append(r.proposals, o.Resume.Proposals...)
		if sp := o.Resume.Spend; sp.Tokens > 0 || sp.CostUSD > 0 || len(sp.Unreported) > 0 {
			r.state.Spend = sp // the budget counts what the run spent before
		}
		r.state.Agents = maps.Clone(o.Resume.Agents) // and each agent's total goes on from its own
		r.state.ForkOf = o.Resume.ForkOf
	}
	return r, nil
}

// Resume goes on with a run of the flow f that a person stopped or whose engine died
// (Resumable): the interactions it completed are kept, the others run again, under the same
// run id.
func Resume(ctx context.Context, f *flow.Flow, runID string, o Options) (*Outcome, error) {
	st, err := ReadState(o.Workspace, runID)
	if err != nil {
		return nil, err
	}
	if err := Resumable(st); err != nil {
		return nil, err
	}
	if st.Flow != f.Name {
		return nil, fmt.Errorf("run %s ran the flow %q, not %q", runID, st.Flow, f.Name)
	}
	o.Resume = st
	return Run(ctx, f, o)
}

// NewRunID makes a run id that sorts by start time: run_YYYYMMDD-HHMMSS_<6 hex>.
func NewRunID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "run_" + t.UTC().Format("20060102-150405") + "_" + hex.EncodeToString(b[:])
}

// The log is buffered (a turn logs five or six events, and a write each cost more than
// all the rest of the engine's bookkeeping). It is written out where what it says must be
// on disk: before every agent turn starts (so the log shows what the agent is doing while
// it runs), at every checkpoint and pause for a person, before the curator reads it, before
// a verifier or test command runs, and at the end of the run. While a proposal is made,
// reviewed or applied (they log to the same file themselves) it writes each event at once,
// so the file keeps the order of events. An engine killed in between loses only the events
// of its own bookkeeping since the last of those points; the reader tolerates a torn line.

// flushLog writes the buffered events.
func (r *run) flushLog() {
	if err := r.log.Flush(); err != nil {
		fmt.Fprintf(os.Stderr, "agentcanvas: event log: %v\n", err)
	}
}

// logThrough writes the log event by event until the returned func is called: another
// writer appends to the same file meanwhile (proposals log their own events).
func (r *run) logThrough() (done func()) {
	done, err := r.log.WriteThrough()
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentcanvas: event log: %v\n", err)
	}
	return done
}

// firstTime reports whether key is new to this run: for warnings worth giving once, not
// every prompt.
func (r *run) firstTime(key string) bool {
	_, seen := r.told.LoadOrStore(key, true)
	return !seen
}

// emit logs an event and passes it to the sink.
func (r *run) emit(interactionID, edgeID, event string, fields map[string]any) {
	ev := eventlog.Event{TS: r.now().UnixMilli(), Flow: r.f.Name, RunID: r.id, InteractionID: interactionID, EdgeID: edgeID, Event: event, Fields: r.secrets.fields(fields)}
	if r.logPolicy.logs(interactionID) {
		if err := r.log.Append(ev); err != nil {
			fmt.Fprintf(os.Stderr, "agentcanvas: event log: %v\n", err)
		}
	}
	if r.o.Sink != nil {
		r.o.Sink(ev)
	}
}

func (r *run) execute(ctx context.Context) *Outcome {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer r.close()
	r.ctx, r.stop = ctx, cancel
	confinement, unconfined := r.confinementStatus()
	started := map[string]any{"workspace": r.o.Workspace, "dryRun": r.o.DryRun, "interactions": len(r.f.Interactions), "task": r.task(), "confinement": confinement}
	if d := r.defaultLimitStarted(); d != nil { // agentlimit.go
		started["defaultLimit"] = d
	}
	if b := r.budget.words(); b != nil && !r.o.DryRun {
		started["budget"] = b // said at the start: what stops the run
	}
	switch {
	case r.fork != nil:
		r.forkBegins(started) // fork_replay.go
	case r.o.Resume != nil:
		r.emit("", "", "run_resumed", started)
	default:
		r.emit("", "", "run_started", started)
	}
	for _, d := range r.flowWarnings {
		if d.Severity == diag.Warning {
			r.emit("", "", "warning", map[string]any{"message": d.String(), "code": d.Code})
		}
	}
	if unconfined != "" {
		r.emit("", "", "warning", map[string]any{"message": unconfined})
	}
	r.pruneLog()
	if _, err := transcript.Prune(r.o.Workspace, r.now()); err != nil {
		r.emit("", "", "warning", map[string]any{"message": "pruning old transcripts: " + err.Error()})
	}
	pruneForkPoints(r.o.Workspace) // with their transcripts (forkpoints.go)

	order, err := schedule(r.f.Interactions)
	out := &Outcome{RunID: r.id, Flow: r.f.Name}
	if err != nil {
		out.Status, out.Reason = StatusFailed, err.Error()
		r.emit("", "", "error", map[string]any{"message": err.Error()})
		r.finish(out)
		return out
	}
	done := map[string]chan struct{}{}
	kept := map[string]bool{} // completed before an interruption: not run again
	for _, in := range order {
		done[in.ID] = make(chan struct{})
		r.outcomes[in.ID] = &InteractionOutcome{ID: in.ID, PatternID: in.PatternID, Status: "pending"}
		if r.o.Resume != nil {
			for _, prev := range r.o.Resume.Interactions {
				if prev.ID == in.ID && prev.Status == StatusCompleted {
					c := prev
					r.outcomes[in.ID] = &c
					kept[in.ID] = true
				}
			}
		}
	}
	// Checkpoints are fsynced, and each cost about a millisecond: the interactions that start
	// at once are recorded as running in the run's first checkpoint, and the end of the last
	// one to end in the run's final checkpoint, which follows it at once.
	startsNow := map[string]bool{}
	for _, in := range order {
		if !kept[in.ID] && len(in.DependsOn) == 0 {
			startsNow[in.ID] = true
			r.outcomes[in.ID].Status = StatusRunning
		}
	}
	r.checkpoint()
	var left atomic.Int32
	left.Store(int32(len(order)))
	var wg sync.WaitGroup
	for _, in := range order {
		wg.Add(1)
		go func(in *flow.Interaction) {
			defer wg.Done()
			defer close(done[in.ID])
			if kept[in.ID] {
				left.Add(-1)
				return
			}
			for _, dep := range in.DependsOn {
				select {
				case <-done[dep]:
				case <-ctx.Done():
				}
			}
			r.mu.Lock()
			oc := r.outcomes[in.ID]
			var failedDep string
			for _, dep := range in.DependsOn {
				if s := r.outcomes[dep].Status; s != StatusCompleted {
					failedDep = dep
				}
			}
			r.mu.Unlock()
			switch {
			case ctx.Err() != nil:
				r.setOutcome(oc, InteractionOutcome{Status: StatusStopped, Reason: stopReason(ctx)})
			case failedDep != "":
				r.setOutcome(oc, InteractionOutcome{Status: StatusSkipped, Reason: "dependency " + failedDep + " did not complete"})
				r.emit(in.ID, "", "terminated", map[string]any{"reason": "skipped", "note": oc.Reason})
			default:
				if !startsNow[in.ID] {
					r.mu.Lock()
					oc.Status = StatusRunning
					r.mu.Unlock()
					r.checkpoint()
				}
				res := r.runInteraction(ctx, in)
				r.setOutcome(oc, res)
			}
			if left.Add(-1) > 0 {
				r.checkpoint()
			}
		}(in)
	}
	wg.Wait()
	r.asks.Wait() // their answered / failed events belong before run_finished

	out.Status = StatusCompleted
	for _, in := range order {
		oc := *r.outcomes[in.ID]
		out.Interactions = append(out.Interactions, oc)
		if oc.Status != StatusCompleted && out.Status == StatusCompleted {
			out.Status, out.Reason = oc.Status, fmt.Sprintf("interaction %s: %s", in.ID, firstNonEmpty(oc.Error, oc.Reason))
		}
	}
	if ctx.Err() != nil {
		out.Status, out.Reason = StatusStopped, stopReason(ctx)
	}
	r.finish(out)
	return out
}

func (r *run) setOutcome(oc *InteractionOutcome, res InteractionOutcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	oc.Status, oc.Rounds, oc.Spend = res.Status, res.Rounds, res.Spend
	oc.Reason, oc.Result, oc.Error = r.secrets.str(res.Reason), r.secrets.str(res.Result), r.secrets.str(res.Error)
}

// sessionEnded: the run was cancelled because its session ended (ErrSessionEnded), not
// stopped by anyone; its checkpoint stays the last one written before that.
func (r *run) sessionEnded() bool {
	return r.ctx != nil && errors.Is(context.Cause(r.ctx), ErrSessionEnded)
}

func (r *run) finish(out *Outcome) {
	if r.sessionEnded() {
		out.Status, out.Reason = StatusInterrupted, ErrSessionEnded.Error()
		r.emit("", "", "run_interrupted", map[string]any{"reason": out.Reason})
		return
	}
	r.mu.Lock()
	out.Proposals = append([]string(nil), r.proposals...)
	r.mu.Unlock()
	out.Metrics = r.metrics.snapshot()
	out.Spend = r.spent()
	r.state.Status = out.Status
	r.state.Reason = out.Reason
	r.state.Finished = r.now().UTC()
	r.checkpoint()
	r.emit("", "", "run_finished", map[string]any{"status": out.Status, "reason": out.Reason, "metrics": out.Metrics, "proposals": out.Proposals, "spend": out.Spend})
	if err := writeMemory(r, out); err != nil {
		r.emit("", "", "warning", map[string]any{"message": "memory notes: " + err.Error()})
	}
}

// close writes out the log and releases the run's workspace handles.
func (r *run) close() {
	if err := r.log.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "agentcanvas: event log: %v\n", err)
	}
	r.files.close()
	runtime.RemoveTemp(r.id) // the agents' private temporary folders
	r.closeGateway()
	if err := r.fp.close(); err != nil {
		fmt.Fprintf(os.Stderr, "agentcanvas: snapshot store: %v\n", err)
	}
	if r.resumeLock != nil {
		r.resumeLock.Close()
	}
}

func (r *run) task() string {
	return firstNonEmpty(r.o.Task, r.f.Description, r.f.Title, "Run the flow "+r.f.Name)
}

// schedule orders interactions so every one comes after those it depends on; it refuses
// unknown dependencies and cycles.
func schedule(ins []*flow.Interaction) ([]*flow.Interaction, error) {
	byID := map[string]*flow.Interaction{}
	for _, in := range ins {
		byID[in.ID] = in
	}
	var order []*flow.Interaction
	mark := map[string]int{} // 1 visiting, 2 done
	var visit func(in *flow.Interaction, path []string) error
	visit = func(in *flow.Interaction, path []string) error {
		switch mark[in.ID] {
		case 1:
			return fmt.Errorf("interactions depend on each other in a cycle: %s", strings.Join(append(path, in.ID), " → "))
		case 2:
			return nil
		}
		mark[in.ID] = 1
		deps := append([]string(nil), in.DependsOn...)
		sort.Strings(deps)
		for _, d := range deps {
			dep, ok := byID[d]
			if !ok {
				return fmt.Errorf("interaction %s depends on %q, which does not exist", in.ID, d)
			}
			if err := visit(dep, append(path, in.ID)); err != nil {
				return err
			}
		}
		mark[in.ID] = 2
		order = append(order, in)
		return nil
	}
	for _, in := range ins {
		if err := visit(in, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// checkCommands resolves every command agent's relative paths before anything runs, so a
// missing script fails the run at once, naming the agent and the field, rather than as exit
// 127 in the middle of it.
func checkCommands(f *flow.Flow, o Options) error {
	if o.DryRun || (o.Backend != "" && o.Backend != "auto" && o.Backend != runtime.BackendCommand) {
		return nil
	}
	var errs []error
	check := func(id string, rt *flow.Runtime) {
		if rt == nil || (rt.BackendID != runtime.BackendCommand && o.Backend != runtime.BackendCommand) {
			return
		}
		if _, err := runtime.ResolveCommand(o.Workspace, rt.Command); err != nil {
			errs = append(errs, fmt.Errorf("agent %s: %w", id, err))
		}
	}
	for _, a := range f.Agents {
		check(a.ID, a.Runtime)
	}
	for _, s := range f.SystemNodes {
		check(s.ID, s.Runtime)
	}
	return errors.Join(errs...)
}

// checkCLIs refuses a run whose agents name a CLI (claude, codex, gemini) that is not on PATH,
// before anything starts, with the command that installs it — not at the agent's first turn.
func checkCLIs(f *flow.Flow, o Options) error {
	if o.DryRun {
		return nil
	}
	var errs []error
	seen := map[string]bool{}
	for _, a := range f.Agents {
		id := o.Backend
		if (id == "" || id == "auto") && a.Runtime != nil {
			id = a.Runtime.BackendID
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		path := os.Getenv("PATH")
		if p := o.Env["PATH"]; p != "" && a.Runtime != nil && slices.Contains(a.Runtime.Env, "PATH") {
			path = p // the agent is given a PATH of its own
		}
		if m := doctor.Missing(id, path); m != "" {
			errs = append(errs, fmt.Errorf("agent %s: %s (agentcanvas doctor checks everything a real run needs)", a.ID, m))
		}
	}
	return errors.Join(errs...)
}

// sandboxRun is the run whose sandbox node works in: this run's, unless Options.SandboxOf
// lends it an earlier run's.
func (r *run) sandboxRun(node string) string {
	if id, ok := r.o.SandboxOf[node]; ok {
		return id
	}
	return r.id
}
