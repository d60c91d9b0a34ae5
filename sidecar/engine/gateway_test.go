package engine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

const engineRealKey = "sk-REAL-engine-test-key-never-in-an-agent-0042"

// A worker of each real CLI whose flow names its API key variable runs through the run's
// model gateway: a scripted model that keeps calling tools is cut off mid-turn by the
// worker's runtime.maxCostUsd (at most one call past the limit reaches the model), the
// person sees why, spend events arrive during the turn, and the key is in no file the run
// wrote.
func TestRealCLIGatewayAgentLimit(t *testing.T) {
	// $10 per million tokens of every kind: each scripted call (1,050 tokens) costs $0.0105.
	// Options.Pricing overrides every entry of the project's table.
	flat := gateway.Price{Input: 10, CachedInput: 10, CacheWrite: 10, Output: 10}
	pricing := gateway.DefaultPricing()
	for _, models := range pricing {
		for m := range models {
			models[m] = flat
		}
	}
	for _, cli := range modelserver.CLIs {
		t.Run(cli.Name, func(t *testing.T) {
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
			if cli.Name == "gemini" {
				env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
			}
			f := realFlow(t, ws, cli, env, ", maxCostUsd: 0.03")
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
			if coderCalls < 3 || coderCalls > 4 {
				t.Errorf("the coder's calls that reached the model: %d; its limit is reached by the 3rd, so at most 4 may", coderCalls)
			}
			hit := rec.events("spend_limit_reached")
			if len(hit) == 0 || hit[0].Fields["condition"] != "runtime.maxCostUsd" || hit[0].Fields["agent"] != "coder" {
				logRealRun(t, rec, srv, out)
				t.Fatalf("spend_limit_reached %+v", hit)
			}
			refused := false
			for _, w := range rec.events("warning") {
				if m, _ := w.Fields["message"].(string); strings.HasPrefix(m, "model call refused by the gateway: spend limit reached: agent coder runtime.maxCostUsd $0.03, spent $0.03") {
					refused = true
				}
			}
			mid := 0
			for _, e := range rec.events("spend") {
				if e.Fields["midTurn"] == true && e.Fields["agent"] == "coder" {
					mid++
				}
			}
			if mid < 3 {
				t.Errorf("%d mid-turn spend events of the coder, want one per metered call (≥ 3)", mid)
			}
			if len(rec.events("gateway_started")) != 1 {
				t.Errorf("gateway_started events: %d", len(rec.events("gateway_started")))
			}
			if !refused && coderCalls > 3 {
				t.Errorf("a 4th call reached the model and no refusal was logged")
			}
			if out.Spend.CostUSD < 0.03 || !out.Spend.CostKnown {
				t.Errorf("run spend %+v: want the gateway's priced calls", out.Spend)
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
