package flow

import "testing"

// A YAML error is reported on the line that breaks the file, not on the line where the
// construct it breaks began (yaml.v3's own report).
func TestYAMLSyntaxErrorOnItsLine(t *testing.T) {
	for name, c := range map[string]struct {
		src  string
		line int
	}{
		"bad indent on line 5":       {"version: 0.2\nname: x\nagents:\n  - id: a\n   role: worker\n", 5},
		"unclosed { on line 4":       {"version: 0.2\nname: x\nagents:\n  - {id: a, role: worker\ninteractions: []\n", 4},
		"after a multi-line mapping": {"version: 0.2\nagents:\n  - {id: a,\n     role: worker}\n  - id: b\n   role: x\n", 6},
		"unclosed quote":             {"version: 0.2\nname: \"x\nagents: []\n", 2},
	} {
		f := Parse("t.yaml", []byte(c.src))
		if len(f.Problems) != 1 || f.Problems[0].Code != CodeYAMLSyntax || f.Problems[0].Range.Start.Line != c.line {
			t.Errorf("%s: %v, want a yaml-syntax problem on line %d", name, f.Problems, c.line)
		}
	}
}
