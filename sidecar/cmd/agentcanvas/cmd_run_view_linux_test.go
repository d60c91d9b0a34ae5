package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// viewFlow: a worker that waits for the test (so the block can be seen with it running),
// then asks a question and, on its follow-up turn, records the answer; and a reviewer.
func viewFlow(t *testing.T) (ws, file, gate string) {
	t.Helper()
	ws, _ = runWorkspace(t, "manager-worker.yaml")
	gate = filepath.Join(ws, "go")
	agent := filepath.Join(t.TempDir(), "agent.sh")
	os.WriteFile(agent, []byte(`#!/usr/bin/env bash
prompt=$(cat)
if [ "$AGENTCANVAS_AGENT_ID" = worker ]; then
  if [ "${AGENTCANVAS_TURN:-1}" = 1 ]; then
    while [ ! -e "`+gate+`" ]; do sleep 0.05; done
    echo "[USER_QUESTION]"
    echo "category: choice"
    echo "question: Which database?"
    echo "options:"
    echo "  - postgres"
    echo "  - sqlite"
    echo "default: sqlite"
    echo "required: true"
    echo "[/USER_QUESTION]"
    exit 0
  fi
  answer=$(printf '%s\n' "$prompt" | sed -n 's/.*"answer":"\([^"]*\)".*/\1/p' | tail -n 1)
  echo "$answer" > "`+ws+`/answer"
  echo "ANSWER: using $answer"
  exit 0
fi
echo "note from the reviewer" >&2
echo "ANSWER: fine"
`), 0o755)
	file = filepath.Join(ws, "flows", "view.yaml")
	os.WriteFile(file, []byte(`version: 0.2
description: the terminal view
agents:
  - {id: worker, role: planner, runtime: {backendId: command, command: [bash, `+agent+`]}}
  - {id: reviewer, role: reviewer, runtime: {backendId: command, command: [bash, `+agent+`]}}
interactions:
  - id: pair
    patternId: role_play_pair
    edges:
      - {source: worker, target: reviewer, data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}}
`), 0o644)
	return ws, file, gate
}

// On a terminal, `run` shows the live block (updated in place as the worker goes from
// running to asking to done), asks the question inline, and prints no JSON.
func TestRunViewOnATerminal(t *testing.T) {
	for _, noColor := range []bool{false, true} {
		name := map[bool]string{false: "colour", true: "NO_COLOR"}[noColor]
		t.Run(name, func(t *testing.T) {
			if noColor {
				t.Setenv("NO_COLOR", "1")
			} else {
				t.Setenv("NO_COLOR", "")
			}
			t.Setenv("TERM", "xterm-256color")
			ws, file, gate := viewFlow(t)
			tm := openTerminal(t, 120, 40)
			code := make(chan int, 1)
			// The worker records its answer in the workspace, which confinement refuses.
			go func() {
				code <- run([]string{"run", "--confine", "off", "--workspace", ws, file}, tm.slave, tm.slave, tm.slave)
			}()

			tm.waitFor(t, `(?m)^. worker\s+pair\s+round 1\s+running`)
			tm.waitFor(t, `(?m)^○ reviewer\s+pair\s+round 1\s+waiting`)
			os.WriteFile(gate, nil, 0o644)
			tm.waitFor(t, `pair \? worker asks: Which database\? \[postgres / sqlite\] \(default: sqlite\)`)
			tm.waitFor(t, `answer \[sqlite\]: $`)
			tm.master.Write([]byte("1\n"))
			if c := <-code; c != exitOK {
				t.Fatalf("exit %d\n%s", c, plainText(tm.close()))
			}
			raw := tm.close()
			shown := plainText(raw)
			if b, _ := os.ReadFile(filepath.Join(ws, "answer")); string(b) != "postgres\n" {
				t.Errorf("the worker got %q, want the option picked at the prompt", b)
			}
			for _, want := range []string{
				`(?m)^\s+✓ worker\s+pair\s+round 1\s+done\s+\d:\d\d\s+1 turn$`,
				`(?m)^\s+✓ reviewer\s+pair\s+round 1\s+done`,
				`(?m)^\d\d:\d\d:\d\d pair \? worker's question \S+: answered$`,
				`(?m)^\d\d:\d\d:\d\d ■ run completed in `,
			} {
				if !regexp.MustCompile(want).MatchString(shown) {
					t.Errorf("the terminal lacks %s:\n%s", want, shown)
				}
			}
			if regexp.MustCompile(`(?m)^\{"ts":`).MatchString(shown) {
				t.Errorf("JSON event lines on a terminal without --json:\n%s", shown)
			}
			// The block was redrawn in place: cursor up, clear to the end of the screen.
			if !regexp.MustCompile(`\x1b\[\d+A\r\x1b\[J`).Match(raw) {
				t.Errorf("no in-place redraw in %q", raw)
			}
			hasColour := regexp.MustCompile(`\x1b\[[0-9;]*m`).Match(raw)
			if hasColour == noColor {
				t.Errorf("colour = %v with NO_COLOR %v", hasColour, noColor)
			}
		})
	}
}

// --json on a terminal is the machine format, exactly: one JSON event a line.
func TestRunJSONOnATerminal(t *testing.T) {
	ws, file := runWorkspace(t, "manager-worker.yaml")
	tm := openTerminal(t, 120, 40)
	if c := run([]string{"run", "--json", "--dry-run", "--non-interactive", "--workspace", ws, file}, tm.slave, tm.slave, tm.slave); c != exitOK {
		t.Fatalf("exit %d", c)
	}
	out := tm.close()
	events := 0
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "{") {
			continue // the closing summary (stderr)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		events++
	}
	if events < 10 || bytes.Contains(out, []byte("\x1b[")) {
		t.Errorf("%d events; escape sequences: %v\n%s", events, bytes.Contains(out, []byte("\x1b[")), out)
	}
}

// Piped (not a terminal): the same view as plain lines, no colour, no cursor movement, no JSON.
func TestRunViewPiped(t *testing.T) {
	ws, file := runWorkspace(t, "manager-worker.yaml")
	var out, errb bytes.Buffer
	if c := run([]string{"run", "--dry-run", "--non-interactive", "--workspace", ws, file}, strings.NewReader(""), &out, &errb); c != exitOK {
		t.Fatalf("exit %d\n%s", c, errb.String())
	}
	s := out.String()
	if strings.Contains(s, "\x1b") || strings.Contains(s, `{"ts":`) {
		t.Errorf("piped output has escape sequences or JSON:\n%s", s)
	}
	for _, want := range []string{
		`(?m)^\d\d:\d\d:\d\d ▶ run run_\S+ of manager-worker: 1 interaction, dry run`,
		`(?m)^\d\d:\d\d:\d\d build · coder started \(round 1, dry-run\)$`,
		`(?m)^\d\d:\d\d:\d\d build \+ coder proposes 1 file: dry-run-coder.md \(added\)$`,
		`(?m)^\d\d:\d\d:\d\d build → coder hands off to lead$`,
		`(?m)^\d\d:\d\d:\d\d build ■ completed \(quality_gate\) after 1 round`,
		`(?m)^\s+✓ coder\s+build\s+round 1\s+done`,
		`(?m)^\s+proposals: \.agentcanvas/sandboxes/run_\S+/(coder|tester)/proposal/proposal\.json$`,
		`(?m)^\s+export:\s+agentcanvas proposal export --workspace \S+ run_\S+ > run_\S+\.patch$`,
	} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("piped view lacks %s:\n%s", want, s)
		}
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb.String())
	}
}
