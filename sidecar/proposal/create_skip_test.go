package proposal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// SkipUnchanged: an unchanged sandbox leaves no proposal files and no event; a changed one is
// proposed as always.
func TestCreateSkipUnchanged(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"a.txt": "F:one\n"})
	o := CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1", SkipUnchanged: true}
	cr, err := Create(context.Background(), o)
	if err != nil || len(cr.Proposal.ChangedFiles) != 0 {
		t.Fatalf("unchanged: %+v, %v", cr, err)
	}
	if ents, _ := os.ReadDir(paths.ProposalDir); len(ents) != 0 {
		t.Errorf("an unchanged sandbox left %d file(s) in proposal/", len(ents))
	}
	if evs, _ := eventlog.ReadAll(ws, DefaultFlow); len(evs) != 0 {
		t.Errorf("an unchanged sandbox logged %v", evs)
	}
	if err := os.WriteFile(filepath.Join(paths.WorkDir, "a.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cr, err = Create(context.Background(), o)
	if err != nil || len(cr.Proposal.ChangedFiles) != 1 || cr.Proposal.ChangedFiles[0].Path != "a.txt" {
		t.Fatalf("changed: %+v, %v", cr, err)
	}
	if _, err := os.Stat(filepath.Join(paths.ProposalDir, "changes.patch")); err != nil {
		t.Error(err)
	}
}

// A build folder's tracked files are in a whole-workspace sandbox (sandbox.Prepare), but never
// proposed: a change there is left out and said so in summary.md; left unchanged, nothing is
// said of it.
func TestCreateLeavesTrackedBuildFoldersOut(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"src/a.js": "F:a\n", "dist/app.js": "F:bundle\n"})
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	paths, err := sandbox.Prepare(context.Background(), sandbox.Options{Workspace: ws, RunID: "run1", AgentID: "w", Files: []string{"."}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(paths.WorkDir, "dist", "app.js")); err != nil {
		t.Fatalf("the tracked dist/app.js is not in the sandbox: %v", err)
	}
	os.WriteFile(filepath.Join(paths.WorkDir, "src", "a.js"), []byte("b\n"), 0o644)
	summary := func() (*Created, string) {
		cr, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "w"})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(paths.ProposalDir, "summary.md"))
		return cr, string(b)
	}
	if cr, md := summary(); len(cr.Skipped) != 0 || strings.Contains(md, "Left out") || len(cr.Proposal.ChangedFiles) != 1 {
		t.Errorf("an unchanged build folder: skipped %v\n%s", cr.Skipped, md)
	}
	os.WriteFile(filepath.Join(paths.WorkDir, "dist", "app.js"), []byte("rebuilt\n"), 0o644)
	if cr, md := summary(); len(cr.Skipped) != 1 || !strings.Contains(md, "Left out (blocked folders are never proposed):\n\n- `dist`") || len(cr.Proposal.ChangedFiles) != 1 {
		t.Errorf("a changed build folder: skipped %v, changed %v\n%s", cr.Skipped, cr.Proposal.ChangedFiles, md)
	}
}
