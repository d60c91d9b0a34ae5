//go:build linux

package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// Confined, each real CLI still logs in (with the key its flow gives it), edits its work/,
// and resumes its session in a later Process of the same agent and run (as the engine's
// session loop and a resumed run do): its sessions are in its private CLI home.
func TestRealCLIsConfinedResume(t *testing.T) {
	for _, cli := range modelserver.CLIs {
		t.Run(cli.Name, func(t *testing.T) {
			exe := cli.Binary(t)
			confinetest.Landlock(t)
			confinetest.AsRootAndNobody(t, func(t *testing.T) {
				srv := cli.Start(t, script(modelserver.Reply{Text: "Writing.", Calls: []modelserver.Call{writeHello(cli)}},
					modelserver.Reply{Text: handoff}, modelserver.Reply{Text: "RESUMED-OK"}))
				s, work := hostileSpec(t, cli, exe)
				s.Env = cli.Env(t, srv)
				worker(&s)
				p, err := Start(context.Background(), s, "Write hello.txt in your working folder.")
				if err != nil {
					t.Fatal(err)
				}
				evs, res := drainWithin(t, p, nil, realDeadline)
				if res.Status != StatusCompleted || res.SessionID == "" {
					logRun(t, run{evs: evs, res: res, srv: srv})
					t.Fatalf("first turn: %s %s (session %q)", res.Status, res.Reason, res.SessionID)
				}
				if w := homeWarnings(evs); len(w) > 0 {
					t.Errorf("a CLI's own writes reported as the agent's: %q", w)
				}
				if b, err := os.ReadFile(filepath.Join(work, "hello.txt")); err != nil || string(b) != "hello\n" {
					t.Errorf("hello.txt: %q %v", b, err)
				}
				s.ResumeSession = res.SessionID
				p, err = Start(context.Background(), s, "Carry on.")
				if err != nil {
					t.Fatal(err)
				}
				evs, res = drainWithin(t, p, nil, realDeadline)
				if res.Status != StatusCompleted || !strings.Contains(res.Reply, "RESUMED-OK") {
					logRun(t, run{evs: evs, res: res, srv: srv})
					t.Fatalf("resumed turn: %s %s, reply %q", res.Status, res.Reason, res.Reply)
				}
				if w := homeWarnings(evs); len(w) > 0 {
					t.Errorf("a CLI's own writes reported as the agent's: %q", w)
				}
				if got := srv.Requests(); got[len(got)-1].Turn != 2 {
					t.Errorf("the resumed request held %d model turns, want 2 (the session's history)", got[len(got)-1].Turn)
				}
			})
		})
	}
}
