package flow

import (
	"os"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

func load(t *testing.T, name string) *Flow {
	t.Helper()
	src, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return Parse("testdata/"+name, src)
}

func text(f *Flow, path string) string {
	r := f.Span(path)
	return string(f.Index.Src()[r.Start.Offset:r.End.Offset])
}

func TestParseModel(t *testing.T) {
	f := load(t, "team-alpha.yaml")
	if len(f.Problems) != 0 {
		t.Fatalf("problems: %v", f.Problems)
	}
	if f.Name != "team-alpha" || f.Version != "0.2" {
		t.Errorf("name/version = %q %q", f.Name, f.Version)
	}
	if len(f.Agents) != 2 || f.Agents[1].Runtime == nil || f.Agents[1].Runtime.BackendID != "auto" || f.Agents[1].Runtime.Env[0] != "OPENAI_API_KEY" {
		t.Fatalf("agents = %+v", f.Agents)
	}
	if got := f.Agents[1].Instructions; got != "Implement the feature.\n\nKeep the tests green.\n" {
		t.Errorf("instructions = %q", got)
	}
	e := f.Interactions[0].Edges[0]
	if e.ID != "i1-e1" || e.Source != "a1" || e.Data.Termination.Type != "max_rounds" || *e.Data.Termination.Rounds != 2 {
		t.Errorf("edge = %+v", e)
	}
	if e.Data.Params["task_template"] != "Implement feature X" || !*e.Data.Observability.Logs {
		t.Errorf("edge data = %+v", e.Data)
	}
}

func TestSpans(t *testing.T) {
	f := load(t, "team-alpha.yaml")
	cases := map[string]string{
		"/agents/0/name":              `"Planner"`,
		"/agents/1/name":              `"Coder — ü"`,
		"/agents/1/runtime/backendId": "auto",
		"/agents/1/runtime/env/0":     "OPENAI_API_KEY",
		"/agents/1/runtime":           "{kind: cli, backendId: auto, cwdMode: agentHome, env: [OPENAI_API_KEY]}",
		"/agents/1/files":             "[src/a.ts]",
		"/agents/0/rules":             "[]",
		"/interactions/0/edges/0/data/termination/rounds": "2",
		"/interactions/0/patternId":                       `"manager_worker"`,
		"/version":                                        "0.2",
		"/layout/nodes":                                   "{}",
	}
	for p, want := range cases {
		if got := text(f, p); got != want {
			t.Errorf("span %s = %q, want %q", p, got, want)
		}
	}
	if got := text(f, "/agents/1/instructions"); !strings.HasPrefix(got, "|\n      Implement") || !strings.HasSuffix(got, "green.") {
		t.Errorf("block scalar span = %q", got)
	}
	r := f.Span("/agents/1/name")
	if r.Start.Line != 17 || r.Start.Col != 11 || r.End.Col != 22 {
		t.Errorf("name range = %+v", r)
	}
	if got := text(f, "/interactions/0/edges/0"); !strings.HasPrefix(got, "source:") || !strings.HasSuffix(got, "traces: false") {
		t.Errorf("edge span = %q", got)
	}
}

func TestTypeProblems(t *testing.T) {
	src := "version: 0.2\nagents:\n  - id: a1\n    rules: nope\n    runtime: {maxTurns: many}\n    colour: red\ninteractions: {}\n"
	f := Parse("x.yaml", []byte(src))
	var got []string
	for _, p := range f.Problems {
		got = append(got, p.Code+"@"+p.Path+":"+p.Message)
	}
	want := []string{
		"schema@/agents/0/rules:rules must be a list of strings",
		"schema@/agents/0/runtime/maxTurns:runtime.maxTurns must be a whole number",
		`schema@/agents/0/colour:unknown field "colour" in an agent`,
		"schema@/interactions:interactions must be a list",
	}
	if len(got) != len(want) {
		t.Fatalf("problems = %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}

func TestSyntaxError(t *testing.T) {
	f := Parse("bad.yaml", []byte("version: 0.2\nagents:\n  - id: a1\n   name: x\n"))
	if len(f.Problems) != 1 || f.Problems[0].Code != CodeYAMLSyntax || !strings.Contains(f.Problems[0].Message, "expected") {
		t.Fatalf("problems = %+v", f.Problems)
	}
	if f.Doc != nil {
		t.Error("a file that does not parse has no document")
	}
}

func TestEmptyAndMultiDoc(t *testing.T) {
	if f := Parse("e.yaml", nil); len(f.Problems) != 1 || f.Problems[0].Code != CodeSchema {
		t.Errorf("empty: %+v", f.Problems)
	}
	if f := Parse("m.yaml", []byte("version: 0.2\n---\nversion: 0.3\n")); len(f.Problems) != 1 || f.Problems[0].Code != CodeYAMLSyntax {
		t.Errorf("multi: %+v", f.Problems)
	}
}

// A field of no known name is an error (a run would otherwise go on without it: backendid for
// backendId falls back to auto and starts another CLI), naming its line, the field it may
// have meant, and a quick fix that renames it.
func TestUnknownFieldIsAnErrorWithTheFieldItMayHaveMeant(t *testing.T) {
	src := "version: 0.2\nagents:\n  - id: a1\n    runtime: {kind: cli, backendid: command, command: [x]}\ninteractions: []\n"
	f := Parse("x.yaml", []byte(src))
	if len(f.Problems) != 1 {
		t.Fatalf("problems = %+v", f.Problems)
	}
	p := f.Problems[0]
	if p.Severity != diag.Error || p.String() != `x.yaml:4:26: error: schema: unknown field "backendid" in runtime (did you mean "backendId"?); correct or remove it` {
		t.Fatalf("problem = %s", p)
	}
	if p.Fix == nil || p.Fix.Title != `Rename to "backendId"` {
		t.Fatalf("fix = %+v", p.Fix)
	}
	fixed, err := span.Apply([]byte(src), p.Fix.Edits)
	if err != nil || !strings.Contains(string(fixed), "{kind: cli, backendId: command,") || len(Parse("x.yaml", fixed).Problems) != 0 {
		t.Fatalf("fixed: %v\n%s", err, fixed)
	}
}
