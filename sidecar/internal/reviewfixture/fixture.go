// Package reviewfixture is the workspace the review loop's tests share (engine, server,
// command line): a person hands a task to one command worker (P20), "coder", whose script the
// test writes to agents/coder.sh — its first turn changes a file, its revision turn does what a
// comment in its prompt asks — in a git repository, as a real workspace is.
package reviewfixture

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Flow is the flow file: coder gets file, runs agents/coder.sh, and the interaction bounds
// its time and spend (a revision inherits both).
func Flow(file string) string {
	return `version: "0.2"
description: Fix the greeting.
agents:
  - id: coder
    role: worker
    files: [` + file + `]
    runtime: {kind: cli, backendId: command, command: [bash, agents/coder.sh]}
systemNodes:
  - {id: you, type: bridge, name: You}
interactions:
  - id: i1
    patternId: protocol_bridge
    edges:
      - source: you
        target: coder
        data:
          termination:
            any:
              - {type: timeout_ms, ms: 600000}
              - {type: max_cost_usd, usd: 1.5}
          params: {protocol: person, timeout_ms: 600000, rate_limit_per_min: 10}
`
}

// Workspace makes a git repository at a new temporary folder holding files (slash paths),
// all committed, and returns it.
func Workspace(t testing.TB, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	for name, body := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "fixture"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return ws
}
