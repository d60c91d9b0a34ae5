package validate

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// bigFlow generates a valid flow of n agents and 2n edges: n/2 manager_worker interactions
// of four edges each, every edge with the full set of axes, and a layout entry per agent.
func bigFlow(n int) []byte {
	var b strings.Builder
	b.Grow(n * 700)
	b.WriteString("# generated: a large valid flow for the validation benchmark\nversion: 0.2\nname: big\nagents:\n")
	for i := range n {
		role := "worker"
		if i%2 == 0 {
			role = "manager"
		}
		fmt.Fprintf(&b, "  - id: a%d\n    name: \"Agent %d\"\n    role: %s\n    files: [src/mod%d/index.ts]\n    runtime: {kind: cli, backendId: dry-run, cwdMode: agentHome, env: [OPENAI_API_KEY]}\n", i, i, role, i)
	}
	b.WriteString("interactions:\n")
	for k := range n / 2 {
		fmt.Fprintf(&b, "  - id: i%d\n    patternId: manager_worker\n    edges:\n", k)
		for _, w := range []int{2*k + 1, (2*k + 3) % n, (2*k + 5) % n, (2*k + 7) % n} {
			fmt.Fprintf(&b, `      - source: a%d
        target: a%d
        data:
          intent: solve
          topology: manager_worker
          messageForm: nl_text
          sync: req_res
          termination:
            any:
              - {type: max_rounds, rounds: 2}
              - {type: quality_gate, metric: tests_passed, op: ">=", value: 1}
          params: {task_template: "Implement part %d of the feature"}
          observability: {logs: true, traces: false}
`, 2*k, w, w)
		}
	}
	b.WriteString("layout:\n  nodes:\n")
	for i := range n {
		fmt.Fprintf(&b, "    a%d: {x: %d, y: %d}\n", i, (i%50)*220, (i/50)*120)
	}
	return []byte(b.String())
}

func TestBigFlowIsValid(t *testing.T) {
	src := bigFlow(400) // the benchmarks use 2,000; the shape is the same
	f := flow.Parse("big.yaml", src)
	edges := 0
	for _, in := range f.Interactions {
		edges += len(in.Edges)
	}
	if len(f.Agents) != 400 || edges != 800 {
		t.Fatalf("agents %d, edges %d", len(f.Agents), edges)
	}
	if ds := Flow(f, Workspace{}); len(ds) != 0 {
		t.Fatalf("the generated flow is not clean: %v", ds[:min(5, len(ds))])
	}
}

// TestManyFixesStayBounded: a large flow where every edge lacks its termination validates
// with a diagnostic per edge, and quick fixes only up to the budget.
func TestManyFixesStayBounded(t *testing.T) {
	src := strings.ReplaceAll(string(bigFlow(400)), `          termination:
            any:
              - {type: max_rounds, rounds: 2}
              - {type: quality_gate, metric: tests_passed, op: ">=", value: 1}
`, "")
	ds := Flow(flow.Parse("big.yaml", []byte(src)), Workspace{})
	fixes := 0
	for _, d := range ds {
		if d.Code != CodeTerminationRequired {
			t.Fatalf("unexpected %s", d)
		}
		if d.Fix != nil {
			fixes++
		}
	}
	if len(ds) != 800 {
		t.Errorf("%d diagnostics, want 800", len(ds))
	}
	if limit := max(3, FixBudget/len(src)); fixes < 3 || fixes > limit {
		t.Errorf("%d fixes, want between 3 and %d", fixes, limit)
	}
}

// BenchmarkValidate loads and validates the 2,000-agent, 4,000-edge flow from its bytes, as
// the server does on every change. scripts/bench-validate.sh prints its ratio to
// BenchmarkYAMLDecode.
func BenchmarkValidate(b *testing.B) {
	src := bigFlow(2000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		f := flow.Parse("big.yaml", src)
		if ds := Flow(f, Workspace{}); len(ds) != 0 {
			b.Fatal(ds[0])
		}
	}
}

// BenchmarkYAMLDecode is the baseline: a bare yaml.v3 decode of the same bytes.
func BenchmarkYAMLDecode(b *testing.B) {
	src := bigFlow(2000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := yaml.Unmarshal(src, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse is the loader alone (sidecar/flow), for comparison.
func BenchmarkParse(b *testing.B) {
	src := bigFlow(2000)
	b.ReportAllocs()
	for b.Loop() {
		flow.Parse("big.yaml", src)
	}
}

// BenchmarkValidateOnly is the validator alone, on an already loaded flow.
func BenchmarkValidateOnly(b *testing.B) {
	f := flow.Parse("big.yaml", bigFlow(2000))
	b.ReportAllocs()
	for b.Loop() {
		Flow(f, Workspace{})
	}
}
