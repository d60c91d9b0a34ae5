package proposal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// richProposal is a sandbox whose proposal deletes, modifies, adds in new folders, changes a
// type, a mode and a symlink: every kind of step an apply takes.
func richProposal(t *testing.T) (ws, ref string) {
	t.Helper()
	lines := func(n int, tag string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%s line %d\n", tag, i)
		}
		return b.String()
	}
	ws, paths := prepared(t, map[string]string{
		"src/a.txt":       "F:" + lines(40, "a"),
		"src/del/gone.md": "F:bye\n",
		"src/run.sh":      "F:#!/bin/sh\necho hi\n",
		"src/link":        "L:a.txt",
		"src/bin.dat":     "F:\x00\x01old",
		"top.txt":         "F:top\n",
	})
	w := paths.WorkDir
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	a := strings.Replace(lines(40, "a"), "a line 2\n", "A LINE 2\n", 1)
	a = strings.Replace(a, "a line 35\n", "A LINE 35\n", 1)
	must(os.WriteFile(filepath.Join(w, "src/a.txt"), []byte(a), 0o644))
	must(os.RemoveAll(filepath.Join(w, "src/del")))
	must(os.WriteFile(filepath.Join(w, "src/del"), []byte("a folder became this file\n"), 0o644))
	must(os.Chmod(filepath.Join(w, "src/run.sh"), 0o755))
	must(os.Remove(filepath.Join(w, "src/link")))
	must(os.WriteFile(filepath.Join(w, "src/link"), []byte("now a file\n"), 0o644))
	must(os.WriteFile(filepath.Join(w, "src/bin.dat"), []byte("\x00\x02new"), 0o644))
	must(os.MkdirAll(filepath.Join(w, "new/deep"), 0o755))
	must(os.WriteFile(filepath.Join(w, "new/deep/n.txt"), []byte("new\n"), 0o644))
	must(os.Symlink("../top.txt", filepath.Join(w, "new/l")))
	must(os.Remove(filepath.Join(w, "top.txt")))
	must(os.Symlink("src/a.txt", filepath.Join(w, "top.txt")))
	if _, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1", Notes: "n"}); err != nil {
		t.Fatal(err)
	}
	return ws, paths.AgentDir
}

func TestFaultInjectionLeavesWorkspaceIdentical(t *testing.T) {
	t.Run("swapping names", testFaultInjection)
	t.Run("linking and renaming", func(t *testing.T) { // a file system that cannot swap
		noSwap = true
		t.Cleanup(func() { noSwap = false })
		testFaultInjection(t)
	})
}

func testFaultInjection(t *testing.T) {
	for _, fault := range []struct {
		name string
		op   Op // "" = any step
		err  error
	}{
		{"permission denied on the Nth step", "", os.ErrPermission},
		{"full disk on the Nth write", OpWrite, syscall.ENOSPC},
		{"full disk on the Nth rename", OpRename, syscall.ENOSPC},
	} {
		t.Run(fault.name, func(t *testing.T) {
			ws, ref := richProposal(t)
			before := snapshot(t, ws, true)
			// Count the steps of a clean apply in a copy of the workspace.
			for n := 1; ; n++ {
				calls := 0
				hook := func(op Op, p string) error {
					if fault.op != "" && op != fault.op {
						return nil
					}
					calls++
					if calls == n {
						return fault.err
					}
					return nil
				}
				_, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{Hook: hook})
				if err == nil {
					if n == 1 {
						t.Fatal("no step was ever failed")
					}
					if fault.op == "" && n < 15 {
						t.Fatalf("only %d steps; the proposal should need more", n-1)
					}
					t.Logf("failed each of %d steps in turn", n-1)
					break // n is past the last step: the apply succeeded
				}
				if !errors.Is(err, fault.err) {
					t.Fatalf("step %d: %v", n, err)
				}
				if strings.Contains(err.Error(), "ROLLBACK INCOMPLETE") {
					t.Fatalf("step %d: %v", n, err)
				}
				if d := diffSnapshots(before, snapshot(t, ws, true)); d != "" {
					t.Fatalf("failing step %d left the workspace changed:\n%s", n, d)
				}
			}
			after := snapshot(t, ws, true)
			if d := diffSnapshots(before, after); d == "" {
				t.Fatal("the final, unfailed apply changed nothing")
			}
			for p := range after {
				if strings.HasPrefix(path.Base(p), ".agentcanvas-") {
					t.Errorf("the apply left its temporary file %s behind", p)
				}
			}
		})
	}
}

func TestApplySelectionOfHunks(t *testing.T) {
	ws, ref := richProposal(t)
	ctx := context.Background()
	rv, err := GetReview(ctx, ws, ref, ReviewOptions{Record: true})
	if err != nil {
		t.Fatal(err)
	}
	var a *ReviewFile
	for i := range rv.Files {
		if rv.Files[i].Path == "src/a.txt" {
			a = &rv.Files[i]
		}
	}
	if a == nil || len(a.Hunks) != 2 || !a.Selectable || !rv.Applicable {
		t.Fatalf("review: %+v", rv)
	}
	orig, _ := os.ReadFile(filepath.Join(ws, "src/a.txt"))
	// The second hunk alone.
	res, err := Apply(ctx, ws, ref, Selection{Hunks: map[string][]int{"src/a.txt": {2}}}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Path != "src/a.txt" {
		t.Fatalf("applied %+v", res.Files)
	}
	got, _ := os.ReadFile(filepath.Join(ws, "src/a.txt"))
	want := strings.Replace(string(orig), "a line 35\n", "A LINE 35\n", 1)
	if string(got) != want {
		t.Fatalf("after hunk 2:\n%s", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, "new")); err == nil {
		t.Fatal("a file outside the selection was applied")
	}
	// Then hunk 1 and a file selection: the rest of the file and one new file.
	if _, err := Apply(ctx, ws, ref, Selection{Files: []string{"new/deep/n.txt"}, Hunks: map[string][]int{"src/a.txt": {1}}}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	work, _ := os.ReadFile(filepath.Join(ref, "work/src/a.txt"))
	got, _ = os.ReadFile(filepath.Join(ws, "src/a.txt"))
	if string(got) != string(work) {
		t.Fatal("hunks 2 then 1 did not produce work/")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "new/deep/n.txt")); string(b) != "new\n" {
		t.Fatal("selected file not applied")
	}
	// A hunk that does not exist, and a file the patch does not touch, are refused.
	for _, sel := range []Selection{{Hunks: map[string][]int{"src/a.txt": {3}}}, {Files: []string{"nope"}}, {Hunks: map[string][]int{"new/deep/n.txt": {1, 2}}}} {
		if _, err := Check(ctx, ws, ref, sel, ApplyOptions{}); err == nil {
			t.Fatalf("selection %+v accepted", sel)
		}
	}
	evs, err := eventlog.ReadAll(ws, DefaultFlow)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range evs {
		names = append(names, e.Event)
	}
	if got := strings.Join(names, ","); got != "proposal_created,proposal_reviewed,proposal_applied,proposal_applied" {
		t.Fatalf("events: %s", got)
	}
}

func TestListRejectAndGitHeadWarning(t *testing.T) {
	ws, ref := richProposal(t)
	ctx := context.Background()
	list, err := List(ws)
	if err != nil || len(list) != 1 || list[0].State != "pending" || list[0].AgentID != "custom:coder-1" || len(list[0].ChangedFiles) == 0 {
		t.Fatalf("list: %+v %v", list, err)
	}
	// A proposal that records a base commit the workspace is not at warns, never silently.
	jf := filepath.Join(ref, JSONFile)
	b, _ := os.ReadFile(jf)
	b = []byte(strings.Replace(string(b), `"gitHead": ""`, `"gitHead": "0123456789012345678901234567890123456789"`, 1))
	os.WriteFile(jf, b, 0o644)
	res, err := Check(ctx, ws, jf, Selection{}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "base.gitHead") {
		t.Fatalf("warnings: %v", res.Warnings)
	}
	if err := Reject(ws, ref, "not needed", "team-alpha"); err != nil {
		t.Fatal(err)
	}
	list, _ = List(ws)
	if list[0].State != "rejected" {
		t.Fatalf("state %q", list[0].State)
	}
	evs, _ := eventlog.ReadAll(ws, "team-alpha")
	if len(evs) != 1 || evs[0].Event != "proposal_rejected" || evs[0].RunID != "run1" {
		t.Fatalf("events %+v", evs)
	}
}

func TestLoadRefusesPatchOutsideSandbox(t *testing.T) {
	ws, ref := richProposal(t)
	jf := filepath.Join(ref, JSONFile)
	b, _ := os.ReadFile(jf)
	for _, bad := range []string{"../../../../../etc/passwd", "/etc/passwd", "proposal/../../x.patch"} {
		os.WriteFile(jf, []byte(strings.Replace(string(b), `"proposal/changes.patch"`, fmt.Sprintf("%q", bad), 1)), 0o644)
		if _, err := Load(ws, jf); err == nil || !strings.Contains(err.Error(), "paths.patchFile") {
			t.Fatalf("%s: %v", bad, err)
		}
	}
	// A symlink inside the sandbox that leads out is refused by os.Root.
	os.WriteFile(jf, b, 0o644)
	pf := filepath.Join(ref, PatchFile)
	os.Remove(pf)
	os.Symlink("/etc/passwd", pf)
	if _, err := Load(ws, jf); err == nil {
		t.Fatal("symlinked patch accepted")
	}
}

func TestCreateRefusesNamesNoPatchCouldCarry(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"a.txt": "F:a\n"})
	os.WriteFile(filepath.Join(paths.WorkDir, "bad\nname"), []byte("x"), 0o644)
	_, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"})
	if err == nil || !strings.Contains(err.Error(), "control character") {
		t.Fatalf("got %v", err)
	}
	// A node_modules the worker installed is left out, and said so in summary.md.
	os.Remove(filepath.Join(paths.WorkDir, "bad\nname"))
	os.MkdirAll(filepath.Join(paths.WorkDir, "node_modules/x"), 0o755)
	os.WriteFile(filepath.Join(paths.WorkDir, "node_modules/x/i.js"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(paths.WorkDir, "a.txt"), []byte("b\n"), 0o644)
	c, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"})
	if err != nil || len(c.Proposal.ChangedFiles) != 1 || len(c.Skipped) != 1 {
		t.Fatalf("%v %+v", err, c)
	}
	sum, _ := os.ReadFile(filepath.Join(paths.ProposalDir, "summary.md"))
	if !strings.Contains(string(sum), "node_modules") || !strings.Contains(string(sum), "| `a.txt` | modified | 1 | 1 |") {
		t.Fatalf("summary:\n%s", sum)
	}
}

func TestApplyHandMadeRenameAndCopy(t *testing.T) {
	_, ws := hazardWorkspace(t)
	patch := "diff --git a/b.txt b/moved/b.txt\nsimilarity index 50%\nrename from b.txt\nrename to moved/b.txt\n--- a/b.txt\n+++ b/moved/b.txt\n@@ -1,2 +1,2 @@\n b1\n-b2\n+B2\n" +
		"diff --git a/c.txt b/c2.txt\nsimilarity index 100%\ncopy from c.txt\ncopy to c2.txt\n"
	gws := copyTree(t, ws)
	if _, err := ApplyPatch(context.Background(), ws, []byte(patch), Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	needGit(t)
	pf := filepath.Join(t.TempDir(), "p.patch")
	os.WriteFile(pf, []byte(patch), 0o644)
	if out, err := run(t, gws, "git", "apply", pf); err != nil {
		t.Fatalf("git apply: %v %s", err, out)
	}
	if d := diffSnapshots(snapshotDirsToo(t, ws), snapshotDirsToo(t, gws)); d != "" {
		t.Fatalf("differs from git:\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
		t.Fatal("rename left the old file")
	}
}
