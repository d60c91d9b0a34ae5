package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPrepareReflinks: on a file system that makes reflinks (AGENTCANVAS_REFLINK_DIR names a
// folder on one: XFS with reflink=1, btrfs), a sandbox of 64 MiB in 256 files (each under the
// size that is read once and written twice) takes almost no space, the copies sharing the
// workspace's blocks, and both copies hold every byte.
func TestPrepareReflinks(t *testing.T) {
	dir := os.Getenv("AGENTCANVAS_REFLINK_DIR")
	if dir == "" {
		t.Skip("AGENTCANVAS_REFLINK_DIR is not set (a folder on a file system with reflinks)")
	}
	ws, err := os.MkdirTemp(dir, "reflink-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Remove(ws, "r", "w"); os.RemoveAll(ws) })
	data := make([]byte, 256<<10)
	for i := range data {
		data[i] = byte(i * 7 / 4096)
	}
	for i := 0; i < 256; i++ {
		data[0] = byte(i)
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%03d.bin", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	used := func() int64 {
		unix.Sync()
		var st unix.Statfs_t
		if err := unix.Statfs(ws, &st); err != nil {
			t.Fatal(err)
		}
		return int64(st.Blocks-st.Bfree) * st.Bsize
	}
	before := used()
	p, err := Prepare(context.Background(), Options{Workspace: ws, RunID: "r", AgentID: "w", Files: []string{"."}})
	if err != nil {
		t.Fatal(err)
	}
	if grew := used() - before; grew > 16<<20 {
		t.Fatalf("the sandbox of 64 MiB took %d MiB: no reflinks", grew>>20)
	}
	for i := 0; i < 256; i++ {
		data[0] = byte(i)
		for _, side := range []string{p.InputDir, p.WorkDir} {
			name := filepath.Join(side, fmt.Sprintf("f%03d.bin", i))
			if b, err := os.ReadFile(name); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("%s differs (%v)", name, err)
			}
		}
	}
}
