package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// flowSpec says how a test flow is built from a pattern template.
type flowSpec struct {
	pattern string
	counts  map[string]int
	// runtime is every node's runtime (agents, and system nodes the pattern runs as agents);
	// nil keeps the template's.
	runtime map[string]any
	// edit changes the subgraph before it is written (params, termination…).
	edit func(sg *pattern.Subgraph)
	// description is the flow's description (the run's task).
	description string
	// files are given to every agent (their sandboxes copy them).
	files []string
	// autoApply is the flow's policy.autoApply.
	autoApply bool
	// nodeParams are system nodes' params, by node id.
	nodeParams map[string]map[string]any
}

// gitWorkspace makes a temporary git repository to run flows in.
func gitWorkspace(t testing.TB) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# test workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "README.md"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return ws
}

// patternFlow instantiates a pattern, gives every node the spec's runtime, and writes the
// flow to ws/.agentcanvas/flows/<name>.yaml, returning it parsed.
func patternFlow(t testing.TB, ws, name string, fs flowSpec) *flow.Flow {
	t.Helper()
	p, ok := pattern.Lookup(fs.pattern)
	if !ok {
		t.Fatalf("no pattern %q", fs.pattern)
	}
	sg := pattern.Instantiate(p, pattern.InstantiateOptions{Counts: fs.counts})
	if fs.edit != nil {
		fs.edit(&sg)
	}
	agents := []map[string]any{}
	for _, a := range sg.Agents {
		// Sandboxes copy the files an agent is given; every test agent gets the README.
		m := map[string]any{"id": a.ID, "name": a.Name, "role": a.Role}
		if fs.files != nil {
			m["files"] = fs.files
		}
		if fs.runtime != nil {
			m["runtime"] = fs.runtime
		} else {
			m["runtime"] = a.Runtime
		}
		agents = append(agents, m)
	}
	systems := []map[string]any{}
	for _, s := range sg.SystemNodes {
		m := map[string]any{"id": s.ID, "name": s.Name, "type": s.Type}
		if p := fs.nodeParams[s.ID]; p != nil {
			m["params"] = p
		}
		if fs.runtime != nil {
			m["runtime"] = fs.runtime
		} else if s.Runtime != nil {
			m["runtime"] = s.Runtime
		}
		systems = append(systems, m)
	}
	doc := map[string]any{
		"version":      0.2,
		"description":  fs.description,
		"agents":       agents,
		"interactions": []any{sg.Interaction},
		"layout":       map[string]any{"nodes": sg.Layout, "edges": map[string]any{}},
	}
	if fs.autoApply {
		doc["policy"] = map[string]any{"autoApply": true}
	}
	if len(systems) > 0 {
		doc["systemNodes"] = systems
	}
	src, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws, ".agentcanvas", "flows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	f := flow.Parse(file, src)
	if f.Doc == nil || diag.HasErrors(f.Problems) {
		t.Fatalf("flow %s does not load: %v\n%s", name, f.Problems, src)
	}
	return f
}

// events reads the run's log.
func events(t testing.TB, ws, flowName string) []eventlog.Event {
	t.Helper()
	evs, err := eventlog.ReadAll(ws, flowName)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// pairFlow is a flow of one role_play_pair interaction, i1, of agents a (planner) and b
// (reviewer) with the given mapping entries (runtime, skills…), for rounds rounds; top is
// added at the top level (commonRules…).
func pairFlow(top, a, b string, rounds int) string {
	return "version: 0.2\n" + top + `agents:
  - {id: a, role: planner, ` + a + `}
  - {id: b, role: reviewer, ` + b + `}
interactions:
  - id: i1
    patternId: role_play_pair
    edges:
      - source: a
        target: b
        data: {topology: p2p, termination: {type: max_rounds, rounds: ` + strconv.Itoa(rounds) + `}}
`
}

// recording is the limits of tests whose scripted agents record what they were asked in a
// test folder outside their sandboxes, a write confinement refuses: they run unconfined.
// confine_test.go runs agents confined.
func recording() Limits { return Limits{Confine: confine.ModeOff} }
