package engine

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// sampleRepo is a small node project with a failing test: parse does not trim, the test
// expects it to, and the test also needs a module from the (ignored) node_modules.
var sampleRepo = map[string]string{
	".gitignore": "node_modules/\n",
	// node --test given no folder would also run the sandboxes' copies under .agentcanvas/.
	"package.json": `{"name": "sample", "version": "1.0.0", "scripts": {"test": "node --test test/"}}` + "\n",
	"src/parser.js": "// parse splits a comma-separated list.\n" +
		"exports.parse = (s) => s.split(',');\n",
	"test/parser.test.js": "const test = require('node:test');\n" +
		"const assert = require('node:assert');\n" +
		"const { parse } = require('../src/parser');\n" +
		"const words = require('words-fixture');\n" +
		"test('parse trims', () => assert.deepStrictEqual(parse(words.join(', ')), words));\n",
	"node_modules/words-fixture/package.json": `{"name": "words-fixture", "main": "index.js"}` + "\n",
	"node_modules/words-fixture/index.js":     "module.exports = ['a', 'b', 'c'];\n",
}

// readmeScript: the lead assigns the fix to the coder and accepts it; the coder runs the
// tests (they fail), reads and fixes the parser, runs them again (they pass) and hands off.
func readmeScript() modelserver.Script {
	const fixed = "exports.parse = (s) => s.split(',').map((x) => x.trim());\n"
	npmTest := modelserver.Call{Tool: "Bash", Args: map[string]any{"command": "npm test", "description": "run the tests"}}
	return modelserver.Script{
		{Match: "Decompose the task", Replies: []modelserver.Reply{
			{Text: "ASSIGN coder: Fix the failing test: run npm test, fix src/parser.js, run npm test again."},
			{Text: "ACCEPT coder: the test passes\nMETRIC: tests_passed=1"},
		}},
		{Match: "Fix the failing test: run npm test", Replies: []modelserver.Reply{
			{Text: "Running the tests.", Calls: []modelserver.Call{npmTest}},
			{Text: "Reading the parser.", Calls: []modelserver.Call{{Tool: "Read", Args: map[string]any{"file_path": "{{cwd}}/src/parser.js"}}}},
			{Text: "Trimming the items.", Calls: []modelserver.Call{{Tool: "Edit", Args: map[string]any{"file_path": "{{cwd}}/src/parser.js",
				"old_string": "exports.parse = (s) => s.split(',');\n", "new_string": fixed}}}},
			{Text: "Running the tests again.", Calls: []modelserver.Call{npmTest}},
			{Text: "The parser trims its items; npm test passes.\n\nHANDOFF\nContext: the failing parser test\nGoal: make npm test pass\nDoD: npm test passes\nSandboxWorkDir: work\nProposalJson: proposal/proposal.json\nChangedFiles:\n  - src/parser.js\nTests:\n  - npm test\n"},
		}},
	}
}

// The README's example, `run --backend claude --task "Fix the failing test"
// flows/manager-worker.yaml`, on a small repository with a failing test: the real Claude Code
// CLI against a scripted model. The coder works in a whole-repository sandbox with the shared
// node_modules, sees the test fail and pass, and its proposal, applied, makes the
// repository's own test pass.
func TestREADMEClaudeExample(t *testing.T) {
	cli := modelserver.Claude
	exe := cli.Binary(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	t.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	srv := cli.Start(t, readmeScript())
	ws := gitWorkspace(t)
	for name, body := range sampleRepo {
		p := filepath.Join(ws, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flowSrc, err := os.ReadFile(filepath.Join("..", "..", "flows", "manager-worker.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws, "flows"), 0o755)
	os.WriteFile(filepath.Join(ws, "flows", "manager-worker.yaml"), flowSrc, 0o644)
	gitCommit(t, ws)
	if out, err := npmTest(ws); err == nil {
		t.Fatalf("the sample's test passes before the fix:\n%s", out)
	}
	// The flow lists no variables: a person logged in to Claude needs none. The scripted
	// model's address and key reach the CLI through its settings in HOME.
	home := t.TempDir()
	env := cli.Env(t, srv)
	settings, _ := json.Marshal(map[string]any{"env": map[string]string{"ANTHROPIC_BASE_URL": env["ANTHROPIC_BASE_URL"],
		"ANTHROPIC_API_KEY": env["ANTHROPIC_API_KEY"], "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}})
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), settings, 0o644)
	t.Setenv("HOME", home)

	f := flow.Parse(filepath.Join(ws, "flows", "manager-worker.yaml"), flowSrc)
	if len(f.Problems) > 0 {
		t.Fatalf("flows/manager-worker.yaml: %v", f.Problems)
	}
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Workspace: ws, Backend: "claude", Task: "Fix the failing test", Sink: rec.sink})
	if err != nil {
		t.Fatal(err)
	}
	logRealRun(t, rec, srv, out)
	if out.Status != StatusCompleted {
		t.Fatalf("run %s: %s", out.Status, out.Reason)
	}
	var coder string
	for _, p := range out.Proposals {
		if strings.Contains(p, "/coder/") {
			coder = p
		}
	}
	if coder == "" {
		t.Fatalf("no proposal from the coder: %v", out.Proposals)
	}
	pr, err := proposal.Load(ws, coder)
	if err != nil {
		t.Fatal(err)
	}
	if cf := pr.Proposal.ChangedFiles; len(cf) != 1 || cf[0].Path != "src/parser.js" {
		t.Fatalf("the coder's proposal changes %+v, want src/parser.js only", cf)
	}
	// The model saw the test fail, then pass: the tool results the CLI sent back.
	var results []string
	for _, r := range srv.Requests() {
		if r.Conversation == 1 && strings.Contains(string(r.Body), "npm test") {
			results = append(results, string(r.Body))
		}
	}
	if len(results) == 0 || !strings.Contains(results[len(results)-1], "# pass 1") || !strings.Contains(results[len(results)-1], "# fail 1") {
		t.Errorf("the coder's npm test runs did not fail and then pass as the model was told")
	}
	if _, err := proposal.Apply(context.Background(), ws, coder, proposal.Selection{}, proposal.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := npmTest(ws); err != nil {
		t.Fatalf("npm test after applying the proposal: %v\n%s", err, out)
	}
}

func npmTest(dir string) (string, error) {
	cmd := exec.Command("npm", "test")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func gitCommit(t *testing.T, ws string) {
	t.Helper()
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "sample"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}
