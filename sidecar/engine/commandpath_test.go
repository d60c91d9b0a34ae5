package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// relativeCommands is a manager and a worker whose commands are written as docs/agents.md
// shows them: paths relative to the workspace root. The worker runs in its sandbox's work/.
const relativeCommands = `version: 0.2
description: relative agent commands
agents:
  - {id: lead, role: manager, runtime: {backendId: command, command: [bash, agents/manager.sh]}}
  - {id: coder, role: worker, runtime: {kind: cli, backendId: command, cwdMode: agentHome, command: WORKER, env: [AC_DIR]}}
interactions:
  - id: build
    patternId: manager_worker
    edges:
      - source: lead
        target: coder
        data: {termination: {type: max_rounds, rounds: 1}}
`

// The manager assigns the coder; the coder says where it ran and from which file.
const managerScript = `prompt=$(cat)
if grep -q "Review your team" <<<"$prompt"; then echo "ACCEPT coder"; else echo "ASSIGN coder: say hello"; fi
`

const reviewPy = `import os, sys
sys.stdin.read()
open(os.environ["AC_DIR"] + "/where", "w").write(os.getcwd() + " " + os.path.abspath(__file__))
print("reviewed")
`

func commandWorkspace(t *testing.T, worker string) (string, *flow.Flow) {
	t.Helper()
	ws, f := workspace(t, strings.Replace(relativeCommands, "WORKER", worker, 1))
	os.MkdirAll(filepath.Join(ws, "agents"), 0o755)
	os.WriteFile(filepath.Join(ws, "agents", "manager.sh"), []byte(managerScript), 0o644)
	os.WriteFile(filepath.Join(ws, "agents", "review.py"), []byte(reviewPy), 0o644)
	os.WriteFile(filepath.Join(ws, "agents", "review.sh"), []byte("#!/usr/bin/env bash\ncat >/dev/null\necho \"$PWD $0\" >\"$AC_DIR/where\"\necho reviewed\n"), 0o755)
	return ws, f
}

// The third case: docs/agents.md's own example, [python3, agents/review.py] with
// cwdMode agentHome, runs for a worker (it exited 127 when the path was taken from the
// sandbox's work/), and so does an executable given as ./agents/review.sh. The worker still
// runs in its sandbox.
func TestRelativeCommandPaths(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	for _, c := range []struct{ name, worker, script string }{
		{"interpreter and script", "[python3, agents/review.py]", "agents/review.py"},
		{"executable program", "[./agents/review.sh]", "agents/review.sh"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, f := commandWorkspace(t, c.worker)
			dir := t.TempDir()
			out, err := Run(context.Background(), f, Options{Workspace: ws, Env: map[string]string{"AC_DIR": dir}})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != StatusCompleted {
				t.Fatalf("run %s: %s", out.Status, out.Reason)
			}
			where, _ := os.ReadFile(filepath.Join(dir, "where"))
			sandbox := filepath.Join(ws, ".agentcanvas", "sandboxes", out.RunID, "coder", "work")
			if want := sandbox + " " + filepath.Join(ws, c.script); strings.TrimSpace(string(where)) != want {
				t.Errorf("the worker ran as %q, want %q (its sandbox, the workspace's script)", where, want)
			}
		})
	}
}

// A command naming a script that is not in the workspace fails the run before any agent
// starts, with an error naming the agent and the field.
func TestMissingCommandScript(t *testing.T) {
	ws, f := commandWorkspace(t, "[bash, agents/worker.sh]")
	_, err := Run(context.Background(), f, Options{Workspace: ws})
	if err == nil {
		t.Fatal("the run started with a missing script")
	}
	for _, want := range []string{"agent coder", "runtime.command[1]", "agents/worker.sh does not exist in the workspace"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", "logs")); err == nil {
		t.Error("a log was opened for a run that never started")
	}
}
