package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/procalive"
)

// resumeRuntime makes dry-run agents unless the run overrides the backend to command:
// then they run SCRIPT.
const resumeRuntime = "runtime: {backendId: dry-run, command: [bash, SCRIPT], env: [MY_SECRET]}"

// A run interrupted by the end of its session and resumed without options is resumed as it
// was started: the same backend override and task (kept in its checkpoint, secrets not).
func TestResumedRunKeepsItsOptions(t *testing.T) {
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `cat > "`+dir+`/prompt.$AGENTCANVAS_AGENT_ID"
if [ -e "`+dir+`/asked" ]; then echo "ANSWER: done"; exit 0; fi
touch "`+dir+`/asked"
`+dbQuestion)
	ws, f := workspace(t, strings.ReplaceAll(pairFlow("", resumeRuntime, resumeRuntime, 1), "SCRIPT", agent))
	const secret = "s3cr3t-value-4242"
	// Only the scripted agent asks: a question means the backend override applied.
	m, info, asked := startAsking(t, ws, f, StartParams{Backend: "command", Task: "Fix the flaky test", Env: map[string]string{"MY_SECRET": secret}})
	m.Close()
	raw, err := os.ReadFile(filepath.Join(ws, RunsDir, info.RunID, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) {
		t.Fatalf("state.json holds the run's secret:\n%s", raw)
	}
	st, _ := ReadState(ws, info.RunID)
	if st.Backend != "command" || st.Task != "Fix the flaky test" {
		t.Fatalf("checkpoint options: backend %q task %q", st.Backend, st.Task)
	}

	// Resumed with no options: the scripted agents run again (not dry-run ones) on the task.
	var resumed []eventlog.Event
	m2 := &Manager{Limits: recording, Workspace: ws, Asked: func(r Request) { asked <- r }, Event: func(e eventlog.Event) {
		if e.Event == "run_resumed" || e.Event == "agent_started" {
			resumed = append(resumed, e)
		}
	}}
	res, err := m2.Start(f, StartParams{ResumeRunID: info.RunID, Env: map[string]string{"MY_SECRET": secret}})
	if err != nil {
		t.Fatal(err)
	}
	if out := answerAndWait(m2, asked, res.RunID); out.Status != StatusCompleted {
		t.Fatalf("resumed run = %+v", out)
	}
	if len(resumed) < 2 || resumed[0].Event != "run_resumed" || resumed[0].Fields["task"] != "Fix the flaky test" {
		t.Fatalf("resumed run's events: %+v", resumed)
	}
	for _, e := range resumed[1:] {
		if e.Fields["backend"] != "command" {
			t.Errorf("agent %v resumed with backend %v, want the run's override command", e.Fields["agent"], e.Fields["backend"])
		}
	}
	prompt, _ := os.ReadFile(filepath.Join(dir, "prompt.a"))
	if !strings.Contains(string(prompt), "Fix the flaky test") {
		t.Errorf("the resumed agent's prompt has not the run's task:\n%s", prompt)
	}
}

// A run recorded as running whose process id now belongs to another process (killed long
// ago, the id given out again) is dead, listed interrupted and resumable; while its own
// process runs it is not. Finished runs say why they cannot be resumed.
func TestResumableTellsAKilledRunFromALiveOne(t *testing.T) {
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	start, ok := procalive.StartTime(other.Process.Pid)
	if !ok {
		t.Skip("no process start times here")
	}
	ws := t.TempDir()
	write := func(id string, st State) {
		st.RunID, st.Flow = id, "f"
		if err := writeState(ws, &st, false); err != nil {
			t.Fatal(err)
		}
	}
	write("run_1", State{Status: StatusRunning, PID: other.Process.Pid, PIDStart: start})
	write("run_2", State{Status: StatusRunning, PID: other.Process.Pid, PIDStart: start + 1})
	write("run_3", State{Status: StatusStopped, Reason: ReasonStopped})
	write("run_4", State{Status: StatusStopped, Reason: "budget"})
	write("run_5", State{Status: StatusCompleted})
	states, _ := ListStates(ws)
	got := map[string]string{}
	for _, st := range states {
		err := Resumable(&st)
		got[st.RunID] = fmt.Sprintf("%s %v %v", st.Status, st.Resumable, err)
	}
	for id, want := range map[string]string{
		"run_1": "running false run run_1 is still running (process",
		"run_2": "interrupted true <nil>",
		"run_3": "stopped true <nil>",
		"run_4": "stopped false run run_4 was stopped by its spend limit",
		"run_5": "completed false run run_5 is completed; only a run stopped by a person or killed before its end can be resumed",
	} {
		if !strings.HasPrefix(got[id], want) {
			t.Errorf("%s: %q, want %q…", id, got[id], want)
		}
	}
}

// In the editor's session: a run the person stopped (Stop Run) is listed resumable and goes on
// when resumed, its completed interaction kept; a live run is not resumable.
func TestManagerResumesAStoppedRun(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	waiter := script(t, dir, "wait.sh", `cat >/dev/null
while [ ! -e "`+gate+`" ]; do sleep 0.05; done
echo done`)
	ws, f := workspace(t, `version: 0.2
agents:
  - {id: lead, role: orchestrator, runtime: {backendId: dry-run}}
  - {id: quick, role: worker, files: [src/a.ts], runtime: {backendId: dry-run}}
  - {id: waiter, role: worker, files: [src/a.ts], runtime: {backendId: command, command: [bash, `+waiter+`]}}
interactions:
  - {id: first, patternId: manager_worker, edges: [{source: lead, target: quick, data: {termination: {type: max_rounds, rounds: 1}}}]}
  - {id: then, patternId: manager_worker, dependsOn: [first], edges: [{source: lead, target: waiter, data: {termination: {type: max_rounds, rounds: 1}}}]}
`)
	started := make(chan string, 64)
	m := &Manager{Workspace: ws, Limits: recording, Event: func(ev eventlog.Event) {
		if ev.Event == "agent_started" {
			if a, _ := ev.Fields["agent"].(string); a != "" {
				started <- a
			}
		}
	}}
	defer m.Close()
	info, err := m.Start(f, StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	for a := range started {
		if a == "waiter" {
			break
		}
	}
	list := func() RunInfo {
		all, _ := m.List()
		for _, r := range all {
			if r.RunID == info.RunID {
				return r
			}
		}
		t.Fatalf("run %s not listed", info.RunID)
		return RunInfo{}
	}
	if r := list(); r.Resumable {
		t.Errorf("a live run is resumable: %+v", r)
	}
	m.Stop(info.RunID)
	if out, _ := m.Wait(info.RunID); out.Status != StatusStopped {
		t.Fatalf("stopped run: %+v", out)
	}
	if r := list(); !r.Resumable || r.Status != StatusStopped {
		t.Fatalf("the stopped run is not resumable: %+v", r)
	}
	os.WriteFile(gate, nil, 0o644)
	for len(started) > 0 {
		<-started
	}
	if _, err := m.Start(f, StartParams{ResumeRunID: info.RunID}); err != nil {
		t.Fatal(err)
	}
	out, _ := m.Wait(info.RunID)
	if out.Status != StatusCompleted || out.Interactions[0].Status != StatusCompleted {
		t.Fatalf("resumed: %+v", out)
	}
	for len(started) > 0 {
		if a := <-started; a == "quick" {
			t.Error("the completed interaction ran again")
		}
	}
}

// Two resumes of one run at once (two terminals, a terminal and the editor): one goes on, the
// other is refused before any agent starts.
func TestOneRunIsResumedOnceAtATime(t *testing.T) {
	ws, f := workspace(t, pairFlow("", "runtime: {backendId: dry-run}", "runtime: {backendId: dry-run}", 1))
	if err := writeState(ws, &State{RunID: "run_1", Flow: f.Name, Status: StatusStopped, Reason: ReasonStopped}, false); err != nil {
		t.Fatal(err)
	}
	other, err := lockResume(ws, "run_1") // another process's resume, under way
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(context.Background(), f, "run_1", Options{Workspace: ws}); err == nil || !strings.Contains(err.Error(), "run run_1 is being resumed by another process") {
		t.Fatalf("a second resume: %v", err)
	}
	other.Close()
	// One that read the run before another resumed it (its checkpoint moved on) is refused too.
	stale, _ := ReadState(ws, "run_1")
	moved := *stale
	moved.Updated = moved.Updated.Add(time.Second)
	writeState(ws, &moved, false)
	if _, err := Run(context.Background(), f, Options{Workspace: ws, Resume: stale}); err == nil || !strings.Contains(err.Error(), "changed while it was being resumed") {
		t.Fatalf("a resume of a stale read: %v", err)
	}
	out, err := Resume(context.Background(), f, "run_1", Options{Workspace: ws})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("the resume after it: %v %+v", err, out)
	}
}
