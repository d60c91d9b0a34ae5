package engine

import (
	"context"
	"strings"
	"testing"
)

// Every event of a run names its agent by one field, agent (never agentId), and the events of
// a run's proposals carry the interaction that made them, as docs/runs.md's table says.
func TestEventsNameTheAgentOneWay(t *testing.T) {
	ws := gitWorkspace(t)
	f := patternFlow(t, ws, "evs", flowSpec{pattern: "manager_worker", description: "Say hello"})
	if _, err := Run(context.Background(), f, Options{Workspace: ws, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	proposals := 0
	for _, e := range events(t, ws, "evs") {
		if _, ok := e.Fields["agentId"]; ok {
			t.Errorf("%s carries agentId: %v", e.Event, e.Fields)
		}
		if strings.HasPrefix(e.Event, "proposal_") {
			proposals++
			if e.InteractionID == "" || fld(e, "agent") == nil {
				t.Errorf("%s without its interaction or agent: %+v", e.Event, e)
			}
		}
	}
	if proposals == 0 {
		t.Error("no proposal events")
	}
}
