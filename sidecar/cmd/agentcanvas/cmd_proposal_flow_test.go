package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// A proposal a run of the flow "team" made is applied and rejected from the command line
// without --flow: its events go to the team flow's log, where the run's are, not to adhoc.
func TestProposalCommandsLogToTheFlowThatMadeIt(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644)
	made := map[string]string{}
	for _, agent := range []string{"coder", "tester"} {
		p, err := sandbox.Prepare(context.Background(), sandbox.Options{Workspace: ws, RunID: "r1", AgentID: agent, Files: []string{"a.txt"}})
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p.WorkDir, agent+".txt"), []byte(agent+"\n"), 0o644)
		if _, err := proposal.Create(context.Background(), proposal.CreateOptions{Workspace: ws, RunID: "r1", AgentID: agent, Flow: "team", Origin: &proposal.Origin{Flow: "team", InteractionID: "i1"}}); err != nil {
			t.Fatal(err)
		}
		made[agent] = filepath.Join(filepath.Dir(p.WorkDir), "proposal", "proposal.json")
	}
	if code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, made["coder"]); code != exitOK {
		t.Fatalf("apply: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "proposal", "reject", "--workspace", ws, "--reason", "no", made["tester"]); code != exitOK {
		t.Fatalf("reject: %d %s", code, errs)
	}
	evs, err := eventlog.ReadAll(ws, "team")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range evs {
		got[e.Event] = true
	}
	if !got["proposal_applied"] || !got["proposal_rejected"] {
		t.Errorf("the team log has %v, want proposal_applied and proposal_rejected", got)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", "logs", proposal.DefaultFlow)); err == nil {
		t.Errorf("events went to the %s log", proposal.DefaultFlow)
	}
}
