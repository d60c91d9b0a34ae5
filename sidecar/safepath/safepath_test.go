package safepath

import (
	"errors"
	"path/filepath"
	"strings"
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

func TestCleanExtraBlockedFolders(t *testing.T) {
	r := Rules{Blocked: []string{"secrets", "src/gen"}, BlockedFrom: "agentcanvas.blockedFolders"}
	for _, p := range []string{"dist/a.js", ".git/x", ".agentcanvas/x", "node_modules/a"} {
		if _, err := Clean(p, r); err == nil || errors.Is(err, ErrBlocked) {
			t.Errorf("Clean(%q): %v; the built-in folders stay blocked, by the built-in rule", p, err)
		}
	}
	refused := map[string]string{
		"a/Secrets/k":  "in the blocked folder secrets (agentcanvas.blockedFolders)",
		"secrets":      "in the blocked folder secrets (agentcanvas.blockedFolders)",
		"src/gen/x.go": "in the blocked folder src/gen (agentcanvas.blockedFolders)",
		"SRC/Gen./x":   "in the blocked folder src/gen (agentcanvas.blockedFolders)",
	}
	for p, want := range refused {
		_, err := Clean(p, r)
		var e *Error
		if !errors.As(err, &e) || e.Reason != want || !errors.Is(err, ErrBlocked) {
			t.Errorf("Clean(%q) = %v; want %q", p, err, want)
		}
	}
	// A path entry is anchored at the root; a name entry matches at any depth.
	for _, p := range []string{"lib/src/gen/x", "src/generated/x", "src/a.go", "secretsx/a"} {
		if _, err := Clean(p, r); err != nil {
			t.Errorf("Clean(%q): %v", p, err)
		}
	}
}

func TestCleanAllowedFolders(t *testing.T) {
	r := Rules{Allowed: []string{"src", "docs/api"}, AllowedFrom: "agentcanvas.allowedFolders"}
	for _, p := range []string{"src", "src/a.ts", "./src/x/y", "docs/api/v1.md"} {
		if _, err := Clean(p, r); err != nil {
			t.Errorf("Clean(%q): %v", p, err)
		}
	}
	want := "outside the allowed folders [src, docs/api] (agentcanvas.allowedFolders)"
	for _, p := range []string{"srcx/a", "docs/guide.md", "docs", "README.md", "Src/a.ts", "lib/src/a"} {
		_, err := Clean(p, r)
		var e *Error
		if !errors.As(err, &e) || e.Reason != want || e.Path != p || !errors.Is(err, ErrNotAllowed) {
			t.Errorf("Clean(%q) = %v; want %q", p, err, want)
		}
	}
	// The built-in rules come first: an allowed folder never opens a blocked one.
	if _, err := Clean("src/node_modules/x", r); err == nil || errors.Is(err, ErrNotAllowed) {
		t.Errorf("src/node_modules: %v", err)
	}
	none := Rules{Allowed: []string{}, AllowedFrom: "--allow"}
	if _, err := Clean("src/a", none); err == nil || !strings.Contains(err.Error(), "no folder is allowed (--allow has no usable entry)") {
		t.Errorf("an empty, non-nil allow-list: %v", err)
	}
}

func TestLexicalRules(t *testing.T) {
	for _, p := range []string{".agentcanvas/flows/a.yaml", "dist/x", "node_modules/y"} {
		if _, err := Clean(p, Lexical); err != nil {
			t.Errorf("Clean(%q, Lexical): %v", p, err)
		}
	}
	for _, p := range []string{".git/config", "../x", "/etc/x"} {
		if _, err := Clean(p, Lexical); err == nil {
			t.Errorf("Clean(%q, Lexical) accepted", p)
		}
	}
}

func TestConfigRules(t *testing.T) {
	root := filepath.Join(string(filepath.Separator)+"home", "me", "proj")
	c := Config{
		Allowed:     []string{"./src/", "docs", "../up", filepath.Join(root, "lib"), "/elsewhere", "build/out", ".git/hooks", "", "a//b"},
		Blocked:     []string{"build", "gen/", "src/../x", `C:\x`, ".git"},
		AllowedFrom: "agentcanvas.allowedFolders", BlockedFrom: "agentcanvas.blockedFolders",
	}
	r, errs := c.Rules(root)
	if got := strings.Join(r.Allowed, ","); got != "src,docs" {
		t.Errorf("Allowed = %q", got)
	}
	if got := strings.Join(r.Blocked, ","); got != "build,gen,.git" {
		t.Errorf("Blocked = %q", got)
	}
	var msgs []string
	for _, e := range errs {
		var ee *EntryError
		if !errors.As(e, &ee) {
			t.Errorf("not an EntryError: %v", e)
		}
		msgs = append(msgs, e.Error())
	}
	want := []string{
		`agentcanvas.blockedFolders "src/../x": '..' is not allowed`,
		`agentcanvas.blockedFolders "C:\\x": contains a backslash; use forward slashes`,
		`agentcanvas.allowedFolders "../up": '..' is not allowed`,
		`agentcanvas.allowedFolders "` + filepath.Join(root, "lib") + `": absolute paths are not allowed; use a path relative to the workspace root: "lib"`,
		`agentcanvas.allowedFolders "/elsewhere": absolute paths are not allowed; use a path relative to the workspace root`,
		`agentcanvas.allowedFolders "build/out": is in the blocked folder build, so nothing in it can be allowed`,
		`agentcanvas.allowedFolders ".git/hooks": is in the blocked folder .git, so nothing in it can be allowed`,
		`agentcanvas.allowedFolders "": empty path`,
		`agentcanvas.allowedFolders "a//b": contains an empty path component (//)`,
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}

	// "." allows the whole workspace; no list at all is the built-in rules.
	if r, errs := (Config{Allowed: []string{"src", "."}}).Rules(""); r.Allowed != nil || len(errs) != 0 {
		t.Errorf("with \".\": %+v %v", r, errs)
	}
	if r, errs := (Config{}).Rules(""); r.Allowed != nil || r.Blocked != nil || len(errs) != 0 {
		t.Errorf("empty config: %+v %v", r, errs)
	}
	// Every entry unusable: nothing is allowed, and that is said.
	r, errs = (Config{Allowed: []string{"/abs"}, AllowedFrom: "--allow"}).Rules("")
	if r.Allowed == nil || len(r.Allowed) != 0 || len(errs) != 2 || !strings.Contains(errs[1].Error(), "--allow: no entry is usable, so no folder is allowed") {
		t.Errorf("all unusable: %+v %v", r, errs)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"src/a.ts", "../x", ".git/x", "a//b", "./a/", "src/gen/x", "Build/a", "docs/api/x"} {
		f.Add(s)
	}
	rules := []Rules{{}, Lexical, {Allowed: []string{"src", "docs/api"}, Blocked: []string{"build", "src/gen"}}, {Allowed: []string{}}}
	f.Fuzz(func(t *testing.T, p string) {
		for _, r := range rules {
			q, err := Clean(p, r)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Path != p || e.Reason == "" {
					t.Fatalf("Clean(%q): %v does not name the path and a reason", p, err)
				}
				continue
			}
			// A cleaned path is a fixed point, never escapes, and obeys every rule.
			if q2, err := Clean(q, r); err != nil || q2 != q {
				t.Fatalf("Clean(%q)=%q not idempotent: %q %v", p, q, q2, err)
			}
			if r.Allowed != nil && !r.allows(q) {
				t.Fatalf("Clean(%q)=%q is outside %v", p, q, r.Allowed)
			}
			if _, blocked := r.Blocks(q); blocked {
				t.Fatalf("Clean(%q)=%q is in a blocked folder", p, q)
			}
			// Narrowing the rules never accepts more.
			narrower := r
			narrower.Allowed = []string{"src"}
			if _, err := Clean(p, narrower); err == nil && q != "src" && !strings.HasPrefix(q, "src/") {
				t.Fatalf("Clean(%q) with only src allowed accepted %q", p, q)
			}
		}
	})
}

func FuzzConfigRules(f *testing.F) {
	for _, s := range []string{"src", "./src/", "../x", "/abs", ".", ".git", "a/b", "node_modules/x", ""} {
		f.Add(s, "build")
	}
	f.Fuzz(func(t *testing.T, allowed, blocked string) {
		r, errs := Config{Allowed: []string{allowed}, Blocked: []string{blocked}, AllowedFrom: "A", BlockedFrom: "B"}.Rules("/ws")
		// Every entry is either kept, in canonical form, or reported: nothing is lost silently.
		if len(r.Allowed)+len(r.Blocked)+len(errs) < 2 && !isRoot(allowed) {
			t.Fatalf("%q %q: %+v %v", allowed, blocked, r, errs)
		}
		for _, a := range r.Allowed {
			if q, err := Clean(a, r); err != nil || q != a {
				t.Fatalf("allowed entry %q does not pass its own rules: %v", a, err)
			}
		}
		for _, b := range r.Blocked {
			if _, blocked := r.Blocks(b); !blocked {
				t.Fatalf("blocked entry %q is not blocked", b)
			}
		}
	})
}
