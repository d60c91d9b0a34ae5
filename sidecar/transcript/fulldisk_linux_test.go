//go:build linux

package transcript

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/smalldisk"
	"golang.org/x/sys/unix"
)

// A turn whose write a full disk cuts short (a real small tmpfs) is cut off again: the
// transcript reads back whole, and the next turn, with room again, is read too.
func TestAShortWriteIsCutOffAgain(t *testing.T) {
	disk := smalldisk.Mount(t, 1<<20)
	ws := filepath.Join(disk, "ws")
	os.Mkdir(ws, 0o755)
	w := NewWriter(ws, "run_4")
	if _, err := w.Append(Turn{Agent: "a", Reply: "first"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, RunsDir, "run_4", FileName)
	before, _ := os.Stat(file)
	var st unix.Statfs_t
	unix.Statfs(disk, &st)
	filler := filepath.Join(disk, "filler")
	if out, err := exec.Command("fallocate", "-l", fmt.Sprint(int64(st.Bavail)*int64(st.Bsize)-4096), filler).CombinedOutput(); err != nil {
		t.Fatalf("fallocate: %v %s", err, out)
	}
	if _, err := w.Append(Turn{Agent: "a", Reply: strings.Repeat("r", 20000)}); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("a turn on a full disk: %v", err)
	}
	if after, _ := os.Stat(file); after.Size() != before.Size() {
		t.Fatalf("the torn write was left: %d bytes, was %d", after.Size(), before.Size())
	}
	os.Remove(filler)
	w.Append(Turn{Agent: "a", Reply: "third"})
	turns, err := Read(ws, "run_4")
	if err != nil || len(turns) != 2 || turns[1].Reply != "third" {
		t.Fatalf("%d turns, %v", len(turns), err)
	}
}
