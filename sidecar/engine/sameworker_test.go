package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// A worker's proposals from earlier runs of the same flow are not conflicts of its new one
// (another attempt at the same task, to apply one or the other): no proposal_conflict event,
// no conflict in the list. The same worker id in another flow (another file) is another
// worker: its proposal still collides.
func TestEarlierProposalsOfTheSameWorkerAreNoConflict(t *testing.T) {
	// The worker changes the same line each run, differently (its run id).
	edit := script(t, t.TempDir(), "edit.sh", `cat >/dev/null
echo "export const a = '$AGENTCANVAS_RUN_ID';" > src/a.ts
printf 'Edited.\nHANDOFF\nContext: c\nGoal: g\nDoD: d\nSandboxWorkDir: work\nProposalJson: proposal/proposal.json\nChangedFiles:\n  - src/a.ts\n'
`)
	flowOf := func(name string) string {
		return strings.Replace(pairFlow("", "runtime: {backendId: dry-run}", "files: [src/a.ts], runtime: {backendId: command, command: [bash, "+edit+"]}", 1), "version: 0.2\n", "version: 0.2\nname: "+name+"\n", 1)
	}
	ws, f := workspace(t, strings.Replace(flowOf("first"), "{id: b, role: reviewer,", "{id: b, role: worker,", 1))
	conflicts := func() int {
		out, err := Run(context.Background(), f, Options{Workspace: ws, Limits: recording})
		if err != nil || len(out.Proposals) != 1 {
			t.Fatalf("run: %v %+v", err, out)
		}
		n := 0
		for _, ev := range events(t, ws, f.Name) {
			if ev.Event == "proposal_conflict" && ev.RunID == out.RunID {
				n++
			}
		}
		return n
	}
	if n := conflicts(); n != 0 {
		t.Fatalf("the first run's proposal has %d conflicts", n)
	}
	if n := conflicts(); n != 0 {
		t.Errorf("the second run's proposal of the same worker reports %d conflicts with its first", n)
	}
	list, _ := proposal.List(ws)
	for _, s := range list {
		if len(s.Conflicts) != 0 {
			t.Errorf("%s/%s lists conflicts %+v", s.RunID, s.AgentID, s.Conflicts)
		}
	}
	// The same agent id in another flow: another worker, whose edit collides.
	other := strings.Replace(flowOf("second"), "{id: b, role: reviewer,", "{id: b, role: worker,", 1)
	file := filepath.Join(ws, "flows", "second.yaml")
	os.WriteFile(file, []byte(other), 0o644)
	f = flow.Parse(file, []byte(other))
	if n := conflicts(); n == 0 {
		t.Error("the same agent id in another flow is not reported as a conflict")
	}
}
