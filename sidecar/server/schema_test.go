package server

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// The hover/completion schema names only fields the loader accepts: a document with every
// schema field draws no "unknown field" problem. (Type problems from placeholder values are
// expected and ignored.)
func TestSchemaMatchesTheLoader(t *testing.T) {
	var b strings.Builder
	var write func(f *field, indent int)
	write = func(f *field, indent int) {
		names := make([]string, 0, len(f.fields))
		for n := range f.fields {
			names = append(names, n)
		}
		sort.Strings(names)
		pad := strings.Repeat(" ", indent)
		for _, n := range names {
			c := f.fields[n]
			switch {
			case c.list && c.fields != nil:
				// A list of one item whose keys sit under the dash.
				fmt.Fprintf(&b, "%s%s:\n%s  -\n", pad, n, pad)
				write(c, indent+4)
			case c.fields != nil && n != "params" && n != "retention":
				fmt.Fprintf(&b, "%s%s:\n", pad, n)
				write(c, indent+2)
			default:
				fmt.Fprintf(&b, "%s%s: x\n", pad, n)
			}
		}
	}
	write(schema, 0)
	f := flow.Parse("flows/all.yaml", []byte(b.String()))
	for _, p := range f.Problems {
		if strings.Contains(p.Message, "unknown field") {
			t.Errorf("%s: %s", p.Path, p.Message)
		}
	}
	if t.Failed() {
		t.Logf("document:\n%s", b.String())
	}
}
