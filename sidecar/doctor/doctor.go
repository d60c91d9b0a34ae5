package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// Status of one check.
const (
	OK   = "ok"
	Warn = "warn" // works, but not as tested, or not everywhere
	Fail = "fail" // a run needing it will fail
)

// Check is one line of the report. Fix is the one command that fixes a problem.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Backend is the backendId a CLI check is about.
	Backend string `json:"backend,omitempty"`
}

// Env is what the checks read of the machine, so tests can stand in for it.
type Env struct {
	Getenv  func(string) string
	Probe   func() confine.Status
	Timeout time.Duration // for each --version; default 15 s (a CLI's first start can be slow)
}

func (e Env) withDefaults() Env {
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.Probe == nil {
		e.Probe = confine.Probe
	}
	if e.Timeout <= 0 {
		e.Timeout = 15 * time.Second
	}
	return e
}

// Run checks git, confinement and the CLIs clis (Select).
func Run(ctx context.Context, env Env, clis []CLI) []Check {
	env = env.withDefaults()
	out := []Check{gitCheck(ctx, env), confineCheck(env)}
	for _, c := range clis {
		out = append(out, cliChecks(ctx, env, c)...)
	}
	return out
}

// Select is the CLIs of backends, all of them when backends is empty.
func Select(backends []string) []CLI {
	if len(backends) == 0 {
		return CLIs
	}
	var out []CLI
	for _, c := range CLIs {
		if contains(backends, c.Backend) {
			out = append(out, c)
		}
	}
	return out
}

// Problems counts the checks that failed.
func Problems(cs []Check) int {
	n := 0
	for _, c := range cs {
		if c.Status == Fail {
			n++
		}
	}
	return n
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+`)

// version runs `program --version` on the PATH of env and returns the first x.y.z it prints.
func version(ctx context.Context, env Env, program string) (path, v string, err error) {
	path, err = lookPath(program, env.Getenv("PATH"))
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(ctx, env.Timeout)
	defer cancel()
	b, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return path, "", fmt.Errorf("%s --version: %w", program, err)
	}
	return path, versionRE.FindString(string(b)), nil
}

// lookPath finds program on PATH (the environment's, which a test may set).
func lookPath(program, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, program)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on PATH", program)
}

func gitCheck(ctx context.Context, env Env) Check {
	c := Check{Name: "git"}
	_, v, err := version(ctx, env, "git")
	switch {
	case err != nil:
		c.Status, c.Detail, c.Fix = Fail, "not found: proposals are diffs made and applied with git", installGit()
	default:
		c.Status, c.Detail = OK, "git "+v
	}
	return c
}

func installGit() string {
	if runtime.GOOS == "darwin" {
		return "xcode-select --install"
	}
	return "sudo apt-get install -y git   (or your system's package manager)"
}

func confineCheck(env Env) Check {
	c := Check{Name: "confinement"}
	st := env.Probe()
	if st.Available() {
		c.Status = OK
		c.Detail = fmt.Sprintf("Landlock ABI %d: each agent process may write only its sandbox, its temporary folder and its CLI's own state (--confine auto)", st.ABI)
		return c
	}
	c.Status = Warn
	c.Detail = fmt.Sprintf("no Landlock (%s): under --confine auto agents run unconfined, with a warning; --confine required refuses to run", st.Reason)
	if runtime.GOOS == "linux" {
		c.Fix = "boot a kernel of 5.13 or later with landlock in its lsm= list (e.g. lsm=landlock,lockdown,yama,apparmor)"
	} else {
		c.Fix = "run on Linux (5.13 or later) for confinement; elsewhere agents run unconfined"
	}
	return c
}

// cliChecks are a CLI's install, version and authentication checks.
func cliChecks(ctx context.Context, env Env, c CLI) []Check {
	inst := Check{Name: c.Program, Backend: c.Backend}
	path, v, err := version(ctx, env, c.Program)
	switch {
	case path == "":
		inst.Status, inst.Detail, inst.Fix = Fail, "not found on PATH: agents with backendId "+c.Backend+" cannot run", c.Install()
		return []Check{inst}
	case err != nil:
		inst.Status, inst.Detail, inst.Fix = Fail, fmt.Sprintf("%s does not run: %v", path, err), c.Install()
		return []Check{inst}
	case v == c.Tested:
		inst.Status, inst.Detail = OK, fmt.Sprintf("%s %s (tested)", path, v)
	default:
		inst.Status, inst.Detail, inst.Fix = Warn, fmt.Sprintf("%s %s; AgentCanvas is tested with %s (its stream format may differ)", path, firstNonEmpty(v, "of unknown version"), c.Tested), c.Install()
	}
	return []Check{inst, authCheck(env, c)}
}

// authCheck says whether c can authenticate: a key variable set, or a login file present.
// It names the variable or the file, never their contents.
func authCheck(env Env, c CLI) Check {
	a := Check{Name: c.Program + " login", Backend: c.Backend}
	for _, k := range c.KeyVars {
		if env.Getenv(k) != "" {
			a.Status, a.Detail = OK, k+" is set"
			return a
		}
	}
	for _, l := range c.Logins {
		p := loginPath(env, c, l)
		if p != "" && hasLogin(p, l.key) {
			a.Status, a.Detail = OK, "logged in ("+p+" is present)"
			return a
		}
	}
	a.Status = Fail
	a.Detail = fmt.Sprintf("no %s set and no login found", strings.Join(c.KeyVars, ", "))
	if c.Backend == "claude" && runtime.GOOS == "darwin" {
		a.Status, a.Detail = Warn, a.Detail+" (on macOS the login may be in the Keychain, which doctor does not read)"
	}
	a.Fix = c.LogIn
	return a
}

// loginPath is where l is: under the CLI's home variable when set, else under HOME.
func loginPath(env Env, c CLI, l login) string {
	if d := env.Getenv(c.HomeVar); d != "" {
		return filepath.Join(d, l.varRel)
	}
	if h := env.Getenv("HOME"); h != "" {
		return filepath.Join(h, l.rel)
	}
	return ""
}

// hasLogin: the file exists (and, for key, is a JSON object with that key set).
func hasLogin(path, key string) bool {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() || st.Size() == 0 {
		return false
	}
	if key == "" {
		return true
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	v, ok := m[key]
	return ok && string(v) != "null"
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
