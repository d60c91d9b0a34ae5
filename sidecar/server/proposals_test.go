package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sandbox → proposal → review → apply → logs path, on the real binary and real files.
func TestProposalsOnTheBinary(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	orig := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startBinary(t)
	c.initialize(root)
	c.waitNote("agentcanvas/status", nil)

	var paths struct{ AgentDir, InputDir, WorkDir, ProposalDir string }
	c.mustCall("agentcanvas/prepareSandbox", map[string]any{"runId": "r1", "agentId": "w1", "files": []string{"src/a.txt"}}, &paths)
	if paths.WorkDir == "" {
		t.Fatalf("prepareSandbox: %+v", paths)
	}
	c.waitNote("$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"kind":"end"`) })
	// The agent edits two far-apart lines (two hunks) and adds a file.
	edited := strings.Replace(strings.Replace(orig, "line 2\n", "line B\n", 1), "line 25\n", "line Y\n", 1)
	if err := os.WriteFile(filepath.Join(paths.WorkDir, "src", "a.txt"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(paths.WorkDir, "src", "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var prop struct {
		RunID, AgentID string
		ChangedFiles   []struct{ Path, Status string }
	}
	c.mustCall("agentcanvas/createProposal", map[string]any{"runId": "r1", "agentId": "w1", "notes": "two edits"}, &prop)
	if len(prop.ChangedFiles) != 2 {
		t.Fatalf("createProposal: %+v", prop)
	}
	defer func() {
		if t.Failed() {
			c.mu.Lock()
			for _, m := range c.log {
				t.Logf("%s %s", m.Method, m.Params)
			}
			c.mu.Unlock()
		}
	}()
	c.waitNote("agentcanvas/proposalChanged", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"runId":"r1","agentId":"w1","exists":true`)
	})
	var list []struct{ RunID, AgentID, State string }
	c.mustCall("agentcanvas/listProposals", map[string]any{"runId": "r1"}, &list)
	if len(list) != 1 || list[0].State != "pending" {
		t.Fatalf("listProposals: %+v", list)
	}
	var review struct {
		Applicable bool
		Files      []struct {
			Path  string
			Hunks []struct{ Index int }
		}
	}
	c.mustCall("agentcanvas/getProposal", map[string]any{"runId": "r1", "agentId": "w1"}, &review)
	var aHunks int
	for _, f := range review.Files {
		if f.Path == "src/a.txt" {
			aHunks = len(f.Hunks)
		}
	}
	if !review.Applicable || aHunks != 2 {
		t.Fatalf("getProposal: %+v", review)
	}
	var res struct{ Applied, DryRun bool }
	c.mustCall("agentcanvas/applyProposal", map[string]any{"runId": "r1", "agentId": "w1", "check": true}, &res)
	if res.Applied || !res.DryRun {
		t.Fatalf("check: %+v", res)
	}
	if got, _ := os.ReadFile(filepath.Join(src, "a.txt")); string(got) != orig {
		t.Fatal("check changed the workspace")
	}
	// Apply only the first hunk of a.txt (not new.txt).
	c.mustCall("agentcanvas/applyProposal", map[string]any{"runId": "r1", "agentId": "w1", "hunks": []any{map[string]any{"file": "src/a.txt", "index": 1}}}, &res)
	got, _ := os.ReadFile(filepath.Join(src, "a.txt"))
	if !res.Applied || !strings.Contains(string(got), "line B\n") || strings.Contains(string(got), "line Y\n") {
		t.Fatalf("apply of hunk 1: %+v\n%s", res, got)
	}
	if _, err := os.Stat(filepath.Join(src, "new.txt")); err == nil {
		t.Error("an unselected file was applied")
	}
	// Applying the same hunk again conflicts: refused, workspace unchanged.
	_, rerr := c.call("agentcanvas/applyProposal", map[string]any{"runId": "r1", "agentId": "w1", "hunks": []any{map[string]any{"file": "src/a.txt", "index": 1}}})
	var data struct {
		Problems []struct{ Path, Reason string }
	}
	if rerr == nil || rerr.Code != int(CodeRequestFailed) || json.Unmarshal(rerr.Data, &data) != nil || len(data.Problems) == 0 || data.Problems[0].Path != "src/a.txt" {
		t.Errorf("re-applying: %v (data %s)", rerr, rerr.Data)
	}
	if again, _ := os.ReadFile(filepath.Join(src, "a.txt")); string(again) != string(got) {
		t.Error("a refused apply changed the workspace")
	}
	// Applied (its first hunk), it is not rejected until that apply is reverted.
	if _, err := c.call("agentcanvas/rejectProposal", map[string]any{"runId": "r1", "agentId": "w1", "reason": "enough"}); err == nil || !strings.Contains(err.Message, "revert it first") {
		t.Errorf("reject of an applied proposal: %v", err)
	}
	c.mustCall("agentcanvas/revertProposal", map[string]any{"runId": "r1", "agentId": "w1"}, &res)
	c.mustCall("agentcanvas/rejectProposal", map[string]any{"runId": "r1", "agentId": "w1", "reason": "enough"}, nil)
	if _, err := c.call("agentcanvas/getProposal", map[string]any{"runId": "../x", "agentId": "w1"}); err == nil || err.Code != -32602 {
		t.Errorf("a run id with ..: %v", err)
	}
	// The proposal package logged to the default flow's log.
	var logs queryLogsResult
	c.mustCall("agentcanvas/queryLogs", map[string]any{"flow": "adhoc", "runId": "r1"}, &logs)
	var kinds []string
	for _, e := range logs.Events {
		kinds = append(kinds, e.Event)
	}
	if !contains(kinds, "proposal_created") || !contains(kinds, "proposal_rejected") {
		t.Errorf("queryLogs events: %v", kinds)
	}
	c.mustCall("agentcanvas/queryLogs", map[string]any{"flow": "adhoc", "limit": 1}, &logs)
	if len(logs.Events) != 1 || !logs.Truncated {
		t.Errorf("queryLogs limit 1: %d events, truncated %v", len(logs.Events), logs.Truncated)
	}
	if _, err := c.call("agentcanvas/queryLogs", map[string]any{"flow": "../etc"}); err == nil || err.Code != -32602 {
		t.Errorf("queryLogs with a bad flow name: %v", err)
	}
	c.shutdownExit()
}
