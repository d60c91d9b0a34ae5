//go:build unix

package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// folders lists a workspace's run and sandbox folders.
func folders(ws string) []string {
	var out []string
	for _, d := range []string{engine.RunsDir, sandbox.Dir} {
		es, _ := os.ReadDir(filepath.Join(ws, filepath.FromSlash(d)))
		for _, e := range es {
			out = append(out, d+"/"+e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// The fork command killed at every step of making a fork, through real processes: a fork cut
// short before its state is written is never listed, and the next fork command removes it and
// says so; one killed after is an interrupted run like any other. The parent is untouched
// throughout, and a last fork runs and is compared with its parent by proposal interdiff.
func TestRunForkKilledAtEveryStep(t *testing.T) {
	ws, file := runWorkspace(t, "manager-worker.yaml")
	if code, _, errs := runCLI(t, "run", "--json", "--dry-run", "--non-interactive", file); code != exitOK {
		t.Fatalf("the parent run: %d %s", code, errs)
	}
	states, _ := engine.ListStates(ws)
	parent := states[0].RunID
	before := folders(ws)
	for step := 1; step <= 5; step++ {
		code, killed, _, errs := runProc(t, []string{"AGENTCANVAS_TEST_KILL_FORK_AT=" + itoa(step)}, "run", "fork", "--workspace", ws, "--at", "2", "--non-interactive", "--json", parent)
		if !killed {
			t.Fatalf("step %d: not killed (exit %d): %s", step, code, errs)
		}
		listed, _ := engine.ListStates(ws)
		switch {
		case step < 5 && len(listed) != 1:
			t.Errorf("step %d: a fork cut short is listed: %+v", step, listed)
		case step == 5 && (len(listed) != 2 || listed[0].Status != engine.StatusInterrupted || listed[0].ForkOf == nil):
			t.Errorf("step %d: the fork whose state was written: %+v", step, listed)
		}
		code, out, errs := runCLI(t, "run", "fork", "--workspace", ws, "--at", "2", "--plan", parent)
		if code != exitOK || step < 5 && !strings.Contains(out, "which died while making it") {
			t.Errorf("step %d: the next fork command did not say it removed the half-made fork (%d):\n%s%s", step, code, out, errs)
		}
		after := folders(ws)
		if step < 5 && strings.Join(after, " ") != strings.Join(before, " ") {
			t.Errorf("step %d: left behind %v (before %v)", step, after, before)
		}
		if _, err := os.Stat(filepath.Join(ws, engine.RunsDir, listed[0].RunID, "forking")); step == 5 && err == nil {
			t.Errorf("step 5: the marker of a fork with a state was not removed")
		}
	}
	// The fork killed once its state was written is resumed as any run is: the same run goes on
	// to its end, still a fork of its parent, and the parent is not touched.
	listed, _ := engine.ListStates(ws)
	killedFork := listed[0]
	if !killedFork.Resumable {
		t.Fatalf("the fork killed after its state was written is not resumable: %+v", killedFork)
	}
	if code, _, errs := runCLI(t, "run", "--json", "--non-interactive", "--workspace", ws, "--resume", killedFork.RunID, file); code != exitOK {
		t.Fatalf("resuming the killed fork: %d %s", code, errs)
	}
	st, err := engine.ReadState(ws, killedFork.RunID)
	if err != nil || st.Status != engine.StatusCompleted || st.ForkOf == nil || st.ForkOf.RunID != parent || st.ForkOf.Turn != 2 {
		t.Errorf("the resumed fork: %+v %v", st, err)
	}
	if p, _ := engine.ReadState(ws, parent); p.Status != engine.StatusCompleted {
		t.Errorf("the parent after its fork was resumed: %+v", p)
	}
	code, out, errs := runCLI(t, "run", "fork", "--workspace", ws, "--at", "3", "--non-interactive", "--json", parent)
	if code != exitOK || !strings.Contains(errs, "proposal interdiff") {
		t.Fatalf("fork: %d\n%s", code, errs)
	}
	states, _ = engine.ListStates(ws)
	fork := states[0].RunID
	code, out, errs = runCLI(t, "proposal", "interdiff", "--workspace", ws, parent, fork)
	if code != exitOK || !strings.Contains(out, "the same in run") {
		t.Errorf("interdiff of the dry run and its fork (the dry-run backend does the same): %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "run", "fork", "--workspace", ws, "--at", "99", parent); code != exitFail || !strings.Contains(errs, "there is no turn 99") {
		t.Errorf("a turn that does not exist: %d %s", code, errs)
	}
	if code, _, _ := runCLI(t, "run", "fork", "--workspace", ws, parent); code != exitUsage {
		t.Errorf("no --at: %d", code)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }
