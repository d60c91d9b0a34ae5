package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// The first-run sample (examples/first-run, docs/first-run.md), followed as a new user would
// up to the point where a model is needed: copied into a fresh git repository, every flow
// validates; a run leaves the repository's status clean (.agentcanvas/ ignores itself); and
// with the fixer played by a command agent that writes the fix, the flow's test command passes
// in the sandbox, the proposal applies, and the repository's own tests pass. The run is on
// Node 24 (what make test installs; the CLIs want 22 or later), and the sample's npm test
// runs its tests on the machine's Node and on Node 24 alike (node --test test/ finds no tests
// on 22 and later).
func TestFirstRunSample(t *testing.T) {
	node24 := modelserver.Node24(t)
	nodes := []string{node24}
	if sys, err := exec.LookPath("node"); err == nil {
		nodes = append(nodes, sys)
	}
	t.Setenv("PATH", filepath.Dir(node24)+string(os.PathListSeparator)+os.Getenv("PATH"))
	ws := t.TempDir()
	if out, err := exec.Command("cp", "-r", "../../../examples/first-run/.", ws).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", ws, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "start")
	if code, _, e := runCmd(t, "validate", filepath.Join(ws, "flows")); code != exitOK || !strings.Contains(e, "✓ 4 flow files valid") {
		t.Fatalf("validate: exit %d %s", code, e)
	}
	for _, node := range nodes {
		if out, err := npmTest(node, ws); err == nil || !strings.Contains(out, "fail 2") {
			t.Fatalf("before the fix, npm test on %s: %v\n%s", node, err, out)
		}
	}

	fix := filepath.Join(t.TempDir(), "fixer.sh")
	os.WriteFile(fix, []byte(`#!/usr/bin/env bash
cat >/dev/null
cat > src/slug.js <<'JS'
// slugify turns a title into the last part of a URL: "Hello, World!" → "hello-world".
function slugify(title) {
  return title.toLowerCase().replace(/'/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

module.exports = { slugify };
JS
cat <<EOH
Fixed slugify.
HANDOFF
Context:        the slug test
Goal:           npm test passes
DoD:            node --test test/slug.test.js passes in the sandbox
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/fixer/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/fixer/proposal/proposal.json
ChangedFiles:
  - src/slug.js
Tests:
  - node --test test/slug.test.js
Next:
  - Orchestrator: review + apply
EOH
`), 0o755)
	src, _ := os.ReadFile(filepath.Join(ws, "flows", "fix-with-claude.yaml"))
	cmdFlow := strings.Replace(string(src), "{kind: cli, backendId: claude, cwdMode: agentHome,", "{kind: cli, backendId: command, command: [bash, "+fix+"], cwdMode: agentHome,", 1)
	os.WriteFile(filepath.Join(ws, "flows", "fix-with-claude.yaml"), []byte(cmdFlow), 0o644)
	git("commit", "-qam", "the fixer is a command here")

	var out, errb bytes.Buffer
	code := run([]string{"run", filepath.Join(ws, "flows", "fix-with-claude.yaml"), "--non-interactive", "--confine", "off"}, strings.NewReader(""), &out, &errb)
	if code != exitOK || !strings.Contains(out.String(), "completed (quality_gate) after 1 round") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if st := git("status", "--porcelain"); st != "" {
		t.Errorf("the run left the repository's status unclean:\n%s", st)
	}
	props, _ := filepath.Glob(filepath.Join(ws, ".agentcanvas", "sandboxes", "*", "fixer", "proposal", "proposal.json"))
	if len(props) != 1 {
		t.Fatalf("proposals: %v", props)
	}
	// Reviewed as a person reads it (a diff; no colour off a terminal), listed one line each.
	code, rv, _ := runCmd(t, "proposal", "review", "--workspace", ws, props[0])
	for _, want := range []string{"proposal of fixer, run run_", "✓ applies to the workspace as it is now", "── src/slug.js (modified, +1 -1)", "-  return title.trim().replace(/ /g, '-');", "+  return title.toLowerCase()", "apply it: "} {
		if code != exitOK || !strings.Contains(rv, want) || strings.Contains(rv, "\x1b[") {
			t.Errorf("review lacks %q:\n%s", want, rv)
		}
	}
	if code, ls, _ := runCmd(t, "proposal", "list", "--workspace", ws); code != exitOK || !strings.Contains(ls, "pending (apply 1st)  run_") || !strings.Contains(ls, "fixer: src/slug.js (modified)") {
		t.Errorf("list:\n%s", ls)
	}
	if code, o, e := runCmd(t, "proposal", "apply", "--workspace", ws, props[0]); code != exitOK {
		t.Fatalf("apply: exit %d %s %s", code, o, e)
	}
	for _, node := range nodes {
		if out, err := npmTest(node, ws); err != nil || !strings.Contains(out, "pass 2") {
			t.Errorf("after the applied proposal, npm test on %s: %v\n%s", node, err, out)
		}
	}
	if _, ls, _ := runCmd(t, "proposal", "list", "--workspace", ws); !strings.HasPrefix(ls, "applied  run_") {
		t.Errorf("list after apply:\n%s", ls)
	}
}

// npmTest runs the sample's package.json test script as npm would, with node first on PATH.
func npmTest(node, dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct{ Scripts map[string]string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return "", err
	}
	c := exec.Command("sh", "-c", pkg.Scripts["test"])
	c.Dir = dir
	c.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := c.CombinedOutput()
	return string(out), err
}

// Every first-run flow stops its run at a spend limit in tokens (what every CLI reports, and
// the gateway counts whatever a model's price) that docs/first-run.md states, and the
// flow of each real CLI gives its fixer the CLI's API key variable (a key set but not named
// there never reaches the agent), so a key works as well as a login.
func TestFirstRunFlowsHaveALimitAndTakeAKey(t *testing.T) {
	guide, err := os.ReadFile("../../../docs/first-run.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{"claude": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY", "dry-run": ""}
	for backend, key := range keys {
		file := filepath.Join("..", "..", "..", "examples", "first-run", "flows", "fix-with-"+backend+".yaml")
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f := flow.Parse(file, src)
		b := f.Policy.Budget
		if b == nil || b.Tokens == nil {
			t.Errorf("%s: no policy.budget of tokens", file)
			continue
		}
		said := commas(*b.Tokens) + " tokens"
		if b.USD != nil {
			said = fmt.Sprintf("$%g or %s", *b.USD, said)
		}
		if !strings.Contains(string(guide), said) {
			t.Errorf("docs/first-run.md does not say the limit of %s: %q", file, said)
		}
		for _, a := range f.Agents {
			if a.ID == "fixer" && key != "" && (a.Runtime == nil || !contains(a.Runtime.Env, key)) {
				t.Errorf("%s: the fixer's runtime.env does not name %s", file, key)
			}
		}
	}
}

// commas writes n with thousands separated: 2,000,000.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
