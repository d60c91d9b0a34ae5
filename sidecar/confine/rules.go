package confine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Agent is what an agent's policy is built from: one turn as the runtime starts it.
type Agent struct {
	// Backend is the resolved backend: claude, codex, gemini or command.
	Backend string
	// Workspace is the workspace root; InWorkspace says the agent runs there (cwdMode
	// workspace: orchestrators, judges), which makes the workspace readable to it.
	Workspace   string
	InWorkspace bool
	// Sandbox is the agent's sandbox folder, holding input/ and work/ ("" when it has none).
	Sandbox string
	// Tmp is its private temporary folder (its TMPDIR).
	Tmp string
	// Env is its environment: HOME, PATH and the backends' own variables are read from it.
	Env []string
	// Dir is its working folder; Executable its program, resolved.
	Dir        string
	Executable string
	// Command is the command line the flow wrote (runtime.command), whose existing files
	// (scripts) are readable; nil for the CLIs, whose arguments (the prompt) name nothing.
	Command []string
	// DenyNetwork: runtime.network none.
	DenyNetwork bool
	// UnixSockets are the socket paths runtime.unixSockets grants, absolute. Any grant leaves
	// the agent Unix sockets as a whole: the filter cannot tell one path from another.
	UnixSockets []string
	// Home is the agent's private CLI home (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME),
	// in the run's state: writable, and the only CLI state it gets. "" for command agents.
	Home string
	// ReadOnly: the agent's role or CLI mode makes it read-only, so it writes nothing but
	// its TMPDIR and Home, whatever the CLI's own flags become when confined.
	ReadOnly bool
	// Hidden are absolute paths the agent may not read even where its other grants would
	// cover them (a skill marked disable-model-invocation): kept out as other agents'
	// sandboxes are.
	Hidden []string
}

// SystemRead are the system's folders every agent may read: programs, libraries, settings,
// and the kernel's views of processes and devices. Missing ones are skipped. Not /dev: its
// disks, terminals and the rest are devices, allowed one by one (SystemDevices).
var SystemRead = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/nix/store", "/snap", "/proc", "/sys"}

// SystemDevices are the only device files an agent may open (read, write and ioctl): the
// harmless ones. Not /dev/tty (an agent has no controlling terminal), /dev/pts (the person's
// terminals) or /dev/ptmx (the system's pseudo-terminals: in a world an agent has a devpts of
// its own, WorldRules), not /dev/shm (shared with every process of the user: a world has its
// own), no disk.
var SystemDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// SecretStores are HOME-relative places where credentials live. No agent gets any of them,
// whatever else its policy allows: a grant inside one is dropped, and a grant that would
// cover one is narrowed to leave it out.
var SecretStores = []string{".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube", ".docker",
	".netrc", ".git-credentials", ".password-store", ".config/gh", ".config/op", ".npmrc", ".pypirc",
	".vault-token", ".terraform.d", ".local/share/keyrings", ".pki"}

// RunsDir is where a workspace keeps its runs' state, the agents' private CLI homes among
// it: no agent reads or writes there, except its own home.
const RunsDir = ".agentcanvas/runs"

// StateDir is the workspace's .agentcanvas: the sidecar's state (runs, sandboxes, the
// workspace lock, the apply journal and its temporary files, the ledger, the event logs) and
// the repository's own configuration for it (RepoConfig). An agent that reads the workspace
// reads only the configuration: the lock is taken by anyone who may read it (flock), and the
// logs hold every agent's replies.
const StateDir = ".agentcanvas"

// RepoConfig are the entries of StateDir a repository keeps (docs/ci.md): flows, skills,
// memory, and the lists the person keeps for reviews and MCP servers.
var RepoConfig = []string{"flows", "skills", "memory", "control-files", "mcp-allowlist.json", ".gitignore"}

// goModCache is where the agent's go finds downloaded modules: readable, so a build in the
// sandbox works offline (downloads are refused; the build cache goes to XDG_CACHE_HOME).
func goModCache(env []string, home string) string {
	if p := Lookup(env, "GOMODCACHE"); p != "" {
		return p
	}
	if gp := filepath.SplitList(Lookup(env, "GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, "go", "pkg", "mod")
}

// Build makes an agent's policy: read the system and its toolchains, its program, its
// sandbox's input/ and (when it runs there) the workspace; write its sandbox's work/ (unless
// read-only), its TMPDIR and its private CLI home; never a secret store, the user's own CLI
// settings (HOME's hidden entries), another agent's sandbox or home, or the workspace itself.
//
// Every rule names a path with its symbolic links resolved, and the checks are made on that
// path: a link in the workspace or on PATH that leads into ~/.ssh is refused like ~/.ssh
// itself. (The guardian opens the paths refusing any link, so one made since is refused too.)
func Build(a Agent) Policy {
	b := newBuilder(a)
	for _, p := range SystemRead {
		b.add(Read, p)
	}
	for _, p := range SystemDevices {
		b.add(Device, p)
	}
	b.add(Read, "/etc/resolv.conf") // often a link into /run (systemd-resolved, resolvconf)
	for _, name := range []string{"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"} {
		for _, p := range filepath.SplitList(Lookup(a.Env, name)) {
			b.add(Read, p)
		}
	}
	b.toolchains()
	b.program()
	if a.Sandbox != "" {
		b.add(Read, filepath.Join(a.Sandbox, "input"))
		work := Write
		if a.ReadOnly {
			work = Read
		}
		b.add(work, filepath.Join(a.Sandbox, "work"))
	}
	if a.InWorkspace && a.Workspace != "" {
		b.add(Read, a.Workspace)
	}
	if a.Tmp != "" {
		b.add(Write, a.Tmp)
	}
	b.add(Read, goModCache(a.Env, b.home))
	if a.Home != "" {
		b.add(Write, a.Home)
	}
	for _, s := range a.UnixSockets {
		b.socket(s)
	}
	rules := minimal(b.rules)
	return Policy{Rules: rules, Names: granted(b.names, rules), DenyNetwork: a.DenyNetwork, AllowUnixSockets: len(a.UnixSockets) > 0}
}

type builder struct {
	a Agent
	// The places the checks keep out, resolved: HOME, the workspace, the agent's own sandbox,
	// the workspace's sandboxes (only the agent's own is allowed), the runs' state (only the
	// agent's own CLI home is allowed), the secret stores.
	home, ws, own, sandboxes string
	runs, ownHome, state     string
	secrets                  []string
	hidden                   []string
	rules                    []Rule
	names                    []string // paths added that links lead elsewhere
}

func newBuilder(a Agent) *builder {
	b := &builder{a: a, home: canonical(Lookup(a.Env, "HOME")), ws: canonical(a.Workspace), own: canonical(a.Sandbox), ownHome: canonical(a.Home)}
	if b.ws != "" {
		b.sandboxes = filepath.Join(b.ws, ".agentcanvas", "sandboxes")
		b.runs = filepath.Join(b.ws, filepath.FromSlash(RunsDir))
		b.state = filepath.Join(b.ws, StateDir)
	}
	for _, h := range a.Hidden {
		if c := canonical(h); c != "" {
			b.hidden = append(b.hidden, c)
		}
	}
	if b.home != "" {
		for _, s := range SecretStores {
			p := filepath.Join(b.home, s)
			b.secrets = append(b.secrets, p)
			if r := resolved(p); r != "" && r != p {
				b.secrets = append(b.secrets, r) // ~/.ssh may itself lead elsewhere
			}
		}
	}
	return b
}

// toolchains allows the agent's PATH: each folder on it, and the installation a bin folder
// belongs to (/usr/local/go for /usr/local/go/bin, node_modules for node_modules/.bin, an
// nvm Node version for its bin), except HOME's own top-level folders (~/.local, ~/go), of
// which only the bin folder is allowed.
func (b *builder) toolchains() {
	for _, d := range filepath.SplitList(Lookup(b.a.Env, "PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		b.add(Read, d)
		if base := filepath.Base(d); base == "bin" || base == ".bin" {
			parent := filepath.Dir(d)
			if parent != "/" && filepath.Dir(canonical(parent)) != b.home {
				b.add(Read, parent)
			}
		}
	}
}

// program allows the agent's program and the files its command line names: the resolved
// executable, the node_modules it was installed into, and each argument that is an existing
// file (a script), with the script's folder when that is inside the workspace (its helpers).
func (b *builder) program() {
	files := []string{b.a.Executable}
	for _, arg := range b.a.Command {
		if arg == "" || strings.HasPrefix(arg, "-") {
			continue
		}
		if !filepath.IsAbs(arg) {
			if !strings.Contains(arg, "/") || b.a.Dir == "" {
				continue
			}
			arg = filepath.Join(b.a.Dir, arg)
		}
		files = append(files, arg)
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		for _, p := range []string{filepath.Clean(f), resolved(f)} {
			b.add(Read, p)
			if nm := nodeModules(p); nm != "" {
				b.add(Read, nm)
			}
			if dir := filepath.Dir(p); b.ws != "" && dir != b.ws && within(dir, b.ws) {
				b.add(Read, dir)
			}
		}
	}
}

// add appends a rule for p, resolved, after the checks that keep secrets, other sandboxes
// and the workspace out of every policy: a read that would cover one of them is narrowed to
// the entries beside it; a write anywhere near them is dropped. A path that does not exist
// is left out: a rule can only name what exists.
func (b *builder) add(a Access, p string) {
	name := filepath.Clean(p)
	p = resolved(p)
	if p == "" || p == "/" {
		return
	}
	if name != p && !slices.Contains(b.names, name) {
		b.names = append(b.names, name) // kept only if a rule is: see Build
	}
	if slices.ContainsFunc(b.secrets, func(s string) bool { return within(p, s) }) {
		return
	}
	if b.sandboxes != "" && within(p, b.sandboxes) && (b.own == "" || !within(p, b.own)) {
		return
	}
	if b.runs != "" && within(p, b.runs) && !within(p, b.ownHome) {
		return
	}
	if slices.ContainsFunc(b.hidden, func(h string) bool { return within(p, h) }) {
		return
	}
	if a == Write {
		if b.ws != "" && (within(b.ws, p) || within(p, b.ws) && !within(p, b.own) && !within(p, b.ownHome)) {
			return
		}
		if b.home != "" && within(b.home, p) || slices.ContainsFunc(b.secrets, func(s string) bool { return within(s, p) }) {
			return
		}
		b.rules = append(b.rules, Rule{a, p})
		return
	}
	if b.covers(p) {
		b.narrow(a, p)
		return
	}
	b.rules = append(b.rules, Rule{a, p})
}

// socket allows the socket file at p, granted by the flow, to be seen in a world: only a
// socket, and only one that exists when the turn starts (rules name what exists).
func (b *builder) socket(p string) {
	r := resolved(p)
	if st, err := os.Stat(r); r == "" || err != nil || st.Mode().Type() != os.ModeSocket {
		return
	}
	if n := filepath.Clean(p); n != r {
		b.names = append(b.names, n)
	}
	b.rules = append(b.rules, Rule{Socket, r})
}

// covers reports whether p holds something no read may reach: HOME (and so its hidden
// files), a secret store, the sidecar's state (and so the sandboxes and CLI homes of other
// agents).
func (b *builder) covers(p string) bool {
	if b.home != "" && within(b.home, p) || b.state != "" && within(b.state, p) {
		return true
	}
	if b.sandboxes != "" && within(b.sandboxes, p) || b.runs != "" && within(b.runs, p) {
		return true
	}
	if slices.ContainsFunc(b.hidden, func(h string) bool { return within(h, p) }) {
		return true
	}
	return slices.ContainsFunc(b.secrets, func(s string) bool { return within(s, p) })
}

// narrow allows the entries of folder p one by one instead of p, leaving out what covers
// forbids, and going down into the entries that hold it. Entries created later are not
// allowed (a turn's rules are made when it starts). Names stay listable in p itself, when p
// is the workspace or in it, so an agent running there can list its working folder.
func (b *builder) narrow(a Access, p string) {
	ents, err := os.ReadDir(p)
	if err != nil {
		return
	}
	if b.ws != "" && within(p, b.ws) {
		b.rules = append(b.rules, Rule{List, p})
	}
	for _, e := range ents {
		// HOME's hidden entries are settings and state, logins among them: never as a whole.
		if p == b.home && strings.HasPrefix(e.Name(), ".") {
			continue
		}
		// Of the sidecar's folder, the repository's configuration only (its own sandbox and
		// CLI home have rules of their own).
		if p == b.state && !slices.Contains(RepoConfig, e.Name()) {
			continue
		}
		b.add(a, filepath.Join(p, e.Name())) // checked again: sandboxes dropped, secrets narrowed
	}
}

// minimal drops the rules another rule already grants: repeats, and paths beneath a rule
// that allows them at least as much (/usr/bin under /usr). Fewer rules, fewer system calls
// for every turn.
func minimal(rules []Rule) []Rule {
	out := make([]Rule, 0, len(rules))
	for i, r := range rules {
		redundant := false
		for j, by := range rules {
			if i != j && within(r.Path, by.Path) && grants(by.Access, r.Access) && (r != by || j < i) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, r)
		}
	}
	return out
}

// granted are the names that lead to a path some rule allows.
func granted(names []string, rules []Rule) []string {
	var out []string
	for _, n := range names {
		r := resolved(n)
		if slices.ContainsFunc(rules, func(rule Rule) bool { return within(r, rule.Path) }) {
			out = append(out, n)
		}
	}
	return out
}

// grants reports whether access a allows at least what b allows.
func grants(a, b Access) bool {
	switch a {
	case Write:
		return b == Write || b == Read || b == List || b == Socket
	case Device:
		return b == Device || b == Read || b == List
	case Read:
		return b == Read || b == List || b == Socket
	case List:
		return b == List
	case Socket:
		return b == Socket
	}
	return false
}

// Lookup is the value of name in env ("" when unset); the last one wins, as for exec.
func Lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			v = kv[len(name)+1:]
		}
	}
	return v
}

// canonical is p resolved, or p cleaned when it does not exist ("" when p is not absolute).
func canonical(p string) string {
	if !filepath.IsAbs(p) {
		return ""
	}
	if r := resolved(p); r != "" {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or beneath it (both clean and absolute).
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	if dir == "/" {
		return true
	}
	return strings.HasPrefix(p, dir) && (len(p) == len(dir) || p[len(dir)] == '/')
}

// resolved is the absolute path p leads to, its symbolic links followed; "" when p is not
// absolute or does not exist. Answers are kept for resolveTTL (the system's and the
// toolchains' folders are asked about for every turn); a link made meanwhile is refused by
// the guardian, which opens the paths refusing links.
func resolved(p string) string {
	if !filepath.IsAbs(p) {
		return ""
	}
	p = filepath.Clean(p)
	now := time.Now()
	resolveCache.Lock()
	hit, ok := resolveCache.m[p]
	resolveCache.Unlock()
	if ok && now.Sub(hit.at) < resolveTTL {
		return hit.path
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		r = ""
	}
	resolveCache.Lock()
	if resolveCache.m == nil || len(resolveCache.m) > maxResolveCache {
		resolveCache.m = map[string]resolveHit{} // private temporary folders come and go
	}
	resolveCache.m[p] = resolveHit{r, now}
	resolveCache.Unlock()
	return r
}

var resolveCache struct {
	sync.Mutex
	m map[string]resolveHit
}

type resolveHit struct {
	path string
	at   time.Time
}

const (
	resolveTTL      = 10 * time.Second
	maxResolveCache = 4096
)

// nodeModules is the outermost node_modules folder p is in, or "".
func nodeModules(p string) string {
	if i := strings.Index(p, "/node_modules/"); i >= 0 {
		return p[:i+len("/node_modules")]
	}
	return ""
}
