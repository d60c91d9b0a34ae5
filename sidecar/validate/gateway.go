package validate

import (
	"fmt"
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
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
		if x, isNum := number(v); !isNum || x <= 0 {
			pp := e.Path + "/data/params/max_cost_usd"
			c.report(pp, c.at(pp), diag.Error, CodeSchema,
				fmt.Sprintf("params.max_cost_usd is %v; it is the interaction's spend limit, a number of US dollars above 0, e.g. 1.5", v), nil)
		}
	}
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}
