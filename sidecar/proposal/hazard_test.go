package proposal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// hazardWorkspace is a parent folder holding the workspace "ws" and a sibling "outside" that
// no patch may reach.
func hazardWorkspace(t *testing.T) (parent, ws string) {
	parent = t.TempDir()
	ws = filepath.Join(parent, "ws")
	writeTree(t, ws, map[string]string{
		"a.txt":          "F:one\ntwo\nthree\n",
		"b.txt":          "F:b1\nb2\n",
		"c.txt":          "F:c1\nc2\nc3\n",
		"realdir/in.txt": "F:inside\n",
		"linkdir":        "L:realdir",
		"outlink":        "L:../outside",
		"bin.dat":        "F:\x00\x01\x02binary",
		".git/config":    "F:[core]\n",
	})
	writeTree(t, parent, map[string]string{"outside/secret.txt": "F:secret\n"})
	return parent, ws
}

const newFileX = `new file mode 100644
index 0000000000000000000000000000000000000000..587be6b4c3f93f93c489c0111bba5596147a26cb
--- /dev/null
+++ b/%s
@@ -0,0 +1 @@
+x
`

func newFilePatch(name string) string {
	return "diff --git a/" + name + " b/" + name + "\n" + strings.ReplaceAll(newFileX, "%s", name)
}

type hazard struct {
	name, patch string
	opts        ApplyOptions
}

var hazards = []hazard{
	{"dotdot", newFilePatch("a/../../outside/x"), ApplyOptions{}},
	{"dotdot plain", newFilePatch("../outside/x"), ApplyOptions{}},
	{"quoted octal dotdot", "diff --git \"a/\\056\\056/outside/x\" \"b/\\056\\056/outside/x\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/\\056\\056/outside/x\"\n@@ -0,0 +1 @@\n+x\n", ApplyOptions{}},
	{"absolute rename target", "diff --git a/a.txt b//tmp/x\nsimilarity index 100%\nrename from a.txt\nrename to /tmp/x\n", ApplyOptions{}},
	{"absolute traditional", "--- /dev/null\n+++ /tmp/agentcanvas-hazard\n@@ -0,0 +1 @@\n+x\n", ApplyOptions{}},
	{".GIT upper case", newFilePatch(".GIT/hooks/pre-commit"), ApplyOptions{}},
	{".git config", "diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-[core]\n+[core] hooksPath=/tmp\n", ApplyOptions{}},
	{"git look-alike", newFilePatch(".git./hooks/x"), ApplyOptions{}},
	{"internal folder", newFilePatch(".agentcanvas/flows/x.yaml"), ApplyOptions{}},
	{"node_modules", newFilePatch("node_modules/x/index.js"), ApplyOptions{}},
	{"symlink out then write through it (CVE-2023-23946)", "diff --git a/l b/l\nnew file mode 120000\nindex 0000000000000000000000000000000000000000..1111111111111111111111111111111111111111\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+../outside\n\\ No newline at end of file\n" + newFilePatch("l/secret.txt"), ApplyOptions{}},
	{"symlink inside then write through it", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+realdir\n\\ No newline at end of file\n" + newFilePatch("l/new.txt"), ApplyOptions{}},
	{"symlink to .git", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+.git/hooks\n\\ No newline at end of file\n", ApplyOptions{}},
	{"absolute symlink", "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n", ApplyOptions{}},
	{"symlinked folder in the workspace", newFilePatch("linkdir/x.txt"), ApplyOptions{}},
	{"symlink out of the workspace on disk", newFilePatch("outlink/x.txt"), ApplyOptions{}},
	{"modify through a symlinked folder", "diff --git a/linkdir/in.txt b/linkdir/in.txt\n--- a/linkdir/in.txt\n+++ b/linkdir/in.txt\n@@ -1 +1 @@\n-inside\n+changed\n", ApplyOptions{}},
	{"rename from a forbidden path", "diff --git a/.git/config b/stolen\nsimilarity index 100%\nrename from .git/config\nrename to stolen\n", ApplyOptions{}},
	{"copy from outside", "diff --git a/../outside/secret.txt b/stolen\nsimilarity index 100%\ncopy from ../outside/secret.txt\ncopy to stolen\n", ApplyOptions{}},
	{"headers disagree (---/+++ vs diff --git)", "diff --git a/a.txt b/a.txt\n--- a/../outside/secret.txt\n+++ b/../outside/secret.txt\n@@ -1 +1 @@\n-secret\n+x\n", ApplyOptions{}},
	{"headers disagree (names)", "diff --git a/a.txt b/a.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-b1\n+x\n b2\n", ApplyOptions{}},
	{"diff --git line disagrees", "diff --git a/zzz b/zzz\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-one\n+x\n two\n three\n", ApplyOptions{}},
	{"gitlink", "diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000000000000000000000000000000000000..1234567890123456789012345678901234567890\n--- /dev/null\n+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n", ApplyOptions{}},
	{"binary patch over a changed file", binaryOverChanged(), ApplyOptions{}},
	{"binary without data", "diff --git a/bin.dat b/bin.dat\nindex 1111111..2222222 100644\nBinary files a/bin.dat and b/bin.dat differ\n", ApplyOptions{}},
	{"oversized patch", newFilePatch("big.txt"), ApplyOptions{MaxPatchBytes: 64}},
	{"file created twice", newFilePatch("twice.txt") + newFilePatch("twice.txt"), ApplyOptions{}},
	{"file modified twice", "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+uno\ndiff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -2 +2 @@\n-two\n+dos\n", ApplyOptions{}},
	{"conflict in the last file of three", "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-one\n+uno\n two\n three\n" +
		newFilePatch("fresh/new.txt") +
		"diff --git a/c.txt b/c.txt\n--- a/c.txt\n+++ b/c.txt\n@@ -1,3 +1,3 @@\n c1\n-NOT c2\n+x\n c3\n", ApplyOptions{}},
	{"create an existing file", newFilePatch("b.txt"), ApplyOptions{}},
	{"delete a missing file", "diff --git a/nope.txt b/nope.txt\ndeleted file mode 100644\n--- a/nope.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", ApplyOptions{}},
	{"delete with leftovers", "diff --git a/c.txt b/c.txt\ndeleted file mode 100644\n--- a/c.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-c1\n-c2\n", ApplyOptions{}},
	{"file under a file", newFilePatch("a.txt/inner"), ApplyOptions{}},
	{"file under a new file", newFilePatch("n") + newFilePatch("n/inner"), ApplyOptions{}},
	{"folder mode", "diff --git a/d b/d\nnew file mode 040000\n--- /dev/null\n+++ b/d\n@@ -0,0 +1 @@\n+x\n", ApplyOptions{}},
	{"not a git patch", "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-one\n+uno\n", ApplyOptions{}},
	{"hidden traditional diff after a git one", newFilePatch("ok.txt") + "--- b.txt\n+++ b.txt\n@@ -1 +1 @@\n-b1\n+x\n", ApplyOptions{}},
	{"nul in a quoted name", "diff --git \"a/a\\000b\" \"b/a\\000b\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/a\\000b\"\n@@ -0,0 +1 @@\n+x\n", ApplyOptions{}},
	{"newline in a quoted name", "diff --git \"a/a\\nb\" \"b/a\\nb\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/a\\nb\"\n@@ -0,0 +1 @@\n+x\n", ApplyOptions{}},
	{"backslash name", newFilePatch(`..\\outside\\x`), ApplyOptions{}},
	{"modify a symlink as a file", "diff --git a/outlink b/outlink\n--- a/outlink\n+++ b/outlink\n@@ -1 +1 @@\n-../outside\n\\ No newline at end of file\n+../../etc\n\\ No newline at end of file\n", ApplyOptions{}},
	{"garbage", "diff --git \x00\xff\n@@@\n", ApplyOptions{}},
}

// binaryOverChanged is a correct binary patch for bin.dat as it was before the test changes it.
func binaryOverChanged() string {
	s, _, _, _ := fileDiff("bin.dat", side{exists: true, mode: modeFile, data: []byte("\x00\x01\x02binary-OLD")}, side{exists: true, mode: modeFile, data: []byte("\x00new")})
	return string(s)
}

func TestHazardsRefusedWorkspaceUnchanged(t *testing.T) {
	for _, h := range hazards {
		t.Run(h.name, func(t *testing.T) {
			parent, ws := hazardWorkspace(t)
			before := snapshot(t, parent, false)
			for _, dry := range []bool{true, false} {
				o := h.opts
				o.DryRun = dry
				res, err := ApplyPatch(context.Background(), ws, []byte(h.patch), Selection{}, o)
				if err == nil {
					t.Fatalf("dry=%v: accepted: %+v", dry, res)
				}
				var ref *RefusedError
				if !errors.As(err, &ref) {
					t.Fatalf("dry=%v: want a refusal, got %v", dry, err)
				}
				if len(ref.Problems) == 0 || ref.Problems[0].Reason == "" {
					t.Fatalf("refusal without a reason: %v", err)
				}
				t.Logf("%v", err)
			}
			if d := diffSnapshots(before, snapshot(t, parent, false)); d != "" {
				t.Fatalf("tree changed:\n%s", d)
			}
		})
	}
}

// The hazards that are plain files also go through the command's paths: a .patch file ref.
func TestHazardAsPatchFileRef(t *testing.T) {
	parent, ws := hazardWorkspace(t)
	pf := filepath.Join(parent, "evil.patch")
	os.WriteFile(pf, []byte(hazards[0].patch), 0o644)
	before := snapshot(t, parent, false)
	if _, err := Apply(context.Background(), ws, pf, Selection{}, ApplyOptions{}); err == nil {
		t.Fatal("accepted")
	}
	if d := diffSnapshots(before, snapshot(t, parent, false)); d != "" {
		t.Fatalf("tree changed:\n%s", d)
	}
}

// Extra blocked folders never unblock the sidecar's own folder or .git.
func TestCustomRulesKeepInternalFoldersBlocked(t *testing.T) {
	parent, ws := hazardWorkspace(t)
	before := snapshot(t, parent, false)
	for _, name := range []string{".agentcanvas/runs/x/state.json", ".git/hooks/post-checkout"} {
		_, err := ApplyPatch(context.Background(), ws, []byte(newFilePatch(name)), Selection{}, ApplyOptions{Rules: safepath.Rules{Blocked: []string{"vendor"}}})
		if err == nil {
			t.Fatalf("%s accepted", name)
		}
	}
	if d := diffSnapshots(before, snapshot(t, parent, false)); d != "" {
		t.Fatal(d)
	}
}

// The person's rules (spec §6.6: files outside the allowed directories): a patch touching a
// file outside the allowed folders, or in a folder they blocked, is refused naming the file
// and the rule, and the workspace is unchanged; the same patch applies once the rules allow it.
func TestPersonsRulesRefuseByFileAndRule(t *testing.T) {
	parent, ws := hazardWorkspace(t)
	before := snapshot(t, parent, false)
	rules := safepath.Rules{Allowed: []string{"realdir", "docs"}, Blocked: []string{"docs/private"},
		AllowedFrom: "agentcanvas.allowedFolders", BlockedFrom: "agentcanvas.blockedFolders"}
	patch := newFilePatch("realdir/new.txt") + newFilePatch("notes.txt") + newFilePatch("docs/private/k.txt")
	for _, dry := range []bool{true, false} {
		res, err := ApplyPatch(context.Background(), ws, []byte(patch), Selection{}, ApplyOptions{DryRun: dry, Rules: rules})
		var ref *RefusedError
		if !errors.As(err, &ref) {
			t.Fatalf("dry=%v: %v %+v", dry, err, res)
		}
		want := []Problem{
			{Path: "notes.txt", Reason: "outside the allowed folders [realdir, docs] (agentcanvas.allowedFolders)"},
			{Path: "docs/private/k.txt", Reason: "in the blocked folder docs/private (agentcanvas.blockedFolders)"},
		}
		if len(ref.Problems) != 2 || ref.Problems[0] != want[0] || ref.Problems[1] != want[1] {
			t.Errorf("dry=%v: problems %+v", dry, ref.Problems)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w.Path+": "+w.Reason) {
				t.Errorf("the error does not name %s and its rule: %v", w.Path, err)
			}
		}
	}
	// A symlink may not lead out of the allowed folders either.
	link := "diff --git a/realdir/l b/realdir/l\nnew file mode 120000\nindex 0000000000000000000000000000000000000000..3c52a2d0d5e2a9e3e2f7c0b4b0e1f3b8e3f4a5b6\n--- /dev/null\n+++ b/realdir/l\n@@ -0,0 +1 @@\n+../a.txt\n\\ No newline at end of file\n"
	if _, err := ApplyPatch(context.Background(), ws, []byte(link), Selection{}, ApplyOptions{Rules: rules}); err == nil || !strings.Contains(err.Error(), "outside the allowed folders") {
		t.Errorf("a symlink out of the allowed folders: %v", err)
	}
	if d := diffSnapshots(before, snapshot(t, parent, false)); d != "" {
		t.Fatalf("tree changed:\n%s", d)
	}
	rules.Allowed = nil
	rules.Blocked = nil
	if _, err := ApplyPatch(context.Background(), ws, []byte(patch), Selection{}, ApplyOptions{Rules: rules}); err != nil {
		t.Fatalf("with the rules lifted: %v", err)
	}
}
