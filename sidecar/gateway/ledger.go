package gateway

import (
	"fmt"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// Limit is a spend limit; a zero field sets none.
type Limit struct {
	USD    float64
	Tokens int64
	// Calls is the most model calls (agents' limits only).
	Calls int64
	// Note is said after the calls limit when it is reached (how to raise it, say).
	Note string
}

func (l Limit) any() bool { return l.USD > 0 || l.Tokens > 0 || l.Calls > 0 }

// Spend is what was spent so far.
type Spend struct {
	USD    float64 `json:"costUsd"`
	Tokens int64   `json:"tokens"`
	Calls  int     `json:"calls"`
	// Usage splits Tokens as prices do (what was added as a bare token count is Input).
	Usage Usage `json:"usage"`
}

// add counts a call's cost and usage into s, saturating.
func (s *Spend) add(usd float64, u Usage, calls int) {
	s.USD = tally.AddUSD(s.USD, usd)
	s.Tokens = tally.Add(s.Tokens, u.Tokens())
	s.Calls += calls
	s.Usage = s.Usage.plus(u)
}

// hold is what calls in flight have reserved against one limit.
type hold struct {
	usd    float64
	tokens int64
	calls  int64
}

// Ledger adds up a run's spend per agent, per interaction and in all, and holds their
// limits. It counts what the gateway meters and whatever else is added to it (the usage a
// command agent reports), so its limits see the run's whole spend. A model call reserves its
// worst case against every limit before it is sent (Reserve), and settles to what it cost
// when it ends (Settle): calls made together can never pass a limit together.
type Ledger struct {
	mu         sync.Mutex
	run        Spend
	agents     map[string]*Spend
	interacts  map[string]*Spend
	runLimit   Limit
	agentLimit map[string]Limit
	interLimit map[string]Limit
	held       map[scope]*hold
	// settled is closed (and replaced) whenever spend or a reservation changes: calls
	// waiting for others' reservations look again; waiting counts them.
	settled chan struct{}
	waiting int
}

// scope is one limit's domain: the run, an interaction, an agent.
type scope struct{ kind, id string }

func newLedger() *Ledger {
	return &Ledger{agents: map[string]*Spend{}, interacts: map[string]*Spend{}, agentLimit: map[string]Limit{},
		interLimit: map[string]Limit{}, held: map[scope]*hold{}, settled: make(chan struct{})}
}

// SetRunLimit sets the run's limit (policy.budget).
func (l *Ledger) SetRunLimit(x Limit) { l.mu.Lock(); l.runLimit = x; l.changed(); l.mu.Unlock() }

// SetAgentLimit sets an agent's limit over the whole run (runtime.maxCostUsd, and its model
// calls).
func (l *Ledger) SetAgentLimit(agent string, x Limit) {
	l.mu.Lock()
	l.agentLimit[agent] = x
	l.changed()
	l.mu.Unlock()
}

// SetInteractionLimit sets an interaction's limit (its max_cost_usd, max_tokens).
func (l *Ledger) SetInteractionLimit(id string, x Limit) {
	l.mu.Lock()
	l.interLimit[id] = x
	l.changed()
	l.mu.Unlock()
}

// changed wakes the calls waiting for a reservation to settle; l.mu is held.
func (l *Ledger) changed() {
	close(l.settled)
	l.settled = make(chan struct{})
}

// bound is one limit that applies to a call, with what was spent and is held against it.
type bound struct {
	sc    scope
	name  string // for messages: "run budget", "agent coder"…
	limit Limit
	spent Spend
	held  hold
}

// scopes are the three domains a call of agent in interaction counts in.
func scopes(agent, interaction string) [3]scope {
	return [3]scope{{"run", ""}, {"interaction", interaction}, {"agent", agent}}
}

// bounds are the limits a call of agent in interaction counts against; l.mu is held.
func (l *Ledger) bounds(agent, interaction string) []bound {
	var out []bound
	sc := scopes(agent, interaction)
	for i, x := range []struct {
		name  string
		limit Limit
		spent *Spend
	}{{"run budget", l.runLimit, &l.run}, {"interaction " + interaction + " limit", l.interLimit[interaction], get(l.interacts, interaction)},
		{"agent " + agent, l.agentLimit[agent], get(l.agents, agent)}} {
		if x.limit.any() {
			b := bound{sc: sc[i], name: x.name, limit: x.limit, spent: *x.spent}
			if h := l.held[sc[i]]; h != nil {
				b.held = *h
			}
			out = append(out, b)
		}
	}
	return out
}

// Over says which limit the spend of agent in interaction has reached ("" for none).
func (l *Ledger) Over(agent, interaction string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.bounds(agent, interaction) {
		if m := b.reached(); m != "" {
			return m
		}
	}
	return ""
}

// reached says how b's spend alone is at its limit ("" when it is not).
func (b bound) reached() string {
	switch l, s := b.limit, b.spent; {
	case l.USD > 0 && s.USD >= l.USD:
		return b.message("usd", fmt.Sprintf("$%.2f, spent $%.2f", l.USD, s.USD))
	case l.Tokens > 0 && s.Tokens >= l.Tokens:
		return b.message("tokens", fmt.Sprintf("%d tokens, spent %d tokens", l.Tokens, s.Tokens))
	case l.Calls > 0 && int64(s.Calls) >= l.Calls:
		return b.message("calls", fmt.Sprintf("%d model calls, made %d", l.Calls, s.Calls))
	}
	return ""
}

// message says which limit of b (by what it counts) a spend reached: "spend limit reached:
// run budget $2.00, spent $2.03", "… agent coder runtime.maxCostUsd $0.50, …".
func (b bound) message(what, numbers string) string {
	name := b.name
	if b.sc.kind == "agent" {
		name += map[string]string{"usd": " runtime.maxCostUsd", "tokens": "", "calls": " runtime.maxModelCalls"}[what]
	}
	m := "spend limit reached: " + name + " " + numbers
	if b.limit.Note != "" && what == "calls" {
		m += " (" + b.limit.Note + ")"
	}
	return m
}

// field names b's limit on what ("usd", "tokens"): whose it is, and the flow's field that
// sets it.
func (b bound) field(what string) (whose, field string) {
	switch {
	case b.sc.kind == "run":
		return "the run's budget", "policy.budget." + what
	case b.sc.kind == "agent" && what == "usd":
		return "agent " + b.sc.id + "'s limit", "runtime.maxCostUsd"
	case b.sc.kind == "interaction":
		return "interaction " + b.sc.id + "'s limit", map[string]string{"usd": "max_cost_usd", "tokens": "max_tokens"}[what]
	}
	return b.name, what
}

// Add charges spend to agent, interaction and the run, and returns the three totals.
func (l *Ledger) Add(agent, interaction string, usd float64, u Usage, calls int) (a, in, run Spend) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addLocked(agent, interaction, usd, u, calls)
	return *l.agents[agent], *l.interacts[interaction], l.run
}

func (l *Ledger) addLocked(agent, interaction string, usd float64, u Usage, calls int) {
	for _, s := range []*Spend{&l.run, get(l.agents, agent), get(l.interacts, interaction)} {
		s.add(usd, u, calls)
	}
	l.changed()
}

// Agent is what agent spent so far (through the gateway and added).
func (l *Ledger) Agent(agent string) Spend {
	l.mu.Lock()
	defer l.mu.Unlock()
	return *get(l.agents, agent)
}

// Run is the run's spend so far.
func (l *Ledger) Run() Spend {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.run
}

func get(m map[string]*Spend, k string) *Spend {
	s := m[k]
	if s == nil {
		s = &Spend{}
		m[k] = s
	}
	return s
}
