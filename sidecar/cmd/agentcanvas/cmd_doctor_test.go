package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// doctor FLOW checks the CLIs the flow's agents use: a claude flow without claude on PATH is
// not ready (exit 1) and says how to install it; a dry-run flow needs none (exit 0).
func TestDoctorChecksTheFlowsCLIs(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	os.Symlink(git, filepath.Join(bin, "git"))
	t.Setenv("PATH", bin)
	t.Setenv("HOME", t.TempDir())
	root := writeFlows(t, map[string]string{
		"flows/claude.yaml": "version: 0.2\nname: c\nagents:\n  - {id: a, role: worker, runtime: {backendId: claude}}\ninteractions: []\n",
		"flows/dry.yaml":    "version: 0.2\nname: d\nagents:\n  - {id: a, role: worker, runtime: {backendId: dry-run}}\ninteractions: []\n",
	})
	code, out, _ := runCmd(t, "doctor", filepath.Join(root, "flows", "claude.yaml"))
	if code != exitFail || !strings.Contains(out, "✗ claude") || !strings.Contains(out, "fix: npm install -g @anthropic-ai/claude-code@2.1.330") || strings.Contains(out, "codex") {
		t.Errorf("claude flow: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "doctor", "--json", filepath.Join(root, "flows", "dry.yaml"))
	var rep struct {
		Checks []map[string]string `json:"checks"`
		Ready  bool                `json:"ready"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || !rep.Ready || len(rep.Checks) != 2 {
		t.Errorf("dry-run flow: exit %d\n%s", code, out)
	}
	if code, _, e := runCmd(t, "doctor", "--backend", "cursor"); code != exitUsage || !strings.Contains(e, `"cursor"`) {
		t.Errorf("unknown backend: exit %d %q", code, e)
	}
}

// doctorPath is a PATH with git and a claude that prints the tested version, nothing else.
func doctorPath(t *testing.T) {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	os.Symlink(git, filepath.Join(bin, "git"))
	os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '2.1.330 (Claude Code)'\n"), 0o755)
	t.Setenv("PATH", bin)
	t.Setenv("HOME", t.TempDir())
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CONFIG_DIR", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		t.Setenv(k, "")
	}
}

// Without a flow, one CLI that can run is enough: ready, naming it as the usable backend
// (codex and gemini, not installed, are listed with their fixes but do not make it not
// ready). With none, it says that one is enough.
func TestDoctorWithoutAFlowIsReadyWithOneCLI(t *testing.T) {
	doctorPath(t)
	code, out, _ := runCmd(t, "doctor")
	if code != exitFail || !strings.Contains(out, "Not ready: no agent CLI can run yet, and one is enough.") {
		t.Errorf("no key, no login: exit %d\n%s", code, out)
	}
	t.Setenv("ANTHROPIC_API_KEY", "sk-not-printed")
	code, out, _ = runCmd(t, "doctor")
	if code != exitOK || !strings.Contains(out, "Ready for a real run with claude (backendId auto takes claude). The other CLIs are not set up (above), and need not be.") || !strings.Contains(out, "✗ codex") || strings.Contains(out, "sk-not-printed") {
		t.Errorf("claude with a key: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "doctor", "--json")
	var rep struct {
		Ready  bool     `json:"ready"`
		Usable []string `json:"usable"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || !rep.Ready || len(rep.Usable) != 1 || rep.Usable[0] != "claude" {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
}

// doctor FLOW checks what the run will use: a key set in the environment but not named in
// the agent's runtime.env never reaches it (the line to change is named); named, it reaches
// the agent through the gateway and the model API it will call must answer: the base URL
// the flow gives, here a server on loopback, then a closed port.
func TestDoctorFlowChecksTheKeyReachesTheAgentAndTheAPIAnswers(t *testing.T) {
	ws := t.TempDir()
	if out, err := exec.Command("cp", "-r", "../../../examples/first-run/.", ws).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	doctorPath(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-not-printed")
	shipped := filepath.Join(ws, "flows", "fix-with-claude.yaml")
	src, _ := os.ReadFile(shipped)
	bare := filepath.Join(ws, "flows", "no-env.yaml")
	os.WriteFile(bare, []byte(strings.Replace(string(src), ", env: [ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL]}", "}", 1)), 0o644)
	code, out, _ := runCmd(t, "doctor", bare)
	if code != exitFail || !strings.Contains(out, "✗ fixer key") || !strings.Contains(out, "ANTHROPIC_API_KEY is set, but fixer's runtime.env does not name it, so it never reaches the agent") || !strings.Contains(out, "fix: add ANTHROPIC_API_KEY to fixer's runtime.env ("+bare+":27): env: [ANTHROPIC_API_KEY]") {
		t.Errorf("key not in runtime.env: exit %d\n%s", code, out)
	}

	api := listen(t)
	t.Setenv("ANTHROPIC_BASE_URL", "http://"+api.Addr().String())
	code, out, _ = runCmd(t, "doctor", shipped)
	if code != exitOK || !strings.Contains(out, "✓ fixer key") || !strings.Contains(out, "ANTHROPIC_API_KEY is set and reaches fixer through the run's model gateway") || !strings.Contains(out, "✓ model API http://"+api.Addr().String()) || strings.Contains(out, "sk-not-printed") {
		t.Errorf("key named, API up: exit %d\n%s", code, out)
	}
	addr := api.Addr().String()
	api.Close()
	code, out, _ = runCmd(t, "doctor", shipped)
	if code != exitFail || !strings.Contains(out, "✗ model API http://"+addr+"  unreachable: ") || !strings.Contains(out, "connection refused (called by fixer)") {
		t.Errorf("API down: exit %d\n%s", code, out)
	}
}

// doctor FLOW names each of the flow's limits that cannot hold one model call of an agent
// routed through the gateway (the run's budget here holds one; the interaction's max_tokens and
// the agent's maxCostUsd do not), with the model priced as the flow's policy.pricing says.
func TestDoctorFlowSaysALimitBelowOneCall(t *testing.T) {
	ws := t.TempDir()
	if out, err := exec.Command("cp", "-r", "../../../examples/first-run/.", ws).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	doctorPath(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-not-printed")
	t.Setenv("ANTHROPIC_BASE_URL", "http://"+listen(t).Addr().String())
	flowFile := filepath.Join(ws, "flows", "fix-with-claude.yaml")
	src, _ := os.ReadFile(flowFile)
	tight := strings.NewReplacer(
		"budget: {usd: 5, tokens: 2000000}", "budget: {usd: 5, tokens: 2000000}\n  pricing: {anthropic: {claude-opus-5-5: {input: 1, output: 2}}}",
		"{type: max_rounds, rounds: 2}", "{type: max_rounds, rounds: 2}\n              - {type: max_tokens, tokens: 500}",
		"cwdMode: agentHome,", "cwdMode: agentHome, maxCostUsd: 0.04,",
	).Replace(string(src))
	os.WriteFile(flowFile, []byte(tight), 0o644)
	code, out, _ := runCmd(t, "doctor", flowFile)
	for _, want := range []string{"✗ fixer spend", "interaction fix's limit, max_tokens, is 500 tokens", "agent fixer's limit, runtime.maxCostUsd, is $0.04",
		`priced as "claude-opus-5-5" (claude's default model) at $1.00 input, $2.00 output per million`, "fix: raise each limit named above in " + flowFile} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q", want)
		}
	}
	if code != exitFail || strings.Contains(out, "policy.budget") {
		t.Errorf("exit %d (want 1), the run's budget (which holds a call) named or more missing:\n%s", code, out)
	}
}

// listen is a TCP listener on loopback that accepts and closes connections.
func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l
}
