package proposal

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
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
