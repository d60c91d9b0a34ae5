package runtime

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// The real agent CLIs (package.json's devDependencies, scripts/setup-agent-clis.sh) against
// scripted models on 127.0.0.1. Each case runs live (TestRealCLIs: skipped without the CLIs
// unless make test asked for them) and is replayed from the stream the live run recorded
// (TestRealCLIStreams: always, through the fake CLI), with the same checks; so the decoders
// are tested on what each pinned version really prints. go test ./sidecar/runtime -run
// TestRealCLIs -update-streams records the streams again (testdata/streams/<cli>/<version>-<case>.jsonl).

var updateStreams = flag.Bool("update-streams", false, "record testdata/streams/<cli>/<version>-<case>.jsonl from the real CLIs")

// realDeadline guards a real CLI's run against hanging (node start-up on a loaded machine
// takes seconds); it is never what a test asserts.
const realDeadline = 5 * time.Minute

// run is what a case's check looks at.
type run struct {
	evs  []Event
	res  Result
	dir  string // the working folder
	live bool   // the real CLI ran (files and the model's requests can be checked)
	srv  *modelserver.Server
}

func (r run) warnings() []Event { return ofKind(r.evs, EventWarning) }

// denials are the warnings that name a refused tool.
func (r run) denials() []Event {
	var out []Event
	for _, w := range r.warnings() {
		if w.Tool != "" {
			out = append(out, w)
		}
	}
	return out
}

type realCase struct {
	name   string
	cli    modelserver.CLI
	spec   func(s *Spec)
	script modelserver.Script
	// env changes the CLI's environment (a value "" removes the name).
	env   map[string]string
	check func(t *testing.T, r run)
}

// realPrompt is every case's prompt: the model must be given it (on the CLI's stdin).
const realPrompt = "Write hello.txt in your working folder."

// handoff is a valid HANDOFF block (docs/agent-protocol.md) after a line of text.
const handoff = "Done.\n\nHANDOFF\nContext: wrote hello.txt\nGoal: greet\nDoD: cat hello.txt prints hello\nSandboxWorkDir: work\nProposalJson: proposal/proposal.json\nChangedFiles:\n  - hello.txt\n"

// writeHello is each CLI's own way to write hello.txt in its working folder.
func writeHello(cli modelserver.CLI) modelserver.Call { return cli.WriteCall("hello.txt", "hello\n") }

func script(replies ...modelserver.Reply) modelserver.Script {
	return modelserver.Script{{Replies: replies}}
}

func worker(s *Spec)   { s.Role, s.Access = "worker", AccessEdit }
func readOnly(s *Spec) { s.Role, s.Access = "reviewer", AccessReadOnly }

// checkEdited: the file is written (live), no denial, the reply and its usage arrive.
func checkEdited(t *testing.T, r run) {
	if r.res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", r.res.Status, r.res.Reason)
	}
	if r.live {
		if b, err := os.ReadFile(filepath.Join(r.dir, "hello.txt")); err != nil || string(b) != "hello\n" {
			t.Errorf("hello.txt: %q %v", b, err)
		}
	}
	if d := r.denials(); len(d) > 0 {
		t.Errorf("denials %+v", d)
	}
	if len(ofKind(r.evs, EventToolUse)) == 0 || len(ofKind(r.evs, EventToolResult)) == 0 {
		t.Errorf("no tool_use/tool_result events: %v", kinds(r.evs))
	}
	for _, tr := range ofKind(r.evs, EventToolResult) {
		if tr.IsError {
			t.Errorf("tool result failed: %+v", tr)
		}
	}
	if r.res.Handoff == nil || !strings.Contains(r.res.Reply, "HANDOFF") {
		t.Errorf("reply %q, handoff %v", r.res.Reply, r.res.Handoff)
	}
	checkUsage(t, r, 2)
	if r.live && !slices.ContainsFunc(r.srv.Requests(), func(q modelserver.Request) bool { return bytes.Contains(q.Body, []byte(realPrompt)) }) {
		t.Errorf("the model was not given the prompt %q", realPrompt)
	}
	if r.res.SessionID == "" || len(ofKind(r.evs, EventSession)) == 0 {
		t.Errorf("no session id")
	}
}

// checkUsage: the usage the scripted model reported for its calls reaches the result, in the
// runtime's one way of counting (cached tokens are input tokens).
func checkUsage(t *testing.T, r run, calls int64) {
	u := modelserver.DefaultUsage
	want := Usage{InputTokens: calls * u.InputTokens, CachedInputTokens: calls * u.CachedInputTokens, OutputTokens: calls * u.OutputTokens}
	if r.res.Usage != want {
		t.Errorf("usage %+v, want %+v", r.res.Usage, want)
	}
	if r.live && r.srv.Answered() != int(calls) {
		t.Errorf("the model answered %d calls, want %d", r.srv.Answered(), calls)
	}
}

// checkDenied: no file, one denial warning naming the tool, the file (when the CLI says) and
// the field.
func checkDenied(tool, field, fix string, withPath bool) func(t *testing.T, r run) {
	return func(t *testing.T, r run) {
		if r.res.Status != StatusCompleted {
			t.Fatalf("status %s: %s", r.res.Status, r.res.Reason)
		}
		if r.live {
			if _, err := os.Stat(filepath.Join(r.dir, "hello.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("hello.txt was written: %v", err)
			}
		}
		d := r.denials()
		if len(d) != 1 {
			t.Fatalf("denials %+v (warnings %+v)", d, r.warnings())
		}
		w := d[0]
		if w.Tool != tool || w.Field != field || !strings.Contains(w.Reason, field+": "+fix) {
			t.Errorf("denial %+v, want tool %s, field %s: %s", w, tool, field, fix)
		}
		if withPath && (!strings.HasSuffix(w.Path, "hello.txt") || !strings.Contains(w.Reason, w.Path)) {
			t.Errorf("denial path %q in %q", w.Path, w.Reason)
		}
	}
}

func realCases() []realCase {
	var cases []realCase
	for _, cli := range modelserver.CLIs {
		cases = append(cases,
			realCase{name: "edit", cli: cli, spec: worker,
				script: script(modelserver.Reply{Text: "Writing.", Calls: []modelserver.Call{writeHello(cli)}}, modelserver.Reply{Text: handoff}),
				check:  checkEdited},
			realCase{name: "apierror", cli: cli, spec: worker,
				script: script(modelserver.Reply{Error: &modelserver.APIError{Status: 400, Message: "scripted refusal: prompt too long"}}),
				check: func(t *testing.T, r run) {
					if r.res.Status != StatusFailed || !strings.Contains(r.res.Reason, "scripted refusal") {
						t.Errorf("status %s, reason %q: want failed, quoting the API's error", r.res.Status, r.res.Reason)
					}
				}},
		)
	}
	claude, codex, gemini := modelserver.Claude, modelserver.Codex, modelserver.Gemini
	return append(cases,
		realCase{name: "readonly", cli: claude, spec: readOnly,
			script: script(modelserver.Reply{Calls: []modelserver.Call{writeHello(claude)}}, modelserver.Reply{Text: "I could not write it."}),
			check:  checkDenied("Write", "runtime.permissionMode", "acceptEdits", true)},
		realCase{name: "default-mode", cli: claude, spec: func(s *Spec) { worker(s); s.PermissionMode = "default" },
			script: script(modelserver.Reply{Calls: []modelserver.Call{writeHello(claude)}}, modelserver.Reply{Text: "I could not write it."}),
			check:  checkDenied("Write", "runtime.permissionMode", "acceptEdits", true)},
		realCase{name: "outside", cli: claude, spec: worker,
			script: script(modelserver.Reply{Calls: []modelserver.Call{{Tool: "Write", Args: map[string]any{"file_path": "{{cwd}}/../outside.txt", "content": "x\n"}}}}, modelserver.Reply{Text: "I could not write it."}),
			check: func(t *testing.T, r run) {
				d := r.denials()
				if len(d) != 1 || d[0].Field != "files" || !strings.HasSuffix(d[0].Path, "outside.txt") || !strings.Contains(d[0].Reason, "outside the agent's working folder") {
					t.Errorf("denials %+v", d)
				}
			}},
		realCase{name: "bash-denied", cli: claude, spec: readOnly,
			script: script(modelserver.Reply{Calls: []modelserver.Call{{Tool: "Bash", Args: map[string]any{"command": "touch hello.txt", "description": "create"}}}}, modelserver.Reply{Text: "Denied."}),
			check:  checkDenied("Bash", "runtime.allowedTools", `["Bash(touch *)"]`, false)},
		realCase{name: "retry", cli: claude, spec: worker,
			script: script(modelserver.Reply{Text: handoff, Error: &modelserver.APIError{Status: 529, Message: "scripted overload", RetryAfter: "0"}, FailTimes: 1}),
			check: func(t *testing.T, r run) {
				if r.res.Status != StatusCompleted {
					t.Fatalf("status %s: %s", r.res.Status, r.res.Reason)
				}
				var retried bool
				for _, w := range r.warnings() {
					retried = retried || strings.Contains(w.Reason, "claude: API error (HTTP 529") && strings.Contains(w.Reason, "retry 1 of")
				}
				if !retried {
					t.Errorf("no retry warning in %+v", r.warnings())
				}
			}},
		realCase{name: "nologin", cli: claude, spec: worker, env: map[string]string{"ANTHROPIC_API_KEY": ""},
			script: script(modelserver.Reply{Text: "unreachable"}),
			check: func(t *testing.T, r run) {
				if r.res.Status != StatusFailed || !strings.Contains(r.res.Reason, "Not logged in") {
					t.Errorf("status %s, reason %q", r.res.Status, r.res.Reason)
				}
			}},
		realCase{name: "readonly", cli: codex, spec: readOnly,
			script: script(modelserver.Reply{Calls: []modelserver.Call{writeHello(codex)}}, modelserver.Reply{Text: "I could not write it."}),
			check:  checkDenied("apply_patch", "runtime.codexSandbox", "workspace-write", false)},
		// The command takes a second: codex exec --json (0.169.0) reports no command_execution
		// item for a command that ends at once (on an idle machine, this one's printf), so its
		// denial cannot be seen in the stream (docs/agents.md, the CLIs' limits).
		realCase{name: "readonly-shell", cli: codex, spec: readOnly,
			script: script(modelserver.Reply{Calls: []modelserver.Call{{Tool: "exec_command", Args: map[string]any{"cmd": "sleep 1; printf 'hello\\n' > hello.txt"}}}}, modelserver.Reply{Text: "I could not write it."}),
			check:  checkDenied("exec_command", "runtime.codexSandbox", "workspace-write", true)},
		realCase{name: "readonly", cli: gemini, spec: readOnly,
			script: script(modelserver.Reply{Calls: []modelserver.Call{writeHello(gemini)}}, modelserver.Reply{Text: "I could not write it."}),
			check:  checkDenied("write_file", "runtime.geminiApprovalMode", "auto_edit", true)},
		// The workspace (not a sandbox the engine made) is not trusted for the user.
		realCase{name: "untrusted", cli: gemini, spec: func(s *Spec) { readOnly(s); s.CwdMode = CwdWorkspace },
			script: script(modelserver.Reply{Text: "unreachable"}),
			check: func(t *testing.T, r run) {
				if r.res.Status != StatusFailed || r.res.ExitCode != 55 || !strings.Contains(r.res.Reason, "not running in a trusted directory") {
					t.Errorf("status %s, exit %d, reason %q: want exit 55 with gemini's own words", r.res.Status, r.res.ExitCode, r.res.Reason)
				}
			}},
	)
}

func (c realCase) id() string { return c.cli.Name + "/" + c.name }

// specFor is the case's spec: the agent in a sandbox-like work folder unless the case says.
func (c realCase) specFor(t *testing.T, exe string, srv *modelserver.Server) Spec {
	ws := t.TempDir()
	s := Spec{RunID: "r1", AgentID: "a1", BackendID: c.cli.Name, Executable: exe, Workspace: ws,
		CwdMode: CwdAgentHome, SandboxWork: t.TempDir(), Model: c.cli.Model, Env: c.cli.Env(t, srv)}
	c.spec(&s)
	for k, v := range c.env {
		if v == "" {
			delete(s.Env, k)
		} else {
			s.Env[k] = v
		}
	}
	return s
}

// realSlots bounds the real CLIs running at once: their runs mostly wait (on the model, on
// node's start-up), so a few at a time shorten the test without crowding two cores.
var realSlots = make(chan struct{}, 3)

func TestRealCLIs(t *testing.T) {
	for _, c := range realCases() {
		t.Run(c.id(), func(t *testing.T) {
			exe := c.cli.Binary(t)
			t.Parallel()
			realSlots <- struct{}{}
			defer func() { <-realSlots }()
			srv := c.cli.Start(t, c.script)
			s := c.specFor(t, exe, srv)
			dir, err := s.workDir()
			if err != nil {
				t.Fatal(err)
			}
			p, err := Start(context.Background(), s, realPrompt)
			if err != nil {
				t.Fatal(err)
			}
			evs, res := drainWithin(t, p, nil, realDeadline)
			r := run{evs: evs, res: res, dir: dir, live: true, srv: srv}
			c.check(t, r)
			if t.Failed() {
				logRun(t, r)
			}
			if *updateStreams {
				c.record(t, exe)
			}
		})
	}
}

// TestRealCLIStreams replays every case's recorded stream through the fake CLI.
func TestRealCLIStreams(t *testing.T) {
	for _, c := range realCases() {
		t.Run(c.id(), func(t *testing.T) {
			version, err := c.cli.Version()
			if err != nil {
				t.Fatal(err)
			}
			scenario := version + "-" + c.name
			if _, err := os.Stat(filepath.Join("testdata", "streams", c.cli.Name, scenario+".jsonl")); err != nil {
				t.Fatalf("no recorded stream for %s %s: record it with go test ./sidecar/runtime -run TestRealCLIs -update-streams (%v)", c.cli.Name, version, err)
			}
			s, _ := fakeSpec(t, c.cli.Name, scenario)
			s.Role, s.CwdMode, s.SandboxWork, s.Model = "worker", CwdAgentHome, t.TempDir(), c.cli.Model
			c.spec(&s)
			dir, _ := s.workDir()
			evs, res := drainWithin(t, start(t, s, realPrompt), nil, realDeadline)
			r := run{evs: evs, res: res, dir: dir}
			c.check(t, r)
			if t.Failed() {
				logRun(t, r)
			}
			// Every line of the stream is read: none is reported as broken.
			for _, w := range r.warnings() {
				if strings.Contains(w.Reason, "non-JSON") {
					t.Errorf("%s", w.Reason)
				}
			}
		})
	}
}

// record runs the case's command line again, straight, and keeps its stdout, stderr and exit
// code as a fake-CLI stream (testdata/fakecli): the working folder becomes {{CWD}}.
func (c realCase) record(t *testing.T, exe string) {
	srv := c.cli.Start(t, c.script)
	s := c.specFor(t, exe, srv)
	dir, _ := s.workDir()
	be, _ := resolveBackend(&s, nil)
	in := turnInput{prompt: realPrompt, turn: 1}
	argv, err := be.argv(&s, in)
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{}
	if es, ok := be.(envSetter); ok {
		extra = es.env(&s)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, s.environ(extra, 1), strings.NewReader(be.stdin(&s, in))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	var b strings.Builder
	root, _ := modelserver.RepoRoot()
	norm := strings.NewReplacer(dir, "{{CWD}}", s.Env["HOME"], "/home/tester", srv.URL, "http://127.0.0.1:PORT", root+"/", "/repo/")
	for _, l := range strings.SplitAfter(strings.TrimRight(out.String(), "\n"), "\n") {
		if l != "" {
			b.WriteString(norm.Replace(strings.TrimRight(l, "\n")) + "\n")
		}
	}
	for _, l := range strings.Split(strings.TrimRight(errb.String(), "\n"), "\n") {
		if l != "" {
			b.WriteString("#stderr " + norm.Replace(l) + "\n")
		}
	}
	if code != 0 {
		fmt.Fprintf(&b, "#exit %d\n", code)
	}
	version, _ := c.cli.Version()
	name := filepath.Join("testdata", "streams", c.cli.Name, version+"-"+c.name+".jsonl")
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", name)
}

func logRun(t *testing.T, r run) {
	t.Logf("result %+v", r.res)
	for _, e := range r.evs {
		if slices.Contains([]EventKind{EventRaw}, e.Kind) {
			t.Logf("  %s %s", e.Kind, e.Text)
			continue
		}
		t.Logf("  %s tool=%s text=%q reason=%q path=%q field=%q err=%v", e.Kind, e.Tool, truncate(e.Text, 300), e.Reason, e.Path, e.Field, e.IsError)
	}
	if r.srv != nil {
		for _, q := range r.srv.Requests() {
			t.Logf("  request %s %s conv=%d turn=%d cwd=%s err=%s", q.Method, q.Path, q.Conversation, q.Turn, q.Cwd, q.Error)
		}
	}
}
