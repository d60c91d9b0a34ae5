//go:build linux

package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// resetWorlds forgets what the sidecar learnt about worlds, now and when the test ends.
func resetWorlds(t *testing.T) {
	reset := func() {
		worlds.Lock()
		worlds.off = ""
		worlds.Unlock()
		worldProbe = sync.Once{}
	}
	reset()
	t.Cleanup(reset)
}

// Where the kernel refuses the namespaces (user namespaces off), or makes them but refuses
// the mounts (Ubuntu's AppArmor restriction), worlds go off for the sidecar, the run's status
// says so, and the agent runs on its Landlock rules and filter alone: still refused outside
// its sandbox.
func TestWorldRefusedTheRestHolds(t *testing.T) {
	confinetest.Landlock(t)
	for _, how := range []string{"namespaces", "mounts"} {
		t.Run(how, func(t *testing.T) {
			resetWorlds(t)
			if how == "namespaces" {
				refused := func(w *worldSpec) *syscall.SysProcAttr {
					a := worldAttr(w)
					a.Cloneflags |= syscall.CLONE_FS // with CLONE_NEWUSER: EINVAL, as a refusal would be
					return a
				}
				worldAttrFor = refused
				t.Cleanup(func() { worldAttrFor = worldAttr })
			} else {
				t.Setenv(worldMountsRefusedEnv, "1")
			}
			w := newConfinedWorld(t)
			evs, res := drain(t, start(t, w.spec("a", `echo x > `+w.ws+`/planted.txt && echo WROTE || echo REFUSED; test -d /run && echo SEES-RUN`), ""), nil)
			if !strings.Contains(res.Reply, "REFUSED") || !strings.Contains(res.Reply, "SEES-RUN") {
				t.Errorf("want the write refused by Landlock, the system visible (no world):\n%s", res.Reply)
			}
			if !strings.HasPrefix(WorldStatus(), "no world of its own") {
				t.Errorf("WorldStatus %q after the refusal", WorldStatus())
			}
			warned := slices.ContainsFunc(ofKind(evs, EventWarning), func(ev Event) bool { return strings.HasPrefix(ev.Reason, noWorldWarning) })
			if how == "mounts" && !warned {
				t.Errorf("no warning that worlds are off: %v", ofKind(evs, EventWarning))
			}
		})
	}
}

// A world holds what the agent's rules name and nothing else: no /home, /root, /run or /var,
// no file of the person's in /tmp, a /dev of the allowed devices, its private /dev/shm and
// pseudo-terminals (a devpts of its own, whose first terminal is its own /dev/pts/0); /bin still leads to /usr/bin, and its working folder and TMPDIR are the
// system's own. As root and as nobody.
func TestWorldShowsOnlyTheRules(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		if worldsOff() != "" {
			t.Skipf("no worlds here: %s", worldsOff())
		}
		canary, err := os.CreateTemp("", "person-canary-")
		if err != nil {
			t.Fatal(err)
		}
		canary.Close()
		t.Cleanup(func() { os.Remove(canary.Name()) })
		w := newConfinedWorld(t)
		probe := func(paths ...string) string {
			var b strings.Builder
			for _, p := range paths {
				fmt.Fprintf(&b, `test -e %s && echo "THERE %s" || echo "GONE %s"; `, p, p, p)
			}
			return b.String()
		}
		gone := []string{"/home", "/run", "/var", "/srv", canary.Name(), w.ws + "/.git", w.sandbox["b"], "/dev/tty", "/dev/console", "/dev/kmsg", "/dev/vda", "/dev/sda", "/dev/input"}
		if !strings.HasPrefix(os.Getenv("PATH"), "/root") && !strings.Contains(os.Getenv("PATH"), ":/root/") {
			gone = append(gone, "/root") // unless its tools are on PATH (root's own go, pyenv)
		}
		there := []string{"/usr/bin/env", "/etc/passwd", "/dev/null", "/dev/urandom", "/dev/shm", "/dev/pts/ptmx", "/dev/fd/0", "/proc/self/status"}
		script := probe(append(gone, there...)...) + `/bin/sh -c 'echo BIN-SH-WORKS'; echo x > out.txt && echo WROTE-WORK; echo x > "$TMPDIR/t" && echo WROTE-TMP; echo x > /tmp/scratch && echo WROTE-PRIVATE-TMP; /usr/bin/python3 -c 'import os; m, s = os.openpty(); print("PTY", os.ttyname(s))'`
		_, res := drain(t, start(t, w.spec("a", script), ""), nil)
		for _, p := range gone {
			if !strings.Contains(res.Reply, "GONE "+p+"\n") {
				t.Errorf("%s is in the world", p)
			}
		}
		for _, p := range there {
			if !strings.Contains(res.Reply, "THERE "+p+"\n") {
				t.Errorf("%s is not in the world", p)
			}
		}
		// A pseudo-terminal of its own works: its devpts has no other.
		for _, want := range []string{"BIN-SH-WORKS", "WROTE-WORK", "WROTE-TMP", "WROTE-PRIVATE-TMP", "PTY /dev/pts/0"} {
			if !strings.Contains(res.Reply, want) {
				t.Errorf("reply lacks %s:\n%s", want, res.Reply)
			}
		}
		if _, err := os.Stat("/tmp/scratch"); err == nil {
			t.Error("the private /tmp's file is in the system's /tmp")
		}
		if _, err := os.Stat(filepath.Join(w.sandbox["a"], "work", "out.txt")); err != nil {
			t.Errorf("the write in work/ did not reach the sandbox: %v", err)
		}
	})
}

// A workspace agent (an orchestrator or judge reads the workspace) whose workspace lies under
// /tmp, where its world's private /tmp and that /tmp's write grant are: the folders its rules
// only list (the workspace, .agentcanvas, the sandboxes) hold just the entries it was given,
// so another agent's sandbox and the runs' state are not in its world, and nothing it was
// given to read can be written. As root and as nobody, with a world and without (Landlock
// alone then refuses the same reads).
func TestWorkspaceAgentInTmpSeesNoOtherSandbox(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			if world && worldsOff() != "" {
				t.Skipf("no worlds here: %s", worldsOff())
			}
			w := newConfinedWorld(t)
			if !strings.HasPrefix(w.ws, "/tmp/") {
				t.Skipf("the test's workspace %s is not under /tmp", w.ws)
			}
			secret := filepath.Join(w.sandbox["b"], "work", "secret.txt")
			if err := os.WriteFile(secret, []byte("SIBLING-SECRET\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			runs := filepath.Join(w.ws, ".agentcanvas", "runs", w.run)
			if err := os.MkdirAll(runs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(runs, "state.json"), []byte(`{"RUN-STATE":1}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.ws, "README.md"), []byte("WORKSPACE-README\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := w.spec("a", `cat README.md; cat `+secret+`; cat .agentcanvas/sandboxes/*/b/work/secret.txt; cat .agentcanvas/runs/*/state.json
ls -a .agentcanvas/sandboxes/`+w.run+`/; echo x > README.md && echo WROTE-README; echo x > .agentcanvas/planted && echo WROTE-STATE; echo DONE`)
			s.Role, s.CwdMode, s.SandboxWork = "orchestrator", CwdWorkspace, ""
			_, res := drain(t, start(t, s, ""), nil)
			if !strings.Contains(res.Reply, "WORKSPACE-README") || !strings.Contains(res.Reply, "DONE") {
				t.Fatalf("the workspace agent could not read the workspace:\n%s", res.Reply)
			}
			for _, leak := range []string{"SIBLING-SECRET", "RUN-STATE", "WROTE-README", "WROTE-STATE"} {
				if strings.Contains(res.Reply, leak) {
					t.Errorf("world %v: %s reached the workspace agent:\n%s", world, leak, res.Reply)
				}
			}
		})
	})
}
