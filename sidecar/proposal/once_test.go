package proposal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A proposal is one proposal whatever it is called: applied through its sandbox folder, a
// second apply through a link to that folder, or through its own changes.patch, is refused as
// applied already (not left to the patch's context to catch), and a revert through the link
// finds its apply.
func TestEveryNameOfAProposalIsOneProposal(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"a.txt": "F:one\ntwo\n"})
	if err := os.WriteFile(filepath.Join(paths.WorkDir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Create(ctx, CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, ws, paths.AgentDir, Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(paths.AgentDir, link); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{link, filepath.Join(paths.AgentDir, PatchFile), filepath.Join(link, PatchFile)} {
		_, err := Apply(ctx, ws, ref, Selection{}, ApplyOptions{})
		if err == nil || !strings.Contains(err.Error(), "was applied already") {
			t.Errorf("apply through %s: %v", ref, err)
		}
	}
	if _, err := Revert(ctx, ws, link, ApplyOptions{}); err != nil {
		t.Fatalf("revert through the link: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("after the revert: %q", b)
	}
}
