package engine

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// leadCoderFlow is a manager_worker flow of lead (manager) and coder (worker), both running
// the bash script agent, with auto-apply asked for.
func leadCoderFlow(t *testing.T, ws, agent string) *flow.Flow {
	t.Helper()
	src := `version: 0.2
description: write hello.txt
policy: {autoApply: true}
agents:
  - {id: lead, role: manager, runtime: {backendId: command, command: [bash, "` + agent + `"]}}
  - {id: coder, role: worker, runtime: {backendId: command, command: [bash, "` + agent + `"]}}
interactions:
  - id: i1
    patternId: manager_worker
    edges:
      - source: lead
        target: coder
        data:
          termination: {any: [{type: max_rounds, rounds: 1}, {type: quality_gate, metric: tests_passed, op: ">=", value: 1}]}
`
	file := filepath.Join(ws, "flows", "t.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f := flow.Parse(file, []byte(src))
	if len(f.Problems) > 0 {
		t.Fatalf("test flow: %v", f.Problems)
	}
	return f
}

// leadScript is a manager that assigns hello.txt to coder and accepts its work, and records
// every prompt it gets as $dir/<agent>.<n>.prompt; worker is the coder's turn.
func leadScript(t *testing.T, dir, manager, worker string) string {
	return script(t, dir, "agent.sh", `prompt=$(cat)
n=$(ls "`+dir+`" | grep -c "^$AGENTCANVAS_AGENT_ID\.")
printf '%s' "$prompt" >"`+dir+`/$AGENTCANVAS_AGENT_ID.$n.prompt"
has() { grep -q -- "$1" <<<"$prompt"; }
handoff() {
cat <<EOH
HANDOFF
Context:        hello
Goal:           greet the world
DoD:            hello.txt says hello
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/coder/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/coder/proposal/proposal.json
ChangedFiles:
  - hello.txt
Tests:
  - cat hello.txt
Next:
  - Orchestrator: review
EOH
}
case "$AGENTCANVAS_ROLE" in
manager)
`+manager+`
;;
worker)
`+worker+`
;;
esac
`)
}

const (
	assigns      = `if has "Review your team"; then echo "ACCEPT coder"; echo "METRIC: tests_passed=1"; else echo "ASSIGN coder: write hello.txt"; fi`
	writesHello  = `echo hello >hello.txt; echo "I wrote hello.txt"`
	invalidBlock = "\ncat <<EOH\nHANDOFF\nContext: hello\nGoal: greet\nDoD: hello.txt says hello\nChangedFiles:\n  - hello.txt\nEOH"
)

// A worker's sandbox changes reach review whether or not it wrote a valid HANDOFF block: the
// proposal holds exactly the edit (git applies it), a missing or invalid block is a warning
// naming the worker, the manager is told, and auto-apply holds such a proposal for a person.
func TestSandboxChangesReachReview(t *testing.T) {
	for _, tc := range []struct {
		name, worker string
		proposal     bool   // a proposal is made
		applied      bool   // auto-apply applied it
		warning      string // a warning naming coder says this ("" none about its handoff)
		report       string // the manager's review prompt says this about coder
		notes        string // proposal.json's notes
	}{
		{name: "valid handoff", worker: writesHello + "; handoff", proposal: true, applied: true,
			report: "Handoff of coder", notes: "greet the world\nDoD: hello.txt says hello\nTests: cat hello.txt"},
		{name: "no handoff", worker: writesHello, proposal: true,
			warning: "coder wrote no HANDOFF block; its proposal was made from its sandbox changes (hello.txt); auto-apply holds it for review",
			report:  "no valid HANDOFF block; its proposal was made from its sandbox changes: hello.txt", notes: "No valid HANDOFF block from coder"},
		{name: "invalid handoff", worker: writesHello + invalidBlock, proposal: true,
			warning: "coder wrote an invalid HANDOFF block (", report: "no valid HANDOFF block", notes: "No valid HANDOFF block from coder"},
		{name: "no change and no handoff", worker: `echo "nothing to do"`,
			warning: "coder changed nothing in its sandbox and wrote no HANDOFF block: nothing to review", report: "no HANDOFF block, and no change in its sandbox"},
		{name: "handoff without a change", worker: `handoff`,
			warning: "coder's HANDOFF block names changed files, but its sandbox does not differ from its input"},
		{name: "handoff naming the wrong file", worker: `echo hello >other.txt; handoff`, proposal: true, applied: true,
			warning: "coder's HANDOFF block names hello.txt, which its sandbox does not change; the proposal holds what did change: other.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := gitWorkspace(t)
			dir := t.TempDir()
			f := leadCoderFlow(t, ws, leadScript(t, dir, assigns, tc.worker))
			rec := &recorder{}
			out, err := Run(context.Background(), f, Options{Workspace: ws, Sink: rec.sink})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != StatusCompleted {
				t.Fatalf("outcome %+v", out)
			}
			if got := len(out.Proposals) == 1; got != tc.proposal {
				t.Fatalf("proposals %v, want one: %v", out.Proposals, tc.proposal)
			}
			warned := ""
			for _, w := range rec.events("warning") {
				if w.Fields["agent"] == "coder" {
					warned += w.Fields["message"].(string) + "\n"
				}
			}
			if tc.warning == "" && warned != "" || !strings.Contains(warned, tc.warning) {
				t.Errorf("warnings about coder:\n%s\nwant %q", warned, tc.warning)
			}
			review, _ := os.ReadFile(filepath.Join(dir, "lead.1.prompt"))
			if !strings.Contains(string(review), tc.report) {
				t.Errorf("the manager's review prompt does not say %q:\n%s", tc.report, review)
			}
			if !tc.proposal {
				return
			}
			agentDir := filepath.Join(ws, filepath.Dir(out.Proposals[0]))
			var pj struct {
				Notes string `json:"notes"`
			}
			b, _ := os.ReadFile(filepath.Join(agentDir, "proposal.json"))
			if err := json.Unmarshal(b, &pj); err != nil || !strings.HasPrefix(pj.Notes, tc.notes) {
				t.Errorf("notes %q (%v), want %q", pj.Notes, err, tc.notes)
			}
			held := rec.events("proposal_held")
			if tc.applied != (len(held) == 0) {
				t.Errorf("proposal_held %v, applied wanted: %v", held, tc.applied)
			}
			if !tc.applied {
				if len(held) != 1 || !strings.Contains(held[0].Fields["reason"].(string), "HANDOFF block") {
					t.Errorf("proposal_held %+v", held)
				}
				// git is the oracle: the patch applies to the workspace and creates exactly hello.txt.
				patch := filepath.Join(agentDir, "changes.patch")
				if out, err := exec.Command("git", "-C", ws, "apply", "--check", "--verbose", patch).CombinedOutput(); err != nil || !strings.Contains(string(out), "hello.txt") {
					t.Errorf("git apply --check: %v\n%s", err, out)
				}
				if out, err := exec.Command("git", "-C", ws, "apply", patch).CombinedOutput(); err != nil {
					t.Fatalf("git apply: %v\n%s", err, out)
				}
			}
			if b, err := os.ReadFile(filepath.Join(ws, "hello.txt")); (err != nil || string(b) != "hello\n") && tc.worker != `echo hello >other.txt; handoff` {
				t.Errorf("hello.txt after the apply: %q, %v", b, err)
			}
		})
	}
}

// Every agent that works in a sandbox gets the same treatment, in one place: P16's defender,
// P18's executor and a skill run edit without a HANDOFF block, and each edit is a proposal.
func TestSandboxChangesReachReviewInEveryPattern(t *testing.T) {
	for _, tc := range []struct{ pattern, agent string }{
		{"red_team_judge", "defender"},
		{"plan_execute_reflect", "executor"},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			t.Parallel()
			ws := gitWorkspace(t)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "edit"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			rt := scripted(t)
			rt["cwdMode"] = "agentHome" // as the patterns' templates have it
			f := patternFlow(t, ws, "e2e", flowSpec{pattern: tc.pattern, runtime: rt, description: "the task"})
			rec := &recorder{}
			out, err := Run(context.Background(), f, Options{Workspace: ws, Env: map[string]string{"AC_DIR": dir}, Sink: rec.sink})
			if err != nil {
				t.Fatal(err)
			}
			want := ".agentcanvas/sandboxes/" + out.RunID + "/" + tc.agent + "/proposal/proposal.json"
			if out.Status != StatusCompleted || !containsFold(out.Proposals, want) {
				t.Fatalf("status %s, proposals %v, want %s", out.Status, out.Proposals, want)
			}
			patch, _ := os.ReadFile(filepath.Join(ws, filepath.Dir(want), "changes.patch"))
			if !strings.Contains(string(patch), "+edit by "+tc.agent) {
				t.Errorf("patch:\n%s", patch)
			}
			found := false
			for _, w := range rec.events("warning") {
				found = found || w.Fields["agent"] == tc.agent && strings.Contains(w.Fields["message"].(string), "wrote no HANDOFF block")
			}
			if !found {
				t.Errorf("no warning that %s wrote no HANDOFF block", tc.agent)
			}
		})
	}
	t.Run("skill", func(t *testing.T) {
		t.Parallel()
		ws := gitWorkspace(t)
		writeSkill(t, ws, "release-notes", releaseNotes)
		agent := script(t, t.TempDir(), "agent.sh", "echo '- first change' > NOTES.md\necho 'Wrote NOTES.md.'\n")
		m := &Manager{Workspace: ws}
		info, err := m.StartSkill(SkillInvocation{Name: "release-notes", Backend: "command", Command: []string{"bash", agent}}, StartParams{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.Wait(info.RunID)
		if err != nil || out.Status != StatusCompleted || len(out.Proposals) != 1 {
			t.Fatalf("outcome %+v, %v", out, err)
		}
		patch, _ := os.ReadFile(filepath.Join(ws, filepath.Dir(out.Proposals[0]), "changes.patch"))
		if !strings.Contains(string(patch), "+- first change") {
			t.Errorf("patch:\n%s", patch)
		}
	})
}

// A manager whose plan drifts from the format is read as it meant; one whose plan has no
// ASSIGN line at all is asked once more with the exact format, and answers.
func TestRepairReprompt(t *testing.T) {
	for _, tc := range []struct{ name, manager, steps string }{
		{"drifted", `if has "Review your team"; then echo "- **Accepted:** coder"; echo "**Metric**: tests_passed = 1"; else echo "1. **Assign** \` + "`" + `coder\` + "`" + ` — write hello.txt"; fi`, "lead coder lead"},
		{"answers on the second ask", `if has "Review your team"; then echo "ACCEPT coder"; echo "METRIC: tests_passed=1"; elif has "AGENTCANVAS\] Your last reply"; then echo "ASSIGN coder: write hello.txt"; else echo "I will split the work."; fi`, "lead lead coder lead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := gitWorkspace(t)
			dir := t.TempDir()
			f := leadCoderFlow(t, ws, leadScript(t, dir, tc.manager, writesHello+"; handoff"))
			rec := &recorder{}
			out, err := Run(context.Background(), f, Options{Workspace: ws, Sink: rec.sink})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != StatusCompleted || out.Interactions[0].Reason != "quality_gate" || len(out.Proposals) != 1 {
				t.Fatalf("outcome %+v", out)
			}
			if got := strings.Join(steps(rec.events("step")), " "); got != tc.steps {
				t.Errorf("steps %q, want %q", got, tc.steps)
			}
			repairs := rec.events("reply_repair")
			if tc.name == "drifted" {
				if len(repairs) != 0 {
					t.Errorf("a drifted reply was repaired: %v", repairs)
				}
				return
			}
			if len(repairs) != 1 || repairs[0].Fields["agent"] != "lead" {
				t.Fatalf("reply_repair %v", repairs)
			}
			p, _ := os.ReadFile(filepath.Join(dir, "lead.1.prompt"))
			for _, want := range []string{"Decompose the task", "## Your last reply\n  I will split the work.", "exactly in this form", "\nASSIGN <coder>: <assignment>"} {
				if !strings.Contains(string(p), want) {
					t.Errorf("the repair prompt lacks %q:\n%s", want, p)
				}
			}
		})
	}
}

// A manager that never writes an ASSIGN line: asked twice, then the interaction fails with a
// reason naming it and the line, no worker runs, and the run fails.
func TestManagerWithoutAssignFailsTheRun(t *testing.T) {
	ws := gitWorkspace(t)
	dir := t.TempDir()
	f := leadCoderFlow(t, ws, leadScript(t, dir, `echo "I will think about it."`, writesHello+"; handoff"))
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	ic := out.Interactions[0]
	want := "lead's reply has no `ASSIGN <coder>: <assignment>` line, even when asked again with the exact format"
	if out.Status != StatusFailed || ic.Status != StatusFailed || ic.Reason != "missing_line" || ic.Error != want {
		t.Fatalf("outcome %+v", out)
	}
	if !strings.Contains(out.Reason, want) {
		t.Errorf("run reason %q", out.Reason)
	}
	if got := strings.Join(steps(rec.events("step")), " "); got != "lead lead" {
		t.Errorf("steps %q: the manager is asked twice and no worker runs", got)
	}
	term := rec.events("terminated")
	if len(term) != 1 || term[0].Fields["reason"] != "missing_line" || term[0].Fields["error"] != want {
		t.Errorf("terminated %+v", term)
	}
}

// silentAgent replies with prose and none of the lines any pattern reads.
const silentAgent = `cat >/dev/null; echo "I have looked at the task and have nothing to add."`

// No silent no-ops: with agents that never write the lines their pattern needs, every pattern
// that needs a line fails, naming the agent or saying which agents did not do the work, and
// the patterns that read only prose complete. The table is docs/runs.md's.
func TestNoSilentNoOps(t *testing.T) {
	want := map[string]struct{ status, reason, error string }{
		"manager_worker":         {StatusFailed, "missing_line", "manager's reply has no `ASSIGN <worker_1|worker_2>: <assignment>` line"},
		"role_play_pair":         {StatusCompleted, "max_rounds", ""},
		"chat_chain_pipeline":    {StatusCompleted, "max_rounds", ""},
		"sop_assembly_line":      {StatusFailed, "missing_line", "pm's reply has no `METRIC: artifact_valid=<0|1>` line"},
		"debate_judge":           {StatusFailed, "missing_line", "'s reply has no `ANSWER: <your answer>` line"},
		"critic_refiner_curator": {StatusFailed, "missing_line", "judge's reply has no `METRIC: open_errors=<N>` line"},
		"majority_vote":          {StatusFailed, "no_work", "no voter voted: voter_1, voter_2, voter_3 wrote no `VOTE: <option>` line"},
		"self_consistency":       {StatusFailed, "no_work", "no sample has an answer: none of the 5 replies has a `ANSWER: <final answer>` line"},
		"contract_net":           {StatusFailed, "no_work", "no bids: bidder_1 wrote no PERFORMATIVE: line, even when asked again; bidder_2 wrote no PERFORMATIVE: line, even when asked again; bidder_3"},
		"bilateral_negotiation":  {StatusFailed, "missing_line", "proposer's reply has no `{\"act\":"},
		"blackboard":             {StatusFailed, "no_work", "no knowledge source posted anything: knowledge_source_1, knowledge_source_2, knowledge_source_3 wrote no `POST <kind>: <text>` line"},
		"publish_subscribe":      {StatusFailed, "missing_line", "publisher's reply has no `PUBLISH <topic>: <text>` line"},
		"broker_facilitator":     {StatusFailed, "missing_line", "requester's reply has no `REQUEST <capability>: <request>` line"},
		"router_targeted":        {StatusFailed, "no_work", "no peer sent anything: peer_1, peer_2, peer_3 wrote no `{\"to\":"},
		"hierarchical_tree":      {StatusFailed, "missing_line", "root's reply has no `ASSIGN <sub_manager_1|sub_manager_2>: <assignment>` line"},
		"red_team_judge":         {StatusFailed, "missing_line", "red_team's reply has no `ATTACK <n>: <claim> — <reproduction>` line"},
		"fact_check_verifier":    {StatusFailed, "missing_line", "producer's reply has no `CLAIM: <claim> [source]` line"},
		"plan_execute_reflect":   {StatusCompleted, "max_rounds", ""},
		"memory_sync":            {StatusFailed, "missing_line", "curator's reply has no `## MEMORY or ## NOTES (a section heading, then its lines)` line"},
		"protocol_bridge":        {StatusCompleted, "bridged", ""},
	}
	agent := script(t, t.TempDir(), "silent.sh", silentAgent)
	for _, p := range pattern.All() {
		t.Run(p.PatternID, func(t *testing.T) {
			t.Parallel()
			w, ok := want[p.PatternID]
			if !ok {
				t.Fatal("no expectation for the pattern")
			}
			ws := gitWorkspace(t)
			f := patternFlow(t, ws, "silent", flowSpec{pattern: p.PatternID, description: "the task",
				runtime: map[string]any{"kind": "cli", "backendId": "command", "command": []string{"bash", agent}}})
			out, err := Run(context.Background(), f, Options{Workspace: ws})
			if err != nil {
				t.Fatal(err)
			}
			ic := out.Interactions[0]
			if out.Status != w.status || ic.Reason != w.reason || !strings.Contains(ic.Error, w.error) {
				t.Errorf("status %s, reason %q, error %q; want %s, %q, %q", out.Status, ic.Reason, ic.Error, w.status, w.reason, w.error)
			}
			if w.status == StatusFailed && !strings.Contains(ic.Error, "even when asked again") {
				t.Errorf("error %q does not say the agent was asked again", ic.Error)
			}
		})
	}
}

// A backend with sessions is asked again in the same session: the repair turn resumes the
// CLI session of the first and carries only the request for the missing line.
func TestRepairResumesTheSession(t *testing.T) {
	bin := fakeCLI(t)
	streams := t.TempDir()
	os.MkdirAll(filepath.Join(streams, "claude"), 0o755)
	result := func(text string) string {
		return `{"type":"system","subtype":"init","cwd":"{{CWD}}","session_id":"{{SESSION}}","tools":[],"mcp_servers":[],"model":"m","permissionMode":"default","apiKeySource":"none"}
{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"` + text + `","session_id":"{{SESSION}}","total_cost_usd":0.001,"usage":{"input_tokens":1,"output_tokens":1}}
`
	}
	os.WriteFile(filepath.Join(streams, "claude", "repair.jsonl"), []byte(result("The answer is 42.")), 0o644)
	os.WriteFile(filepath.Join(streams, "claude", "repair.resume.jsonl"), []byte(result("ANSWER: 42")), 0o644)
	log := filepath.Join(t.TempDir(), "invocations.jsonl")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ws := gitWorkspace(t)
	f := patternFlow(t, ws, "sessions", flowSpec{pattern: "self_consistency", counts: map[string]int{"sampler": 2}, description: "What is 6 times 7?",
		runtime: map[string]any{"kind": "cli", "backendId": "claude", "env": []string{"FAKECLI_DIR", "FAKECLI_SCENARIO", "FAKECLI_LOG"}},
		edit:    setParam("samples", 2)})
	out, err := Run(context.Background(), f, Options{Workspace: ws, Env: map[string]string{"FAKECLI_DIR": streams, "FAKECLI_SCENARIO": "repair", "FAKECLI_LOG": log}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted || out.Interactions[0].Result != "42" {
		t.Fatalf("outcome %+v", out)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var resumed int
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var inv struct {
			Args  []string `json:"args"`
			Stdin string   `json:"stdin"`
		}
		if err := json.Unmarshal([]byte(l), &inv); err != nil {
			t.Fatal(err)
		}
		args := strings.Join(inv.Args, " ") + " " + inv.Stdin
		if !strings.Contains(args, "--resume") {
			continue
		}
		resumed++
		if !strings.Contains(args, "[AGENTCANVAS] Your last reply did not contain") || !strings.Contains(args, "ANSWER: <final answer>") || strings.Contains(args, "Solve independently") {
			t.Errorf("the repair turn carries more or less than the request: %s", args)
		}
	}
	if resumed != 2 {
		t.Errorf("%d resumed turns, want one per sampler:\n%s", resumed, b)
	}
}

// fakeCLI builds the runtime's fake claude (sidecar/runtime/testdata/fakecli: it replays a
// recorded stream, and a resumed session's) and returns the folder holding it.
func fakeCLI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "claude"), "../runtime/testdata/fakecli").CombinedOutput(); err != nil {
		t.Fatalf("building the fake CLI: %v\n%s", err, out)
	}
	return dir
}
