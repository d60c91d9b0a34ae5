//go:build linux

package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// wholeRepoFlow is a confined command worker given the whole workspace (files: ["."]) with
// extra runtime fields, and a reviewer.
func wholeRepoFlow(worker, workerExtra, reviewer string) string {
	return `version: 0.2
description: a worker with the whole repository
agents:
  - {id: coder, role: worker, files: ["."], runtime: {backendId: command, command: [bash, ` + worker + `]` + workerExtra + `}}
  - {id: rev, role: reviewer, runtime: {backendId: command, command: [bash, ` + reviewer + `]}}
interactions:
  - id: i1
    patternId: role_play_pair
    edges:
      - source: coder
        target: rev
        data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}
`
}

// runToProposal runs f, which must complete with the worker's one proposal, and loads it.
func runToProposal(t *testing.T, f *flow.Flow, o Options) *proposal.Loaded {
	t.Helper()
	out, err := Run(context.Background(), f, o)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted || len(out.Proposals) != 1 {
		t.Fatalf("outcome %+v", out)
	}
	pr, err := proposal.Load(o.Workspace, out.Proposals[0])
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

const handoff = `cat <<EOH
done

HANDOFF
Context:        whole repository
Goal:           run the tests
DoD:            the tests pass
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/coder/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/coder/proposal/proposal.json
ChangedFiles:
  - result.txt
Tests:
  - (see result.txt)
Next:
  - Orchestrator: review
EOH
`

// The project's own files (git archive of HEAD) in a workspace: a confined command worker with
// the whole repository runs go test on one of its packages in its sandbox, and it passes.
func TestConfinedWorkerRunsGoTestInWholeRepoSandbox(t *testing.T) {
	confinetest.Landlock(t)
	dir := t.TempDir()
	worker := script(t, dir, "worker.sh", `cat > /dev/null
(cd sidecar/safepath && go test -count=1 . 2>&1; echo "exit $?") > result.txt
`+handoff)
	reviewer := script(t, dir, "reviewer.sh", "cat > /dev/null; echo 'ANSWER: fine'\n")
	ws, f := workspace(t, wholeRepoFlow(worker, "", reviewer))
	if out, err := exec.Command("bash", "-c", `git -C ../.. archive HEAD | tar -x -C "$0"`, ws).CombinedOutput(); err != nil {
		t.Fatalf("git archive: %v\n%s", err, out)
	}
	rec := &recorder{}
	pr := runToProposal(t, f, Options{Workspace: ws, Sink: rec.sink})
	res, _ := os.ReadFile(filepath.Join(pr.AgentDir, "work", "result.txt"))
	if !strings.Contains(string(res), "\nexit 0") || !strings.Contains(string(res), "ok") {
		t.Fatalf("go test in the sandbox:\n%s\ndenied: %v", res, rec.events("access_denied"))
	}
	if cf := pr.Proposal.ChangedFiles; len(cf) != 1 || cf[0].Path != "result.txt" {
		t.Errorf("the proposal changes %+v, want result.txt only", cf)
	}
}

// A node project whose node_modules is ignored: the worker gets it shared (a read-only link,
// granted to the confined agent), runtime.setup runs once in the sandbox before the agent
// with its output in the log, node's test runner needing a module from node_modules passes,
// a write into the shared folder is refused, and the proposal holds no node_modules.
func TestSharedNodeModulesAndSetup(t *testing.T) {
	confinetest.Landlock(t)
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	worker := script(t, dir, "worker.sh", `cat > /dev/null
{ cat setup.txt; node --test 2>&1; echo "exit $?"; echo planted > node_modules/planted.js && echo "wrote node_modules"; } > result.txt 2>&1
`+handoff)
	reviewer := script(t, dir, "reviewer.sh", "cat > /dev/null; echo 'ANSWER: fine'\n")
	setup := `, env: [SETUP_TOKEN], shared: [node_modules], setup: [bash, -c, "echo set up in $PWD > setup.txt; echo hello from setup; echo to stderr >&2; echo token $SETUP_TOKEN"]`
	ws, f := workspace(t, wholeRepoFlow(worker, setup, reviewer))
	for name, body := range map[string]string{
		".gitignore":                         "node_modules/\n",
		"package.json":                       `{"name": "t", "version": "1.0.0"}` + "\n",
		"pad.test.js":                        "const test = require('node:test');\nconst assert = require('node:assert');\nconst pad = require('leftpad3');\ntest('pads', () => assert.strictEqual(pad('7', 3), '007'));\n",
		"node_modules/leftpad3/package.json": `{"name": "leftpad3", "main": "index.js"}` + "\n",
		"node_modules/leftpad3/index.js":     "module.exports = (s, n) => s.padStart(n, '0');\n",
	} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{}
	const secret = "s3cret-setup-token-value"
	pr := runToProposal(t, f, Options{Workspace: ws, Sink: rec.sink, Env: map[string]string{"SETUP_TOKEN": secret}})
	work := filepath.Join(pr.AgentDir, "work")
	logDir := filepath.Join(ws, ".agentcanvas", "logs")
	if logs, _ := exec.Command("grep", "-rl", "hello from setup", logDir).Output(); len(logs) == 0 {
		t.Errorf("the setup's output is not in the run's log under %s", logDir)
	}
	if logs, _ := exec.Command("grep", "-rl", secret, logDir).Output(); len(logs) > 0 {
		t.Errorf("the setup's output put a secret value in the log: %s", logs)
	}
	res, _ := os.ReadFile(filepath.Join(work, "result.txt"))
	r := string(res)
	if !strings.Contains(r, "set up in "+work) || !strings.Contains(r, "# pass 1") || !strings.Contains(r, "\nexit 0") || strings.Contains(r, "wrote node_modules") {
		t.Fatalf("the worker's result:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "node_modules", "planted.js")); err == nil {
		t.Error("the worker wrote into the workspace's node_modules")
	}
	if cf := pr.Proposal.ChangedFiles; len(cf) != 2 {
		t.Errorf("the proposal changes %+v, want result.txt and setup.txt only", cf)
	}
	var lines []string
	for _, e := range rec.events("setup_output") {
		lines = append(lines, str(fld(e, "stream"))+": "+str(fld(e, "line")))
	}
	if got := strings.Join(lines, "\n"); !strings.Contains(got, "stdout: hello from setup") || !strings.Contains(got, "stderr: to stderr") {
		t.Errorf("setup_output in the log:\n%s", got)
	}
	if fin := rec.events("setup_finished"); len(fin) != 1 || str(fld(fin[0], "status")) != "completed" {
		t.Errorf("setup_finished %v (want once: the sandbox is prepared once)", fin)
	}
}

// A setup that fails fails its agent, with the command, its exit code and its last lines; the
// agent itself never starts.
func TestSetupFailureFailsTheAgent(t *testing.T) {
	dir := t.TempDir()
	worker := script(t, dir, "worker.sh", "cat > /dev/null; touch ran.txt; echo 'ANSWER: done'\n")
	reviewer := script(t, dir, "reviewer.sh", "cat > /dev/null; echo 'ANSWER: fine'\n")
	ws, f := workspace(t, wholeRepoFlow(worker, `, setup: [bash, -c, "echo broke >&2; exit 3"]`, reviewer))
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status == StatusCompleted || !strings.Contains(out.Reason+fmt.Sprint(out.Interactions), "runtime.setup bash -c") || !strings.Contains(fmt.Sprint(out.Interactions), "broke") {
		t.Fatalf("outcome %s: %s %+v", out.Status, out.Reason, out.Interactions)
	}
	if fin := rec.events("setup_finished"); len(fin) != 1 || fld(fin[0], "exitCode") != float64(3) && fld(fin[0], "exitCode") != 3 {
		t.Errorf("setup_finished %v", fin)
	}
	for _, e := range rec.events("agent_started") {
		if fld(e, "agent") == "coder" {
			t.Errorf("the coder started after its setup failed")
		}
	}
}
