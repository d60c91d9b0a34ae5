package engine

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
)

const engineRealKey = "sk-REAL-engine-test-key-never-in-an-agent-0042"

// A worker of each real CLI whose flow names its API key variable runs through the run's
// model gateway: a scripted model that keeps calling tools is cut off mid-turn by the
// worker's runtime.maxCostUsd (no call that could pass it reaches the model: the provider's
// bill stays within it), the person sees why, spend events arrive during the turn, and the
// key is in no file the run wrote.
func TestRealCLIGatewayAgentLimit(t *testing.T) {
	// $10 per million tokens of every kind: each coder call (30,100 tokens) bills $0.301.
	// Options.Pricing overrides every entry of the project's table.
	flat := gateway.Price{Input: 10, CachedInput: 10, CacheWrite: 10, Output: 10}
	pricing := gateway.DefaultPricing()
	for _, models := range pricing {
		for m := range models {
			models[m] = flat
		}
	}
	perCall := modelserver.Usage{InputTokens: 30_000, OutputTokens: 100}
	const limit = 1.2
	for _, cli := range modelserver.CLIs {
		t.Run(cli.Name, func(t *testing.T) {
			exe := cli.Binary(t)
			t.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
			var loop []modelserver.Reply
			for i := range 12 {
				loop = append(loop, modelserver.Reply{Calls: []modelserver.Call{cli.WriteCall(fmt.Sprintf("f%d.txt", i), "x\n")}, Usage: &perCall})
			}
			srv := cli.Start(t, modelserver.Script{
				{Match: "Decompose the task", Replies: []modelserver.Reply{{Text: "ASSIGN coder: Put the greeting in hello.txt."}}},
				{Match: "Put the greeting in hello.txt", Replies: loop},
			})
			ws := gitWorkspace(t)
			env := cli.KeyEnv(t, srv, engineRealKey)
			if cli.Name == "gemini" {
				env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
			}
			f := realFlow(t, ws, cli, env, fmt.Sprintf(", maxCostUsd: %v", limit))
			rec := &recorder{}
			out, err := Run(context.Background(), f, Options{Workspace: ws, Env: env, Sink: rec.sink, Pricing: pricing})
			if err != nil {
				t.Fatal(err)
			}
			if t.Failed() {
				logRealRun(t, rec, srv, out)
			}
			coderCalls := 0
			for _, r := range srv.Requests() {
				if r.Conversation == 1 && r.Error == "" {
					coderCalls++
				}
			}
			bill := float64(coderCalls) * float64(perCall.InputTokens+perCall.OutputTokens) * 10 / 1e6
			if coderCalls < 2 || bill > limit {
				t.Errorf("the coder's calls that reached the model: %d, billing $%.3f against its limit of $%.2f", coderCalls, bill, limit)
			}
			hit := rec.events("spend_limit_reached")
			if len(hit) == 0 || hit[0].Fields["condition"] != "runtime.maxCostUsd" || hit[0].Fields["agent"] != "coder" {
				logRealRun(t, rec, srv, out)
				t.Fatalf("spend_limit_reached %+v", hit)
			}
			refused := false
			for _, w := range rec.events("warning") {
				if m, _ := w.Fields["message"].(string); strings.HasPrefix(m, "model call refused by the gateway: spend limit reached: agent coder runtime.maxCostUsd $1.20, spent $") {
					refused = true
				}
			}
			if !refused {
				t.Errorf("no refusal was logged")
			}
			mid := 0
			var callTokens int64
			var callUSD float64
			for _, e := range rec.events("spend") {
				if e.Fields["midTurn"] == true && e.Fields["agent"] == "coder" {
					mid++
					n, _ := e.Fields["callTokens"].(int64)
					usd, _ := e.Fields["callCostUsd"].(float64)
					callTokens, callUSD = callTokens+n, callUSD+usd
				}
			}
			if mid != coderCalls {
				t.Errorf("%d mid-turn spend events of the coder, want one per metered call (%d)", mid, coderCalls)
			}
			calls := 0
			for _, e := range rec.events("gateway_call") {
				if e.Fields["agent"] == "coder" && e.Fields["modelCall"] == true {
					calls++
					if r, _ := e.Fields["reservedUsd"].(float64); r <= 0 || r > limit {
						t.Errorf("gateway_call reserved $%v", e.Fields["reservedUsd"])
					}
				}
			}
			if calls != coderCalls {
				t.Errorf("%d gateway_call events of the coder, %d calls reached the model", calls, coderCalls)
			}
			// The run's state keeps the coder's total: what its metered calls added up to.
			st, err := ReadState(ws, out.RunID)
			if c := st.Agents["coder"]; err != nil || !c.Metered || c.Tokens != callTokens || math.Abs(c.CostUSD-callUSD) > 1e-9 || callTokens == 0 {
				t.Errorf("the coder in state.json: %+v (%v); its metered calls: %d tokens, $%v", c, err, callTokens, callUSD)
			}
			if len(rec.events("gateway_started")) != 1 {
				t.Errorf("gateway_started events: %d", len(rec.events("gateway_started")))
			}
			if out.Spend.CostUSD < bill || !out.Spend.CostKnown {
				t.Errorf("run spend %+v: want the gateway's priced calls", out.Spend)
			}
			// One place for the numbers: the metrics (from the turns' results) say what the
			// gateway metered, cost included for every CLI.
			if m := out.Metrics; !m.CostKnown || math.Abs(m.CostUSD-out.Spend.CostUSD) > 1e-9 {
				t.Errorf("metrics cost %v (known %v); the gateway metered %+v", m.CostUSD, m.CostKnown, out.Spend)
			}
			_ = filepath.WalkDir(ws, func(p string, e fs.DirEntry, err error) error {
				if err == nil && e.Type().IsRegular() {
					if b, _ := os.ReadFile(p); strings.Contains(string(b), engineRealKey) {
						t.Errorf("the real key is in %s", p)
					}
				}
				return nil
			})
		})
	}
}

// A flow that sets no limit at all still stops a model that keeps calling tools: each agent
// may make the default number of model calls (lowered here to 4), the run says so when it
// starts, the gateway refuses the call past it (with how to raise it), and the interaction
// ends with runtime.maxModelCalls. Real Claude Code, routed by its key.
func TestRealCLIDefaultModelCalls(t *testing.T) {
	cli := modelserver.Claude
	exe := cli.Binary(t)
	t.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var loop []modelserver.Reply
	for i := range 12 {
		loop = append(loop, modelserver.Reply{Calls: []modelserver.Call{cli.WriteCall(fmt.Sprintf("f%d.txt", i), "x\n")}})
	}
	srv := cli.Start(t, modelserver.Script{
		{Match: "Decompose the task", Replies: []modelserver.Reply{{Text: "ASSIGN coder: Put the greeting in hello.txt."}}},
		{Match: "Put the greeting in hello.txt", Replies: loop},
	})
	ws := gitWorkspace(t)
	env := cli.KeyEnv(t, srv, engineRealKey)
	f := realFlow(t, ws, cli, env, "")
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Workspace: ws, Env: env, Sink: rec.sink, modelCalls: 4})
	if err != nil {
		t.Fatal(err)
	}
	coderCalls := 0
	for _, r := range srv.Requests() {
		if r.Conversation == 1 && r.Error == "" {
			coderCalls++
		}
	}
	if coderCalls != 4 {
		logRealRun(t, rec, srv, out)
		t.Errorf("the coder's calls that reached the model: %d, want the default limit (4)", coderCalls)
	}
	started := rec.events("run_started")
	d, _ := started[0].Fields["defaultLimit"].(map[string]any)
	if d == nil || d["maxModelCalls"] != int64(4) || fmt.Sprint(d["agents"]) != "[lead coder]" || !strings.Contains(fmt.Sprint(d["message"]), "runtime.maxModelCalls raises it") {
		t.Errorf("run_started defaultLimit %v", started[0].Fields["defaultLimit"])
	}
	hit := rec.events("spend_limit_reached")
	if len(hit) == 0 || hit[0].Fields["condition"] != "runtime.maxModelCalls" || hit[0].Fields["agent"] != "coder" {
		logRealRun(t, rec, srv, out)
		t.Fatalf("spend_limit_reached %+v", hit)
	}
	if m := fmt.Sprint(hit[0].Fields["message"]); !strings.Contains(m, "agent coder runtime.maxModelCalls 4 model calls, made 4") || !strings.Contains(m, "0 removes it") {
		t.Errorf("the limit's message %q", m)
	}
}

// The person is told when routed agents' network cannot be limited to the gateway.
func TestGatewayNetworkOpenSaysWhy(t *testing.T) {
	off := Limits{Confine: confine.ModeOff, ConfineFrom: "--confine"}
	for _, c := range []struct {
		abi    int
		limits *Limits
		want   string
	}{
		{7, nil, ""},
		{3, nil, "limiting TCP needs Landlock ABI 4"},
		{0, nil, "limiting TCP needs Landlock ABI 4"},
		{7, &off, "confinement is off (--confine)"},
	} {
		r := &run{confined: confine.Status{ABI: c.abi, Reason: "no Landlock here"}}
		if c.limits != nil {
			l := *c.limits
			r.o.Limits = func() Limits { return l }
		}
		if got := r.gatewayNetworkOpen(); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("ABI %d, limits %+v: %q, want %q", c.abi, c.limits, got, c.want)
		}
	}
}

// Which agents are routed: CLI agents naming a key variable, unless the gateway is off;
// Claude Code without a key only with logins; never a command agent.
func TestRouteThroughGatewayWhom(t *testing.T) {
	ws := gitWorkspace(t)
	src := "version: 0.2\nagents: [{id: a, runtime: {backendId: command, command: [bash, -c, 'true']}}]\ninteractions: []\n"
	r, err := newRun(flow.Parse(filepath.Join(ws, "f.yaml"), []byte(src)), Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	c := &ictx{r: r, in: &flow.Interaction{ID: "build"}}
	for _, k := range []struct {
		mode, backend string
		env           map[string]string
		routed        bool
	}{
		{"", "claude", map[string]string{"ANTHROPIC_API_KEY": "sk-real-000000"}, true},
		{GatewayOff, "claude", map[string]string{"ANTHROPIC_API_KEY": "sk-real-000000"}, false},
		{"", "command", map[string]string{"ANTHROPIC_API_KEY": "sk-real-000000"}, false},
		{"", "claude", map[string]string{}, false},
		{GatewayLogins, "claude", map[string]string{}, true},
		{GatewayLogins, "codex", map[string]string{}, false},
		{"", "auto", map[string]string{"GEMINI_API_KEY": "sk-real-000000"}, true},
	} {
		r.o.Gateway = k.mode
		node := fmt.Sprintf("a-%s-%s-%d", k.mode, k.backend, len(k.env))
		s := runtime.Spec{AgentID: node, BackendID: k.backend, Env: maps.Clone(k.env)}
		if err := c.routeThroughGateway(node, &s, &flow.Runtime{}); err != nil {
			t.Fatal(err)
		}
		if got := s.GatewayPort != 0; got != k.routed || c.routed(node) != k.routed {
			t.Errorf("%+v: routed %v, want %v", k, got, k.routed)
		}
		for n, v := range s.Env {
			if v == "sk-real-000000" && k.routed {
				t.Errorf("%+v: %s still holds the key", k, n)
			}
		}
	}
	// The editor's setting (Limits) turns it off too; the command line's option wins over it.
	r.o.Gateway, r.o.Limits = "", func() Limits { return Limits{Gateway: GatewayOff} }
	s := runtime.Spec{AgentID: "by-setting", BackendID: "claude", Env: map[string]string{"ANTHROPIC_API_KEY": "sk-real-000000"}}
	if err := c.routeThroughGateway("by-setting", &s, &flow.Runtime{}); err != nil || s.GatewayPort != 0 {
		t.Errorf("agentcanvas.gateway off: routed (%v)", err)
	}
	r.o.Gateway = GatewayAuto
	if err := c.routeThroughGateway("by-flag", &s, &flow.Runtime{}); err != nil || s.GatewayPort == 0 {
		t.Errorf("--gateway auto over the setting off: not routed (%v)", err)
	}
}

// Prices: the project's table, under the flow's policy.pricing, under the editor's setting,
// under the command line's --pricing.
func TestGatewayPricesLayered(t *testing.T) {
	ws := gitWorkspace(t)
	src := "version: 0.2\npolicy: {pricing: {openai: {gpt-5: {input: 1, output: 1}, gpt-5-mini: {input: 2, output: 2}}}}\n" +
		"agents: [{id: a, runtime: {backendId: command, command: [bash, -c, 'true']}}]\ninteractions: []\n"
	setting := gateway.Pricing{gateway.OpenAI: {"gpt-5-mini": {Input: 3, Output: 3}, "gpt-5-nano": {Input: 4, Output: 4}}}
	flag := gateway.Pricing{gateway.OpenAI: {"gpt-5-nano": {Input: 5, Output: 5}}}
	r, err := newRun(flow.Parse(filepath.Join(ws, "f.yaml"), []byte(src)), Options{Workspace: ws, Pricing: flag,
		Limits: func() Limits { return Limits{Pricing: setting} }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	g, err := r.gateway()
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]float64{"gpt-5": 1, "gpt-5-mini": 3, "gpt-5-nano": 5, "gpt-4.1": gateway.DefaultPricing()[gateway.OpenAI]["gpt-4.1"].Input} {
		if p, _ := g.Price(gateway.OpenAI, model); p.Input != want {
			t.Errorf("%s: input $%v per million, want $%v", model, p.Input, want)
		}
	}
}
