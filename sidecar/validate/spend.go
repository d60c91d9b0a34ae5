package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// spendUnknown warns where a spend limit (policy.budget, max_cost_usd, max_tokens) cannot
// count some agents' spend: the run engine counts only the usage agents report (docs/runs.md,
// Spend limits), and an agent that reports none is unknown to every limit. Claude reports
// tokens and cost; codex and gemini tokens only; a command agent only what it prints on
// USAGE: lines; the dry-run backend spends nothing.
func (c *checker) spendUnknown() {
	if b := c.f.Policy.Budget; b != nil && (b.USD != nil || b.Tokens != nil) {
		var nodes []flow.Node
		for _, a := range c.f.Agents {
			nodes = append(nodes, flow.Node{ID: a.ID, Agent: a})
		}
		for _, s := range c.f.SystemNodes {
			nodes = append(nodes, flow.Node{ID: s.ID, System: s})
		}
		c.reportSpendUnknown("/policy/budget", "policy.budget", b.USD != nil, nodes)
	}
	for _, in := range c.f.Interactions {
		term, _ := in.Settings()
		var at string
		usd := false
		term.Walk(func(t *flow.Termination) {
			if t.Type == "max_cost_usd" || t.Type == "max_tokens" {
				at = firstNonEmpty(at, t.Path+"/type")
				usd = usd || t.Type == "max_cost_usd"
			}
		})
		if at == "" {
			continue
		}
		var nodes []flow.Node
		seen := map[string]bool{}
		for _, e := range in.Edges {
			for _, id := range []string{e.Source, e.Target} {
				if n, ok := c.nodes[id]; ok && !seen[id] {
					seen[id] = true
					nodes = append(nodes, n)
				}
			}
		}
		c.reportSpendUnknown(at, fmt.Sprintf("interaction %q's spend limit", in.ID), usd, nodes)
	}
}

// askedSystemTypes are the system nodes the engine runs as agents (the others are engine code).
var askedSystemTypes = []string{"judge", "manager", "curator"}

func (c *checker) reportSpendUnknown(path, what string, usd bool, nodes []flow.Node) {
	var command, costless []string
	for _, n := range nodes {
		var rt *flow.Runtime
		switch {
		case n.Agent != nil:
			rt = n.Agent.Runtime
		case n.System != nil && (n.System.Runtime != nil || slices.Contains(askedSystemTypes, n.System.Type)):
			rt = n.System.Runtime
		default:
			continue
		}
		backend := "auto"
		if rt != nil && rt.BackendID != "" {
			backend = rt.BackendID
		}
		if GatewayRouted(rt) {
			continue // the model gateway meters and prices its every call
		}
		switch backend {
		case "command":
			command = append(command, n.ID)
		case "codex", "gemini", "auto":
			if usd {
				costless = append(costless, fmt.Sprintf("%s (%s)", n.ID, backend))
			}
		}
	}
	var parts []string
	if len(command) > 0 {
		parts = append(parts, fmt.Sprintf("%s (command) count%s only what %s on USAGE: lines (docs/agents.md)", strings.Join(command, ", "), verbS(len(command)), pronounPrints(len(command))))
	}
	if len(costless) > 0 {
		parts = append(parts, fmt.Sprintf("%s report%s no cost, so a cost limit cannot count %s (codex and gemini report tokens only; auto may pick either)", strings.Join(costless, ", "), verbS(len(costless)), pronounIt(len(costless))))
	}
	if len(parts) == 0 {
		return
	}
	c.report(path, c.head(path), diag.Warning, CodeSpendUnknown,
		fmt.Sprintf("%s counts only the usage agents report: %s; whatever they do not report is unknown and no limit counts it", what, strings.Join(parts, "; ")), nil)
}

func verbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

func pronounPrints(n int) string {
	if n == 1 {
		return "it prints"
	}
	return "they print"
}

func pronounIt(n int) string {
	if n == 1 {
		return "its spend"
	}
	return "their spend"
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
