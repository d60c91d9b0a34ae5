package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
)

// An agent whose key reaches it through the gateway is told the model its calls are priced
// as, and each limit below what one call sets aside fails, named by its field; an agent on
// its login (not metered before sending) is not.
func TestFlowChecksSayTheLimitBelowOneCall(t *testing.T) {
	env := Env{Getenv: func(k string) string {
		return map[string]string{"HOME": t.TempDir(), "ANTHROPIC_API_KEY": "sk-ant-k", "OPENAI_API_KEY": "sk-k",
			"ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "OPENAI_BASE_URL": "http://127.0.0.1:1"}[k] // nothing dialled off the machine
	}}
	installedCLIs := []Check{{Name: "claude", Backend: "claude", Status: OK}, {Name: "codex", Backend: "codex", Status: OK}}
	tight := Limits{Run: gateway.Limit{USD: 0.1, Tokens: 2_000_000}, Agent: gateway.Limit{USD: 5},
		Interactions: map[string]gateway.Limit{"fix": {Tokens: 500}, "review": {USD: 0.15}}}
	ample := Limits{Run: gateway.Limit{USD: 5, Tokens: 2_000_000}, Interactions: map[string]gateway.Limit{"fix": {}}}
	for _, c := range []struct {
		name   string
		a      Agent
		status string
		want   []string
		not    []string
	}{
		{"below", Agent{ID: "fixer", Backend: "claude", Env: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}, At: "f.yaml:7", Limits: tight}, Fail,
			[]string{"the run's budget, policy.budget.usd, is $0.10", "interaction fix's limit, max_tokens, is 500 tokens", "interaction review's limit, max_cost_usd, is $0.15",
				`priced as "claude-opus-5-5" (claude's default model) at $4.00 input, $20.00 output`, "raise each limit named above in f.yaml"},
			[]string{"policy.budget.tokens", "runtime.maxCostUsd"}},
		{"ample", Agent{ID: "fixer", Backend: "claude", Env: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}, Limits: ample}, OK,
			[]string{`priced as "claude-opus-5-5"`, "one call sets aside at least $0.", "within its limits"}, nil},
		{"its model", Agent{ID: "fixer", Backend: "claude", Model: "claude-haiku-4-5", Env: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}, Limits: tight}, Fail,
			[]string{`"claude-haiku-4-5" (runtime.model) at $1.00 input`, "max_tokens, is 500"}, []string{"policy.budget.usd", "max_cost_usd"}},
		{"unpriced", Agent{ID: "coder", Backend: "codex", Env: []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"}, At: "g.yaml:3", Limits: ample}, Fail,
			[]string{`"gpt-6.1-sol" (codex's default model) is not in the gateway's price table: priced at the dearest of its openai prices, $150.00 input, $600.00 output`,
				"policy.budget.usd, is $5.00", "give gpt-6.1-sol's price in policy.pricing"}, nil},
	} {
		checks := FlowChecks(context.Background(), env, []Agent{c.a}, installedCLIs)
		var spend *Check
		for i := range checks {
			if checks[i].Name == c.a.ID+" spend" {
				spend = &checks[i]
			}
		}
		if spend == nil {
			t.Errorf("%s: no spend check in %+v", c.name, checks)
			continue
		}
		text := spend.Detail + " fix: " + spend.Fix
		if spend.Status != c.status {
			t.Errorf("%s: %s, want %s: %s", c.name, spend.Status, c.status, text)
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q lacks %q", c.name, text, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(text, w) {
				t.Errorf("%s: %q names %q, which holds one call", c.name, text, w)
			}
		}
	}
	login := Agent{ID: "fixer", Backend: "claude", Limits: tight} // no key in runtime.env: no gateway
	for _, ch := range FlowChecks(context.Background(), env, []Agent{login}, installedCLIs) {
		if strings.HasSuffix(ch.Name, " spend") {
			t.Errorf("an agent not routed through the gateway: %+v", ch)
		}
	}
}
