//go:build linux

package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// The sidecar's own state in the workspace's .agentcanvas (its lock, apply journal and
// temporary files, ledger, event logs, other agents' sandboxes and CLI homes) is not the
// repository's: an agent that reads the workspace (an orchestrator, a judge) does not get it.
// Before, it read the run's event log (every other agent's replies) and took the workspace
// lock (flock needs only a read): for its whole turn, no other agent's sandbox could be
// prepared and no proposal applied; and in a world, with the workspace under /tmp, it read
// other agents' sandboxes and copied logins (the world bound the whole workspace, under its
// private /tmp, which Landlock lets it read). The repository's own configuration there
// (flows, skills, memory) stays readable. As root and as nobody, in a world and without.
func TestAttackSidecarStateInTheWorkspace(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			w := newConfinedWorld(t)
			lk, err := wslock.Acquire(context.Background(), w.ws, "a test", wslock.Options{})
			if err != nil {
				t.Fatal(err)
			}
			lk.Release()
			for name, text := range map[string]string{"logs/flow/today.jsonl": "OTHER-AGENT-REPLY", "flows/f.yaml": "FLOW-TEXT", "memory/MEMORY.md": "MEMORY-TEXT"} {
				p := filepath.Join(w.ws, ".agentcanvas", filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// A sibling's sandbox and CLI home (its copied login), where the workspace is in
			// /tmp as here: in a world, under its private /tmp (which Landlock lets it write).
			home := filepath.Join(w.ws, filepath.FromSlash(confine.RunsDir), w.run, "homes", "b", "claude")
			if err := os.MkdirAll(home, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".credentials.json"), []byte("SIBLING-LOGIN"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.sandbox["b"], "work", "x.go"), []byte("SIBLING-WORK"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := w.spec("a", `cat `+filepath.Join(home, ".credentials.json")+` `+filepath.Join(w.sandbox["b"], "work", "x.go")+`
cat .agentcanvas/logs/flow/today.jsonl .agentcanvas/flows/f.yaml .agentcanvas/memory/MEMORY.md
if flock -x .agentcanvas/lock -c 'echo LOCKED; exec sleep 1000'; then :; else echo "REFUSED lock"; fi`)
			s.CwdMode, s.SandboxWork, s.Role = CwdWorkspace, "", "orchestrator"
			p := start(t, s, "")
			var text strings.Builder
			_, res := drain(t, p, func(ev Event) {
				text.WriteString(ev.Text)
				if ev.Kind == EventText && strings.Contains(ev.Text, "LOCKED") {
					// The agent holds the lock now: another writer would wait for its turn's end.
					_, err := wslock.Acquire(context.Background(), w.ws, "preparing a sandbox", wslock.Options{Timeout: time.Nanosecond})
					t.Errorf("the agent took the workspace lock: %v", err)
					p.Stop("took the lock")
				}
			})
			t.Logf("uid %d:\n%s", os.Getuid(), res.Reply)
			for secret, what := range map[string]string{"OTHER-AGENT-REPLY": "the run's event log", "SIBLING-LOGIN": "a sibling's CLI home",
				"SIBLING-WORK": "a sibling's sandbox"} {
				if strings.Contains(text.String(), secret) {
					t.Errorf("the agent read %s", what)
				}
			}
			for _, want := range []string{"FLOW-TEXT", "MEMORY-TEXT", "REFUSED lock"} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("want %q in what the agent printed", want)
				}
			}
		})
	})
}

// A world's first wall is its read-only binds; under its private /tmp (a workspace in /tmp)
// it is the only one, as Landlock lets the agent write there. A folder bound read-only keeps
// every mount beneath it read-only too: before, the mounts under /sys (the cgroup
// hierarchies) and under any bound folder stayed writable. Each writable mount in the world is
// one the agent may write: its work/, TMPDIR, private /tmp, /dev/shm, /dev/mqueue, devpts and
// the device files. As root and as nobody.
func TestAttackWorldReadOnlyAllTheWayDown(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		if worldsOff() != "" {
			t.Skipf("no worlds here: %s", worldsOff())
		}
		w := newConfinedWorld(t)
		_, res := drain(t, start(t, w.spec("a", `echo "TMPDIR $TMPDIR"; cat /proc/self/mountinfo`), ""), nil)
		tmp := ""
		for _, l := range strings.Split(res.Reply, "\n") {
			if s, ok := strings.CutPrefix(l, "TMPDIR "); ok {
				tmp = s
			}
		}
		writable := []string{filepath.Join(w.sandbox["a"], "work"), tmp, "/tmp", "/dev/shm", "/dev/mqueue", "/dev/pts", "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
		for _, l := range strings.Split(res.Reply, "\n") {
			f := strings.Fields(l)
			if len(f) < 6 || strings.HasPrefix(l, "TMPDIR") {
				continue
			}
			point, opts := f[4], strings.Split(f[5], ",")
			if slices.Contains(opts, "rw") && !slices.Contains(writable, point) {
				t.Errorf("writable in the world: %s", l)
			}
		}
	})
}
