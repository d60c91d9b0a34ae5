package engine

import (
	"context"
	"path/filepath"
	"testing"
)

// runtime.unixSockets is shown in review: each agent_started of an agent with a grant lists
// the socket paths, a workspace-relative one made absolute; a flow without grants lists none.
func TestAgentStartedShowsUnixSocketGrant(t *testing.T) {
	ws := gitWorkspace(t)
	t.Setenv("AC_DIR", t.TempDir())
	rt := scripted(t)
	rt["unixSockets"] = []string{"/var/run/docker.sock", "run/app.sock"}
	f := patternFlow(t, ws, "grant", flowSpec{pattern: "manager_worker", runtime: rt, description: "the task"})
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("%v %+v", err, out)
	}
	started := eventsNamed(events(t, ws, "grant"), "agent_started")
	if len(started) == 0 {
		t.Fatal("no agent_started")
	}
	want := []any{"/var/run/docker.sock", filepath.Join(ws, "run", "app.sock")}
	for _, e := range started {
		got, _ := fld(e, "unixSockets").([]any)
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("agent_started of %v: unixSockets %v, want %v", fld(e, "agent"), got, want)
		}
	}

	ws2 := gitWorkspace(t)
	f = patternFlow(t, ws2, "plain", flowSpec{pattern: "manager_worker", runtime: scripted(t), description: "the task"})
	if _, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws2}); err != nil {
		t.Fatal(err)
	}
	for _, e := range eventsNamed(events(t, ws2, "plain"), "agent_started") {
		if v := fld(e, "unixSockets"); v != nil {
			t.Errorf("agent_started without a grant lists unixSockets %v", v)
		}
	}
}
