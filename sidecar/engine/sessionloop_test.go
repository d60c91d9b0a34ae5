package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// sessionFlow is one agent, in its own folder, run as a session loop of at most 3 sessions.
const sessionFlow = `version: 0.2
description: build the two features
agents:
  - {id: worker, role: local, runtime: {backendId: command, command: [bash, AGENT], cwdMode: agentHome, sessionLoop: {maxIterations: 3, delayMs: 20}}}
systemNodes:
  - {id: bridge, type: bridge}
interactions:
  - id: i1
    patternId: protocol_bridge
    edges:
      - source: bridge
        target: worker
        data:
          termination: {type: max_rounds, rounds: 1}
          params: {rate_limit_per_min: 10}
`

// cli-agent-session-loop.md: the turn of an agent with runtime.sessionLoop is a series of
// fresh sessions: the first (no feature list yet) gets the initializer prompt and writes the
// list and its notes; each later one gets the coding prompt, a new process that knows only
// what the files say, and marks one feature passing; the loop ends when all pass.
func TestSessionLoopRunsFreshSessions(t *testing.T) {
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `prompt=$(cat)
n=$(ls "`+dir+`" | grep -c '^prompt\.')
n=$((n+1))
printf '%s' "$prompt" > "`+dir+`/prompt.$n"
echo "$AGENTCANVAS_TURN $$" >> "`+dir+`/procs"
if [ ! -e feature_list.json ]; then
  echo '[{"category":"f","description":"one","steps":[],"passes":false},{"category":"f","description":"two","steps":[],"passes":false}]' > feature_list.json
  echo "session $n: set up" > claude-progress.txt
else
  cat claude-progress.txt >> "`+dir+`/read"
  if grep -q '"passes":false' feature_list.json; then
    sed -i '0,/"passes":false/s//"passes":true/' feature_list.json
  fi
  echo "session $n: one more feature" >> claude-progress.txt
fi
echo "ANSWER: session $n done"
`)
	ws, f := workspace(t, strings.ReplaceAll(sessionFlow, "AGENT", agent))
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("%v %+v", err, out)
	}
	var prompts []string
	for i := 1; ; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "prompt."+string(rune('0'+i))))
		if err != nil {
			break
		}
		prompts = append(prompts, string(b))
	}
	if len(prompts) != 3 {
		t.Fatalf("%d sessions, want 3 (one to set up, two features)", len(prompts))
	}
	if !strings.Contains(prompts[0], "Session 1 of 3") || !strings.Contains(prompts[0], "initializer") {
		t.Errorf("session 1 prompt:\n%s", prompts[0])
	}
	for i, p := range prompts[1:] {
		if !strings.Contains(p, "coding session") || !strings.Contains(p, "fresh context") {
			t.Errorf("session %d prompt:\n%s", i+2, p)
		}
	}
	for _, p := range prompts {
		if !strings.Contains(p, "outside client's tool call") { // the pattern's own prompt is the task of every session
			t.Errorf("a session lacks the turn's prompt:\n%s", p)
		}
	}
	procs, _ := os.ReadFile(filepath.Join(dir, "procs"))
	lines := strings.Split(strings.TrimSpace(string(procs)), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		turn, pid, _ := strings.Cut(l, " ")
		if turn != "1" || seen[pid] {
			t.Errorf("sessions %q: each must be a new process on its first turn", lines)
		}
		seen[pid] = true
	}
	if read, _ := os.ReadFile(filepath.Join(dir, "read")); !strings.Contains(string(read), "session 1: set up") || !strings.Contains(string(read), "session 2: one more feature") {
		t.Errorf("later sessions did not read the notes of earlier ones:\n%s", read)
	}
	evs := events(t, ws, f.Name)
	if n := len(eventsNamed(evs, "session_started")); n != 3 {
		t.Errorf("%d session_started events", n)
	}
	fin := eventsNamed(evs, "session_loop_finished")
	if len(fin) != 1 || fld(fin[0], "reason") != "all features pass" || fld(fin[0], "passing") != float64(2) {
		t.Fatalf("session_loop_finished %v", fin)
	}
	if steps := eventsNamed(evs, "step"); len(steps) != 1 || !strings.Contains(str(fld(steps[0], "note")), "session 3 done") {
		t.Errorf("steps %v: the loop is one turn, its reply the last session's", steps)
	}
}

// maxIterations bounds the loop: features that never pass end it after that many sessions.
func TestSessionLoopStopsAtMaxIterations(t *testing.T) {
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `cat >/dev/null
echo x >> "`+dir+`/sessions"
[ -e feature_list.json ] || echo '[{"category":"f","description":"never","steps":[],"passes":false}]' > feature_list.json
echo "ANSWER: tried"
`)
	ws, f := workspace(t, strings.ReplaceAll(sessionFlow, "AGENT", agent))
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("%v %+v", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sessions")); strings.Count(string(b), "x") != 3 {
		t.Errorf("%d sessions, want 3", strings.Count(string(b), "x"))
	}
	fin := eventsNamed(events(t, ws, f.Name), "session_loop_finished")
	if len(fin) != 1 || fld(fin[0], "reason") != "max iterations" || fld(fin[0], "passing") != float64(0) {
		t.Fatalf("session_loop_finished %v", fin)
	}
}

// The session loop with each real CLI against the scripted model: the worker's two sessions
// are two CLI processes (`claude -p`, `codex exec`, `gemini`), each opening a new conversation
// (no model turn carried over: the scripted conversation has two replies, so a resumed
// session would run out of them and be refused).
func TestRealCLISessionLoop(t *testing.T) {
	for _, cli := range modelserver.CLIs {
		t.Run(cli.Name, func(t *testing.T) {
			_, out, rec, srv := runReal(t, cli, ", sessionLoop: {maxIterations: 2, delayMs: 10}")
			if out.Status != StatusCompleted {
				t.Fatalf("run %s: %s", out.Status, out.Reason)
			}
			fresh, refused := 0, 0
			for _, r := range srv.Requests() {
				if r.Error != "" {
					refused++
				}
				if r.Conversation == 1 && r.Turn == 0 {
					fresh++
				}
			}
			if fresh != 2 || refused != 0 {
				t.Errorf("the worker opened %d fresh conversations (want 2), %d requests refused", fresh, refused)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			sessions := 0
			for _, e := range rec.evs {
				if e.Event == "session_started" && e.Fields["agent"] == "coder" {
					sessions++
				}
				if e.Event == "session_loop_finished" && e.Fields["reason"] != "max iterations" {
					t.Errorf("loop ended %v", e.Fields)
				}
			}
			if sessions != 2 {
				t.Errorf("%d sessions", sessions)
			}
		})
	}
}
