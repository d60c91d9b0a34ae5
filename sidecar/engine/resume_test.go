package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// resumeFlow's agents are dry-run agents unless the run overrides the backend to command:
// then they run SCRIPT.
const resumeFlow = `version: 0.2
agents:
  - {id: a, role: planner, runtime: {backendId: dry-run, command: [bash, SCRIPT], env: [MY_SECRET]}}
  - {id: b, role: reviewer, runtime: {backendId: dry-run, command: [bash, SCRIPT], env: [MY_SECRET]}}
interactions:
  - id: i1
    patternId: role_play_pair
    edges:
      - source: a
        target: b
        data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}
`

// A run interrupted by the end of its session and resumed without options is resumed as it
// was started: the same backend override and task (kept in its checkpoint, secrets not).
func TestResumedRunKeepsItsOptions(t *testing.T) {
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `cat > "`+dir+`/prompt.$AGENTCANVAS_AGENT_ID"
if [ -e "`+dir+`/asked" ]; then echo "ANSWER: done"; exit 0; fi
touch "`+dir+`/asked"
echo "[USER_QUESTION]"
echo "category: choice"
echo "question: Which database?"
echo "options:"
echo "  - postgres"
echo "  - sqlite"
echo "required: true"
echo "[/USER_QUESTION]"
`)
	ws, f := workspace(t, strings.ReplaceAll(resumeFlow, "SCRIPT", agent))
	const secret = "s3cr3t-value-4242"
	asked := make(chan Request, 4)
	m := &Manager{Workspace: ws, Asked: func(r Request) { asked <- r }}
	info, err := m.Start(f, StartParams{Backend: "command", Task: "Fix the flaky test", Env: map[string]string{"MY_SECRET": secret}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the scripted agent never asked (was the backend override applied?)")
	}
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
	m2 := &Manager{Workspace: ws, Asked: func(r Request) { asked <- r }, Event: func(e eventlog.Event) {
		if e.Event == "run_resumed" || e.Event == "agent_started" {
			resumed = append(resumed, e)
		}
	}}
	res, err := m2.Start(f, StartParams{ResumeRunID: info.RunID, Env: map[string]string{"MY_SECRET": secret}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for q := range asked {
			_ = m2.Answer(q.RunID, q.ID, "postgres")
		}
	}()
	out, _ := m2.Wait(res.RunID)
	close(asked)
	if out.Status != StatusCompleted {
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
