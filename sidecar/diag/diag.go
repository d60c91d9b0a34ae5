// Package diag is the diagnostic shared by the loader, the validator, the command line and
// the server: a file, a range, a severity, a stable code, a message that says how to fix
// the problem, and, when the fix is mechanical, the text edits that make it.
package diag

import (
	"fmt"
	"sort"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// Severity of a diagnostic.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Diagnostic is one problem found in a flow.
type Diagnostic struct {
	File     string     `json:"file"`
	Range    span.Range `json:"range"`
	Severity Severity   `json:"severity"`
	Code     string     `json:"code"`
	Message  string     `json:"message"`
	// Path is the model path of the offending element ("/agents/1/runtime"), so the canvas
	// can draw the diagnostic on the right node or edge. Empty when the file does not parse.
	Path string `json:"path,omitempty"`
	// Fix, when present, makes the problem go away (offered as a quick fix).
	Fix *Fix `json:"fix,omitempty"`
}

// Fix is a mechanical fix: a title for the quick-fix menu and the edits to apply.
type Fix struct {
	Title string          `json:"title"`
	Edits []span.TextEdit `json:"edits"`
}

// String formats d as FILE:LINE:COL: SEVERITY: CODE: MESSAGE (the command line's text form).
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s: %s", d.File, d.Range.Start.Line, d.Range.Start.Col, d.Severity, d.Code, d.Message)
}

// HasErrors reports whether any diagnostic is an error.
func HasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Sort orders diagnostics by file, position, then code, so output is stable.
func Sort(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Range.Start.Offset != b.Range.Start.Offset {
			return a.Range.Start.Offset < b.Range.Start.Offset
		}
		return a.Code < b.Code
	})
}
