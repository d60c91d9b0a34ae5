package termview

import (
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// Agent states, as the status block shows them.
const (
	stateWaiting = "waiting" // in an interaction, no turn yet
	stateRunning = "running" // a turn is under way
	stateAsking  = "asking"  // paused on a question, a dependency or a phase approval
	stateIdle    = "idle"    // between turns; its interaction goes on
	stateDone    = "done"    // its interaction ended
	stateFailed  = "failed"  // its last turn failed
	stateStopped = "stopped" // its turn was stopped (Ctrl-C, a timeout)
	stateSkipped = "skipped" // its interaction never ran (a dependency failed)
	stateNotRun  = "not run" // its interaction ended before it had a turn
)

// agent is one status line.
type agent struct {
	id          string
	interaction string
	round       int
	state       string
	turnStart   time.Time     // of the running turn
	busy        time.Duration // turns already finished
	turns       int
	tokens      int64
	tokensKnown bool
	cost        float64
	costKnown   bool
	// metered: the model gateway meters the agent's calls (spend events during its turns),
	// so what its turns report is not counted again.
	metered bool
}

// elapsed is the agent's time in turns so far.
func (a *agent) elapsed(now time.Time) time.Duration {
	if a.state == stateRunning || a.state == stateAsking {
		return a.busy + now.Sub(a.turnStart)
	}
	return a.busy
}

// run is what the view knows of the run, folded from its events.
type run struct {
	id, flow     string
	started      time.Time
	interactions int
	ended        int // interactions terminated
	agents       []*agent
	byID         map[string]*agent
	members      map[string][]string // interaction → its nodes
	turns        int
	tokens       int64
	cost         float64
	costKnown    bool // every turn that finished reported its cost
	finished     bool
	// byYou: the person stopped the run (Ctrl-C); limit: the limit that stopped it, if one did.
	byYou bool
	limit string
	// belowOneCall: the limit stopped the run because it cannot hold even one model call.
	belowOneCall bool
}

func newRun() *run {
	return &run{byID: map[string]*agent{}, members: map[string][]string{}, costKnown: true}
}

func (r *run) agent(id, interaction string) *agent {
	a := r.byID[id]
	if a == nil {
		a = &agent{id: id, interaction: interaction, state: stateWaiting}
		r.byID[id] = a
		r.agents = append(r.agents, a)
	}
	return a
}

// apply folds one event into the model.
func (r *run) apply(ev eventlog.Event) {
	if fold := folds[ev.Event]; fold != nil {
		fold(r, ev)
	}
}

// folds are how each kind of event changes the model, one function a kind; the events
// not listed change nothing the status block shows.
var folds = map[string]func(*run, eventlog.Event){
	"run_started":          (*run).onRunStarted,
	"run_resumed":          (*run).onRunStarted,
	"interaction_started":  (*run).onInteractionStarted,
	"agent_started":        (*run).onAgentStarted,
	"agent_finished":       (*run).onAgentFinished,
	"spend":                (*run).onSpend,
	"question_asked":       (*run).onAsking,
	"dependency_requested": (*run).onAsking,
	"phase_completed":      (*run).onAsking,
	"question_answered":    (*run).onAnswered,
	"dependency_resolved":  (*run).onAnswered,
	"phase_resolved":       (*run).onAnswered,
	"terminated":           (*run).onTerminated,
	"budget_reached":       (*run).onLimit,
	"spend_limit_reached":  (*run).onLimit,
	"run_finished":         (*run).onRunEnded,
	"run_interrupted":      (*run).onRunEnded,
}

func (r *run) onRunStarted(ev eventlog.Event) {
	r.id, r.flow, r.started = ev.RunID, ev.Flow, ev.Time()
	if n, ok := eventlog.Num(ev.Fields["interactions"]); ok {
		r.interactions = int(n)
	}
}

// onInteractionStarted puts the interaction's nodes in it; one already busy elsewhere keeps
// its state until its turn starts here.
func (r *run) onInteractionStarted(ev eventlog.Event) {
	nodes := eventlog.Strs(ev.Fields["nodes"])
	r.members[ev.InteractionID] = nodes
	for _, n := range nodes {
		a := r.agent(n, ev.InteractionID)
		if a.state == stateDone || a.state == stateWaiting || a.state == stateSkipped {
			a.interaction, a.state = ev.InteractionID, stateWaiting
		}
	}
}

func (r *run) onAgentStarted(ev eventlog.Event) {
	f := ev.Fields
	a := r.agent(eventlog.Str(f["agent"]), ev.InteractionID)
	a.interaction, a.state, a.turnStart = ev.InteractionID, stateRunning, ev.Time()
	if n, ok := eventlog.Num(f["round"]); ok {
		a.round = int(n)
	}
}

// onAgentFinished ends the turn: its time, its usage (unless the gateway metered it
// already) and the state its status says.
func (r *run) onAgentFinished(ev eventlog.Event) {
	f := ev.Fields
	a := r.agent(eventlog.Str(f["agent"]), ev.InteractionID)
	if !a.turnStart.IsZero() {
		a.busy += ev.Time().Sub(a.turnStart)
		a.turnStart = time.Time{}
	}
	a.turns++
	r.turns++
	if !a.metered {
		r.reported(a, f)
	}
	switch eventlog.Str(f["status"]) {
	case "completed":
		a.state = stateIdle
	case "stopped":
		a.state = stateStopped
	default:
		a.state = stateFailed
	}
}

// onSpend counts a model call the gateway metered during a turn, and marks the agent
// metered so what its turn reports is not counted again.
func (r *run) onSpend(ev eventlog.Event) {
	f := ev.Fields
	if f["midTurn"] != true {
		return
	}
	a := r.agent(eventlog.Str(f["agent"]), ev.InteractionID)
	tokens, _ := eventlog.Num(f["callTokens"])
	cost, _ := eventlog.Num(f["callCostUsd"])
	a.metered, a.tokensKnown, a.costKnown = true, true, true
	a.tokens += int64(tokens)
	a.cost += cost
	r.tokens += int64(tokens)
	r.cost += cost
}

func (r *run) onAsking(ev eventlog.Event) {
	if a := r.byID[eventlog.Str(ev.Fields["agent"])]; a != nil {
		a.state = stateAsking
	}
}

func (r *run) onAnswered(ev eventlog.Event) {
	if a := r.byID[eventlog.Str(ev.Fields["agent"])]; a != nil && a.state == stateAsking {
		a.state = stateRunning
	}
}

// onTerminated ends the interaction for its members still in it.
func (r *run) onTerminated(ev eventlog.Event) {
	r.ended++
	skipped := eventlog.Str(ev.Fields["reason"]) == "skipped"
	for _, n := range r.members[ev.InteractionID] {
		a := r.byID[n]
		if a == nil || a.interaction != ev.InteractionID {
			continue
		}
		// ✓ only for an agent that had its turns; one that never ran is "not run".
		switch {
		case skipped && a.state == stateWaiting:
			a.state = stateSkipped
		case a.state == stateWaiting:
			a.state = stateNotRun
		case a.state == stateIdle:
			a.state = stateDone
		case a.state == stateRunning || a.state == stateAsking:
			a.state = stateStopped
		}
	}
}

// onLimit notes the limit that stops the run, so stopped turns can say why.
func (r *run) onLimit(ev eventlog.Event) {
	f := ev.Fields
	r.limit = firstNonEmpty(eventlog.Str(f["condition"]), eventlog.Str(f["limit"]), "spend")
	r.belowOneCall = strings.HasPrefix(eventlog.Str(f["message"]), "spend limit below one model call")
}

// onRunEnded settles every agent still waiting or in a turn.
func (r *run) onRunEnded(eventlog.Event) {
	r.finished = true
	for _, a := range r.agents {
		switch a.state {
		case stateWaiting:
			a.state = stateNotRun
		case stateRunning, stateAsking:
			a.state = stateStopped
		}
	}
}

// reported counts what a finished turn reports of its usage.
func (r *run) reported(a *agent, f map[string]any) {
	in, _ := eventlog.Num(f["inputTokens"])
	out, _ := eventlog.Num(f["outputTokens"])
	if in+out > 0 {
		a.tokens += int64(in + out)
		a.tokensKnown = true
		r.tokens += int64(in + out)
	}
	if c, ok := eventlog.Num(f["costUsd"]); ok {
		a.cost += c
		a.costKnown = true
		r.cost += c
	} else {
		r.costKnown = false
	}
}

// running is the number of agents in a turn.
func (r *run) running() int {
	n := 0
	for _, a := range r.agents {
		if a.state == stateRunning || a.state == stateAsking {
			n++
		}
	}
	return n
}
