package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// One model call's way through the gateway once it is admitted: its body read and changed
// (prepare), its worst case reserved, the response metered, and the reservation settled to
// what the call cost (settle), exactly once whatever way the call ends.

// prepare reads a call's body, reserves a model call's worst case (it may wait for calls in
// flight to settle) and makes the body that is sent on. A refusal's message is returned,
// with the limit when it is one.
func (g *Gateway) prepare(ctx context.Context, cl *call, body []byte) (string, *Hit) {
	cl.body = body
	if cl.e.kind != modelCall && cl.e.provider != Anthropic { // a Gemini token count: sent as it is
		if m, _, err := members(body); err == nil && !cl.caller.NetworkOpen && mayFetch(body) {
			if u := geminiFetches(m); u != "" {
				return "agentcanvas gateway: " + errFetch(u).Error(), nil
			}
		}
		return "", nil
	}
	req, err := readModelRequest(cl.e, cl.path, body, cl.caller.NetworkOpen)
	if err != nil {
		return "agentcanvas gateway: " + err.Error(), nil
	}
	if cl.e.kind == modelCall {
		_, priced, known := g.o.Pricing.price(req.p, req.model)
		cl.unpriced = known && !priced
		cl.req, cl.w = req, g.worstOf(req)
		grant, hit, err := g.Ledger.Reserve(ctx, cl.caller.Agent, cl.caller.Interaction, cl.w)
		switch {
		case err != nil:
			return "agentcanvas gateway: the agent went away while its call waited for calls in flight to settle", nil
		case hit != nil:
			return hit.Message, hit
		}
		cl.grant = grant
		if err := req.enforce(grant); err != nil {
			g.Ledger.Settle(grant, 0, Usage{}, 0)
			cl.req = nil
			return "agentcanvas gateway: " + err.Error(), nil
		}
	}
	cl.removed = req.removed
	if req.edited {
		if cl.body, err = req.body(); err != nil {
			if cl.req != nil {
				g.Ledger.Settle(cl.grant, 0, Usage{}, 0)
				cl.req = nil
			}
			return "agentcanvas gateway: " + err.Error(), nil
		}
	}
	return "", nil
}

// worstOf is a model call's worst case: its input at the dearest input price, its output
// cap (the default where it sets none) at the output price, per answer asked for, and the
// thinking its cap does not cover.
func (g *Gateway) worstOf(r *modelRequest) worst {
	inUSD, outUSD, _ := g.o.Pricing.perToken(r.p, r.model, r.in, r.hourCache)
	answers := min(r.answers, maxAnswers)
	per := r.maxOut
	if per == 0 {
		per = defaultOutputCap
	}
	minPer := max(minOutput, r.thinkingMin())
	if r.maxOut > 0 {
		minPer = min(minPer, r.maxOut)
	}
	extra := tally.Mul(r.thinking, answers)
	return worst{fixedTokens: tally.Add(r.in, extra), fixedUSD: tally.AddUSD(float64(r.in)*inUSD, float64(extra)*outUSD),
		out: tally.Mul(per, answers), minOut: tally.Mul(minPer, answers), outUSD: outUSD, capped: true, model: r.model, inUSD: inUSD}
}

// maxAnswers is the most answers one call may ask for (OpenAI's n stops at 128).
const maxAnswers = 128

// enforce sets the output cap the call was granted on the request, when a limit in dollars
// or tokens applies and the request's own cap is higher or missing; a call that asks for
// more answers than any API gives is refused.
func (r *modelRequest) enforce(g Grant) error {
	if r.answers > maxAnswers {
		return fmt.Errorf("the request asks for %d answers; %d at most", r.answers, maxAnswers)
	}
	if !g.Limited || (r.maxOut > 0 && tally.Mul(r.maxOut, r.answers) <= g.Out) {
		return nil
	}
	per := g.Out / r.answers
	if err := r.setCap(per); err != nil {
		return err
	}
	if r.p == Anthropic {
		return r.setThinkingBelow(per)
	}
	return nil
}

// event is what the call's Call event says.
func (cl *call) event(method string) Call {
	c := Call{Caller: cl.caller, Method: method, Path: cl.path, Provider: cl.e.provider, ModelCall: cl.e.kind == modelCall, Removed: cl.removed, Unpriced: cl.unpriced}
	if r := cl.req; r != nil {
		c.Model, c.ReservedUSD, c.ReservedTokens = r.model, cl.grant.USD, cl.grant.Tokens
		if r.capChanged {
			c.OutputCap = r.capSet
		}
	}
	return c
}

// meter wraps a model call's response body to read its usage as it passes.
func (g *Gateway) meter(resp *http.Response) error {
	c := resp.Request.Context().Value(ctxKey{}).(*call)
	if c.req == nil {
		return nil // a token count: free
	}
	status := resp.StatusCode
	resp.Body = &meter{body: resp.Body, p: c.e.provider, answers: c.req.answers, finished: map[int]bool{}, sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
		done: func(got metered) { g.settle(c, got, status, "") }}
	return nil
}

// settle gives a model call's reservation back and charges what it cost, once: the usage
// the provider reported when it gave its last word; otherwise (a stream cut before its
// usage, a response without one, a count the gateway refuses) the larger of what streamed
// and the reservation. An error the provider answered costs what it reported, or nothing.
// why says how a call without a response ended ("" for one with).
func (g *Gateway) settle(c *call, got metered, status int, why string) {
	if c.req == nil {
		return
	}
	c.settled.Do(func() {
		if status == 0 && !c.written.Load() { // never reached the provider: nothing to pay, nothing to tell
			g.Ledger.Settle(c.grant, 0, Usage{}, 0)
			return
		}
		model := firstNonEmpty(got.model, c.req.model)
		ch := Charge{Agent: c.caller.Agent, Interaction: c.caller.Interaction, Provider: c.e.provider, Model: model,
			Status: status, Reserved: c.grant.USD, UsageSeen: got.seen}
		_, _, ch.CostKnown = g.o.Pricing.perToken(c.e.provider, model, 0, false)
		calls := 0
		switch bad := got.usage.check(); {
		case status >= 400 && (!got.seen || bad != ""):
			// an error the provider answered without a usable count: it bills none
		case status >= 400 || (got.final && bad == ""):
			ch.Usage, ch.USD = got.usage, g.cost(c, got.model, got.usage)
			if status < 400 {
				calls = 1
			}
		default:
			ch.Estimated = estimateReason(got, status, why, bad)
			ch.Usage, ch.USD = g.estimate(c, got)
			calls = 1
		}
		ch.AgentSpend, ch.InteractionSpend, ch.RunSpend = g.Ledger.Settle(c.grant, ch.USD, ch.Usage, calls)
		ch.Over = g.Ledger.Over(c.caller.Agent, c.caller.Interaction)
		if g.o.OnCharge != nil {
			g.o.OnCharge(ch)
		}
	})
}

// cost prices a reported usage at the dearer of the model the request named and the one the
// response names (a request naming a model priced at nothing is not charged nothing for
// another).
func (g *Gateway) cost(c *call, respModel string, u Usage) float64 {
	usd, _ := g.o.Pricing.Cost(c.e.provider, c.req.model, u)
	if respModel != "" && respModel != c.req.model {
		if x, _ := g.o.Pricing.Cost(c.e.provider, respModel, u); x > usd {
			usd = x
		}
	}
	return usd
}

// estimate is the charge of a call whose usage is not known: the larger of its input bound
// with what it streamed (a token at most a byte of text), the usage it reported so far, and
// its reservation.
func (g *Gateway) estimate(c *call, got metered) (Usage, float64) {
	tokens := max(c.w.tokens(got.text), c.grant.Tokens)
	usd := max(c.w.usd(got.text), c.grant.USD)
	u := Usage{Input: c.w.fixedTokens, Output: tally.Sub(tokens, c.w.fixedTokens)}
	if got.seen && got.usage.check() == "" {
		if x := g.cost(c, got.model, got.usage); x > usd {
			usd = x
		}
		if got.usage.Tokens() > tokens {
			u = got.usage
		}
	}
	return u, usd
}

func estimateReason(got metered, status int, why, bad string) string {
	switch {
	case why != "":
		return why
	case bad != "":
		return "the provider's usage was refused: " + bad
	case got.cut && got.seen:
		return "the response was cut before its last usage count"
	case got.cut:
		return "the response was cut before its usage"
	}
	return "the response carried no usage"
}

// withWroteTrace notes on c when the request has been written to the provider's
// connection: a call cut after that may have been billed.
func withWroteTrace(ctx context.Context, c *call) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			c.written.Store(true)
		}
	}})
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
