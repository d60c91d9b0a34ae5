package doctor

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
)

// What `doctor FLOW` says of the spend of an agent whose model calls go through the run's
// model gateway: the model its calls are priced as, and each of the flow's limits that
// cannot hold even one of its calls (the gateway reserves a call's worst case before sending
// it, so such a limit refuses every call). The numbers are the gateway's own.

// Limits are the limits an agent's calls count against, as a run sets them on the gateway.
type Limits struct {
	Run, Agent   gateway.Limit
	Interactions map[string]gateway.Limit // those the agent takes part in
	// Pricing is the gateway's price table with the flow's policy.pricing.
	Pricing gateway.Pricing
}

// spendCheck says what one call of agent a, run by CLI c, is priced as and sets aside at the
// least, and fails naming each limit below it.
func spendCheck(a Agent, c CLI) Check {
	ch := Check{Name: a.ID + " spend", Backend: c.Backend}
	model, whose := a.Model, "runtime.model"
	if model == "" {
		model, whose = c.DefaultModel, c.Program+"'s default model"
	}
	pricing := a.Limits.Pricing
	if pricing == nil {
		pricing = gateway.DefaultPricing()
	}
	one := pricing.OneCall(c.Provider, model, c.LeastRequest)
	priced := fmt.Sprintf("priced as %q (%s) at $%.2f input, $%.2f output per million", model, whose, one.Price.Input, one.Price.Output)
	if !one.Priced {
		priced = fmt.Sprintf("%q (%s) is not in the gateway's price table: priced at the dearest of its %s prices, $%.2f input, $%.2f output per million", model, whose, c.Provider, one.Price.Input, one.Price.Output)
	}
	request := fmt.Sprintf("a %d KB request, the least %s sends", c.LeastRequest/1000, c.Program)
	hits := belowOneCall(a, one)
	if len(hits) == 0 {
		ch.Status = OK
		ch.Detail = fmt.Sprintf("%s; one call sets aside at least $%.2f or %d tokens (%s), within its limits", priced, math.Ceil(one.USD()*100)/100, one.Tokens(), request)
		return ch
	}
	ch.Status = Fail
	ch.Detail = strings.Join(hits, "; ") + " — " + priced + " (counting " + request + ")"
	ch.Fix = "raise each limit named above in " + fileOf(a.At)
	if !one.Priced {
		ch.Fix += ", or give " + model + "'s price in policy.pricing, or limit tokens instead of dollars"
	}
	return ch
}

// belowOneCall are the gateway's refusals of a's every call, each said once (the run's
// budget is met in every interaction).
func belowOneCall(a Agent, one gateway.OneCall) []string {
	ids := []string{""} // an agent in no interaction still counts against the run's budget
	for id := range a.Limits.Interactions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		l := gateway.NewLedger()
		l.SetRunLimit(a.Limits.Run)
		l.SetAgentLimit(a.ID, a.Limits.Agent)
		if id != "" {
			l.SetInteractionLimit(id, a.Limits.Interactions[id])
		}
		for _, h := range l.BelowOneCall(a.ID, id, one) {
			if !slices.Contains(out, h.Message) {
				out = append(out, h.Message)
			}
		}
	}
	return out
}

// fileOf is the file of a FILE:LINE.
func fileOf(at string) string {
	if i := strings.LastIndexByte(at, ':'); i > 0 {
		return at[:i]
	}
	return at
}
