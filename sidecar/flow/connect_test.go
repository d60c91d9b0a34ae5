package flow_test

// The edits the canvas sends when an edge is drawn (extension/webview/src/connect.ts):
// addInteraction with the pattern's default termination and params, addEdge into an existing
// interaction, and set on an edge's source or target to reconnect it. No new operation was
// needed; these tests hold the existing ones to what drawing relies on: text edits that only
// insert (or, for a reconnect, change one line), every original line and comment kept, and a
// result the validator does not call unbounded.

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// apply runs ops through the public API and returns the edits and the new text.
func apply(t *testing.T, src string, ops ...flow.Op) ([]span.TextEdit, string) {
	t.Helper()
	edits, err := flow.Edit([]byte(src), "t.yaml", ops)
	if err != nil {
		t.Fatalf("Edit: %v", err)
	}
	out, err := span.Apply([]byte(src), edits)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return edits, string(out)
}

// keepsEveryLine checks that every line of src is in out, in order.
func keepsEveryLine(t *testing.T, src, out string) {
	t.Helper()
	rest := out
	for _, line := range strings.Split(src, "\n") {
		i := strings.Index(rest, line)
		if i < 0 {
			t.Fatalf("line %q is gone or out of order:\n%s", line, out)
		}
		rest = rest[i+len(line):]
	}
}

func alphaSrc(t *testing.T) string {
	b, err := os.ReadFile("testdata/team-alpha.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A third agent with no interaction, to connect.
	return strings.Replace(string(b), "\ninteractions:", "  - id: a3\n    role: reviewer   # not connected yet\n\ninteractions:", 1)
}

func TestDrawnEdgeIntoAnInteractionOnlyInserts(t *testing.T) {
	src := alphaSrc(t)
	edits, out := apply(t, src, flow.Op{Op: "addEdge", InteractionID: "i1", Edge: mustJSON(t, map[string]any{
		"source": "a1", "target": "a3",
		"data": map[string]any{"termination": map[string]any{"type": "max_rounds", "rounds": 2}, "params": map[string]any{"task_template": "Implement feature X"}},
	})})
	for _, e := range edits {
		if e.Range.Start != e.Range.End {
			t.Errorf("an edit replaces text: %+v", e)
		}
	}
	keepsEveryLine(t, src, out)
	f := flow.Parse("t.yaml", []byte(out))
	if got := f.Interactions[0].Edges; len(got) != 2 || got[1].ID != "i1-e2" || got[1].Target != "a3" {
		t.Fatalf("edges = %+v\n%s", got, out)
	}
	for _, d := range validate.Flow(f, validate.Workspace{}) {
		t.Errorf("diagnostic: %s %s", d.Code, d.Message)
	}
}

func TestReconnectIsOneLine(t *testing.T) {
	src := alphaSrc(t)
	edits, out := apply(t, src, flow.Op{Op: "set", Path: "/interactions/0/edges/0/target", Value: mustJSON(t, "a3")})
	// Line-granular: the one edit replaces the target's line, from its start to the next line's.
	if len(edits) != 1 || edits[0].Range.End.Line-edits[0].Range.Start.Line != 1 || strings.Count(edits[0].NewText, "\n") != 1 {
		t.Fatalf("edits = %+v", edits)
	}
	if want := strings.Replace(src, `target: "a2"`, `target: "a3"`, 1); out != want {
		t.Fatalf("got:\n%s", out)
	}
}

// Every pattern: a new interaction as the canvas draws it (the pattern's default termination
// and default params, as listPatterns gives them) leaves no termination, timeout, rate-limit
// or retention problem. Only missing-role may remain: one edge rarely fills a pattern's roles,
// and the validator says which nodes to add.
func TestDrawnInteractionOfEveryPatternIsBounded(t *testing.T) {
	src := alphaSrc(t)
	for _, id := range pattern.CanonicalIDs {
		p, ok := pattern.Lookup(id)
		if !ok {
			t.Fatalf("no pattern %s", id)
		}
		data := map[string]any{"termination": p.DefaultTermination}
		if len(p.DefaultParams) > 0 {
			data["params"] = p.DefaultParams
		}
		op := flow.Op{Op: "addInteraction", Interaction: mustJSON(t, map[string]any{
			"patternId": id,
			"edges":     []any{map[string]any{"source": "a2", "target": "a3", "data": data}},
		})}
		edits, out := apply(t, src, op)
		for _, e := range edits {
			if e.Range.Start != e.Range.End {
				t.Errorf("%s: an edit replaces text: %+v", id, e)
			}
		}
		keepsEveryLine(t, src, out)
		f := flow.Parse("t.yaml", []byte(out))
		if len(f.Interactions) != 2 || f.Interactions[1].ID != "i2" || f.Interactions[1].PatternID != id {
			t.Fatalf("%s: interactions:\n%s", id, out)
		}
		for _, d := range validate.Flow(f, validate.Workspace{}) {
			if d.Code != validate.CodeMissingRole {
				t.Errorf("%s: %s at %s: %s\n%s", id, d.Code, d.Path, d.Message, out)
			}
		}
	}
}
