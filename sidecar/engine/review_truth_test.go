package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/reviewfixture"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// selfFlow writes a manager_worker flow to ws/flows/self.yaml, where a worker given it can
// propose a change to it, and returns it parsed.
func selfFlow(t *testing.T, ws string, fs flowSpec) *flow.Flow {
	t.Helper()
	file := filepath.Join(ws, "flows", "self.yaml")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, nil, 0o644)
	src, err := os.ReadFile(patternFlow(t, ws, "self", fs).File)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, src, 0o644)
	f := flow.Parse(file, src)
	if diag.HasErrors(f.Problems) {
		t.Fatal(f.Problems)
	}
	return f
}

// A worker's proposal that edits the flow of its own run (and plants a file beside it) is
// held by auto-apply, whatever the person's auto-apply limit, naming the flow; nothing of it
// reaches the workspace.
func TestAutoApplyHoldsAProposalEditingItsOwnFlow(t *testing.T) {
	for _, lim := range []Limits{{Confine: "off"}, {Confine: "off", AutoApply: AutoApplyFlow}, {Confine: "off", AutoApply: AutoApplyWhenClean}} {
		t.Run(string(lim.AutoApply), func(t *testing.T) {
			ws := gitWorkspace(t)
			dir := t.TempDir()
			t.Setenv("AC_DIR", dir)
			os.WriteFile(filepath.Join(dir, "selfedit"), nil, 0o644)
			f := selfFlow(t, ws, flowSpec{pattern: "manager_worker", runtime: scripted(t), description: "the task", autoApply: true, files: []string{"flows/self.yaml"}})
			before, _ := os.ReadFile(f.File)
			rec := &recorder{}
			if _, err := Run(context.Background(), f, Options{Limits: func() Limits { return lim }, Workspace: ws, Sink: rec.sink}); err != nil {
				t.Fatal(err)
			}
			held := rec.events("proposal_held")
			if len(held) != 2 {
				t.Fatalf("proposal_held: %+v", held)
			}
			for _, e := range held {
				r := str(e.Fields["reason"])
				if !strings.Contains(r, "flows/self.yaml") || !strings.Contains(r, "the flow of the run that made this proposal") {
					t.Errorf("held because %q", r)
				}
			}
			if n := len(rec.events("proposal_applied")); n != 0 {
				t.Errorf("%d proposals applied", n)
			}
			for _, e := range rec.events("proposal_reviewed") {
				if e.Fields["applicable"] != true || e.Fields["held"] == nil {
					t.Errorf("reviewed: %v", e.Fields)
				}
			}
			after, _ := os.ReadFile(f.File)
			if string(after) != string(before) {
				t.Error("the flow was changed")
			}
			for _, p := range []string{"src/backdoor.py", "work-worker_1.txt"} {
				if _, err := os.Stat(filepath.Join(ws, p)); err == nil {
					t.Errorf("%s reached the workspace", p)
				}
			}
		})
	}
}

// A worker's failing test command is kept with its proposal (the review shows the command,
// exit status and failing lines) and quoted in its next round's prompt.
func TestFailingTestsReachTheReviewAndTheNextPrompt(t *testing.T) {
	ws := gitWorkspace(t)
	dir := t.TempDir()
	t.Setenv("AC_DIR", dir)
	f := patternFlow(t, ws, "tests", flowSpec{pattern: "manager_worker", runtime: scripted(t), description: "the task",
		edit: setParam("test_command", []any{"sh", "-c", "echo 'ok 1 - parses'; echo 'not ok 2 - adds'; exit 3"})})
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	runs := rec.events("tests_run")
	if len(runs) == 0 || runs[0].Fields["exitCode"] != 3 || !strings.Contains(strings.Join(runs[0].Fields["failing"].([]string), "\n"), "not ok 2 - adds") {
		t.Fatalf("tests_run: %+v", runs)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, "worker_1.1.prompt"))
	if err != nil || !strings.Contains(string(prompt), "Your tests failed after your last changes: `sh -c") || !strings.Contains(string(prompt), "exited 3") || !strings.Contains(string(prompt), "not ok 2 - adds") {
		t.Fatalf("the second round's prompt does not carry the failure (%v):\n%s", err, prompt)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "worker_1.0.prompt"))
	if strings.Contains(string(first), "Your tests failed") {
		t.Error("the first prompt speaks of a failure")
	}
	rv, err := proposal.GetReview(context.Background(), ws, filepath.Join(ws, out.Proposals[0]), proposal.ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fl := rv.Tests.FirstFailure(); fl == nil || fl.ExitCode != 3 || !fl.Current {
		t.Fatalf("review's tests: %+v", rv.Tests)
	}
}

// reviseWith is reviseWorkspace with another coder script.
func reviseWith(t *testing.T, script string) (string, *flow.Flow) {
	t.Helper()
	ws := reviewfixture.Workspace(t, map[string]string{"greet.txt": "hi\n", "agents/coder.sh": script, ".agentcanvas/flows/fix.yaml": reviewfixture.Flow("greet.txt")})
	file := filepath.Join(ws, ".agentcanvas", "flows", "fix.yaml")
	src, _ := os.ReadFile(file)
	return ws, flow.Parse(file, src)
}

const handoffScript = `prompt=$(cat)
if grep -q "A reviewer read revision 1" <<<"$prompt"; then
  grep -q "end with a HANDOFF block, as in your first turn" <<<"$prompt" || { echo "no HANDOFF asked"; exit 0; }
  printf 'hello, world\n' > greet.txt
  printf 'Revised.\nANSWER c1: done\n'
  exit 0
fi
printf 'hello\n' > greet.txt
cat <<EOH
Changed it.
HANDOFF
Context: the greeting
Goal: Greet the world
DoD: greet.txt says hello
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/coder/work
ProposalJson: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/coder/proposal/proposal.json
ChangedFiles:
  - greet.txt
Tests:
  - none
Next:
  - review
EOH
`

// The revision task asks for the same HANDOFF as the first turn; a revision without one keeps
// the goal and notes the worker gave before, rather than "No valid HANDOFF block".
func TestRevisionAsksForHandoffAndKeepsTheNotes(t *testing.T) {
	ws, f := reviseWith(t, handoffScript)
	out, err := Run(context.Background(), f, Options{Workspace: ws})
	if err != nil || len(out.Proposals) != 1 {
		t.Fatalf("first run: %v %+v", err, out)
	}
	ref := out.Proposals[0]
	l, _ := proposal.Load(ws, ref)
	notes := l.Proposal.Notes
	if !strings.HasPrefix(notes, "Greet the world") {
		t.Fatalf("first notes: %q", notes)
	}
	c, _ := proposal.ParseComment("greet.txt:1=say hello, world")
	rev, err := Revise(context.Background(), RevisionRequest{Proposal: ref, Comments: []proposal.Comment{c}}, Options{Workspace: ws})
	if err != nil || !rev.Result.Changed {
		t.Fatalf("revision: %v %+v", err, rev)
	}
	l, _ = proposal.Load(ws, ref)
	if l.Proposal.Notes != notes || !strings.Contains(string(l.Patch), "+hello, world") {
		t.Fatalf("revision 2's notes %q, want %q kept; patch:\n%s", l.Proposal.Notes, notes, l.Patch)
	}
}

const failingRevisionScript = `prompt=$(cat)
if grep -q "A reviewer read revision 1" <<<"$prompt"; then
  printf 'half done\n' > greet.txt
  printf 'junk\n' > extra.txt
  echo "crashed" >&2
  exit 7
fi
printf 'hello\n' > greet.txt
printf 'Changed it.\n'
`

// A revision run that fails leaves work/ and the proposal as revision 1 had them: its
// half-done edits are not a revision.
func TestFailedRevisionLeavesWorkAsItWas(t *testing.T) {
	ws, f := reviseWith(t, failingRevisionScript)
	out, err := Run(context.Background(), f, Options{Workspace: ws})
	if err != nil || len(out.Proposals) != 1 {
		t.Fatalf("first run: %v %+v", err, out)
	}
	ref := out.Proposals[0]
	l, _ := proposal.Load(ws, ref)
	patch1 := string(l.Patch)
	c, _ := proposal.ParseComment("greet.txt:1=say hello, world")
	rev, err := Revise(context.Background(), RevisionRequest{Proposal: ref, Comments: []proposal.Comment{c}}, Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if rev.Status == StatusCompleted || rev.Result.Changed || rev.Result.Revision != 1 {
		t.Fatalf("a failed revision: %s %+v", rev.Status, rev.Result)
	}
	work := filepath.Join(l.AgentDir, "work")
	if b, _ := os.ReadFile(filepath.Join(work, "greet.txt")); string(b) != "hello\n" {
		t.Errorf("work/greet.txt = %q, want revision 1's", b)
	}
	if _, err := os.Stat(filepath.Join(work, "extra.txt")); err == nil {
		t.Error("the failed run's new file stayed in work/")
	}
	l, _ = proposal.Load(ws, ref)
	if string(l.Patch) != patch1 {
		t.Errorf("the patch is not revision 1's:\n%s", l.Patch)
	}
	if _, err := proposal.Check(context.Background(), ws, ref, proposal.Selection{}, proposal.ApplyOptions{}); err != nil {
		t.Errorf("revision 1 no longer applies: %v", err)
	}
}
