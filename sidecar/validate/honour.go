package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// What the engine cannot honour is refused before a run (an error: the value makes no sense,
// a negative time or count) or said (a warning: the engine reads only other values, or the
// setting has no effect as written). Every documented option either works or is reported.

// numericParams are the params that are counts, times or sizes, with the least value each may
// take (0: may be zero; 1: at least one).
var numericParams = map[string]struct {
	least float64
	what  string
}{
	"bid_deadline_ms": {1, "the time bids are collected, in milliseconds"},
	"samples":         {1, "how many samples are drawn"},
	"score_scale":     {1, "the top of the judge's score"},
	"ttl_s":           {0, "a message's life in seconds (0: no ttl)"},
	"max_depth":       {1, "the tree's depth"},
}

// enumParams are the params the engine reads one of a few values of.
var enumParams = map[string][]string{
	"priority":   {"critical", "high", "medium", "low"},
	"award_rule": {"best_bid", "manager"},
	"select":     {"majority"},
	"match":      {"capability"},
	"schedule":   {"session_end"},
}

// honour checks every edge's params and observability, and every agent's runtime, for what
// the engine cannot do as written.
func (c *checker) honour() {
	for _, in := range c.f.Interactions {
		for _, e := range in.Edges {
			c.honourParams(e)
			c.honourObservability(e)
		}
		c.honourRetention(in)
	}
	for _, a := range c.f.Agents {
		if a.Runtime != nil && a.Runtime.SessionLoop != nil && a.Runtime.SessionLoop.DelayMs < 0 {
			p := a.Path + "/runtime/sessionLoop/delayMs"
			c.report(p, c.at(p), diag.Error, CodeSchema, fmt.Sprintf("sessionLoop.delayMs is %d; it is the pause between sessions in milliseconds, 0 or more (0 or unset: 3000)", a.Runtime.SessionLoop.DelayMs), c.setFix("Set delayMs to 3000", p, 3000))
		}
	}
}

func (c *checker) honourParams(e *flow.Edge) {
	at := func(key string) string { return e.Path + "/data/params/" + key }
	for key, rule := range numericParams {
		v, ok := e.Data.Params[key]
		if !ok {
			continue
		}
		if x, isNum := pattern.Number(v); !isNum || x < rule.least {
			c.report(at(key), c.at(at(key)), diag.Error, CodeSchema, fmt.Sprintf("params.%s is %v; it is %s, a whole number of at least %g", key, v, rule.what, rule.least), nil)
		}
	}
	if v, ok := e.Data.Params["rate_limit_per_min"]; ok {
		if x, isNum := pattern.Number(v); isNum && x < 0 {
			c.report(at("rate_limit_per_min"), c.at(at("rate_limit_per_min")), diag.Error, CodeSchema,
				fmt.Sprintf("params.rate_limit_per_min is %v; a rate limit is a number of messages a minute above 0 (a negative one would be no limit at all)", v), c.setFix("Set it to 10", at("rate_limit_per_min"), 10))
		}
	}
	for key, values := range enumParams {
		v, ok := e.Data.Params[key]
		if !ok {
			continue
		}
		if s, isStr := v.(string); !isStr || !slices.Contains(values, strings.ToLower(s)) {
			sev, how := diag.Warning, "the engine reads only "+strings.Join(values, " or ")+", so this value does nothing"
			if key == "priority" || key == "award_rule" {
				sev, how = diag.Error, "it must be one of "+strings.Join(values, ", ")
			}
			c.report(at(key), c.at(at(key)), sev, CodeSchema, fmt.Sprintf("params.%s is %v; %s", key, v, how), c.replaceFix("Use "+values[0], at(key), values[0]))
		}
	}
	if v, ok := e.Data.Params["repeat"]; ok && v == true {
		c.report(at("repeat"), c.at(at("repeat")), diag.Warning, CodeSchema, "params.repeat does nothing: a loop repeats as the termination allows; raise its max_rounds to repeat", c.deleteFix("Remove repeat", at("repeat")))
	}
	if v, ok := e.Data.Params["verifier"]; ok {
		id, _ := v.(string)
		if n, found := c.f.NodeByID(id); !found || n.Agent == nil {
			c.report(at("verifier"), c.at(at("verifier")), diag.Error, CodeUnknownAgent,
				fmt.Sprintf("params.verifier is %v; it names the agent of this flow that verifies a completed phase, and no agent has that id", v), nil)
		}
	}
}

func (c *checker) honourObservability(e *flow.Edge) {
	o := e.Data.Observability
	if o == nil || o.Traces == nil || !*o.Traces {
		return
	}
	p := e.Path + "/data/observability/traces"
	c.report(p, c.at(p), diag.Warning, CodeSchema, "observability.traces is not recorded apart: every agent turn (prompt, reply, stderr) is in the run's transcript, .agentcanvas/runs/<run>/turns.jsonl", c.setFix("Set traces to false", p, false))
}

// honourRetention: the log keeps the days the logged interactions retain, and nothing is
// pruned while one of them sets no retain_days: say so on the retain_days that does nothing.
func (c *checker) honourRetention(in *flow.Interaction) {
	for _, e := range in.Edges {
		o := e.Data.Observability
		if o == nil || o.RetainDays == nil {
			continue
		}
		for _, other := range c.f.Interactions {
			if retains(other) || !logged(other) {
				continue
			}
			p := e.Path + "/data/observability/retain_days"
			c.report(p, c.at(p), diag.Warning, CodeSchema, fmt.Sprintf("retain_days prunes the flow's log, which interaction %q keeps for good (it sets no retain_days and logs): no log is pruned; set retain_days there too", other.ID), nil)
			return
		}
	}
}

func retains(in *flow.Interaction) bool {
	return slices.ContainsFunc(in.Edges, func(e *flow.Edge) bool {
		return e.Data.Observability != nil && e.Data.Observability.RetainDays != nil
	})
}

func logged(in *flow.Interaction) bool {
	on, off := false, false
	for _, e := range in.Edges {
		if o := e.Data.Observability; o != nil && o.Logs != nil {
			on, off = on || *o.Logs, off || !*o.Logs
		}
	}
	return on || !off
}
