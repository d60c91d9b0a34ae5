//go:build unix

package main

// A sandbox is never copied from a half-applied workspace: right after an apply is killed, a
// prepare recovers the workspace first (and says so), copies none of the apply's temporary
// files, and removes the staging folders of prepares that were killed.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestPrepareAfterACrashedApplyCopiesTheRecoveredWorkspace(t *testing.T) {
	rolledBack, finished := 0, 0
	for k := 3; k < 40 && (rolledBack < 3 || finished < 1); k += 2 {
		ws, prop, before, after := faultWorkspace(t, 6)
		if _, killed, _, _ := runProc(t, []string{"AGENTCANVAS_TEST_KILL_AT_STEP=" + fmt.Sprint(k)}, "proposal", "apply", "--workspace", ws, prop); !killed {
			break
		}
		if len(leftovers(t, ws)) == 0 {
			continue
		}
		code, _, out, errs := runProc(t, nil, "sandbox", "prepare", "--workspace", ws, "--run", "r2", "--agent", "next", "src")
		if code != 0 {
			t.Fatalf("step %d: prepare: %s", k, errs)
		}
		if !strings.Contains(errs, "agentcanvas: an interrupted apply of coder's proposal (run r1) was") {
			t.Fatalf("step %d: the prepare did not say it recovered: %q", k, errs)
		}
		var paths map[string]string
		json.Unmarshal([]byte(out), &paths)
		copied := tree(t, paths["inputDir"])
		want, recovered := map[string]string{}, before
		if strings.Contains(errs, "was finished") {
			recovered = after // past its commit point: the apply stands
			finished++
		} else {
			rolledBack++
		}
		for p, v := range recovered {
			if p == "src" || strings.HasPrefix(p, "src/") {
				want[p] = v
			}
		}
		for p, v := range copied { // input/ is read-only
			v = strings.Replace(v, "444:", "644:", 1)
			copied[p] = strings.Replace(v, "555:", "755:", 1)
		}
		if d := treeDiff(want, copied); d != "" {
			t.Fatalf("step %d: the sandbox is not a copy of the workspace as the recovery left it (%s):\n%s", k, errs, d)
		}
		if l := leftovers(t, ws); len(l) > 0 {
			t.Fatalf("step %d: left behind: %v", k, l)
		}
	}
	if rolledBack == 0 || finished == 0 {
		t.Fatalf("%d rolled back, %d finished: want both", rolledBack, finished)
	}
}

// A prepare killed while it copies leaves its staging folder; the next prepare removes it.
func TestPrepareRemovesTheStagingFolderOfAKilledPrepare(t *testing.T) {
	ws := t.TempDir()
	for i := range 3000 {
		p := filepath.Join(ws, "src", fmt.Sprintf("d%02d", i%30), fmt.Sprintf("f%04d.txt", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Repeat("x", 200)), 0o644)
	}
	runs := filepath.Join(ws, ".agentcanvas/sandboxes/r1")
	staging := func() []string {
		m, _ := filepath.Glob(filepath.Join(runs, ".*.staging-*"))
		return m
	}
	for try := 0; len(staging()) == 0; try++ {
		if try == 20 {
			t.Fatal("the prepare was never caught staging")
		}
		c := cli(nil, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", fmt.Sprintf("a%d", try), "src")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
	wait:
		for {
			select {
			case <-done:
				break wait
			case <-time.After(100 * time.Microsecond):
				if len(staging()) > 0 {
					c.Process.Signal(syscall.SIGKILL)
					<-done
					break wait
				}
			}
		}
	}
	code, _, _, errs := runProc(t, nil, "sandbox", "prepare", "--workspace", ws, "--run", "r2", "--agent", "next", "src/d00/f0000.txt")
	if code != 0 {
		t.Fatal(errs)
	}
	if left := staging(); len(left) > 0 {
		t.Fatalf("the killed prepare's staging folder is still there: %v", left)
	}
	if !strings.Contains(errs, "left by an interrupted sandbox prepare") {
		t.Fatalf("the prepare did not say it removed the staging folder: %q", errs)
	}
}
