package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// A broker at 1 message a window (on the broker node) forwards no faster: every message it
// holds is released before the next agent turn starts, so no turn runs on a message the
// limit has not let through, and none is dropped. The limit counts what the broker passes on
// (a forward, a response to the requester), one agent turn apart: a window of a second holds
// one unless every turn takes longer.
func TestBrokerWaitsForItsRateLimit(t *testing.T) {
	ws := gitWorkspace(t)
	dir := t.TempDir()
	t.Setenv("AC_DIR", dir)
	f := patternFlow(t, ws, "broker", flowSpec{pattern: "broker_facilitator", runtime: scripted(t), description: "broker",
		nodeParams: map[string]map[string]any{"broker": {"rate_limit_per_min": 1}}})
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, rateWindow: time.Second})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("%v %+v", err, out)
	}
	evs := events(t, ws, "broker")
	open := map[string]bool{}
	held := 0
	for _, e := range evs {
		switch e.Event {
		case "message_held":
			open[str(fld(e, "id"))] = true
			held++
		case "message_released":
			delete(open, str(fld(e, "id")))
		case "agent_started":
			if len(open) > 0 {
				t.Fatalf("an agent started while %d message(s) were held", len(open))
			}
		case "message_dropped":
			t.Fatalf("dropped %v", e.Fields)
		}
	}
	if held == 0 {
		t.Fatal("the broker held nothing: the limit was not applied")
	}
}

// Retention set on the blackboard node (as flows/blackboard.yaml writes it) is the board's:
// with keep_last_n 2 the board keeps two entries and trims the rest.
func TestRetentionOnTheBlackboardNode(t *testing.T) {
	ws := gitWorkspace(t)
	t.Setenv("AC_DIR", t.TempDir())
	strip := func(sg *pattern.Subgraph) {
		for i := range sg.Interaction.Edges {
			delete(sg.Interaction.Edges[i].Data.Params, "retention")
		}
	}
	f := patternFlow(t, ws, "board", flowSpec{pattern: "blackboard", runtime: scripted(t), description: "board", edit: strip,
		nodeParams: map[string]map[string]any{"blackboard": {"retention": map[string]any{"keep_last_n": 2}}}})
	if _, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	posted := eventsNamed(events(t, ws, "board"), "blackboard_posted")
	if len(posted) < 2 {
		t.Fatalf("%d posts", len(posted))
	}
	last := posted[len(posted)-1]
	if k, _ := fld(last, "kept").(float64); k != 2 {
		t.Errorf("kept %v, want 2", fld(last, "kept"))
	}
	if tr, _ := fld(last, "trimmed").(float64); tr < 1 {
		t.Errorf("trimmed %v, want at least 1", fld(last, "trimmed"))
	}
}

// A recoverable [ERROR] in a run: the agent is paused until the reset its block names
// (agent_paused, agent_resumed in the log), its failed turn retried, and the run completes;
// an agent whose error persists past the retries fails the run instead of completing it.
func TestRecoverableErrorInARun(t *testing.T) {
	block := `printf '[ERROR]\ntype: recoverable\nmessage: Rate limit exceeded\nrecovery: pause_and_retry\nretry_after: 0.05\n[/ERROR]\n'`
	for _, c := range []struct {
		name, body string
		status     string
	}{
		{"recovers", `if [ "$AGENTCANVAS_TURN" = 1 ]; then ` + block + `; exit 1; fi; echo "ANSWER: done"`, StatusCompleted},
		{"persists", block + `; exit 1`, StatusFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			agent := script(t, t.TempDir(), "agent.sh", "cat >/dev/null\n"+c.body+"\n")
			ws, f := workspace(t, strings.ReplaceAll(oneAgentFlow, "AGENT", agent))
			out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != c.status {
				t.Fatalf("run %s (%s), want %s", out.Status, out.Reason, c.status)
			}
			evs := events(t, ws, f.Name)
			if len(eventsNamed(evs, "agent_paused")) == 0 || len(eventsNamed(evs, "agent_resumed")) == 0 {
				t.Error("no agent_paused / agent_resumed in the log")
			}
			if c.status == StatusFailed && !strings.Contains(out.Reason, "persisted after 3 retries") {
				t.Errorf("reason %q", out.Reason)
			}
		})
	}
}
