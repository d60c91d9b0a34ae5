package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/reviewfixture"
)

// forkChatScript is the Claude Code worker's one conversation: its first turn writes
// greet.txt, its second (resumed: the request holds two model turns) reads it and rewrites it.
// A second turn that started a fresh context would open with the second instruction, which
// nothing here answers: the model server refuses it, and the test fails.
func forkChatScript() modelserver.Script {
	cli := modelserver.Claude
	return modelserver.Script{
		{Match: "Write greet.txt saying hello.", Replies: []modelserver.Reply{
			{Text: "Writing the greeting.", Calls: []modelserver.Call{cli.WriteCall("greet.txt", "hello\n")}},
			{Text: "Wrote greet.txt."},
			{Text: "Reading it again.", Calls: []modelserver.Call{{Tool: "Read", Args: map[string]any{"file_path": "{{cwd}}/greet.txt"}}}},
			{Text: "Greeting the world.", Calls: []modelserver.Call{cli.WriteCall("greet.txt", "hello, world\n")}},
			{Text: "Now it says hello, world."},
		}},
	}
}

// forkChatFlow: a person's stand-in (a command agent) instructs a Claude Code worker twice.
const forkChatFlow = `version: "0.2"
description: Greet the world.
agents:
  - {id: you, role: user, runtime: {backendId: command, command: [bash, agents/you.sh]}}
  - {id: coder, role: worker, files: [greet.txt], runtime: {kind: cli, backendId: claude, env: [ENV]}}
interactions:
  - id: chat
    patternId: role_play_pair
    edges:
      - {source: you, target: coder, data: {topology: p2p, termination: {type: max_rounds, rounds: 2}}}
`

const forkChatYou = `cat > /dev/null
if [ "$AGENTCANVAS_ROUND" = 0 ]; then echo "Write greet.txt saying hello."; else echo "Now make it say hello, world."; fi
`

// A Claude Code worker forked after its first turn: the fork's second turn resumes the
// session of the first — its history reaches the model, in the fork's own copy of the private
// CLI home, keyed by the fork's sandbox — and finds greet.txt as the first turn left it.
func TestRealClaudeForkResumesSession(t *testing.T) {
	cli := modelserver.Claude
	exe := cli.Binary(t)
	t.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	srv := cli.Start(t, forkChatScript())
	env := cli.Env(t, srv)
	src := strings.Replace(forkChatFlow, "ENV", strings.Join(modelserver.EnvNames(env), ", "), 1)
	ws := reviewfixture.Workspace(t, map[string]string{"greet.txt": "hi\n", "agents/you.sh": forkChatYou, ".agentcanvas/flows/chat.yaml": src})
	f := flow.Parse(filepath.Join(ws, ".agentcanvas", "flows", "chat.yaml"), []byte(src))

	rec := &recorder{}
	parent, err := Run(context.Background(), f, Options{Workspace: ws, Env: env, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	logRealRun(t, rec, srv, parent)
	if parent.Status != StatusCompleted {
		t.Fatalf("parent: %s %s", parent.Status, parent.Reason)
	}
	before := len(srv.Requests())

	plan, err := PlanFork(ws, ForkRequest{RunID: parent.RunID, At: 2})
	if err != nil {
		t.Fatal(err)
	}
	var coder ForkAgent
	for _, a := range plan.Agents {
		if a.ID == "coder" {
			coder = a
		}
	}
	if !coder.Restored || !coder.Resumed || len(coder.Limits) != 0 {
		t.Errorf("the plan for coder: %+v", coder)
	}
	out, err := Fork(context.Background(), plan, Options{Env: env, Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	logRealRun(t, rec, srv, out)
	if out.Status != StatusCompleted {
		t.Fatalf("fork: %s %s", out.Status, out.Reason)
	}
	reqs := srv.Requests()[before:]
	if len(reqs) == 0 || reqs[0].Conversation != 0 || reqs[0].Turn != 2 || reqs[0].Error != "" {
		t.Fatalf("the fork's first model request does not continue the session: %+v", reqs)
	}
	body := string(reqs[0].Body)
	for _, want := range []string{"Write greet.txt saying hello.", "Wrote greet.txt.", "Now make it say hello, world.", "Primary working directory: " + workDir(t, ws, out.RunID, "coder")} {
		if !strings.Contains(body, want) {
			t.Errorf("the fork's request lacks %q", want)
		}
	}
	work := workDir(t, ws, out.RunID, "coder")
	if b, err := os.ReadFile(filepath.Join(work, "greet.txt")); err != nil || string(b) != "hello, world\n" {
		t.Errorf("the fork's greet.txt: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(workDir(t, ws, parent.RunID, "coder"), "greet.txt")); string(b) != "hello, world\n" {
		t.Errorf("the parent's greet.txt: %q", b)
	}
	for _, q := range reqs {
		if q.Cwd != work {
			t.Errorf("a fork request's working folder is %s, not the fork's sandbox %s", q.Cwd, work)
		}
	}
	assertConfinedRuns(t, rec)
}

// The same for Codex and the Gemini CLI: forked after the worker's first turn, the fork's
// second turn resumes that session (codex exec resume; gemini --resume, its project folder
// moved to the fork's working folder), and the first turn's file is in the fork's sandbox.
func TestRealCLIForkResumesSession(t *testing.T) {
	for _, cli := range []modelserver.CLI{modelserver.Codex, modelserver.Gemini} {
		t.Run(cli.Name, func(t *testing.T) {
			exe := cli.Binary(t)
			t.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
			srv := cli.Start(t, modelserver.Script{{Match: "Write greet.txt saying hello.", Replies: []modelserver.Reply{
				{Text: "Writing the greeting.", Calls: []modelserver.Call{cli.WriteCall("greet.txt", "hello\n")}},
				{Text: "Wrote greet.txt."},
				{Text: "It still says hello."},
			}}})
			env := cli.Env(t, srv)
			runtime := fmt.Sprintf("{kind: cli, backendId: %s, model: %s, env: [%s]}", cli.Name, cli.Model, strings.Join(modelserver.EnvNames(env), ", "))
			src := strings.Replace(forkChatFlow, "{kind: cli, backendId: claude, env: [ENV]}", runtime, 1)
			ws := reviewfixture.Workspace(t, map[string]string{"greet.txt": "hi\n", "agents/you.sh": forkChatYou, ".agentcanvas/flows/chat.yaml": src})
			f := flow.Parse(filepath.Join(ws, ".agentcanvas", "flows", "chat.yaml"), []byte(src))
			rec := &recorder{}
			parent, err := Run(context.Background(), f, Options{Workspace: ws, Env: env, Sink: rec.sink})
			if err != nil {
				t.Fatal(err)
			}
			logRealRun(t, rec, srv, parent)
			if parent.Status != StatusCompleted {
				t.Fatalf("parent: %s %s", parent.Status, parent.Reason)
			}
			before := len(srv.Requests())
			plan, err := PlanFork(ws, ForkRequest{RunID: parent.RunID, At: 2})
			if err != nil {
				t.Fatal(err)
			}
			out, err := Fork(context.Background(), plan, Options{Env: env, Sink: rec.sink})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != StatusCompleted {
				t.Fatalf("fork: %s %s", out.Status, out.Reason)
			}
			reqs := srv.Requests()[before:]
			if len(reqs) == 0 || reqs[0].Conversation != 0 || reqs[0].Turn != 2 || reqs[0].Error != "" {
				t.Fatalf("the fork's first model request does not continue the session: %+v", reqs)
			}
			if body := string(reqs[0].Body); !strings.Contains(body, "Wrote greet.txt.") || !strings.Contains(body, "Now make it say hello, world.") {
				t.Errorf("the fork's request lacks the earlier conversation or the new instruction")
			}
			if b, err := os.ReadFile(filepath.Join(workDir(t, ws, out.RunID, "coder"), "greet.txt")); err != nil || string(b) != "hello\n" {
				t.Errorf("the fork's greet.txt: %q %v", b, err)
			}
			assertConfinedRuns(t, rec)
		})
	}
}
