package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A flow whose agent names a CLI that is not installed is refused before anything starts,
// with the command that installs it, not at the agent's first turn; a dry run needs no CLI.
func TestRunRefusesAMissingCLIBeforeItStarts(t *testing.T) {
	ws, f := workspace(t, `version: 0.2
agents:
  - {id: a, role: planner, runtime: {backendId: codex}}
  - {id: b, role: reviewer, runtime: {backendId: codex}}
interactions:
  - id: first
    patternId: role_play_pair
    edges:
      - source: a
        target: b
        data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}
`)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir() // git (for the run's sandboxes), and no codex
	os.Symlink(git, filepath.Join(bin, "git"))
	t.Setenv("PATH", bin)
	_, err = Run(context.Background(), f, Options{Workspace: ws})
	if err == nil || !strings.Contains(err.Error(), "agent a: codex is not installed (not found on PATH): npm install -g @openai/codex@0.169.0") || strings.Count(err.Error(), "codex is not installed") != 1 {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, RunsDir)); err == nil {
		t.Error("a refused run left a run folder")
	}
	if out, err := Run(context.Background(), f, Options{Workspace: ws, DryRun: true}); err != nil || out.Status != StatusCompleted {
		t.Errorf("dry run: %v", err)
	}
}
