package runtime

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/safefile"
)

// A private CLI home gets the user's model, permissions and provider, never what runs a
// program or instructs the model; the stored login only without a key in the environment,
// and only until the run ends. What the agent wrote there is kept for its later turns.
func TestCLIHomeSeeds(t *testing.T) {
	home := t.TempDir()
	for name, body := range map[string]string{
		".claude/settings.json":       `{"model": "opus", "permissions": {"defaultMode": "acceptEdits", "allow": ["Bash(ls)"], "additionalDirectories": ["/"]}, "hooks": {"SessionStart": []}, "statusLine": {"command": "x"}}`,
		".claude.json":                `{"oauthAccount": {"email": "u@example.com"}, "mcpServers": {"m": {"command": "x"}}}`,
		".claude/.credentials.json":   `{"token": "LOGIN-claude"}`,
		".codex/config.toml":          "model = \"gpt-5\"\nnotify = [\"x\"]\n[model_providers.p]\nbase_url = \"http://127.0.0.1:1/v1\"\n[mcp_servers.m]\ncommand = \"x\"\n",
		".codex/auth.json":            `{"token": "LOGIN-codex"}`,
		".gemini/settings.json":       `{"model": {"name": "g"}, "security": {"auth": {"selectedType": "oauth-personal"}, "folderTrust": {"enabled": false}}, "mcpServers": {"m": {}}, "hooks": {}}`,
		".gemini/oauth_creds.json":    `{"token": "LOGIN-gemini"}`,
		".gemini/trustedFolders.json": `{"/work/project": "TRUST_FOLDER"}`,
	} {
		writeTestFile(t, filepath.Join(home, name), body)
	}
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	ws := t.TempDir()
	spec := func(agent string) *Spec { return &Spec{RunID: "seed-run", AgentID: agent, Workspace: ws} }
	t.Cleanup(func() { RemoveTemp("seed-run") })

	withKey := []string{"HOME=" + home, "ANTHROPIC_API_KEY=k", "OPENAI_API_KEY=k", "GEMINI_API_KEY=k"}
	noKey := []string{"HOME=" + home}
	for _, c := range []struct {
		backend, agent string
		env            []string
		file, want     string // file in the private home and what it must hold
		not            []string
		login          string // the copied login's file, "" for none
	}{
		{BackendClaude, "ck", withKey, "settings.json", `"opus"`, []string{"hooks", "statusLine", "additionalDirectories"}, ""},
		{BackendClaude, "cn", noKey, ".claude.json", "u@example.com", []string{"mcpServers"}, ".credentials.json"},
		{BackendCodex, "xk", withKey, "config.toml", "base_url", []string{"notify", "mcp_servers"}, ""},
		{BackendCodex, "xn", noKey, "config.toml", `model = "gpt-5"`, []string{"notify"}, "auth.json"},
		{BackendGemini, "gk", withKey, ".gemini/settings.json", "oauth-personal", []string{"mcpServers", "hooks", "folderTrust"}, ""},
		{BackendGemini, "gt", withKey, ".gemini/trustedFolders.json", "/work/project", nil, ""},
		{BackendGemini, "gn", noKey, ".gemini/settings.json", `"g"`, nil, ".gemini/oauth_creds.json"},
	} {
		dir := cliHomeDir(spec(c.agent), c.backend, t.TempDir())
		if want := filepath.Join(ws, ".agentcanvas", "runs", "seed-run", "homes", c.agent, c.backend); dir != want {
			t.Fatalf("home %s, want %s", dir, want)
		}
		env, err := prepareCLIHome(c.backend, dir, "seed-run", c.env)
		if err != nil || env[cliHomeVars[c.backend]] != dir {
			t.Fatalf("%s: %v %v", c.backend, env, err)
		}
		got := read(filepath.Join(dir, c.file))
		if !strings.Contains(got, c.want) {
			t.Errorf("%s/%s: %q lacks %s", c.agent, c.file, got, c.want)
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s/%s: %q holds %s", c.agent, c.file, got, n)
			}
		}
		logins := 0
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.Contains(read(p), "LOGIN-") {
				logins++
				if rel, _ := filepath.Rel(dir, p); rel != c.login {
					t.Errorf("%s: login copied to %s, want %q", c.agent, rel, c.login)
				}
			}
			return nil
		})
		if (logins == 1) != (c.login != "") {
			t.Errorf("%s: %d logins copied, want it: %v", c.agent, logins, c.login != "")
		}
	}

	// The agent's own changes stay for its later turns.
	own := filepath.Join(ws, ".agentcanvas", "runs", "seed-run", "homes", "ck", BackendClaude, "settings.json")
	writeTestFile(t, own, `{"agent": "changed"}`)
	if _, err := prepareCLIHome(BackendClaude, filepath.Dir(own), "seed-run", withKey); err != nil || read(own) != `{"agent": "changed"}` {
		t.Errorf("the agent's settings were replaced: %q %v", read(own), err)
	}
	// A login an earlier sidecar copied (the run resumed after a crash) goes at the run's end too.
	copiedLogins.Lock()
	delete(copiedLogins.m, "seed-run")
	copiedLogins.Unlock()
	for agent, backend := range map[string]string{"cn": BackendClaude, "xn": BackendCodex, "gn": BackendGemini} {
		if _, err := prepareCLIHome(backend, filepath.Join(ws, ".agentcanvas", "runs", "seed-run", "homes", agent, backend), "seed-run", noKey); err != nil {
			t.Fatal(err)
		}
	}
	// The run's end takes the copied logins away.
	RemoveTemp("seed-run")
	for _, p := range []string{"cn/claude/.credentials.json", "xn/codex/auth.json", "gn/gemini/.gemini/oauth_creds.json"} {
		if _, err := os.Stat(filepath.Join(ws, ".agentcanvas", "runs", "seed-run", "homes", p)); !os.IsNotExist(err) {
			t.Errorf("%s outlived the run: %v", p, err)
		}
	}
}

// A private Claude home keeps the provider variables of the user's settings "env" (how the CLI
// reaches its model: a base URL, a key), never one that could run a program, and never one the
// agent's own environment sets (the flow's, the model gateway's): a key found there also means
// the stored login is not copied.
func TestClaudeHomeKeepsProviderEnv(t *testing.T) {
	home := t.TempDir()
	writeTestFile(t, filepath.Join(home, ".claude", "settings.json"), `{"env": {"ANTHROPIC_BASE_URL": "http://proxy.example:8080", "ANTHROPIC_API_KEY": "sk-user", "NODE_OPTIONS": "--require /tmp/x.js", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}}`)
	writeTestFile(t, filepath.Join(home, ".claude", ".credentials.json"), `{"token": "LOGIN-claude"}`)
	ws := t.TempDir()
	t.Cleanup(func() { RemoveTemp("env-run") })
	for _, c := range []struct {
		agent string
		env   []string
		want  map[string]string
	}{
		{"plain", []string{"HOME=" + home}, map[string]string{"ANTHROPIC_BASE_URL": "http://proxy.example:8080", "ANTHROPIC_API_KEY": "sk-user", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}},
		{"routed", []string{"HOME=" + home, "ANTHROPIC_BASE_URL=http://127.0.0.1:9/gw", "ANTHROPIC_API_KEY=acgw-token"}, map[string]string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}},
	} {
		dir := cliHomeDir(&Spec{RunID: "env-run", AgentID: c.agent, Workspace: ws}, BackendClaude, t.TempDir())
		if _, err := prepareCLIHome(BackendClaude, dir, "env-run", c.env); err != nil {
			t.Fatal(err)
		}
		var got struct{ Env map[string]string }
		b, _ := os.ReadFile(filepath.Join(dir, "settings.json"))
		if err := json.Unmarshal(b, &got); err != nil || !maps.Equal(got.Env, c.want) {
			t.Errorf("%s: settings.json env %v (%v), want %v", c.agent, got.Env, err, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, ".credentials.json")); !os.IsNotExist(err) {
			t.Errorf("%s: the stored login was copied though a key is set: %v", c.agent, err)
		}
	}
}

// A revision run works in the private home of the run that made the proposal (its sessions
// are there), while a login copied into that home for the revision goes when the revision
// run ends, not when (or if) the earlier run ends again.
func TestCLIHomeOfAnEarlierRun(t *testing.T) {
	home := t.TempDir()
	writeTestFile(t, filepath.Join(home, ".claude", ".credentials.json"), `{"token": "LOGIN-claude"}`)
	ws := t.TempDir()
	t.Cleanup(func() { RemoveTemp("rev-run") })
	runs := filepath.Join(ws, ".agentcanvas", "runs")
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{RunID: "rev-run", AgentID: "w", Workspace: ws}, filepath.Join(runs, "rev-run", "homes", "w", BackendClaude)},
		{Spec{RunID: "rev-run", HomeRunID: "orig-run", AgentID: "w", Workspace: ws}, filepath.Join(runs, "orig-run", "homes", "w", BackendClaude)},
		{Spec{RunID: "rev-run", HomeRunID: "../x", AgentID: "w", Workspace: ws}, ""}, // never outside the runs
	} {
		tmp := t.TempDir()
		got := cliHomeDir(&c.spec, BackendClaude, tmp)
		if c.want == "" {
			c.want = filepath.Join(tmp, "cli-home-"+BackendClaude)
		}
		if got != c.want {
			t.Errorf("HomeRunID %q: home %s, want %s", c.spec.HomeRunID, got, c.want)
		}
	}
	dir := cliHomeDir(&Spec{RunID: "rev-run", HomeRunID: "orig-run", AgentID: "w", Workspace: ws}, BackendClaude, t.TempDir())
	if _, err := prepareCLIHome(BackendClaude, dir, "rev-run", []string{"HOME=" + home}); err != nil {
		t.Fatal(err)
	}
	login := filepath.Join(dir, ".credentials.json")
	if _, err := os.Stat(login); err != nil {
		t.Fatalf("no login copied: %v", err)
	}
	RemoveTemp("orig-run")
	if _, err := os.Stat(login); err != nil {
		t.Fatalf("the earlier run's end took the revision's login: %v", err)
	}
	RemoveTemp("rev-run")
	if _, err := os.Stat(login); !os.IsNotExist(err) {
		t.Errorf("the login outlived the revision run: %v", err)
	}
}

// A Gemini agent given GEMINI_API_KEY gets a private home that selects API-key sign-in when
// the user's settings choose no method; a method the user chose is kept, and without a key
// nothing is selected.
func TestGeminiHomeSelectsKeySignIn(t *testing.T) {
	for _, c := range []struct {
		name, user string
		key        bool
		want       string
	}{
		{"key, no settings", "", true, "gemini-api-key"},
		{"key, settings without a method", `{"model": {"name": "m"}}`, true, "gemini-api-key"},
		{"key, the user's method", `{"security": {"auth": {"selectedType": "oauth-personal"}}}`, true, "oauth-personal"},
		{"no key", "", false, ""},
	} {
		home, dir := t.TempDir(), t.TempDir()
		if c.user != "" {
			os.MkdirAll(filepath.Join(home, ".gemini"), 0o700)
			os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(c.user), 0o600)
		}
		env := []string{"HOME=" + home}
		if c.key {
			env = append(env, "GEMINI_API_KEY=k")
		}
		d, err := safefile.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		err = seedGeminiHome(d, "run_1", env)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Security struct{ Auth struct{ SelectedType string } }
		}
		b, _ := os.ReadFile(filepath.Join(dir, ".gemini", "settings.json"))
		if json.Unmarshal(b, &got) != nil || got.Security.Auth.SelectedType != c.want {
			t.Errorf("%s: %s", c.name, b)
		}
	}
}
