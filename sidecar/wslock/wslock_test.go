package wslock

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// Two holders in one process exclude each other too (flock is per open file), the second is
// told who holds the lock, gives up at its timeout, and goes ahead once the first releases.
func TestSecondHolderWaitsIsToldAndGivesUp(t *testing.T) {
	ws := t.TempDir()
	first, err := Acquire(context.Background(), ws, "the first", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var told string
	_, err = Acquire(context.Background(), ws, "the second", Options{Timeout: 100 * time.Millisecond, Waiting: func(h string) { told = h }})
	var busy *BusyError
	if !errors.As(err, &busy) || !strings.HasSuffix(told, "): the first") || busy.Holder != told || !strings.Contains(err.Error(), "is busy: pid ") {
		t.Fatalf("err %v, told %q", err, told)
	}
	first.Release()
	second, err := Acquire(context.Background(), ws, "the second", Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release()
	if b, _ := os.ReadFile(ws + "/" + File); !strings.HasSuffix(string(b), "): the second\n") {
		t.Fatalf("the lock file says %q", b)
	}
}

// A .agentcanvas that is a symlink out of the workspace is not followed.
func TestLockRefusesASymlinkedStateFolder(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	if err := os.Symlink(out, ws+"/.agentcanvas"); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(context.Background(), ws, "x", Options{Timeout: time.Second}); err == nil {
		t.Fatal("took a lock through a symlink out of the workspace")
	}
	if names, _ := os.ReadDir(out); len(names) > 0 {
		t.Fatalf("wrote %v outside the workspace", names)
	}
}
