package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Runs from the editor, on the real binary: the run engine behind the run methods.

// A dry run from the editor: events stream as runEvent, status lists the running flow,
// listRuns shows the outcome.
func TestRunsOnTheBinary(t *testing.T) {
	root, uri := workspace(t, "team.yaml", goodFlow)
	c := startBinary(t)
	c.initialize(root)
	c.waitNote("agentcanvas/status", nil)
	var info struct{ RunID, Flow, Status string }
	c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri, "dryRun": true, "task": "say hello"}, &info)
	if info.RunID == "" || info.Flow != "team" {
		t.Fatalf("startRun: %+v", info)
	}
	c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"event":"run_started"`) && strings.Contains(string(p), info.RunID)
	})
	c.waitNote("agentcanvas/status", func(p json.RawMessage) bool { return strings.Contains(string(p), `"runningFlows":["team"]`) })
	fin := c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"event":"run_finished"`)
	})
	c.waitNote("agentcanvas/status", func(p json.RawMessage) bool { return strings.Contains(string(p), `"runningFlows":[]`) })
	// The engine records the outcome just after it sends run_finished: wait for it.
	var runs []struct{ RunID, Status string }
	for end := time.Now().Add(deadline); ; {
		c.mustCall("agentcanvas/listRuns", nil, &runs)
		if len(runs) != 1 || runs[0].Status != "running" || time.Now().After(end) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(runs) != 1 || runs[0].RunID != info.RunID || runs[0].Status != "completed" {
		t.Errorf("listRuns after the run: %+v (run_finished: %s)", runs, fin)
	}
	// The run's events are in the log too.
	var logs queryLogsResult
	c.mustCall("agentcanvas/queryLogs", map[string]any{"flow": "team", "runId": info.RunID}, &logs)
	if len(logs.Events) == 0 || logs.Events[0].Event != "run_started" {
		t.Errorf("queryLogs: %+v", logs.Events)
	}
	// A flow with errors is refused before anything starts; unknown runs and requests too.
	bad := strings.Replace(goodFlow, "target: a2", "target: nobody", 1)
	c.open(uri, bad, 1)
	if _, err := c.call("agentcanvas/startRun", map[string]any{"uri": uri, "dryRun": true}); err == nil || err.Code != int(CodeRequestFailed) || !strings.Contains(err.Message, "has errors") {
		t.Errorf("startRun of a broken flow: %v", err)
	}
	if _, err := c.call("agentcanvas/stopRun", map[string]any{"runId": "run_nope"}); err == nil || err.Code != int(CodeRequestFailed) {
		t.Errorf("stopRun of an unknown run: %v", err)
	}
	if _, err := c.call("agentcanvas/answerQuestion", map[string]any{"runId": info.RunID, "questionId": "q9", "answer": "x"}); err == nil || err.Code != int(CodeRequestFailed) {
		t.Errorf("answerQuestion with no pending question: %v", err)
	}
	c.shutdownExit()
}

// pairFlow is a role_play_pair flow of a (planner) and b (reviewer), each running the command
// agent AGENT, for one round.
const pairFlow = `version: "1.0"
agents:
  - {id: a, role: planner, runtime: {backendId: command, command: [bash, AGENT]}}
  - {id: b, role: reviewer, runtime: {backendId: command, command: [bash, AGENT]}}
interactions:
  - id: first
    patternId: role_play_pair
    edges:
      - source: a
        target: b
        data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}
`

// commandAgent writes a bash agent script (the command backend runs it) and returns its path;
// the script's folder is the test's scratch space.
// recording are the settings of tests whose agents record what they did beside their script,
// outside their sandboxes: confinement would refuse that, so they run unconfined.
var recording = map[string]any{"confinement": "off"}

func commandAgent(t *testing.T, script string) string {
	t.Helper()
	agent := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return agent
}

// A person answers an agent's question from the editor: the question arrives as a runEvent,
// answerQuestion resumes the agent, the run completes.
func TestQuestionAnsweredFromTheEditor(t *testing.T) {
	script := `cat > /dev/null
if grep -q db "$(dirname "$0")/seen" 2>/dev/null; then echo "ANSWER: done"; exit 0; fi
echo "[USER_QUESTION]"
echo "category: choice"
echo "question: Which database?"
echo "options:"
echo "  - postgres"
echo "  - sqlite"
echo "required: true"
echo "[/USER_QUESTION]"
echo db > "$(dirname "$0")/seen"
`
	agent := commandAgent(t, script)
	root, uri := workspace(t, "ask.yaml", strings.ReplaceAll(pairFlow, "AGENT", agent))
	c := startBinary(t)
	c.initializeWith(root, recording) // its agent records into its own folder
	var info struct{ RunID string }
	c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri}, &info)
	// Answer on the question_asked event, as the extension does: the request takes its
	// answer from then on.
	raw := c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"event":"question_asked"`)
	})
	var ev struct {
		Flow   string         `json:"flow"`
		RunID  string         `json:"runId"`
		ID     string         `json:"id"`
		Fields map[string]any `json:"fields"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil || ev.ID == "" || ev.RunID != info.RunID || ev.Flow != "ask" || ev.Fields["question"] != "Which database?" {
		t.Fatalf("question_asked: %s (%v)", raw, err)
	}
	var runs []struct {
		Status  string
		Pending []struct{ ID string }
	}
	c.mustCall("agentcanvas/listRuns", nil, &runs)
	if len(runs) != 1 || runs[0].Status != "waiting" || len(runs[0].Pending) != 1 {
		t.Errorf("listRuns while waiting: %+v", runs)
	}
	c.mustCall("agentcanvas/answerQuestion", map[string]any{"runId": info.RunID, "questionId": ev.ID, "answer": "postgres"}, nil)
	fin := c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool { return strings.Contains(string(p), `"event":"run_finished"`) })
	if !strings.Contains(string(fin), `"status":"completed"`) {
		t.Errorf("run_finished: %s", fin)
	}
	if _, err := c.call("agentcanvas/answerQuestion", map[string]any{"runId": info.RunID, "questionId": ev.ID, "answer": "again"}); err == nil {
		t.Error("a second answer was accepted")
	}
	c.shutdownExit()
}

// A secret provided from the editor reaches the agent and nothing else: not the log, not the
// run's state, not a notification, not the sidecar's stderr.
func TestDependencyProvidedFromTheEditor(t *testing.T) {
	script := `cat > /dev/null
if [ -n "$MY_TOKEN" ]; then echo "$MY_TOKEN" > "$(dirname "$0")/got"; echo "ANSWER: done"; exit 0; fi
echo "[DEPENDENCY_REQUEST]"
echo "type: api_key"
echo "name: MY_TOKEN"
echo "description: the token for the test service"
echo "required: true"
echo "[/DEPENDENCY_REQUEST]"
`
	agent := commandAgent(t, script)
	dir := filepath.Dir(agent)
	text := strings.ReplaceAll(pairFlow, "command: [bash, AGENT]}", "command: [bash, AGENT], env: [MY_TOKEN]}")
	root, uri := workspace(t, "dep.yaml", strings.ReplaceAll(text, "AGENT", agent))
	c := startBinary(t)
	c.initializeWith(root, recording) // its agent records into its own folder
	var info struct{ RunID string }
	c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri}, &info)
	defer func() {
		if t.Failed() {
			c.mu.Lock()
			for _, m := range c.log {
				t.Logf("%s %.300s", m.Method, m.Params)
			}
			c.mu.Unlock()
		}
	}()
	// Each agent asks for the token (a value reaches only the agent it was given to).
	const secret = "tok-5ecret-value-4242"
	var fin json.RawMessage
	for provided := 0; fin == nil; {
		raw := c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
			return strings.Contains(string(p), `"event":"dependency_requested"`) || strings.Contains(string(p), `"event":"run_finished"`)
		})
		var ev struct {
			Event string `json:"event"`
			ID    string `json:"id"`
		}
		_ = json.Unmarshal(raw, &ev)
		if ev.Event == "run_finished" {
			fin = raw
			break
		}
		if provided > 4 {
			t.Fatalf("dependency_requested: %s", raw)
		}
		c.mustCall("agentcanvas/provideDependency", map[string]any{"runId": info.RunID, "requestId": ev.ID, "value": secret}, nil)
		provided++
	}
	if !strings.Contains(string(fin), `"status":"completed"`) {
		t.Errorf("run_finished: %s", fin)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "got"))
	if strings.TrimSpace(string(got)) != secret {
		t.Errorf("the agent did not get the value (got %q); run_finished: %s", got, fin)
	}
	c.shutdownExit()
	c.waitExit()
	// Nowhere else.
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
				t.Errorf("the secret was written to %s", p)
			}
		}
		return nil
	})
	c.mu.Lock()
	for _, m := range c.log {
		if strings.Contains(string(m.Params), secret) {
			t.Errorf("the secret was sent in %s", m.Method)
		}
	}
	c.mu.Unlock()
	if strings.Contains(c.stderr.String(), secret) {
		t.Error("the secret was logged on stderr")
	}
}

// When the editor goes away mid-run (stdin closes), the server stops the run and its agents
// before exiting: no agent process outlives the session.
func TestSessionEndStopsRunningAgents(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	// The agent records its pid, then works for a long time.
	agent := commandAgent(t, "cat > /dev/null\necho $$ > \"$(dirname \"$0\")/pid\"\nexec sleep 300\n")
	dir := filepath.Dir(agent)
	root, uri := workspace(t, "long.yaml", strings.ReplaceAll(pairFlow, "AGENT", agent))
	c := startBinary(t)
	c.initializeWith(root, recording) // its agent records into its own folder
	c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri}, nil)
	c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool { return strings.Contains(string(p), `"event":"agent_started"`) })
	var pid int
	for end := time.Now().Add(deadline); pid == 0 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, "pid"))
		fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	}
	if pid == 0 || !alive(pid) {
		t.Fatalf("the agent did not start (pid %d)", pid)
	}
	c.w.Close()
	if code := c.waitExit(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if alive(pid) {
		t.Errorf("agent process %d outlived the session", pid)
		_ = syscallKill(pid)
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// A person invokes a skill from the editor (startRun with skill, no uri): the run is listed
// under the skill's flow, and a dry run's edit comes back as a proposal. Resuming uses the
// flow file the run wrote, like any run. An unknown skill is refused, naming the file.
func TestSkillRunFromTheEditor(t *testing.T) {
	root, _ := workspace(t, "team.yaml", goodFlow)
	dir := filepath.Join(root, ".agentcanvas", "skills", "tidy-imports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: tidy-imports\ndescription: Sort imports\n---\nSort the imports of the given files.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startBinary(t)
	c.initialize(root)
	var info struct{ RunID, Flow, FlowFile string }
	c.mustCall("agentcanvas/startRun", map[string]any{"skill": map[string]any{"name": "tidy-imports", "arguments": "in team.yaml", "files": []string{"team.yaml"}}, "dryRun": true}, &info)
	if info.Flow != "skill-tidy-imports" || info.FlowFile != filepath.Join(root, ".agentcanvas", "runs", info.RunID, "skill-tidy-imports.yaml") {
		t.Fatalf("startRun: %+v", info)
	}
	fin := c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"event":"run_finished"`) && strings.Contains(string(p), info.RunID)
	})
	if !strings.Contains(string(fin), `"status":"completed"`) {
		t.Errorf("run_finished: %s", fin)
	}
	var props []struct{ RunID, AgentID string }
	c.mustCall("agentcanvas/listProposals", map[string]any{"runId": info.RunID}, &props)
	if len(props) != 1 || props[0].AgentID != "skill" {
		t.Errorf("listProposals: %+v", props)
	}
	if _, err := c.call("agentcanvas/startRun", map[string]any{"skill": map[string]any{"name": "nope"}, "dryRun": true}); err == nil || !strings.Contains(err.Message, "skill \"nope\" not found") {
		t.Errorf("startRun of an unknown skill: %v", err)
	}
	if _, err := c.call("agentcanvas/startRun", map[string]any{"skill": map[string]any{"name": "tidy-imports", "files": []string{"../x"}}, "dryRun": true}); err == nil || !strings.Contains(err.Message, "'..' is not allowed") {
		t.Errorf("startRun with a file outside the workspace: %v", err)
	}
	c.shutdownExit()
}

// Each agent's spend outlives the session that ran it: a fresh sidecar on the same workspace
// (a window reload) lists the finished run with every agent's total, as its spend events said.
func TestAgentSpendListedAfterAReload(t *testing.T) {
	agent := commandAgent(t, `cat > /dev/null
echo "ANSWER: done"
echo 'USAGE: {"inputTokens": 700, "outputTokens": 300, "costUsd": 0.02}'
`)
	root, uri := workspace(t, "spend.yaml", strings.ReplaceAll(pairFlow, "AGENT", agent))
	c := startBinary(t)
	c.initialize(root)
	var info struct{ RunID string }
	c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri}, &info)
	told := map[string]int64{}
	for {
		raw := c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
			return strings.Contains(string(p), `"event":"spend"`) || strings.Contains(string(p), `"event":"run_finished"`)
		})
		var ev struct {
			Event  string
			Agent  string
			Tokens int64
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Event == "run_finished" {
			break
		}
		told[ev.Agent] += ev.Tokens
	}
	c.shutdownExit()

	c = startBinary(t)
	c.initialize(root)
	var runs []struct {
		RunID      string
		AgentSpend map[string]struct {
			Tokens      int64
			CostUSD     float64
			Reports     int
			Interaction string
		}
	}
	c.mustCall("agentcanvas/listRuns", nil, &runs)
	if len(runs) != 1 || runs[0].RunID != info.RunID || len(runs[0].AgentSpend) != 2 || len(told) != 2 {
		t.Fatalf("listRuns after a reload: %+v; the spend events told %v", runs, told)
	}
	for id, a := range runs[0].AgentSpend {
		if a.Tokens == 0 || a.Tokens != told[id] || a.Reports == 0 || a.Interaction != "first" || a.CostUSD < float64(a.Tokens)/1000*0.02-1e-9 {
			t.Errorf("%s after a reload: %+v; its spend events told %d tokens at $0.02 a 1,000", id, a, told[id])
		}
	}
	c.shutdownExit()
}
