package engine

import (
	"fmt"
	"strings"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

// The run's model gateway (sidecar/gateway). A CLI agent whose runtime.env names a
// provider's API key variable is routed through it: the agent gets a token and the gateway's
// URL, the gateway the real key. Its model calls are then metered, priced and checked against
// the spend limits before each call, and that metering is the agent's spend: what the CLI
// reports of its usage is not counted again. Agents the gateway does not see (command agents)
// are counted from what they report, as before, and added to the gateway's ledger so its
// limits see the run's whole spend.

// Gateway modes (Options.Gateway, agentcanvas run --gateway).
const (
	// GatewayAuto routes the CLI agents whose runtime.env names an API key variable. The
	// default ("" means the same).
	GatewayAuto = "auto"
	// GatewayLogins also routes Claude Code agents signed in with an account (no key
	// variable): their own credentials pass through, and their calls are metered the same.
	GatewayLogins = "logins"
	// GatewayOff routes no agent: keys are in the agents' environments, spend is what they report.
	GatewayOff = "off"
)

// GatewayModes are the accepted values, the default first.
var GatewayModes = []string{GatewayAuto, GatewayLogins, GatewayOff}

// runGateway is the run's gateway, started at the first agent routed through it.
type runGateway struct {
	once    sync.Once
	g       *gateway.Gateway
	err     error
	mu      sync.Mutex
	ictxs   map[string]*ictx            // interaction id → its context, for charges
	routes  map[[2]string]string        // {interaction, node} → token
	before  map[[2]string]gateway.Spend // {interaction, node} → the agent's spend when its turn started
	refused map[string]int              // agent → requests refused so far
	// unpriced are the models the price table does not name that the person was told of.
	unpriced map[string]bool
}

func (r *run) gateway() (*gateway.Gateway, error) {
	gw := &r.gw
	gw.once.Do(func() {
		// The person's prices (the editor's, the command line's) over the flow's over the project's.
		flowPrices, _ := validate.FlowPricing(r.f) // validated before the run started
		pricing := gateway.DefaultPricing().With(flowPrices).With(r.limits().Pricing).With(r.o.Pricing)
		gw.g, gw.err = gateway.Start(gateway.Options{Pricing: pricing, OnCall: r.gatewayCall, OnCharge: r.gatewayCharge, OnRefuse: r.gatewayRefused})
		if gw.err != nil {
			return
		}
		gw.g.Ledger.SetRunLimit(gateway.Limit{USD: r.budget.usd, Tokens: r.budget.tokens})
		if s := r.spent(); s.Tokens > 0 || s.CostUSD > 0 { // a resumed run's spend so far
			gw.g.Ledger.Add("", "", s.CostUSD, gateway.Usage{Input: s.Tokens}, 0)
		}
		r.emit("", "", "gateway_started", map[string]any{"url": gw.g.URL})
		if why := r.gatewayNetworkOpen(); why != "" {
			r.emit("", "", "warning", map[string]any{"message": "agents routed through the model gateway can still connect anywhere (" + why + "); they hold no API key, but can send what they read"})
		}
	})
	return gw.g, gw.err
}

// gatewayNetworkOpen says why routed agents' connections cannot be limited to the gateway
// ("" when they are).
func (r *run) gatewayNetworkOpen() string {
	switch {
	case r.limits().confineMode() == confine.ModeOff:
		return "confinement is off (" + r.limits().confineFrom() + ")"
	case r.confined.ABI < confine.MinConnectABI:
		return fmt.Sprintf("%s; limiting TCP needs Landlock ABI %d, Linux 6.7", r.confined, confine.MinConnectABI)
	}
	return ""
}

// closeGateway stops the gateway at the run's end.
func (r *run) closeGateway() {
	if r.gw.g != nil {
		_ = r.gw.g.Close()
	}
}

// routeThroughGateway points a turn's spec at the gateway when the agent is to be routed.
func (c *ictx) routeThroughGateway(node string, s *runtime.Spec, rt *flow.Runtime) error {
	mode := firstNonEmpty(c.r.o.Gateway, c.r.limits().Gateway, GatewayAuto)
	switch s.BackendID {
	case runtime.BackendAuto, runtime.BackendClaude, runtime.BackendCodex, runtime.BackendGemini:
	default:
		return nil
	}
	keys, upstream := gateway.FromEnv(s.Env)
	login := len(keys) == 0 && mode == GatewayLogins && s.BackendID == runtime.BackendClaude
	if mode == GatewayOff || (len(keys) == 0 && !login) {
		c.r.limitUnrouted(s, rt) // agentlimit.go
		return nil
	}
	g, err := c.r.gateway()
	if err != nil {
		return fmt.Errorf("agent %s: model gateway: %w", node, err)
	}
	gw := &c.r.gw
	k := [2]string{c.in.ID, node}
	gw.mu.Lock()
	if gw.routes == nil {
		gw.ictxs, gw.routes, gw.before = map[string]*ictx{}, map[[2]string]string{}, map[[2]string]gateway.Spend{}
	}
	token := gw.routes[k]
	if token == "" {
		token, _ = g.Register(gateway.Caller{Agent: node, Interaction: c.in.ID, Keys: keys, Upstream: upstream, NetworkOpen: rt.Network == runtime.NetworkOpen})
		gw.routes[k], gw.ictxs[c.in.ID] = token, c
		g.Ledger.SetInteractionLimit(c.in.ID, gateway.Limit{USD: c.limits.usd, Tokens: c.limits.tokens})
		g.Ledger.SetAgentLimit(node, c.r.agentLimit(rt))
		gw.before[k] = g.Ledger.Agent(node)
	}
	gw.mu.Unlock()
	s.UseGateway(g.URL+"/t/"+token, token, g.Port())
	return nil
}

// closeRoutes makes the tokens of the interaction's agents mean nothing once it has ended:
// a process of it that outlived it, or whoever its token reached (a file it wrote, its
// answer), can spend nothing more through the gateway. Charges of calls still settling are
// counted as before.
func (c *ictx) closeRoutes() {
	gw := &c.r.gw
	gw.mu.Lock()
	defer gw.mu.Unlock()
	for k, token := range gw.routes {
		if k[0] == c.in.ID {
			gw.g.Unregister(token)
			delete(gw.routes, k)
		}
	}
}

// routed reports whether node's model calls in this interaction go through the gateway.
func (c *ictx) routed(node string) bool {
	c.r.gw.mu.Lock()
	defer c.r.gw.mu.Unlock()
	return c.r.gw.routes[[2]string{c.in.ID, node}] != ""
}

// gatewayCall logs a model call the gateway sends on: what it reserved, and what it changed.
func (r *run) gatewayCall(cl gateway.Call) {
	fields := map[string]any{"agent": cl.Caller.Agent, "method": cl.Method, "path": cl.Path, "provider": string(cl.Provider), "modelCall": cl.ModelCall}
	if cl.ModelCall {
		fields["model"], fields["reservedUsd"], fields["reservedTokens"] = cl.Model, cl.ReservedUSD, cl.ReservedTokens
	}
	if cl.OutputCap > 0 {
		fields["outputCap"] = cl.OutputCap
	}
	if len(cl.Removed) > 0 {
		fields["removed"] = cl.Removed
	}
	r.emit(cl.Caller.Interaction, "", "gateway_call", fields)
	if cl.Unpriced {
		r.warnUnpriced(cl)
	}
}

// warnUnpriced tells the person, once per model in a run, that a model the price table does
// not name is priced at its provider's dearest: a limit then stops its agent early.
func (r *run) warnUnpriced(cl gateway.Call) {
	k := string(cl.Provider) + " " + cl.Model
	r.gw.mu.Lock()
	if r.gw.unpriced == nil {
		r.gw.unpriced = map[string]bool{}
	}
	seen := r.gw.unpriced[k]
	r.gw.unpriced[k] = true
	r.gw.mu.Unlock()
	if seen {
		return
	}
	p, _ := r.gw.g.Price(cl.Provider, cl.Model)
	r.emit(cl.Caller.Interaction, "", "warning", map[string]any{"agent": cl.Caller.Agent, "message": fmt.Sprintf(
		"the model %q (%s) is not in the gateway's price table: its calls are reserved and charged at the dearest %s price it knows ($%g input, $%g output per million tokens); give its price in policy.pricing (docs/agents.md, Gateway)",
		cl.Model, cl.Provider, cl.Provider, p.Input, p.Output)})
}

// gatewayCharge counts a metered call as it ends, mid-turn: the interaction's and the run's
// spend and limits (as reported usage is), the agent's own limit, and a spend event.
func (r *run) gatewayCharge(ch gateway.Charge) {
	r.gw.mu.Lock()
	c := r.gw.ictxs[ch.Interaction]
	r.gw.mu.Unlock()
	if c == nil {
		return
	}
	total := c.charge(ch.Agent, charge{tokens: ch.Usage.Tokens(), usd: ch.USD, costless: !ch.CostKnown})
	if ch.UsageSeen || ch.Estimated != "" {
		fields := map[string]any{"agent": ch.Agent, "midTurn": true, "model": ch.Model, "callTokens": ch.Usage.Tokens(), "callCostUsd": ch.USD,
			"reservedUsd": ch.Reserved, "agentSpend": ch.AgentSpend, "agentTotal": total, "run": r.spent(), "interaction": c.spent()}
		if ch.Estimated != "" {
			fields["estimated"] = ch.Estimated
		}
		r.emit(c.in.ID, "", "spend", fields)
	}
	if strings.HasPrefix(ch.Over, "spend limit reached: agent ") {
		c.agentLimitReached(ch.Agent, ch.Over)
	}
}

// agentLimitReached ends the interaction of an agent that reached its own limit.
func (c *ictx) agentLimitReached(agent, message string) {
	if c.stop == nil || c.ctx.Err() != nil {
		return
	}
	cond := "runtime.maxCostUsd"
	if strings.Contains(message, "runtime.maxModelCalls") {
		cond = "runtime.maxModelCalls"
	}
	c.note("spend_limit_reached", map[string]any{"condition": cond, "agent": agent, "message": message, "spend": c.spent()})
	c.stop(&spendLimitError{condition: cond + " of " + agent})
}

// maxRefusalEvents is how many refusals of one agent the log tells of, one by one.
const maxRefusalEvents = 20

// gatewayRefused tells the person which request the gateway refused, and why; a call refused
// for a limit ends what the limit bounds: the interaction, or the run.
func (r *run) gatewayRefused(ref gateway.Refusal) {
	who := ref.Caller.Agent
	if n := r.refusals(who); n <= maxRefusalEvents {
		fields := map[string]any{"message": "model call refused by the gateway: " + ref.Message, "gateway": map[string]any{"method": ref.Method, "path": ref.Path, "status": ref.Status}}
		if who != "" {
			fields["agent"] = who
		}
		if n == maxRefusalEvents {
			fields["message"] = fields["message"].(string) + fmt.Sprintf(" (the %dth refusal; further ones are not logged)", n)
		}
		r.emit(ref.Caller.Interaction, "", "warning", fields)
	}
	hit := ref.Limit
	if hit == nil {
		return
	}
	r.gw.mu.Lock()
	c := r.gw.ictxs[ref.Caller.Interaction]
	r.gw.mu.Unlock()
	switch {
	case hit.Scope == "run" && r.stop != nil && r.ctx.Err() == nil:
		r.emit("", "", "budget_reached", map[string]any{"limit": hit.What, "spend": r.spent(), "budget": r.f.Policy.Budget, "message": hit.Message})
		r.stop(ErrBudget)
	case c == nil:
	case hit.Scope == "agent":
		c.agentLimitReached(who, hit.Message)
	case c.stop != nil && c.ctx.Err() == nil:
		cond := map[string]string{"usd": "max_cost_usd", "tokens": "max_tokens"}[hit.What]
		c.note("spend_limit_reached", map[string]any{"condition": cond, "agent": who, "message": hit.Message, "spend": c.spent()})
		c.stop(&spendLimitError{condition: cond})
	}
}

// refusals counts one more refusal of agent's requests and returns the count.
func (r *run) refusals(agent string) int {
	r.gw.mu.Lock()
	defer r.gw.mu.Unlock()
	if r.gw.refused == nil {
		r.gw.refused = map[string]int{}
	}
	r.gw.refused[agent]++
	return r.gw.refused[agent]
}

// meteredTurn is what the gateway metered of node's process that just ended: its calls since
// the one before ended (or since it was first routed). A spec made meanwhile (to verify a
// phase) does not start a new count.
func (c *ictx) meteredTurn(node string) gateway.Spend {
	gw := &c.r.gw
	k := [2]string{c.in.ID, node}
	gw.mu.Lock()
	before := gw.before[k]
	now := gw.g.Ledger.Agent(node)
	gw.before[k] = now
	gw.mu.Unlock()
	return gateway.Spend{USD: now.USD - before.USD, Tokens: now.Tokens - before.Tokens, Calls: now.Calls - before.Calls, Usage: gateway.Usage{
		Input: now.Usage.Input - before.Usage.Input, CachedInput: now.Usage.CachedInput - before.Usage.CachedInput,
		CacheWrite: now.Usage.CacheWrite - before.Usage.CacheWrite, Output: now.Usage.Output - before.Usage.Output}}
}

// meteredResult puts what the gateway metered of a routed turn in place of what its CLI
// reported (the metrics and agent_finished then say the same as the spend events).
func (c *ictx) meteredResult(node string, res runtime.Result) runtime.Result {
	if !c.routed(node) || res.Backend == runtime.BackendDryRun {
		return res
	}
	m := c.meteredTurn(node)
	res.CostUSD, res.CostKnown = m.USD, true
	// The runtime's way of counting: cache reads and writes are input tokens too.
	res.Usage = runtime.Usage{InputTokens: m.Usage.Input + m.Usage.CachedInput + m.Usage.CacheWrite, CachedInputTokens: m.Usage.CachedInput,
		CacheCreationTokens: m.Usage.CacheWrite, OutputTokens: m.Usage.Output}
	return res
}

// gatewayTurnEnd logs a routed turn's spend: what the gateway metered of it (meteredResult
// put it in res).
func (c *ictx) gatewayTurnEnd(node string, res runtime.Result) {
	c.r.emit(c.in.ID, "", "spend", map[string]any{"agent": node, "gateway": true,
		"tokens": res.Usage.Tokens(res.Backend), "costUsd": res.CostUSD, "agentTotal": c.r.agentSpent(node), "run": c.r.spent(), "interaction": c.spent()})
}

// addReported adds spend an agent reported (one the gateway does not see) to the gateway's
// ledger, so its limits count it too.
func (c *ictx) addReported(node string, ch charge) {
	if c.r.gw.g == nil || c.routed(node) {
		return
	}
	c.r.gw.g.Ledger.Add(node, c.in.ID, ch.usd, gateway.Usage{Input: ch.tokens}, 0)
}

// GatewayLimits are the limits a run of f sets on the model gateway, as a run sets them: the
// run's (policy.budget) and each interaction's (its max_cost_usd and max_tokens), for doctor
// to check before a run.
func GatewayLimits(f *flow.Flow) (run gateway.Limit, interactions map[string]gateway.Limit) {
	b := budgetLimits(f.Policy.Budget)
	interactions = map[string]gateway.Limit{}
	for _, in := range f.Interactions {
		term, params := in.Settings()
		l := spendLimits(term).withParams(params)
		interactions[in.ID] = gateway.Limit{USD: l.usd, Tokens: l.tokens}
	}
	return gateway.Limit{USD: b.usd, Tokens: b.tokens}, interactions
}

// withParams adds the interaction's params.max_cost_usd to its limits (the smaller wins).
func (l limits) withParams(params map[string]any) limits {
	if v, ok := pattern.Number(params["max_cost_usd"]); ok && v > 0 && (l.usd == 0 || v < l.usd) {
		l.usd = v
	}
	return l
}

// ParseGateway reads a setting's or flag's value ("" is auto).
func ParseGateway(s string) (string, error) {
	if s == "" {
		return GatewayAuto, nil
	}
	for _, m := range GatewayModes {
		if s == m {
			return m, nil
		}
	}
	return "", fmt.Errorf("%q is not one of %s", s, strings.Join(GatewayModes, ", "))
}
