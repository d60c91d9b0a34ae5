package gateway

import (
	"context"
	"fmt"
	"math"
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

// worst is a model call's worst case, as Reserve sizes it.
type worst struct {
	// fixedTokens are the tokens the call may use whatever its cap: its input, and output
	// the cap does not cover; fixedUSD is their price at the dearest way they can be billed.
	fixedTokens int64
	fixedUSD    float64
	out         int64   // the output tokens the request asks for (its cap, or the default cap)
	minOut      int64   // the fewest output tokens worth a call: below, it is refused
	outUSD      float64 // the price of one output token
	// capped: the limits may lower out (the request's cap is then set to the grant);
	// otherwise the call is reserved as it is or refused.
	capped bool
}

func (w worst) usd(out int64) float64 { return tally.AddUSD(w.fixedUSD, float64(out)*w.outUSD) }

func (w worst) tokens(out int64) int64 { return tally.Add(w.fixedTokens, out) }

// Grant is what Reserve reserved for one call.
type Grant struct {
	agent, interaction string
	USD                float64
	Tokens             int64
	// Out is the output tokens reserved: the cap the forwarded request carries.
	Out int64
	// Limited: a limit in dollars or tokens applies (the request's cap is then enforced).
	Limited bool
}

func limited(bs []bound) bool {
	for _, b := range bs {
		if b.limit.USD > 0 || b.limit.Tokens > 0 {
			return true
		}
	}
	return false
}

// Hit is a limit a call was refused for.
type Hit struct {
	Scope   string // run, interaction, agent
	What    string // usd, tokens, calls
	Message string
}

// Reserve reserves w against every limit of agent in interaction, lowering its output to
// what they leave room for (when w.capped). A call that fits only once calls in flight have
// settled waits for them (until ctx ends); one that does not fit even then is refused, with
// the limit it would pass.
func (l *Ledger) Reserve(ctx context.Context, agent, interaction string, w worst) (Grant, *Hit, error) {
	for {
		l.mu.Lock()
		bs := l.bounds(agent, interaction)
		out, hit := fit(bs, w, true)
		if hit == nil {
			g := Grant{agent: agent, interaction: interaction, Out: out, USD: w.usd(out), Tokens: w.tokens(out), Limited: limited(bs)}
			for _, sc := range scopes(agent, interaction) {
				h := l.held[sc]
				if h == nil {
					h = &hold{}
					l.held[sc] = h
				}
				h.usd, h.tokens, h.calls = tally.AddUSD(h.usd, g.USD), tally.Add(h.tokens, g.Tokens), h.calls+1
			}
			l.mu.Unlock()
			return g, nil, nil
		}
		if _, alone := fit(bs, w, false); alone != nil {
			l.mu.Unlock()
			return Grant{}, alone, nil // no room even once every call in flight has settled
		}
		wait := l.settled
		l.waiting++
		l.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
		}
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
		if ctx.Err() != nil {
			return Grant{}, nil, ctx.Err()
		}
	}
}

// waitingCalls is how many calls wait for calls in flight to settle.
func (l *Ledger) waitingCalls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting
}

// Settle gives g back and charges what the call cost instead (calls: 1 for a model call).
func (l *Ledger) Settle(g Grant, usd float64, u Usage, calls int) (a, in, run Spend) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, sc := range scopes(g.agent, g.interaction) {
		if h := l.held[sc]; h != nil {
			h.usd, h.tokens, h.calls = tally.SubUSD(h.usd, g.USD), tally.Sub(h.tokens, g.Tokens), max(h.calls-1, 0)
		}
	}
	l.addLocked(g.agent, g.interaction, usd, u, calls)
	return *l.agents[g.agent], *l.interacts[g.interaction], l.run
}

// fit finds the output w may have within every bound, counting what calls in flight hold
// when withHeld, or the first limit it would pass.
func fit(bs []bound, w worst, withHeld bool) (int64, *Hit) {
	out := w.out
	for _, b := range bs {
		var h hold
		if withHeld {
			h = b.held
		}
		lim, s := b.limit, b.spent
		if lim.Calls > 0 && int64(s.Calls)+h.calls+1 > lim.Calls {
			return 0, b.hit("calls", fmt.Sprintf("%d model calls, made %d", lim.Calls, s.Calls))
		}
		if lim.Tokens > 0 {
			room := lim.Tokens - tally.Add(s.Tokens, h.tokens) - w.fixedTokens
			if out = fitOut(out, room, w); out < 0 {
				return 0, b.hit("tokens", fmt.Sprintf("%d tokens, spent %d; this call may use up to %d", lim.Tokens, s.Tokens, w.tokens(w.minOut)))
			}
		}
		if lim.USD > 0 {
			left := lim.USD - tally.AddUSD(s.USD, h.usd) - w.fixedUSD
			room := int64(1e15)
			switch {
			case left < 0:
				room = -1
			case w.outUSD > 0:
				room = int64(min(math.Floor(left/w.outUSD), 1e15))
			}
			if out = fitOut(out, room, w); out < 0 {
				return 0, b.hit("usd", fmt.Sprintf("$%.2f, spent $%.2f; this call may cost up to $%.2f", lim.USD, s.USD, w.usd(w.minOut)))
			}
		}
	}
	return out, nil
}

// fitOut is the output a call may have with room tokens left for it: out itself when it
// fits, less when the call may be capped and at least minOut fits, else -1.
func fitOut(out, room int64, w worst) int64 {
	switch {
	case out <= room:
		return out
	case w.capped && room >= w.minOut:
		return room
	}
	return -1
}

func (b bound) hit(what, numbers string) *Hit {
	return &Hit{Scope: b.sc.kind, What: what, Message: b.message(what, numbers)}
}
