package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/procalive"
)

// TestMain lets the crash test re-execute this test binary as a stand-alone engine.
func TestMain(m *testing.M) {
	if file := os.Getenv("AC_ENGINE_HELPER_FLOW"); file != "" {
		src, _ := os.ReadFile(file)
		f := flow.Parse(file, src)
		_, err := Run(context.Background(), f, Options{Limits: recording, Workspace: os.Getenv("AC_ENGINE_HELPER_WS")})
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestCrashedRunIsListedWithCheckpoint(t *testing.T) {
	agentDir := t.TempDir()
	agent := script(t, agentDir, "agent.sh", "cat >/dev/null; echo $$ >> \""+agentDir+"/pids\"; sleep 300\n")
	ws, f := workspace(t, strings.ReplaceAll(twoStage, "AGENT", agent))
	// Kill the engine once its agent runs: it has checkpointed and logged by then.
	killEngineWhen(t, f, ws, filepath.Join(agentDir, "pids"))

	states, err := ListStates(ws)
	if err != nil || len(states) != 1 {
		t.Fatalf("states = %+v, %v", states, err)
	}
	st := states[0]
	if st.Status != StatusInterrupted || st.Flow != "t" || len(st.Interactions) != 2 {
		t.Fatalf("crashed run = %+v", st)
	}
	if st.Interactions[0].Status != StatusRunning || st.Interactions[1].Status != "pending" {
		t.Fatalf("crashed run's interactions: %+v, want the first running and the second pending", st.Interactions)
	}
	evs, err := eventlog.ReadAll(ws, "t")
	if err != nil || len(evs) < 2 || evs[0].Event != "run_started" {
		t.Fatalf("log after the crash: %d events, %v", len(evs), err)
	}
	// The log is written out before an agent starts: nothing the engine logged up to the
	// running agent's start is lost with the engine.
	if last := evs[len(evs)-1]; last.Event != "agent_started" {
		t.Fatalf("the log after the crash ends with %s, want the running agent's agent_started", last.Event)
	}
	// The agent does not outlive the engine (the runtime's guardian kills it).
	b, _ := os.ReadFile(filepath.Join(agentDir, "pids"))
	var pid int
	for _, p := range strings.Fields(string(b)) {
		pid = atoi(p)
	}
	gone := time.Now().Add(10 * time.Second)
	for procalive.Alive(pid) && !zombie(pid) && time.Now().Before(gone) {
		time.Sleep(20 * time.Millisecond)
	}
	if procalive.Alive(pid) && !zombie(pid) {
		t.Errorf("agent %d outlived the killed engine", pid)
	}
	// It can be closed, and is then stopped.
	if err := CloseRun(ws, st.RunID); err != nil {
		t.Fatal(err)
	}
	if st2, _ := ReadState(ws, st.RunID); st2.Status != StatusStopped {
		t.Errorf("after close: %s", st2.Status)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// TestResumeInterruptedRun: a run killed during its second interaction is resumed under the
// same id; the first interaction is kept, not run again, and the second completes.
func TestResumeInterruptedRun(t *testing.T) {
	agentDir := t.TempDir()
	agent := script(t, agentDir, "agent.sh", `cat >/dev/null
echo "$AGENTCANVAS_INTERACTION_ID" >> "`+agentDir+`/calls"
if [ "$AGENTCANVAS_INTERACTION_ID" = second ] && [ ! -e "`+agentDir+`/resumed" ]; then echo $$ >> "`+agentDir+`/pids"; sleep 300; fi
echo "ANSWER: ok"
`)
	ws, f := workspace(t, strings.ReplaceAll(twoStage, "AGENT", agent))
	killEngineWhen(t, f, ws, filepath.Join(agentDir, "pids"))
	states, _ := ListStates(ws)
	if len(states) != 1 || states[0].Status != StatusInterrupted {
		t.Fatalf("states = %+v", states)
	}
	before, _ := os.ReadFile(filepath.Join(agentDir, "calls"))
	firstCalls := strings.Count(string(before), "first")

	os.WriteFile(filepath.Join(agentDir, "resumed"), nil, 0o644)
	out, err := Resume(context.Background(), f, states[0].RunID, Options{Limits: recording, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if out.RunID != states[0].RunID || out.Status != StatusCompleted || out.Interactions[0].Status != StatusCompleted || out.Interactions[1].Status != StatusCompleted {
		t.Fatalf("resumed outcome = %+v", out)
	}
	after, _ := os.ReadFile(filepath.Join(agentDir, "calls"))
	if n := strings.Count(string(after), "first"); n != firstCalls {
		t.Errorf("the completed interaction ran again: %d calls before, %d after", firstCalls, n)
	}
	if _, err := Resume(context.Background(), f, out.RunID, Options{Limits: recording, Workspace: ws}); err == nil {
		t.Error("a finished run must not be resumed")
	}
	evs, _ := eventlog.ReadAll(ws, "t")
	resumed := 0
	for _, e := range evs {
		if e.Event == "run_resumed" {
			resumed++
		}
	}
	if resumed != 1 {
		t.Errorf("%d run_resumed events", resumed)
	}
}

// killEngineWhen runs the flow in a separate engine process (this test binary, see TestMain)
// and SIGKILLs it as soon as the file marker has content.
func killEngineWhen(t *testing.T, f *flow.Flow, ws, marker string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AC_ENGINE_HELPER_FLOW="+f.File, "AC_ENGINE_HELPER_WS="+ws)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, _ := os.ReadFile(marker); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the engine never got to its agent")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// A round checkpoint that would record nothing new is not written (the file stays the same
// one); one that records something new is, atomically (a new file renamed over the old).
func TestRoundCheckpointWrittenOnlyWhenChanged(t *testing.T) {
	ws, f := workspace(t, strings.ReplaceAll(twoStage, "AGENT", "true"))
	r, err := newRun(f, Options{Limits: recording, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	file := filepath.Join(ws, RunsDir, r.id, "state.json")
	stat := func() os.FileInfo {
		t.Helper()
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	r.checkpoint()
	before := stat()
	r.checkpointRound()
	if !os.SameFile(before, stat()) {
		t.Fatal("an unchanged round rewrote state.json")
	}
	r.mu.Lock()
	r.proposals = append(r.proposals, ".agentcanvas/sandboxes/x/a/proposal/proposal.json")
	r.mu.Unlock()
	r.checkpointRound()
	if os.SameFile(before, stat()) {
		t.Fatal("a round with a new proposal did not rewrite state.json")
	}
	if st, err := ReadState(ws, r.id); err != nil || len(st.Proposals) != 1 {
		t.Fatalf("state after the round: %+v %v", st, err)
	}
}
