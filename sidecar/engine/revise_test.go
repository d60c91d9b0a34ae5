package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/reviewfixture"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// coderScript is the worker: its first turn writes "hello"; a revision turn does what the
// comment it is sent asks (it reads the comment from its prompt) and answers it by id.
const coderScript = `prompt=$(cat)
if grep -q "A reviewer read revision 1" <<<"$prompt"; then
  if grep -q '\[c1\] greet.txt line 1: say hello, world' <<<"$prompt" && grep -q ' +hello$' <<<"$prompt"; then
    printf 'hello, world\n' > greet.txt
    printf 'Revised.\nANSWER c1: it now says hello, world\n'
  else
    printf 'I did not get the comment.\n'
  fi
  exit 0
fi
printf 'hello\n' > greet.txt
printf 'Changed the greeting.\n'
`

func reviseWorkspace(t *testing.T) (string, *flow.Flow) {
	t.Helper()
	ws := reviewfixture.Workspace(t, map[string]string{"greet.txt": "hi\n", "agents/coder.sh": coderScript, ".agentcanvas/flows/fix.yaml": reviewfixture.Flow("greet.txt")})
	file := filepath.Join(ws, ".agentcanvas", "flows", "fix.yaml")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return ws, flow.Parse(file, src)
}

// A comment on a hunk goes back to the worker: a revision run of that one worker, in its own
// sandbox as it left it, confined as its run was, reads the comment, changes its file and
// answers; its change becomes revision 2 of the same proposal, with revision 1 kept for the
// interdiff, and revision 2 applies.
func TestRequestChangesMakesRevision2(t *testing.T) {
	ws, f := reviseWorkspace(t)
	out, err := Run(context.Background(), f, Options{Workspace: ws})
	if err != nil || out.Status != StatusCompleted || len(out.Proposals) != 1 {
		t.Fatalf("first run: %v %+v", err, out)
	}
	ref := out.Proposals[0]

	if _, _, err := proposal.AddComments(ws, ref, []proposal.Comment{{Path: "README.md", Line: 1, Text: "x"}}); err == nil || !strings.Contains(err.Error(), "does not change that file (it changes greet.txt)") {
		t.Errorf("a comment on a file the proposal does not change: %v", err)
	}
	c, err := proposal.ParseComment("greet.txt:1=say hello, world")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	rev, err := Revise(context.Background(), RevisionRequest{Proposal: ref, Comments: []proposal.Comment{c}}, Options{Workspace: ws, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	if rev.Status != StatusCompleted || !rev.Result.Changed || rev.Result.Revision != 2 || rev.RunID == out.RunID {
		t.Fatalf("revision: %+v %+v", rev.Outcome, rev.Result)
	}
	if len(rev.Result.Answered) != 1 || rev.Result.Answered[0].Answer != "it now says hello, world" {
		t.Errorf("answers: %+v", rev.Result.Answered)
	}

	l, err := proposal.Load(ws, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(l.Patch), "+hello, world\n") {
		t.Errorf("revision 2's patch:\n%s", l.Patch)
	}
	kept, err := os.ReadFile(filepath.Join(l.AgentDir, proposal.RevisionsDir, "1", "changes.patch"))
	if err != nil || !strings.Contains(string(kept), "+hello\n") {
		t.Errorf("revision 1 kept: %v\n%s", err, kept)
	}
	st, err := proposal.ReadReviewState(l.AgentDir, l.Proposal)
	if err != nil {
		t.Fatal(err)
	}
	if st.Revision != 2 || len(st.Revisions) != 2 || st.Revisions[1].RunID != rev.RunID || st.Revising != nil || len(st.Open()) != 0 {
		t.Errorf("review state: %+v", st)
	}
	id, err := proposal.GetInterdiff(ws, ref, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(id.Patch, "-hello\n+hello, world\n") || len(id.Files) != 1 {
		t.Errorf("interdiff 1→2:\n%s", id.Patch)
	}

	// The revision's events join the flow's log, under the run that made the proposal.
	evs, err := eventlog.ReadAll(ws, "fix")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if e.Event == "proposal_revised" && e.RunID == out.RunID && fld(e, "revision") == float64(2) {
			found = true
		}
	}
	if !found || len(rec.events("proposal_revised")) != 1 {
		t.Errorf("no proposal_revised event in the fix flow's log (sink: %d)", len(rec.events("proposal_revised")))
	}

	// Nothing left to answer: a second request is refused before any run.
	if _, err := Revise(context.Background(), RevisionRequest{Proposal: ref}, Options{Workspace: ws}); err == nil || !strings.Contains(err.Error(), "no open comment") {
		t.Errorf("a request with no open comment: %v", err)
	}

	applied, err := proposal.Apply(context.Background(), ws, ref, proposal.Selection{}, proposal.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "greet.txt")); string(b) != "hello, world\n" {
		t.Errorf("applied revision 2: greet.txt = %q", b)
	}
	// The ledger says which revision was applied and the comments that led to it.
	lg, err := proposal.ReadLedger(ws)
	if err != nil {
		t.Fatal(err)
	}
	var entry *proposal.LedgerEntry
	for i := range lg.Entries {
		if lg.Entries[i].ID == applied.Ledger {
			entry = &lg.Entries[i]
		}
	}
	if entry == nil || entry.Revision != 2 || len(entry.Comments) != 1 || entry.Comments[0].ID != "c1" || entry.Comments[0].Answer != "it now says hello, world" {
		t.Errorf("ledger entry of the apply: %+v", entry)
	}
	if _, err := Revise(context.Background(), RevisionRequest{Proposal: ref, Comments: []proposal.Comment{c}}, Options{Workspace: ws}); err == nil || !strings.Contains(err.Error(), "is applied") {
		t.Errorf("a request on an applied proposal: %v", err)
	}
}

// The revision's bounds are the worker's interaction's: its timeout and spend limit, and
// the flow's budget.
func TestRevisionBounds(t *testing.T) {
	_, f := reviseWorkspace(t)
	term, params := revisionBounds(f, "coder")
	m, ok := term.(map[string]any)
	if !ok {
		t.Fatalf("termination %#v", term)
	}
	conds := m["any"].([]any)
	if len(conds) != 2 || conds[0].(map[string]any)["ms"] != int64(600000) || conds[1].(map[string]any)["usd"] != 1.5 || params["timeout_ms"] != int64(600000) {
		t.Errorf("bounds %#v %#v", term, params)
	}
}

func TestParseAnswers(t *testing.T) {
	sent := []proposal.Comment{{ID: "c1"}, {ID: "c2"}}
	got := parseAnswers("Done.\nANSWER c1: renamed it\n - ANSWER [c2]: added the test \nANSWER c9: not asked\n", sent)
	if len(got) != 2 || got["c1"] != "renamed it" || got["c2"] != "added the test" {
		t.Errorf("answers %v", got)
	}
}
