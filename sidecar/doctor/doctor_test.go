package doctor

import (
	"context"
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
