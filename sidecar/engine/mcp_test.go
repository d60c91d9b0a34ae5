package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mcpFlow = `version: 0.2
description: one agent names an allowed, defined MCP server; the other a server not allowed
agents:
  - {id: a, role: planner, mcp: [github], runtime: {backendId: command, command: [bash, AGENT]}}
  - {id: b, role: reviewer, mcp: [shell, github], runtime: {backendId: command, command: [bash, AGENT]}}
  - {id: c, role: reviewer, runtime: {backendId: command, command: [bash, AGENT]}}
interactions:
  - id: first
    patternId: role_play_pair
    edges:
      - source: a
        target: b
        data: {topology: p2p, termination: {type: max_rounds, rounds: 2}}
  - id: second
    patternId: role_play_pair
    dependsOn: [first]
    edges:
      - source: c
        target: b
        data: {topology: p2p, termination: {type: max_rounds, rounds: 1}}
`

func TestAgentsGetOnlyAllowlistedMCPServers(t *testing.T) {
	dir := t.TempDir()
	// Each agent records what it was given: the servers JSON and whether the token reached it.
	agent := script(t, dir, "agent.sh", `cat > /dev/null
out="$(dirname "$0")/$AGENTCANVAS_AGENT_ID"
printf '%s|%s\n' "${AGENTCANVAS_MCP_SERVERS-unset}" "${GH_TOKEN-unset}" > "$out"
echo "ANSWER: ok"
`)
	ws, f := workspace(t, strings.ReplaceAll(mcpFlow, "AGENT", agent))
	os.MkdirAll(filepath.Join(ws, ".agentcanvas"), 0o755)
	os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(`{"mcpServers": {
		"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GH_TOKEN}"}},
		"shell": {"command": "shell-mcp"}
	}}`), 0o644)
	os.WriteFile(filepath.Join(ws, ".agentcanvas", "mcp-allowlist.json"), []byte(`{"servers": ["github"]}`), 0o644)
	const token = "ghp_EngineTestToken0123456789"
	rec := &recorder{}
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Sink: rec.sink, Env: map[string]string{"GH_TOKEN": token}})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("run: %v %+v", err, out)
	}
	got := func(agent string) (servers, tok string) {
		b, err := os.ReadFile(filepath.Join(dir, agent))
		if err != nil {
			t.Fatal(err)
		}
		servers, tok, _ = strings.Cut(strings.TrimSpace(string(b)), "|")
		return
	}
	wantGitHub := `{"mcpServers":{"github":{"type":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"${GH_TOKEN}"}}}}`
	for _, a := range []string{"a", "b"} {
		if servers, tok := got(a); servers != wantGitHub || tok != token {
			t.Errorf("agent %s got servers %s and token %q; want only github, and the token from the run's env", a, servers, tok)
		}
	}
	// An agent naming no server gets neither the servers nor the variables they refer to.
	if servers, tok := got("c"); servers != "unset" || tok != "unset" {
		t.Errorf("agent c got servers %s, token %q", servers, tok)
	}
	var warnings []string
	for _, e := range rec.events("warning") {
		if e.Fields["mcpServer"] != nil {
			warnings = append(warnings, e.Fields["agent"].(string)+": "+e.Fields["message"].(string))
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `b: MCP server "shell" skipped for agent b: not in the workspace allowlist`) {
		t.Errorf("MCP warnings = %q, want one (once per agent, not per turn) for b's shell", warnings)
	}
	// The token's value is never written to the run's log.
	logDir := filepath.Join(ws, ".agentcanvas")
	filepath.Walk(logDir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), token) {
				t.Errorf("%s holds the token value", p)
			}
		}
		return nil
	})
}
