package runsummary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// The summary says which worker's tests failed (command, exit status, failing lines), marks
// its proposal, marks a proposal held for changing how things run, and shows agents' text
// with its escapes made visible.
func TestSummarySaysTestsFailedAndWhatIsHeld(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	coder := makeProposal(t, ws, "coder", map[string]string{"a.txt": "b\n", ".envrc": "x\n"})
	out := &engine.Outcome{RunID: runID, Flow: "review", Status: engine.StatusCompleted,
		Interactions: []engine.InteractionOutcome{{ID: "build", PatternID: "manager_worker", Status: engine.StatusCompleted, Reason: "max_rounds", Rounds: 2, Result: "done \x1b]0;t\x07"}},
		Proposals:    []string{coder}}
	evs := []eventlog.Event{
		ev(0, "", "run_started", map[string]any{"task": "the task \x1b[8mhidden"}),
		ev(10, "build", "proposal_created", map[string]any{"agent": "coder", "proposal": coder}),
		ev(20, "build", "proposal_reviewed", map[string]any{"agent": "coder", "proposal": coder, "applicable": true, "held": []map[string]any{{"path": ".envrc", "shown": ".envrc"}}}),
		ev(30, "build", "tests_run", map[string]any{"agent": "coder", "command": []string{"npm", "test"}, "passed": false, "exitCode": 1, "failing": []string{"not ok 2 - adds \u202e"}}),
		ev(40, "build", "warning", map[string]any{"agent": "coder", "message": "odd \x9b31m"}),
		ev(50, "", "run_finished", map[string]any{"status": "completed"}),
	}
	md := string(Markdown(Input{Outcome: out, Events: evs, Workspace: ws}))
	for _, want := range []string{"### Tests", "- ❌ `coder`: `npm test` **failed** (exited 1)", "not ok 2 - adds \\u202e", "❌ tests failed; ⚠️ changes how things run (.envrc)"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if !termsafe.Safe(md) {
		t.Errorf("agent text reaches the summary raw:\n%q", md)
	}
}
