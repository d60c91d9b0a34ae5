package proposal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A worker leaves a sparse file of a terabyte in work/: the proposal is refused, naming the
// file, without the file being read (before, the sidecar ran out of memory and ended).
func TestCreateRefusesAFileNoPatchCouldHold(t *testing.T) {
	ws, paths := prepared(t, map[string]string{"a.txt": "F:hi\n"})
	f, err := os.Create(filepath.Join(paths.WorkDir, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("no sparse terabyte here: %v", err)
	}
	f.Close()
	_, err = Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"})
	if err == nil || !strings.Contains(err.Error(), "work/big.bin") || !strings.Contains(err.Error(), "more than a patch may hold") {
		t.Fatalf("Create: %v, want big.bin refused", err)
	}
}
