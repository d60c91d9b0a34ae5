package safepath

import (
	"errors"
	"testing"
)

func TestClean(t *testing.T) {
	ok := map[string]string{
		"src/a.ts":       "src/a.ts",
		"./src/a.ts":     "src/a.ts",
		"src/":           "src",
		"a b/ü.txt":      "a b/ü.txt",
		".github/x.yml":  ".github/x.yml",
		"distribution/x": "distribution/x",
		"src/.gitignore": "src/.gitignore",
		"...":            "...",
	}
	for in, want := range ok {
		got, err := Clean(in, Rules{})
		if err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	refused := []string{
		"", "/etc/passwd", "C:/x", "c:x", `a\b`, "a/../../x", "..", "../x", "a/..",
		"a//b", "a/./b", ".", "./", ".git/config", ".GIT/config", "x/.Git/hooks/pre-commit",
		".git./config", ".git /x", "git~1/config", ".g\u200cit/config", ".agentcanvas/flows/a.yaml",
		".AgentCanvas/x", "node_modules/x", "dist/bundle.js", "a\x00b", "a\nb", "\xff",
	}
	for _, in := range refused {
		if got, err := Clean(in, Rules{}); err == nil {
			t.Errorf("Clean(%q) = %q; want refusal", in, got)
		} else {
			var e *Error
			if !errors.As(err, &e) || e.Path != in {
				t.Errorf("Clean(%q) error %v does not name the path", in, err)
			}
		}
	}
}

func TestCleanConfigurableBlockList(t *testing.T) {
	r := Rules{Blocked: []string{"secrets"}}
	if _, err := Clean("dist/a.js", r); err != nil {
		t.Errorf("dist should be allowed with a custom list: %v", err)
	}
	if _, err := Clean("a/Secrets/k", r); err == nil {
		t.Error("custom blocked folder accepted")
	}
	if _, err := Clean(".git/x", r); err == nil {
		t.Error(".git must stay blocked whatever the list says")
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"src/a.ts", "../x", ".git/x", "a//b", "./a/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		q, err := Clean(p, Rules{})
		if err != nil {
			return
		}
		// A cleaned path is a fixed point and never escapes.
		if q2, err := Clean(q, Rules{}); err != nil || q2 != q {
			t.Fatalf("Clean(%q)=%q not idempotent: %q %v", p, q, q2, err)
		}
	})
}
