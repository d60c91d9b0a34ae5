package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// NetworkNone is runtime.network's value that denies an agent TCP connect and bind.
const NetworkNone = "none"

// confinement is how an agent's turns are confined (see sidecar/confine): decided once, when
// the agent starts, and applied to each turn's process by the guardian.
type confinement struct {
	abi      int
	required bool   // a turn the kernel cannot confine is not started
	tmp      string // the agent's private TMPDIR (agentTemp)
	ownTmp   bool   // tmp is this Process's own, removed when it is finished
	agent    confine.Agent
	// homeEnv points a CLI at its private home (clihome.go); nil for command agents.
	homeEnv map[string]string
	connect []uint16       // the only TCP ports the agent may connect to (gateway_env.go)
	shared  []confine.Rule // read grants for the sandbox's shared dependency folders
}

// minNetworkABI is the first Landlock ABI that restricts TCP.
const minNetworkABI = 4

// newConfinement decides how the agent is confined: nil with no error when it runs
// unconfined (Confine off or empty, a dry-run agent, or auto on a kernel without Landlock),
// an error when Confine is required and the kernel cannot do what the spec asks. warnings are
// for the agent's event stream.
func newConfinement(s *Spec, backend, dir string, env []string) (c *confinement, warnings []string, err error) {
	mode := s.Confine
	if mode == "" || mode == confine.ModeOff || backend == BackendDryRun {
		if s.Network == NetworkNone && backend != BackendDryRun {
			warnings = append(warnings, "runtime.network none is not enforced: agent confinement is off")
		}
		return nil, warnings, nil
	}
	st := confine.Probe()
	required := mode == confine.ModeRequired
	if !st.Available() {
		if required {
			return nil, nil, fmt.Errorf("confinement is required, but agents cannot be confined here: %s", st.Reason)
		}
		if s.Network == NetworkNone {
			warnings = append(warnings, "runtime.network none is not enforced: "+st.String())
		}
		return nil, warnings, nil
	}
	if s.Network == NetworkNone && st.ABI < minNetworkABI {
		msg := fmt.Sprintf("runtime.network none needs Landlock ABI %d (Linux 6.7) to refuse TCP; this kernel has ABI %d", minNetworkABI, st.ABI)
		if required {
			return nil, nil, fmt.Errorf("confinement is required: %s", msg)
		}
		warnings = append(warnings, msg+": the agent keeps its network")
	}
	tmp, own, err := agentTemp(s.RunID, s.AgentID)
	if err != nil {
		return nil, nil, fmt.Errorf("confinement: private temporary folder: %w", err)
	}
	sandbox := ""
	if s.SandboxWork != "" {
		sandbox = filepath.Dir(s.SandboxWork) // the sandbox layout: <agent>/{input,work,proposal}
	}
	c = &confinement{abi: st.ABI, required: required || selfSandboxed(backend), tmp: tmp, ownTmp: own, agent: confine.Agent{
		Backend:     backend,
		Workspace:   s.Workspace,
		InWorkspace: s.CwdMode != CwdAgentHome,
		Sandbox:     sandbox,
		Tmp:         tmp,
		Dir:         dir,
		DenyNetwork: s.Network == NetworkNone,
		ReadOnly:    readOnlyAgent(s, backend),
		UnixSockets: UnixSocketGrants(s.Workspace, s.UnixSockets),
		Hidden:      s.Hidden,
	}, connect: s.gatewayPorts(), shared: sharedReads(s.SharedFolders)}
	warnings = append(warnings, unixSocketWarnings(c.agent.UnixSockets)...)
	if _, ok := cliHomeVars[backend]; ok {
		home := cliHomeDir(s, backend, tmp)
		if c.homeEnv, err = prepareCLIHome(backend, home, s.RunID, env); err != nil {
			c.remove()
			return nil, nil, fmt.Errorf("confinement: private %s home %s: %w", backend, home, err)
		}
		c.agent.Home = home
	}
	return c, warnings, nil
}

// UnixSocketGrants are runtime.unixSockets' paths made absolute: a relative one is the
// workspace's.
func UnixSocketGrants(workspace string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(workspace, filepath.FromSlash(p))
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// unixSocketWarnings say what a confined agent's Unix sockets are: a grant opens every
// pathname socket (the filter cannot see paths), and where the filter cannot be installed
// none is refused.
func unixSocketWarnings(grants []string) []string {
	switch {
	case len(grants) > 0:
		return []string{fmt.Sprintf("runtime.unixSockets grants %s: the agent may connect to every pathname Unix socket your user can (the kernel's filter can only allow or refuse Unix sockets as a whole)", strings.Join(grants, ", "))}
	case !confine.FilterSupported():
		return []string{fmt.Sprintf("Unix sockets are not restricted on %s: the agent may connect to every pathname Unix socket your user can", goruntime.GOARCH)}
	}
	return nil
}

// readOnlyAgent reports whether a CLI agent's role or mode makes it read-only: a read-only
// role (Spec.Access) that the flow does not override, Claude Code's plan mode, Codex's
// read-only sandbox, the Gemini CLI's default (or plan) approval mode. Its rules then allow
// writes to its TMPDIR and private CLI home only: a confined codex runs with its own sandbox
// off, and a CLI's tool list is no boundary. Extra arguments that set the mode again are the
// flow's: they count.
func readOnlyAgent(s *Spec, backend string) bool {
	switch backend {
	case BackendClaude:
		return !hasArg(s.ExtraArgs, "--permission-mode", "--dangerously-skip-permissions") &&
			(claudeMode(s) == "plan" || s.PermissionMode == "" && s.Access == AccessReadOnly)
	case BackendCodex:
		return !hasArg(s.ExtraArgs, "--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox") && codexSandbox(s) == "read-only"
	case BackendGemini:
		mode := geminiApproval(s)
		return !hasArg(s.ExtraArgs, "--approval-mode", "--yolo", "-y") && (mode == "" || mode == "default" || mode == "plan")
	}
	return false // a command agent has no permission mode: its role sets none either
}

// hasArg reports whether args hold any of the flags (alone or as --flag=value).
func hasArg(args []string, flags ...string) bool {
	for _, a := range args {
		for _, f := range flags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return true
			}
		}
	}
	return false
}

// selfSandboxed backends give up a sandbox of their own when confined (codex: see
// codexBackend.argv), so they must never run unconfined instead.
func selfSandboxed(backend string) bool { return backend == BackendCodex }

// env is what a confined turn's environment changes: TMPDIR, XDG_CACHE_HOME (go, pip and
// most tools) and npm's cache (npx, MCP servers started with it) point into the private
// temporary folder, and a CLI's home variable to its private home. HOME's own caches are not writable, and must not be: a poisoned build
// cache would reach the user's next build.
func (c *confinement) env() map[string]string {
	env := map[string]string{"TMPDIR": c.tmp, "XDG_CACHE_HOME": filepath.Join(c.tmp, ".cache"), "npm_config_cache": filepath.Join(c.tmp, ".npm")}
	for k, v := range c.homeEnv {
		env[k] = v
	}
	return env
}

// policy is the rules of one turn: its program, command line and environment.
func (c *confinement) policy(path string, argv, env []string) confine.Policy {
	a := c.agent
	a.Executable, a.Env = path, env
	if a.Backend == BackendCommand {
		a.Command = argv // the flow's runtime.command; a CLI's arguments hold the prompt
	}
	p := confine.Build(a)
	p.Rules = append(p.Rules, c.shared...)
	p.Required = c.required
	p.ConnectPorts = c.connect
	return p
}

// remove deletes the private temporary folder once the agent is finished, when it is the
// Process's own.
func (c *confinement) remove() {
	if c != nil && c.ownTmp {
		_ = os.RemoveAll(c.tmp)
	}
}

// agentTemps are the private temporary folders of the agents of runs going on, by run and
// agent: made at an agent's first turn in a run and kept for its later ones (the engine
// starts a Process a turn, and making and removing a folder a turn was most of what
// confinement cost), until RemoveTemp at the run's end. An agent with no RunID gets a folder
// of its own, removed with its Process.
var agentTemps struct {
	sync.Mutex
	m map[[2]string]string
}

func agentTemp(runID, agentID string) (dir string, own bool, err error) {
	if runID == "" {
		dir, err = os.MkdirTemp("", "agentcanvas-"+tmpName(agentID)+"-")
		return dir, true, err
	}
	key := [2]string{runID, agentID}
	agentTemps.Lock()
	defer agentTemps.Unlock()
	if dir, ok := agentTemps.m[key]; ok {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir, false, nil
		}
	}
	dir, err = os.MkdirTemp("", "agentcanvas-"+tmpName(runID)+"-"+tmpName(agentID)+"-")
	if err != nil {
		return "", false, err
	}
	if agentTemps.m == nil {
		agentTemps.m = map[[2]string]string{}
	}
	agentTemps.m[key] = dir
	return dir, false, nil
}

// RemoveTemp removes the private temporary folders of a run's agents: the engine calls it
// when the run has ended.
func RemoveTemp(runID string) {
	agentTemps.Lock()
	var dirs []string
	for k, dir := range agentTemps.m {
		if k[0] == runID {
			dirs = append(dirs, dir)
			delete(agentTemps.m, k)
		}
	}
	agentTemps.Unlock()
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
	removeLogins(runID)
	dismissGuardians(runID) // their worlds' /tmp, /dev/shm and message queues go with them
}

// noWorldWarning starts the warning of a turn whose world could not be made.
const noWorldWarning = "agents get no world of their own from now on (their rules and system-call filter still apply): "

var tmpNameRE = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func tmpName(id string) string {
	id = tmpNameRE.ReplaceAllString(id, "_")
	if len(id) > 40 {
		id = id[:40]
	}
	return strings.Trim(id, ".")
}

// maxDenialsPerTurn bounds the denial events of one turn: an agent retrying in a loop would
// otherwise fill the log with the same refusal.
const maxDenialsPerTurn = 20

// denials turns what a confined agent reports of refused accesses (stderr lines, failed tool
// results) into EventDenied events, up to maxDenialsPerTurn a turn. The stderr reader and the
// supervisor both scan.
type denials struct {
	mu   sync.Mutex
	turn int
	n    int
}

func (d *denials) scan(turn int, text string) []Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	if turn != d.turn {
		d.turn, d.n = turn, 0
	}
	var out []Event
	for _, line := range strings.Split(text, "\n") {
		path, ok := confine.DeniedPath(line)
		if !ok {
			continue
		}
		d.n++
		switch {
		case d.n <= maxDenialsPerTurn:
			out = append(out, Event{Kind: EventDenied, Turn: turn, Text: path, Reason: truncate(strings.TrimSpace(line), 400)})
		case d.n == maxDenialsPerTurn+1:
			out = append(out, Event{Kind: EventDenied, Turn: turn, Reason: fmt.Sprintf("more than %d refused accesses in this turn; the rest are not reported", maxDenialsPerTurn)})
		}
	}
	return out
}
