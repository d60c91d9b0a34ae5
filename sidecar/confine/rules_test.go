package confine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// world is a workspace with two agents' sandboxes, a HOME with secrets and tool folders, and
// a toolchain on PATH.
type world struct {
	ws, home, tool, own, other string
}

func newWorld(t *testing.T) world {
	t.Helper()
	root := t.TempDir()
	w := world{ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), tool: filepath.Join(root, "opt", "node")}
	w.own = filepath.Join(w.ws, ".agentcanvas", "sandboxes", "r1", "a")
	w.other = filepath.Join(w.ws, ".agentcanvas", "sandboxes", "r1", "b")
	for _, d := range []string{
		filepath.Join(w.own, "input"), filepath.Join(w.own, "work"), filepath.Join(w.other, "work"),
		filepath.Join(w.ws, ".agentcanvas", "sandboxes", "r0", "a", "work"), filepath.Join(w.ws, ".agentcanvas", "flows"),
		filepath.Join(w.ws, "src"), filepath.Join(w.ws, ".git"),
		filepath.Join(w.home, ".ssh"), filepath.Join(w.home, ".aws"), filepath.Join(w.home, ".config", "gcloud"),
		filepath.Join(w.home, ".config", "other"), filepath.Join(w.home, ".local", "bin"), filepath.Join(w.home, ".claude"),
		filepath.Join(w.home, "go", "bin"), filepath.Join(w.home, "go", "pkg", "mod"), filepath.Join(w.home, "Documents"),
		filepath.Join(w.tool, "bin"), filepath.Join(w.ws, "agents"),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(w.ws, "README.md"), filepath.Join(w.ws, "agents", "judge.sh"), filepath.Join(w.home, "script.sh")} {
		if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// cliHome is agent's private CLI home in run r1's state, made.
func (w world) cliHome(agent string) string {
	d := filepath.Join(w.ws, ".agentcanvas", "runs", "r1", "homes", agent, "claude")
	if err := os.MkdirAll(d, 0o700); err != nil {
		panic(err)
	}
	return d
}

func (w world) env(extra ...string) []string {
	return append([]string{"HOME=" + w.home, "PATH=" + strings.Join([]string{filepath.Join(w.tool, "bin"), filepath.Join(w.home, ".local", "bin"), filepath.Join(w.home, "go", "bin"), "/usr/bin"}, ":")}, extra...)
}

// allows reports whether the policy lets access reach path (some rule covers it with at
// least that access).
func allows(p Policy, a Access, path string) bool {
	for _, r := range p.Rules {
		if !within(path, r.Path) {
			continue
		}
		switch {
		case r.Access == a, r.Access == Write && a != Device, r.Access == Device && a == Read:
			return true
		case r.Access == List && a == List && path == r.Path:
			return true
		}
	}
	return false
}

// The rules of a worker: its work/ and TMPDIR writable, its input/ and the toolchains
// readable, and nothing of HOME's secrets, the workspace or another sandbox.
func TestBuildWorker(t *testing.T) {
	w := newWorld(t)
	tmp := t.TempDir()
	p := Build(Agent{Backend: "claude", Workspace: w.ws, Sandbox: w.own, Tmp: tmp, Env: w.env(), Dir: filepath.Join(w.own, "work"), Home: w.cliHome("a"),
		Executable: "/usr/bin/bash", Command: []string{"bash", filepath.Join(w.ws, "agents", "judge.sh"), filepath.Join(w.home, "script.sh")}})
	for _, c := range []struct {
		a    Access
		path string
		want bool
	}{
		{Write, filepath.Join(w.own, "work", "x"), true},
		{Write, filepath.Join(tmp, "x"), true},
		{Read, filepath.Join(w.own, "input", "x"), true},
		{Write, filepath.Join(w.own, "input", "x"), false},
		{Write, filepath.Join(w.own, "proposal"), false},
		{Read, filepath.Join(w.other, "work", "x"), false},
		{Read, filepath.Join(w.ws, ".agentcanvas", "sandboxes", "r0", "a", "work"), false},
		{Read, filepath.Join(w.ws, "README.md"), false},
		{Write, w.ws, false},
		{Read, filepath.Join(w.ws, "agents", "judge.sh"), true}, // the script its command names
		{Read, filepath.Join(w.ws, "agents", "lib.sh"), true},   // and its folder, in the workspace
		{Read, filepath.Join(w.home, "script.sh"), true},        // a script outside: the file only
		{Read, filepath.Join(w.home, "other.sh"), false},
		{Read, filepath.Join(w.home, ".ssh", "id_rsa"), false},
		{Read, filepath.Join(w.home, ".aws", "credentials"), false},
		{Read, filepath.Join(w.home, ".config", "gcloud", "x"), false},
		{Read, filepath.Join(w.home, ".config", "other", "x"), false},
		{Read, filepath.Join(w.home, "Documents", "x"), false},
		{Write, filepath.Join(w.cliHome("a"), "settings.json"), true},     // its private CLI home
		{Read, filepath.Join(w.cliHome("b"), ".credentials.json"), false}, // another agent's
		{Read, filepath.Join(w.ws, ".agentcanvas", "runs", "r1", "state.json"), false},
		{Write, filepath.Join(w.home, ".claude", "settings.json"), false}, // the user's own CLI settings
		{Read, filepath.Join(w.home, ".claude", ".credentials.json"), false},
		{Write, filepath.Join(w.home, ".claude.json"), false},
		{Write, filepath.Join(w.home, ".bashrc"), false},
		{Read, filepath.Join(w.tool, "lib", "node_modules", "x"), true}, // the toolchain a bin folder is in
		{Read, filepath.Join(w.home, ".local", "bin", "x"), true},       // a bin folder in HOME: itself only
		{Read, filepath.Join(w.home, ".local", "share", "x"), false},
		{Read, filepath.Join(w.home, "go", "bin", "x"), true},
		{Read, filepath.Join(w.home, "go", "pkg", "mod", "x"), true}, // Go's module cache
		{Write, filepath.Join(w.home, "go", "pkg", "mod", "x"), false},
		{Read, "/usr/lib/x", true},
		{Read, "/etc/passwd", true},
		{Write, "/etc/x", false},
		{Write, "/tmp/x", false},
		{Device, "/dev/null", true},
		// The devices are a list: no terminal, no disk, no shared memory, no /dev to list.
		{Device, "/dev/ptmx", false},
		{Device, "/dev/tty", false},
		{Device, "/dev/pts/0", false},
		{Read, "/dev/sda", false},
		{Read, "/dev/mem", false},
		{Read, "/dev", false},
		{Write, "/dev/shm/x", false},
		{Read, "/dev/shm/x", false},
		{Write, "/dev/mqueue/x", false},
	} {
		if got := allows(p, c.a, c.path); got != c.want {
			t.Errorf("%s %s: allowed %v, want %v\n%s", c.a, c.path, got, c.want, p)
		}
	}
	if p.DenyNetwork {
		t.Error("the network is denied without network none")
	}
}

// A role that runs in the workspace reads it, all but the sandboxes and the runs' state
// (names are listable), and writes none of it but its private CLI home.
func TestBuildWorkspaceRole(t *testing.T) {
	w := newWorld(t)
	p := Build(Agent{Backend: "codex", Workspace: w.ws, InWorkspace: true, Env: w.env(), Dir: w.ws, Home: w.cliHome("a")})
	for _, c := range []struct {
		a    Access
		path string
		want bool
	}{
		{Read, filepath.Join(w.ws, "README.md"), true},
		{Read, filepath.Join(w.ws, "src", "a.go"), true},
		{Read, filepath.Join(w.ws, ".git", "HEAD"), true},
		{Read, filepath.Join(w.ws, ".agentcanvas", "flows", "f.yaml"), true},
		{List, w.ws, true},
		{Read, filepath.Join(w.own, "work", "x"), false},
		{Read, filepath.Join(w.other, "work", "x"), false},
		{Write, filepath.Join(w.ws, "README.md"), false},
		{Write, filepath.Join(w.ws, "src", "new.go"), false},
		{Write, filepath.Join(w.home, ".codex", "x"), false}, // the user's own: never
		{Write, filepath.Join(w.cliHome("a"), "config.toml"), true},
		{Read, filepath.Join(w.cliHome("b"), "auth.json"), false},
		{Read, filepath.Join(w.ws, ".agentcanvas", "runs", "r1", "state.json"), false},
	} {
		if got := allows(p, c.a, c.path); got != c.want {
			t.Errorf("%s %s: allowed %v, want %v\n%s", c.a, c.path, got, c.want, p)
		}
	}
}

// Whatever the inputs name, no rule reaches a secret store or covers HOME, and no write
// reaches the workspace outside the agent's own sandbox.
func TestBuildNeverAllowsSecrets(t *testing.T) {
	w := newWorld(t)
	bad := []string{w.home, filepath.Join(w.home, ".ssh"), filepath.Join(w.home, ".config"), filepath.Dir(w.home), "/", w.ws,
		filepath.Join(w.ws, ".agentcanvas"), filepath.Join(w.other, "work")}
	for _, ws := range []string{w.ws, w.home} { // a workspace that is HOME itself
		p := Build(Agent{Backend: "gemini", Workspace: ws, InWorkspace: true, Sandbox: w.own, Tmp: w.home, Env: w.env(
			"PATH="+strings.Join(bad, ":")+":"+filepath.Join(w.home, ".ssh", "bin"), "SSL_CERT_FILE="+filepath.Join(w.home, ".ssh", "id_rsa"),
			"GEMINI_CLI_HOME="+w.home, "GOMODCACHE="+filepath.Join(w.home, ".aws")),
			Executable: filepath.Join(w.home, ".ssh", "id_rsa"), Command: append([]string{"x"}, bad...)})
		for _, r := range p.Rules {
			for _, s := range SecretStores {
				secret := filepath.Join(w.home, s)
				if within(r.Path, secret) || within(secret, r.Path) && r.Access != List {
					t.Errorf("workspace %s: rule %s %s reaches %s", ws, r.Access, r.Path, secret)
				}
			}
			if within(w.home, r.Path) && r.Access != List {
				t.Errorf("workspace %s: rule %s %s covers HOME", ws, r.Access, r.Path)
			}
			if r.Access == Write && within(r.Path, w.ws) && !within(r.Path, w.own) {
				t.Errorf("workspace %s: rule %s %s writes the workspace", ws, r.Access, r.Path)
			}
			if within(r.Path, filepath.Join(ws, ".agentcanvas", "sandboxes")) && !within(r.Path, w.own) {
				t.Errorf("workspace %s: rule %s %s reaches another sandbox", ws, r.Access, r.Path)
			}
			if r.Path == "/" {
				t.Errorf("a rule for /")
			}
		}
		if ws == w.home && !allows(p, Read, filepath.Join(w.home, "Documents", "x")) {
			t.Errorf("a workspace that is HOME: its visible folders are not readable\n%s", p)
		}
	}
}

// A link that leads into a secret store is refused like the store: in the workspace a role
// reads, on PATH, or named by the command.
func TestBuildResolvesLinks(t *testing.T) {
	w := newWorld(t)
	for link, target := range map[string]string{
		filepath.Join(w.ws, "docs"):          filepath.Join(w.home, ".ssh"),
		filepath.Join(w.ws, "notes.txt"):     filepath.Join(w.home, ".aws", "credentials"),
		filepath.Join(w.ws, "other"):         filepath.Join(w.other, "work"),
		filepath.Join(w.tool, "evil"):        filepath.Join(w.home, ".aws"),
		filepath.Join(w.ws, "agents", "key"): filepath.Join(w.home, ".ssh", "id_rsa"),
	} {
		if err := os.WriteFile(target, []byte("x"), 0o600); err != nil && !os.IsExist(err) && !strings.Contains(err.Error(), "is a directory") {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	p := Build(Agent{Backend: "command", Workspace: w.ws, InWorkspace: true, Env: w.env("PATH=" + filepath.Join(w.tool, "evil")),
		Executable: "/usr/bin/bash", Command: []string{"bash", filepath.Join(w.ws, "agents", "key")}})
	for _, r := range p.Rules {
		for _, bad := range []string{filepath.Join(w.home, ".ssh"), filepath.Join(w.home, ".aws"), w.other} {
			if within(r.Path, bad) || within(r.Path, filepath.Join(w.ws, "docs")) {
				t.Errorf("rule %s %s reaches %s through a link", r.Access, r.Path, bad)
			}
		}
	}
	if !allows(p, Read, filepath.Join(w.ws, "README.md")) {
		t.Errorf("the workspace's own files are not readable\n%s", p)
	}
}

// Rules another rule already grants are left out.
func TestMinimal(t *testing.T) {
	got := minimal([]Rule{{Read, "/usr"}, {Read, "/usr/bin"}, {Read, "/usr"}, {Write, "/w"}, {Read, "/w/x"}, {List, "/w"}, {Device, "/dev/null"}, {Read, "/dev"}, {Read, "/dev/null"}, {Write, "/dev/shm"}})
	want := []Rule{{Read, "/usr"}, {Write, "/w"}, {Device, "/dev/null"}, {Read, "/dev"}, {Write, "/dev/shm"}}
	if !slices.Equal(got, want) {
		t.Errorf("minimal = %v, want %v", got, want)
	}
}

// network none is carried by the policy.
func TestBuildNetworkNone(t *testing.T) {
	if p := Build(Agent{Backend: "command", DenyNetwork: true}); !p.DenyNetwork {
		t.Error("DenyNetwork lost")
	}
}

// A read-only agent writes nothing but its TMPDIR and private CLI home: not its work/, not
// /dev/shm.
func TestBuildReadOnly(t *testing.T) {
	w := newWorld(t)
	tmp := t.TempDir()
	p := Build(Agent{Backend: "codex", Workspace: w.ws, Sandbox: w.own, Tmp: tmp, Env: w.env(), Dir: filepath.Join(w.own, "work"), Home: w.cliHome("a"), ReadOnly: true})
	for _, c := range []struct {
		a    Access
		path string
		want bool
	}{
		{Read, filepath.Join(w.own, "work", "x"), true},
		{Write, filepath.Join(w.own, "work", "x"), false},
		{Write, "/dev/shm/x", false},
		{Write, filepath.Join(tmp, "x"), true},
		{Write, filepath.Join(w.cliHome("a"), "x"), true},
		{Device, "/dev/null", true},
	} {
		if got := allows(p, c.a, c.path); got != c.want {
			t.Errorf("%s %s: allowed %v, want %v\n%s", c.a, c.path, got, c.want, p)
		}
	}
}

func TestPolicyEncoding(t *testing.T) {
	p := Policy{Rules: []Rule{{Read, "/usr"}, {Write, "/tmp/a b"}, {List, "/w"}, {Device, "/dev/null"}}, DenyNetwork: true, Required: true}
	back, err := Decode(p.Encode())
	if err != nil || !slices.Equal(back.Rules, p.Rules) || !back.DenyNetwork || !back.Required {
		t.Errorf("round trip: %+v %v", back, err)
	}
	for _, bad := range [][]string{{"x/usr"}, {"rrelative"}, {"r/a/../b"}, {"+network=all"}, {"r"}} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeAuto, "auto": ModeAuto, "required": ModeRequired, "off": ModeOff} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("on"); err == nil || !strings.Contains(err.Error(), "auto, required, off") {
		t.Errorf("ParseMode(on): %v", err)
	}
}

// BenchmarkBuild: one turn's policy, from this machine's PATH and a workspace role's view.
func BenchmarkBuild(b *testing.B) {
	ws := b.TempDir()
	for _, d := range []string{"src", "docs", ".git", ".agentcanvas/sandboxes/r/a/work"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	a := Agent{Backend: "claude", Workspace: ws, InWorkspace: true, Tmp: b.TempDir(), Env: os.Environ(), Executable: "/usr/bin/bash", Command: []string{"bash", "-c", "true"}}
	for b.Loop() {
		Build(a)
	}
}
