package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A turn that fails says why on agent_finished with the agent's last stderr lines (a CLI's
// "not logged in", a refused folder), never only an exit code; a completed turn carries no
// stderr.
func TestAgentFinishedCarriesStderrOfAFailedTurn(t *testing.T) {
	agent := script(t, t.TempDir(), "agent.sh", `cat >/dev/null
if [ "$AGENTCANVAS_AGENT_ID" = a ]; then
  echo "warming up" >&2
  echo "ANSWER: ok"
  exit 0
fi
for i in $(seq 1 14); do echo "noise $i" >&2; done
echo "fatal: not logged in, run login first" >&2
exit 3
`)
	ws, f := workspace(t, strings.ReplaceAll(twoStage, "AGENT", agent))
	rec := &recorder{}
	if _, err := Run(context.Background(), f, Options{Workspace: ws, Sink: rec.sink}); err != nil {
		t.Fatal(err)
	}
	var completed, failed map[string]any
	for _, ev := range rec.events("agent_finished") {
		switch ev.Fields["agent"] {
		case "a":
			completed = ev.Fields
		case "b":
			failed = ev.Fields
		}
	}
	if completed == nil || failed == nil {
		t.Fatalf("agent_finished events: %+v", rec.events("agent_finished"))
	}
	if completed["status"] != "completed" || completed["stderr"] != nil || completed["error"] != nil {
		t.Errorf("a completed turn carries stderr or an error: %v", completed)
	}
	lines, _ := failed["stderr"].([]string)
	if failed["status"] != "failed" || !strings.Contains(fmt.Sprint(failed["error"]), "exited with code 3") {
		t.Errorf("agent_finished = %v", failed)
	}
	if len(lines) != stderrLines || lines[len(lines)-1] != "fatal: not logged in, run login first" || lines[0] != "noise 6" {
		t.Errorf("stderr = %q, want the last %d lines", lines, stderrLines)
	}
}
