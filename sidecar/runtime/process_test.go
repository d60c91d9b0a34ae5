package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func shellSpec(t *testing.T, script string) Spec {
	t.Helper()
	return Spec{RunID: "r1", AgentID: "a1", Role: "worker", BackendID: BackendCommand,
		Workspace: t.TempDir(), Command: []string{"sh", "-c", script}}
}

// printQuestion is shell that prints a valid [USER_QUESTION] block.
const printQuestion = `printf '[USER_QUESTION]\ncategory: choice\nquestion: Which database would you prefer?\noptions:\n  - PostgreSQL\n  - SQLite\nrequired: true\n[/USER_QUESTION]\n'`

// An interactive command agent asks a question and blocks reading stdin: it is paused
// (stopped in the process table) after the checkpoint, and resumed with the answer as the
// spec's JSON on its stdin.
func TestPauseAnswerResumeInteractive(t *testing.T) {
	s := shellSpec(t, `read -r prompt; echo "prompt: $prompt"; `+printQuestion+`; read -r answer; echo "got: $answer"`)
	s.Interactive = true
	var mu sync.Mutex
	var stateAtCheckpoint byte
	var p *Process
	s.Checkpoint = func(pd Pending) error {
		mu.Lock()
		defer mu.Unlock()
		stateAtCheckpoint, _ = procState(p.PID())
		return nil
	}
	var err error
	mu.Lock()
	p, err = Start(t.Context(), s, "choose a database")
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var pendingID string
	evs, res := drain(t, p, func(ev Event) {
		switch ev.Kind {
		case EventPending:
			pendingID = ev.Pending.ID
		case EventPaused:
			waitUntil(t, "the agent to be stopped", func() bool { st, _ := procState(p.PID()); return st == 'T' })
			if err := p.Answer("q_999", "x"); err == nil {
				t.Errorf("answering an unknown question succeeded")
			}
			if err := p.Answer(pendingID, "SQLite"); err != nil {
				t.Errorf("Answer: %v", err)
			}
		case EventResumed:
			if st, ok := procState(p.PID()); ok && st == 'T' {
				t.Errorf("still stopped after resume")
			}
		}
	})
	mu.Lock()
	if stateAtCheckpoint == 'T' || stateAtCheckpoint == 0 {
		t.Errorf("checkpoint saw process state %q: it must run before the pause, while the agent runs", stateAtCheckpoint)
	}
	mu.Unlock()
	if res.Status != StatusCompleted || res.Turns != 1 {
		t.Fatalf("status %s (%s) turns %d", res.Status, res.Reason, res.Turns)
	}
	if !strings.Contains(res.Reply, `prompt: {"type":"prompt","text":"choose a database"}`) {
		t.Errorf("prompt line: %q", res.Reply)
	}
	if !strings.Contains(res.Reply, `got: {"type":"question_answer","questionId":"q_1","answer":"SQLite"}`) {
		t.Errorf("answer on stdin: %q", res.Reply)
	}
	want := []EventKind{EventPending, EventPaused, EventAnswered, EventResumed}
	var got []EventKind
	for _, k := range kinds(evs) {
		if slices.Contains(want, k) {
			got = append(got, k)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("control events %v, want %v", got, want)
	}
	if err := p.Answer(pendingID, "again"); err != ErrFinished {
		t.Errorf("Answer after the end: %v", err)
	}
}

// A dependency is provided to an interactive agent: [DEPENDENCY_PROVIDED] on stdin, the
// value scrubbed from every event even when the agent prints it.
func TestDependencyProvidedInteractive(t *testing.T) {
	const secret = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"
	s := shellSpec(t, `read -r prompt; printf '[DEPENDENCY_REQUEST]\ntype: api_key\nname: STRIPE_SECRET_KEY\ndescription: Stripe key\nrequired: true\n[/DEPENDENCY_REQUEST]\n'
while read -r line; do echo "stdin: $line"; [ "$line" = "[/DEPENDENCY_PROVIDED]" ] && break; done`)
	s.Interactive = true
	p := start(t, s, "pay")
	var provideErrs []error
	evs, res := drain(t, p, func(ev Event) {
		if ev.Kind == EventPending {
			provideErrs = append(provideErrs, p.ProvideDependency(ev.Pending.ID, "short"))
			provideErrs = append(provideErrs, p.ProvideDependency(ev.Pending.ID, secret))
		}
	})
	if len(provideErrs) != 2 || provideErrs[0] == nil || !strings.Contains(provideErrs[0].Error(), "too short") || provideErrs[1] != nil {
		t.Fatalf("provide errors %v", provideErrs)
	}
	if res.Status != StatusCompleted {
		t.Fatalf("status %s (%s)", res.Status, res.Reason)
	}
	if !strings.Contains(res.Reply, "stdin: value: [redacted:STRIPE_SECRET_KEY]") || !strings.Contains(res.Reply, "stdin: name: STRIPE_SECRET_KEY") {
		t.Errorf("reply %q", res.Reply)
	}
	all, _ := json.Marshal(evs)
	if strings.Contains(string(all), secret) {
		t.Errorf("the secret leaked into events")
	}
}

// A non-interactive command agent (stdin closed after the prompt) gets the dependency in a
// second turn: its environment has the value, its prompt only says where it is.
func TestDependencyCarriedToNextTurn(t *testing.T) {
	const secret = "postgres://app:s3cr3t-pw@db/app"
	s := shellSpec(t, `if [ "$AGENTCANVAS_TURN" = 1 ]; then printf '[DEPENDENCY_REQUEST]\ntype: env_variable\nname: DATABASE_URL\ndescription: PostgreSQL connection string\nrequired: true\n[/DEPENDENCY_REQUEST]\n'; exit 0; fi
cat; echo; echo "url=$DATABASE_URL"`)
	p := start(t, s, "migrate")
	evs, res := drain(t, p, func(ev Event) {
		if ev.Kind == EventPending {
			if err := p.ProvideDependency(ev.Pending.ID, secret); err != nil {
				t.Error(err)
			}
		}
	})
	if res.Status != StatusCompleted || res.Turns != 2 {
		t.Fatalf("status %s (%s) turns %d", res.Status, res.Reason, res.Turns)
	}
	for _, want := range []string{"migrate\n\n" + followUpPreface, "value: (set in the environment variable DATABASE_URL)", "url=[redacted:DATABASE_URL]"} {
		if !strings.Contains(res.Reply, want) {
			t.Errorf("reply lacks %q:\n%s", want, res.Reply)
		}
	}
	all, _ := json.Marshal(evs)
	if strings.Contains(string(all), secret) {
		t.Errorf("the secret leaked into events")
	}
}

func TestDependencyTimeoutAndRejection(t *testing.T) {
	req := func(required bool) string {
		return `if [ "$AGENTCANVAS_TURN" = 1 ]; then printf '[DEPENDENCY_REQUEST]\ntype: file\nname: logo.png\ndescription: Company logo\nrequired: ` +
			strconv.FormatBool(required) + `\n[/DEPENDENCY_REQUEST]\n'; ` + map[bool]string{true: "exec sleep 1000", false: "exit 0"}[required] + `; fi; cat`
	}
	for _, tc := range []struct {
		name     string
		required bool
		reject   bool
		status   Status
		reason   string
	}{
		{"required timeout", true, false, StatusFailed, "required dependency timeout: logo.png"},
		{"optional timeout", false, false, StatusCompleted, ""},
		{"required rejected", true, true, StatusFailed, "required dependency rejected: logo.png: no logo yet"},
		{"optional rejected", false, true, StatusCompleted, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := shellSpec(t, req(tc.required))
			s.StopGrace = 50 * time.Millisecond
			if !tc.reject {
				s.DependencyTimeout = 20 * time.Millisecond // a setting under test, not a timing assertion
			}
			p := start(t, s, "draw")
			var pid int
			evs, res := drain(t, p, func(ev Event) {
				if ev.Kind == EventStarted && pid == 0 {
					pid = ev.PID
				}
				if ev.Kind == EventPending && tc.reject {
					if err := p.RejectDependency(ev.Pending.ID, "no logo yet"); err != nil {
						t.Error(err)
					}
				}
			})
			if res.Status != tc.status || res.Reason != tc.reason {
				t.Fatalf("status %s reason %q, want %s %q", res.Status, res.Reason, tc.status, tc.reason)
			}
			if alive(pid) {
				t.Errorf("agent %d still alive", pid)
			}
			if ans := ofKind(evs, EventAnswered); len(ans) != 1 {
				t.Fatalf("answered events %+v", ans)
			}
			if tc.status == StatusCompleted && !strings.Contains(res.Reply, "name: logo.png\nvalue: \n") {
				t.Errorf("optional dependency not resumed with an empty value: %q", res.Reply)
			}
		})
	}
}

// Stop ends an agent that ignores SIGTERM: SIGKILL after the grace period, whole group.
func TestStopEscalatesToKill(t *testing.T) {
	s := shellSpec(t, `trap '' TERM; sleep 1000 & echo "child $!"; while :; do sleep 1; done`)
	s.StopGrace = 100 * time.Millisecond
	p := start(t, s, "")
	var child int
	evs, res := drain(t, p, func(ev Event) {
		if ev.Kind == EventText && strings.HasPrefix(ev.Text, "child ") {
			child, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(ev.Text, "child ")))
			p.Stop("user pressed stop")
		}
	})
	if res.Status != StatusStopped || res.Reason != "user pressed stop" {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %d, want SIGKILL's %d", res.ExitCode, 128+int(syscall.SIGKILL))
	}
	if child == 0 || alive(child) || alive(ofKind(evs, EventStarted)[0].PID) {
		t.Errorf("something survived the stop (child %d)", child)
	}
}

// Stop while paused for a question: the stopped group still gets SIGTERM (with SIGCONT).
func TestStopWhilePaused(t *testing.T) {
	s := shellSpec(t, printQuestion+`; exec sleep 1000`)
	s.Interactive = true
	p := start(t, s, "")
	_, res := drain(t, p, func(ev Event) {
		if ev.Kind == EventPaused {
			waitUntil(t, "the agent to be stopped", func() bool { st, _ := procState(p.PID()); return st == 'T' })
			p.Stop("")
		}
	})
	if res.Status != StatusStopped || res.ExitCode != 128+int(syscall.SIGTERM) {
		t.Fatalf("status %s exit %d", res.Status, res.ExitCode)
	}
}

// A fatal [ERROR] fails the agent (after a checkpoint) and ends its process.
func TestFatalErrorBlockFailsAgent(t *testing.T) {
	s := shellSpec(t, `printf '[ERROR]\ntype: fatal\nmessage: Invalid guide document structure\nrecovery: checkpoint_and_fail\n[/ERROR]\n'; exec sleep 1000`)
	var cps []Pending
	s.Checkpoint = func(pd Pending) error { cps = append(cps, pd); return nil }
	p := start(t, s, "")
	_, res := drain(t, p, nil)
	if res.Status != StatusFailed || res.Reason != "the agent reported a fatal error: Invalid guide document structure" {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if len(cps) != 1 || cps[0].Kind != "error" {
		t.Errorf("checkpoints %+v", cps)
	}
}

// An invalid question block asks nothing; a per-turn agent is told in its next turn.
func TestInvalidBlockReportedBack(t *testing.T) {
	s := shellSpec(t, `if [ "$AGENTCANVAS_TURN" = 1 ]; then printf '[USER_QUESTION]\ncategory: choice\nrequired: true\n[/USER_QUESTION]\n'; else cat; fi`)
	evs, res := drain(t, start(t, s, "task"), nil)
	bl := ofKind(evs, EventBlock)
	if len(bl) != 1 || bl[0].Block.Kind != "invalid" || !strings.Contains(bl[0].Block.Error, "question") {
		t.Fatalf("blocks %+v", bl)
	}
	if len(ofKind(evs, EventPending)) != 0 || res.Turns != 2 || !strings.Contains(res.Reply, "was not understood") {
		t.Errorf("turns %d reply %q", res.Turns, res.Reply)
	}
}

// The command agent's contract: working folder per cwdMode, prompt on stdin then EOF,
// AGENTCANVAS_* variables, only listed (and harmless base) environment variables.
func TestCommandAgentEnvironment(t *testing.T) {
	t.Setenv("UNLISTED_SECRET", "must-not-leak")
	ws := t.TempDir()
	work := filepath.Join(ws, "sandbox", "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	s := Spec{RunID: "run-7", AgentID: "coder", Role: "worker", InteractionID: "i1", Round: 3,
		BackendID: BackendCommand, CwdMode: CwdAgentHome, Workspace: ws, SandboxWork: work,
		Command: []string{"sh", "-c", `pwd; cat; echo; echo "[EOF]"; env | sort`},
		Env:     map[string]string{"LISTED": "listed-value", "MY_TOKEN": "secret-value-1", "OPENAI_API_KEY": "sk-provider-key"}, SecretEnv: []string{"MY_TOKEN"}}
	_, res := drain(t, start(t, s, "line one\nline two"), nil)
	if res.Status != StatusCompleted {
		t.Fatalf("%s %s", res.Status, res.Reason)
	}
	lines := strings.Split(res.Reply, "\n")
	if lines[0] != work {
		t.Errorf("cwd %q, want %q", lines[0], work)
	}
	if !strings.Contains(res.Reply, "line one\nline two\n[EOF]") {
		t.Errorf("stdin: %q", res.Reply)
	}
	for _, want := range []string{"AGENTCANVAS_RUN_ID=run-7", "AGENTCANVAS_AGENT_ID=coder", "AGENTCANVAS_ROLE=worker",
		"AGENTCANVAS_INTERACTION_ID=i1", "AGENTCANVAS_ROUND=3", "AGENTCANVAS_SANDBOX=" + work,
		// Only secrets are redacted: the flow's runtime.secrets and the provider key variables.
		"LISTED=listed-value", "MY_TOKEN=[redacted:MY_TOKEN]", "OPENAI_API_KEY=[redacted:OPENAI_API_KEY]"} {
		if !slices.Contains(lines, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
	if strings.Contains(res.Reply, "UNLISTED_SECRET") || strings.Contains(res.Reply, guardianEnv) {
		t.Errorf("unlisted variables reached the agent:\n%s", res.Reply)
	}
}

// When an agent exits, whatever it left running (here a background sleep) is killed.
func TestNoLeftoversAfterAgentExits(t *testing.T) {
	s := shellSpec(t, `sleep 1000 & echo $!`)
	_, res := drain(t, start(t, s, ""), nil)
	pid, err := strconv.Atoi(strings.TrimSpace(res.Reply))
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("%s %q", res.Status, res.Reply)
	}
	if alive(pid) {
		t.Errorf("background process %d outlived its agent", pid)
	}
}

// The sidecar is killed with SIGKILL: its agent, the agent's grandchild and a grandchild
// that escaped into its own session all go too (checked in the process table).
func TestNoOrphanAfterParentKilled(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid (util-linux) is not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "RUNTIME_TEST_HELPER=orphan-parent")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	agent, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
	var tree []int
	// The shell has printed "ready" after starting both sleeps, but setsid may not have
	// made its new session yet: wait for the whole tree to be in place.
	waitUntil(t, "the agent's tree to be in place", func() bool {
		tree = descendants(cmd.Process.Pid)
		escaped := 0
		for _, pid := range tree {
			if sid, ok := sessionID(pid); ok && sid == pid {
				if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(comm)) == "sleep" {
					escaped++
				}
			}
		}
		return escaped == 1 && len(tree) >= 3 // sh, sleep, setsid sleep (+ the guardian on Linux)
	})
	if !slices.Contains(tree, agent) {
		t.Fatalf("process tree below the helper: %v (agent %d)", tree, agent)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitUntil(t, "every descendant of the killed parent to be gone", func() bool {
		for _, pid := range tree {
			if alive(pid) {
				return false
			}
		}
		return true
	})
}

func sessionID(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 4 {
		return 0, false
	}
	sid, err := strconv.Atoi(f[3])
	return sid, err == nil
}

// Manual pause and resume by the engine.
func TestManualPauseResume(t *testing.T) {
	s := shellSpec(t, `read -r prompt; echo up; read -r x; echo "read $x"`)
	s.Interactive = true
	p := start(t, s, "")
	_, res := drain(t, p, func(ev Event) {
		if ev.Kind == EventText && strings.HasPrefix(ev.Text, "up") {
			if err := p.Pause(); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "stopped", func() bool { st, _ := procState(p.PID()); return st == 'T' })
			if err := p.Resume(); err != nil {
				t.Fatal(err)
			}
			if st, _ := procState(p.PID()); st == 'T' {
				t.Errorf("still stopped after Resume")
			}
			p.Stop("done")
		}
	})
	if res.Status != StatusStopped {
		t.Errorf("status %s", res.Status)
	}
}

// The command-agent example in docs/agents.md works as documented.
func TestDocsCommandAgentExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```sh\n#!/bin/sh\n")
	script, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no shell example in docs/agents.md")
	}
	s := shellSpec(t, script)
	p := start(t, s, "Set up the data layer.")
	_, res := drain(t, p, func(ev Event) {
		if ev.Kind == EventPending {
			if err := p.Answer(ev.Pending.ID, "SQLite"); err != nil {
				t.Error(err)
			}
		}
	})
	if res.Status != StatusCompleted || res.Turns != 2 || strings.TrimSpace(res.Reply) != "Using SQLite." {
		t.Fatalf("status %s (%s) turns %d reply %q", res.Status, res.Reason, res.Turns, res.Reply)
	}
}

// Turns leave no file descriptor behind (pipes to the agent and the guardian).
func TestNoDescriptorLeak(t *testing.T) {
	count := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	run := func() {
		s := shellSpec(t, `cat; echo err >&2`)
		drain(t, start(t, s, "x"), nil)
	}
	run() // warm up whatever the runtime opens once
	before := count()
	for range 10 {
		run()
	}
	if after := count(); after > before+2 {
		t.Errorf("open descriptors went from %d to %d over 10 agents", before, after)
	}
}

// A relative command path is resolved in the agent's working folder, not the sidecar's.
func TestRelativeCommandPath(t *testing.T) {
	s := shellSpec(t, "")
	if err := os.MkdirAll(filepath.Join(s.Workspace, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Workspace, "agents", "hello.sh"), []byte("#!/bin/sh\necho hello from $(pwd)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.Command = []string{"./agents/hello.sh"}
	_, res := drain(t, start(t, s, ""), nil)
	if res.Status != StatusCompleted || strings.TrimSpace(res.Reply) != "hello from "+s.Workspace {
		t.Fatalf("%s %s %q", res.Status, res.Reason, res.Reply)
	}
}

// An agent that prints === PHASE N COMPLETE === and waits is paused at it (with
// PauseOnPhaseComplete), though the block has no closing line, and continues on Continue.
func TestPhaseCompleteWhileAgentWaits(t *testing.T) {
	s := shellSpec(t, `read -r prompt; printf '=== PHASE 1 COMPLETE ===\nPhase: Planning\n'; read -r next; echo "next: $next"`)
	s.Interactive, s.PauseOnPhaseComplete = true, true
	p := start(t, s, "")
	evs, res := drain(t, p, func(ev Event) {
		if ev.Kind == EventPending {
			if ev.Pending.Kind != PendingPhase || ev.Pending.Fields["Phase"] != "Planning" {
				t.Errorf("pending %+v", ev.Pending)
			}
			if err := p.Continue(ev.Pending.ID); err != nil {
				t.Error(err)
			}
			p.Stop("phase reviewed") // the agent waits on stdin for the next phase: end it
		}
	})
	if res.Status != StatusStopped || len(ofKind(evs, EventAnswered)) != 1 {
		t.Fatalf("%s %s %v", res.Status, res.Reason, kinds(evs))
	}
}

// Cancelling the context stops the agent.
func TestContextCancelStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s := shellSpec(t, `echo up; exec sleep 1000`)
	p, err := Start(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	_, res := drain(t, p, func(ev Event) {
		if ev.Kind == EventText {
			cancel()
		}
	})
	if res.Status != StatusStopped || res.Reason != "cancelled: context canceled" {
		t.Fatalf("%s %q", res.Status, res.Reason)
	}
}
