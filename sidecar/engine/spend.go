package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

// Spend limits. Agents report what they spend: the CLIs in their usage and cost events, a
// command agent on USAGE: lines (runtime/usage.go). The engine adds it up per interaction and
// per run as it is reported, mid-turn included, and the moment a limit is reached it stops the
// agents as a timeout does: an interaction's max_cost_usd / max_tokens end it (completed, with
// that reason), the flow's policy.budget stops the run (reason budget). An agent that reports
// nothing is counted as unknown, never as free: the spend event and the run's state list it,
// and a flow with a limit is warned once per such agent.

// Spend is what a run's (or an interaction's) agents reported spending so far.
type Spend struct {
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"costUsd"`
	// CostKnown: every turn that reported usage also reported its cost (codex and gemini
	// report tokens only). False when a turn's cost is unknown.
	CostKnown bool `json:"costKnown"`
	// Unreported are the agents with a turn that reported no usage at all: their spend is
	// unknown, and no limit counts it.
	Unreported []string `json:"unreported,omitempty"`
}

func newSpend() Spend { return Spend{CostKnown: true} }

// AgentSpend is what one agent reported spending over the run, kept in the run's state so
// the Runs view and the canvas show it again after a window reload. Reports counts the charges
// added and only grows: of two totals of one agent (a checkpoint, a later spend event) the one
// with more reports is the newer, so a reader takes it instead of adding them up.
type AgentSpend struct {
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"costUsd"`
	// CostKnown: every charge carried its cost.
	CostKnown bool `json:"costKnown"`
	// Unreported: a turn of it reported no usage at all.
	Unreported bool `json:"unreported,omitempty"`
	// Metered: the model gateway meters its calls.
	Metered bool `json:"metered,omitempty"`
	Reports int  `json:"reports"`
	// Interaction is the first interaction it spent in (where the Runs view lists it).
	Interaction string `json:"interaction,omitempty"`
}

func (a *AgentSpend) add(ch charge, interaction string, metered bool) {
	if a.Reports == 0 {
		a.CostKnown, a.Interaction = true, interaction
	}
	a.Reports++
	a.Tokens = tally.Add(a.Tokens, ch.tokens)
	a.CostUSD = tally.AddUSD(a.CostUSD, ch.usd)
	a.CostKnown = a.CostKnown && !ch.costless
	a.Unreported = a.Unreported || ch.unreported != ""
	a.Metered = a.Metered || metered
}

func (s *Spend) add(o charge) {
	s.Tokens = tally.Add(s.Tokens, o.tokens)
	s.CostUSD = tally.AddUSD(s.CostUSD, o.usd)
	if o.costless {
		s.CostKnown = false
	}
	if o.unreported != "" && !slices.Contains(s.Unreported, o.unreported) {
		s.Unreported = append(s.Unreported, o.unreported)
	}
}

// charge is one report of spending.
type charge struct {
	tokens     int64
	usd        float64
	costless   bool   // tokens without a cost
	unreported string // the agent whose turn reported nothing
}

// ErrBudget is the cause a run is stopped with when its policy.budget is reached.
var ErrBudget = errors.New("budget")

// spendLimitError ends an interaction whose max_cost_usd or max_tokens was reached.
type spendLimitError struct{ condition string }

func (e *spendLimitError) Error() string { return e.condition + " reached" }

// limits are the smallest spend limits in a termination (0: none).
type limits struct {
	usd    float64
	tokens int64
}

func spendLimits(t *flow.Termination) limits {
	var l limits
	t.Walk(func(x *flow.Termination) {
		switch {
		case x.Type == "max_cost_usd" && x.USD != nil && (l.usd == 0 || *x.USD < l.usd):
			l.usd = *x.USD
		case x.Type == "max_tokens" && x.Tokens != nil && (l.tokens == 0 || *x.Tokens < l.tokens):
			l.tokens = *x.Tokens
		}
	})
	return l
}

func budgetLimits(b *flow.Budget) limits {
	var l limits
	if b != nil && b.USD != nil {
		l.usd = *b.USD
	}
	if b != nil && b.Tokens != nil {
		l.tokens = *b.Tokens
	}
	return l
}

func (l limits) any() bool { return l.usd > 0 || l.tokens > 0 }

// words is l as an event's fields ({"usd": 5, "tokens": 2000000}, the ones set), nil for none.
func (l limits) words() map[string]any {
	if !l.any() {
		return nil
	}
	m := map[string]any{}
	if l.usd > 0 {
		m["usd"] = l.usd
	}
	if l.tokens > 0 {
		m["tokens"] = l.tokens
	}
	return m
}

// reached names the limit s has reached: "max_cost_usd", "max_tokens", or "".
func (l limits) reached(s Spend) string {
	switch {
	case l.usd > 0 && s.CostUSD >= l.usd:
		return "max_cost_usd"
	case l.tokens > 0 && s.Tokens >= l.tokens:
		return "max_tokens"
	}
	return ""
}

// turnSpend follows one agent turn's reports, so what the turn's result sums up is counted
// once: the usage events as they come, then whatever the result adds to them.
type turnSpend struct {
	backend string
	tokens  int64
	usd     float64
	events  int
}

// event counts a usage event of the turn.
func (c *ictx) spendEvent(node string, ts *turnSpend, ev runtime.Event) {
	if (ev.Usage == nil && ev.CostUSD == nil) || c.routed(node) {
		return // a routed agent's spend is what the gateway meters
	}
	var u runtime.Usage
	if ev.Usage != nil {
		u = *ev.Usage
	}
	if c.refusedReport(node, u, ev.CostUSD) {
		return
	}
	ts.events++
	ch := charge{tokens: u.Tokens(ts.backend)}
	if ev.CostUSD != nil {
		ch.usd = *ev.CostUSD
	}
	ts.tokens = tally.Add(ts.tokens, ch.tokens)
	ts.usd = tally.AddUSD(ts.usd, ch.usd)
	c.charge(node, ch)
}

// refusedReport warns of a usage report that cannot be counted (a negative count, or one no
// turn could reach) and says so: it is then not counted at all.
func (c *ictx) refusedReport(node string, u runtime.Usage, cost *float64) bool {
	why := u.Check(cost)
	if why != "" {
		c.note("warning", map[string]any{"agent": node, "message": fmt.Sprintf("%s's usage report was ignored: %s", node, why)})
	}
	return why != ""
}

// spendResult counts what the turn's result adds to its events (a CLI that reports usage
// only at the end), marks an agent that reported nothing, and logs the turn's spend.
func (c *ictx) spendResult(node string, ts *turnSpend, res runtime.Result) {
	if res.Backend == runtime.BackendDryRun {
		return // spends nothing
	}
	if c.routed(node) {
		c.gatewayTurnEnd(node, res)
		return
	}
	var cost *float64
	if res.CostKnown {
		cost = &res.CostUSD
	}
	if c.refusedReport(node, res.Usage, cost) {
		res.Usage, res.CostKnown, res.CostUSD = runtime.Usage{}, false, 0
	}
	ch := charge{}
	if total := res.Usage.Tokens(res.Backend); total > ts.tokens {
		ch.tokens = total - ts.tokens
	}
	if res.CostKnown && res.CostUSD > ts.usd {
		ch.usd = res.CostUSD - ts.usd
	}
	reported := ts.events > 0 || res.Usage != (runtime.Usage{}) || res.CostKnown
	switch {
	case !reported:
		ch.unreported = node
	case !res.CostKnown:
		ch.costless = true
	}
	total := c.charge(node, ch)
	run, in := c.r.spent(), c.spent()
	fields := map[string]any{"agent": node, "tokens": tally.Add(ts.tokens, ch.tokens), "run": run, "interaction": in, "agentTotal": total}
	if res.CostKnown {
		fields["costUsd"] = tally.AddUSD(ts.usd, ch.usd)
	}
	if !reported {
		fields["unreported"] = true
	}
	c.r.emit(c.in.ID, "", "spend", fields)
	limited := c.limits.any() || c.r.budget.any()
	switch {
	case !reported && limited && c.r.firstTime("unreported:"+node):
		c.note("warning", map[string]any{"agent": node, "message": fmt.Sprintf("%s (%s) reported no usage; its spend is unknown and the flow's spend limits cannot count it (a command agent reports on USAGE: lines, docs/agents.md)", node, res.Backend)})
	case reported && !res.CostKnown && (c.limits.usd > 0 || c.r.budget.usd > 0) && c.r.firstTime("costless:"+node):
		c.note("warning", map[string]any{"agent": node, "message": fmt.Sprintf("%s (%s) reports tokens but no cost; cost limits cannot count its spend, token limits do", node, res.Backend)})
	}
}

// charge adds spending to the interaction, the run and the agent, and stops whichever reached
// its limit. It returns the agent's total, for the spend event that tells of it.
func (c *ictx) charge(node string, ch charge) AgentSpend {
	c.addReported(node, ch)
	c.mu.Lock()
	c.spend.add(ch)
	hit := c.limits.reached(c.spend)
	c.mu.Unlock()
	if hit != "" && c.stop != nil && c.ctx.Err() == nil {
		c.note("spend_limit_reached", map[string]any{"condition": hit, "agent": node, "spend": c.spent()})
		c.stop(&spendLimitError{condition: hit})
	}
	return c.r.charge(node, c.in.ID, c.routed(node), ch)
}

// spent is the interaction's spend so far.
func (c *ictx) spent() Spend {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.spend
	s.Unreported = slices.Clone(s.Unreported)
	return s
}

// charge adds spending to the run and to node's total, and stops the run when it reaches its
// budget. It returns node's total.
func (r *run) charge(node, interaction string, metered bool, ch charge) AgentSpend {
	r.mu.Lock()
	r.state.Spend.add(ch)
	s := r.state.Spend
	if r.state.Agents == nil {
		r.state.Agents = map[string]AgentSpend{}
	}
	a := r.state.Agents[node]
	a.add(ch, interaction, metered)
	r.state.Agents[node] = a
	r.fp.charged(interaction, node, ch) // until the turn ends (forkpoints.go)
	r.mu.Unlock()
	if hit := r.budget.reached(s); hit != "" && r.stop != nil && r.ctx.Err() == nil {
		r.emit("", "", "budget_reached", map[string]any{"limit": budgetField(hit), "spend": r.spent(), "budget": r.f.Policy.Budget})
		r.stop(ErrBudget)
	}
	return a
}

// agentSpent is node's total so far.
func (r *run) agentSpent(node string) AgentSpend {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.Agents[node]
}

// budgetField is the policy.budget field a limit reached corresponds to.
func budgetField(condition string) string {
	if condition == "max_cost_usd" {
		return "usd"
	}
	return "tokens"
}

// spent is the run's spend so far.
func (r *run) spent() Spend {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state.Spend
	s.Unreported = slices.Clone(s.Unreported)
	return s
}

// stopReason is why ctx ended: "budget" when the run's budget stopped it, else "stopped".
func stopReason(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), ErrBudget) {
		return "budget"
	}
	return ReasonStopped
}
