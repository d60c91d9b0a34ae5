package runsummary

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/golden"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

const runID = "run_20261124-093000_abcdef"

var t0 = time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)

func ev(ms int, interaction, name string, fields map[string]any) eventlog.Event {
	return eventlog.Event{TS: t0.Add(time.Duration(ms) * time.Millisecond).UnixMilli(), Flow: "review", RunID: runID, InteractionID: interaction, Event: name, Fields: fields}
}

// makeProposal gives agent a sandbox of the workspace's files, writes edits into its work/
// folder (an empty content deletes) and turns it into a proposal, as the engine does.
func makeProposal(t *testing.T, ws, agent string, edits map[string]string) string {
	t.Helper()
	var files []string
	for p := range edits {
		if _, err := os.Stat(filepath.Join(ws, p)); err == nil {
			files = append(files, p)
		}
	}
	paths, err := sandbox.Prepare(context.Background(), sandbox.Options{Workspace: ws, RunID: runID, AgentID: agent, Files: files, AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	for p, content := range edits {
		dst := filepath.Join(paths.WorkDir, p)
		if content == "" {
			os.Remove(dst)
			continue
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := proposal.Create(context.Background(), proposal.CreateOptions{Workspace: ws, RunID: runID, AgentID: agent, Flow: "review"}); err != nil {
		t.Fatal(err)
	}
	return ".agentcanvas/sandboxes/" + runID + "/" + agent + "/proposal/proposal.json"
}

// A failed run: one interaction completed with two proposals (one applied, one left for
// review), one failed with an agent's stderr, one skipped; agents with and without cost.
func TestSummaryOfAFailedRun(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "src", "parser.ts"), []byte("export function parse(s: string) {\n  return s.split(',');\n}\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "src", "old.ts"), []byte("export const old = 1;\n"), 0o644)
	coder := makeProposal(t, ws, "coder", map[string]string{
		"src/parser.ts":      "export function parse(s: string) {\n  return s.split(',').map((x) => x.trim());\n}\n",
		"src/parser.test.ts": "import { parse } from './parser';\nconsole.assert(parse('a, b')[1] === 'b');\n",
		"src/old.ts":         "",
	})
	tester := makeProposal(t, ws, "tester", map[string]string{"docs/testing|notes.md": "# How `parse` is tested\n"})
	out := &engine.Outcome{RunID: runID, Flow: "review", Status: engine.StatusFailed, Reason: "interaction check failed",
		Interactions: []engine.InteractionOutcome{
			{ID: "build", PatternID: "manager_worker", Status: engine.StatusCompleted, Reason: "quality_gate", Rounds: 2, Result: "1. Intent\n- Both workers are done | tests pass\n"},
			{ID: "check", PatternID: "fact_check_verifier", Status: engine.StatusFailed, Reason: "error", Rounds: 1, Error: "agent verifier failed: codex exited with code 1"},
			{ID: "ship", PatternID: "chat_chain_pipeline", Status: engine.StatusSkipped, Reason: "skipped"},
		},
		Proposals: []string{coder, tester},
	}
	evs := []eventlog.Event{
		ev(0, "", "run_started", map[string]any{"interactions": 3, "dryRun": false, "task": "Make the parser trim its items.\nKeep the API."}),
		ev(100, "build", "agent_started", map[string]any{"agent": "coder"}),
		ev(4100, "build", "agent_finished", map[string]any{"agent": "coder", "status": "completed", "inputTokens": int64(12000), "outputTokens": int64(3456), "costUsd": 0.0412}),
		ev(4110, "build", "proposal_created", map[string]any{"agent": "coder", "proposal": coder}),
		ev(4200, "build", "agent_started", map[string]any{"agent": "tester"}),
		ev(5200, "build", "warning", map[string]any{"agent": "tester", "message": "docs/testing|notes.md does not exist in the workspace yet; the agent starts without it"}),
		ev(6200, "build", "agent_finished", map[string]any{"agent": "tester", "status": "completed", "inputTokens": int64(800), "outputTokens": int64(90), "costUsd": 0.0051}),
		ev(6210, "build", "proposal_created", map[string]any{"agent": "tester", "proposal": tester}),
		ev(6300, "build", "proposal_applied", map[string]any{"agent": "coder", "proposal": coder}),
		ev(6310, "build", "proposal_held", map[string]any{"agent": "tester", "proposal": tester, "reason": "the quality gate did not pass"}),
		ev(6400, "check", "agent_started", map[string]any{"agent": "verifier"}),
		ev(71400, "check", "agent_finished", map[string]any{"agent": "verifier", "status": "failed", "inputTokens": int64(1500), "outputTokens": int64(20),
			"error": "codex exited with code 1", "stderr": []string{"Error: stream disconnected before completion", "see ```codex --help```"}}),
		ev(71500, "ship", "terminated", map[string]any{"reason": "skipped", "status": "skipped", "note": "dependency check failed"}),
		ev(71600, "", "run_finished", map[string]any{"status": "failed"}),
	}
	md := Markdown(Input{Outcome: out, Events: evs, Workspace: ws, FlowFile: "flows/review.yaml"})
	golden.Check(t, "failed-run.md", md)
	for _, want := range []string{"| `src/parser.ts` | modified | 1 | 1 |", "| `src/old.ts` | deleted | 0 | 1 |", "`docs/testing\\|notes.md`", "$0.05 + not reported"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

// A dry run with no proposal, and a run refused before it started.
func TestSummaryOfADryRunAndARefusal(t *testing.T) {
	out := &engine.Outcome{RunID: runID, Flow: "debate-judge", Status: engine.StatusCompleted,
		Interactions: []engine.InteractionOutcome{{ID: "debate", PatternID: "debate_judge", Status: engine.StatusCompleted, Reason: "judge_decision", Rounds: 3, Result: "accept"}}}
	evs := []eventlog.Event{
		ev(0, "", "run_started", map[string]any{"interactions": 1, "dryRun": true, "task": "Design debate"}),
		ev(10, "debate", "agent_started", map[string]any{"agent": "pro"}),
		ev(20, "debate", "agent_finished", map[string]any{"agent": "pro", "status": "completed", "costUsd": 0.0}),
		ev(50, "", "run_finished", map[string]any{"status": "completed"}),
	}
	var b bytes.Buffer
	b.Write(Markdown(Input{Outcome: out, Events: evs, Workspace: t.TempDir(), FlowFile: "flows/debate-judge.yaml"}))
	b.WriteString("\n---\n\n")
	b.Write(Refused("flows/bad.yaml", errors.New("the flow has validation errors; fix them before running:\n  flows/bad.yaml:8:25: error: unknown-agent: edge target \"ghost\" is not an agent")))
	golden.Check(t, "dry-run-and-refusal.md", b.Bytes())
	if !strings.Contains(b.String(), "None: no worker handed off a change.") {
		t.Error("a run without proposals does not say so")
	}
}
