package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/reviewfixture"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// resumeScript is one conversation only: the worker's, opened by the flow's task. The
// revision's request is answered only as its continuation (turns 2 on): a revision that
// started a fresh context would open with the reviewer's comments, which nothing here
// answers (the model server refuses it and the test fails).
func resumeScript() modelserver.Script {
	cli := modelserver.Claude
	return modelserver.Script{
		{Match: "Greet the whole world", Replies: []modelserver.Reply{
			{Text: "Writing the greeting.", Calls: []modelserver.Call{cli.WriteCall("greet.txt", "hello\n")}},
			{Text: "Changed the greeting."},
			// The revision, resumed: Claude Code's Write needs the file read in this process.
			{Text: "Reading it again.", Calls: []modelserver.Call{{Tool: "Read", Args: map[string]any{"file_path": "{{cwd}}/greet.txt"}}}},
			{Text: "Greeting the world.", Calls: []modelserver.Call{cli.WriteCall("greet.txt", "hello, world\n")}},
			{Text: "Revised.\nANSWER c1: it now says hello, world"},
		}},
	}
}

// A revision of a Claude Code worker's proposal resumes the session that made it: the real
// CLI, against a scripted model, is started in the original run's private CLI home with
// --resume and that session's id, so the model gets the earlier conversation followed by the
// reviewer's comments; its change becomes revision 2, and the kernel refused nothing.
func TestRealClaudeRevisionResumesSession(t *testing.T) {
	cli := modelserver.Claude
	exe := cli.Binary(t)
	t.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	srv := cli.Start(t, resumeScript())
	env := cli.Env(t, srv)
	ws, f := resumeWorkspace(t, env)

	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Workspace: ws, Env: env, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	logRealRun(t, rec, srv, out)
	if out.Status != StatusCompleted || len(out.Proposals) != 1 {
		t.Fatalf("first run: %s %s, proposals %v", out.Status, out.Reason, out.Proposals)
	}
	first, ok, err := loadSession(ws, out.RunID, "coder")
	if err != nil || !ok || first.Backend != "claude" || first.RunID != out.RunID {
		t.Fatalf("kept session after the first run: %+v %v %v", first, ok, err)
	}
	// The session is Claude Code's own: its transcript is in the run's private home.
	origHome := filepath.Join(ws, ".agentcanvas", "runs", out.RunID, "homes", "coder", "claude")
	if m, _ := filepath.Glob(filepath.Join(origHome, "projects", "*", first.Session+".jsonl")); len(m) != 1 {
		t.Fatalf("no transcript of session %s in %s", first.Session, origHome)
	}
	before := len(srv.Requests())

	c, err := proposal.ParseComment("greet.txt:1=say hello, world")
	if err != nil {
		t.Fatal(err)
	}
	rev, err := Revise(context.Background(), RevisionRequest{Proposal: out.Proposals[0], Comments: []proposal.Comment{c}}, Options{Workspace: ws, Env: env, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	if rev.Status != StatusCompleted || !rev.Result.Changed || rev.Result.Revision != 2 {
		t.Fatalf("revision: %s %s %+v", rev.Status, rev.Reason, rev.Result)
	}
	if len(rev.Result.Answered) != 1 || rev.Result.Answered[0].Answer != "it now says hello, world" {
		t.Errorf("answers: %+v", rev.Result.Answered)
	}

	// The revision's first request continues the first conversation: the task, the earlier
	// reply, then the comments.
	reqs := srv.Requests()[before:]
	if len(reqs) == 0 {
		t.Fatal("the revision asked the model nothing")
	}
	var firstRev *modelserver.Request
	for i := range reqs {
		if reqs[i].Conversation >= 0 || reqs[i].Error != "" {
			firstRev = &reqs[i]
			break
		}
	}
	if firstRev == nil || firstRev.Conversation != 0 || firstRev.Turn != 2 || firstRev.Error != "" {
		t.Fatalf("the revision's first model request: %+v", firstRev)
	}
	body := string(firstRev.Body)
	for _, want := range []string{"Greet the whole world", "Changed the greeting.", "A reviewer read revision 1", "[c1] greet.txt line 1: say hello, world"} {
		if !strings.Contains(body, want) {
			t.Errorf("the revision's request lacks %q", want)
		}
	}
	if i, j := strings.Index(body, "Changed the greeting."), strings.Index(body, "A reviewer read revision 1"); i < 0 || j < i {
		t.Errorf("the comments do not follow the earlier conversation (%d, %d)", i, j)
	}
	// The CLI resumed that session in the original run's home: the same session id is kept
	// again (now by the revision run), and no home of the revision's own was made.
	again, ok, err := loadSession(ws, out.RunID, "coder")
	if err != nil || !ok || again.Session != first.Session || again.RunID != rev.RunID {
		t.Errorf("kept session after the revision: %+v (first %+v) %v", again, first, err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", "runs", rev.RunID, "homes", "coder")); !os.IsNotExist(err) {
		t.Errorf("the revision made a CLI home of its own: %v", err)
	}

	l, err := proposal.Load(ws, out.Proposals[0])
	if err != nil || !strings.Contains(string(l.Patch), "+hello, world\n") {
		t.Fatalf("revision 2's patch (%v):\n%s", err, l.Patch)
	}
	if o, err := exec.Command("git", "-C", ws, "apply", "--check", filepath.Join(ws, filepath.Dir(out.Proposals[0]), "changes.patch")).CombinedOutput(); err != nil {
		t.Errorf("git apply --check revision 2: %v\n%s", err, o)
	}
	assertConfinedRuns(t, rec) // both runs
	for _, e := range rec.events("warning") {
		if strings.Contains(str(fld(e, "message")), "session") {
			t.Errorf("warning: %v", e.Fields)
		}
	}
}

// resumeWorkspace is the review loop's workspace with a Claude Code worker, whose task (the
// flow's description) opens resumeScript's conversation.
func resumeWorkspace(t *testing.T, env map[string]string) (string, *flow.Flow) {
	t.Helper()
	src := strings.Replace(reviewfixture.Flow("greet.txt"), "description: Fix the greeting.", "description: Greet the whole world in greet.txt.", 1)
	src = strings.Replace(src, "runtime: {kind: cli, backendId: command, command: [bash, agents/coder.sh]}",
		fmt.Sprintf("runtime: {kind: cli, backendId: claude, env: [%s]}", strings.Join(modelserver.EnvNames(env), ", ")), 1)
	if !strings.Contains(src, "backendId: claude") || !strings.Contains(src, "Greet the whole world") {
		t.Fatal("reviewfixture.Flow changed: resumeWorkspace no longer makes its worker Claude Code")
	}
	ws := reviewfixture.Workspace(t, map[string]string{"greet.txt": "hi\n", ".agentcanvas/flows/greet.yaml": src})
	return ws, flow.Parse(filepath.Join(ws, ".agentcanvas", "flows", "greet.yaml"), []byte(src))
}
