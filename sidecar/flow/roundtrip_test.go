package flow

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"
)

// corpus is every flow of the repository and the loader's fuzz corpus that parses.
func corpus(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pat := range []string{"../../flows/*.yaml", "../../flows/invalid/*.yaml", "testdata/*.yaml"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = b
		}
	}
	return out
}

// TestRoundTripIsByteIdentical: loading and saving with no edit gives back the same bytes,
// and so does setting any scalar to the value it already has (the edit engine rewrites
// nothing it was not asked to change).
func TestRoundTripIsByteIdentical(t *testing.T) {
	for name, src := range corpus(t) {
		f := Parse(name, src)
		if f.Doc == nil {
			continue
		}
		out, err := EditText(src, name, nil)
		if err != nil || string(out) != string(src) {
			t.Fatalf("%s: no-op edit changed the file: %v", name, err)
		}
		paths := scalarPaths(f)
		sort.Strings(paths)
		for _, p := range paths {
			v := scalarValue(f, p)
			if v == nil {
				continue
			}
			raw, _ := json.Marshal(v)
			got, err := EditText(src, name, []Op{{Op: "set", Path: p, Value: raw}})
			if err != nil {
				t.Errorf("%s: set %s = %s: %v", name, p, raw, err)
				continue
			}
			if string(got) != string(src) {
				t.Errorf("%s: set %s to its own value %s changed the file:\n%s", name, p, raw, firstDiff(src, got))
			}
		}
	}
}

func scalarPaths(f *Flow) []string {
	var out []string
	for p := range f.Spans {
		if n := nodeAt(f, p); n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null" && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			out = append(out, p)
		}
	}
	return out
}

func nodeAt(f *Flow, p string) *yaml.Node {
	e := &editor{f: f, root: f.Doc.Content[0], src: f.Index.Src()}
	loc, rest, err := e.locate(p)
	if err != nil || len(rest) > 0 {
		return nil
	}
	return resolve(loc.val)
}

func scalarValue(f *Flow, p string) any {
	n := nodeAt(f, p)
	var v any
	if n.Decode(&v) != nil {
		return nil
	}
	switch v.(type) {
	case string, bool, int, float64:
		return v
	}
	return nil
}

func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-40)
	return "was: " + string(a[lo:min(len(a), i+40)]) + "\nnow: " + string(b[lo:min(len(b), i+40)])
}
