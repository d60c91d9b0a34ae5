package validate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// seedFiles are the flows every fuzz target starts from: the examples, the broken flows and
// the loader's test data.
func seedFiles(t testing.TB) []string {
	var files []string
	for _, pattern := range []string{"flows/*.yaml", "flows/invalid/*.yaml", "sidecar/flow/testdata/*.yaml"} {
		m, _ := filepath.Glob(filepath.Join(repo, pattern))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no seed files")
	}
	return files
}

func addSeeds(f *testing.F) {
	for _, file := range seedFiles(f) {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
}

// checkSpansWithin: every range the loader recorded lies within the file, starts before it
// ends, and agrees with the index about its line and column.
func checkSpansWithin(t *testing.T, name string, src []byte) {
	t.Helper()
	f := flow.Parse(name, src)
	x := span.NewIndex(src)
	check := func(what string, r span.Range) {
		for _, p := range []span.Pos{r.Start, r.End} {
			if p.Offset < 0 || p.Offset > len(src) {
				t.Fatalf("%s: %s %v lies outside the file (%d bytes)", name, what, r, len(src))
			}
			if q := x.At(p.Offset); q != p {
				t.Fatalf("%s: %s position %+v disagrees with the index %+v", name, what, p, q)
			}
		}
		if r.End.Offset < r.Start.Offset {
			t.Fatalf("%s: %s %v ends before it starts", name, what, r)
		}
	}
	for path, r := range f.Spans {
		check("span "+path, r)
	}
	for path, r := range f.KeySpans {
		check("key span "+path, r)
	}
	// Problems are checked as the validator reports them (it repairs the loader's zero
	// ranges inside aliases; see testdata/fuzz/FuzzLoad/4c17d37c152a2b27).
	for _, p := range Flow(f, Workspace{}) {
		check("diagnostic "+p.Code, p.Range)
	}
}

// checkValidate: validation never panics, its ranges lie within the file, and every fix
// applies cleanly.
func checkValidate(t *testing.T, src []byte) {
	t.Helper()
	f := flow.Parse("fuzz.yaml", src)
	for _, d := range Flow(f, Workspace{}) {
		if d.Range.Start.Offset < 0 || d.Range.End.Offset > len(src) || d.Range.End.Offset < d.Range.Start.Offset {
			t.Fatalf("diagnostic range outside the file: %s %v", d, d.Range)
		}
		if d.Code == "" || d.Message == "" || d.Range.Start.Line < 1 {
			t.Fatalf("incomplete diagnostic: %+v", d)
		}
		if d.Fix != nil {
			if _, err := span.Apply(src, d.Fix.Edits); err != nil {
				t.Fatalf("%s: fix %q does not apply: %v", d, d.Fix.Title, err)
			}
		}
	}
}

func FuzzLoad(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		checkSpansWithin(t, "fuzz.yaml", src)
	})
}

func FuzzValidate(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		checkValidate(t, src)
	})
}

// corpus reads the inputs kept in testdata/fuzz/<target>/ (go test fuzz v1 files).
func corpus(t *testing.T, target string) [][]byte {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
	var out [][]byte
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "[]byte(") {
				continue
			}
			s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			out = append(out, []byte(s))
		}
	}
	return out
}

// TestLoaderSpansWithinFile runs the loader over every flow in the repository and every
// kept fuzz input: no panic, and every recorded span within the file.
func TestLoaderSpansWithinFile(t *testing.T) {
	for _, file := range seedFiles(t) {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		checkSpansWithin(t, file, src)
	}
	inputs := append(corpus(t, "FuzzLoad"), corpus(t, "FuzzValidate")...)
	if len(inputs) == 0 {
		t.Fatal("no kept fuzz inputs in testdata/fuzz")
	}
	for i, src := range inputs {
		checkSpansWithin(t, "corpus-"+strconv.Itoa(i), src)
		checkValidate(t, src)
	}
}
