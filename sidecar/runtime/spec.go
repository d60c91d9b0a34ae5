package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/mcpconfig"
)

// Working-folder modes (agentcanvas-protocol.md §6.2).
const (
	CwdWorkspace = "workspace" // the workspace root (orchestrators)
	CwdAgentHome = "agentHome" // the agent's sandbox work/ folder (workers)
)

// Spec is everything needed to run one agent. The run engine fills it from the flow
// (agents[].runtime) and the run; values of Env are supplied at run time and never persisted.
type Spec struct {
	RunID         string
	AgentID       string
	Role          string
	InteractionID string
	Round         int

	// BackendID: auto, claude, codex, gemini, command, dry-run ("" means auto).
	BackendID string
	// Command is the argv of a command agent (runtime.command).
	Command []string
	// Interactive keeps a command agent's stdin open after the prompt so answers can be
	// written to it (see docs/agents.md); otherwise stdin is closed after the prompt.
	Interactive bool
	// Executable overrides the CLI binary of claude/codex/gemini (default: found on PATH).
	Executable string

	// CwdMode: workspace (default) or agentHome. Workspace and SandboxWork are absolute.
	CwdMode     string
	Workspace   string
	SandboxWork string
	// SharedFolders are the absolute workspace folders linked into SandboxWork (runtime.shared):
	// a confined agent may read them.
	SharedFolders []string

	// Env holds the values of the names the flow lists (runtime.env), resolved by the caller
	// (ResolveEnv). Only these, a fixed set of harmless variables (PATH, HOME, locale, proxy,
	// TMPDIR; see baseEnvNames) and the AGENTCANVAS_* variables reach the agent.
	Env map[string]string
	// Hidden are absolute paths a confined agent may not read whatever its other grants (the
	// folders of skills marked disable-model-invocation, unless the person invoked the skill).
	Hidden []string

	// SecretEnv names the entries of Env whose values are secrets (runtime.secrets, an MCP
	// server's variables): they, the provider key variables (SecretName) and the values of
	// secret dependency types are what the runtime redacts, and nothing else.
	SecretEnv []string

	// CLI settings (claude/codex/gemini; ignored where a CLI has no such flag).
	Model              string
	MaxTurns           int      // claude --max-turns
	AllowedTools       []string // claude --allowedTools
	PermissionMode     string   // claude --permission-mode
	CodexSandbox       string   // codex --sandbox
	GeminiApprovalMode string   // gemini --approval-mode
	// Access is what the agent may do to the files of its working folder when the flow sets
	// no PermissionMode, CodexSandbox or GeminiApprovalMode for its CLI; the engine chooses it
	// by role (docs/agents.md, "Role defaults"). "": each CLI's own default (codex:
	// workspace-write).
	Access       Access
	SystemPrompt string   // claude --append-system-prompt
	ExtraArgs    []string // appended to the CLI's argv before the prompt
	// MCPServers are the agent's MCP servers (spec §7.3), resolved by the engine through
	// mcpconfig. nil: the flow names none and the CLI keeps its own MCP settings. Non-nil,
	// even empty: the agent gets exactly these (claude --mcp-config + --strict-mcp-config,
	// codex -c mcp_servers.*, gemini --allowed-mcp-server-names, AGENTCANVAS_MCP_SERVERS for
	// command agents). Their env and headers hold ${NAME} references; Env holds the values.
	MCPServers []mcpconfig.Server
	// ResumeSession starts the first turn by resuming this CLI session id.
	ResumeSession string
	// ResumeBackend, when set, is the backend ResumeSession belongs to (a session an earlier
	// run kept): the session is resumed only when the agent's backend resolves to it, else the
	// turn starts a fresh context.
	ResumeBackend string
	// HomeRunID is the run whose private CLI home the agent uses (clihome.go), when not RunID:
	// a revision run works in the home, and so with the sessions, of the run that made the
	// proposal. A login copied into it is still removed when RunID ends.
	HomeRunID string

	// StopGrace is the time between SIGTERM and SIGKILL when stopping (default 5s).
	StopGrace time.Duration
	// DependencyTimeout bounds how long a dependency request may stay pending (default 1h):
	// then a required dependency fails the agent, an optional one is resumed with "".
	DependencyTimeout time.Duration
	// PauseOnPhaseComplete pauses the agent at === PHASE N COMPLETE === until Continue.
	PauseOnPhaseComplete bool
	// MaxFollowUpTurns bounds the follow-up turns that carry answers (default 20).
	MaxFollowUpTurns int

	// Checkpoint is called before the agent is paused for a pending request (and before it
	// fails on a fatal [ERROR]), so the engine can write its state; an error is reported as a
	// warning and the pause goes ahead. It runs on the supervising goroutine: it must not
	// call Answer, ProvideDependency, RejectDependency or Continue (Stop is fine).
	Checkpoint func(Pending) error
	// MaxBlockBytes caps one protocol block (agentproto.Options; 0 = its default, 64 KiB).
	MaxBlockBytes int

	// Confine is how the agent's processes are confined by the kernel (confine.ModeAuto,
	// ModeRequired or ModeOff; "" is off: the caller decides). See confine.go.
	Confine confine.Mode
	// Network is runtime.network: "" (the agent's network is left alone) or NetworkNone (no
	// TCP connect or bind; enforced only when the agent is confined).
	Network string
	// UnixSockets is runtime.unixSockets: socket paths the agent may connect to, absolute or
	// relative to Workspace. Any grant leaves the confined agent Unix sockets as a whole (see
	// UnixSocketGrants).
	UnixSockets []string
	// GatewayPort is the port of the run's model gateway when the agent's model calls go
	// through it (UseGateway, gateway_env.go); 0 otherwise.
	GatewayPort int

	// confined is set when the agent's turns are confined (backends that drop a sandbox of
	// their own then: codex).
	confined bool
}

// Access is an agent's default right over the files of its working folder.
type Access string

const (
	// AccessEdit lets the CLI edit files in its working folder without asking (workers in
	// their sandboxes): claude acceptEdits, codex workspace-write, gemini auto_edit.
	AccessEdit Access = "edit"
	// AccessReadOnly lets it read but not edit (reviewers, judges, orchestrators…): claude
	// dontAsk, codex read-only, gemini default (which offers headless runs no edit tool).
	AccessReadOnly Access = "read-only"
)

const (
	defaultStopGrace         = 5 * time.Second
	defaultDependencyTimeout = time.Hour
	defaultMaxFollowUps      = 20
)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// baseEnvNames are inherited from the sidecar's own environment: what a CLI needs to find
// itself, its config and the network. Nothing here is meant to be a secret; everything else
// must be listed in the flow.
var baseEnvNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "SYSTEMROOT", "COMSPEC", "PATHEXT",
}

// ResolveEnv returns the values for the names a flow lists: supplied[name] when present,
// else lookup(name) (e.g. os.LookupEnv for headless runs), else the name is left out.
// It refuses names that are not valid environment variable names.
func ResolveEnv(names []string, supplied map[string]string, lookup func(string) (string, bool)) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		if !envNameRE.MatchString(n) {
			return nil, fmt.Errorf("runtime.env: %q is not a valid environment variable name", n)
		}
		if v, ok := supplied[n]; ok {
			out[n] = v
		} else if lookup != nil {
			if v, ok := lookup(n); ok {
				out[n] = v
			}
		}
	}
	return out, nil
}

func (s *Spec) validate() error {
	if s.AgentID == "" {
		return errors.New("runtime: spec has no AgentID")
	}
	switch s.CwdMode {
	case "", CwdWorkspace, CwdAgentHome:
	default:
		return fmt.Errorf("runtime: agent %s: cwdMode %q is not workspace or agentHome", s.AgentID, s.CwdMode)
	}
	for n := range s.Env {
		if !envNameRE.MatchString(n) {
			return fmt.Errorf("runtime: agent %s: env name %q is not a valid environment variable name", s.AgentID, n)
		}
	}
	if _, err := confine.ParseMode(string(s.Confine)); err != nil {
		return fmt.Errorf("runtime: agent %s: confinement %w", s.AgentID, err)
	}
	switch s.Network {
	case "", NetworkNone, NetworkOpen:
	default:
		return fmt.Errorf("runtime: agent %s: network %q is not %q or %q", s.AgentID, s.Network, NetworkNone, NetworkOpen)
	}
	for _, p := range s.UnixSockets {
		if p == "" || strings.IndexByte(p, 0) >= 0 {
			return fmt.Errorf("runtime: agent %s: unixSockets: %q is not a path", s.AgentID, p)
		}
	}
	return nil
}

// workDir is the agent's working folder per cwdMode.
func (s *Spec) workDir() (string, error) {
	dir := s.Workspace
	if s.CwdMode == CwdAgentHome {
		if s.SandboxWork == "" {
			return "", fmt.Errorf("runtime: agent %s: cwdMode agentHome needs a sandbox work folder", s.AgentID)
		}
		dir = s.SandboxWork
	}
	if dir == "" {
		return "", fmt.Errorf("runtime: agent %s: no working folder (workspace not set)", s.AgentID)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("runtime: agent %s: working folder: %w", s.AgentID, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("runtime: agent %s: working folder %s is not a directory", s.AgentID, dir)
	}
	return dir, nil
}

// environ builds the agent's environment: base names from our own environment, the listed
// values, extra (values provided for dependencies) and the AGENTCANVAS_* variables, sorted.
func (s *Spec) environ(extra map[string]string, turn int) []string {
	m := map[string]string{}
	for _, n := range baseEnvNames {
		if v, ok := os.LookupEnv(n); ok {
			m[n] = v
		}
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LC_") {
			if i := strings.IndexByte(kv, '='); i > 0 {
				m[kv[:i]] = kv[i+1:]
			}
		}
	}
	for n, v := range s.Env {
		m[n] = v
	}
	for n, v := range extra {
		m[n] = v
	}
	// An MCP server env entry KEY: "${NAME}" with KEY != NAME also gets KEY set, since codex
	// forwards variables to servers by their own name only (env_vars).
	for _, srv := range s.MCPServers {
		for k, ref := range srv.EnvRefs() {
			if v, ok := s.Env[ref]; ok && k != ref {
				if _, listed := s.Env[k]; !listed {
					m[k] = v
				}
			}
		}
	}
	if s.MCPServers != nil {
		m["AGENTCANVAS_MCP_SERVERS"] = mcpconfig.Document(s.MCPServers)
	}
	m["AGENTCANVAS_RUN_ID"] = s.RunID
	m["AGENTCANVAS_AGENT_ID"] = s.AgentID
	m["AGENTCANVAS_ROLE"] = s.Role
	m["AGENTCANVAS_INTERACTION_ID"] = s.InteractionID
	m["AGENTCANVAS_ROUND"] = strconv.Itoa(s.Round)
	m["AGENTCANVAS_TURN"] = strconv.Itoa(turn)
	if s.SandboxWork != "" {
		m["AGENTCANVAS_SANDBOX"] = s.SandboxWork
	}
	env := make([]string, 0, len(m))
	for n, v := range m {
		env = append(env, n+"="+v)
	}
	sort.Strings(env)
	return env
}

// lookPath finds file on the agent's PATH (not necessarily the sidecar's).
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		if !isExecutable(file) {
			return "", fmt.Errorf("%s: not an executable file", file)
		}
		return file, nil
	}
	path := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			path = kv[5:]
		}
	}
	key := [2]string{path, file}
	now := pathNow()
	pathCache.Lock()
	hit, ok := pathCache.m[key]
	pathCache.Unlock()
	if ok && now.Sub(hit.at) < pathCacheTTL && isExecutable(hit.path) {
		return hit.path, nil
	}
	for _, dir := range strings.Split(path, string(os.PathListSeparator)) {
		if dir == "" {
			dir = "."
		}
		p := dir + string(os.PathSeparator) + file
		if isExecutable(p) {
			if filepath.IsAbs(p) { // a relative folder depends on the working folder
				pathCache.Lock()
				if pathCache.m == nil {
					pathCache.m = map[[2]string]pathHit{}
				}
				pathCache.m[key] = pathHit{p, now}
				pathCache.Unlock()
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: executable not found on PATH", file)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// pathCache remembers where lookPath found a program on a PATH, as shells hash commands: a
// hit costs one stat (it must still be an executable) instead of one per PATH folder, which
// was the largest part of the sidecar's own work for a small agent turn. A hit is trusted for
// pathCacheTTL, so a program installed meanwhile earlier on the PATH is found within seconds.
var pathCache struct {
	sync.Mutex
	m map[[2]string]pathHit // {PATH, program} → where
}

type pathHit struct {
	path string
	at   time.Time
}

const pathCacheTTL = 10 * time.Second

var pathNow = time.Now // the clock, for tests

// Redactor replaces secret values with [redacted:NAME]: the runtime's for everything it
// reports, and the engine's for everything a run writes or shows. Its zero value redacts
// nothing; it is not safe for concurrent use.
type Redactor = redactor

// Add registers a secret value under its name (a value shorter than minSecretLen is not).
func (r *redactor) Add(name, value string) { r.add(name, value) }

// Text is s with every secret value replaced.
func (r *redactor) Text(s string) string { return r.str(s) }

// Value is v with every string in it redacted (maps and lists copied, never changed).
func (r *redactor) Value(v any) any { return r.any(v) }

// redactor replaces secret values with [redacted:NAME] in everything the runtime reports.
type redactor struct {
	r *strings.Replacer
	m map[string]string // value -> name
}

// minSecretLen avoids scrubbing short values such as "1", "true" or "dev" everywhere; every
// listed value at least this long is treated as a secret (the gateway masks keys in answers
// from the same length).
const minSecretLen = gateway.MinSecretLen

func (r *redactor) add(name, value string) {
	if len(value) < minSecretLen {
		return
	}
	if r.m == nil {
		r.m = map[string]string{}
	}
	r.m[value] = name
	vals := make([]string, 0, len(r.m))
	for v := range r.m {
		vals = append(vals, v)
	}
	// Longest first so a value containing another is replaced whole.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	args := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		args = append(args, v, "[redacted:"+r.m[v]+"]")
	}
	r.r = strings.NewReplacer(args...)
}

// SecretName reports whether an environment variable's value is a secret whatever the flow
// says: a provider's API key variable, or a CLI's login token.
func SecretName(name string) bool {
	for _, vars := range gateway.KeyVars {
		if slices.Contains(vars, name) {
			return true
		}
	}
	return name == "CLAUDE_CODE_OAUTH_TOKEN"
}

// secret reports whether the spec's variable name holds a secret.
func (s *Spec) secret(name string) bool {
	return SecretName(name) || slices.Contains(s.SecretEnv, name)
}

// Redact replaces in s the values of env (NAME → secret) as an agent's reports are scrubbed:
// for text the engine keeps that more than one agent's secrets may reach (a run's task).
func Redact(env map[string]string, s string) string {
	var r redactor
	for n, v := range env {
		r.add(n, v)
	}
	return r.str(s)
}

func (r *redactor) str(s string) string {
	if r.r == nil || s == "" {
		return s
	}
	return r.r.Replace(s)
}

func (r *redactor) any(v any) any {
	if r.r == nil {
		return v
	}
	switch t := v.(type) {
	case string:
		return r.str(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = r.any(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = r.any(x)
		}
		return out
	case []string:
		out := make([]string, len(t))
		for i, x := range t {
			out[i] = r.str(x)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(t))
		for k, x := range t {
			out[k] = r.str(x)
		}
		return out
	}
	return v
}

// scrubbedError keeps errors.Is/As working while its text is scrubbed.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

func (r *redactor) err(err error) error {
	if err == nil || r.r == nil {
		return err
	}
	return &scrubbedError{msg: r.str(err.Error()), err: err}
}
