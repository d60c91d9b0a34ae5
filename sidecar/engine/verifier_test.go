package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// planningFlow: a worker in its sandbox completes phase 1 (Planning, the spec's example); the
// interaction's verifier is checker, an agent of the flow on no edge of it, of another
// backend's kind (a command here; any backend is asked the same way).
func planningFlow(worker, checker, params string) string {
	return `version: 0.2
agents:
  - {id: planner, role: worker, runtime: {backendId: command, command: [bash, ` + worker + `], cwdMode: agentHome}}
  - {id: checker, role: verifier, runtime: {backendId: command, command: [bash, ` + checker + `]}}
systemNodes:
  - {id: bridge, type: bridge}
interactions:
  - id: plan
    patternId: protocol_bridge
    edges:
      - source: bridge
        target: planner
        data:
          termination: {type: max_rounds, rounds: 1}
          params: ` + params + "\n"
}

// The worker writes 01_idea.md and lists it with 02_market.md, which it writes only when the
// phase comes back for rework.
const planningWorker = `cat >/dev/null
mkdir -p docs/planning
echo "# Idea: a todo app" > docs/planning/01_idea.md
if [ "$AGENTCANVAS_TURN" -ge 2 ]; then echo "# Market: students" > docs/planning/02_market.md; fi
echo "=== PHASE 1 COMPLETE ==="
echo "Phase: Planning"
echo "Documents created:"
echo "- docs/planning/01_idea.md"
echo "- docs/planning/02_market.md"
echo
echo "ANSWER: planned"
`

// The verifier checks what it was given: it passes when both documents came with their text.
const planningChecker = `prompt=$(cat)
printf '%s\n=====\n' "$prompt" >> DIR/checker.prompts
if grep -q "Market: students" <<<"$prompt" && grep -q "Idea: a todo app" <<<"$prompt"; then
  echo "Both planning documents are there and say what the phase needs."
  echo "VERDICT: pass"
else
  echo "docs/planning/02_market.md is missing: the market is not analysed."
  echo "VERDICT: fail"
fi
`

// agent-stdout-protocols.md §3: at === PHASE 1 COMPLETE === the phase's listed artifacts are
// collected, the verification agent runs and writes a report, a failure is reworked and a
// pass goes to the person's approval, which shows the report. The report is kept in the run's
// folder beside its checkpoint.
func TestPhaseVerificationAgent(t *testing.T) {
	dir := t.TempDir()
	worker := script(t, dir, "worker.sh", planningWorker)
	checker := script(t, dir, "checker.sh", strings.ReplaceAll(planningChecker, "DIR", dir))
	ws, f := workspace(t, planningFlow(worker, checker, "{verifier: checker, rate_limit_per_min: 10}"))
	var shown strings.Builder
	term := &Terminal{R: strings.NewReader("y\n"), W: &shown}
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Human: term})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusCompleted {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	evs := events(t, ws, f.Name)
	var verdicts []string
	var reports []string
	for _, e := range eventsNamed(evs, "phase_verified") {
		verdicts = append(verdicts, fmt.Sprint(fld(e, "passed")))
		reports = append(reports, str(fld(e, "report")))
		if fld(e, "verifier") != "checker" {
			t.Errorf("verified by %v", fld(e, "verifier"))
		}
	}
	if strings.Join(verdicts, ",") != "false,true" {
		t.Fatalf("verdicts %v, want a failure (reworked) then a pass", verdicts)
	}
	failed, _ := os.ReadFile(filepath.Join(ws, filepath.FromSlash(reports[0])))
	passed, _ := os.ReadFile(filepath.Join(ws, filepath.FromSlash(reports[1])))
	if !strings.Contains(string(failed), "02_market.md is missing") || !strings.Contains(string(failed), "verdict: **fail**") ||
		!strings.Contains(string(passed), "verdict: **pass**") || !strings.HasPrefix(reports[1], ".agentcanvas/runs/"+out.RunID+"/verification/") {
		t.Errorf("reports %v:\n%s\n%s", reports, failed, passed)
	}
	prompts, _ := os.ReadFile(filepath.Join(dir, "checker.prompts"))
	if !strings.Contains(string(prompts), "Idea: a todo app") || !strings.Contains(string(prompts), "docs/planning/02_market.md: missing") {
		t.Errorf("the verifier was not given the phase's artifacts:\n%s", prompts)
	}
	asked := eventsNamed(evs, "phase_completed")
	if len(asked) != 1 || !strings.Contains(fmt.Sprint(fld(asked[0], "fields")), reports[1]) {
		t.Errorf("the approval does not carry the report: %v", asked)
	}
	if !strings.Contains(shown.String(), "verified by checker: passed — report "+reports[1]) {
		t.Errorf("the terminal's approval showed:\n%s", shown.String())
	}
	if out.Metrics.RetriesByKind[RetryPhaseRework] != 1 {
		t.Errorf("retries %v", out.Metrics.RetriesByKind)
	}
}

// A phase with no verifier at all says so when it is checked, and goes to the approval marked
// unverified.
func TestPhaseWithoutVerifierSaysSo(t *testing.T) {
	dir := t.TempDir()
	worker := script(t, dir, "worker.sh", planningWorker)
	checker := script(t, dir, "checker.sh", strings.ReplaceAll(planningChecker, "DIR", dir))
	ws, f := workspace(t, planningFlow(worker, checker, "{rate_limit_per_min: 10}"))
	var shown strings.Builder
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Human: &Terminal{R: strings.NewReader("y\n"), W: &shown}})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("%v %+v", err, out)
	}
	v := eventsNamed(events(t, ws, f.Name), "phase_verified")
	if len(v) != 1 || fld(v[0], "verifier") != "none" || !strings.Contains(str(fld(v[0], "message")), "has no verifier") {
		t.Fatalf("phase_verified %v", v)
	}
	if !strings.Contains(shown.String(), "not verified: none: no verifier is set") {
		t.Errorf("the approval showed:\n%s", shown.String())
	}
}

// What a verifier is given is read as the sidecar reads any file an agent could have written:
// a listed path that leaves the folder, an absolute one, a link (to a secret outside), a FIFO
// (which would block a plain open) and a folder are refused, each said so; a big file is cut.
func TestArtifactsAreReadSafely(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("TOP SECRET"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "link.md"))
	syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o600)
	os.Mkdir(filepath.Join(dir, "folder"), 0o755)
	os.WriteFile(filepath.Join(dir, "big.md"), []byte(strings.Repeat("x", maxArtifactBytes+10)), 0o644)
	for name, want := range map[string]string{
		"../secret.txt": "not a path inside", outside: "not a path inside", "link.md": "not read",
		"pipe.md": "not a regular file", "folder": "not a regular file", "gone.md": "missing",
	} {
		body, err := readArtifact(dir, name)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(body, "TOP SECRET") {
			t.Errorf("%s: %q, %v; want an error saying %q", name, body, err, want)
		}
	}
	if body, err := readArtifact(dir, "big.md"); err != nil || !strings.HasSuffix(body, "(cut at 64 KiB)") {
		t.Errorf("big: %v", err)
	}
}
