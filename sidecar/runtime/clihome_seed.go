package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/safefile"
)

// What each private CLI home is seeded with from the user's own configuration: the model and
// the permission defaults, the provider settings a CLI cannot run without, and nothing that
// runs a program or instructs the model (hooks, MCP servers, notify, status lines, plugins,
// instruction files). The stored login only when the agent's environment gives the CLI no
// other way to authenticate (an API key or token; a model gateway sets one).

// claudeLoginVars authenticate Claude Code without its stored login.
var claudeLoginVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"}

// seedClaudeHome: settings.json (model, permissions), .claude.json (the account, when the
// login is copied; else empty) and .credentials.json, the stored login.
func seedClaudeHome(home *safefile.Dir, runID string, env []string) error {
	user := userCLIHome(env, "CLAUDE_CONFIG_DIR", ".claude")
	userJSON := filepath.Join(user, ".claude.json")
	if confine.Lookup(env, "CLAUDE_CONFIG_DIR") == "" {
		userJSON = filepath.Join(confine.Lookup(env, "HOME"), ".claude.json") // beside ~/.claude
	}
	if err := seedJSON(home, "settings.json", filepath.Join(user, "settings.json"),
		map[string][]string{"model": nil, "permissions": {"defaultMode", "allow", "deny", "ask"}}); err != nil {
		return err
	}
	seeded, err := seedClaudeEnv(home, "settings.json", filepath.Join(user, "settings.json"), env)
	if err != nil {
		return err
	}
	if hasAny(append(env, seeded...), claudeLoginVars...) {
		return seedJSON(home, ".claude.json", "", nil)
	}
	if err := seedJSON(home, ".claude.json", userJSON, map[string][]string{"oauthAccount": nil, "hasCompletedOnboarding": nil}); err != nil {
		return err
	}
	return copyLogin(runID, home, ".credentials.json", filepath.Join(user, ".credentials.json"))
}

// claudeEnvPrefixes name the variables of settings.json's "env" a private Claude home keeps:
// how the CLI reaches the provider the user set up (a base URL, a key, Bedrock or Vertex, a
// proxy) and its own switches. Others (NODE_OPTIONS, LD_PRELOAD, PATH…) could run a program.
var claudeEnvPrefixes = []string{"ANTHROPIC_", "CLAUDE_CODE_", "AWS_", "CLOUD_ML_", "VERTEX_", "DISABLE_", "MAX_THINKING_TOKENS",
	"API_TIMEOUT_MS", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"}

// seedClaudeEnv copies into the private settings.json (rel, written by seedJSON) the variables of
// the user's settings "env" that claudeEnvPrefixes keep and the agent's environment does not
// set itself: what the agent is given (the flow's variables, the model gateway's base URL and
// token) wins, since Claude Code lets its settings override its environment. It returns the
// variables it copied, as NAME=VALUE.
func seedClaudeEnv(home *safefile.Dir, rel, src string, env []string) ([]string, error) {
	b, err := readUserFile(src)
	if err != nil {
		return nil, nil // no settings: nothing to keep
	}
	var user struct {
		Env map[string]any `json:"env"`
	}
	if json.Unmarshal(b, &user) != nil || len(user.Env) == 0 {
		return nil, nil
	}
	kept := map[string]string{}
	var out []string
	for name, v := range user.Env {
		val, ok := v.(string)
		if !ok || confine.Lookup(env, name) != "" || !slices.ContainsFunc(claudeEnvPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		kept[name] = val
		out = append(out, name+"="+val)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	cur, err := home.ReadFile(rel, maxHomeFile)
	if err != nil {
		return nil, err
	}
	settings := map[string]any{}
	if err := json.Unmarshal(cur, &settings); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if _, done := settings["env"]; done {
		return out, nil // seeded by an earlier turn of this run
	}
	settings["env"] = kept
	nb, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return nil, err
	}
	return out, home.WriteFile(rel, append(nb, '\n'), 0o600)
}

// codexConfigKeys are the config.toml keys a private Codex home keeps (model_providers: a
// provider the user configured is how the CLI reaches its model).
var codexConfigKeys = []string{"model", "model_provider", "model_providers", "model_reasoning_effort",
	"model_reasoning_summary", "model_verbosity", "model_context_window", "approval_policy", "sandbox_mode",
	"disable_response_storage", "forced_login_method", "preferred_auth_method"}

// seedCodexHome: config.toml (codexConfigKeys) and auth.json, the stored login, when the
// provider is OpenAI's and no key is in the environment.
func seedCodexHome(home *safefile.Dir, runID string, env []string) error {
	user := userCLIHome(env, "CODEX_HOME", ".codex")
	const dst = "config.toml"
	cfg := map[string]any{}
	if _, err := home.Lstat(dst); err != nil {
		if b, err := readUserFile(filepath.Join(user, "config.toml")); err == nil {
			var in map[string]any
			if _, err := toml.Decode(string(b), &in); err == nil {
				for _, k := range codexConfigKeys {
					if v, ok := in[k]; ok {
						cfg[k] = v
					}
				}
			}
		}
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
			return err
		}
		if err := writeNew(home, dst, buf.Bytes()); err != nil {
			return err
		}
	} else if b, err := home.ReadFile(dst, maxHomeFile); err != nil || toml.Unmarshal(b, &cfg) != nil {
		cfg = map[string]any{} // the agent's own (or not a file): read as the default provider
	}
	provider, _ := cfg["model_provider"].(string)
	if provider != "" && provider != "openai" || hasAny(env, "OPENAI_API_KEY", "CODEX_API_KEY") {
		return nil
	}
	return copyLogin(runID, home, "auth.json", filepath.Join(user, "auth.json"))
}

// geminiLoginVars authenticate the Gemini CLI without its stored login.
var geminiLoginVars = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"}

// seedGeminiHome: .gemini/settings.json (model, the auth method, privacy, the default
// approval mode), trustedFolders.json and the stored Google login.
func seedGeminiHome(home *safefile.Dir, runID string, env []string) error {
	user := filepath.Join(userCLIHome(env, "GEMINI_CLI_HOME", ""), ".gemini")
	const own = ".gemini"
	if err := home.MkdirAll(own, 0o700); err != nil {
		return err
	}
	settings := filepath.Join(own, "settings.json")
	_, err := home.Lstat(settings)
	fresh := err != nil
	if err := seedJSON(home, settings, filepath.Join(user, "settings.json"),
		map[string][]string{"model": nil, "security": {"auth"}, "privacy": nil, "general": {"defaultApprovalMode"}}); err != nil {
		return err
	}
	if fresh && hasAny(env, "GEMINI_API_KEY") {
		if err := selectKeyAuth(home, settings); err != nil {
			return err
		}
	}
	// The folders the user trusts: a list of paths, which a gemini agent running in the
	// workspace needs (headless gemini refuses an untrusted folder).
	if _, err := copyOnce(home, filepath.Join(own, "trustedFolders.json"), filepath.Join(user, "trustedFolders.json")); err != nil {
		return err
	}
	if hasAny(env, geminiLoginVars...) {
		return nil
	}
	for _, f := range []string{"oauth_creds.json", "google_accounts.json"} {
		if err := copyLogin(runID, home, filepath.Join(own, f), filepath.Join(user, f)); err != nil {
			return err
		}
	}
	return nil
}

// selectKeyAuth makes a fresh private Gemini settings file select API-key authentication
// when the user's settings chose no method: an agent given GEMINI_API_KEY alone would else
// be refused ("Invalid auth method selected"), since the model gateway's base URL makes the
// CLI's own guess a method it does not accept headless.
func selectKeyAuth(home *safefile.Dir, rel string) error {
	b, err := home.ReadFile(rel, maxHomeFile)
	if err != nil {
		return err
	}
	settings := map[string]any{}
	if err := json.Unmarshal(b, &settings); err != nil {
		return err
	}
	security, _ := settings["security"].(map[string]any)
	if security == nil {
		security = map[string]any{}
	}
	auth, _ := security["auth"].(map[string]any)
	if auth == nil {
		auth = map[string]any{}
	}
	if _, chosen := auth["selectedType"]; chosen {
		return nil
	}
	auth["selectedType"] = "gemini-api-key"
	security["auth"], settings["security"] = auth, security
	nb, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	return home.WriteFile(rel, append(nb, '\n'), 0o600)
}
