// Package doctor checks what a real run needs before it starts: each agent CLI installed, at
// the version AgentCanvas was tested with, able to authenticate (an API key variable set or a
// login present — neither is ever printed), git, and what the kernel offers confinement. Every
// problem comes with the one command that fixes it.
package doctor

import (
	"fmt"

	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
)

// CLI is what doctor knows of one agent CLI.
type CLI struct {
	Backend string // backendId
	Program string // the executable on PATH
	Package string // its npm package
	Tested  string // the version AgentCanvas is tested with (package.json devDependencies)
	// KeyVars are variables any one of which, set, lets the CLI authenticate without a login.
	KeyVars []string
	// Logins are files whose presence says the CLI was logged in.
	Logins  []login
	HomeVar string
	// LogIn is the one command that logs the CLI in.
	LogIn string
	// Provider is the model API its key is for; LoginEndpoint the service a logged-in CLI
	// calls (a keyed one calls its provider's API, or the base URL its flow gives).
	Provider      gateway.Provider
	LoginEndpoint string
	// DefaultModel is the model the tested version calls when the flow names none (runtime.model);
	// LeastRequest the fewest bytes its model requests have (its system prompt and tool
	// definitions: measured, less a margin), for what one call sets aside at the least.
	DefaultModel string
	LeastRequest int
}

// login is a file whose presence says the CLI was logged in: rel under HOME, or varRel under
// the CLI's HomeVar when that is set; key, when set, a JSON key the file must have.
type login struct {
	rel, varRel, key string
}

// CLIs are the agent CLIs AgentCanvas drives, in the order backendId auto tries them.
var CLIs = []CLI{
	{
		Backend: "claude", Program: "claude", Package: "@anthropic-ai/claude-code", Tested: "2.1.330",
		KeyVars:  []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"},
		Logins:   []login{{rel: ".claude/.credentials.json", varRel: ".credentials.json"}, {rel: ".claude.json", varRel: ".claude.json", key: "oauthAccount"}},
		HomeVar:  "CLAUDE_CONFIG_DIR",
		LogIn:    "claude   (then type /login, or run: claude setup-token)",
		Provider: gateway.Anthropic, LoginEndpoint: "https://api.anthropic.com",
		DefaultModel: "claude-opus-5-5", LeastRequest: 40_000, // measured: 49 KB
	},
	{
		Backend: "codex", Program: "codex", Package: "@openai/codex", Tested: "0.169.0",
		KeyVars:  []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		Logins:   []login{{rel: ".codex/auth.json", varRel: "auth.json"}},
		HomeVar:  "CODEX_HOME",
		LogIn:    "codex login",
		Provider: gateway.OpenAI, LoginEndpoint: "https://chatgpt.com",
		DefaultModel: "gpt-6.1-sol", LeastRequest: 30_000, // measured: 38 KB
	},
	{
		Backend: "gemini", Program: "gemini", Package: "@google/gemini-cli", Tested: "0.61.0",
		KeyVars:  []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"},
		Logins:   []login{{rel: ".gemini/oauth_creds.json", varRel: ".gemini/oauth_creds.json"}},
		HomeVar:  "GEMINI_CLI_HOME",
		LogIn:    "gemini   (then pick \"Login with Google\")",
		Provider: gateway.Gemini, LoginEndpoint: "https://cloudcode-pa.googleapis.com",
		DefaultModel: "gemini-3.1-pro-preview", LeastRequest: 30_000, // measured: 37 KB
	},
}

// Install is the command that installs the tested version.
func (c CLI) Install() string { return "npm install -g " + c.Package + "@" + c.Tested }

// ByBackend is the CLI of a backendId, if it is one.
func ByBackend(id string) (CLI, bool) {
	for _, c := range CLIs {
		if c.Backend == id {
			return c, true
		}
	}
	return CLI{}, false
}

// Missing says, for a CLI backend whose program is not on path, what is wrong and the command
// that installs it; "" when it is there (or backend is not a CLI's).
func Missing(backend, path string) string {
	c, ok := ByBackend(backend)
	if !ok {
		return ""
	}
	if _, err := lookPath(c.Program, path); err == nil {
		return ""
	}
	return fmt.Sprintf("%s is not installed (not found on PATH): %s", c.Program, c.Install())
}

// KeyCLI is the CLI that reads its key from the variable name, if one does.
func KeyCLI(name string) (CLI, bool) {
	for _, c := range CLIs {
		for _, k := range c.KeyVars {
			if k == name {
				return c, true
			}
		}
	}
	return CLI{}, false
}

// LoginOf is the file holding c's stored login (under HOME or the CLI's home variable, as
// getenv gives them), "" when it has none.
func LoginOf(c CLI, getenv func(string) string) string {
	return loginFound(Env{Getenv: getenv}.withDefaults(), c)
}
