//go:build linux

package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// confinedWorld is a workspace with two agents' sandboxes and a throwaway HOME holding a key.
type confinedWorld struct {
	ws, home, run string
	sandbox       map[string]string // agent → its sandbox folder
}

func newConfinedWorld(t *testing.T) confinedWorld {
	t.Helper()
	w := confinedWorld{ws: t.TempDir(), home: t.TempDir(), run: "run_" + t.Name(), sandbox: map[string]string{}}
	t.Cleanup(func() { RemoveTemp(w.run) })
	for _, a := range []string{"a", "b"} {
		dir := filepath.Join(w.ws, ".agentcanvas", "sandboxes", w.run, a)
		for _, sub := range []string{"input", "work", "proposal"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		w.sandbox[a] = dir
	}
	if err := os.MkdirAll(filepath.Join(w.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.home, ".ssh", "id_test"), []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// spec is a confined command agent running script in agent's sandbox.
func (w confinedWorld) spec(agent, script string) Spec {
	return Spec{RunID: w.run, AgentID: agent, Role: "worker", BackendID: BackendCommand, Command: []string{"bash", "-c", script},
		Workspace: w.ws, CwdMode: CwdAgentHome, SandboxWork: filepath.Join(w.sandbox[agent], "work"),
		Env: map[string]string{"HOME": w.home}, Confine: confine.ModeAuto}
}

// A confined command worker is refused every write outside its work/ folder and TMPDIR, and
// the read of a key under HOME; each refusal is an ordinary error for it, and it goes on to
// write in work/. Without a world, each is EACCES, reported as a denied event naming the
// path; in a world, what it was not given is not there (ENOENT) and the folders around what
// it was given are read-only (EROFS, reported the same way).
func TestConfinedWorkerRefusedOutsideItsSandbox(t *testing.T) {
	confinetest.Landlock(t)
	inWorlds(t, func(t *testing.T, world bool) {
		w := newConfinedWorld(t)
		etc := fmt.Sprintf("/etc/agentcanvas-confine-test-%d", os.Getpid())
		t.Cleanup(func() { os.Remove(etc) }) // in case the test fails by writing it
		other := filepath.Join(w.sandbox["b"], "work", "planted.txt")
		script := strings.Join([]string{
			`try() { if eval "$1" 2>/dev/null; then echo "ALLOWED $2"; else echo "REFUSED $2"; fi; }`,
			`echo root > ` + w.ws + `/root.txt`,
			`echo other > ` + other,
			`echo ssh > $HOME/.ssh/x`,
			`echo etc > ` + etc,
			`cat $HOME/.ssh/id_test`,
			`try "echo ws > ` + w.ws + `/root.txt" workspace`,
			`try "cat $HOME/.ssh/id_test" key`,
			`echo ok > ok.txt && echo "WROTE work"`,
			`echo t > "$TMPDIR/t" && echo "WROTE tmp $TMPDIR"`,
		}, "\n")
		evs, res := drain(t, start(t, w.spec("a", script), ""), nil)
		if res.Status != StatusCompleted {
			t.Fatalf("%s: %s", res.Status, res.Reason)
		}
		for _, want := range []string{"REFUSED workspace", "REFUSED key", "WROTE work", "WROTE tmp"} {
			if !strings.Contains(res.Reply, want) {
				t.Errorf("reply lacks %q:\n%s", want, res.Reply)
			}
		}
		if strings.Contains(res.Reply, "PRIVATE KEY") {
			t.Error("the agent read the key under HOME")
		}
		for _, p := range []string{filepath.Join(w.ws, "root.txt"), other, filepath.Join(w.home, ".ssh", "x"), etc} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s exists: the write was not refused", p)
			}
		}
		if b, err := os.ReadFile(filepath.Join(w.sandbox["a"], "work", "ok.txt")); err != nil || string(b) != "ok\n" {
			t.Errorf("work/ok.txt = %q, %v", b, err)
		}
		var denied []string
		for _, ev := range ofKind(evs, EventDenied) {
			denied = append(denied, ev.Text)
		}
		deniedFor := []string{filepath.Join(w.ws, "root.txt"), other, "/etc/", filepath.Join(w.home, ".ssh", "id_test")}
		if world {
			deniedFor = []string{filepath.Join(w.ws, "root.txt"), "/etc/"} // the rest is not there
		}
		for _, p := range deniedFor {
			if !slices.ContainsFunc(denied, func(d string) bool {
				return strings.HasPrefix(d, p) || strings.Contains(d, "/.ssh/x") && strings.Contains(p, "/.ssh/")
			}) {
				t.Errorf("no denied event for %s; denied: %q", p, denied)
			}
		}
		// The private TMPDIR is kept for the agent's next turn in the run, and removed with the
		// run.
		tmp := ""
		for _, l := range strings.Split(res.Reply, "\n") {
			if s, ok := strings.CutPrefix(l, "WROTE tmp "); ok {
				tmp = s
			}
		}
		if tmp == "" || filepath.Dir(tmp) != filepath.Clean(os.TempDir()) {
			t.Fatalf("TMPDIR %q is not a private folder in %s", tmp, os.TempDir())
		}
		_, res = drain(t, start(t, w.spec("a", `cat "$TMPDIR/t" && echo "$TMPDIR"`), ""), nil)
		if res.Reply != "t\n"+tmp+"\n" {
			t.Errorf("the agent's next turn: %q, want its TMPDIR %s with t in it", res.Reply, tmp)
		}
		RemoveTemp(w.run)
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Errorf("the private TMPDIR %s outlived its run (%v)", tmp, err)
		}
	})
}

// The guardian that starts a confined turn is not confined itself, and it starts no other
// kind: the agent's unconfined turn goes through a guardian of its own, and writes where it
// likes. Another agent gets a guardian of its own (one never holds two agents' environments)
// and its own rules only (agent b writes its work/, not a's).
func TestGuardianTurnsConfinedApart(t *testing.T) {
	confinetest.Landlock(t)
	w := newConfinedWorld(t)
	ppid := func(s Spec) (string, string) {
		t.Helper()
		_, res := drain(t, start(t, s, ""), nil)
		if res.Status != StatusCompleted {
			t.Fatalf("%s: %s", res.Status, res.Reason)
		}
		f := strings.Fields(res.Reply)
		if len(f) < 2 {
			t.Fatalf("reply %q", res.Reply)
		}
		return f[0], f[1]
	}
	aWork := filepath.Join(w.sandbox["a"], "work")
	g1, r1 := ppid(w.spec("a", `echo $PPID; echo a > mine.txt && echo wrote`))
	g2, r2 := ppid(w.spec("b", `echo $PPID; echo b > mine.txt && echo b > `+aWork+`/from-b.txt && echo wrote || echo refused`))
	free := w.spec("a", `echo $PPID; echo free > `+w.ws+`/free.txt && echo wrote`)
	free.Confine = confine.ModeOff
	g3, r3 := ppid(free)
	// a's confined turn has a guardian of confined turns (filtered itself, in a world when
	// there are worlds), its unconfined one another.
	if g1 == g3 || g1 == g2 {
		t.Errorf("turns under guardians %s (a), %s (b), %s (a): want three", g1, g2, g3)
	}
	if r1 != "wrote" || r2 != "refused" || r3 != "wrote" {
		t.Errorf("turn results %q %q %q, want wrote refused wrote", r1, r2, r3)
	}
	if _, err := os.Stat(filepath.Join(w.sandbox["b"], "work", "mine.txt")); err != nil {
		t.Errorf("b could not write its own work/: %v", err)
	}
	if _, err := os.Stat(filepath.Join(aWork, "from-b.txt")); err == nil {
		t.Error("b wrote into a's work/")
	}
}

// runtime.network none: a confined command agent's TCP connect to a loopback listener is
// refused (the listener sees no connection); without it, the same connect goes through.
func TestConfinedNetworkNone(t *testing.T) {
	if confinetest.Landlock(t) < minNetworkABI {
		t.Skipf("Landlock ABI %d cannot restrict TCP", confine.Probe().ABI)
	}
	port, accepted := confinetest.Listener(t)
	w := newConfinedWorld(t)
	connect := `if exec 3<>/dev/tcp/127.0.0.1/` + port + `; then echo CONNECTED; else echo REFUSED; fi`
	s := w.spec("a", connect)
	s.Network = NetworkNone
	evs, res := drain(t, start(t, s, ""), nil)
	if !strings.Contains(res.Reply, "REFUSED") {
		t.Errorf("with network none: %q", res.Reply)
	}
	if len(ofKind(evs, EventDenied)) == 0 {
		t.Errorf("no denied event; stderr: %v", ofKind(evs, EventStderr))
	}
	select {
	case <-accepted:
		t.Error("the listener accepted a connection from an agent with network none")
	default:
	}
	_, res = drain(t, start(t, w.spec("a", connect), ""), nil)
	if !strings.Contains(res.Reply, "CONNECTED") {
		t.Errorf("with the network on: %q", res.Reply)
	}
	<-accepted
}

// On a kernel without Landlock (simulated), required refuses to start an agent, saying why;
// auto starts it unconfined, and says so when the flow asked for network none.
func TestConfinementWithoutLandlock(t *testing.T) {
	t.Setenv(confine.NoLandlockEnv, "1")
	w := newConfinedWorld(t)
	s := w.spec("a", `echo hi`)
	s.Confine = confine.ModeRequired
	if p, err := Start(t.Context(), s, ""); err == nil {
		p.Stop("test")
		p.Wait()
		t.Fatal("a required confinement started without Landlock")
	} else if !strings.Contains(err.Error(), "required") || !strings.Contains(err.Error(), confine.NoLandlockEnv) {
		t.Errorf("error %q does not say confinement is required and why it is unavailable", err)
	}
	s.Confine, s.Network = confine.ModeAuto, NetworkNone
	evs, res := drain(t, start(t, s, ""), nil)
	if res.Status != StatusCompleted || strings.TrimSpace(res.Reply) != "hi" {
		t.Fatalf("auto: %s %q %s", res.Status, res.Reply, res.Reason)
	}
	if ws := ofKind(evs, EventWarning); len(ws) != 1 || !strings.Contains(ws[0].Reason, "network none is not enforced") {
		t.Errorf("warnings %+v", ws)
	}
}

// A confined codex agent gives up codex's own sandbox (bubblewrap cannot start under
// Landlock); an unconfined one keeps the flow's.
func TestCodexSandboxWhenConfined(t *testing.T) {
	for _, confined := range []bool{false, true} {
		a, err := codexBackend{}.argv(&Spec{AgentID: "c", CodexSandbox: "read-only", confined: confined}, turnInput{prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.Index(a, "--sandbox")
		want := "read-only"
		if confined {
			want = "danger-full-access"
		}
		if i < 0 || a[i+1] != want {
			t.Errorf("confined %v: argv %q", confined, a)
		}
	}
	if !selfSandboxed(BackendCodex) || selfSandboxed(BackendClaude) {
		t.Error("only codex must never run unconfined when its confinement fails")
	}
}

// Only a command agent's command line names files it may read: a CLI's arguments hold its
// prompt, which may be any text, a path among them.
func TestConfinementReadsCommandFilesOnly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	names := func(backend string) bool {
		c := &confinement{agent: confine.Agent{Backend: backend}}
		for _, r := range c.policy("/usr/bin/env", []string{"tool", "-p", file}, []string{"PATH=/usr/bin"}).Rules {
			if r.Path == file {
				return true
			}
		}
		return false
	}
	if names(BackendClaude) {
		t.Error("a claude agent may read the file its prompt names")
	}
	if !names(BackendCommand) {
		t.Error("a command agent may not read the script its command names")
	}
}

// Which agents get read-only rules: read-only roles and modes of the CLIs, unless the flow
// sets the mode again; never a command agent.
func TestReadOnlyAgent(t *testing.T) {
	for _, c := range []struct {
		backend string
		spec    Spec
		want    bool
	}{
		{BackendClaude, Spec{Access: AccessReadOnly}, true},
		{BackendClaude, Spec{PermissionMode: "plan"}, true},
		{BackendClaude, Spec{Access: AccessReadOnly, PermissionMode: "acceptEdits"}, false},
		{BackendClaude, Spec{Access: AccessReadOnly, ExtraArgs: []string{"--permission-mode=bypassPermissions"}}, false},
		{BackendClaude, Spec{Access: AccessEdit}, false},
		{BackendCodex, Spec{Access: AccessReadOnly}, true},
		{BackendCodex, Spec{CodexSandbox: "read-only"}, true},
		{BackendCodex, Spec{CodexSandbox: "read-only", ExtraArgs: []string{"--full-auto"}}, false},
		{BackendCodex, Spec{}, false},
		{BackendGemini, Spec{}, true},
		{BackendGemini, Spec{Access: AccessReadOnly}, true},
		{BackendGemini, Spec{GeminiApprovalMode: "plan"}, true},
		{BackendGemini, Spec{Access: AccessEdit}, false},
		{BackendGemini, Spec{Access: AccessReadOnly, ExtraArgs: []string{"--yolo"}}, false},
		{BackendCommand, Spec{Access: AccessReadOnly}, false},
	} {
		if got := readOnlyAgent(&c.spec, c.backend); got != c.want {
			t.Errorf("%s %+v: read-only %v, want %v", c.backend, c.spec, got, c.want)
		}
	}
}
