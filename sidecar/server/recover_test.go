package server

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func blobID(data string) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00%s", len(data), data)
	return hex.EncodeToString(h.Sum(nil))
}

// An apply cut short before the editor started the sidecar (its journal left behind, a.txt
// already replaced, a temporary file under .agentcanvas/tmp): the sidecar rolls it back as it
// starts and shows the person what it did.
func TestInitializeRecoversAnInterruptedApply(t *testing.T) {
	root := t.TempDir()
	old, now := "old line\n", "new line\n"
	oldID, newID := blobID(old), blobID(now)
	writeFiles(t, root, map[string]string{
		"a.txt": now,
		".agentcanvas/ledger/objects/" + oldID[:2] + "/" + oldID[2:]: old,
		".agentcanvas/ledger/objects/" + newID[:2] + "/" + newID[2:]: now,
		".agentcanvas/tmp/.agentcanvas-0123456789abcdef.tmp":         "half",
		".agentcanvas/journal.json": `{"version": 1, "pid": 1, "started": "2026-11-26T00:00:00.000Z",
  "what": "apply of coder's proposal (run r1)",
  "entry": {"version": 1, "id": "20261126T000000.000Z-0badc0de", "kind": "apply", "at": "2026-11-26T00:00:00.000Z", "files": []},
  "files": [{"path": "a.txt", "before": {"oid": "` + oldID + `", "mode": "100644"}, "after": {"oid": "` + newID + `", "mode": "100644"}}]}
`,
	})
	c := startBinary(t)
	c.initialize(root)
	msg := string(c.waitNote("window/showMessage", nil))
	if !strings.Contains(msg, "AgentCanvas: an interrupted apply of coder's proposal (run r1) was rolled back (1 file put back as it was)") {
		t.Fatalf("showMessage %s", msg)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != old {
		t.Fatalf("a.txt: %q", b)
	}
	for _, p := range []string{".agentcanvas/journal.json", ".agentcanvas/tmp/.agentcanvas-0123456789abcdef.tmp"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	c.shutdownExit()
}
