//go:build linux

package eventlog

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/smalldisk"
	"golang.org/x/sys/unix"
)

// An event whose write a full disk cuts short (a real small tmpfs) is cut off the log again:
// the log reads back whole, and the next event, with room again, is read too.
func TestAShortWriteIsCutOffAgain(t *testing.T) {
	disk := smalldisk.Mount(t, 1<<20)
	ws := filepath.Join(disk, "ws")
	os.Mkdir(ws, 0o755)
	l, err := Open(ws, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ts := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC).UnixMilli()
	if err := l.Append(Event{TS: ts, Event: "first"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, LogsDir, "f", "2026-11-20.jsonl")
	before, _ := os.Stat(file)
	var st unix.Statfs_t
	unix.Statfs(disk, &st)
	filler := filepath.Join(disk, "filler")
	if out, err := exec.Command("fallocate", "-l", fmt.Sprint(int64(st.Bavail)*int64(st.Bsize)-4096), filler).CombinedOutput(); err != nil {
		t.Fatalf("fallocate: %v %s", err, out)
	}
	if err := l.Append(Event{TS: ts, Event: "big", Fields: map[string]any{"text": strings.Repeat("x", 20000)}}); err == nil {
		t.Fatal("an event on a full disk was written")
	}
	if after, _ := os.Stat(file); after.Size() != before.Size() {
		t.Fatalf("the torn write was left: %d bytes, was %d", after.Size(), before.Size())
	}
	os.Remove(filler)
	l.Append(Event{TS: ts, Event: "third"})
	evs, err := Read(ws, "f", "2026-11-20")
	if err != nil || len(evs) != 2 || evs[1].Event != "third" {
		t.Fatalf("%d events, %v", len(evs), err)
	}
}
