package flow

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// FuzzParse: the loader never panics and every span lies inside the file.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/team-alpha.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("agents: [{id: a, runtime: {env: [X]}}]\nlayout: {nodes: {a: {x: 1}}}\n"))
	f.Add([]byte("a: |\n  x\n\n  y\nb: 'it''s'\nc: \"q\\\"\"\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		fl := Parse("f.yaml", src)
		for p, r := range fl.Spans {
			if r.Start.Offset < 0 || r.End.Offset > len(src) || r.Start.Offset > r.End.Offset {
				t.Fatalf("span %s = %+v outside a %d-byte file", p, r, len(src))
			}
		}
	})
}

// FuzzEdit: any set on any path of a valid flow either fails cleanly or yields edits that
// apply and give a flow that still parses.
func FuzzEdit(f *testing.F) {
	src, err := os.ReadFile("testdata/team-alpha.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add("/agents/0/name", `"x"`)
	f.Add("/layout/nodes/a1", `{"x":1,"y":2}`)
	f.Add("/interactions/0/edges/0/data", `null`)
	f.Add("/agents/1/instructions", `"multi\nline"`)
	f.Add("/commonRules/ruleChainRefs/1", `[1,{"a":[]}]`)
	f.Fuzz(func(t *testing.T, path, value string) {
		if !json.Valid([]byte(value)) {
			return
		}
		edits, err := Edit(src, "f.yaml", []Op{{Op: "set", Path: path, Value: json.RawMessage(value)}})
		if err != nil {
			return
		}
		out, err := span.Apply(src, edits)
		if err != nil {
			t.Fatalf("edits do not apply: %v", err)
		}
		if fl := Parse("f.yaml", out); fl.Doc == nil {
			t.Fatalf("set %s = %s broke the file:\n%s", path, value, out)
		}
	})
}
