package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// An agent prints terminal controls in everything the run shows of it: its reply (a window
// title, an OSC 52 clipboard write, a C1 CSI, a screen clear), its stderr on failure, and
// its question with its options. On the person's terminal, each is shown as text or left out
// (termsafe) and acts on nothing: the terminal gets no escape but the view's own colours and
// redraws. Through a real terminal, with the prompt answered there.
func TestRunShowsNoAgentEscapes(t *testing.T) {
	ws, _ := runWorkspace(t, "manager-worker.yaml")
	agent := filepath.Join(t.TempDir(), "agent.sh")
	const esc = `\033]52;c;UFdORUQ=\007\033]0;PWNED-TITLE\007\302\23331m\033[2J`
	os.WriteFile(agent, []byte(`#!/usr/bin/env bash
cat >/dev/null
if [ "$AGENTCANVAS_AGENT_ID" = worker ] && [ "${AGENTCANVAS_TURN:-1}" = 1 ]; then
  printf '[USER_QUESTION]\ncategory: choice\nquestion: Pick `+esc+`\noptions:\n  - one `+esc+`\n  - two\ndefault: two\nrequired: true\n[/USER_QUESTION]\n'
  exit 0
fi
printf 'ANSWER: `+esc+`\n'
printf 'stderr `+esc+`\n' >&2
exit 3
`), 0o755)
	file := filepath.Join(ws, "flows", "esc.yaml")
	os.WriteFile(file, []byte(`version: 0.2
agents:
  - {id: worker, role: planner, runtime: {backendId: command, command: [bash, `+agent+`]}}
  - {id: reviewer, role: reviewer, runtime: {backendId: command, command: [bash, `+agent+`]}}
interactions:
  - id: pair
    patternId: role_play_pair
    edges:
      - {source: worker, target: reviewer, data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}}
`), 0o644)
	t.Setenv("TERM", "xterm-256color")
	tm := openTerminal(t, 120, 40)
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"run", "--confine", "off", "--workspace", ws, file}, tm.slave, tm.slave, tm.slave)
	}()
	tm.waitFor(t, `answer \[two\]: $`)
	tm.master.Write([]byte("\n"))
	<-code
	raw := tm.close()
	for _, bad := range [][]byte{[]byte("\x1b]"), []byte("\xc2\x9b"), []byte("\x1b[2J"), []byte("\x07")} {
		if bytes.Contains(raw, bad) {
			t.Errorf("the terminal got %q from the agent:\n%q", bad, raw)
		}
	}
	if !bytes.Contains(raw, []byte(`\u009b31m`)) {
		t.Errorf("the agent's text is not shown:\n%q", raw)
	}
}
