package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/engine"
)

// runWorkspace copies an example flow into a fresh git workspace.
func runWorkspace(t *testing.T, example string) (ws, file string) {
	t.Helper()
	ws = t.TempDir()
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "flows", example))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws, "flows"), 0o755)
	file = filepath.Join(ws, "flows", example)
	os.WriteFile(file, src, 0o644)
	return ws, file
}

func TestRunDryRunExample(t *testing.T) {
	ws, file := runWorkspace(t, "manager-worker.yaml")
	var out, errb bytes.Buffer
	code := run([]string{"run", "--json", "--dry-run", "--non-interactive", file}, strings.NewReader(""), &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	events := map[string]int{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		events[ev["event"].(string)]++
	}
	for _, want := range []string{"run_started", "configured", "step", "message", "terminated", "proposal_created", "run_finished"} {
		if events[want] == 0 {
			t.Errorf("no %s event on stdout (got %v)", want, events)
		}
	}
	if !strings.Contains(errb.String(), "completed") || !strings.Contains(errb.String(), "proposal:") {
		t.Errorf("summary:\n%s", errb.String())
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", "logs", "manager-worker")); err != nil {
		t.Errorf("no JSONL log: %v", err)
	}
}

func TestRunRefusesInvalidFlow(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "bad.yaml")
	os.WriteFile(file, []byte("version: 0.2\nagents:\n  - {id: a}\ninteractions:\n  - id: i1\n    patternId: role_play_pair\n    edges:\n      - {source: a, target: ghost}\n"), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--dry-run", "--workspace", ws, file}, strings.NewReader(""), &out, &errb); code != exitFail {
		t.Fatalf("exit %d, want %d\n%s", code, exitFail, errb.String())
	}
	if !strings.Contains(errb.String(), "unknown-agent") || out.Len() != 0 {
		t.Errorf("stderr %q stdout %q", errb.String(), out.String())
	}
	if code := run([]string{"run", filepath.Join(ws, "missing.yaml")}, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("missing file: exit %d", code)
	}
}

func TestMCPServesAFlow(t *testing.T) {
	_, file := runWorkspace(t, "debate-judge.yaml")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_design_debate","arguments":{"task":"Is 17 prime?"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
		`not json`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/list"}`,
	}, "\n") + "\n"
	var out, errb bytes.Buffer
	if code := run([]string{"mcp", "--dry-run", file}, strings.NewReader(in), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var replies []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON-RPC: %q", l)
		}
		replies = append(replies, m)
	}
	if len(replies) != 6 {
		t.Fatalf("got %d replies, want 6 (the notification gets none):\n%s", len(replies), out.String())
	}
	init := replies[0]["result"].(map[string]any)
	if init["protocolVersion"] != mcpProtocolVersion || init["capabilities"].(map[string]any)["tools"] == nil {
		t.Errorf("initialize = %v", init)
	}
	tools := replies[1]["result"].(map[string]any)["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["name"] != "run_design_debate" {
		t.Errorf("tools/list = %v", tools)
	}
	call := replies[2]["result"].(map[string]any)
	sc := call["structuredContent"].(map[string]any)
	if call["isError"] != false || sc["status"] != "completed" || len(sc["interactions"].([]any)) != 1 {
		t.Errorf("tools/call = %v", call)
	}
	if replies[3]["error"].(map[string]any)["code"].(float64) != -32602 || replies[4]["error"].(map[string]any)["code"].(float64) != -32700 || replies[5]["error"].(map[string]any)["code"].(float64) != -32601 {
		t.Errorf("errors = %v %v %v", replies[3], replies[4], replies[5])
	}
}

// A tools/call whose arguments break the tool's own input schema (task missing, not a string,
// empty, an unknown argument) is an MCP error and runs nothing; the tool is named from the
// flow's name:.
func TestMCPChecksArgumentsAgainstTheSchema(t *testing.T) {
	ws, file := runWorkspace(t, "debate-judge.yaml")
	var in []string
	for i, args := range []string{`{"task":42}`, `{}`, `null`, `{"task":"  "}`, `{"task":"x","budget":3}`, `[1]`} {
		in = append(in, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_design_debate","arguments":%s}}`, i+1, args))
	}
	var out, errb bytes.Buffer
	if code := run([]string{"mcp", "--dry-run", file}, strings.NewReader(strings.Join(in, "\n")+"\n"), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := []string{"task must be a string, not a number", "task is required", "task is required", "task must not be empty", "budget is not an argument of this tool", "arguments must be an object"}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d replies:\n%s", len(lines), out.String())
	}
	for i, l := range lines {
		var m struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(l), &m) != nil || m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, want[i]) {
			t.Errorf("call %d: %s, want an error saying %q", i+1, l, want[i])
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", "runs")); err == nil {
		t.Error("a refused call ran the flow")
	}
}

// `run --skill`: a command agent follows the skill with the task as the person's request and
// its edit comes back as a proposal that applies; usage errors are usage errors.
func TestRunSkill(t *testing.T) {
	ws, _ := runWorkspace(t, "manager-worker.yaml")
	skill := filepath.Join(ws, ".agentcanvas", "skills", "add-notes")
	os.MkdirAll(skill, 0o755)
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: add-notes\ndescription: Write NOTES.md\ndisable-model-invocation: true\n---\nWrite NOTES.md with what the person asks.\n"), 0o644)
	agent := filepath.Join(t.TempDir(), "agent.sh")
	os.WriteFile(agent, []byte(`#!/usr/bin/env bash
prompt=$(cat)
grep -q "Write NOTES.md with what the person asks." <<<"$prompt" || { echo "[ERROR] no instructions"; exit 1; }
grep -o "notes about [a-z]*" <<<"$prompt" | head -1 > NOTES.md
cat <<EOH
HANDOFF
Context:        notes
Goal:           NOTES.md
DoD:            NOTES.md exists
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/skill/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/skill/proposal/proposal.json
ChangedFiles:
  - NOTES.md
Tests:
  - (none)
Next:
  - review
EOH
`), 0o755)
	var out, errb bytes.Buffer
	code := run([]string{"run", "--json", "--workspace", ws, "--non-interactive", "--skill", "add-notes", "--backend", "command", "--command", "bash", "--command", agent, "--task", "notes about parsers"}, strings.NewReader(""), &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "invoke       protocol_bridge          completed  bridged") || !strings.Contains(errb.String(), "/skill/proposal/proposal.json") {
		t.Errorf("summary:\n%s", errb.String())
	}
	proposal := regexpFind(t, errb.String(), `\.agentcanvas/sandboxes/run_[^/]+/skill/proposal/proposal\.json`)
	var applied, aerr bytes.Buffer
	if code := run([]string{"proposal", "apply", "--workspace", ws, filepath.Join(ws, proposal)}, strings.NewReader(""), &applied, &aerr); code != exitOK {
		t.Fatalf("apply: exit %d %s", code, aerr.String())
	}
	if b, err := os.ReadFile(filepath.Join(ws, "NOTES.md")); err != nil || string(b) != "notes about parsers\n" {
		t.Errorf("NOTES.md = %q, %v", b, err)
	}
	for _, args := range [][]string{
		{"run", "--skill", "add-notes", "flows/manager-worker.yaml"}, // a skill and a flow
		{"run", "--skill", "add-notes", "--resume", "run_x"},
		{"run", "--file", "a.txt", "flows/manager-worker.yaml"}, // --file without --skill
	} {
		if code := run(args, strings.NewReader(""), &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	errb.Reset()
	if code := run([]string{"run", "--workspace", ws, "--skill", "nope", "--dry-run"}, strings.NewReader(""), &out, &errb); code != exitUsage || !strings.Contains(errb.String(), `skill "nope" not found: create .agentcanvas/skills/nope/SKILL.md`) {
		t.Errorf("unknown skill: exit %d %s", code, errb.String())
	}
}

func regexpFind(t *testing.T, s, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindString(s)
	if m == "" {
		t.Fatalf("no %s in:\n%s", re, s)
	}
	return m
}

// run --resume continues an interrupted run with the backend override and task it was
// started with (from its checkpoint), unless the command line gives others.
func TestRunResumeKeepsTheRunsOptions(t *testing.T) {
	for _, tc := range []struct {
		name        string
		args        []string
		wantBackend string
		wantTask    string
	}{
		{"as started", nil, "command", "Fix the flaky test"},
		{"overridden", []string{"--backend", "dry-run", "--task", "Another task"}, "dry-run", "Another task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			agent := filepath.Join(ws, "agent.sh")
			os.WriteFile(agent, []byte("cat >/dev/null\necho 'ANSWER: ok'\n"), 0o755)
			file := filepath.Join(ws, "flows", "resume.yaml")
			os.MkdirAll(filepath.Dir(file), 0o755)
			os.WriteFile(file, []byte(`version: 0.2
agents:
  - {id: a, role: planner, runtime: {backendId: dry-run, command: [bash, `+agent+`]}}
  - {id: b, role: reviewer, runtime: {backendId: dry-run, command: [bash, `+agent+`]}}
interactions:
  - id: i1
    patternId: role_play_pair
    edges:
      - {source: a, target: b, data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}}
`), 0o644)
			// The checkpoint of a run whose engine died (its pid is gone).
			dead := exec.Command("true")
			if err := dead.Run(); err != nil {
				t.Fatal(err)
			}
			const id = "run_20261122-010203_abcdef"
			st := engine.State{RunID: id, Flow: "resume", FlowFile: file, Status: engine.StatusRunning, Backend: "command", Task: "Fix the flaky test",
				Started: time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC), PID: dead.Process.Pid,
				Interactions: []engine.InteractionOutcome{{ID: "i1", PatternID: "role_play_pair", Status: engine.StatusRunning}}}
			b, _ := json.Marshal(st)
			os.MkdirAll(filepath.Join(ws, engine.RunsDir, id), 0o755)
			os.WriteFile(filepath.Join(ws, engine.RunsDir, id, "state.json"), b, 0o644)

			var out, errb bytes.Buffer
			args := append([]string{"run", "--json", "--resume", id, "--non-interactive", "--workspace", ws}, tc.args...)
			if code := run(append(args, file), strings.NewReader(""), &out, &errb); code != exitOK {
				t.Fatalf("exit %d\n%s", code, errb.String())
			}
			started := 0
			sc := bufio.NewScanner(&out)
			for sc.Scan() {
				var ev map[string]any
				json.Unmarshal(sc.Bytes(), &ev)
				switch ev["event"] {
				case "run_resumed":
					if ev["runId"] != id || ev["task"] != tc.wantTask {
						t.Errorf("run_resumed: %s", sc.Bytes())
					}
				case "agent_started":
					started++
					if ev["backend"] != tc.wantBackend {
						t.Errorf("agent_started with backend %v, want %s", ev["backend"], tc.wantBackend)
					}
				}
			}
			if started != 2 {
				t.Fatalf("%d agents started, want 2\n%s", started, out.String())
			}
		})
	}
}

// A run in which the manager never assigns anything did no work: the interaction fails with
// a reason naming the manager and the line it did not write, and the run exits 1.
func TestRunFailsWhenTheManagerAssignsNothing(t *testing.T) {
	ws := t.TempDir()
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	agent := filepath.Join(ws, "agent.sh")
	os.WriteFile(agent, []byte("cat >/dev/null\necho 'I will think about how to split the work.'\n"), 0o755)
	file := filepath.Join(ws, "flows", "t.yaml")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`version: 0.2
description: write hello.txt
agents:
  - {id: lead, role: manager, runtime: {backendId: command, command: [bash, "`+agent+`"]}}
  - {id: coder, role: worker, runtime: {backendId: command, command: [bash, "`+agent+`"]}}
interactions:
  - id: i1
    patternId: manager_worker
    edges:
      - source: lead
        target: coder
        data: {termination: {type: max_rounds, rounds: 1}}
`), 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"run", "--json", "--non-interactive", file}, strings.NewReader(""), &out, &errb)
	if code != exitFail {
		t.Fatalf("exit %d, want %d\n%s", code, exitFail, errb.String())
	}
	want := "lead's reply has no `ASSIGN <coder>: <assignment>` line, even when asked again with the exact format"
	if !strings.Contains(errb.String(), want) || !strings.Contains(errb.String(), "failed") {
		t.Errorf("the summary does not say why:\n%s", errb.String())
	}
	if !strings.Contains(out.String(), `"event":"reply_repair"`) || !strings.Contains(out.String(), `"reason":"missing_line"`) {
		t.Errorf("events:\n%s", out.String())
	}
}

// Every example flow runs with --dry-run, and the dry-run agents write every line their
// patterns need (no step is asked twice).
func TestEveryExampleFlowDryRuns(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "flows", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example flows: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			_, file := runWorkspace(t, filepath.Base(f))
			var out, errb bytes.Buffer
			if code := run([]string{"run", "--json", "--dry-run", "--non-interactive", file}, strings.NewReader(""), &out, &errb); code != exitOK {
				t.Fatalf("exit %d\n%s", code, errb.String())
			}
			if !strings.Contains(out.String(), `"event":"run_finished"`) || strings.Contains(out.String(), `"event":"reply_repair"`) {
				t.Errorf("no events, or a dry-run agent lacked a line:\n%s", out.String())
			}
			// The dry run does what the pattern says: the assistant answers the client, the
			// router delivers what the triage sends.
			switch filepath.Base(f) {
			case "p2p-role-play.yaml":
				if !strings.Contains(out.String(), `"to":"assistant"`) || strings.Contains(out.String(), `"rounds":0`) {
					t.Errorf("the assistant never ran:\n%s", out.String())
				}
			case "router-targeted.yaml":
				if !strings.Contains(out.String(), `"via":"router"`) || strings.Contains(out.String(), `"event":"undeliverable"`) {
					t.Errorf("the router delivered nothing:\n%s", out.String())
				}
			}
		})
	}
}

// --confine: required refuses to start a run on a kernel without Landlock (simulated) and
// says why; auto runs it with a warning; off runs it without one; anything else is a usage
// error.
func TestRunConfineFlag(t *testing.T) {
	t.Setenv(confine.NoLandlockEnv, "1")
	ws := t.TempDir()
	file := filepath.Join(ws, "flows", "pair.yaml")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`version: 0.2
agents:
  - {id: a, role: planner, runtime: {backendId: command, command: [sh, -c, "cat >/dev/null; echo ANSWER: ok"]}}
  - {id: b, role: reviewer, runtime: {backendId: command, command: [sh, -c, "cat >/dev/null; echo ANSWER: ok"]}}
interactions:
  - id: i1
    patternId: role_play_pair
    edges:
      - {source: a, target: b, data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}}
`), 0o644)
	runWith := func(mode string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run([]string{"run", "--json", "--non-interactive", "--confine", mode, file}, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := runWith("required")
	if code != exitFail || !strings.Contains(errs, "not started") || !strings.Contains(errs, "--confine is required") || !strings.Contains(errs, "no Landlock") || out != "" {
		t.Errorf("required: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas")); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote .agentcanvas (%v)", err)
	}
	code, out, errs = runWith("auto")
	if code != exitOK || !strings.Contains(out, "agents run unconfined") {
		t.Errorf("auto: exit %d, stderr %q, no warning in %q", code, errs, out)
	}
	code, out, errs = runWith("off")
	if code != exitOK || strings.Contains(out, "unconfined") || !strings.Contains(out, `"confinement":"off (--confine)"`) {
		t.Errorf("off: exit %d, stderr %q, stdout %q", code, errs, out)
	}
	if code, _, errs = runWith("sometimes"); code != exitUsage || !strings.Contains(errs, "auto, required, off") {
		t.Errorf("a bad mode: exit %d, %q", code, errs)
	}
}
