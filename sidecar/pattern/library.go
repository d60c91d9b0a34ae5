package pattern

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentcanvas/agentcanvas/patterns"
)

// The embedded library, loaded on first use (not at init: every run of the binary, even one
// that never looks at a pattern, would pay the ~1 ms parse). A broken embedded template is a
// bug in the binary: tests panic on it; a production binary keeps the patterns that did load
// and reports the problem through Err (gopls "bug" habit: report, don't crash).
var loadLibrary = sync.OnceValues(func() ([]Pattern, error) {
	lib, err := Load(patterns.FS())
	if err != nil && testing.Testing() {
		panic(fmt.Sprintf("pattern library: embedded templates are broken:\n%v", err))
	}
	return lib, err
})

func libraryPatterns() []Pattern { lib, _ := loadLibrary(); return lib }

// Err reports a problem loading the embedded library (nil in a correct build).
func Err() error { _, err := loadLibrary(); return err }

// All returns the 20 patterns in P-number order. The result is a deep copy: callers may change it.
func All() []Pattern {
	library := libraryPatterns()
	out := make([]Pattern, len(library))
	for i, p := range library {
		out[i] = p.clone()
	}
	return out
}

// Lookup finds a pattern by its P-number ("P05") or canonical id ("debate_judge"), in any
// letter case, ignoring surrounding space. The result is a deep copy.
func Lookup(idOrAlias string) (Pattern, bool) {
	key := strings.ToLower(strings.TrimSpace(idOrAlias))
	for _, p := range libraryPatterns() {
		if strings.ToLower(p.ID) == key || p.PatternID == key {
			return p.clone(), true
		}
	}
	return Pattern{}, false
}

func (p Pattern) clone() Pattern {
	c := p
	c.Roles = cloneRoles(p.Roles)
	c.DefaultTermination = p.DefaultTermination.Clone()
	c.DefaultParams = cloneParams(p.DefaultParams)
	t := p.Template
	t.Roles = cloneRoles(p.Template.Roles)
	t.Edges = slices.Clone(p.Template.Edges)
	for i := range t.Edges {
		t.Edges[i].Messages = slices.Clone(t.Edges[i].Messages)
	}
	t.DefaultTermination = p.Template.DefaultTermination.Clone()
	t.Params = cloneParams(p.Template.Params)
	t.Sources = slices.Clone(p.Template.Sources)
	c.Template = t
	return c
}

func cloneRoles(rs []Role) []Role {
	out := slices.Clone(rs)
	for i := range out {
		if out[i].Runtime != nil {
			rt := *out[i].Runtime
			out[i].Runtime = &rt
		}
	}
	return out
}
