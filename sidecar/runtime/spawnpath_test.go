package runtime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// starters are the calls that start a process.
var starters = []string{"exec.Command", "exec.CommandContext", "os.StartProcess", "syscall.ForkExec",
	"syscall.StartProcess", "syscall.Exec", "unix.Exec"}

// spawnAllowed are the only files of the sidecar (tests aside) that start processes, and why
// each may. Everything run on an agent's behalf goes through spawnOS (RunCommand and Start
// both use it): its rules, its environment, a session of its own.
var spawnAllowed = map[string]string{
	"runtime/spawn_unix.go":              "spawnOS's direct start (no guardian): the agent, confined",
	"runtime/guardian_linux.go":          "the guardian forks each agent turn, confined",
	"runtime/guardian_client_linux.go":   "the guardian itself: this binary, with an environment of one variable",
	"runtime/world_linux.go":             "true, once, in new namespaces: does the kernel make them",
	"doctor/doctor.go":                   "`<cli> --version` of a CLI the person installed, for the doctor's report",
	"internal/modelserver/clis.go":       "tests' scripted model servers: the CLIs' versions",
	"internal/reviewfixture/fixture.go":  "tests' fixtures: git",
	"internal/smalldisk/smalldisk.go":    "tests: mount and unmount a small tmpfs, for the full-disk tests",
	"confine/confinetest/confinetest.go": "tests: the test binary again as nobody",
}

// Nothing outside spawnAllowed starts a process: a new exec.Command on an agent's files (a
// test or verify command, a judge) would run it with the sidecar's rights and environment.
func TestOneSpawnPath(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "/testdata/") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && slices.Contains(starters, x.Name+"."+sel.Sel.Name) {
				found[rel] = true
				if _, ok := spawnAllowed[rel]; !ok {
					t.Errorf("%s starts a process (%s.%s): run it through runtime.RunCommand, as the agent it is for", rel, x.Name, sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for f := range spawnAllowed {
		if !found[f] {
			t.Errorf("%s is allowed to start processes but starts none: take it off spawnAllowed", f)
		}
	}
}

// docs/security.md names, for each channel, the tests that attack it: each is a test of the
// repository (a renamed or removed one leaves a channel without its attack).
func TestSecurityDocNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile("`(Test[A-Za-z0-9_]+)\\*?`").FindAllStringSubmatch(string(doc), -1)
	if len(names) < 20 {
		t.Fatalf("docs/security.md names %d tests", len(names))
	}
	var src strings.Builder
	root, _ := filepath.Abs("..")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, "_test.go") {
			b, _ := os.ReadFile(p)
			src.Write(b)
		}
		return nil
	})
	for _, n := range names {
		if !strings.Contains(src.String(), "func "+n[1]) {
			t.Errorf("docs/security.md names %s, which no test is", n[1])
		}
	}
}
