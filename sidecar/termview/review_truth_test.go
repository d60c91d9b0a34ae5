package termview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

const hostile = "\x1b]52;c;ZWNobw==\x07\x1b[1A\x1b[2K\u009b31m\u202eevil\rEVIL"

// The run's view says a worker's tests failed (the command, how it ended, the failing lines)
// and that a proposal is held, and shows every agent's text with its escapes made visible,
// plain and live alike.
func TestViewShowsFailedTestsAndEscapesVisible(t *testing.T) {
	evs := []eventlog.Event{
		ev(0, "", "run_started", map[string]any{"interactions": 1, "task": "task " + hostile}),
		ev(10, "build", "warning", map[string]any{"agent": "coder", "message": "odd " + hostile}),
		ev(20, "build", "tests_run", map[string]any{"agent": "coder", "kind": "test", "command": []string{"npm", "test"}, "passed": false, "exitCode": 1,
			"failing": []string{"not ok 2 - adds " + hostile}}),
		ev(30, "build", "proposal_reviewed", map[string]any{"agent": "coder", "applicable": true, "held": []map[string]any{{"path": ".envrc", "shown": ".envrc"}}}),
		ev(40, "build", "proposal_held", map[string]any{"agent": "coder", "reason": "it changes how things run: .envrc"}),
		ev(50, "build", "agent_finished", map[string]any{"agent": "coder", "status": "failed", "error": "boom " + hostile, "stderr": []string{"err " + hostile}}),
		ev(60, "build", "step", map[string]any{"to": "coder", "note": "note " + hostile}),
		ev(70, "", "run_finished", map[string]any{"status": "failed", "reason": "why " + hostile}),
	}
	for _, live := range []bool{false, true} {
		var out bytes.Buffer
		v := New(&out, Options{Mode: Mode{Live: live}, Location: time.UTC, Now: func() time.Time { return t0.Add(time.Second) }})
		for _, e := range evs {
			v.Event(e)
		}
		v.Close()
		s := out.String()
		if live { // the view's own cursor moves and colours are its own: take them out first
			s = escapeRE.ReplaceAllString(strings.ReplaceAll(s, "\x1b[J", ""), "")
			s = strings.ReplaceAll(s, "\r", "")
		}
		if !termsafe.Safe(s) {
			t.Errorf("live=%v: agent text reaches the terminal raw:\n%q", live, s)
		}
		for _, want := range []string{"coder's tests FAILED: npm test exited 1", "not ok 2 - adds", `\x1b]52;c;`, `\u202e`, "changes how things run (.envrc)"} {
			if !strings.Contains(s, want) {
				t.Errorf("live=%v: the view lacks %q:\n%s", live, want, s)
			}
		}
	}
}
