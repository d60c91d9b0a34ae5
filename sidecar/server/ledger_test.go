package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two workers' proposals on one file, over JSON-RPC on the real binary: the collision in
// getProposal and listProposals before any apply; after the first apply, the second's merge
// with its conflict, resolved per hunk by applyProposal; where each line came from
// (lineOrigins, with the editor's unsaved text); and the first apply reverted.
func TestConflictsMergeAndRevertOnTheBinary(t *testing.T) {
	root := t.TempDir()
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	orig := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startBinary(t)
	c.initialize(root)
	c.waitNote("agentcanvas/status", nil)
	propose := func(agent, edited string) {
		var paths struct{ WorkDir string }
		c.mustCall("agentcanvas/prepareSandbox", map[string]any{"runId": "r1", "agentId": agent, "files": []string{"a.txt"}}, &paths)
		if err := os.WriteFile(filepath.Join(paths.WorkDir, "a.txt"), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		c.mustCall("agentcanvas/createProposal", map[string]any{"runId": "r1", "agentId": agent}, nil)
	}
	propose("w1", strings.Replace(orig, "line 3\n", "w1 three\n", 1))
	propose("w2", strings.Replace(strings.Replace(orig, "line 3\n", "w2 three\n", 1), "line 17\n", "w2 seventeen\n", 1))

	type hunk struct {
		Index      int
		Collisions []struct{ OtherAgentID string }
	}
	var rv struct {
		Applicable bool
		Collisions []struct {
			OtherAgentID string
			Lines        struct{ Start, Count int }
		}
		Files []struct {
			Path  string
			Hunks []hunk
			Merge *struct {
				Workspace string
				State     string
				Hunks     []struct {
					Index    int
					Conflict bool
					Ours     string
					Theirs   string
					From     []string
				}
			}
		}
	}
	c.mustCall("agentcanvas/getProposal", map[string]any{"runId": "r1", "agentId": "w1"}, &rv)
	if !rv.Applicable || len(rv.Collisions) != 1 || rv.Collisions[0].OtherAgentID != "w2" || rv.Collisions[0].Lines.Start != 3 ||
		len(rv.Files[0].Hunks[0].Collisions) != 1 || rv.Files[0].Merge != nil {
		t.Fatalf("getProposal w1 before any apply: %+v", rv)
	}
	var list []struct {
		AgentID   string
		Order     int
		Conflicts []struct{ AgentID string }
	}
	c.mustCall("agentcanvas/listProposals", map[string]any{}, &list)
	if len(list) != 2 || len(list[0].Conflicts) != 1 || list[0].Order == 0 {
		t.Fatalf("listProposals: %+v", list)
	}

	c.mustCall("agentcanvas/applyProposal", map[string]any{"runId": "r1", "agentId": "w1"}, nil)
	rv.Files = nil
	c.mustCall("agentcanvas/getProposal", map[string]any{"runId": "r1", "agentId": "w2"}, &rv)
	m := rv.Files[0].Merge
	if rv.Applicable || m == nil || m.State != "conflicts" || len(m.Hunks) != 2 || !m.Hunks[0].Conflict || m.Hunks[0].Ours != "w1 three\n" ||
		m.Hunks[0].Theirs != "w2 three\n" || len(m.Hunks[0].From) != 1 || m.Hunks[0].From[0] != "w1 (run r1)" || m.Hunks[1].Conflict {
		t.Fatalf("getProposal w2 after w1's apply: %+v (merge %+v)", rv, m)
	}
	// Applying everything is refused with the conflict named; per hunk it goes.
	_, rerr := c.call("agentcanvas/applyProposal", map[string]any{"runId": "r1", "agentId": "w2"})
	if rerr == nil || rerr.Code != int(CodeRequestFailed) || !strings.Contains(rerr.Message, "hunk 1 of the merge: conflicts") {
		t.Fatalf("apply with a conflict: %v", rerr)
	}
	var res struct {
		Applied bool
		Merged  []string
		Ledger  string
	}
	c.mustCall("agentcanvas/applyProposal", map[string]any{"runId": "r1", "agentId": "w2",
		"merge":   []any{map[string]any{"file": "a.txt", "index": 2}},
		"resolve": []any{map[string]any{"file": "a.txt", "index": 1, "take": "edit", "text": "both threes"}},
		"against": map[string]any{"a.txt": m.Workspace}}, &res)
	got, _ := os.ReadFile(filepath.Join(root, "a.txt"))
	want := strings.Replace(strings.Replace(orig, "line 3\n", "both threes\n", 1), "line 17\n", "w2 seventeen\n", 1)
	if !res.Applied || len(res.Merged) != 1 || res.Ledger == "" || string(got) != want {
		t.Fatalf("apply with a resolution: %+v\n%s", res, got)
	}

	// Where the lines came from, in the editor's unsaved text (one line typed at the top).
	text := "typed\n" + string(got)
	var origins struct {
		Origins []struct {
			Start, Count int
			AgentID      string
		}
	}
	c.mustCall("agentcanvas/lineOrigins", map[string]any{"uri": pathURI(filepath.Join(root, "a.txt")), "text": text}, &origins)
	if len(origins.Origins) != 2 || origins.Origins[0].Start != 4 || origins.Origins[0].AgentID != "w2" || origins.Origins[1].Start != 18 {
		t.Fatalf("lineOrigins: %+v", origins)
	}
	if _, err := c.call("agentcanvas/lineOrigins", map[string]any{"uri": pathURI("/etc/passwd")}); err == nil || err.Code != -32602 {
		t.Errorf("lineOrigins outside the workspace: %v", err)
	}

	// Revert w2 (its latest apply): its lines go, w1's... were replaced by the resolution, so
	// the file is as w1 left it.
	c.mustCall("agentcanvas/revertProposal", map[string]any{"runId": "r1", "agentId": "w2", "check": true}, &res)
	if res.Applied {
		t.Fatal("a revert check applied")
	}
	c.mustCall("agentcanvas/revertProposal", map[string]any{"runId": "r1", "agentId": "w2"}, &res)
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != strings.Replace(orig, "line 3\n", "w1 three\n", 1) {
		t.Errorf("after the revert:\n%s", got)
	}
	if _, err := c.call("agentcanvas/revertProposal", map[string]any{"runId": "r1", "agentId": "w2"}); err == nil {
		t.Error("a second revert of the same apply was accepted")
	}
}
