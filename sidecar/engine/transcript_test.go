package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// Every turn is kept in the run's transcript: the prompt as sent (a secret the run was given
// redacted, even in a prompt of an agent not given it), the reply, every stderr line of a
// completed turn, exit, duration, in the order the turns ended; the file is the user's only.
func TestTranscriptKeepsEveryTurn(t *testing.T) {
	const secret = "tok-SECRET-123456"
	agent := script(t, t.TempDir(), "agent.sh", `cat >/dev/null
echo "thinking about $AGENTCANVAS_AGENT_ID" >&2
echo "second line" >&2
echo "ANSWER: ok from $AGENTCANVAS_AGENT_ID"
`)
	yaml := strings.Replace(strings.ReplaceAll(twoStage, "AGENT", agent), "command: [bash, "+agent+"]}}", "command: [bash, "+agent+"], env: [API_TOKEN]}}", 1)
	ws, f := workspace(t, yaml)
	out, err := Run(context.Background(), f, Options{Workspace: ws, Task: "deploy with " + secret, Env: map[string]string{"API_TOKEN": secret}})
	if err != nil {
		t.Fatal(err)
	}
	turns, err := transcript.Read(ws, out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) < 4 {
		t.Fatalf("%d turns recorded, want one per step: %+v", len(turns), turns)
	}
	seen := map[string]bool{}
	for i, tr := range turns {
		seen[tr.Agent] = true
		if tr.Seq != i+1 || tr.InteractionID == "" || tr.Round < 1 || tr.Status != "completed" || tr.Backend != "command" {
			t.Errorf("turn %d: %+v", i, tr)
		}
		if strings.Contains(tr.Prompt, secret) || !strings.Contains(tr.Prompt, "[redacted:API_TOKEN]") {
			t.Errorf("turn %d (%s): the prompt is not redacted: %q", i, tr.Agent, tr.Prompt)
		}
		if strings.TrimSpace(tr.Reply) != "ANSWER: ok from "+tr.Agent {
			t.Errorf("turn %d reply = %q", i, tr.Reply)
		}
		if len(tr.Stderr) != 2 || tr.Stderr[0] != "thinking about "+tr.Agent {
			t.Errorf("turn %d stderr = %q", i, tr.Stderr)
		}
		if tr.Started.IsZero() || tr.DurationMs < 0 {
			t.Errorf("turn %d timing: %v %d", i, tr.Started, tr.DurationMs)
		}
	}
	if !seen["a"] || !seen["b"] || !seen["c"] {
		t.Errorf("agents recorded: %v", seen)
	}
	st, err := os.Stat(filepath.Join(ws, transcript.RunsDir, out.RunID, transcript.FileName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode: %v %v", st, err)
	}
}

// A run whose agents never ran has no transcript, and reading it says so.
func TestTranscriptAbsentForAnUnknownRun(t *testing.T) {
	if _, err := transcript.Read(t.TempDir(), "run_nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}

// A paced dry run waits before each agent turn (a lower bound: a busy machine only slows it
// more); a real run is not paced.
func TestDryRunPace(t *testing.T) {
	ws := gitWorkspace(t)
	f := patternFlow(t, ws, "paced", flowSpec{pattern: "debate_judge", description: "Say hello"})
	const pace = 150 * time.Millisecond
	out, err := Run(context.Background(), f, Options{Workspace: ws, DryRun: true, Pace: pace})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("%v %+v", err, out)
	}
	turns, err := transcript.Read(ws, out.RunID)
	if err != nil || len(turns) < 2 {
		t.Fatalf("%d turns, %v", len(turns), err)
	}
	// Turns asked together start together (a wave); each wave starts at least pace after the
	// one before it started, and the first at least pace after the run did.
	st, err := ReadState(ws, out.RunID)
	if err != nil {
		t.Fatal(err)
	}
	starts := make([]time.Time, len(turns))
	for i, tr := range turns {
		starts[i] = tr.Started
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	wave, waves := st.Started, 0
	for _, s := range starts {
		if waves > 0 && s.Sub(wave) < pace/2 {
			continue // the same wave
		}
		if s.Sub(wave) < pace {
			t.Errorf("a turn started %v after the previous wave (or the run), want at least %v", s.Sub(wave), pace)
		}
		wave, waves = s, waves+1
	}
	if waves < 3 {
		t.Errorf("%d waves of turns", waves)
	}
}

// A turn stopped before it gave its reply keeps what the agent had said until then (marked
// partial), not an empty reply.
func TestStoppedTurnKeepsWhatItHad(t *testing.T) {
	dir := t.TempDir()
	agent := script(t, dir, "agent.sh", `cat >/dev/null
echo "I read the failing test."
echo "Now fixing src/a.ts, SECRET-abc-123 stays out."
touch "`+dir+`/said"
while :; do sleep 1; done
`)
	ws, f := workspace(t, pairFlow("", "runtime: {backendId: command, command: [bash, "+agent+"], env: [MY_TOKEN]}", "runtime: {backendId: dry-run}", 1))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Outcome)
	go func() {
		out, err := Run(ctx, f, Options{Workspace: ws, Limits: recording, Env: map[string]string{"MY_TOKEN": "SECRET-abc-123"}})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	for { // the agent has said its lines
		if _, err := os.Stat(filepath.Join(dir, "said")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	out := <-done
	turns, err := transcript.Read(ws, out.RunID)
	if err != nil || len(turns) == 0 {
		t.Fatalf("turns %v %v", turns, err)
	}
	tr := turns[len(turns)-1]
	if tr.Agent != "a" || tr.Status != "stopped" || !tr.Partial || !strings.Contains(tr.Reply, "I read the failing test.\nNow fixing src/a.ts") || strings.Contains(tr.Reply, "SECRET-abc-123") {
		t.Errorf("stopped turn: %+v", tr)
	}
}

// A turn's tool calls are kept in order with their inputs and results; one whose result never
// came says so; the text the agent said along the way is kept.
func TestTurnActionsKeepToolCalls(t *testing.T) {
	var a turnActions
	for _, ev := range []runtime.Event{
		{Kind: runtime.EventText, Text: "Let me look."},
		{Kind: runtime.EventToolUse, Tool: "Read", ToolID: "t1", Input: map[string]any{"file_path": "/w/src/a.ts"}},
		{Kind: runtime.EventToolUse, Tool: "Bash", ToolID: "t2", Input: map[string]any{"command": "npm test"}},
		{Kind: runtime.EventToolResult, ToolID: "t2", Text: "1 failing", IsError: true},
		{Kind: runtime.EventToolResult, ToolID: "t1", Text: strings.Repeat("x", 3*transcript.MaxToolText)},
		{Kind: runtime.EventToolUse, Tool: "Write", ToolID: "t3", Input: map[string]any{"file_path": "/w/src/a.ts"}},
		{Kind: runtime.EventText, Text: "Writing the fix."},
	} {
		a.add(ev)
	}
	want := []transcript.ToolCall{
		{Tool: "Read", Input: `{"file_path":"/w/src/a.ts"}`, Output: strings.Repeat("x", transcript.MaxToolText+1)},
		{Tool: "Bash", Input: `{"command":"npm test"}`, Output: "1 failing", IsError: true},
		{Tool: "Write", Input: `{"file_path":"/w/src/a.ts"}`, Unanswered: true},
	}
	if !slices.Equal(a.tools, want) || a.said.String() != "Let me look.\nWriting the fix." {
		t.Errorf("tools %+v\nsaid %q", a.tools, a.said.String())
	}
}
