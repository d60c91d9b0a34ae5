package proposal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// numbered is a text of n lines "line 1" … "line n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// setLine replaces line n (1-based) of s.
func setLine(s string, n int, text string) string {
	lines := strings.SplitAfter(s, "\n")
	lines[n-1] = text + "\n"
	return strings.Join(lines, "")
}

// worker prepares a sandbox of run/agent holding files, lets edit change its work/ folder and
// creates the proposal.
func worker(t *testing.T, ws, run, agent string, files []string, edit func(work string)) *Created {
	t.Helper()
	paths, err := sandbox.Prepare(context.Background(), sandbox.Options{Workspace: ws, RunID: run, AgentID: agent, Files: files, AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	edit(paths.WorkDir)
	c, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: run, AgentID: agent, Notes: agent + "'s change"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func putFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func agentRef(ws, run, agent string) string {
	return filepath.Join(ws, sandbox.Dir, run, agent, JSONFile)
}

// editLine is an edit of work/a.txt's line n.
func editLine(n int, text string) func(string) {
	return func(work string) {
		p := filepath.Join(work, "a.txt")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(setLine(string(b), n, text)), 0o644)
	}
}

// Collisions are named when a proposal is created, against every open proposal of the
// workspace (this run's and other runs'), and shown per hunk in the review.
func TestCollisionsAtCreate(t *testing.T) {
	ws := t.TempDir()
	putFile(t, filepath.Join(ws, "a.txt"), numbered(20))
	putFile(t, filepath.Join(ws, "b.txt"), "b\n")
	files := []string{"a.txt", "b.txt"}
	w1 := worker(t, ws, "r1", "w1", files, editLine(3, "w1 was here"))
	if len(w1.Collisions) != 0 {
		t.Fatalf("the first proposal collides: %+v", w1.Collisions)
	}
	same := worker(t, ws, "r1", "w2", files, editLine(3, "w2 was here"))
	adjacent := worker(t, ws, "r2", "w3", files, editLine(4, "w3 was here")) // another run
	apart := worker(t, ws, "r1", "w4", files, editLine(10, "w4 was here"))
	twin := worker(t, ws, "r1", "w5", files, editLine(3, "w1 was here")) // the same change as w1
	deletes := worker(t, ws, "r1", "w6", files, func(work string) { os.Remove(filepath.Join(work, "a.txt")) })
	check := func(name string, c *Created, want ...string) {
		t.Helper()
		var got []string
		for _, x := range c.Collisions {
			got = append(got, fmt.Sprintf("%s %s %s %s/%s %s", x.Path, x.Kind, x.Lines, x.OtherRunID, x.OtherAgentID, x.OtherLines))
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s collides with\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	check("same line", same, "a.txt lines line 3 r1/w1 line 3")
	check("adjacent", adjacent, "a.txt lines line 4 r1/w1 line 3", "a.txt lines line 4 r1/w2 line 3")
	check("apart", apart)
	check("twin", twin, "a.txt lines line 3 r1/w2 line 3", "a.txt lines line 3 r2/w3 line 4")
	check("deletes", deletes,
		"a.txt delete-edit lines 1–20 r1/w1 lines 1–20", "a.txt delete-edit lines 1–20 r1/w2 lines 1–20",
		"a.txt delete-edit lines 1–20 r2/w3 lines 1–20", "a.txt delete-edit lines 1–20 r1/w4 lines 1–20",
		"a.txt delete-edit lines 1–20 r1/w5 lines 1–20")
	if !strings.Contains(same.Collisions[0].Message, "Line 3 overlaps line 3 changed by w1 (run r1)") ||
		!strings.Contains(adjacent.Collisions[0].Message, "is next to") {
		t.Errorf("messages: %q, %q", same.Collisions[0].Message, adjacent.Collisions[0].Message)
	}

	// The event log names both agents and runs, the file and the ranges, one event per pair.
	evs, err := eventlog.ReadAll(ws, DefaultFlow)
	if err != nil {
		t.Fatal(err)
	}
	var conflicts []string
	for _, e := range evs {
		if e.Event == "proposal_conflict" {
			conflicts = append(conflicts, fmt.Sprintf("%s/%s %s/%s %s", e.RunID, str(e.Fields["agent"]), str(e.Fields["otherRunId"]), str(e.Fields["otherAgentId"]), str(e.Fields["path"])))
		}
	}
	if len(conflicts) != 1+2+2+5 || conflicts[0] != "r1/w2 r1/w1 a.txt" || !slices.Contains(conflicts, "r2/w3 r1/w1 a.txt") || !slices.Contains(conflicts, "r1/w6 r1/w4 a.txt") {
		t.Errorf("proposal_conflict events: %v", conflicts)
	}

	// The review of w1 (made first) now shows every later collision on its hunk; w4 says none.
	rv, err := GetReview(context.Background(), ws, agentRef(ws, "r1", "w1"), ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, c := range rv.Files[0].Hunks[0].Collisions {
		others = append(others, c.OtherAgentID)
		if c.Kind == CollideLines && c.Hunk != 1 {
			t.Errorf("collision %+v is not on hunk 1", c)
		}
	}
	if strings.Join(others, ",") != "w2,w3,w6" {
		t.Errorf("w1's hunk collides with %v (%+v)", others, rv.Files[0].Hunks[0].Collisions)
	}
	rv4, err := GetReview(context.Background(), ws, agentRef(ws, "r1", "w4"), ReviewOptions{})
	if err != nil || rv4.Collisions == nil || len(rv4.Collisions) != 1 || rv4.Collisions[0].OtherAgentID != "w6" {
		t.Errorf("w4's collisions: %+v %v", rv4.Collisions, err)
	}

	// List suggests an order: the proposals that collide least first.
	list, err := List(ws)
	if err != nil {
		t.Fatal(err)
	}
	order := map[string]int{}
	for _, s := range list {
		order[s.AgentID] = s.Order
	}
	if order["w4"] != 1 || order["w6"] != 6 {
		t.Errorf("suggested order %v", order)
	}
}

// str reads a string field of a logged event.
func str(v any) string {
	var s string
	if raw, ok := v.(json.RawMessage); ok && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return fmt.Sprint(v)
}

// Two workers edit one file: w1 line 3 (and inserts a line at the top, moving everything),
// w2 line 3 too and line 18. After w1 is applied, w2's line 18 still applies (re-based onto
// the moved lines) and its line 3 is a conflict with both sides, resolved per hunk.
func TestMergeAfterApply(t *testing.T) {
	ws := t.TempDir()
	orig := numbered(20)
	putFile(t, filepath.Join(ws, "a.txt"), orig)
	worker(t, ws, "r1", "w1", []string{"a.txt"}, func(work string) {
		putFile(t, filepath.Join(work, "a.txt"), "header\n"+setLine(orig, 3, "w1 line 3"))
	})
	worker(t, ws, "r1", "w2", []string{"a.txt"}, func(work string) {
		putFile(t, filepath.Join(work, "a.txt"), setLine(setLine(orig, 3, "w2 line 3"), 18, "w2 line 18"))
	})
	ctx := context.Background()
	if _, err := Apply(ctx, ws, agentRef(ws, "r1", "w1"), Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	afterW1 := readFile(t, filepath.Join(ws, "a.txt"))

	rv, err := GetReview(ctx, ws, agentRef(ws, "r1", "w2"), ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := rv.Files[0].Merge
	if rv.Applicable || m == nil || m.State != "conflicts" || len(m.Hunks) != 2 {
		t.Fatalf("review after w1: applicable %v, merge %+v", rv.Applicable, m)
	}
	h1, h2 := m.Hunks[0], m.Hunks[1]
	if !h1.Conflict || h1.Ours != "w1 line 3\n" || h1.Theirs != "w2 line 3\n" || h1.Base != "line 3\n" || h1.Start != 4 ||
		len(h1.From) != 1 || h1.From[0] != "w1 (run r1)" {
		t.Errorf("hunk 1: %+v", h1)
	}
	if h2.Conflict || h2.Start != 19 || h2.Ours != "line 18\n" || h2.Theirs != "w2 line 18\n" {
		t.Errorf("hunk 2: %+v", h2)
	}

	// Everything asked: refused, the conflict named, nothing written.
	_, err = Apply(ctx, ws, agentRef(ws, "r1", "w2"), Selection{}, ApplyOptions{})
	var ref *RefusedError
	if !errors.As(err, &ref) || !strings.Contains(ref.Error(), "hunk 1 of the merge: conflicts with the workspace's line 4 (resolve it") {
		t.Fatalf("apply with a conflict: %v", err)
	}
	if readFile(t, filepath.Join(ws, "a.txt")) != afterW1 {
		t.Fatal("a refused merge changed the workspace")
	}
	// A review made against another version of the file is refused.
	_, err = Apply(ctx, ws, agentRef(ws, "r1", "w2"), Selection{Merge: map[string][]int{"a.txt": {2}}, Against: map[string]string{"a.txt": blobOID([]byte(orig))}}, ApplyOptions{})
	if !errors.As(err, &ref) || !strings.Contains(err.Error(), "changed in the workspace since the review") {
		t.Fatalf("a stale review: %v", err)
	}
	// The patch's own hunk numbering is refused for a moved file.
	if _, err = Apply(ctx, ws, agentRef(ws, "r1", "w2"), Selection{Merge: map[string][]int{"a.txt": {2}}, Hunks: map[string][]int{"a.txt": {1}}}, ApplyOptions{}); err == nil {
		t.Fatal("patch hunks of a moved file were accepted")
	}

	// The clean hunk alone: w2's line 18 lands on line 19 of the moved file; line 4 stays w1's.
	res, err := Apply(ctx, ws, agentRef(ws, "r1", "w2"), Selection{Merge: map[string][]int{"a.txt": {2}}, Against: map[string]string{"a.txt": m.Workspace}}, ApplyOptions{DryRun: true})
	if err != nil || len(res.Merged) != 1 {
		t.Fatalf("check of the clean hunk: %v %+v", err, res)
	}
	want := setLine(afterW1, 19, "w2 line 18")
	for _, c := range []struct {
		name string
		take string
		text string
		want string
	}{
		{"mine", "mine", "", want},
		{"theirs", "theirs", "", setLine(want, 4, "w2 line 3")},
		{"both", "both", "", strings.Replace(want, "w1 line 3\n", "w1 line 3\nw2 line 3\n", 1)},
		{"edit", "edit", "line 3 by hand", setLine(want, 4, "line 3 by hand")},
		{"markers", "markers", "", strings.Replace(want, "w1 line 3\n", "<<<<<<< workspace\nw1 line 3\n=======\nw2 line 3\n>>>>>>> w2 (run r1)\n", 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			putFile(t, filepath.Join(ws, "a.txt"), afterW1)
			os.Remove(filepath.Join(ws, sandbox.Dir, "r1", "w2", StatusFile))
			sel := Selection{Merge: map[string][]int{"a.txt": {2}}, Resolve: []Resolution{{Path: "a.txt", Hunk: 1, Take: c.take, Text: c.text}}, Against: map[string]string{"a.txt": m.Workspace}}
			res, err := Apply(ctx, ws, agentRef(ws, "r1", "w2"), sel, ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(ws, "a.txt")); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			if len(res.Merged) != 1 || res.Ledger == "" {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// A clean re-base is applied by a plain apply (everything), saying it merged.
func TestCleanMergeAppliesWhole(t *testing.T) {
	ws := t.TempDir()
	orig := numbered(30)
	putFile(t, filepath.Join(ws, "a.txt"), orig)
	worker(t, ws, "r1", "w1", []string{"a.txt"}, func(work string) { putFile(t, filepath.Join(work, "a.txt"), "top\n"+setLine(orig, 5, "w1")) })
	worker(t, ws, "r1", "w2", []string{"a.txt"}, func(work string) { putFile(t, filepath.Join(work, "a.txt"), setLine(orig, 25, "w2")) })
	ctx := context.Background()
	for _, w := range []string{"w1", "w2"} {
		res, err := Apply(ctx, ws, agentRef(ws, "r1", w), Selection{}, ApplyOptions{})
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if w == "w2" && (len(res.Merged) != 1 || !strings.Contains(strings.Join(res.Warnings, " "), "merged with the workspace")) {
			t.Errorf("w2's result does not say it merged: %+v", res)
		}
	}
	if got, want := readFile(t, filepath.Join(ws, "a.txt")), "top\n"+setLine(setLine(orig, 5, "w1"), 25, "w2"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Applied already: the merge has nothing left, and says so rather than apply nothing.
	rv, err := GetReview(ctx, ws, agentRef(ws, "r1", "w2"), ReviewOptions{})
	if err != nil || rv.Applicable || rv.Files[0].Merge == nil || rv.Files[0].Merge.State != "applied" ||
		len(rv.Problems) != 1 || !strings.Contains(rv.Problems[0].Reason, "already has every change") {
		t.Errorf("review after the apply: %v %+v", err, rv)
	}
}

// One worker deletes a file the other edits: after the deletion, the edit is a whole-file
// conflict, resolved by mine (it stays deleted) or theirs (the edited file comes back).
func TestDeleteEditConflict(t *testing.T) {
	ws := t.TempDir()
	putFile(t, filepath.Join(ws, "b.txt"), numbered(5))
	worker(t, ws, "r1", "gone", []string{"b.txt"}, func(work string) { os.Remove(filepath.Join(work, "b.txt")) })
	edit := worker(t, ws, "r1", "edit", []string{"b.txt"}, func(work string) { putFile(t, filepath.Join(work, "b.txt"), setLine(numbered(5), 2, "edited")) })
	if len(edit.Collisions) != 1 || edit.Collisions[0].Kind != CollideEditDelete {
		t.Fatalf("collisions %+v", edit.Collisions)
	}
	ctx := context.Background()
	if _, err := Apply(ctx, ws, agentRef(ws, "r1", "gone"), Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	rv, err := GetReview(ctx, ws, agentRef(ws, "r1", "edit"), ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := rv.Files[0].Merge
	if m == nil || len(m.Hunks) != 1 || !m.Hunks[0].Whole || !strings.Contains(m.Hunks[0].Reason, "deleted since") {
		t.Fatalf("merge %+v", m)
	}
	if _, err := Apply(ctx, ws, agentRef(ws, "r1", "edit"), Selection{Resolve: []Resolution{{Path: "b.txt", Hunk: 1, Take: "both"}}}, ApplyOptions{}); err == nil {
		t.Fatal("both was accepted for a whole-file conflict")
	}
	if _, err := Apply(ctx, ws, agentRef(ws, "r1", "edit"), Selection{Resolve: []Resolution{{Path: "b.txt", Hunk: 1, Take: "theirs"}}}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(ws, "b.txt")); got != setLine(numbered(5), 2, "edited") {
		t.Errorf("b.txt: %q", got)
	}
}
