package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
)

// resumeFlow has two interactions: first (dry-run, quick) and then a worker that waits until
// the file gate exists, so a test can stop or kill the run while it waits.
func resumeFlow(t *testing.T) (ws, file, gate string) {
	t.Helper()
	ws = t.TempDir()
	gate = filepath.Join(t.TempDir(), "gate")
	os.MkdirAll(filepath.Join(ws, "flows"), 0o755)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	file = filepath.Join(ws, "flows", "two.yaml")
	os.WriteFile(file, []byte(fmt.Sprintf(`version: 0.2
name: two
agents:
  - {id: lead, role: orchestrator, runtime: {backendId: dry-run}}
  - {id: quick, role: worker, files: [a.txt], runtime: {backendId: dry-run}}
  - {id: waiter, role: worker, files: [a.txt], runtime: {backendId: command, command: [bash, -c, 'while [ ! -e %q ]; do sleep 0.05; done; echo done']}}
interactions:
  - id: first
    patternId: manager_worker
    edges: [{source: lead, target: quick, data: {termination: {type: max_rounds, rounds: 1}}}]
  - id: then
    patternId: manager_worker
    dependsOn: [first]
    edges: [{source: lead, target: waiter, data: {termination: {type: max_rounds, rounds: 1}}}]
`, gate)), 0o644)
	return ws, file, gate
}

// startUntilWaiting starts `run --json` as its own process and returns once the waiting
// worker has started; wait ends it and returns its exit code and stderr.
func startUntilWaiting(t *testing.T, args ...string) (pid int, runID string, wait func() (int, string)) {
	t.Helper()
	c := cli(nil, append([]string{"run", "--json", "--non-interactive", "--confine", "off"}, args...)...)
	stdout, _ := c.StdoutPipe()
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var ev map[string]any
		json.Unmarshal(sc.Bytes(), &ev)
		if ev["event"] == "agent_started" && ev["agent"] == "waiter" {
			runID, _ = ev["runId"].(string)
			break
		}
	}
	if runID == "" {
		c.Wait()
		t.Fatalf("the waiting worker never started: %s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	return c.Process.Pid, runID, func() (int, string) {
		c.Wait()
		return c.ProcessState.ExitCode(), stderr.String()
	}
}

// A run stopped by the person (Ctrl-C) and a run killed (its process gone, its state left
// "running") can both be resumed: the interaction each completed is kept, the other runs
// again under the same run id. A new run of the same flow names the newest unfinished one
// and the command that resumes it; a completed run cannot be resumed.
func TestStoppedAndKilledRunsResume(t *testing.T) {
	ws, file, gate := resumeFlow(t)

	pid, stopped, wait := startUntilWaiting(t, file)
	syscall.Kill(pid, syscall.SIGINT)
	code, e := wait()
	if code != exitFail || !strings.Contains(e, "resume: ") || !strings.Contains(e, "run --resume "+stopped+" ") {
		t.Fatalf("stopped run: exit %d\n%s", code, e)
	}
	if st, _ := engine.ReadState(ws, stopped); st.Status != engine.StatusStopped || engine.Resumable(st) != nil {
		t.Fatalf("stopped run: %+v, resumable: %v", st, engine.Resumable(st))
	}

	pid, killed, wait := startUntilWaiting(t, file)
	syscall.Kill(pid, syscall.SIGKILL)
	wait()
	if st, _ := engine.ReadState(ws, killed); st.Status != engine.StatusRunning || engine.Resumable(st) != nil {
		t.Fatalf("killed run: %+v, resumable: %v", st, engine.Resumable(st))
	}

	os.WriteFile(gate, nil, 0o644)
	code, _, o, e := runProc(t, nil, "run", "--non-interactive", "--confine", "off", file)
	if code != exitOK || !strings.Contains(o, "run "+killed+" of this flow ended before it finished (its process is gone), 1 of 2 interactions done; this is a new run. To go on with that one instead: ") || !strings.Contains(o, "run --resume "+killed+" ") {
		t.Fatalf("a new run does not name the unfinished one: exit %d\n%s\n%s", code, o, e)
	}
	for _, id := range []string{killed, stopped} {
		code, _, out, e := runProc(t, nil, "run", "--json", "--non-interactive", "--confine", "off", "--resume", id, file)
		if code != exitOK || !strings.Contains(out, `"event":"run_resumed"`) || strings.Contains(out, `"agent":"quick"`) || !strings.Contains(out, `"agent":"waiter"`) {
			t.Fatalf("resume %s: exit %d (the completed interaction must not run again)\n%s\n%s", id, code, out, e)
		}
		if st, _ := engine.ReadState(ws, id); st.Status != engine.StatusCompleted {
			t.Errorf("resumed %s: %s", id, st.Status)
		}
	}
	code, _, _, e = runProc(t, nil, "run", "--resume", stopped, file)
	if code != exitUsage || !strings.Contains(e, "is completed; only a run stopped by a person or killed before its end can be resumed") {
		t.Errorf("resuming a completed run: exit %d\n%s", code, e)
	}
}
