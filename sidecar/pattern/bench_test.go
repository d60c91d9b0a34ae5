package pattern

import (
	"fmt"
	"testing"

	"github.com/agentcanvas/agentcanvas/patterns"
)

// BenchmarkLoad parses and checks the 20 embedded templates and documents (the init cost).
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load(patterns.FS()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInstantiateIntoLargeFlow inserts the largest template (P15, 7 nodes) beside a flow
// of 2,000 nodes, 4,000 edges: the cost of one "insert pattern" from the canvas.
func BenchmarkInstantiateIntoLargeFlow(b *testing.B) {
	ids := map[string]bool{}
	layout := map[string]Position{}
	for i := range 2000 {
		id := fmt.Sprintf("worker_%d", i+1)
		ids[id] = true
		layout[id] = Position{X: float64(i%50) * 260, Y: float64(i/50) * 140}
	}
	for i := range 4000 { // 50 interactions of 80 edges
		ids[fmt.Sprintf("i%d", i/80+1)] = true
		ids[fmt.Sprintf("i%d_e%d", i/80+1, i%80+1)] = true
	}
	p, _ := Lookup("P15")
	b.ResetTimer()
	for b.Loop() {
		sg := Instantiate(p, InstantiateOptions{ExistingIDs: ids, Origin: OriginBeside(layout)})
		if len(sg.Agents) != 7 {
			b.Fatal(sg)
		}
	}
}
