package doctor

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// fakeCLI puts program on dir, printing out for --version.
func fakeCLI(t *testing.T, dir, program, out string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, program), []byte("#!/bin/sh\necho '"+out+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func byName(cs []Check) map[string]Check {
	m := map[string]Check{}
	for _, c := range cs {
		m[c.Name] = c
	}
	return m
}

// Each CLI: missing (fail, the install command), another version (warn, the tested one),
// tested; authenticated by a key variable (named, its value never shown) or a login file, or
// not at all (fail, the log-in command). git found; confinement without Landlock is a warning
// saying what a run will do.
func TestChecksSayWhatIsMissingAndHowToFixIt(t *testing.T) {
	bin, home := t.TempDir(), t.TempDir()
	gitPath, err := lookPath("git", os.Getenv("PATH"))
	if err != nil {
		t.Skip("no git")
	}
	os.Symlink(gitPath, filepath.Join(bin, "git"))
	fakeCLI(t, bin, "claude", "2.1.330 (Claude Code)")
	fakeCLI(t, bin, "codex", "codex-cli 0.150.2")
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "auth.json"), []byte(`{"tokens":"x"}`), 0o600)
	const secret = "sk-ant-not-to-be-printed"
	vars := map[string]string{"PATH": bin, "HOME": home, "ANTHROPIC_API_KEY": secret}
	env := Env{Getenv: func(k string) string { return vars[k] }, Probe: func() confine.Status { return confine.Status{Reason: "the kernel has no Landlock"} }}
	checks := Run(context.Background(), env, Select(nil))
	got := byName(checks)
	for _, c := range checks {
		if strings.Contains(c.Detail+c.Fix, secret) {
			t.Errorf("a secret is printed: %+v", c)
		}
	}
	want := map[string][2]string{ // name → status, a part of detail or fix
		"git":          {OK, "git "},
		"confinement":  {Warn, "agents run unconfined"},
		"claude":       {OK, "2.1.330 (tested)"},
		"claude login": {OK, "ANTHROPIC_API_KEY is set"},
		"codex":        {Warn, "npm install -g @openai/codex@0.169.0"},
		"codex login":  {OK, filepath.Join(home, ".codex", "auth.json")},
		"gemini":       {Fail, "npm install -g @google/gemini-cli@0.61.0"},
	}
	for name, w := range want {
		c, ok := got[name]
		if !ok || c.Status != w[0] || !strings.Contains(c.Detail+" "+c.Fix, w[1]) {
			t.Errorf("%s: %+v, want %s with %q", name, c, w[0], w[1])
		}
	}
	if _, ok := got["gemini login"]; ok {
		t.Error("a missing CLI's login is checked")
	}
	if Problems(checks) != 1 {
		t.Errorf("problems = %d", Problems(checks))
	}
	// No key and no login: the command that logs in. A claude.json without oauthAccount is no login.
	delete(vars, "ANTHROPIC_API_KEY")
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"numStartups": 3}`), 0o600)
	c := byName(Run(context.Background(), env, Select([]string{"claude"})))["claude login"]
	if c.Status != Fail || !strings.HasPrefix(c.Fix, "claude") {
		t.Errorf("claude not logged in: %+v", c)
	}
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"oauthAccount": {"emailAddress": "a@b"}}`), 0o600)
	if c := byName(Run(context.Background(), env, Select([]string{"claude"})))["claude login"]; c.Status != OK || strings.Contains(c.Detail, "a@b") {
		t.Errorf("claude logged in: %+v", c)
	}
	// CLAUDE_CONFIG_DIR moves the login.
	cfg := t.TempDir()
	vars["CLAUDE_CONFIG_DIR"] = cfg
	if c := byName(Run(context.Background(), env, Select([]string{"claude"})))["claude login"]; c.Status != Fail {
		t.Errorf("login looked for outside CLAUDE_CONFIG_DIR: %+v", c)
	}
	os.WriteFile(filepath.Join(cfg, ".credentials.json"), []byte(`{}`), 0o600)
	if c := byName(Run(context.Background(), env, Select([]string{"claude"})))["claude login"]; c.Status != OK {
		t.Errorf("login in CLAUDE_CONFIG_DIR: %+v", c)
	}
	// Without git, nothing can be proposed.
	vars["PATH"] = t.TempDir()
	if c := byName(Run(context.Background(), env, nil))["git"]; c.Status != Fail || c.Fix == "" {
		t.Errorf("no git: %+v", c)
	}
}

// How each agent of a flow will authenticate: a key its runtime.env names and the
// environment sets (through the gateway when the gateway holds such keys), else the CLI's
// login, else a failure whose fix says what to do — never the key's value.
func TestAgentAuthSaysHowTheAgentAuthenticates(t *testing.T) {
	home := t.TempDir()
	claude, _ := ByBackend("claude")
	a := Agent{ID: "fixer", Backend: "claude", At: "f.yaml:9"}
	for _, c := range []struct {
		name   string
		env    []string
		vars   map[string]string
		login  bool
		status string
		want   string
		api    string
	}{
		{"named and set", []string{"ANTHROPIC_API_KEY"}, map[string]string{"ANTHROPIC_API_KEY": "k"}, false, OK, "ANTHROPIC_API_KEY is set and reaches fixer through the run's model gateway", "https://api.anthropic.com"},
		{"a base URL named", []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}, map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, false, OK, "through the run's model gateway", "http://127.0.0.1:9"},
		{"a token the gateway does not hold", []string{"CLAUDE_CODE_OAUTH_TOKEN"}, map[string]string{"CLAUDE_CODE_OAUTH_TOKEN": "k"}, false, OK, "CLAUDE_CODE_OAUTH_TOKEN is set and reaches fixer (runtime.env)", "https://api.anthropic.com"},
		{"named, unset, a login", []string{"ANTHROPIC_API_KEY"}, nil, true, OK, "fixer uses your claude login", "https://api.anthropic.com"},
		{"named, unset, no login", []string{"ANTHROPIC_API_KEY"}, nil, false, Fail, "export ANTHROPIC_API_KEY=<your key>", ""},
		{"nothing", nil, nil, false, Fail, "log in: claude", ""},
	} {
		h := filepath.Join(home, strings.ReplaceAll(c.name, " ", "-"))
		os.MkdirAll(filepath.Join(h, ".claude"), 0o700)
		if c.login {
			os.WriteFile(filepath.Join(h, ".claude", ".credentials.json"), []byte(`{"x":1}`), 0o600)
		}
		vars := map[string]string{"HOME": h}
		for k, v := range c.vars {
			vars[k] = v
		}
		a.Env = c.env
		ch, api, _ := agentAuth(Env{Getenv: func(k string) string { return vars[k] }}.withDefaults(), a, claude)
		if ch.Status != c.status || !strings.Contains(ch.Detail+" "+ch.Fix, c.want) || api != c.api || strings.Contains(ch.Detail+ch.Fix, "=k") {
			t.Errorf("%s: %+v, endpoint %q", c.name, ch, api)
		}
	}
}

// The model API is reached through the proxy the environment names for its scheme, except
// on loopback.
func TestEndpointsAreDialledThroughTheProxy(t *testing.T) {
	env := Env{Getenv: func(k string) string { return map[string]string{"HTTPS_PROXY": "http://proxy.example:3128"}[k] }}
	for in, want := range map[string]string{
		"https://api.anthropic.com": "proxy.example:3128",
		"http://127.0.0.1:8080":     "127.0.0.1:8080",
		"http://localhost":          "localhost:80",
	} {
		u, _ := url.Parse(in)
		if got, _ := dialAddress(env, u); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
