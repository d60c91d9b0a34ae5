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
	f := ev.Fields
	at := ev.Time()
	switch ev.Event {
	case "run_started", "run_resumed":
		r.id, r.flow, r.started = ev.RunID, ev.Flow, at
		if n, ok := eventlog.Num(f["interactions"]); ok {
			r.interactions = int(n)
		}
	case "interaction_started":
		nodes := eventlog.Strs(f["nodes"])
		r.members[ev.InteractionID] = nodes
		for _, n := range nodes {
			a := r.agent(n, ev.InteractionID)
			if a.state == stateDone || a.state == stateWaiting || a.state == stateSkipped {
				a.interaction, a.state = ev.InteractionID, stateWaiting
			}
		}
	case "agent_started":
		a := r.agent(eventlog.Str(f["agent"]), ev.InteractionID)
		a.interaction, a.state, a.turnStart = ev.InteractionID, stateRunning, at
		if n, ok := eventlog.Num(f["round"]); ok {
			a.round = int(n)
		}
	case "agent_finished":
		a := r.agent(eventlog.Str(f["agent"]), ev.InteractionID)
		if !a.turnStart.IsZero() {
			a.busy += at.Sub(a.turnStart)
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
	case "spend": // a model call the gateway metered, during the turn
		if f["midTurn"] != true {
			break
		}
		a := r.agent(eventlog.Str(f["agent"]), ev.InteractionID)
		tokens, _ := eventlog.Num(f["callTokens"])
		cost, _ := eventlog.Num(f["callCostUsd"])
		a.metered, a.tokensKnown, a.costKnown = true, true, true
		a.tokens += int64(tokens)
		a.cost += cost
		r.tokens += int64(tokens)
		r.cost += cost
	case "question_asked", "dependency_requested", "phase_completed":
		if a := r.byID[eventlog.Str(f["agent"])]; a != nil {
			a.state = stateAsking
		}
	case "question_answered", "dependency_resolved", "phase_resolved":
		if a := r.byID[eventlog.Str(f["agent"])]; a != nil && a.state == stateAsking {
			a.state = stateRunning
		}
	case "terminated":
		r.ended++
		skipped := eventlog.Str(f["reason"]) == "skipped"
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
	case "budget_reached", "spend_limit_reached":
		r.limit = firstNonEmpty(eventlog.Str(f["condition"]), eventlog.Str(f["limit"]), "spend")
		r.belowOneCall = strings.HasPrefix(eventlog.Str(f["message"]), "spend limit below one model call")
	case "run_finished", "run_interrupted":
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
