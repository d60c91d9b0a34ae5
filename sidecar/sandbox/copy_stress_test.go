package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// thresholdSizes sit on both sides of every size the copy treats differently: empty, the
// 64 KiB read buffer, the 1 MiB switch from read-once to kernel copy, and beyond.
var thresholdSizes = []int{0, 1, 4095, 4096, 64<<10 - 1, 64 << 10, 64<<10 + 1, smallFile - 1, smallFile, smallFile + 1, 3*smallFile + 7}

// thresholdTree writes folders × files with every threshold size (the big ones in a few
// folders only, to keep the disk use small) and returns path → content.
func thresholdTree(t testing.TB, ws string, folders int) map[string][]byte {
	t.Helper()
	want := map[string][]byte{}
	for d := 0; d < folders; d++ {
		for i, size := range thresholdSizes {
			if size > 64<<10+1 && d%16 != 0 {
				continue
			}
			rel := fmt.Sprintf("t/d%03d/s%d/f%02d.bin", d, d%7, i)
			b := make([]byte, size)
			for j := range b {
				b[j] = byte(j*31 + d*7 + i) // differs per file: a write into the wrong file shows
			}
			full := filepath.Join(ws, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, b, 0o644); err != nil {
				t.Fatal(err)
			}
			want[rel] = b
		}
	}
	return want
}

// gcWhile runs the garbage collector (and so finalizers) over and over until stop is closed:
// a descriptor closed twice by a finalizer shows up as another file's EBADF or ENOTDIR.
func gcWhile(stop chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	return &wg
}

// TestPrepareCopiesEveryByteAcrossThresholds copies a tree of many folders with files of every
// threshold size many times in parallel (run it under -race) while the collector runs, and
// compares every byte of both sides.
func TestPrepareCopiesEveryByteAcrossThresholds(t *testing.T) {
	ws := t.TempDir()
	want := thresholdTree(t, ws, 48)
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	stop := make(chan struct{})
	wg := gcWhile(stop)
	defer func() { close(stop); wg.Wait() }()
	for r := 0; r < rounds; r++ {
		id := fmt.Sprintf("r%d", r)
		p, err := Prepare(context.Background(), Options{Workspace: ws, RunID: id, AgentID: "w", Files: []string{"t"}, Workers: 8})
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		for rel, b := range want {
			for _, side := range []string{p.InputDir, p.WorkDir} {
				got, err := os.ReadFile(filepath.Join(side, filepath.FromSlash(rel)))
				if err != nil {
					t.Fatalf("round %d: %v", r, err)
				}
				if !bytes.Equal(got, b) {
					t.Fatalf("round %d: %s in %s: %d bytes differ from the %d written", r, rel, side, len(got), len(b))
				}
			}
		}
		if err := Remove(ws, id, "w"); err != nil {
			t.Fatal(err)
		}
	}
}

// goSrc copies the Go toolchain's own src/ (about 11,500 files in 1,000 folders, some over
// 1 MiB) into a new workspace with cp -a; the test is skipped where go is not installed.
func goSrc(t testing.TB) (ws string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	ws = t.TempDir()
	if out, err := exec.Command("cp", "-a", src, filepath.Join(ws, "src")).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s: %v\n%s", src, err, out)
	}
	return ws
}

// TestPrepareGoSource prepares the Go toolchain's src/ twice (it failed 3 times out of 3
// with "bad file descriptor" or "not a directory" when a finalizer closed a descriptor twice)
// and compares every copied file with the workspace's.
func TestPrepareGoSource(t *testing.T) {
	ws := goSrc(t)
	for r := 0; r < 2; r++ {
		id := fmt.Sprintf("r%d", r)
		p, err := Prepare(context.Background(), Options{Workspace: ws, RunID: id, AgentID: "w", Files: []string{"src"}})
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		m, err := ReadMeta(ws, id, "w")
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Files) < 5000 {
			t.Fatalf("round %d: only %d files copied", r, len(m.Files))
		}
		for _, f := range m.Files {
			want, err := os.ReadFile(filepath.Join(ws, f))
			if err != nil {
				continue // a symlink to a folder or outside: compared as links below
			}
			got, err := os.ReadFile(filepath.Join(p.WorkDir, f))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("round %d: %s differs from the workspace's (%v)", r, f, err)
			}
		}
		if err := Remove(ws, id, "w"); err != nil {
			t.Fatal(err)
		}
	}
}
