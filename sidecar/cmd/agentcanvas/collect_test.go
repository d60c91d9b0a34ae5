package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A short command (proposal apply of 8 MB of files) runs without a garbage collection, unless
// GOGC says otherwise; the Go runtime's own trace (GODEBUG=gctrace=1) is the witness.
func TestShortCommandsCollectLate(t *testing.T) {
	ws := t.TempDir()
	var names []string
	big := bytes.Repeat([]byte("a line of a large file\n"), 200<<10/23)
	for i := range 40 {
		name := fmt.Sprintf("src/f%02d.txt", i)
		os.MkdirAll(filepath.Join(ws, "src"), 0o755)
		os.WriteFile(filepath.Join(ws, name), big, 0o644)
		names = append(names, name)
	}
	code, out, errs := runCLI(t, append([]string{"sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "coder"}, names...)...)
	if code != exitOK {
		t.Fatalf("prepare: %s", errs)
	}
	work := filepath.Join(ws, ".agentcanvas/sandboxes/r1/coder/work")
	if !strings.Contains(out, work) {
		t.Fatalf("the sandbox is not where the test expects: %s", out)
	}
	for _, name := range names {
		os.WriteFile(filepath.Join(work, name), append([]byte("a first line\n"), big...), 0o644)
	}
	if code, _, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "coder"); code != exitOK {
		t.Fatalf("create: %s", errs)
	}
	prop := filepath.Join(ws, ".agentcanvas/sandboxes/r1/coder/proposal/proposal.json")
	gcs := func(env ...string) int {
		code, _, _, errs := runProc(t, append(env, "GODEBUG=gctrace=1"), "proposal", "apply", "--check", "--workspace", ws, prop)
		if code != exitOK {
			t.Fatalf("apply --check: %s", errs)
		}
		return strings.Count(errs, "\ngc ") + map[bool]int{true: 1}[strings.HasPrefix(errs, "gc ")]
	}
	if n := gcs("GOGC=100"); n == 0 {
		t.Fatal("with GOGC=100 the apply collected no garbage: it allocates too little to tell anything")
	}
	if n := gcs(); n != 0 {
		t.Fatalf("the apply collected garbage %d times", n)
	}
}
