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
