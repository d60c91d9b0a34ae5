package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// conflictAgent is every node of the conflict tests: the manager assigns each worker its part
// and accepts; each worker runs its own edit (EDITS: a case on the agent's id, written into the
// script, since a confined worker reads no test folder) in its sandbox and hands off.
const conflictAgent = `set -u
edit() {
	case "$AGENTCANVAS_AGENT_ID" in
EDITS
	esac
}
prompt=$(cat)
case "$AGENTCANVAS_ROLE" in
manager)
	if grep -q "Review your team" <<<"$prompt"; then echo "ACCEPT all"; echo "METRIC: tests_passed=1"
	else grep -o 'Team: .*' <<<"$prompt" | head -1 | sed 's/^Team: //' | tr ',' '\n' |
		while read -r m; do [ -n "$m" ] && echo "ASSIGN $m: edit a.txt"; done; fi ;;
*)
	(edit) || exit 1
	cat <<EOH
Edited a.txt.
HANDOFF
Context:        conflict test
Goal:           $AGENTCANVAS_AGENT_ID's edit of a.txt
DoD:            a.txt edited
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/$AGENTCANVAS_AGENT_ID/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/$AGENTCANVAS_AGENT_ID/proposal/proposal.json
ChangedFiles:
  - a.txt
Tests:
  - (none)
Next:
  - review
EOH
	;;
esac
`

// twenty is a.txt before the run.
func twenty() string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// sedLines is a worker edit replacing each given line of a.txt with "<id> <line>".
func sedLines(lines ...int) string {
	var s []string
	for _, n := range lines {
		s = append(s, fmt.Sprintf(`sed -i '%ds/.*/'"$AGENTCANVAS_AGENT_ID"' %d/' a.txt`, n, n))
	}
	return strings.Join(s, "\n")
}

// conflictRun runs a manager_worker flow whose workers make the given edits (by worker
// number, from 1), each a real process, and returns the workspace, the run id and its sink.
func conflictRun(t *testing.T, edits ...string) (string, string, *recorder) {
	t.Helper()
	ws := gitWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(twenty()), 0o644); err != nil {
		t.Fatal(err)
	}
	var cases strings.Builder
	for i, e := range edits {
		fmt.Fprintf(&cases, "\tworker_%d)\n%s\n\t;;\n", i+1, e)
	}
	agent := script(t, t.TempDir(), "agent.sh", strings.Replace(conflictAgent, "EDITS\n", cases.String(), 1))
	rt := map[string]any{"kind": "cli", "backendId": "command", "command": []string{"bash", agent}}
	f := patternFlow(t, ws, "conflicts", flowSpec{pattern: "manager_worker", counts: map[string]int{"worker": len(edits)}, runtime: rt, description: "edit a.txt", files: []string{"a.txt"}})
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted || len(out.Proposals) != len(edits) {
		t.Fatalf("outcome %+v", out)
	}
	return ws, out.RunID, rec
}

// pairs names the colliding pairs of the run's proposal_conflict events, "a/b path kind",
// sorted (the workers run in parallel, so which of two proposals came second varies).
func pairs(t *testing.T, evs []eventlog.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Event != "proposal_conflict" {
			continue
		}
		a, b := fieldString(e, "agent"), fieldString(e, "otherAgentId")
		if a > b {
			a, b = b, a
		}
		out = append(out, a+"/"+b+" "+fieldString(e, "path"))
	}
	sort.Strings(out)
	return out
}

func fieldString(e eventlog.Event, k string) string {
	switch v := e.Fields[k].(type) {
	case string:
		return v
	case json.RawMessage:
		var s string
		json.Unmarshal(v, &s)
		return s
	}
	return fmt.Sprint(e.Fields[k])
}

func proposalRef(ws, run, agent string) string {
	return filepath.Join(ws, sandbox.Dir, run, agent, proposal.JSONFile)
}

func review(t *testing.T, ws, run, agent string) *proposal.Review {
	t.Helper()
	rv, err := proposal.GetReview(context.Background(), ws, proposalRef(ws, run, agent), proposal.ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

// Workers of one run editing one file: the collisions are named (in the log, to the sink, in
// each review) before anything is applied, for two and three workers on the same line,
// adjacent lines, different lines, and a deletion against an edit.
func TestConflictsNamedBeforeApply(t *testing.T) {
	for _, c := range []struct {
		name  string
		edits []string
		want  []string
	}{
		{"two, the same line", []string{sedLines(3), sedLines(3, 15)}, []string{"worker_1/worker_2 a.txt"}},
		{"two, adjacent lines", []string{sedLines(3), sedLines(4, 15)}, []string{"worker_1/worker_2 a.txt"}},
		{"two, different lines", []string{sedLines(3), sedLines(8)}, nil},
		{"two, one deletes the file the other edits", []string{"rm a.txt", sedLines(3)}, []string{"worker_1/worker_2 a.txt"}},
		{"three, the same line", []string{sedLines(3), sedLines(3), sedLines(3)}, []string{"worker_1/worker_2 a.txt", "worker_1/worker_3 a.txt", "worker_2/worker_3 a.txt"}},
		{"three, adjacent lines", []string{sedLines(3), sedLines(4), sedLines(5)}, []string{"worker_1/worker_2 a.txt", "worker_2/worker_3 a.txt"}},
		{"three, different lines", []string{sedLines(3), sedLines(8), sedLines(13)}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, run, rec := conflictRun(t, c.edits...)
			if got := pairs(t, events(t, ws, "conflicts")); strings.Join(got, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("logged proposal_conflict: %v, want %v", got, c.want)
			}
			if got := pairs(t, rec.events("proposal_conflict")); strings.Join(got, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("the sink heard proposal_conflict: %v, want %v", got, c.want)
			}
			for _, e := range rec.events("proposal_conflict") {
				if e.InteractionID == "" || fieldString(e, "otherRunId") != run || !strings.Contains(fieldString(e, "message"), "a.txt: ") {
					t.Errorf("event %+v", e)
				}
			}
			// Each review names, per hunk, the workers it collides with; none says so.
			for i := range c.edits {
				me := fmt.Sprintf("worker_%d", i+1)
				rv := review(t, ws, run, me)
				var others []string
				for _, col := range rv.Collisions {
					others = append(others, col.OtherAgentID)
				}
				sort.Strings(others)
				var want []string
				for _, p := range c.want {
					ab := strings.SplitN(strings.Fields(p)[0], "/", 2)
					if ab[0] == me {
						want = append(want, ab[1])
					} else if ab[1] == me {
						want = append(want, ab[0])
					}
				}
				if rv.Collisions == nil || strings.Join(others, ",") != strings.Join(want, ",") {
					t.Errorf("%s's review collides with %v, want %v", me, others, want)
				}
				for _, col := range rv.Collisions {
					if col.Kind == proposal.CollideLines && col.Hunk == 0 {
						t.Errorf("%s: a line collision on no hunk: %+v", me, col)
					}
				}
				if !rv.Applicable {
					t.Errorf("%s is not applicable before any apply: %+v", me, rv.Problems)
				}
			}
		})
	}
}

// After the first worker's proposal is applied, the second's other hunk still applies (on the
// workspace as it is now) and its overlapping hunk is offered as a conflict with both sides.
func TestConflictOfferedAfterFirstApply(t *testing.T) {
	for _, c := range []struct {
		name     string
		edits    []string
		conflict string // the workspace's side of the conflicting hunk
		theirs   string // worker_2's side
		region   string // lines 3 and 4 once the conflict is resolved with theirs
	}{
		{"the same line", []string{sedLines(3), sedLines(3, 15)}, "worker_1 3\n", "worker_2 3\n", "worker_2 3\nline 4\n"},
		// theirs is the whole region as worker_2 left it: worker_1's line 3 goes back
		{"adjacent lines", []string{sedLines(3), sedLines(4, 15)}, "worker_1 3\nline 4\n", "line 3\nworker_2 4\n", "line 3\nworker_2 4\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, run, _ := conflictRun(t, c.edits...)
			ctx := context.Background()
			if _, err := proposal.Apply(ctx, ws, proposalRef(ws, run, "worker_1"), proposal.Selection{}, proposal.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			rv := review(t, ws, run, "worker_2")
			m := rv.Files[0].Merge
			if rv.Applicable || m == nil || len(m.Hunks) != 2 {
				t.Fatalf("worker_2 after worker_1's apply: applicable %v, merge %+v", rv.Applicable, m)
			}
			if h := m.Hunks[0]; !h.Conflict || h.Ours != c.conflict || h.Theirs != c.theirs || len(h.From) != 1 || h.From[0] != "worker_1 (run "+run+")" {
				t.Errorf("the conflict: %+v", h)
			}
			if h := m.Hunks[1]; h.Conflict || h.Theirs != "worker_2 15\n" {
				t.Errorf("the clean hunk: %+v", h)
			}
			// The clean hunk applies; the conflict is resolved by the person, hunk by hunk.
			sel := proposal.Selection{Merge: map[string][]int{"a.txt": {2}}, Resolve: []proposal.Resolution{{Path: "a.txt", Hunk: 1, Take: "theirs"}}, Against: map[string]string{"a.txt": m.Workspace}}
			res, err := proposal.Apply(ctx, ws, proposalRef(ws, run, "worker_2"), sel, proposal.ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
			want := strings.Replace(twenty(), "line 15\n", "worker_2 15\n", 1)
			want = strings.Replace(want, "line 3\nline 4\n", c.region, 1)
			if string(got) != want || res.Ledger == "" {
				t.Errorf("a.txt:\n%s\nwant\n%s", got, want)
			}
			// The ledger says which worker wrote which lines.
			origins, err := proposal.LineOrigins(ws, "a.txt", nil)
			if err != nil || len(origins) == 0 || origins[len(origins)-1].AgentID != "worker_2" || origins[len(origins)-1].Origin == nil ||
				origins[len(origins)-1].Origin.InteractionID == "" || origins[len(origins)-1].Origin.Backend != "command" {
				t.Errorf("origins %+v %v", origins, err)
			}
		})
	}
}

// Three workers on different lines: applied one after another in the suggested order (each
// re-based on the last without a conflict), then the second reverted: its line goes back, the
// others stay, byte for byte.
func TestThreeWorkersAppliedInOrderThenOneReverted(t *testing.T) {
	ws, run, _ := conflictRun(t, sedLines(3), sedLines(8), sedLines(13))
	ctx := context.Background()
	list, err := proposal.List(ws)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Order < list[j].Order })
	for _, s := range list {
		if len(s.Conflicts) != 0 || s.Order == 0 {
			t.Errorf("%s: conflicts %v, order %d", s.AgentID, s.Conflicts, s.Order)
		}
		if _, err := proposal.Apply(ctx, ws, filepath.Join(ws, filepath.FromSlash(s.ProposalFile)), proposal.Selection{}, proposal.ApplyOptions{}); err != nil {
			t.Fatalf("%s: %v", s.AgentID, err)
		}
	}
	all := twenty()
	for _, n := range []int{3, 8, 13} {
		all = strings.Replace(all, fmt.Sprintf("line %d\n", n), fmt.Sprintf("worker_%d %d\n", (n+2)/5, n), 1)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(got) != all {
		t.Fatalf("after three applies:\n%s\nwant\n%s", got, all)
	}
	if _, err := proposal.Revert(ctx, ws, filepath.Join(ws, sandbox.Dir, run, "worker_2"), proposal.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(all, "worker_2 8\n", "line 8\n", 1)
	if got, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(got) != want {
		t.Errorf("after reverting worker_2:\n%s\nwant\n%s", got, want)
	}
}
