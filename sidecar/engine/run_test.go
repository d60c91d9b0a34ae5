package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/procalive"
)

// workspace makes a git workspace with one source file and the given flow.
func workspace(t *testing.T, flowYAML string) (string, *flow.Flow) {
	t.Helper()
	ws := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "src", "a.ts"), []byte("export const a = 1;\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "flows"), 0o755)
	file := filepath.Join(ws, "flows", "t.yaml")
	os.WriteFile(file, []byte(flowYAML), 0o644)
	f := flow.Parse(file, []byte(flowYAML))
	if len(f.Problems) > 0 {
		t.Fatalf("test flow has problems: %v", f.Problems)
	}
	return ws, f
}

// script writes an executable bash agent into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/usr/bin/env bash\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

type recorder struct {
	mu  sync.Mutex
	evs []eventlog.Event
}

func (r *recorder) sink(e eventlog.Event) { r.mu.Lock(); r.evs = append(r.evs, e); r.mu.Unlock() }

func (r *recorder) events(name string) []eventlog.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []eventlog.Event
	for _, e := range r.evs {
		if e.Event == name {
			out = append(out, e)
		}
	}
	return out
}

const twoStage = `version: 0.2
description: two interactions, the second after the first
agents:
  - {id: a, role: planner, runtime: {backendId: command, command: [bash, AGENT]}}
  - {id: b, role: reviewer, runtime: {backendId: command, command: [bash, AGENT]}}
  - {id: c, role: reviewer, runtime: {backendId: command, command: [bash, AGENT]}}
interactions:
  - id: first
    patternId: role_play_pair
    edges:
      - source: a
        target: b
        data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}
  - id: second
    patternId: role_play_pair
    dependsOn: [first]
    edges:
      - source: a
        target: c
        data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}
`

func TestRunOrderAndLog(t *testing.T) {
	agent := script(t, t.TempDir(), "agent.sh", `cat > /dev/null; echo "$AGENTCANVAS_INTERACTION_ID $AGENTCANVAS_AGENT_ID" >> "$(dirname "$0")/calls"; echo "ANSWER: ok from $AGENTCANVAS_AGENT_ID"`+"\n")
	ws, f := workspace(t, strings.ReplaceAll(twoStage, "AGENT", agent))
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted || len(out.Interactions) != 2 {
		t.Fatalf("outcome = %+v", out)
	}
	calls, _ := os.ReadFile(filepath.Join(filepath.Dir(agent), "calls"))
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	firstEnd, secondStart := -1, -1
	for i, l := range lines {
		if strings.HasPrefix(l, "first") {
			firstEnd = i
		}
		if strings.HasPrefix(l, "second") && secondStart < 0 {
			secondStart = i
		}
	}
	if firstEnd < 0 || secondStart < 0 || secondStart < firstEnd {
		t.Fatalf("dependsOn not honoured: calls = %q", lines)
	}
	term := rec.events("terminated")
	if len(term) != 2 || term[0].InteractionID != "first" || term[0].Fields["reason"] != "max_rounds" {
		t.Fatalf("terminated events = %+v", term)
	}
	// The JSONL log on disk holds the same events, readable back.
	logged, err := eventlog.ReadAll(ws, f.Name)
	if err != nil || len(logged) != len(rec.evs) {
		t.Fatalf("log has %d events (%v), sink saw %d", len(logged), err, len(rec.evs))
	}
	st, err := ReadState(ws, out.RunID)
	if err != nil || st.Status != StatusCompleted || len(st.Interactions) != 2 {
		t.Fatalf("state = %+v, %v", st, err)
	}
	mem, _ := os.ReadFile(filepath.Join(ws, MemoryDir, time.Now().UTC().Format("2006-01-02")+".md"))
	if !strings.Contains(string(mem), out.RunID) {
		t.Errorf("daily memory note does not mention the run:\n%s", mem)
	}
}

func TestFailedDependencySkips(t *testing.T) {
	agent := script(t, t.TempDir(), "agent.sh", "cat >/dev/null; exit 3\n")
	ws, f := workspace(t, strings.ReplaceAll(twoStage, "AGENT", agent))
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusFailed || out.Interactions[0].Status != StatusFailed || out.Interactions[1].Status != StatusSkipped {
		t.Fatalf("outcome = %+v", out)
	}
	if !strings.Contains(out.Interactions[0].Error, "agent a failed") {
		t.Errorf("error does not name the agent: %q", out.Interactions[0].Error)
	}
}

func TestInvalidFlowRefused(t *testing.T) {
	src := "version: 0.2\nagents:\n  - {id: a}\n  - {id: b}\ninteractions:\n  - id: i1\n    patternId: role_play_pair\n    edges:\n      - {source: a, target: nobody}\n"
	f := flow.Parse("bad.yaml", []byte(src))
	_, err := Run(context.Background(), f, Options{Limits: recording, Workspace: t.TempDir()})
	var inv *InvalidFlowError
	if !errors.As(err, &inv) || !errors.Is(err, ErrInvalidFlow) {
		t.Fatalf("err = %v", err)
	}
}

func TestScheduleCycle(t *testing.T) {
	ins := []*flow.Interaction{{ID: "x", DependsOn: []string{"y"}}, {ID: "y", DependsOn: []string{"x"}}}
	if _, err := schedule(ins); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("err = %v", err)
	}
}

func TestQuestionAnsweredThroughManager(t *testing.T) {
	agent := script(t, t.TempDir(), "agent.sh", `cat > /dev/null
if [ -n "$ANSWERED" ] || grep -q "db" "$(dirname "$0")/seen" 2>/dev/null; then echo "ANSWER: done"; exit 0; fi
echo "[USER_QUESTION]"
echo "category: choice"
echo "question: Which database?"
echo "options:"
echo "  - postgres"
echo "  - sqlite"
echo "default: sqlite"
echo "required: true"
echo "[/USER_QUESTION]"
echo db > "$(dirname "$0")/seen"
`)
	ws, f := workspace(t, strings.ReplaceAll(twoStage, "AGENT", agent))
	asked := make(chan Request, 4)
	m := &Manager{Limits: recording, Workspace: ws, Asked: func(r Request) { asked <- r }}
	info, err := m.Start(f, StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	var q Request
	select {
	case q = <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("no question reached the manager")
	}
	if q.Field("question") != "Which database?" || len(q.Options()) != 2 {
		t.Fatalf("question = %+v", q)
	}
	runs, _ := m.List()
	if len(runs) != 1 || runs[0].Status != StatusWaiting || len(runs[0].Pending) != 1 {
		t.Fatalf("listRuns while waiting = %+v", runs)
	}
	if err := m.Answer(info.RunID, q.ID, "postgres"); err != nil {
		t.Fatal(err)
	}
	out, _ := m.Wait(info.RunID)
	if out.Status != StatusCompleted {
		t.Fatalf("outcome = %+v", out)
	}
	if err := m.Answer(info.RunID, q.ID, "again"); err == nil {
		t.Error("answering twice must fail")
	}
}

func TestNonInteractiveQuestionTakesDefaultOrFails(t *testing.T) {
	q := Request{Kind: "question", Fields: map[string]any{"question": "Which?", "default": "b"}}
	if r, err := (NonInteractive{}).Ask(context.Background(), q, nil); err != nil || r.Value != "b" {
		t.Errorf("default: %+v %v", r, err)
	}
	q.Fields["default"] = ""
	if _, err := (NonInteractive{}).Ask(context.Background(), q, nil); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("no default: %v", err)
	}
	if r, _ := (NonInteractive{Answers: map[string]string{"Which?": "c"}}).Ask(context.Background(), q, nil); r.Value != "c" {
		t.Errorf("answers file by text: %+v", r)
	}
	d := Request{Kind: "dependency", Fields: map[string]any{"name": "API_KEY"}}
	if r, _ := (NonInteractive{}).Ask(context.Background(), d, nil); !r.Reject {
		t.Errorf("dependency must be rejected without a value: %+v", r)
	}
}

func TestTerminalAsksAndPicksOption(t *testing.T) {
	var out strings.Builder
	term := &Terminal{R: strings.NewReader("2\n"), W: &out}
	r, err := term.Ask(context.Background(), Request{Kind: "question", AgentID: "a", Fields: map[string]any{"question": "Which?", "options": []any{"x", "y"}}}, nil)
	if err != nil || r.Value != "y" || !strings.Contains(out.String(), "2) y") {
		t.Fatalf("r=%+v err=%v out=%q", r, err, out.String())
	}
}

func TestStopEndsRunAndAgents(t *testing.T) {
	agent := script(t, t.TempDir(), "agent.sh", "cat >/dev/null; echo $$ >> \"$(dirname \"$0\")/pids\"; sleep 300\n")
	ws, f := workspace(t, strings.ReplaceAll(twoStage, "AGENT", agent))
	m := &Manager{Limits: recording, Workspace: ws}
	info, err := m.Start(f, StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(filepath.Dir(agent), "pids")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, _ := os.ReadFile(pidFile); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("agent never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := m.Stop(info.RunID); err != nil {
		t.Fatal(err)
	}
	out, _ := m.Wait(info.RunID)
	if out.Status != StatusStopped {
		t.Fatalf("status = %s", out.Status)
	}
	b, _ := os.ReadFile(pidFile)
	for _, p := range strings.Fields(string(b)) {
		var pid int
		fmt.Sscan(p, &pid)
		if procalive.Alive(pid) && !zombie(pid) {
			t.Errorf("agent process %d survived the stop", pid)
		}
	}
}

// zombie reports a process that has exited but not been reaped (it holds no resources).
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

// A session that ends (a window reload) while an agent waits for the user leaves the run
// interrupted, not stopped: its checkpoint keeps status running and the question, and a new
// session resumes it under the same run id.
func TestSessionEndLeavesRunResumable(t *testing.T) {
	agent := script(t, t.TempDir(), "agent.sh", `cat > /dev/null
if grep -q "db" "$(dirname "$0")/seen" 2>/dev/null; then echo "ANSWER: done"; exit 0; fi
`+dbQuestion+`echo db > "$(dirname "$0")/seen"
`)
	ws, f := workspace(t, strings.ReplaceAll(twoStage, "AGENT", agent))
	m, info, asked := startAsking(t, ws, f, StartParams{})
	m.Close()
	st, err := ReadState(ws, info.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != StatusRunning || st.Reason != "" || !st.Finished.IsZero() {
		t.Fatalf("checkpoint after the session ended: status %q reason %q finished %v; want running", st.Status, st.Reason, st.Finished)
	}
	if len(st.Pending) != 1 || st.Pending[0].Field("question") != "Which database?" {
		t.Fatalf("checkpoint's pending = %+v, want the question", st.Pending)
	}

	// The next session: this process is alive, so the run reads as running, not interrupted;
	// the manager still resumes it (the same pid is allowed).
	// The interrupted interaction runs again, so its agent asks again; this time it is answered.
	m2 := &Manager{Limits: recording, Workspace: ws, Asked: func(r Request) { asked <- r }}
	res, err := m2.Start(f, StartParams{ResumeRunID: info.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID != info.RunID {
		t.Fatalf("resumed as %s, want %s", res.RunID, info.RunID)
	}
	if out := answerAndWait(m2, asked, res.RunID); out.Status != StatusCompleted {
		t.Fatalf("resumed run = %+v", out)
	}
	if st, _ := ReadState(ws, info.RunID); st.Status != StatusCompleted || len(st.Pending) != 0 {
		t.Fatalf("checkpoint after resuming = %s, %d pending", st.Status, len(st.Pending))
	}
}

// listRuns shows an interrupted run with the requests it was waiting on at its last
// checkpoint, and the checkpoint's time.
func TestListShowsInterruptedRunsPending(t *testing.T) {
	ws := t.TempDir()
	st := &State{RunID: "run_20261122_010203_abcd", Flow: "ask", FlowFile: "flows/ask.yaml", Status: StatusWaiting, PID: deadPID(t),
		Started: time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC), Updated: time.Date(2026, 11, 22, 1, 2, 9, 0, time.UTC),
		Pending: []Request{{RunID: "run_20261122_010203_abcd", AgentID: "asker", ID: "q1", Kind: "question", Fields: map[string]any{"question": "Which?"}}}}
	if err := writeState(ws, st, true); err != nil {
		t.Fatal(err)
	}
	runs, err := (&Manager{Workspace: ws}).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != StatusInterrupted || len(runs[0].Pending) != 1 || runs[0].Pending[0].ID != "q1" || !runs[0].Updated.Equal(st.Updated) {
		t.Fatalf("listRuns = %+v", runs)
	}
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// dbQuestion is a command agent's lines asking the manager tests' question.
const dbQuestion = `echo "[USER_QUESTION]"
echo "category: choice"
echo "question: Which database?"
echo "options:"
echo "  - postgres"
echo "  - sqlite"
echo "required: true"
echo "[/USER_QUESTION]"
`

// answerAndWait answers every question asked (postgres) until the run ends, and returns
// its outcome; asked is closed.
func answerAndWait(m *Manager, asked chan Request, runID string) *Outcome {
	go func() {
		for q := range asked {
			_ = m.Answer(q.RunID, q.ID, "postgres")
		}
	}()
	out, _ := m.Wait(runID)
	close(asked)
	return out
}

// startAsking starts f through a new manager and waits for its first question; asked
// receives the questions of that manager (and of any other given it).
func startAsking(t *testing.T, ws string, f *flow.Flow, p StartParams) (*Manager, RunInfo, chan Request) {
	t.Helper()
	asked := make(chan Request, 4)
	m := &Manager{Limits: recording, Workspace: ws, Asked: func(r Request) { asked <- r }}
	info, err := m.Start(f, p)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("no question reached the manager")
	}
	return m, info, asked
}
