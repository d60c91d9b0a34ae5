package mcpconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// workspace writes files (path -> content) into a temp folder and opens it as a root.
func workspace(t *testing.T, files map[string]string) *os.Root {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

const defs = `{
  "mcpServers": {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}},
    "jira": {"type": "stdio", "command": "jira-mcp", "env": {"JIRA_TOKEN": "${JIRA_TOKEN}"}},
    "docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
    "events": {"type": "sse", "url": "https://mcp.example.com/sse"},
    "leaky": {"command": "x", "env": {"API_KEY": "sk-live-abcdef"}}
  }
}`

func TestResolveAllowlistAndDefinitions(t *testing.T) {
	root := workspace(t, map[string]string{
		ConfigFile:    defs,
		AllowlistFile: `{"servers": ["github", "docs", "leaky", "ghost"]}`,
	})
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	got, skipped := c.Resolve([]string{"github", "jira", "docs", "ghost", "leaky", "github"})
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if !reflect.DeepEqual(names, []string{"github", "docs"}) {
		t.Fatalf("got servers %v, want [github docs]", names)
	}
	if gh := got[0]; gh.Type != TypeStdio || gh.Command != "npx" || !reflect.DeepEqual(gh.Names(), []string{"GITHUB_TOKEN"}) ||
		gh.EnvRefs()["GITHUB_PERSONAL_ACCESS_TOKEN"] != "GITHUB_TOKEN" {
		t.Errorf("github = %+v, names %v", gh, gh.Names())
	}
	if n, bearer := got[1].HeaderRef("Authorization"); n != "DOCS_TOKEN" || !bearer {
		t.Errorf("docs Authorization ref = %q, %v", n, bearer)
	}
	want := map[string]string{
		"jira":  "not in the workspace allowlist " + AllowlistFile,
		"ghost": "not defined in " + ConfigFile,
		"leaky": "mcpServers.leaky.env.API_KEY: must be a variable reference",
	}
	if len(skipped) != len(want) {
		t.Fatalf("skipped = %+v, want %d", skipped, len(want))
	}
	for _, s := range skipped {
		if !strings.Contains(s.Reason, want[s.Name]) {
			t.Errorf("skip %s: reason %q does not contain %q", s.Name, s.Reason, want[s.Name])
		}
	}
	// The document given to CLIs keeps references, never values.
	doc := Document(got)
	if !strings.Contains(doc, `"GITHUB_PERSONAL_ACCESS_TOKEN":"${GITHUB_TOKEN}"`) || strings.Contains(doc, "sk-live") {
		t.Errorf("Document = %s", doc)
	}
}

func TestMissingFiles(t *testing.T) {
	c, err := Load(workspace(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	got, skipped := c.Resolve([]string{"github"})
	if len(got) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "the workspace has no "+AllowlistFile) {
		t.Errorf("no files: got %v, skipped %+v", got, skipped)
	}
	c, err = Load(workspace(t, map[string]string{AllowlistFile: `{"servers": ["github"]}`}))
	if err != nil {
		t.Fatal(err)
	}
	if _, skipped := c.Resolve([]string{"github"}); len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "the workspace has no "+ConfigFile) {
		t.Errorf("no .mcp.json: skipped %+v", skipped)
	}
	if got, skipped := c.Resolve(nil); got != nil || skipped != nil {
		t.Errorf("no names: %v %v", got, skipped)
	}
}

func TestMalformedFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file, content, want string
	}{
		{"config syntax", ConfigFile, "{\n  \"mcpServers\": {,}\n}", ".mcp.json: not valid JSON: line 2, column 18"},
		{"config without mcpServers", ConfigFile, `{"servers": {}}`, `.mcp.json: no "mcpServers" object`},
		{"mcpServers not an object", ConfigFile, `{"mcpServers": []}`, ".mcp.json: mcpServers is not an object"},
		{"allowlist syntax", AllowlistFile, `{"servers": [`, AllowlistFile + ": not valid JSON"},
		{"allowlist wrong type", AllowlistFile, `{"servers": "github"}`, AllowlistFile + ": servers: must be a list"},
		{"allowlist unknown field", AllowlistFile, `{"server": ["github"]}`, AllowlistFile + `: unknown field "server"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(workspace(t, map[string]string{tc.file: tc.content}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestBadDefinitionsNameTheField(t *testing.T) {
	for def, want := range map[string]string{
		`{"args": ["x"]}`:                                                  "mcpServers.s.command: a stdio server needs a command",
		`{"type": "ws", "url": "wss://x"}`:                                 `mcpServers.s.type: "ws" is not stdio, http or sse`,
		`{"type": "http"}`:                                                 "mcpServers.s.url: an http server needs an http:// or https:// url",
		`{"type": "http", "url": "https://x", "command": "y"}`:             "mcpServers.s.command: an http server has no command",
		`{"command": "x", "url": "https://x"}`:                             "mcpServers.s.url: a stdio server has no url",
		`{"command": "x", "timeout": 5}`:                                   "mcpServers.s.timeout: not supported",
		`{"command": "x", "args": "y"}`:                                    "mcpServers.s.args: must be a []string",
		`{"command": "x", "args": ["--key", "${KEY}"]}`:                    "mcpServers.s.args[1]: variable references are only supported in env and headers",
		`{"command": "x", "env": {"K": "${K:-dflt}"}}`:                     "mcpServers.s.env.K: must be a variable reference",
		`{"command": "x", "env": {"1K": "${K}"}}`:                          "mcpServers.s.env.1K: not a valid environment variable name",
		`{"type": "sse", "url": "https://x", "headers": {"X-Key": "abc"}}`: "mcpServers.s.headers.X-Key: must be",
		`"npx"`: "mcpServers.s: must be an object",
	} {
		c, err := Load(workspace(t, map[string]string{ConfigFile: `{"mcpServers": {"s": ` + def + `}}`, AllowlistFile: `{"servers": ["s"]}`}))
		if err != nil {
			t.Fatalf("%s: %v", def, err)
		}
		_, skipped := c.Resolve([]string{"s"})
		if len(skipped) != 1 || !strings.Contains(skipped[0].Reason, ConfigFile+": "+want) {
			t.Errorf("%s: skipped %+v, want a reason containing %q", def, skipped, want)
		}
	}
	c, err := Load(workspace(t, map[string]string{ConfigFile: `{"mcpServers": {"a.b": {"command": "x"}}}`, AllowlistFile: `{"servers": ["a.b"]}`}))
	if err != nil {
		t.Fatal(err)
	}
	if _, skipped := c.Resolve([]string{"a.b"}); len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "the name must be letters") {
		t.Errorf("dotted name: %+v", skipped)
	}
}

func TestLoadStaysInsideTheRoot(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "evil.json")
	os.WriteFile(outside, []byte(`{"mcpServers": {"x": {"command": "x"}}}`), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, ConfigFile)); err != nil {
		t.Skip("no symlinks:", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := Load(r); err == nil || !strings.Contains(err.Error(), ConfigFile) {
		t.Errorf("a .mcp.json linking out of the workspace was read: err = %v", err)
	}
}

// LoadAllowlist alone (validate's reader): a missing file is no error, a broken one is,
// and a broken .mcp.json does not matter to it.
func TestLoadAllowlist(t *testing.T) {
	if s, found, err := LoadAllowlist(workspace(t, map[string]string{ConfigFile: "{"})); s != nil || found || err != nil {
		t.Errorf("missing: %v %v %v", s, found, err)
	}
	if s, found, err := LoadAllowlist(workspace(t, map[string]string{AllowlistFile: `{"servers": ["github", "jira"]}`, ConfigFile: "{"})); !reflect.DeepEqual(s, []string{"github", "jira"}) || !found || err != nil {
		t.Errorf("listed: %v %v %v", s, found, err)
	}
	if _, found, err := LoadAllowlist(workspace(t, map[string]string{AllowlistFile: `{"servers": 1}`})); !found || err == nil || !strings.HasPrefix(err.Error(), AllowlistFile+": servers:") {
		t.Errorf("broken: %v %v", found, err)
	}
}
