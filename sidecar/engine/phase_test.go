package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// bridgeFlow is a bridge asking one command agent (bash AGENT) once; params are its edge's.
func bridgeFlow(params string) string {
	return `version: 0.2
agents:
  - {id: worker, role: local, runtime: {backendId: command, command: [bash, AGENT]}}
systemNodes:
  - {id: bridge, type: bridge}
interactions:
  - id: i1
    patternId: protocol_bridge
    edges:
      - source: bridge
        target: worker
        data:
          termination: {type: max_rounds, rounds: 1}
          params: ` + params + "\n"
}

var phaseFlow = bridgeFlow(`{rate_limit_per_min: 10, verify_command: "test -e DIR/ok"}`)

// phaseAgent completes phase 1 every turn; from turn okTurn on, the verifier passes.
func phaseAgent(t *testing.T, dir string, okTurn int) string {
	return script(t, dir, "agent.sh", `cat >/dev/null
echo "$AGENTCANVAS_TURN" >> "`+dir+`/turns"
if [ "$AGENTCANVAS_TURN" -ge `+strconv.Itoa(okTurn)+` ]; then touch "`+dir+`/ok"; fi
echo "=== PHASE 1 COMPLETE ==="
echo "ANSWER: phase one done"
`)
}

func phaseEvents(rec *recorder) (verified []bool, approvals int) {
	for _, e := range rec.events("phase_verified") {
		verified = append(verified, e.Fields["passed"] == true)
	}
	return verified, len(rec.events("phase_resolved"))
}

func TestPhaseFailingVerificationIsReworked(t *testing.T) {
	dir := t.TempDir()
	agent := phaseAgent(t, dir, 3)
	ws, f := workspace(t, strings.NewReplacer("AGENT", agent, "DIR", dir).Replace(phaseFlow))
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	verified, approvals := phaseEvents(rec)
	if strings.Join(boolStrings(verified), ",") != "false,false,true" {
		t.Fatalf("verifications %v, want two failures then a pass", verified)
	}
	if approvals != 1 || out.Status != StatusCompleted {
		t.Fatalf("approvals %d, outcome %+v", approvals, out)
	}
	turns, _ := os.ReadFile(filepath.Join(dir, "turns"))
	if got := strings.Fields(string(turns)); len(got) != 3 {
		t.Errorf("turns %v, want 3 (two reworks)", got)
	}
}

func TestPhaseFailingVerificationFourTimesFailsTheAgent(t *testing.T) {
	dir := t.TempDir()
	agent := phaseAgent(t, dir, 9)
	ws, f := workspace(t, strings.NewReplacer("AGENT", agent, "DIR", dir).Replace(phaseFlow))
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	verified, approvals := phaseEvents(rec)
	if len(verified) != maxReworks+1 || approvals != 0 {
		t.Fatalf("verifications %v, approvals %d; want %d failures and no approval", verified, approvals, maxReworks+1)
	}
	if out.Status != StatusFailed || !strings.Contains(out.Interactions[0].Error, "verification") {
		t.Fatalf("outcome %+v", out.Interactions[0])
	}
}

func boolStrings(bs []bool) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		if b {
			out[i] = "true"
		} else {
			out[i] = "false"
		}
	}
	return out
}

// A verifier that exits 0 while its output reports a failed test (a script that swallows
// the runner's status) has not passed: the phase is sent back.
func TestPhaseVerifierReportingAFailureAtExitZeroIsReworked(t *testing.T) {
	dir := t.TempDir()
	agent := phaseAgent(t, dir, 2)
	flow := bridgeFlow(`{rate_limit_per_min: 10, verify_command: "if test -e DIR/ok; then echo 'ok 1'; else echo 'not ok 1 - add'; fi"}`)
	ws, f := workspace(t, strings.NewReplacer("AGENT", agent, "DIR", dir).Replace(flow))
	rec := &recorder{}
	if _, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Sink: rec.sink}); err != nil {
		t.Fatal(err)
	}
	if verified, _ := phaseEvents(rec); strings.Join(boolStrings(verified), ",") != "false,true" {
		t.Fatalf("verifications %v, want a failure (not ok 1 at exit 0) then a pass", verified)
	}
}
