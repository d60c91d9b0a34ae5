package flow

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// edit applies ops through the public API (edits, then span.Apply) and checks the result
// parses cleanly.
func edit(t *testing.T, src string, ops ...Op) string {
	t.Helper()
	edits, err := Edit([]byte(src), "t.yaml", ops)
	if err != nil {
		t.Fatalf("Edit: %v", err)
	}
	out, err := span.Apply([]byte(src), edits)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	f := Parse("t.yaml", out)
	for _, p := range f.Problems {
		t.Errorf("result has a problem: %v\n%s", p, out)
	}
	return string(out)
}

func alpha(t *testing.T) string {
	b, err := os.ReadFile("testdata/team-alpha.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEditNoOpsIsIdentity(t *testing.T) {
	src := alpha(t)
	edits, err := Edit([]byte(src), "t.yaml", nil)
	if err != nil || len(edits) != 0 {
		t.Fatalf("edits = %v, %v", edits, err)
	}
}

func TestEditSetScalarKeepsQuotesAndComment(t *testing.T) {
	src := alpha(t)
	out := edit(t, src, Op{Op: "set", Path: "/agents/0/name", Value: raw("Boss")})
	want := strings.Replace(src, `name: "Planner"   # plans the work`, `name: "Boss"   # plans the work`, 1)
	if out != want {
		t.Fatalf("got:\n%s", out)
	}
	edits, _ := Edit([]byte(src), "t.yaml", []Op{{Op: "set", Path: "/agents/0/name", Value: raw("Boss")}})
	if len(edits) != 1 || edits[0].Range.Start.Line != 11 || edits[0].Range.End.Line != 12 {
		t.Errorf("edit not minimal: %+v", edits)
	}
}

func TestEditSetInsideFlowMapping(t *testing.T) {
	src := alpha(t)
	out := edit(t, src, Op{Op: "set", Path: "/agents/1/runtime/backendId", Value: raw("dry-run")})
	if !strings.Contains(out, "runtime: {kind: cli, backendId: dry-run, cwdMode: agentHome, env: [OPENAI_API_KEY]}") {
		t.Fatalf("got:\n%s", out)
	}
}

func TestEditSetNewNestedKey(t *testing.T) {
	src := alpha(t)
	out := edit(t, src, Op{Op: "set", Path: "/interactions/0/edges/0/data/params/timeout_ms", Value: raw(600000)})
	if !strings.Contains(out, "          params:\n            task_template: \"Implement feature X\"\n            timeout_ms: 600000\n          observability:") {
		t.Fatalf("got:\n%s", out)
	}
	f := Parse("t.yaml", []byte(out))
	if f.Interactions[0].Edges[0].Data.Params["timeout_ms"] != 600000 {
		t.Errorf("params = %v", f.Interactions[0].Edges[0].Data.Params)
	}
}

func TestEditSetBlockValue(t *testing.T) {
	src := alpha(t)
	term := json.RawMessage(`{"any":[{"type":"max_rounds","rounds":3},{"type":"timeout_ms","ms":600000}]}`)
	out := edit(t, src, Op{Op: "set", Path: "/interactions/0/edges/0/data/termination", Value: term})
	if !strings.Contains(out, "          termination:\n            any:\n              - {type: max_rounds, rounds: 3}\n              - {type: timeout_ms, ms: 600000}\n          params:") {
		t.Fatalf("got:\n%s", out)
	}
	f := Parse("t.yaml", []byte(out))
	tm := f.Interactions[0].Edges[0].Data.Termination
	if len(tm.Any) != 2 || *tm.Any[1].Ms != 600000 {
		t.Errorf("termination = %+v", tm)
	}
	// And back to a scalar-only mapping.
	out2 := edit(t, out, Op{Op: "set", Path: "/interactions/0/edges/0/data/termination", Value: json.RawMessage(`{"type":"judge_decision"}`)})
	if !strings.Contains(out2, "          termination: {type: judge_decision}\n          params:") {
		t.Fatalf("got:\n%s", out2)
	}
}

func TestEditDeleteKey(t *testing.T) {
	src := alpha(t)
	out := edit(t, src, Op{Op: "set", Path: "/agents/0/mcp", Value: json.RawMessage("null")})
	if strings.Contains(out, "jira") || !strings.Contains(out, `skills: ["requirements_refine"]`) {
		t.Fatalf("got:\n%s", out)
	}
	// Deleting the first key of a list item keeps the dash.
	out = edit(t, src, Op{Op: "set", Path: "/agents/0/id", Value: json.RawMessage("null")})
	if !strings.Contains(out, "agents:\n  - name: \"Planner\"   # plans the work\n    role: orchestrator") {
		t.Fatalf("got:\n%s", out)
	}
}

func TestEditAddAgentWithPosition(t *testing.T) {
	src := alpha(t)
	out := edit(t, src, Op{Op: "addAgent", Agent: json.RawMessage(`{"name":"Tester","role":"worker","files":["test/a.test.ts"]}`), Position: &Point{X: 100.4, Y: 250}})
	if !strings.Contains(out, "      Keep the tests green.\n  - id: a3\n    name: Tester\n    role: worker\n    files: [test/a.test.ts]\n") {
		t.Fatalf("got:\n%s", out)
	}
	if !strings.Contains(out, "layout:\n  nodes:\n    a3: {x: 100, y: 250}\n  edges: {}\n") {
		t.Fatalf("layout:\n%s", out)
	}
	if !strings.HasPrefix(out, "# A manager with one coder") {
		t.Error("leading comment lost")
	}
}

func TestEditAddAgentIDTaken(t *testing.T) {
	_, err := Edit([]byte(alpha(t)), "t.yaml", []Op{{Op: "addAgent", Agent: json.RawMessage(`{"id":"a1"}`)}})
	var oe *OpError
	if err == nil || !strings.Contains(err.Error(), `"a1" is already used`) || !asOpError(err, &oe) || oe.Index != 0 {
		t.Fatalf("err = %v", err)
	}
}

func asOpError(err error, target **OpError) bool {
	e, ok := err.(*OpError)
	if ok {
		*target = e
	}
	return ok
}

func TestEditAddEdgeAndInteraction(t *testing.T) {
	src := alpha(t)
	out := edit(t, src,
		Op{Op: "addSystemNode", Node: json.RawMessage(`{"type":"judge","name":"Judge"}`)},
		Op{Op: "addInteraction", Interaction: json.RawMessage(`{"patternId":"debate_judge","edges":[{"source":"a1","target":"judge1","data":{"topology":"debate_judge","termination":{"type":"judge_decision"},"params":{"timeout_ms":600000}}}]}`)},
		Op{Op: "addEdge", InteractionID: "i1", Edge: json.RawMessage(`{"source":"a2","target":"a1","data":{"termination":{"type":"max_rounds","rounds":1}}}`)},
	)
	f := Parse("t.yaml", []byte(out))
	if len(f.SystemNodes) != 1 || f.SystemNodes[0].ID != "judge1" || f.SystemNodes[0].Type != "judge" {
		t.Fatalf("system nodes = %+v\n%s", f.SystemNodes, out)
	}
	if len(f.Interactions) != 2 || f.Interactions[1].ID != "i2" || f.Interactions[1].Edges[0].Target != "judge1" {
		t.Fatalf("interactions:\n%s", out)
	}
	if len(f.Interactions[0].Edges) != 2 || f.Interactions[0].Edges[1].Source != "a2" {
		t.Fatalf("edges:\n%s", out)
	}
}

func TestEditRemoveNode(t *testing.T) {
	src := alpha(t)
	src = edit(t, src, Op{Op: "moveNode", ID: "a2", Position: &Point{X: 1, Y: 2}}, Op{Op: "moveNode", ID: "a1", Position: &Point{X: 3, Y: 4}})
	out := edit(t, src, Op{Op: "removeNode", ID: "a2"})
	f := Parse("t.yaml", []byte(out))
	if len(f.Agents) != 1 || len(f.Interactions) != 0 || len(f.Layout.Nodes) != 1 {
		t.Fatalf("got:\n%s", out)
	}
	if !strings.Contains(out, "interactions: []") || !strings.Contains(out, "a1: {x: 3, y: 4}") {
		t.Fatalf("got:\n%s", out)
	}
}

func TestEditRename(t *testing.T) {
	src := edit(t, alpha(t), Op{Op: "moveNode", ID: "a2", Position: &Point{X: 1, Y: 2}})
	out := edit(t, src, Op{Op: "rename", ID: "a2", NewID: "coder"})
	f := Parse("t.yaml", []byte(out))
	if f.Agents[1].ID != "coder" || f.Interactions[0].Edges[0].Target != "coder" || f.Layout.Nodes["coder"] != (Point{1, 2}) {
		t.Fatalf("got:\n%s", out)
	}
	if strings.Contains(out, "a2") {
		t.Errorf("a reference was left:\n%s", out)
	}
}

func TestEditSetLayout(t *testing.T) {
	src := edit(t, alpha(t), Op{Op: "moveNode", ID: "a2", Position: &Point{X: 1, Y: 2}})
	out := edit(t, src, Op{Op: "setLayout", Positions: map[string]Point{"a1": {10, 20}, "a2": {30, 40}}})
	f := Parse("t.yaml", []byte(out))
	if f.Layout.Nodes["a1"] != (Point{10, 20}) || f.Layout.Nodes["a2"] != (Point{30, 40}) {
		t.Fatalf("got:\n%s", out)
	}
}

func TestEditErrorsLeaveNothing(t *testing.T) {
	src := alpha(t)
	cases := []Op{
		{Op: "set", Path: "/agents/9/name", Value: raw("x")},
		{Op: "set", Path: "/version/x", Value: raw("x")},
		{Op: "removeNode", ID: "nobody"},
		{Op: "moveNode", ID: "a1"},
		{Op: "bogus"},
		{Op: "set", Path: "/agents/0/name", Value: json.RawMessage(`{"x":`)},
	}
	for _, op := range cases {
		edits, err := Edit([]byte(src), "t.yaml", []Op{{Op: "set", Path: "/agents/0/name", Value: raw("ok")}, op})
		if err == nil || edits != nil {
			t.Errorf("%+v: err=%v edits=%v", op, err, edits)
		}
	}
	if _, err := Edit([]byte("a: [\n"), "t.yaml", []Op{{Op: "set", Path: "/a", Value: raw(1)}}); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Errorf("unparsable: %v", err)
	}
}

func TestEditEmptyFlow(t *testing.T) {
	out := edit(t, "version: 0.2\n", Op{Op: "addAgent", Agent: json.RawMessage(`{"role":"worker"}`)})
	if out != "version: 0.2\nagents:\n  - id: a1\n    role: worker\n" {
		t.Fatalf("got %q", out)
	}
	out = edit(t, "version: 0.2\nagents: []\n", Op{Op: "addAgent", Agent: json.RawMessage(`{"role":"worker"}`)})
	if out != "version: 0.2\nagents:\n  - id: a1\n    role: worker\n" {
		t.Fatalf("got %q", out)
	}
	out = edit(t, "version: 0.2", Op{Op: "set", Path: "/name", Value: raw("x")})
	if out != "version: 0.2\nname: x\n" {
		t.Fatalf("got %q", out)
	}
}

// A comment after the last entry of a list or mapping stays on that entry's line when an
// entry is appended after it (it used to move to the new last line).
func TestEditAppendKeepsTrailingComments(t *testing.T) {
	src := "version: 0.2\nagents:\n  - id: w\n    role: worker   # does the work\n" +
		"layout:\n  nodes:\n    w: {x: 0, y: 160}   # below the reviewer\n  edges: {}\n"
	for _, tc := range []struct{ name, src string }{
		{"final newline", src},
		{"commented last line, no final newline", strings.TrimSuffix(src, "\n  edges: {}\n")},
		{"CRLF", strings.ReplaceAll(src, "\n", "\r\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := edit(t, tc.src, Op{Op: "addAgent", Agent: raw(map[string]string{"id": "r", "role": "orchestrator"}), Position: &Point{X: 5, Y: 6}})
			// every original line, comments included, is still there and in order
			rest := out
			for _, line := range strings.Split(strings.ReplaceAll(tc.src, "\r\n", "\n"), "\n") {
				i := strings.Index(rest, line)
				if i < 0 {
					t.Fatalf("line %q is gone or out of order:\n%s", line, out)
				}
				rest = rest[i+len(line):]
			}
			for _, want := range []string{"# does the work\n  - id: r\n", "# below the reviewer\n    r: {x: 5, y: 6}", "role: orchestrator"} {
				if !strings.Contains(strings.ReplaceAll(out, "\r", ""), want) {
					t.Errorf("no %q in:\n%s", want, out)
				}
			}
			if strings.Count(out, "#") != 2 {
				t.Errorf("comments duplicated:\n%s", out)
			}
		})
	}
}
