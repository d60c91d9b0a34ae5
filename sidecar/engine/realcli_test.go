package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// The real agent CLIs (scripts/setup-agent-clis.sh) in a manager_worker run, against a
// scripted model on 127.0.0.1: the manager (the same CLI, in the workspace, read-only by its
// role) assigns the work, the worker edits its sandbox, the manager accepts. The flow sets no
// permission mode: the role defaults must let the worker edit.

// realHandoff is the worker's final reply: a valid HANDOFF block (docs/agent-protocol.md).
const realHandoff = "I wrote hello.txt.\n\nHANDOFF\nContext: the greeting\nGoal: greet the world\nDoD: cat hello.txt prints hello\nSandboxWorkDir: work\nProposalJson: proposal/proposal.json\nChangedFiles:\n  - hello.txt\n"

// managerWorkerScript: the manager's conversation opens with the engine's "Decompose the
// task" prompt (and is resumed for the review); the worker's with its assignment.
func managerWorkerScript(cli modelserver.CLI) modelserver.Script {
	return modelserver.Script{
		{Match: "Decompose the task", Replies: []modelserver.Reply{
			{Text: "ASSIGN coder: Put the greeting in hello.txt."},
			{Text: "ACCEPT coder: the greeting is there\nMETRIC: tests_passed=1"},
		}},
		{Match: "Put the greeting in hello.txt", Replies: []modelserver.Reply{
			{Text: "Writing the file.", Calls: []modelserver.Call{cli.WriteCall("hello.txt", "hello\n")}},
			{Text: realHandoff},
		}},
	}
}

// realFlow writes a manager_worker flow whose two agents run cli, listing env's names.
func realFlow(t *testing.T, ws string, cli modelserver.CLI, env map[string]string, coderRuntime string) *flow.Flow {
	t.Helper()
	names := strings.Join(modelserver.EnvNames(env), ", ")
	model := ""
	if cli.Model != "" {
		model = ", model: " + cli.Model
	}
	src := fmt.Sprintf(`version: 0.2
description: Greet the world in hello.txt
agents:
  - id: lead
    role: orchestrator
    runtime: {backendId: %[1]s, env: [%[2]s]%[3]s}
  - id: coder
    role: worker
    files: [README.md]
    runtime: {backendId: %[1]s, env: [%[2]s]%[3]s%[4]s}
interactions:
  - id: build
    patternId: manager_worker
    edges:
      - source: lead
        target: coder
        data: {termination: {type: max_rounds, rounds: 1}}
`, cli.Name, names, model, coderRuntime)
	return writeFlow(t, ws, "real-"+cli.Name+".yaml", src)
}

// writeFlow writes src as the workspace's flow name and reads it.
func writeFlow(t *testing.T, ws, name, src string) *flow.Flow {
	t.Helper()
	file := filepath.Join(ws, ".agentcanvas", "flows", name)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return flow.Parse(file, []byte(src))
}

// runReal runs the manager_worker flow with cli (coderRuntime adds to the coder's runtime).
// Gemini's manager works in the workspace, which the user trusts by listing
// GEMINI_CLI_TRUST_WORKSPACE (the engine trusts only its sandboxes).
func runReal(t *testing.T, cli modelserver.CLI, coderRuntime string) (ws string, out *Outcome, rec *recorder, srv *modelserver.Server) {
	t.Helper()
	exe := cli.Binary(t)
	// backendId names the CLI: the engine finds it on the agents' PATH.
	t.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	srv = cli.Start(t, managerWorkerScript(cli))
	ws = gitWorkspace(t)
	env := cli.Env(t, srv)
	if cli.Name == "gemini" {
		env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
	}
	f := realFlow(t, ws, cli, env, coderRuntime)
	rec = &recorder{}
	out, err := Run(context.Background(), f, Options{Workspace: ws, Env: env, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	logRealRun(t, rec, srv, out)
	return ws, out, rec, srv
}

func TestRealCLIWorkerProposal(t *testing.T) {
	for _, cli := range modelserver.CLIs {
		t.Run(cli.Name, func(t *testing.T) {
			ws, out, rec, srv := runReal(t, cli, "")
			if out.Status != StatusCompleted {
				t.Fatalf("run %s: %s", out.Status, out.Reason)
			}
			if len(out.Proposals) != 1 {
				t.Fatalf("proposals %v, want the coder's", out.Proposals)
			}
			var p proposal.Proposal
			if b, err := os.ReadFile(filepath.Join(ws, out.Proposals[0])); err != nil || json.Unmarshal(b, &p) != nil {
				t.Fatalf("%s: %v", out.Proposals[0], err)
			}
			if want := []proposal.ChangedFile{{Path: "hello.txt", Status: "added"}}; !slices.Equal(p.ChangedFiles, want) {
				t.Errorf("changed files %+v, want %+v", p.ChangedFiles, want)
			}
			// The patch is exactly that change, and git takes it.
			patch := filepath.Join(ws, filepath.Dir(out.Proposals[0]), "changes.patch")
			b, err := os.ReadFile(patch)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "+++ b/hello.txt") || !strings.Contains(string(b), "\n+hello\n") || strings.Count(string(b), "diff --git") != 1 {
				t.Errorf("patch:\n%s", b)
			}
			if o, err := exec.Command("git", "-C", ws, "apply", "--check", patch).CombinedOutput(); err != nil {
				t.Errorf("git apply --check: %v\n%s", err, o)
			}
			// The manager worked read-only in the workspace: it wrote nothing there.
			if _, err := os.Stat(filepath.Join(ws, "hello.txt")); err == nil {
				t.Errorf("hello.txt appeared in the workspace before any proposal was applied")
			}
			// Usage (and Claude's cost) from the real result events reach the metrics: every
			// call the model answered reported modelserver.DefaultUsage.
			u, n := modelserver.DefaultUsage, int64(srv.Answered())
			if n != 4 || out.Metrics.InputTokens != n*u.InputTokens || out.Metrics.OutputTokens != n*u.OutputTokens {
				t.Errorf("model calls %d, metrics tokens in %d out %d, want %d calls of %+v", n, out.Metrics.InputTokens, out.Metrics.OutputTokens, 4, u)
			}
			if cli.Name == "claude" && (!out.Metrics.CostKnown || out.Metrics.CostUSD <= 0) {
				t.Errorf("claude's cost did not reach the metrics: %v known %v", out.Metrics.CostUSD, out.Metrics.CostKnown)
			}
			for _, w := range rec.events("warning") {
				if w.Fields["tool"] != nil {
					t.Errorf("a denial in a run with the role defaults: %v", w.Fields)
				}
			}
			assertConfinedRuns(t, rec)
		})
	}
}

// assertConfinedRuns: the CLIs ran confined by the kernel (the default, auto), and the kernel
// refused nothing their work needed.
func assertConfinedRuns(t *testing.T, rec *recorder) {
	t.Helper()
	if !confine.Probe().Available() {
		return
	}
	for _, e := range rec.events("run_started") {
		if c := str(fld(e, "confinement")); !strings.HasPrefix(c, "Landlock ABI") {
			t.Errorf("the run was not confined: %q", c)
		}
	}
	for _, e := range rec.events("access_denied") {
		t.Errorf("confinement refused %v to %v: %v", fld(e, "path"), fld(e, "agent"), fld(e, "message"))
	}
}

// A worker whose flow sets Claude's default mode cannot edit: the run says so, naming the
// tool, the file and the field that allows it, and proposes nothing.
func TestRealCLIDenialWarning(t *testing.T) {
	_, out, rec, _ := runReal(t, modelserver.Claude, ", permissionMode: default")
	var denials []map[string]any
	for _, w := range rec.events("warning") {
		if w.Fields["tool"] != nil {
			denials = append(denials, w.Fields)
		}
	}
	if len(denials) != 1 {
		t.Fatalf("denial warnings %v", denials)
	}
	d := denials[0]
	msg, _ := d["message"].(string)
	path, _ := d["path"].(string)
	if d["agent"] != "coder" || d["tool"] != "Write" || d["field"] != "runtime.permissionMode" ||
		!strings.HasSuffix(path, "/coder/work/hello.txt") || !strings.Contains(msg, "runtime.permissionMode: acceptEdits") || !strings.Contains(msg, path) {
		t.Errorf("denial %v", d)
	}
	if len(out.Proposals) != 0 {
		t.Errorf("proposals %v from a worker whose edit was denied", out.Proposals)
	}
}

func logRealRun(t *testing.T, rec *recorder, srv *modelserver.Server, out *Outcome) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("outcome %+v", out)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, e := range rec.evs {
			t.Logf("  %s %v", e.Event, e.Fields)
		}
		for _, q := range srv.Requests() {
			t.Logf("  request %s conv=%d turn=%d cwd=%s err=%s", q.Path, q.Conversation, q.Turn, q.Cwd, q.Error)
		}
	})
}
