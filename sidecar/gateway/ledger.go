package gateway

import (
	"fmt"
	"sync"
)

// Limit is a spend limit; a zero field sets none.
type Limit struct {
	USD    float64
	Tokens int64
}

func (l Limit) any() bool { return l.USD > 0 || l.Tokens > 0 }

// Spend is what was spent so far.
type Spend struct {
	USD    float64 `json:"costUsd"`
	Tokens int64   `json:"tokens"`
	Calls  int     `json:"calls"`
	// Usage splits Tokens as prices do (what was added as a bare token count is Input).
	Usage Usage `json:"usage"`
}

// over says how s is over l ("" when it is not): the limit's name, its value and the spend.
func (l Limit) over(what string, s Spend) string {
	switch {
	case l.USD > 0 && s.USD >= l.USD:
		return fmt.Sprintf("spend limit reached: %s $%.2f, spent $%.2f", what, l.USD, s.USD)
	case l.Tokens > 0 && s.Tokens >= l.Tokens:
		return fmt.Sprintf("spend limit reached: %s %d tokens, spent %d tokens", what, l.Tokens, s.Tokens)
	}
	return ""
}

// Ledger adds up a run's spend per agent, per interaction and in all, and holds their
// limits. It counts what the gateway meters and whatever else is added to it (the usage a
// command agent reports), so its limits see the run's whole spend.
type Ledger struct {
	mu         sync.Mutex
	run        Spend
	agents     map[string]*Spend
	interacts  map[string]*Spend
	runLimit   Limit
	agentLimit map[string]Limit
	interLimit map[string]Limit
}

func newLedger() *Ledger {
	return &Ledger{agents: map[string]*Spend{}, interacts: map[string]*Spend{}, agentLimit: map[string]Limit{}, interLimit: map[string]Limit{}}
}

// SetRunLimit sets the run's limit (policy.budget).
func (l *Ledger) SetRunLimit(x Limit) { l.mu.Lock(); l.runLimit = x; l.mu.Unlock() }

// SetAgentLimit sets an agent's limit over the whole run (runtime.maxCostUsd).
func (l *Ledger) SetAgentLimit(agent string, x Limit) {
	l.mu.Lock()
	l.agentLimit[agent] = x
	l.mu.Unlock()
}

// SetInteractionLimit sets an interaction's limit (its max_cost_usd, max_tokens).
func (l *Ledger) SetInteractionLimit(id string, x Limit) {
	l.mu.Lock()
	l.interLimit[id] = x
	l.mu.Unlock()
}

// Over says which limit a call of agent in interaction would go over ("" for none): the
// message the call is refused with.
func (l *Ledger) Over(agent, interaction string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.runLimit.over("run budget", l.run); m != "" {
		return m
	}
	if s := l.interacts[interaction]; s != nil {
		if m := l.interLimit[interaction].over("interaction "+interaction+" limit", *s); m != "" {
			return m
		}
	}
	if s := l.agents[agent]; s != nil {
		if m := l.agentLimit[agent].over("agent "+agent+" runtime.maxCostUsd", *s); m != "" {
			return m
		}
	}
	return ""
}

// Add charges spend to agent, interaction and the run, and returns the three totals.
func (l *Ledger) Add(agent, interaction string, usd float64, u Usage, calls int) (a, in, run Spend) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range []*Spend{&l.run, get(l.agents, agent), get(l.interacts, interaction)} {
		s.USD += usd
		s.Tokens += u.Tokens()
		s.Calls += calls
		s.Usage.Input += u.Input
		s.Usage.CachedInput += u.CachedInput
		s.Usage.CacheWrite += u.CacheWrite
		s.Usage.Output += u.Output
	}
	return *l.agents[agent], *l.interacts[interaction], l.run
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
