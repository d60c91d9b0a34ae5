package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// P14 drawn as usual, its edges without a `messages` list: a peer's task_assignment through
// the router is still refused, since an edge without the list carries the messages the
// pattern's template gives it (targeted_message, delivery, ack), not anything at all.
func TestEdgeWithoutMessagesCarriesThePatternsMessages(t *testing.T) {
	ws := gitWorkspace(t)
	dir := t.TempDir()
	t.Setenv("AC_DIR", dir)
	if err := os.WriteFile(filepath.Join(dir, "badtype"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	strip := func(sg *pattern.Subgraph) {
		for i := range sg.Interaction.Edges {
			delete(sg.Interaction.Edges[i].Data.Params, "messages")
		}
	}
	f := patternFlow(t, ws, "acl", flowSpec{pattern: "router_targeted", runtime: scripted(t), description: "acl", edit: strip})
	for _, e := range f.Interactions[0].Edges {
		if _, ok := e.Data.Params["messages"]; ok {
			t.Fatalf("edge %s still lists messages", e.ID)
		}
	}
	if _, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	refused := eventsNamed(events(t, ws, "acl"), "message_refused")
	if len(refused) != 1 || fld(refused[0], "type") != "task_assignment" || fld(refused[0], "from") != "peer_3" {
		t.Fatalf("refusals %v", refused)
	}
	p1, _ := os.ReadFile(filepath.Join(dir, "peer_1.1.prompt"))
	if strings.Contains(string(p1), "do my work") {
		t.Error("the refused message reached peer_1")
	}
}
