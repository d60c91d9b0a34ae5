package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/mcpconfig"
)

// mcpServers resolves names against a real .mcp.json and allowlist, as the engine does.
func mcpServers(t *testing.T, names ...string) []mcpconfig.Server {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".agentcanvas"), 0o755)
	os.WriteFile(filepath.Join(dir, mcpconfig.ConfigFile), []byte(`{"mcpServers": {
		"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GH_TOKEN}"}},
		"jira": {"command": "jira-mcp", "env": {"JIRA_TOKEN": "${JIRA_TOKEN}"}},
		"docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Team": "${DOCS_TEAM}"}},
		"events": {"type": "sse", "url": "https://mcp.example.com/sse"}
	}}`), 0o644)
	os.WriteFile(filepath.Join(dir, mcpconfig.AllowlistFile), []byte(`{"servers": ["github", "jira", "docs", "events"]}`), 0o644)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	c, err := mcpconfig.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	got, skipped := c.Resolve(names)
	if len(skipped) > 0 {
		t.Fatalf("skipped %+v", skipped)
	}
	if got == nil {
		got = []mcpconfig.Server{}
	}
	return got
}

const ghSecret = "ghp_S3cretValue0123456789"

func TestClaudeMCPConfig(t *testing.T) {
	s, log := fakeSpec(t, BackendClaude, "ok")
	s.MCPServers = mcpServers(t, "github", "docs")
	s.Env["GH_TOKEN"] = ghSecret
	evs, res := drain(t, start(t, s, "Triage the issues"), nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	args := invocations(t, log)[0].Args
	i := slices.Index(args, "--mcp-config")
	if i < 0 || i+2 >= len(args) || args[i+2] != "--strict-mcp-config" {
		t.Fatalf("claude argv %q: want --mcp-config JSON --strict-mcp-config", args)
	}
	var doc struct {
		MCPServers map[string]mcpconfig.Server `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(args[i+1]), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.MCPServers) != 2 || doc.MCPServers["github"].Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "${GH_TOKEN}" ||
		doc.MCPServers["docs"].Headers["Authorization"] != "Bearer ${DOCS_TOKEN}" || doc.MCPServers["docs"].Type != "http" {
		t.Errorf("--mcp-config %s", args[i+1])
	}
	for _, e := range evs {
		if b, _ := json.Marshal(e); strings.Contains(string(b), ghSecret) {
			t.Errorf("event carries the secret value: %s", b)
		}
	}
	if strings.Contains(strings.Join(args, " "), ghSecret) {
		t.Error("the secret value is on the command line")
	}
}

func TestClaudeNamedButNoneAllowedStillStrict(t *testing.T) {
	s, log := fakeSpec(t, BackendClaude, "ok")
	s.MCPServers = []mcpconfig.Server{}
	if _, res := drain(t, start(t, s, "x"), nil); res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	args := invocations(t, log)[0].Args
	if i := slices.Index(args, "--mcp-config"); i < 0 || args[i+1] != `{"mcpServers":{}}` || !slices.Contains(args, "--strict-mcp-config") {
		t.Errorf("claude argv %q: want an empty --mcp-config with --strict-mcp-config", args)
	}
	// No mcp in the flow: the CLI's own MCP settings are left alone.
	s, log = fakeSpec(t, BackendClaude, "ok")
	drain(t, start(t, s, "x"), nil)
	if args := invocations(t, log)[0].Args; slices.Contains(args, "--mcp-config") || slices.Contains(args, "--strict-mcp-config") {
		t.Errorf("claude argv %q has MCP flags for an agent without mcp", args)
	}
}

func TestCodexMCPOverrides(t *testing.T) {
	s, log := fakeSpec(t, BackendCodex, "ok")
	s.MCPServers = mcpServers(t, "github", "docs", "events")
	s.Env["GH_TOKEN"] = ghSecret
	s.Env["FAKECLI_LOG_ENV"] = "GITHUB_PERSONAL_ACCESS_TOKEN,GH_TOKEN"
	evs, res := drain(t, start(t, s, "Triage"), nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	inv := invocations(t, log)[0]
	want := []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write",
		"-c", `mcp_servers.github.command="npx"`,
		"-c", `mcp_servers.github.args=["-y", "@modelcontextprotocol/server-github"]`,
		"-c", `mcp_servers.github.env_vars=["GITHUB_PERSONAL_ACCESS_TOKEN"]`,
		"-c", `mcp_servers.docs.url="https://mcp.example.com/mcp"`,
		"-c", `mcp_servers.docs.bearer_token_env_var="DOCS_TOKEN"`,
		"-c", `mcp_servers.docs.env_http_headers={ "X-Team" = "DOCS_TEAM" }`,
		"-"}
	if !slices.Equal(inv.Args, want) {
		t.Errorf("codex argv\n%q\nwant\n%q", inv.Args, want)
	}
	// codex forwards variables by the server's own name: GITHUB_PERSONAL_ACCESS_TOKEN is set
	// from GH_TOKEN in codex's environment (never on its command line).
	if inv.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != ghSecret || inv.Env["GH_TOKEN"] != ghSecret {
		t.Errorf("codex env %v", inv.Env)
	}
	var warned bool
	for _, e := range ofKind(evs, EventWarning) {
		warned = warned || strings.Contains(e.Reason, `MCP server "events" skipped: codex has no SSE transport`)
	}
	if !warned {
		t.Errorf("no warning for the SSE server: %+v", ofKind(evs, EventWarning))
	}
}

func TestFakeCodexRefusesBadOverrides(t *testing.T) {
	// The fake checks what the runtime writes: a server with neither command nor url, a
	// stdio key on an http server, or an unquoted value is refused as codex would.
	for _, extra := range [][]string{
		{"-c", `mcp_servers.x.env_vars=["A"]`},
		{"-c", `mcp_servers.x.url="https://x"`, "-c", `mcp_servers.x.env_vars=["A"]`},
		{"-c", `mcp_servers.x.command=npx`},
		{"-c", `mcp_servers.x.colour="red"`},
	} {
		s, _ := fakeSpec(t, BackendCodex, "ok")
		s.ExtraArgs = extra
		if _, res := drain(t, start(t, s, "x"), nil); res.Status == StatusCompleted {
			t.Errorf("fake codex accepted %q", extra)
		}
	}
}

func TestGeminiAllowedMCPServerNames(t *testing.T) {
	s, log := fakeSpec(t, BackendGemini, "ok")
	s.MCPServers = mcpServers(t, "github", "jira")
	evs, res := drain(t, start(t, s, "x"), nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	args := invocations(t, log)[0].Args
	if i := slices.Index(args, "--allowed-mcp-server-names"); i < 0 || args[i+1] != "github,jira" {
		t.Errorf("gemini argv %q", args)
	}
	if w := ofKind(evs, EventWarning); len(w) != 1 || !strings.Contains(w[0].Reason, "gemini agents get no per-agent MCP server definitions") {
		t.Errorf("warnings %+v", w)
	}
	s, log = fakeSpec(t, BackendGemini, "ok")
	s.MCPServers = []mcpconfig.Server{}
	drain(t, start(t, s, "x"), nil)
	if args := invocations(t, log)[0].Args; !slices.Contains(args, geminiNoMCPServer) {
		t.Errorf("gemini argv %q: an agent with no allowed server should be limited to none", args)
	}
}

func TestCommandAgentGetsMCPServersJSON(t *testing.T) {
	s, _ := fakeSpec(t, BackendCommand, "")
	s.Command = []string{"sh", "-c", `printf '%s' "$AGENTCANVAS_MCP_SERVERS"`}
	s.MCPServers = mcpServers(t, "jira")
	s.Env["JIRA_TOKEN"] = ghSecret
	_, res := drain(t, start(t, s, "x"), nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if want := `{"mcpServers":{"jira":{"type":"stdio","command":"jira-mcp","env":{"JIRA_TOKEN":"${JIRA_TOKEN}"}}}}`; res.Reply != want {
		t.Errorf("AGENTCANVAS_MCP_SERVERS = %s, want %s", res.Reply, want)
	}
}

func TestDryRunNamesItsMCPServers(t *testing.T) {
	s, _ := fakeSpec(t, BackendDryRun, "")
	s.Role = "planner"
	s.MCPServers = mcpServers(t, "github", "jira")
	_, res := drain(t, start(t, s, "x"), nil)
	if !strings.Contains(res.Reply, "- MCP servers: github,jira.") {
		t.Errorf("dry-run reply does not name its MCP servers:\n%s", res.Reply)
	}
}
