//go:build linux

package runtime

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// oomScore is the OOM killer's score of pid (the higher, the sooner it is ended).
func oomScore(t *testing.T, pid string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/oom_score")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Memory: an agent that takes the machine's memory (many processes each smaller than the
// sidecar, so that none is the biggest) must not have the sidecar ended in its place. Every
// process of an agent is the OOM killer's first choice (oom_score_adj 1000, inherited by what
// it starts), above the sidecar however small it is, and it cannot lower that (its /proc is
// read-only to it, and lowering needs CAP_SYS_RESOURCE). As root and as nobody, in a world
// and without.
func TestAttackMemoryGoesFirst(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			w := newConfinedWorld(t)
			script := `sleep 1000 & echo "CHILD $!"; cat /proc/self/oom_score_adj
echo 0 > /proc/self/oom_score_adj 2>/dev/null && echo LOWERED; echo -1000 > /proc/$!/oom_score_adj 2>/dev/null && echo LOWERED
echo -17 > /proc/self/oom_adj 2>/dev/null && echo LOWERED; echo 0 > /proc/$!/oom_adj 2>/dev/null && echo LOWERED
cat /proc/self/oom_score_adj; echo READY; wait`
			p := start(t, w.spec("a", script), "")
			var out strings.Builder
			child := ""
			_, res := drain(t, p, func(ev Event) {
				out.WriteString(ev.Text)
				for _, l := range strings.Split(ev.Text, "\n") {
					if s, ok := strings.CutPrefix(l, "CHILD "); ok {
						child = s
					}
				}
				if strings.Contains(out.String(), "READY") && child != "" {
					if a, s := oomScore(t, child), oomScore(t, strconv.Itoa(os.Getpid())); a <= s {
						t.Errorf("the agent's process scores %d, the sidecar %d: the sidecar would be ended first", a, s)
					}
					child = ""
					p.Stop("done")
				}
			})
			t.Logf("uid %d: %s", os.Getuid(), res.Reply)
			if strings.Count(res.Reply, "1000\n") != 2 || strings.Contains(res.Reply, "LOWERED") {
				t.Errorf("want oom_score_adj 1000, not lowered:\n%s", res.Reply)
			}
		})
	})
}

// Memory no process is charged for: in a world, its private /tmp and /dev/shm are tmpfs,
// whose pages belong to no process of the agent's, so that the OOM killer, ending process
// after process, would never free them. An agent filling them (by size, or by count of empty
// files, each an inode of kernel memory) stops at their bounds (512 MiB and 65536 files, 256
// MiB and 16384), not at half the machine's memory each. As root and as nobody.
func TestAttackWorldMemoryFilesBounded(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		if worldsOff() != "" {
			t.Skipf("no worlds here: %s", worldsOff())
		}
		w := newConfinedWorld(t)
		script := `fill() { dd if=/dev/zero of=$1/fill bs=1M count=$2 2>/dev/null; echo "$1 MIB $(( $(stat -c %s $1/fill) >> 20 ))"; rm -f $1/fill; }
fill /tmp 600; fill /dev/shm 300
python3 -c '
n = 0
try:
    while n < 20000:
        open("/dev/shm/f%d" % n, "w").close(); n += 1
except OSError as e:
    pass
print("/dev/shm FILES", n)'`
		_, res := drain(t, start(t, w.spec("a", script), ""), nil)
		t.Logf("uid %d: %s", os.Getuid(), res.Reply)
		for _, c := range []struct {
			what string
			max  int
		}{{"/tmp MIB", 512}, {"/dev/shm MIB", 256}, {"/dev/shm FILES", 16384}} {
			n := -1
			for _, l := range strings.Split(res.Reply, "\n") {
				if s, ok := strings.CutPrefix(l, c.what+" "); ok {
					n, _ = strconv.Atoi(s)
				}
			}
			if n < 0 || n > c.max {
				t.Errorf("%s: %d, want at most %d:\n%s", c.what, n, c.max, res.Reply)
			}
		}
	})
}

// The same through System V IPC, which a world's IPC namespace of its own allows: a segment
// or a semaphore set is kernel memory kept until the namespace's last process ends, and the
// namespace's limits are as large as the machine. Small ones work (a test's database); a
// segment of a gigabyte, a set of a thousand semaphores and message queues are refused. As
// root and as nobody.
func TestAttackWorldSystemVIPCBounded(t *testing.T) {
	confinetest.Landlock(t)
	if _, err := exec.LookPath("ipcmk"); err != nil {
		t.Skip("no ipcmk here")
	}
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		if worldsOff() != "" {
			t.Skipf("no worlds here: %s", worldsOff())
		}
		w := newConfinedWorld(t)
		script := `try() { ipcmk $2 >/dev/null 2>&1 && echo "MADE $1" || echo "REFUSED $1"; }
try small-segment "-M 4096"; try big-segment "-M 1073741824"; try small-set "-S 8"; try big-set "-S 1000"; try queue -Q`
		_, res := drain(t, start(t, w.spec("a", script), ""), nil)
		t.Logf("uid %d: %s", os.Getuid(), res.Reply)
		for _, want := range []string{"MADE small-segment", "REFUSED big-segment", "MADE small-set", "REFUSED big-set", "REFUSED queue"} {
			if !strings.Contains(res.Reply, want+"\n") {
				t.Errorf("want %s:\n%s", want, res.Reply)
			}
		}
	})
}
