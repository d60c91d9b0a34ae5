package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// debateFlow is the spec's §9.1 example: team-alpha's debate (logged as flow t, its file) between debater_a and
// debater_b, judged, each edge with an id (e1: debater_a → judge) and the given observability.
func debateFlow(agent, obsA, obsB string) string {
	return `version: 0.2
name: team-alpha
agents:
  - {id: debater_a, role: debater, runtime: {backendId: command, command: [bash, ` + agent + `]}}
  - {id: debater_b, role: debater, runtime: {backendId: command, command: [bash, ` + agent + `]}}
  - {id: judge, role: judge, runtime: {backendId: command, command: [bash, ` + agent + `]}}
interactions:
  - id: i1
    patternId: debate_judge
    edges:
      - {id: e1, source: debater_a, target: judge, data: {termination: {type: max_rounds, rounds: 1}, params: {timeout_ms: 600000}, observability: ` + obsA + `}}
      - {id: e2, source: debater_b, target: judge, data: {termination: {type: max_rounds, rounds: 1}, params: {timeout_ms: 600000}, observability: ` + obsA + `}}
  - id: i2
    patternId: debate_judge
    dependsOn: [i1]
    edges:
      - {id: e3, source: debater_a, target: judge, data: {termination: {type: max_rounds, rounds: 1}, params: {timeout_ms: 600000}, observability: ` + obsB + `}}
      - {id: e4, source: debater_b, target: judge, data: {termination: {type: max_rounds, rounds: 1}, params: {timeout_ms: 600000}, observability: ` + obsB + `}}
`
}

func debaterScript(t *testing.T) string {
	return script(t, t.TempDir(), "agent.sh", `prompt=$(cat)
case "$AGENTCANVAS_ROLE" in
judge) echo "DECISION: debater_a"; echo "REASON: sound";;
*) echo "ANSWER: 4";;
esac
`)
}

func runLogged(t *testing.T, flowYAML string, before func(ws string)) (*Outcome, []eventlog.Event, []eventlog.Event, string) {
	t.Helper()
	ws, f := workspace(t, flowYAML)
	if before != nil {
		before(ws)
	}
	var rec recorder
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := eventlog.ReadAll(ws, f.Name)
	if err != nil {
		t.Fatal(err)
	}
	return out, evs, rec.evs, ws
}

// observability.logs: false keeps an interaction's events out of the JSONL log (the terminal
// and the editor still get them); with every interaction so, the run writes no log at all.
func TestLogsFalseIsNotLogged(t *testing.T) {
	agent := debaterScript(t)
	out, logged, seen, _ := runLogged(t, debateFlow(agent, "{logs: false}", "{logs: true}"), nil)
	if out.Status != StatusCompleted {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	byInteraction := map[string]int{}
	for _, e := range logged {
		byInteraction[e.InteractionID]++
	}
	if byInteraction["i1"] != 0 || byInteraction["i2"] == 0 || byInteraction[""] == 0 {
		t.Fatalf("logged by interaction %v: want none of i1, i2's and the run's", byInteraction)
	}
	shown := 0
	for _, e := range seen {
		if e.InteractionID == "i1" {
			shown++
		}
	}
	if shown == 0 {
		t.Error("i1's events did not reach the terminal either")
	}

	_, logged, seen, ws := runLogged(t, debateFlow(agent, "{logs: false}", "{logs: false}"), nil)
	if len(logged) != 0 || len(seen) == 0 {
		t.Fatalf("%d events logged with logs off everywhere (%d shown)", len(logged), len(seen))
	}
	if _, err := os.Stat(filepath.Join(ws, eventlog.LogsDir, "t")); err == nil {
		t.Error("a log folder was made")
	}
}

// observability.retain_days: the flow's log keeps that many days: a log from 2020 is removed
// when a run starts, and the log says so.
func TestRetainDaysPrunesOldLogs(t *testing.T) {
	agent := debaterScript(t)
	old := func(ws string) {
		dir := filepath.Join(ws, eventlog.LogsDir, "t")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "2020-01-01.jsonl"), []byte(`{"ts":1,"event":"run_started"}`+"\n"), 0o644)
		os.WriteFile(filepath.Join(dir, time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")+".jsonl"), []byte(`{"ts":1,"event":"run_started"}`+"\n"), 0o644)
	}
	_, _, seen, ws := runLogged(t, debateFlow(agent, "{logs: true, retain_days: 1}", "{retain_days: 1}"), old)
	days, _ := eventlog.Days(ws, "t")
	if len(days) != 2 || days[0] == "2020-01-01" {
		t.Fatalf("days kept %v, want yesterday's and today's", days)
	}
	pruned := false
	for _, e := range seen {
		pruned = pruned || e.Event == "logs_pruned"
	}
	if !pruned {
		t.Error("no logs_pruned event")
	}
	// An interaction that sets no retain_days keeps its events: nothing is pruned.
	_, _, _, ws = runLogged(t, debateFlow(agent, "{retain_days: 1}", "{logs: true}"), old)
	if days, _ := eventlog.Days(ws, "t"); len(days) != 3 {
		t.Errorf("days %v, want all three kept", days)
	}
}

// A step names who it is from and the edge (spec §9.1: {"event": "step", "from":
// "debater_a", "to": "judge", "edgeId": "e1"}): the judge's step is from a debater, along that
// debater's edge; a debater's, along its edge to the judge. None is "engine" with no edge.
func TestStepEventsNameTheirEdgeAndSender(t *testing.T) {
	_, logged, _, _ := runLogged(t, debateFlow(debaterScript(t), "{logs: true}", "{logs: true}"), nil)
	edges := map[string]string{"debater_a": "e1", "debater_b": "e2"}
	steps := 0
	for _, e := range logged {
		if e.Event != "step" || e.InteractionID != "i1" {
			continue
		}
		steps++
		from, to := str(fld(e, "from")), str(fld(e, "to"))
		switch to {
		case "judge":
			if edges[from] != e.EdgeID {
				t.Errorf("judge's step from %q along %q", from, e.EdgeID)
			}
		default:
			if from != "judge" || e.EdgeID != edges[to] {
				t.Errorf("%s's step from %q along %q", to, from, e.EdgeID)
			}
		}
	}
	if steps != 3 {
		t.Errorf("%d steps", steps)
	}
}

// The envelope's priority is what was sent: params.priority for an interaction's messages,
// a P14 message's own "priority"; the metrics count them by priority.
func TestEnvelopePriorityIsWhatWasSent(t *testing.T) {
	agent := debaterScript(t)
	flowYAML := strings.ReplaceAll(debateFlow(agent, "{logs: true}", "{logs: true}"), "params: {timeout_ms: 600000}", "params: {timeout_ms: 600000, priority: high}")
	out, logged, _, _ := runLogged(t, flowYAML, nil)
	for _, e := range logged {
		if e.Event == "message" && fld(e, "priority") != "high" {
			t.Fatalf("message %v has priority %v", fld(e, "type"), fld(e, "priority"))
		}
	}
	if out.Metrics.MessagesByPriority["high"] == 0 || out.Metrics.MessagesByPriority["medium"] != 0 {
		t.Errorf("by priority %v", out.Metrics.MessagesByPriority)
	}
}
