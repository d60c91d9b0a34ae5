package validate

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

var update = flag.Bool("update", false, "rewrite flows/invalid/*.golden from the current output")

// repo is the repository root, seen from this package's folder.
const repo = "../.."

// validateFile loads a repository file as the command line would (workspace root: the
// nearest folder with .agentcanvas/ or .git) and names it by its repository path.
func validateFile(t testing.TB, rel string) (*flow.Flow, []diag.Diagnostic) {
	t.Helper()
	full := filepath.Join(repo, rel)
	src, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	root, ok := FindRoot(filepath.Dir(full))
	if !ok {
		root = repo // a checkout without .git: the command line would use the cwd
	}
	f := flow.Parse(filepath.ToSlash(rel), src)
	return f, Flow(f, Workspace{Root: root})
}

func repoFiles(t *testing.T, pattern string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(repo, pattern))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no files match %s", pattern)
	}
	out := make([]string, len(matches))
	for i, m := range matches {
		rel, _ := filepath.Rel(repo, m)
		out[i] = filepath.ToSlash(rel)
	}
	return out
}

// TestExampleFlowsValidateClean: every example flow is free of errors and warnings, and
// together they cover every topology.
func TestExampleFlowsValidateClean(t *testing.T) {
	topologies := map[string]bool{}
	for _, file := range repoFiles(t, "flows/*.yaml") {
		f, ds := validateFile(t, file)
		for _, d := range ds {
			t.Errorf("%s", d)
		}
		for _, in := range f.Interactions {
			for _, e := range in.Edges {
				topologies[e.Data.Topology] = true
			}
			for _, a := range f.Agents {
				if a.Runtime != nil && a.Runtime.BackendID != "" && a.Runtime.BackendID != "dry-run" {
					t.Errorf("%s: agent %s uses backend %s; examples use dry-run so they run without keys", file, a.ID, a.Runtime.BackendID)
				}
			}
		}
	}
	for _, topo := range Topologies {
		if !topologies[topo] {
			t.Errorf("no example flow in flows/ uses topology %s", topo)
		}
	}
}

// formatGolden renders diagnostics as the golden files hold them: the command line's text
// form, then the quick fix's title on its own line.
func formatGolden(ds []diag.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteString("\n")
		if d.Fix != nil {
			b.WriteString("\tfix: " + d.Fix.Title + "\n")
			for _, e := range d.Fix.Edits {
				fmt.Fprintf(&b, "\t\t%s %q\n", e.Range, e.NewText)
			}
		}
	}
	return b.String()
}

// TestInvalidFlowsGolden: every broken flow gives exactly its golden diagnostics, and among
// them the code the file is named after.
func TestInvalidFlowsGolden(t *testing.T) {
	for _, file := range repoFiles(t, "flows/invalid/*.yaml") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			_, ds := validateFile(t, file)
			got := formatGolden(ds)
			golden := filepath.Join(repo, strings.TrimSuffix(file, ".yaml")+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./sidecar/validate -update)", err)
			}
			if got != string(want) {
				t.Errorf("diagnostics differ from %s (run go test ./sidecar/validate -update after checking):\n--- got\n%s--- want\n%s", golden, got, want)
			}
			code := strings.TrimSuffix(filepath.Base(file), ".yaml")
			found := false
			for _, d := range ds {
				found = found || d.Code == code
			}
			if !found {
				t.Errorf("%s gives no %s diagnostic", file, code)
			}
		})
	}
}

// TestGoldenCoversEveryCode: flows/invalid has a file per code.
func TestGoldenCoversEveryCode(t *testing.T) {
	for _, code := range Codes {
		if _, err := os.Stat(filepath.Join(repo, "flows/invalid", code+".yaml")); err != nil {
			t.Errorf("flows/invalid/%s.yaml is missing", code)
		}
	}
}

// TestFixesFixTheirProblem applies every quick fix offered for the broken flows, alone, and
// checks that the problem it was offered for is gone and no new error appeared.
func TestFixesFixTheirProblem(t *testing.T) {
	n := 0
	for _, file := range repoFiles(t, "flows/invalid/*.yaml") {
		f, ds := validateFile(t, file)
		root, ok := FindRoot(filepath.Dir(filepath.Join(repo, file)))
		if !ok {
			root = repo
		}
		for _, d := range ds {
			if d.Fix == nil {
				continue
			}
			n++
			checkFix(t, f, Workspace{Root: root}, ds, d)
		}
	}
	if n < 15 {
		t.Errorf("only %d fixes offered across flows/invalid; expected many more", n)
	}
}

// checkFix applies d's fix to f's source and re-validates.
func checkFix(t *testing.T, f *flow.Flow, ws Workspace, before []diag.Diagnostic, d diag.Diagnostic) {
	t.Helper()
	fixed, err := span.Apply(f.Index.Src(), d.Fix.Edits)
	if err != nil {
		t.Errorf("%s: fix %q does not apply: %v", d, d.Fix.Title, err)
		return
	}
	after := Flow(flow.Parse(f.File, fixed), ws)
	count := func(ds []diag.Diagnostic) map[string]int {
		m := map[string]int{}
		for _, x := range ds {
			if x.Severity == diag.Error || x.Code == d.Code {
				m[x.Code]++
			}
		}
		return m
	}
	for _, x := range after {
		if x.Code == d.Code && x.Path == d.Path && x.Message == d.Message {
			t.Errorf("%s: still reported after applying fix %q:\n%s", d, d.Fix.Title, fixed)
		}
	}
	cb, ca := count(before), count(after)
	for code, k := range ca {
		// A corrected patternId legitimately brings that pattern's own rules into play.
		if k > cb[code] && d.Code != CodeUnknownPattern {
			t.Errorf("%s: fix %q added %s errors (%d → %d):\n%s", d, d.Fix.Title, code, cb[code], k, formatGolden(after))
		}
	}
	if d.Code != CodeRawSecret && cb[d.Code] > 0 && ca[d.Code] >= cb[d.Code] {
		t.Errorf("%s: fix %q did not reduce the %s errors", d, d.Fix.Title, d.Code)
	}
}
