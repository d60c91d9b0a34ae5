//go:build unix

package main

// Two writers of one workspace at once, from separate processes released together: no change
// is lost, every apply that says it happened has its ledger entry, and a loser is told.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

const writersOrig = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n"

// twoProposals: w1 changes line 6 of a.txt, w2 line 8 (within w1's hunk's context lines),
// both from the same base.
func twoProposals(t *testing.T) (ws, w1, w2 string) {
	t.Helper()
	ws = t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte(writersOrig), 0o644)
	for _, w := range []struct{ agent, from, to string }{{"w1", "six\n", "SIX (w1)\n"}, {"w2", "eight\n", "EIGHT (w2)\n"}} {
		code, out, errs := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", w.agent, "a.txt")
		if code != exitOK {
			t.Fatalf("prepare: %s", errs)
		}
		var paths map[string]string
		json.Unmarshal([]byte(out), &paths)
		os.WriteFile(filepath.Join(paths["workDir"], "a.txt"), []byte(strings.Replace(writersOrig, w.from, w.to, 1)), 0o644)
		if code, _, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", w.agent); code != exitOK {
			t.Fatalf("create: %s", errs)
		}
	}
	return ws, filepath.Join(ws, ".agentcanvas/sandboxes/r1/w1"), filepath.Join(ws, ".agentcanvas/sandboxes/r1/w2")
}

// together starts each command as its own process, all waiting on one gate file, opens the
// gate, and returns each one's exit code and stderr.
func together(t *testing.T, cmds ...[]string) (codes []int, errs []string) {
	t.Helper()
	gate := filepath.Join(t.TempDir(), "gate")
	var procs []*exec.Cmd
	var bufs []*bytes.Buffer
	for _, args := range cmds {
		c := cli([]string{"AGENTCANVAS_TEST_GATE=" + gate}, args...)
		b := &bytes.Buffer{}
		c.Stderr = b
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		procs, bufs = append(procs, c), append(bufs, b)
	}
	os.WriteFile(gate, nil, 0o644)
	for i, c := range procs {
		c.Wait()
		codes = append(codes, c.ProcessState.ExitCode())
		errs = append(errs, bufs[i].String())
	}
	return codes, errs
}

func TestConcurrentAppliesLoseNothing(t *testing.T) {
	const trials = 8
	both := 0
	for i := 0; i < trials; i++ {
		ws, w1, w2 := twoProposals(t)
		codes, errs := together(t,
			[]string{"proposal", "apply", "--workspace", ws, w1},
			[]string{"proposal", "apply", "--workspace", ws, w2})
		b, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
		for k, mark := range []string{"SIX (w1)", "EIGHT (w2)"} {
			if codes[k] == 0 && !strings.Contains(string(b), mark) {
				t.Fatalf("trial %d: apply %d said it applied, and its change is gone:\n%s", i, k+1, b)
			}
			if codes[k] != 0 && !strings.Contains(errs[k], "agentcanvas:") && !strings.Contains(errs[k], "refused:") {
				t.Fatalf("trial %d: apply %d failed without saying why: %q", i, k+1, errs[k])
			}
		}
		wins := 0
		for _, c := range codes {
			if c == 0 {
				wins++
			}
		}
		if n := ledgerApplies(t, ws); n != wins {
			t.Fatalf("trial %d: %d applies succeeded, the ledger has %d", i, wins, n)
		}
		if wins == 2 {
			both++
		}
	}
	if both == 0 {
		t.Fatal("the second apply never merged with the first (it should: they change different lines)")
	}
	t.Logf("%d trials of two applies at once: %d with both applied (merged), 0 lost updates", trials, both)
}

func TestApplyAgainstRevertLosesNothing(t *testing.T) {
	const trials = 8
	for i := 0; i < trials; i++ {
		ws, w1, w2 := twoProposals(t)
		if code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, w1); code != exitOK {
			t.Fatal(errs)
		}
		codes, errs := together(t,
			[]string{"proposal", "revert", "--workspace", ws, w1},
			[]string{"proposal", "apply", "--workspace", ws, w2})
		b, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
		if codes[0] == 0 && strings.Contains(string(b), "SIX (w1)") {
			t.Fatalf("trial %d: the revert said it reverted, and w1's line is back:\n%s", i, b)
		}
		if codes[1] == 0 && !strings.Contains(string(b), "EIGHT (w2)") {
			t.Fatalf("trial %d: the apply said it applied, and w2's line is gone:\n%s", i, b)
		}
		for k := range codes {
			if codes[k] != 0 && !strings.Contains(errs[k], "agentcanvas:") && !strings.Contains(errs[k], "refused:") {
				t.Fatalf("trial %d: writer %d failed without saying why: %q", i, k+1, errs[k])
			}
		}
		if codes[0] == 0 && codes[1] == 0 && string(b) != strings.Replace(writersOrig, "eight\n", "EIGHT (w2)\n", 1) {
			t.Fatalf("trial %d: both succeeded and a.txt is:\n%s", i, b)
		}
	}
}

// A second writer waits for the lock, saying who holds it, and fails clearly at the bound;
// the lock goes with its holder when that process is killed.
func TestSecondWriterWaitsAndIsTold(t *testing.T) {
	ws, w1, _ := twoProposals(t)
	lk, err := wslock.Acquire(t.Context(), ws, "a test holding the lock", wslock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	code, _, _, errs := runProc(t, []string{wslock.TimeoutEnv + "=300ms"}, "proposal", "apply", "--workspace", ws, w1)
	lk.Release()
	holder := fmt.Sprintf("pid %d (%s): a test holding the lock", os.Getpid(), filepath.Base(os.Args[0]))
	if code != exitFail || !strings.Contains(errs, "waiting for the workspace lock, held by "+holder) || !strings.Contains(errs, "is busy: "+holder) {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != writersOrig {
		t.Fatal("the writer that gave up changed the workspace")
	}

	// A holder killed (its lock is the kernel's to release): the next writer goes ahead.
	holderProc := cli([]string{"AGENTCANVAS_TEST_KILL_AT_STEP=3"}, "proposal", "apply", "--workspace", ws, w1)
	holderProc.Run()
	if st, ok := holderProc.ProcessState.Sys().(syscall.WaitStatus); !ok || !st.Signaled() {
		t.Fatal("the holder was not killed")
	}
	if code, _, _, errs := runProc(t, []string{wslock.TimeoutEnv + "=5s"}, "proposal", "apply", "--workspace", ws, w1); code != 0 || !strings.Contains(errs, "was rolled back") {
		t.Fatalf("after the holder died: %d %s", code, errs)
	}
}

// Runs side by side in a fresh workspace never race creating their folders.
func TestSandboxesPreparedAtOnce(t *testing.T) {
	for i := 0; i < 6; i++ {
		ws := t.TempDir()
		os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
		var cmds [][]string
		for r := 0; r < 4; r++ {
			cmds = append(cmds, []string{"sandbox", "prepare", "--workspace", ws, "--run", fmt.Sprintf("run%d", r), "--agent", "coder", "a.txt"})
		}
		codes, errs := together(t, cmds...)
		for k, c := range codes {
			if c != 0 {
				t.Fatalf("trial %d: prepare %d: %s", i, k, errs[k])
			}
		}
	}
}

// --files on a file the workspace changed since the proposal was made takes its clean merge,
// and names the conflicting hunks of one that does not merge cleanly.
func TestApplyFilesTakesTheCleanMerge(t *testing.T) {
	ws, w1, w2 := twoProposals(t)
	if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, w1); code != 0 {
		t.Fatal(errs)
	}
	code, _, out, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, "--files", "a.txt", w2)
	if code != 0 || !strings.Contains(out, "applied modified a.txt") || !strings.Contains(errs, "merged with the workspace") {
		t.Fatalf("--files a.txt on the re-based file: %d %s %s", code, out, errs)
	}
	want := strings.Replace(strings.Replace(writersOrig, "six\n", "SIX (w1)\n", 1), "eight\n", "EIGHT (w2)\n", 1)
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != want {
		t.Fatalf("a.txt:\n%s", b)
	}
	// w3 changes line 2 too: its merge conflicts, and the hunk is named.
	code, o, errs := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r2", "--agent", "w3", "a.txt")
	if code != exitOK {
		t.Fatal(errs)
	}
	var paths map[string]string
	json.Unmarshal([]byte(o), &paths)
	os.WriteFile(filepath.Join(paths["workDir"], "a.txt"), []byte(strings.Replace(want, "SIX (w1)\n", "SIX (w3)\n", 1)), 0o644)
	if code, _, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r2", "--agent", "w3"); code != exitOK {
		t.Fatal(errs)
	}
	edited := strings.Replace(want, "SIX (w1)\n", "six, by hand\n", 1)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte(edited), 0o644)
	w3 := filepath.Join(ws, ".agentcanvas/sandboxes/r2/w3")
	code, _, _, errs = runProc(t, nil, "proposal", "apply", "--workspace", ws, "--files", "a.txt", w3)
	if code != exitFail || !strings.Contains(errs, "refused: a.txt: hunk 1 of the merge: conflicts with the workspace's line 6") {
		t.Fatalf("--files on a conflicting merge: %d %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != edited {
		t.Fatal("a refused --files changed a.txt")
	}
}
