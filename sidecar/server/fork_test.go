package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// A fork from the editor, on the real binary: forkRun with planOnly says what a fork of a
// finished dry run would restore, without starting anything; forkRun starts it, its events
// stream as runEvents, and listRuns shows it under its parent with the turn it left from. A
// turn that does not exist and an unknown --set are refused, naming them.
func TestForkRunOnTheBinary(t *testing.T) {
	root, uri := workspace(t, "team.yaml", goodFlow)
	c := startBinary(t)
	c.initialize(root)
	var info struct{ RunID string }
	c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri, "dryRun": true, "task": "say hello"}, &info)
	c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"event":"run_finished"`) && strings.Contains(string(p), info.RunID)
	})
	var plan struct {
		Plan struct {
			RunID  string
			Turns  int
			Agents []struct {
				ID, Files string
				Restored  bool
			}
			Limits []string
		}
		Run *struct{ RunID string }
	}
	c.mustCall("agentcanvas/forkRun", map[string]any{"runId": info.RunID, "at": 1, "planOnly": true}, &plan)
	if plan.Run != nil || plan.Plan.Turns < 2 || len(plan.Plan.Agents) == 0 || len(plan.Plan.Limits) == 0 {
		t.Fatalf("forkRun planOnly: %+v", plan)
	}
	var runs []struct {
		RunID  string
		Status string
		ForkOf *struct {
			RunID string
			Turn  int
		}
	}
	c.mustCall("agentcanvas/listRuns", nil, &runs)
	if len(runs) != 1 {
		t.Fatalf("planOnly started a run: %+v", runs)
	}
	c.mustCall("agentcanvas/forkRun", map[string]any{"runId": info.RunID, "at": 2}, &plan)
	if plan.Run == nil || plan.Run.RunID == "" {
		t.Fatalf("forkRun: %+v", plan)
	}
	fork := plan.Run.RunID
	c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"event":"run_started"`) && strings.Contains(string(p), fork) && strings.Contains(string(p), `"forkOf":{"runId":"`+info.RunID+`","turn":2}`)
	})
	c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"event":"run_finished"`) && strings.Contains(string(p), fork)
	})
	for end := time.Now().Add(deadline); ; {
		c.mustCall("agentcanvas/listRuns", nil, &runs)
		if len(runs) == 2 && runs[0].Status != "running" || time.Now().After(end) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(runs) != 2 || runs[0].RunID != fork || runs[0].Status != "completed" || runs[0].ForkOf == nil || runs[0].ForkOf.RunID != info.RunID || runs[0].ForkOf.Turn != 2 {
		t.Errorf("listRuns after the fork: %+v", runs)
	}
	if _, err := c.call("agentcanvas/forkRun", map[string]any{"runId": info.RunID, "at": 99}); err == nil || err.Code != int(CodeRequestFailed) || !strings.Contains(err.Message, "there is no turn 99") {
		t.Errorf("forkRun at a turn that does not exist: %v", err)
	}
	if _, err := c.call("agentcanvas/forkRun", map[string]any{"runId": info.RunID, "at": 1, "set": []string{"agent.nobody.model=x"}}); err == nil || err.Code != int(CodeRequestFailed) || !strings.Contains(err.Message, `no agent "nobody"`) {
		t.Errorf("forkRun with an unknown agent: %v", err)
	}
	if _, err := c.call("agentcanvas/forkRun", map[string]any{"runId": info.RunID}); err == nil || err.Code != int(jsonrpc2.InvalidParams) {
		t.Errorf("forkRun without at: %v", err)
	}
	c.shutdownExit()
}
