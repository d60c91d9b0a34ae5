package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// The fix the scripted model makes to the first run's sample.
const (
	slugBefore  = "// slugify turns a title into the last part of a URL: \"Hello, World!\" → \"hello-world\".\nfunction slugify(title) {\n  return title.trim().replace(/ /g, '-');\n}\n\nmodule.exports = { slugify };\n"
	slugFixed   = "// slugify turns a title into the last part of a URL: \"Hello, World!\" → \"hello-world\".\nfunction slugify(title) {\n  return title.toLowerCase().replace(/'/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');\n}\n\nmodule.exports = { slugify };\n"
	slugHandoff = "I fixed slugify.\n\nHANDOFF\nContext: the slug test\nGoal: npm test passes\nDoD: node --test test/slug.test.js passes\nSandboxWorkDir: work\nProposalJson: proposal/proposal.json\nChangedFiles:\n  - src/slug.js\nTests:\n  - node --test test/slug.test.js\n"
	walkKey     = "sk-ant-walk-REAL-key-0042-never-on-disk"
)

// fixScript is the model of the first run's fixer: it rewrites src/slug.js with the CLI's own
// tools, then hands off.
func fixScript(cli modelserver.CLI) modelserver.Script {
	replies := append(cli.RewriteReplies("src/slug.js", slugBefore, slugFixed), modelserver.Reply{Text: slugHandoff})
	return modelserver.Script{{Match: "Fix src/slug.js so that", Replies: replies}}
}

// walkEnv is a newcomer's environment: a fresh HOME (no login anywhere), the agent CLIs and
// Node 24 on PATH, an agentcanvas command (this test binary), git's identity, and extra.
func walkEnv(t *testing.T, cli modelserver.CLI, extra ...string) (env []string, home string) {
	t.Helper()
	exe := cli.Binary(t)
	node := modelserver.Node24(t)
	home, bin := t.TempDir(), t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bin, "agentcanvas"), []byte("#!/bin/sh\nAGENTCANVAS_TEST_AS_CLI=1 exec "+shellQuote(self)+" \"$@\"\n"), 0o755)
	env = []string{"HOME=" + home, "TMPDIR=" + t.TempDir(), "LANG=C.UTF-8",
		"PATH=" + strings.Join([]string{bin, filepath.Dir(node), filepath.Dir(exe), "/usr/local/bin", "/usr/bin", "/bin"}, string(os.PathListSeparator)),
		"GIT_AUTHOR_NAME=New User", "GIT_AUTHOR_EMAIL=new@example.com", "GIT_COMMITTER_NAME=New User", "GIT_COMMITTER_EMAIL=new@example.com"}
	return append(env, extra...), home
}

// docCommand is one command line of the guide: what it runs, and what its comment expects.
type docCommand struct {
	line     string
	wantFail bool
}

// guideCommands are the shell lines of docs/first-run.md's code blocks, in order, without
// their comments; the editor's (make vsix, code --install-extension) are left out.
func guideCommands(t *testing.T) []docCommand {
	t.Helper()
	src, err := os.ReadFile("../../../docs/first-run.md")
	if err != nil {
		t.Fatal(err)
	}
	comment := regexp.MustCompile(`\s{2,}#\s*(.*)$`)
	var out []docCommand
	in := false
	for _, l := range strings.Split(string(src), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		case !in || strings.TrimSpace(l) == "" || strings.HasPrefix(l, "make ") || strings.HasPrefix(l, "code "):
			continue
		}
		c := docCommand{line: l}
		if m := comment.FindStringSubmatchIndex(l); m != nil {
			c.line = l[:m[0]]
			c.wantFail = strings.HasPrefix(l[m[2]:m[3]], "fails")
		}
		out = append(out, c)
	}
	return out
}

// The first run as docs/first-run.md walks it, command by command, by a newcomer with only an
// API key (no login anywhere): the real Claude Code against a scripted model on loopback, the
// key's variable in the environment and the model's address in ANTHROPIC_BASE_URL (the
// flow's runtime.env names both). doctor says ready, the dry run and the real run complete,
// the transcript shows the fixer's tool calls, the proposal applies, npm test passes (on Node
// 24, which the CLIs want), and the key never reached the agent or a file: the model saw it
// only from the gateway.
func TestFirstRunWalkWithAnAPIKey(t *testing.T) {
	cli := modelserver.Claude
	srv := cli.Start(t, fixScript(cli))
	env, home := walkEnv(t, cli, "ANTHROPIC_API_KEY="+walkKey, "ANTHROPIC_BASE_URL="+srv.URL)
	repo, _ := filepath.Abs("../../..")
	cwd := repo
	cwdFile := filepath.Join(t.TempDir(), "cwd")
	outputs := map[string]string{}
	for _, c := range guideCommands(t) {
		line := strings.ReplaceAll(c.line, "<run>", newestRun(t, cwd))
		sh := exec.Command("sh", "-c", line+"\nrc=$?; pwd > "+shellQuote(cwdFile)+"; exit $rc")
		sh.Dir, sh.Env = cwd, env
		var out bytes.Buffer
		sh.Stdout, sh.Stderr = &out, &out
		err := sh.Run()
		if b, rerr := os.ReadFile(cwdFile); rerr == nil {
			cwd = strings.TrimSpace(string(b))
		}
		if (err != nil) != c.wantFail {
			t.Fatalf("%s: %v (want failure: %v)\n%s", line, err, c.wantFail, out.String())
		}
		outputs[strings.Join(strings.Fields(c.line), " ")] = out.String()
	}
	for cmd, want := range map[string]string{
		"agentcanvas doctor":                                              "Ready for a real run with claude",
		"agentcanvas doctor flows/fix-with-claude.yaml":                   "ANTHROPIC_API_KEY is set and reaches fixer through the run's model gateway",
		"agentcanvas run flows/fix-with-claude.yaml":                      "limit: the run stops at $5.00 or 2M tokens spent (policy.budget)",
		"agentcanvas run --dry-run --pace 1s flows/fix-with-dry-run.yaml": "▶ run run_",
		"agentcanvas run show last fixer":                                 "src/slug.js",
		"agentcanvas proposal reject --workspace . .agentcanvas/sandboxes/<run>/fixer/proposal/proposal.json": "rejected: nothing in the workspace changed",
		"agentcanvas proposal list --workspace .":                                                             "rejected  run_",
		"git diff": "+  return title.toLowerCase()",
	} {
		got, ran := outputs[cmd]
		if !ran || !strings.Contains(got, want) {
			t.Errorf("%s (ran: %v) lacks %q:\n%s", cmd, ran, want, got)
		}
	}
	// The pinned Claude Code's default model is in the price table: reserved as it is billed.
	if run := outputs["agentcanvas run flows/fix-with-claude.yaml"]; !strings.Contains(run, "completed (quality_gate) after 1 round") || strings.Contains(run, "not in the gateway's price table") {
		t.Errorf("the run did not complete, or priced Claude Code's default model at the dearest:\n%s", run)
	}
	if show := outputs["agentcanvas run show last fixer"]; !strings.Contains(show, "Write") || !strings.Contains(show, "Read") {
		t.Errorf("the fixer's transcript does not show its tool calls:\n%s", show)
	}
	// The model got the real key from the gateway, never from the agent.
	for _, r := range srv.Requests() {
		if r.Path != "" && strings.HasPrefix(r.Path, "/v1/messages") && r.Header.Get("X-Api-Key") != walkKey {
			t.Errorf("a model call came with %q, not the key the gateway holds", r.Header.Get("X-Api-Key"))
		}
	}
	if n := srv.Answered(); n != 3 {
		t.Errorf("model calls answered: %d, want the fixer's 3", n)
	}
	noKeyOnDisk(t, home, walkKey)
}

// A budget below what one call of the real Claude Code sets aside stops the run at its first
// call, saying so: the field, the model, what one call needs. No call reaches the model.
// doctor said so before the run, in the gateway's words, counting no more than the real call.
func TestFirstRunBudgetBelowOneCall(t *testing.T) {
	cli := modelserver.Claude
	srv := cli.Start(t, fixScript(cli))
	env, home := walkEnv(t, cli, "ANTHROPIC_API_KEY="+walkKey, "ANTHROPIC_BASE_URL="+srv.URL)
	ws := filepath.Join(home, "first-run")
	script := fmt.Sprintf(`cp -r %s %s && cd %s && git init -q && git add -A && git commit -qm sample && sed -i 's/budget: {usd: 5, tokens: 2000000}/budget: {usd: 0.1}/' flows/fix-with-claude.yaml && `+
		`{ agentcanvas doctor flows/fix-with-claude.yaml; echo "doctor exit $?"; } && agentcanvas run flows/fix-with-claude.yaml`,
		shellQuote(filepath.Join("..", "..", "..", "examples", "first-run")), shellQuote(ws), shellQuote(ws))
	sh := exec.Command("sh", "-c", script)
	sh.Env = env
	out, err := sh.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want 1", err)
	}
	for _, want := range []string{"spend limit below one model call: the run's budget, policy.budget.usd, is $0.10, and one call of \"claude-opus-5-5\" sets aside $0.", "raise policy.budget.usd well above $0.", "fixer: turn stopped: its usd limit is below what one model call needs", "run stopped"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the run's output lacks %q:\n%s", want, out)
		}
	}
	if n := srv.Answered(); n != 0 {
		t.Errorf("%d model calls answered", n)
	}
	doctorSaid, runSaid, _ := strings.Cut(string(out), "doctor exit 1")
	for _, want := range []string{"fixer spend", "spend limit below one model call: the run's budget, policy.budget.usd, is $0.10", `priced as "claude-opus-5-5" (claude's default model)`} {
		if !strings.Contains(doctorSaid, want) {
			t.Errorf("doctor (exit 1 expected) lacks %q:\n%s", want, out)
		}
	}
	inputTokens := func(s string) int {
		m := regexp.MustCompile(`\((\d+) input tokens`).FindStringSubmatch(s)
		if m == nil {
			return -1
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if d, r := inputTokens(doctorSaid), inputTokens(runSaid); d < 0 || r < 0 || d > r {
		t.Errorf("doctor counts one call's input as %d tokens, the gateway %d: doctor's least request is more than Claude Code sends", d, r)
	}
}

// With a local model (the base URL names it) a newcomer sets a placeholder key: the run works
// (the gateway masked the key's letter in every answer, and Claude Code could not parse them).
func TestFirstRunWithAPlaceholderKey(t *testing.T) {
	cli := modelserver.Claude
	srv := cli.Start(t, fixScript(cli))
	env, home := walkEnv(t, cli, "ANTHROPIC_API_KEY=x", "ANTHROPIC_BASE_URL="+srv.URL)
	ws := filepath.Join(home, "first-run")
	script := fmt.Sprintf(`cp -r %s %s && cd %s && git init -q && git add -A && git commit -qm sample && agentcanvas run flows/fix-with-claude.yaml`,
		shellQuote(filepath.Join("..", "..", "..", "examples", "first-run")), shellQuote(ws), shellQuote(ws))
	sh := exec.Command("sh", "-c", script)
	sh.Env = env
	if out, err := sh.CombinedOutput(); err != nil || !strings.Contains(string(out), "completed (quality_gate) after 1 round") {
		t.Errorf("%v\n%s", err, out)
	}
}

// newestRun is the newest run of the workspace dir with a proposal of the fixer.
func newestRun(t *testing.T, dir string) string {
	ps, _ := filepath.Glob(filepath.Join(dir, ".agentcanvas", "sandboxes", "*", "fixer", "proposal", "proposal.json"))
	sort.Strings(ps)
	if len(ps) == 0 {
		return "<run>"
	}
	return filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(ps[len(ps)-1]))))
}

// noKeyOnDisk fails t if key is in any file under dir.
func noKeyOnDisk(t *testing.T, dir, key string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(key)) {
				t.Errorf("the key is in %s", p)
			}
		}
		return nil
	})
}

// The sample's flows of Codex and Gemini CLI work with only their API key too (no login, no
// settings file: Gemini CLI is given nothing but GEMINI_API_KEY, and its private home selects
// API-key authentication): the fixer's fix comes back as a proposal whose tests pass, through
// the model gateway.
func TestFirstRunWithOnlyAKeyForCodexAndGemini(t *testing.T) {
	for _, c := range []struct {
		cli       modelserver.CLI
		key, base string
		suffix    string
	}{
		{modelserver.Codex, "OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"},
		{modelserver.Gemini, "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", ""},
	} {
		t.Run(c.cli.Name, func(t *testing.T) {
			srv := c.cli.Start(t, fixScript(c.cli))
			key := "walk-REAL-key-" + c.cli.Name + "-0042"
			env, home := walkEnv(t, c.cli, c.key+"="+key, c.base+"="+srv.URL+c.suffix)
			ws := filepath.Join(home, "first-run")
			script := fmt.Sprintf(`cp -r %s %s && cd %s && git init -q && git add -A && git commit -qm sample && agentcanvas run flows/fix-with-%s.yaml`,
				shellQuote(filepath.Join("..", "..", "..", "examples", "first-run")), shellQuote(ws), shellQuote(ws), c.cli.Name)
			if c.cli.Model != "" {
				// The CLI's default model first asks a routing model to choose one, which
				// the scripted model does not play: the flow names the model (a person's
				// flow may, or not).
				script = strings.Replace(script, " && agentcanvas run", ` && sed -i 's/backendId: gemini, cwdMode: agentHome,/backendId: gemini, model: `+c.cli.Model+`, cwdMode: agentHome,/' flows/fix-with-gemini.yaml && agentcanvas run`, 1)
			}
			sh := exec.Command("sh", "-c", script)
			sh.Env = env
			out, err := sh.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "completed (quality_gate) after 1 round") {
				t.Fatalf("%v\n%s\nmodel requests: %+v", err, out, srv.Requests())
			}
			noKeyOnDisk(t, home, key)
		})
	}
}
