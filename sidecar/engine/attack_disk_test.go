//go:build linux

package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// A worker fills the disk its workspace is on (an 8 MB tmpfs here): its work/ shares the
// file system with the sidecar's state. The sidecar lives on and the run ends: the worker's
// proposal, which has no room, is an error naming the file and the full disk, every state
// file it could not write is a warning the person sees, and the event log still reads back.
// As root (a tmpfs needs it).
func TestAttackWorkerFillsTheDisk(t *testing.T) {
	confinetest.Landlock(t)
	if os.Getuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", ws, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("no tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(ws, unix.MNT_DETACH) })
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	dir := t.TempDir()
	worker := script(t, dir, "worker.sh", "cat > /dev/null\necho start > a.txt\nhead -c 100000000 /dev/zero > fill.bin\necho \"filled: $?\"\n")
	reviewer := script(t, dir, "reviewer.sh", "cat > /dev/null; echo 'ANSWER: fine'\n")
	_, f := workspace(t, confinedFlow(worker, "", reviewer))
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Limits: confined, Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	if out.Status == "" || len(rec.events("run_finished")) != 1 {
		t.Fatalf("the run did not end: %+v", out)
	}
	var said []string
	for _, e := range append(rec.events("error"), rec.events("warning")...) {
		said = append(said, str(fld(e, "message")))
	}
	if !strings.Contains(strings.Join(said, "\n"), "proposal: write") || !strings.Contains(strings.Join(said, "\n"), "no space left on device") {
		t.Errorf("the lost proposal is not reported: %q", said)
	}
	if evs, err := eventlog.ReadAll(ws, f.Name); err != nil || len(evs) == 0 {
		t.Errorf("the event log does not read back: %d events, %v", len(evs), err)
	}
}
