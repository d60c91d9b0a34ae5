//go:build unix

package main

// Applying never loses work, tested through real processes: the agentcanvas command (this test
// binary, see TestMain) killed after every step of an apply and at random moments, two
// writers at once, a writer waiting for the lock. After each fault the next command recovers:
// the workspace is all-old or all-new, the ledger matches it, no temporary file is left, and a
// revert restores the original byte for byte.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cli is the agentcanvas command as a separate process.
func cli(env []string, args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
	c.Env = append(append(os.Environ(), "AGENTCANVAS_TEST_AS_CLI=1"), env...)
	return c
}

// runProc runs the command in a process; killed says whether a signal ended it.
func runProc(t *testing.T, env []string, args ...string) (code int, killed bool, stdout, stderr string) {
	t.Helper()
	c := cli(env, args...)
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		ws := ee.Sys().(syscall.WaitStatus)
		return ee.ExitCode(), ws.Signaled(), o.String(), e.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, false, o.String(), e.String()
}

// tree is a workspace's files (not .agentcanvas): path → mode and content.
func tree(t *testing.T, ws string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(ws, p)
		if rel == ".agentcanvas" {
			return fs.SkipDir
		}
		fi, _ := os.Lstat(p)
		switch {
		case rel == ".":
		case fi.IsDir():
			out[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("%o:%s", fi.Mode().Perm(), b)
		}
		return nil
	})
	return out
}

// treeDiff names the paths that differ.
func treeDiff(a, b map[string]string) string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, fmt.Sprintf("%s: %.40q != %.40q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			d = append(d, fmt.Sprintf("%s: missing != %.40q", k, v))
		}
	}
	return strings.Join(d, "\n")
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// faultWorkspace is a workspace with coder's proposal: n files modified, one deleted, one
// added in a new folder, one made executable. It returns the trees before and after.
func faultWorkspace(t *testing.T, n int) (ws, prop string, before, after map[string]string) {
	t.Helper()
	return faultWorkspaceIn(t, t.TempDir(), n)
}

func faultWorkspaceIn(t *testing.T, ws string, n int) (_, prop string, before, after map[string]string) {
	t.Helper()
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("src/p%d/f%03d.txt", i%4, i)
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line of %s\n", name), 20)), 0o644)
		names = append(names, name)
	}
	os.WriteFile(filepath.Join(ws, "src/gone.txt"), []byte("to be deleted\n"), 0o644)
	before = tree(t, ws)
	code, out, errs := runCLI(t, append([]string{"sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "coder"}, append(names, "src/gone.txt")...)...)
	if code != exitOK {
		t.Fatalf("prepare: %s", errs)
	}
	var paths map[string]string
	json.Unmarshal([]byte(out), &paths)
	work := paths["workDir"]
	for i, name := range names {
		p := filepath.Join(work, name)
		b, _ := os.ReadFile(p)
		os.WriteFile(p, bytes.Replace(b, []byte("line"), []byte(fmt.Sprintf("LINE %d", i)), 3), 0o644)
	}
	os.Chmod(filepath.Join(work, names[0]), 0o755)
	os.Remove(filepath.Join(work, "src/gone.txt"))
	os.MkdirAll(filepath.Join(work, "src/new/deep"), 0o755)
	os.WriteFile(filepath.Join(work, "src/new/deep/added.txt"), []byte("added\n"), 0o644)
	if code, _, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "coder"); code != exitOK {
		t.Fatalf("create: %s", errs)
	}
	after = map[string]string{}
	for k, v := range before {
		after[k] = v
	}
	delete(after, "src/gone.txt")
	for i, name := range names {
		b, _ := os.ReadFile(filepath.Join(work, name))
		perm := "644"
		if i == 0 {
			perm = "755"
		}
		after[name] = perm + ":" + string(b)
	}
	after["src/new"], after["src/new/deep"] = "dir", "dir"
	after["src/new/deep/added.txt"] = "644:added\n"
	return ws, filepath.Join(ws, ".agentcanvas/sandboxes/r1/coder"), before, after
}

// leftovers lists what an apply must never leave: a journal, temporary files.
func leftovers(t *testing.T, ws string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(ws, p)
		if strings.HasSuffix(rel, ".tmp") || strings.Contains(filepath.Base(rel), ".agentcanvas-") || rel == ".agentcanvas/journal.json" ||
			strings.HasPrefix(rel, ".agentcanvas/tmp/") {
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// ledgerApplies counts the ledger's apply entries not reverted.
func ledgerApplies(t *testing.T, ws string) int {
	t.Helper()
	code, _, out, errs := runProc(t, nil, "proposal", "ledger", "--workspace", ws, "--json")
	if code != 0 {
		t.Fatalf("ledger: %s", errs)
	}
	var lg struct {
		Entries []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"entries"`
		Reverted map[string]string `json:"reverted"`
	}
	if err := json.Unmarshal([]byte(out), &lg); err != nil {
		t.Fatalf("ledger: %v\n%s", err, out)
	}
	n := 0
	for _, e := range lg.Entries {
		if e.Kind == "apply" && lg.Reverted[e.ID] == "" {
			n++
		}
	}
	return n
}

// recoverAndCheck runs the next command (the ledger, which recovers first) and checks the
// workspace is all-old or all-new with the ledger to match, nothing left behind, and that
// revert (or apply then revert) ends byte for byte at the original. It returns what the
// recovery said.
func recoverAndCheck(t *testing.T, ws, prop string, before, after map[string]string) (applied bool, notice string) {
	t.Helper()
	code, _, _, errs := runProc(t, nil, "proposal", "ledger", "--workspace", ws)
	if code != 0 {
		t.Fatalf("the next command failed: %s", errs)
	}
	notice = strings.TrimSpace(errs)
	if l := leftovers(t, ws); len(l) > 0 {
		t.Fatalf("left behind after recovery: %v (recovery said %q)", l, notice)
	}
	now := tree(t, ws)
	n := ledgerApplies(t, ws)
	switch {
	case sameTree(now, after) && n == 1:
		applied = true
	case sameTree(now, before) && n == 0:
		if code, _, _, errs := runProc(t, nil, "proposal", "apply", "--workspace", ws, prop); code != 0 {
			t.Fatalf("applying again after the recovery: %s", errs)
		}
		if !sameTree(tree(t, ws), after) {
			t.Fatal("applying again after the recovery did not give the proposal's tree")
		}
	default:
		t.Fatalf("after recovery (%q) the workspace is neither all-old nor all-new with the ledger to match (%d applies in the ledger; old %v, new %v)",
			notice, n, sameTree(now, before), sameTree(now, after))
	}
	if code, _, _, errs := runProc(t, nil, "proposal", "revert", "--workspace", ws, prop); code != 0 {
		t.Fatalf("revert: %s", errs)
	}
	if now := tree(t, ws); !sameTree(now, before) {
		t.Fatalf("revert did not restore the original byte for byte:\n%s", treeDiff(before, now))
	}
	return applied, notice
}

// Kill the apply (SIGKILL, by itself) at each of its steps in turn.
func TestApplyKilledAtEveryStepRecovers(t *testing.T) {
	const files = 6
	rolledBack, finished, steps := 0, 0, 0
	for k := 1; ; k++ {
		ws, prop, before, after := faultWorkspace(t, files)
		code, killed, _, errs := runProc(t, []string{"AGENTCANVAS_TEST_KILL_AT_STEP=" + fmt.Sprint(k)}, "proposal", "apply", "--workspace", ws, prop)
		if code == 0 {
			steps = k - 1
			break
		}
		if !killed {
			t.Fatalf("step %d: the apply failed instead of being killed: %s", k, errs)
		}
		applied, notice := recoverAndCheck(t, ws, prop, before, after)
		switch {
		case !applied && strings.Contains(notice, "an interrupted apply of coder's proposal (run r1) was rolled back"):
			rolledBack++
		case applied && strings.Contains(notice, "an interrupted apply of coder's proposal (run r1) was finished"):
			finished++
		case !applied && notice == "" && k <= 2: // killed before the journal was written: nothing to do
		default:
			t.Fatalf("step %d: the recovery said %q (applied: %v)", k, notice, applied)
		}
	}
	if steps < 2*files {
		t.Fatalf("only %d steps: the kill switch does not reach the workspace writes", steps)
	}
	if rolledBack == 0 || finished == 0 {
		t.Fatalf("%d steps: %d rolled back, %d finished; want both", steps, rolledBack, finished)
	}
	t.Logf("killed at each of %d steps: %d rolled back, %d finished, 0 partial", steps, rolledBack, finished)
}

// startUntilJournal starts the apply and returns once its journal exists (it is changing the
// workspace) or it has ended.
func startUntilJournal(t *testing.T, ws, prop string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	c := cli(nil, "proposal", "apply", "--workspace", ws, prop)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	for {
		if _, err := os.Stat(filepath.Join(ws, ".agentcanvas/journal.json")); err == nil {
			return c, done
		}
		select {
		case <-done:
			return c, done
		case <-time.After(200 * time.Microsecond):
		}
	}
}

// Kill the apply from another process at random moments while it changes the workspace.
func TestApplyKilledAtRandomRecovers(t *testing.T) {
	const trials, files = 10, 60
	ws, prop, _, _ := faultWorkspace(t, files)
	c, done := startUntilJournal(t, ws, prop)
	start := time.Now()
	<-done
	window := time.Since(start) // from the journal to the end of a clean apply
	if !c.ProcessState.Success() {
		t.Fatal("the clean apply failed")
	}
	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	counts := map[string]int{}
	for i := 0; i < trials; i++ {
		ws, prop, before, after := faultWorkspace(t, files)
		c, done := startUntilJournal(t, ws, prop)
		time.Sleep(time.Duration(r.Int63n(int64(window))))
		c.Process.Signal(syscall.SIGKILL)
		<-done
		applied, notice := recoverAndCheck(t, ws, prop, before, after)
		switch {
		case strings.Contains(notice, "rolled back"):
			counts["rolled back"]++
		case strings.Contains(notice, "finished"):
			counts["finished"]++
		case applied && notice == "": // it had finished (journal removed) when the kill came
			counts["done before the kill"]++
		default:
			t.Fatalf("killed with a journal, and the recovery said %q", notice)
		}
	}
	t.Logf("%d random kills while the apply changed %d files (window %v): %v, 0 partial", trials, files+2, window.Round(time.Millisecond), counts)
}

// The files an apply writes get exactly the bits the patch gives (644, 755, or the bits a
// modified file had), whatever the umask of the process that applies: under umask 077 as under
// 022 (where the apply skips the chmod it knows the umask made needless).
func TestApplyBitsWhateverTheUmask(t *testing.T) {
	for _, umask := range []string{"022", "077", "000"} {
		ws, prop, _, after := faultWorkspace(t, 3)
		c := exec.Command("sh", "-c", `umask `+umask+` && exec "$0" "$@"`, os.Args[0], "proposal", "apply", "--workspace", ws, prop)
		c.Env = append(os.Environ(), "AGENTCANVAS_TEST_AS_CLI=1")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("umask %s: %v\n%s", umask, err, out)
		}
		if now := tree(t, ws); !sameTree(now, after) {
			t.Fatalf("umask %s: the applied tree differs:\n%s", umask, treeDiff(after, now))
		}
	}
}
