package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
)

func TestClaudeStream(t *testing.T) {
	s, log := fakeSpec(t, BackendClaude, "ok")
	s.Model, s.MaxTurns, s.AllowedTools, s.PermissionMode = "sonnet", 7, []string{"Read", "Bash(npm test)"}, "acceptEdits"
	p := start(t, s, "Explain a.ts")
	evs, res := drain(t, p, nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if res.Reply != "The file logs a greeting. Nothing to change." {
		t.Errorf("reply %q", res.Reply)
	}
	if res.SessionID != "5e0c1a4e-8d2b-4c39-9f0e-6f1d2b7a9c11" {
		t.Errorf("session %q", res.SessionID)
	}
	if !res.CostKnown || res.CostUSD != 0.0181929 {
		t.Errorf("cost %v known %v", res.CostUSD, res.CostKnown)
	}
	// Cache reads and writes are input tokens too (reported apart by the API).
	want := Usage{InputTokens: 10 + 25562 + 3530, CachedInputTokens: 25562, CacheCreationTokens: 3530, OutputTokens: 98}
	if res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	tu := ofKind(evs, EventToolUse)
	if len(tu) != 1 || tu[0].Tool != "Read" || tu[0].ToolID != "toolu_01A9bQ2mXc7Lr5Tz8pWk3dYe" || !strings.HasSuffix(tu[0].Input["file_path"].(string), "/a.ts") {
		t.Errorf("tool_use events %+v", tu)
	}
	tr := ofKind(evs, EventToolResult)
	if len(tr) != 1 || tr[0].ToolID != "toolu_01A9bQ2mXc7Lr5Tz8pWk3dYe" || !strings.Contains(tr[0].Text, "console.log") {
		t.Errorf("tool_result events %+v", tr)
	}
	if txt := allText(evs); txt != "I'll read the file first.The file logs a greeting. Nothing to change." {
		t.Errorf("text %q", txt)
	}
	if len(ofKind(evs, EventSession)) != 1 || evs[len(evs)-1].Kind != EventExit {
		t.Errorf("events %v", kinds(evs))
	}
	inv := invocations(t, log)
	wantArgs := []string{"-p", "--output-format", "stream-json", "--verbose", "--model", "sonnet",
		"--max-turns", "7", "--allowedTools", "Read,Bash(npm test)", "--permission-mode", "acceptEdits"}
	if len(inv) != 1 || !slices.Equal(inv[0].Args, wantArgs) || inv[0].Stdin != "Explain a.ts" {
		t.Errorf("claude argv %q stdin %q, want %q and the prompt", inv[0].Args, inv[0].Stdin, wantArgs)
	}
	if inv[0].Cwd != s.Workspace {
		t.Errorf("cwd %s, want the workspace %s", inv[0].Cwd, s.Workspace)
	}
	// The prompt is not in the started event (it may be long; it is the engine's to log).
	st := ofKind(evs, EventStarted)
	if len(st) != 1 || slices.Contains(st[0].Argv, "Explain a.ts") {
		t.Errorf("started argv %q", st[0].Argv)
	}
}

func TestClaudeFailures(t *testing.T) {
	for _, tc := range []struct{ scenario, reason string }{
		// A failed API call reported as subtype success with is_error true.
		{"api529", "subtype success, is_error true: API Error: 529"},
		{"turnlimit", "subtype error_max_turns, is_error false"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			s, _ := fakeSpec(t, BackendClaude, tc.scenario)
			_, res := drain(t, start(t, s, "go"), nil)
			if res.Status != StatusFailed || !strings.Contains(res.Reason, tc.reason) {
				t.Fatalf("status %s reason %q, want failed with %q", res.Status, res.Reason, tc.reason)
			}
			if !res.CostKnown {
				t.Errorf("cost not recorded for a failed turn")
			}
		})
	}
}

func TestCodexStream(t *testing.T) {
	s, log := fakeSpec(t, BackendCodex, "ok")
	s.Model = "gpt-5-codex"
	evs, res := drain(t, start(t, s, "Log the user's name"), nil)
	if res.Status != StatusCompleted || res.Reply != "Updated a.ts to log the user's name." {
		t.Fatalf("status %s reason %q reply %q", res.Status, res.Reason, res.Reply)
	}
	if res.SessionID != "0199a213-81c0-7800-8aa1-bbab2a035a53" || res.CostKnown {
		t.Errorf("session %q costKnown %v", res.SessionID, res.CostKnown)
	}
	if want := (Usage{InputTokens: 24763, CachedInputTokens: 24448, OutputTokens: 122}); res.Usage != want {
		t.Errorf("usage %+v", res.Usage)
	}
	var tools []string
	for _, e := range ofKind(evs, EventToolUse) {
		tools = append(tools, e.Tool)
	}
	if !slices.Equal(tools, []string{"command_execution", "file_change"}) {
		t.Errorf("tool uses %q", tools)
	}
	if se := ofKind(evs, EventStderr); len(se) != 1 || !strings.Contains(se[0].Text, "OpenAI Codex") {
		t.Errorf("stderr events %+v", se)
	}
	if allText(evs) != res.Reply { // reasoning is not agent text
		t.Errorf("text %q", allText(evs))
	}
	inv := invocations(t, log)
	want := []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "-m", "gpt-5-codex", "-"}
	if !slices.Equal(inv[0].Args, want) || inv[0].Stdin != "Log the user's name" {
		t.Errorf("codex argv %q stdin %q, want %q and the prompt", inv[0].Args, inv[0].Stdin, want)
	}
}

func TestCodexTurnFailed(t *testing.T) {
	s, _ := fakeSpec(t, BackendCodex, "denied")
	evs, res := drain(t, start(t, s, "go"), nil)
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "401 Unauthorized") || res.ExitCode != 1 {
		t.Fatalf("status %s reason %q exit %d", res.Status, res.Reason, res.ExitCode)
	}
	if len(ofKind(evs, EventWarning)) != 2 {
		t.Errorf("want the error and turn.failed as warnings, got %v", kinds(evs))
	}
}

func TestGeminiStream(t *testing.T) {
	s, log := fakeSpec(t, BackendGemini, "ok")
	evs, res := drain(t, start(t, s, "Explain a.ts"), nil)
	if res.Status != StatusCompleted || res.Reply != "The file logs a greeting." {
		t.Fatalf("status %s reason %q reply %q", res.Status, res.Reason, res.Reply)
	}
	if want := (Usage{InputTokens: 7990, OutputTokens: 133}); res.Usage != want {
		t.Errorf("usage %+v", res.Usage)
	}
	if tu := ofKind(evs, EventToolUse); len(tu) != 1 || tu[0].Tool != "read_file" {
		t.Errorf("tool uses %+v", tu)
	}
	if allText(evs) != res.Reply { // the user message echo is not agent text
		t.Errorf("text %q", allText(evs))
	}
	if inv := invocations(t, log)[0]; !slices.Equal(inv.Args, []string{"-p", "", "--output-format", "stream-json"}) || inv.Stdin != "Explain a.ts" {
		t.Errorf("gemini argv %q stdin %q", inv.Args, inv.Stdin)
	}
}

func TestGeminiAuthError(t *testing.T) {
	s, _ := fakeSpec(t, BackendGemini, "noauth")
	_, res := drain(t, start(t, s, "go"), nil)
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "GEMINI_API_KEY") || res.ExitCode != 41 {
		t.Fatalf("status %s reason %q exit %d", res.Status, res.Reason, res.ExitCode)
	}
}

// A per-turn CLI asks a question: the agent is checkpointed, paused, and the answer is
// carried into a resumed session as the spec's JSON.
func TestQuestionCarriedIntoResumedSession(t *testing.T) {
	for _, tc := range []struct {
		backend, resumeFlag string
		kind                PendingKind
		value               string
	}{
		{BackendClaude, "--resume", PendingQuestion, "SQLite (for simplicity)"},
		{BackendGemini, "--resume", PendingQuestion, "Yes"},
		{BackendCodex, "resume", PendingDependency, "sk_live_51HcQ2xExampleKey"},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			s, log := fakeSpec(t, tc.backend, "asks")
			var checkpoints []Pending
			s.Checkpoint = func(pd Pending) error { checkpoints = append(checkpoints, pd); return nil }
			p := start(t, s, "Build the schema")
			var answerErr error
			evs, res := drain(t, p, func(ev Event) {
				if ev.Kind != EventPending {
					return
				}
				if ev.Pending.Kind == PendingQuestion {
					answerErr = p.Answer(ev.Pending.ID, tc.value)
				} else {
					answerErr = p.ProvideDependency(ev.Pending.ID, tc.value)
				}
			})
			if answerErr != nil {
				t.Fatal(answerErr)
			}
			if res.Status != StatusCompleted || res.Turns != 2 {
				t.Fatalf("status %s (%s), turns %d; events %v", res.Status, res.Reason, res.Turns, kinds(evs))
			}
			pend := ofKind(evs, EventPending)
			if len(pend) != 1 || pend[0].Pending.Kind != tc.kind || len(checkpoints) != 1 || checkpoints[0].ID != pend[0].Pending.ID {
				t.Fatalf("pending %+v checkpoints %+v", pend, checkpoints)
			}
			inv := invocations(t, log)
			if len(inv) != 2 {
				t.Fatalf("%d invocations", len(inv))
			}
			i := slices.Index(inv[1].Args, tc.resumeFlag)
			if i < 0 || inv[1].Args[i+1] != res.SessionID || res.SessionID == "" {
				t.Errorf("second turn did not resume session %q: %q", res.SessionID, inv[1].Args)
			}
			second := strings.Join(inv[1].Args, " ") + " " + inv[1].Stdin
			if tc.kind == PendingQuestion {
				want := questionAnswerJSON(pend[0].Pending.ID, tc.value)
				if !strings.Contains(second, strings.TrimSpace(want)) || !strings.Contains(res.Reply, `\"answer\":`) && !strings.Contains(res.Reply, `"answer":`) {
					t.Errorf("answer %s not carried: argv %q reply %q", want, inv[1].Args, res.Reply)
				}
			} else {
				// A secret is never on a command line; the next turn has it in its environment.
				if strings.Contains(second, tc.value) || !strings.Contains(second, "(set in the environment variable STRIPE_SECRET_KEY)") {
					t.Errorf("dependency injection in argv or stdin: %q", second)
				}
				if tr := ofKind(evs, EventToolResult); len(tr) != 1 || !strings.Contains(tr[0].Text, "key-is-set") {
					t.Errorf("tool results %+v", tr)
				}
			}
		})
	}
}

func TestAutoPicksFirstCLIOnPath(t *testing.T) {
	only := t.TempDir()
	target, _ := os.Readlink(filepath.Join(fakeBin, "codex"))
	if err := os.Symlink(target, filepath.Join(only, "codex")); err != nil {
		t.Fatal(err)
	}
	s, _ := fakeSpec(t, BackendAuto, "ok")
	s.Env["PATH"] = only + ":/usr/bin:/bin"
	p := start(t, s, "hi")
	if p.Backend() != BackendCodex {
		t.Fatalf("auto chose %s", p.Backend())
	}
	drain(t, p, nil)

	s.Env["PATH"] = t.TempDir()
	if _, err := Start(t.Context(), s, "hi"); err == nil || !strings.Contains(err.Error(), "none of claude, codex, gemini") {
		t.Fatalf("auto with no CLI: %v", err)
	}
	s.Env["PATH"] = fakeBin
	p = start(t, s, "hi")
	if p.Backend() != BackendClaude {
		t.Fatalf("auto chose %s with all three on PATH", p.Backend())
	}
	drain(t, p, nil)
}

func TestDryRunRoles(t *testing.T) {
	ws := t.TempDir()
	work := filepath.Join(ws, ".agentcanvas", "sandboxes", "r1", "w1", "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(role, id, sandbox, cwd string) ([]Event, Result) {
		s := Spec{RunID: "r1", AgentID: id, Role: role, BackendID: BackendDryRun, Workspace: ws, SandboxWork: sandbox, CwdMode: cwd, Round: 1}
		return drain(t, start(t, s, "task"), nil)
	}
	_, res := run("judge", "j", "", "")
	if res.Status != StatusCompleted || !strings.Contains(res.Reply, `VERDICT: {"decision":"accept"`) {
		t.Errorf("judge: %s %q", res.Status, res.Reply)
	}
	_, res = run("voter", "v", "", "")
	if !strings.Contains(res.Reply, `VOTE: {"vote":"agree"`) {
		t.Errorf("voter: %q", res.Reply)
	}
	_, res = run("orchestrator", "o", "", "")
	if r, err := agentproto.ParseReply(res.Reply); err != nil || !r.Done {
		t.Errorf("orchestrator reply %q: %+v %v", res.Reply, r, err)
	}
	evs, res := run("worker", "w1", work, CwdAgentHome)
	if res.Status != StatusCompleted {
		t.Fatalf("worker: %s %s", res.Status, res.Reason)
	}
	blocks := ofKind(evs, EventBlock)
	if len(blocks) != 1 || blocks[0].Block.Kind != agentproto.KindHandoff || blocks[0].Block.Error != "" {
		t.Fatalf("worker blocks %+v", blocks)
	}
	if got := res.Handoff["SandboxWorkDir"]; got != ".agentcanvas/sandboxes/r1/w1/work" {
		t.Errorf("SandboxWorkDir %v", got)
	}
	if got := res.Handoff["ProposalJson"]; got != ".agentcanvas/sandboxes/r1/w1/proposal/proposal.json" {
		t.Errorf("ProposalJson %v", got)
	}
	b, err := os.ReadFile(filepath.Join(work, "dry-run-w1.md"))
	if err != nil || !strings.Contains(string(b), "Edited by agent w1 (role worker), run r1, round 2") { // Spec.Round 1 counts from 0: the second round
		t.Fatalf("worker edit: %v %q", err, b)
	}
	// Deterministic: a second round appends one more labelled line.
	run("worker", "w1", work, CwdAgentHome)
	b2, _ := os.ReadFile(filepath.Join(work, "dry-run-w1.md"))
	if strings.Count(string(b2), "- Edited by") != 2 {
		t.Errorf("second round: %q", b2)
	}
	out, _ := json.Marshal(blocks[0])
	if !strings.Contains(string(out), `"kind":"handoff"`) {
		t.Errorf("block event JSON %s", out)
	}
}

func TestSpecErrors(t *testing.T) {
	ws := t.TempDir()
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{AgentID: "a", BackendID: "nope", Workspace: ws}, `unknown backendId "nope"`},
		{Spec{AgentID: "a", BackendID: BackendCommand, Workspace: ws}, "needs runtime.command"},
		{Spec{AgentID: "a", BackendID: BackendDryRun, Workspace: ws, CwdMode: "elsewhere"}, `cwdMode "elsewhere"`},
		{Spec{AgentID: "a", BackendID: BackendDryRun, Workspace: ws, CwdMode: CwdAgentHome}, "needs a sandbox work folder"},
		{Spec{AgentID: "a", BackendID: BackendDryRun, Workspace: filepath.Join(ws, "missing")}, "working folder"},
		{Spec{AgentID: "a", BackendID: BackendDryRun, Workspace: ws, Env: map[string]string{"BAD-NAME": "x"}}, `env name "BAD-NAME"`},
		{Spec{AgentID: "a", BackendID: BackendCommand, Workspace: ws, Command: []string{"no-such-agent-binary"}}, "not found on PATH"},
		{Spec{AgentID: "a", BackendID: BackendClaude, Workspace: ws, PermissionMode: "yolo"}, `runtime.permissionMode "yolo" is not one of`},
		{Spec{AgentID: "a", BackendID: BackendCodex, Workspace: ws, CodexSandbox: "open"}, `runtime.codexSandbox "open" is not one of`},
		{Spec{AgentID: "a", BackendID: BackendGemini, Workspace: ws, GeminiApprovalMode: "acceptEdits"}, `runtime.geminiApprovalMode "acceptEdits" is not one of`},
	} {
		_, err := Start(t.Context(), tc.spec, "x")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.spec, err, tc.want)
		}
	}
	// A secret that ends up in an error (here: in a bogus command path) is scrubbed.
	_, err := Start(t.Context(), Spec{AgentID: "a", BackendID: BackendCommand, Workspace: ws,
		Command: []string{"/nonexistent/sk-very-secret-value"}, Env: map[string]string{"TOKEN": "sk-very-secret-value"}, SecretEnv: []string{"TOKEN"}}, "x")
	if err == nil || strings.Contains(err.Error(), "sk-very-secret-value") || !strings.Contains(err.Error(), "[redacted:TOKEN]") {
		t.Errorf("secret in error: %v", err)
	}
}

func TestResolveEnv(t *testing.T) {
	got, err := ResolveEnv([]string{"A", "B", "C"}, map[string]string{"A": "1"}, func(n string) (string, bool) {
		if n == "B" {
			return "2", true
		}
		return "", false
	})
	if err != nil || len(got) != 2 || got["A"] != "1" || got["B"] != "2" {
		t.Errorf("ResolveEnv %v %v", got, err)
	}
	if _, err := ResolveEnv([]string{"1BAD"}, nil, nil); err == nil {
		t.Errorf("invalid name accepted")
	}
}

// A prompt, short or longer than Linux allows an argument (128 KiB), goes on stdin, never on
// the command line, which every process on the machine can read (/proc/PID/cmdline).
func TestPromptNeverOnTheCommandLine(t *testing.T) {
	long := strings.Repeat("Implement the feature. ", 10000) // 230 KB
	for _, b := range []string{BackendClaude, BackendCodex, BackendGemini} {
		for _, prompt := range []string{"Fix the bug", long} {
			t.Run(b, func(t *testing.T) {
				s, log := fakeSpec(t, b, "ok")
				_, res := drain(t, start(t, s, prompt), nil)
				if res.Status != StatusCompleted {
					t.Fatalf("%s %s", res.Status, res.Reason)
				}
				inv := invocations(t, log)[0]
				if inv.Stdin != prompt || strings.Contains(strings.Join(inv.Args, "\x00"), prompt[:11]) {
					t.Errorf("stdin %d bytes, args %q", len(inv.Stdin), inv.Args)
				}
			})
		}
	}
}

// A JSON line over the size bound is skipped with one warning; the stream goes on.
func TestOverlongJSONLineSkipped(t *testing.T) {
	defer func(n int) { maxJSONLine = n }(maxJSONLine)
	maxJSONLine = 100 << 10
	s, _ := fakeSpec(t, BackendClaude, "ok")
	script := filepath.Join(t.TempDir(), "claude-wrapper")
	stream := filepath.Join(streamsDir(t), "claude", "ok.jsonl")
	body := "#!/bin/sh\nprintf '{\"type\":\"assistant\",\"x\":\"'; head -c 300000 /dev/zero | tr '\\0' x; echo '\"}'\nsed 's/{{SESSION}}/s1/g; s/{{CWD}}/w/g' " + stream + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	s.Executable = script
	evs, res := drain(t, start(t, s, "x"), nil)
	if res.Status != StatusCompleted || res.SessionID != "s1" {
		t.Fatalf("%s %s", res.Status, res.Reason)
	}
	var warns []string
	for _, e := range ofKind(evs, EventWarning) {
		warns = append(warns, e.Reason)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "longer than 102400 bytes was skipped") {
		t.Errorf("warnings %q", warns)
	}
}

// A CLI that refuses its command line: no result, a non-zero exit, its stderr reported and
// quoted in the reason.
func TestClaudeRefusesArguments(t *testing.T) {
	s, _ := fakeSpec(t, BackendClaude, "ok")
	s.ExtraArgs = []string{"--no-such-flag"}
	evs, res := drain(t, start(t, s, "x"), nil)
	if res.Status != StatusFailed || res.Reason != "claude exited with code 1 without a result; stderr: error: unknown option '--no-such-flag'" {
		t.Fatalf("%s %q", res.Status, res.Reason)
	}
	if se := ofKind(evs, EventStderr); len(se) != 1 || !strings.Contains(se[0].Text, "unknown option '--no-such-flag'") {
		t.Errorf("stderr %+v", se)
	}
}

// lookPath remembers where it found a program for a while (one stat a hit), forgets a hit
// that is no longer an executable, and looks again after pathCacheTTL: a program installed
// earlier on the PATH meanwhile is found then.
func TestLookPathCache(t *testing.T) {
	early, late := t.TempDir(), t.TempDir()
	env := []string{"PATH=" + early + ":" + late}
	install := func(dir string) string {
		p := filepath.Join(dir, "tool-x")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	defer func(f func() time.Time) { pathNow = f }(pathNow)
	pathNow = func() time.Time { return now }
	find := func(want string) {
		t.Helper()
		got, err := lookPath("tool-x", env)
		if want == "" {
			if err == nil {
				t.Fatalf("found %s, want none", got)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("lookPath = %q, %v; want %q", got, err, want)
		}
	}
	find("")
	inLate := install(late)
	find(inLate)
	inEarly := install(early)
	find(inLate) // remembered
	now = now.Add(pathCacheTTL)
	find(inEarly) // looked up again
	os.Remove(inEarly)
	find(inLate) // the remembered one is gone: looked up again at once
	os.Chmod(inLate, 0o644)
	find("")
}

// codex exec reports a resumed thread's running total: a resumed turn counts only its own
// tokens; a new thread, or counts that fell, are taken as they are.
func TestCodexResumedUsageIsPerTurn(t *testing.T) {
	first := Usage{InputTokens: 1000, CachedInputTokens: 200, OutputTokens: 50}
	if u := codexTurnUsage("thread-usage-test", false, first); u != first {
		t.Errorf("first turn %+v", u)
	}
	total := Usage{InputTokens: 2500, CachedInputTokens: 300, OutputTokens: 80}
	if u, want := codexTurnUsage("thread-usage-test", true, total), (Usage{InputTokens: 1500, CachedInputTokens: 100, OutputTokens: 30}); u != want {
		t.Errorf("resumed turn %+v, want %+v", u, want)
	}
	fell := Usage{InputTokens: 10, OutputTokens: 5}
	if u := codexTurnUsage("thread-usage-test", true, fell); u != fell {
		t.Errorf("a count that fell %+v", u)
	}
}

// Claude's rate_limit_event (printed for subscription logins) is kept raw, and a status other
// than allowed is a warning that says when the limit resets.
func TestClaudeRateLimitEvent(t *testing.T) {
	d := claudeBackend{}.newDecoder(&Spec{}, turnInput{})
	evs := d.line([]byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1795600000,"rateLimitType":"five_hour","isUsingOverage":false},"uuid":"u","session_id":"s"}` + "\n"))
	if len(evs) != 2 || evs[0].Kind != EventRaw || evs[1].Kind != EventWarning ||
		evs[1].Reason != "claude: rate limit allowed_warning (five_hour), resets at 2026-11-25T09:46:40Z" {
		t.Errorf("events %+v", evs)
	}
	evs = d.line([]byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}` + "\n"))
	if len(evs) != 1 || evs[0].Kind != EventRaw || evs[0].Text != "rate_limit_event" {
		t.Errorf("events %+v", evs)
	}
}

// A session kept by an earlier run is resumed only by the backend it belongs to: another
// backend's session id means nothing to this CLI, which starts a fresh context instead.
func TestResumeBackendMustMatch(t *testing.T) {
	for _, c := range []struct {
		resumeBackend string
		resumed       bool
	}{{"", true}, {BackendClaude, true}, {BackendCodex, false}} {
		s, log := fakeSpec(t, BackendClaude, "ok")
		s.ResumeSession, s.ResumeBackend = "kept-session-1", c.resumeBackend
		_, res := drain(t, start(t, s, "Revise"), nil)
		if res.Status != StatusCompleted {
			t.Fatalf("%s (%s)", res.Status, res.Reason)
		}
		inv := invocations(t, log)
		i := slices.Index(inv[0].Args, "--resume")
		if got := i >= 0 && inv[0].Args[i+1] == "kept-session-1"; got != c.resumed {
			t.Errorf("session of %q resumed by claude: %v, want %v (argv %q)", c.resumeBackend, got, c.resumed, inv[0].Args)
		}
	}
}
