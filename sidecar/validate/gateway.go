package validate

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// GatewayRouted reports whether the run engine routes an agent of this runtime through the
// model gateway: a CLI agent (claude, codex, gemini or auto) whose runtime.env names a
// provider's API key variable. The gateway then meters its spend, cost included.
func GatewayRouted(rt *flow.Runtime) bool {
	if rt == nil {
		return false
	}
	switch rt.BackendID {
	case "", "auto", "claude", "codex", "gemini":
	default:
		return false
	}
	for _, p := range gateway.Providers {
		for _, k := range gateway.KeyVars[p] {
			if slices.Contains(rt.Env, k) {
				return true
			}
		}
	}
	return false
}

// maxCostParam checks params.max_cost_usd: the interaction's spend limit in US dollars, which
// the model gateway enforces before each call (with any max_cost_usd condition).
func (c *checker) maxCostParam(in *flow.Interaction) {
	for _, e := range in.Edges {
		v, ok := e.Data.Params["max_cost_usd"]
		if !ok {
			continue
		}
		if x, isNum := pattern.Number(v); !isNum || x <= 0 {
			pp := e.Path + "/data/params/max_cost_usd"
			c.report(pp, c.at(pp), diag.Error, CodeSchema,
				fmt.Sprintf("params.max_cost_usd is %v; it is the interaction's spend limit, a number of US dollars above 0, e.g. 1.5", v), nil)
		}
	}
}

// gatewayOnly warns of the settings that act only on an agent routed through the model
// gateway, on an agent that is not: they would do nothing.
func (c *checker) gatewayOnly(path string, r *flow.Runtime) {
	if GatewayRouted(r) {
		return
	}
	why := "its runtime.env names no API key variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY…)"
	if b := r.BackendID; b != "" && b != "auto" && b != "claude" && b != "codex" && b != "gemini" {
		why = "a " + b + " agent never is"
	}
	if r.MaxCostUSD > 0 {
		c.report(path+"/maxCostUsd", c.at(path+"/maxCostUsd"), diag.Warning, CodeSchema,
			"runtime.maxCostUsd counts the model calls the gateway meters, and this agent is not routed through it: "+why, nil)
	}
	if r.MaxModelCalls != nil && *r.MaxModelCalls > 0 {
		c.report(path+"/maxModelCalls", c.at(path+"/maxModelCalls"), diag.Warning, CodeSchema,
			"runtime.maxModelCalls counts the model calls the gateway sees, and this agent is not routed through it: "+why, nil)
	}
	if r.Network == "open" {
		c.report(path+"/network", c.at(path+"/network"), diag.Warning, CodeSchema,
			"runtime.network open widens the network of an agent routed through the model gateway, and this agent is not: "+why+"; it keeps its network anyway", nil)
	}
}

// policyPricing checks policy.pricing: the model gateway's price overrides.
func (c *checker) policyPricing() {
	if c.f.Policy.Pricing == nil {
		return
	}
	if _, err := FlowPricing(c.f); err != nil {
		c.report("/policy/pricing", c.at("/policy/pricing"), diag.Error, CodeSchema,
			fmt.Sprintf("policy.pricing: %v; it is the gateway's prices in US dollars per million tokens, e.g. {openai: {gpt-5: {input: 1.25, cachedInput: 0.125, output: 10}}}", err), nil)
	}
}

// FlowPricing is the flow's policy.pricing as the gateway reads it (nil when it sets none).
func FlowPricing(f *flow.Flow) (gateway.Pricing, error) {
	if f.Policy.Pricing == nil {
		return nil, nil
	}
	b, err := json.Marshal(f.Policy.Pricing)
	if err != nil {
		return nil, err
	}
	return gateway.ParsePricing(b)
}
