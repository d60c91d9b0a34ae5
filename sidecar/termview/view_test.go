package termview

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/golden"
)

var t0 = time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)

func ev(ms int, interaction, name string, fields map[string]any) eventlog.Event {
	return eventlog.Event{TS: t0.Add(time.Duration(ms) * time.Millisecond).UnixMilli(), Flow: "review", RunID: "run_20261124-093000_abcdef",
		InteractionID: interaction, Event: name, Fields: fields}
}

// A run with a bit of everything: a worker that reports spend and hands off a proposal, a
// question, a reviewer that fails with stderr, a skipped interaction.
func story() []eventlog.Event {
	return []eventlog.Event{
		ev(0, "", "run_started", map[string]any{"interactions": 2, "dryRun": false, "task": "Fix the flaky parser test\nmore detail"}),
		ev(10, "build", "interaction_started", map[string]any{"patternId": "critic_refiner_curator", "nodes": []string{"coder", "critic"}}),
		ev(20, "build", "agent_started", map[string]any{"agent": "coder", "round": 0, "backend": "claude"}),
		ev(900, "build", "question_asked", map[string]any{"agent": "coder", "id": "q1", "fields": map[string]any{"question": "Which parser?", "options": []any{"peg", "hand-written"}, "default": "peg"}}),
		ev(1500, "build", "question_answered", map[string]any{"agent": "coder", "id": "q1", "outcome": "answered"}),
		ev(2000, "build", "warning", map[string]any{"agent": "coder", "message": "src/parser.test.ts does not exist in the workspace yet; the agent starts without it"}),
		ev(4000, "build", "step", map[string]any{"to": "coder", "note": "1. Intent\n- Made the parser handle trailing commas"}),
		ev(4000, "build", "agent_finished", map[string]any{"agent": "coder", "status": "completed", "turns": 2, "inputTokens": int64(12000), "outputTokens": int64(345), "costUsd": 0.0412}),
		ev(4010, "build", "proposal_created", map[string]any{"agent": "coder", "proposal": ".agentcanvas/sandboxes/run_20261124-093000_abcdef/coder/proposal/proposal.json",
			"changedFiles": []map[string]any{{"path": "src/parser.ts", "status": "modified"}, {"path": "src/parser.test.ts", "status": "added"}}}),
		ev(4020, "build", "proposal_reviewed", map[string]any{"agent": "coder", "applicable": false, "problems": []map[string]any{{"path": "src/parser.ts", "reason": "the file changed since the sandbox was prepared"}}}),
		ev(4030, "build", "message", map[string]any{"from": "coder", "to": "critic", "type": "handoff"}),
		ev(4040, "build", "agent_started", map[string]any{"agent": "critic", "round": 1, "backend": "codex"}),
		ev(7040, "build", "agent_finished", map[string]any{"agent": "critic", "status": "failed", "turns": 1, "inputTokens": int64(800), "outputTokens": int64(20),
			"error": "codex exited with code 1", "stderr": []string{"Error: stream disconnected before completion", "retrying is not possible"}}),
		ev(7050, "build", "proposal_held", map[string]any{"agent": "coder", "reason": "the interaction failed"}),
		ev(7060, "build", "terminated", map[string]any{"status": "failed", "reason": "error", "rounds": 1, "error": "agent critic failed: codex exited with code 1"}),
		ev(7070, "ship", "terminated", map[string]any{"status": "skipped", "reason": "skipped", "rounds": 0, "note": "dependency build failed"}),
		ev(7100, "", "run_finished", map[string]any{"status": "failed", "reason": "interaction build failed", "proposals": []string{".agentcanvas/sandboxes/run_20261124-093000_abcdef/coder/proposal/proposal.json"}}),
	}
}

// Piped (not a terminal): plain lines, no colour, no cursor movement; each agent turn is a
// line since there is no block.
func TestPlainLines(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Location: time.UTC, Now: func() time.Time { return t0.Add(8 * time.Second) }})
	for _, e := range story() {
		v.Event(e)
	}
	v.Printf("%slog:       .agentcanvas/logs/review", Indent)
	v.Close()
	if bytes.ContainsRune(out.Bytes(), 0x1b) {
		t.Errorf("plain output has escape sequences:\n%q", out.String())
	}
	golden.Check(t, "plain.golden", out.Bytes())
}

// screen replays what a terminal would show for output using the few sequences the view
// writes (cursor up, clear to the end of the screen or line, colours): the lines on screen.
func screen(out []byte) []string {
	lines := [][]byte{nil}
	row := 0
	csi := regexp.MustCompile(`^\x1b\[([0-9;]*)([A-Za-z])`)
	for i := 0; i < len(out); {
		if m := csi.FindSubmatch(out[i:]); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			switch m[2][0] {
			case 'A':
				row = max(0, row-n)
			case 'J':
				lines = lines[:row+1]
				lines[row] = nil
			case 'K', 'm':
			}
			i += len(m[0])
			continue
		}
		switch out[i] {
		case '\n':
			row++
			if row == len(lines) {
				lines = append(lines, nil)
			}
		case '\r':
		default:
			lines[row] = append(lines[row], out[i])
		}
		i++
	}
	var shown []string
	for _, l := range lines[:row] {
		shown = append(shown, string(l))
	}
	return shown
}

// Live (a terminal): the block under the lines is redrawn in place as events arrive, and
// ends as the agents' final table.
func TestLiveBlockUpdates(t *testing.T) {
	var out bytes.Buffer
	now := t0
	v := New(&out, Options{Mode: Mode{Live: true, Size: func() (int, int) { return 120, 30 }}, Location: time.UTC, Now: func() time.Time { return now }, Tick: time.Hour, Frame: -1})
	evs := story()
	shown := func() string { return strings.Join(screen(out.Bytes()), "\n") }
	for _, e := range evs[:3] { // coder's turn started
		v.Event(e)
	}
	now = t0.Add(5 * time.Second)
	v.Event(ev(30, "", "warning", map[string]any{"message": "nothing"}))
	s := shown()
	if !regexp.MustCompile(`(?m)^── review · run_20261124-093000_abcdef · 0:05 · 0 of 2 interactions ended$`).MatchString(s) ||
		!regexp.MustCompile(`(?m)^. coder\s+build\s+round 1\s+running\s+0:04$`).MatchString(s) ||
		!regexp.MustCompile(`(?m)^○ critic\s+build\s+round 1\s+waiting\s+0:00$`).MatchString(s) {
		t.Fatalf("block while coder runs:\n%s", s)
	}
	v.Event(evs[3]) // a question
	if s := shown(); !regexp.MustCompile(`(?m)^\? coder\s+build\s+round 1\s+asking`).MatchString(s) {
		t.Fatalf("block while coder asks:\n%s", s)
	}
	for _, e := range evs[4:8] {
		v.Event(e)
	}
	s = shown()
	if !regexp.MustCompile(`(?m)^· coder\s+build\s+round 1\s+idle\s+0:03\s+1 turn\s+12.3k tokens\s+\$0.04\s+Made the parser handle trailing commas$`).MatchString(s) {
		t.Fatalf("block after coder's turn:\n%s", s)
	}
	if n := len(regexp.MustCompile(`coder\s+build\s+round`).FindAllString(s, -1)); n != 1 {
		t.Errorf("the block was drawn twice, not redrawn in place:\n%s", s)
	}
	for _, e := range evs[8:] {
		v.Event(e)
	}
	v.Close()
	s = shown()
	for _, want := range []string{
		`(?m)^         ✓ coder\s+build\s+round 1\s+done\s+0:03\s+1 turn\s+12.3k tokens\s+\$0.04$`,
		`(?m)^         ✗ critic\s+build\s+round 2\s+failed\s+0:03\s+1 turn\s+820 tokens$`,
		`(?m)^09:30:07 build ✗ critic: turn failed: codex exited with code 1\n\s+│ Error: stream disconnected before completion\n\s+│ retrying is not possible$`,
		// 126 columns on a 120-column terminal: wrapped at a space, not cut mid-word.
		`(?m)^09:30:07 ■ run failed in 7.1s \(interaction build failed\): 2 agent turns, 13.2k tokens, cost not reported by every\n {11}backend, 1 proposal$`,
	} {
		if !regexp.MustCompile(want).MatchString(s) {
			t.Errorf("final screen lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "──") {
		t.Errorf("the live block is still on screen after the run:\n%s", s)
	}
	if regexp.MustCompile(`\x1b\[[0-9;]*m`).Match(out.Bytes()) {
		t.Errorf("colour without Color")
	}
}

// Colour on a terminal without NO_COLOR; a block cut to the terminal's width.
func TestLiveColourAndWidth(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Mode: Mode{Live: true, Color: true, Size: func() (int, int) { return 40, 30 }}, Location: time.UTC, Now: func() time.Time { return t0 }, Tick: time.Hour, Frame: -1})
	for _, e := range story()[:8] {
		v.Event(e)
	}
	if !bytes.Contains(out.Bytes(), []byte("\x1b[33m")) {
		t.Errorf("no colour on a colour terminal: %q", out.String())
	}
	ansi := regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	lines := screen(out.Bytes())
	for _, l := range lines[len(lines)-3:] { // the block
		if n := len([]rune(ansi.ReplaceAllString(l, ""))); n > 39 {
			t.Errorf("block line of %d columns on a 40-column terminal: %q", n, l)
		}
	}
	v.Close()
}

// More agents than rows: the ones at work stay on screen and the rest are counted.
func TestLiveBlockFitsTheHeight(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Mode: Mode{Live: true, Size: func() (int, int) { return 100, 8 }}, Location: time.UTC, Now: func() time.Time { return t0 }, Tick: time.Hour, Frame: -1})
	nodes := []string{}
	for i := range 12 {
		nodes = append(nodes, "w"+strconv.Itoa(i))
	}
	v.Event(ev(0, "", "run_started", map[string]any{"interactions": 1}))
	v.Event(ev(1, "vote", "interaction_started", map[string]any{"patternId": "majority_vote", "nodes": nodes}))
	v.Event(ev(2, "vote", "agent_started", map[string]any{"agent": "w9", "round": 0}))
	s := screen(out.Bytes())
	block := s[len(s)-6:]
	if !strings.Contains(block[1], "w9") || !strings.Contains(block[5], "and 8 more agents") {
		t.Errorf("block on 8 rows:\n%s", strings.Join(s, "\n"))
	}
	v.Close()
}

// A reply asked for again says which agent lacked which line.
func TestReplyRepairLine(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Location: time.UTC, Now: func() time.Time { return t0 }})
	v.Event(eventlog.Event{TS: t0.UnixMilli(), Flow: "f", RunID: "r", InteractionID: "i1", Event: "reply_repair",
		Fields: map[string]any{"agent": "lead", "missing": []string{"ASSIGN <coder>: <assignment>"}}})
	v.Close()
	if !strings.Contains(out.String(), "lead's reply lacks `ASSIGN <coder>: <assignment>`: asked again") {
		t.Errorf("output:\n%s", out.String())
	}
}

// Every warning the log has reaches the terminal, one line each: a refused access, an
// undeliverable message, a collision between proposals (besides warnings, refused messages
// and repairs above).
func TestWarningsOfTheLogAreLines(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Location: time.UTC, Now: func() time.Time { return t0 }})
	for _, e := range []eventlog.Event{
		ev(0, "i1", "access_denied", map[string]any{"agent": "bidder_a", "path": "/tmp/prompt.txt", "message": "Permission denied", "turn": 1}),
		ev(1, "i1", "undeliverable", map[string]any{"from": "router", "to": []string{"billing", "refunds"}}),
		ev(2, "i1", "proposal_conflict", map[string]any{"agent": "w1", "otherAgentId": "w2", "otherRunId": "run_x", "path": "src/a.ts", "message": "both change line 3"}),
	} {
		v.Event(e)
	}
	v.Close()
	want := []string{
		"09:30:00 i1 ! bidder_a was refused access to /tmp/prompt.txt: Permission denied",
		"09:30:00 i1 ! router's message is undeliverable: no peer carries billing, refunds",
		"09:30:00 i1 ! w1's proposal collides with w2's (run run_x) in src/a.ts: both change line 3",
	}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
}

// Ctrl-C: a stopped turn says "stopped by you", not the cancellation's Go error; an agent that
// never had a turn ends "not run", never ✓ done.
func TestStoppedByYouAndNotRun(t *testing.T) {
	evs := []eventlog.Event{
		ev(0, "", "run_started", map[string]any{"interactions": 1}),
		ev(1, "auction", "interaction_started", map[string]any{"patternId": "contract_net", "nodes": []string{"manager", "bidder_a", "bidder_b"}}),
		ev(2, "auction", "agent_started", map[string]any{"agent": "manager", "round": 0, "backend": "command"}),
		ev(3, "auction", "agent_finished", map[string]any{"agent": "manager", "status": "completed", "turns": 1}),
		ev(4, "auction", "agent_started", map[string]any{"agent": "bidder_a", "round": 0, "backend": "command"}),
		ev(5, "auction", "agent_finished", map[string]any{"agent": "bidder_a", "status": "stopped", "turns": 1, "error": "cancelled: context canceled"}),
		ev(6, "auction", "terminated", map[string]any{"status": "stopped", "reason": "stopped", "rounds": 0}),
		ev(7, "", "run_finished", map[string]any{"status": "stopped", "reason": "stopped by the user"}),
	}
	for _, byYou := range []bool{true, false} {
		var out bytes.Buffer
		v := New(&out, Options{Location: time.UTC, Now: func() time.Time { return t0 }})
		if byYou {
			v.StoppedByYou()
		}
		for _, e := range evs {
			v.Event(e)
		}
		v.Close()
		s := out.String()
		want := "bidder_a: turn stopped by you"
		if !byYou {
			want = "bidder_a: turn stopped: its interaction or the run ended"
		}
		if !strings.Contains(s, want) || strings.Contains(s, "context canceled") {
			t.Errorf("byYou %v: want %q, without the Go error:\n%s", byYou, want, s)
		}
		if !regexp.MustCompile(`(?m)^\s+– bidder_b\s+auction\s+round 1\s+not run`).MatchString(s) || !regexp.MustCompile(`(?m)^\s+✓ manager\s+auction\s+round 1\s+done`).MatchString(s) ||
			!regexp.MustCompile(`(?m)^\s+■ bidder_a\s+auction\s+round 1\s+stopped`).MatchString(s) {
			t.Errorf("final table:\n%s", s)
		}
	}
}

// Lines longer than the width (a pipe to a terminal: $COLUMNS) wrap at spaces, never inside a
// run id or a path; a command hint wraps with " \\" so it still pastes; a word longer than the
// width stays whole.
func TestWrapAtWordBoundaries(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Width: 60, Location: time.UTC, Now: func() time.Time { return t0 }})
	v.Event(ev(0, "build", "warning", map[string]any{"agent": "coder", "message": "src/parser.test.ts does not exist in the workspace yet; the agent starts without it"}))
	v.Printf("%sexport:    agentcanvas proposal export --workspace /tmp/ws run_20261125-221221_78a656 > run_20261125-221221_78a656.patch", Indent)
	v.Printf("%slog:       /a/very/long/path/that/is/longer/than/sixty/columns/all/by/itself/.agentcanvas/logs/x", Indent)
	v.Close()
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	text := out.String()
	for _, tok := range []string{"run_20261125-221221_78a656", "run_20261125-221221_78a656.patch", "src/parser.test.ts", "/a/very/long/path/that/is/longer/than/sixty/columns/all/by/itself/.agentcanvas/logs/x"} {
		if !strings.Contains(text, tok) {
			t.Errorf("%q was cut:\n%s", tok, text)
		}
	}
	var cmd []string
	for _, l := range lines {
		if visible(l) > 60 && !strings.Contains(l, "/a/very/long") {
			t.Errorf("line of %d columns: %q", visible(l), l)
		}
		if strings.Contains(l, "export:") || (len(cmd) > 0 && strings.HasSuffix(cmd[len(cmd)-1], " \\")) {
			cmd = append(cmd, l)
		}
	}
	if len(cmd) < 2 || !strings.HasSuffix(cmd[0], " \\") || strings.HasSuffix(cmd[len(cmd)-1], " \\") {
		t.Errorf("the command hint is not wrapped with continuations: %q", cmd)
	}
}
