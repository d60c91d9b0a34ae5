package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/bus"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/snapshot"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// Fork points. At the end of every agent turn the engine appends a line to
// .agentcanvas/runs/<run>/forkpoints.jsonl: what a fork from that turn needs that the
// checkpoint (state.json, rewritten) does not keep — the turn's result, so a fork can replay
// it without the agent; the tree of the agent's sandbox and of its CLI's session store after
// it (package snapshot); the run's and the interaction's spend; the interactions ended by
// then. The line is written after the objects it names. It holds the reply as the transcript
// does (secrets redacted), so it is readable by the user only and pruned with the transcript.

// ForkPointsFile is a run's fork points inside .agentcanvas/runs/<run>/.
const ForkPointsFile = "forkpoints.jsonl"

// forkPoint is one turn as a fork needs it.
type forkPoint struct {
	Seq         int    `json:"seq"` // the transcript's turn number
	Interaction string `json:"interactionId"`
	Agent       string `json:"agent"`
	// Nth is the agent's turn count in the interaction, from 1: a fork replays the turn when
	// the interaction asks the agent for its Nth turn.
	Nth int `json:"nth"`
	// Since is how many turns the run had when this run of the interaction began: a resumed run
	// runs an unfinished interaction again from its start, so a fork replays only the turns of
	// its latest run (the highest Since), never those a stop cut short. A fork keeps the Since
	// of the interaction it replays: it goes on with that run of it.
	Since        int            `json:"since,omitempty"`
	DurationMs   int64          `json:"durationMs"`
	Result       runtime.Result `json:"result"`
	HandoffError string         `json:"handoffError,omitempty"`
	// StartFailed: no process ran (the agent could not be started); Result.Reason says why.
	StartFailed bool `json:"startFailed,omitempty"`
	// Session is the CLI session the agent's next turn in the interaction resumes.
	Session string        `json:"session,omitempty"`
	Sandbox *sandboxPoint `json:"sandbox,omitempty"`
	Home    *homePoint    `json:"home,omitempty"`
	// The run's spend and each agent's after the turn, and the interaction's.
	Spend            Spend                 `json:"spend"`
	AgentSpend       map[string]AgentSpend `json:"agentSpend,omitempty"`
	InteractionSpend Spend                 `json:"interactionSpend"`
	// Ended are the interactions that had ended when the turn ended, and their buses'
	// metrics (a fork keeps them, and counts their messages).
	Ended    []InteractionOutcome   `json:"ended,omitempty"`
	EndedBus map[string]bus.Metrics `json:"endedBus,omitempty"`
}

// sandboxPoint is an agent's sandbox after a turn: its input/ (the same all run) and work/.
type sandboxPoint struct {
	Input   snapshot.ID         `json:"input"`
	Work    snapshot.ID         `json:"work"`
	Omitted []snapshot.Omission `json:"omitted,omitempty"`
	Cost    *snapshotCost       `json:"cost,omitempty"`
	Meta    json.RawMessage     `json:"meta,omitempty"` // sandbox.json as prepared
}

// snapshotCost is what keeping work/ cost at the end of the turn.
type snapshotCost struct {
	Files       int   `json:"files"`
	Hashed      int   `json:"hashed"`
	StoredBytes int64 `json:"storedBytes"`
	Micros      int64 `json:"us"`
}

// homePoint is the session store of an agent's private CLI home after a turn (runtime
// clihome.go), and the working folder the CLI keyed its sessions by.
type homePoint struct {
	Backend string      `json:"backend"`
	Tree    snapshot.ID `json:"tree"`
	Cwd     string      `json:"cwd"`
}

// forkPoints writes a run's fork points and keeps what its snapshots need between turns.
type forkPoints struct {
	mu     sync.Mutex
	nth    map[[2]string]int
	agents map[string]*agentSnaps
	store  *snapshot.Store
	err    error // opening the store failed: said once, no snapshot taken
	opened bool
	// open: (interaction, agent) → what its turn under way has charged so far. A fork point
	// leaves it out of the spend it records: a fork runs that turn again, and counts it then.
	open map[[2]string]openCharge
	bus  map[string]bus.Metrics // ended interactions' bus metrics
}

// openCharge is what a turn under way has charged.
type openCharge struct {
	tokens  int64
	usd     float64
	reports int
}

// charged notes a charge of agent's turn under way in interaction. Called with run.mu held,
// as the charge is added to the run's spend.
func (fp *forkPoints) charged(interaction, agent string, ch charge) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	k := [2]string{interaction, agent}
	o := fp.open[k]
	o.tokens += ch.tokens
	o.usd += ch.usd
	o.reports++ // as AgentSpend.add counts them
	fp.open[k] = o
}

// settle ends agent's turn in interaction and returns the charges of the other turns still
// under way. Called with run.mu held.
func (fp *forkPoints) settle(interaction, agent string) map[[2]string]openCharge {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	delete(fp.open, [2]string{interaction, agent})
	return maps.Clone(fp.open)
}

func (fp *forkPoints) busEnded(interaction string, m bus.Metrics) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	fp.bus[interaction] = m
}

func (fp *forkPoints) endedBus() map[string]bus.Metrics {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	return maps.Clone(fp.bus)
}

// agentSnaps is one agent's: its input/ tree and the trackers of work/ and of its CLI home.
type agentSnaps struct {
	mu    sync.Mutex
	input *snapshot.ID
	meta  json.RawMessage
	work  snapshot.Tracker
	home  snapshot.Tracker
}

func newForkPoints() *forkPoints {
	return &forkPoints{nth: map[[2]string]int{}, agents: map[string]*agentSnaps{}, open: map[[2]string]openCharge{}, bus: map[string]bus.Metrics{}}
}

// next counts a turn of agent in interaction and returns its number there, from 1.
func (fp *forkPoints) next(interaction, agent string) int {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	k := [2]string{interaction, agent}
	fp.nth[k]++
	return fp.nth[k]
}

func (fp *forkPoints) agent(id string) *agentSnaps {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	a := fp.agents[id]
	if a == nil {
		a = &agentSnaps{}
		fp.agents[id] = a
	}
	return a
}

// storeFor opens the workspace's snapshot store on first use, the run's pack its writes.
func (fp *forkPoints) storeFor(workspace, runID string) (*snapshot.Store, error) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if !fp.opened {
		fp.opened = true
		fp.store, fp.err = snapshot.Open(workspace, runID)
	}
	return fp.store, fp.err
}

func (fp *forkPoints) close() error {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	if fp.store == nil {
		return nil
	}
	err := fp.store.Close()
	fp.store = nil
	return err
}

// appendForkPoint appends p to the run's fork points (0600: it holds replies).
func appendForkPoint(workspace, runID string, p *forkPoint) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return transcript.AppendRunFile(workspace, runID, ForkPointsFile, append(b, '\n'))
}

// readForkPoints reads a run's fork points by turn number; a torn line (a kill, a power cut)
// is skipped, and so is a line for a turn already read (the first one counts).
func readForkPoints(workspace, runID string) (map[int]*forkPoint, error) {
	b, err := readRunFile(workspace, runID, ForkPointsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return map[int]*forkPoint{}, nil
	}
	if err != nil {
		return nil, err
	}
	lines := bytes.Split(b, []byte{'\n'})
	lines = lines[:len(lines)-1] // after the last newline: empty, or a line a kill cut short
	out := map[int]*forkPoint{}
	for _, line := range lines {
		var p forkPoint
		if json.Unmarshal(line, &p) != nil {
			continue // torn (a power cut): its turn is not kept, and a fork from it says so
		}
		if _, dup := out[p.Seq]; !dup && p.Seq > 0 {
			p.Result.Handoff = normalHandoff(p.Result.Handoff)
			out[p.Seq] = &p
		}
	}
	return out, nil
}

// normalHandoff gives a HANDOFF block's lists back the type the parser gave them ([]string),
// which a JSON round trip turned into []any.
func normalHandoff(h map[string]any) map[string]any {
	for k, v := range h {
		if l, ok := v.([]any); ok {
			ss := make([]string, 0, len(l))
			for _, x := range l {
				s, ok := x.(string)
				if !ok {
					ss = nil
					break
				}
				ss = append(ss, s)
			}
			if ss != nil {
				h[k] = ss
			}
		}
	}
	return h
}

// endedOutcomes are the run's interactions that have ended, in flow order.
func (r *run) endedOutcomes() []InteractionOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []InteractionOutcome
	for _, in := range r.f.Interactions {
		if oc, ok := r.outcomes[in.ID]; ok && oc.Status != StatusRunning && oc.Status != "pending" {
			out = append(out, *oc)
		}
	}
	return out
}

// settledSpend is the run's spend and each agent's, and interaction's, at the end of agent's
// turn there, without what turns still under way have charged so far.
func (r *run) settledSpend(c *ictx, agent string) (Spend, map[string]AgentSpend, Spend) {
	in := c.spent()
	r.mu.Lock()
	run, agents := r.state.Spend, maps.Clone(r.state.Agents)
	open := r.fp.settle(c.in.ID, agent)
	r.mu.Unlock()
	run.Unreported = slices.Clone(run.Unreported)
	for k, o := range open {
		run.Tokens -= o.tokens
		run.CostUSD -= o.usd
		if k[0] == c.in.ID {
			in.Tokens -= o.tokens
			in.CostUSD -= o.usd
		}
		a := agents[k[1]]
		a.Tokens, a.CostUSD, a.Reports = a.Tokens-o.tokens, a.CostUSD-o.usd, a.Reports-o.reports
		if a.Reports <= 0 {
			delete(agents, k[1]) // its first charges were of the turn under way
		} else {
			agents[k[1]] = a
		}
	}
	return run, agents, in
}

// pruneForkPoints removes the fork points of runs whose transcript was pruned: they hold the
// same replies, and a run without its transcript cannot be forked.
func pruneForkPoints(workspace string) {
	entries, err := os.ReadDir(filepath.Join(workspace, RunsDir))
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(workspace, RunsDir, e.Name())
		if _, err := os.Stat(filepath.Join(dir, transcript.FileName)); errors.Is(err, fs.ErrNotExist) {
			os.Remove(filepath.Join(dir, ForkPointsFile))
		}
	}
}
