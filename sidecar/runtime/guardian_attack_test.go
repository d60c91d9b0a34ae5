//go:build linux

package runtime

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// A confined agent goes for the guardian that forked it (its parent), for the sidecar (the
// guardian's parent) and for a sibling agent running beside it, through every thread: it reads no environment, opens no memory
// and sends no signal, as root and as nobody. A sibling agent's secret and one only the
// sidecar holds are nowhere in what it got.
func TestConfinedAgentCannotReachGuardian(t *testing.T) {
	abi := confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		const sidecarSecret, siblingSecret = "sidecar-only-SECRET-77a1", "sibling-SECRET-9c2e"
		t.Setenv("AGENTCANVAS_TEST_SIDECAR_SECRET", sidecarSecret)
		w := newConfinedWorld(t)
		// The sibling runs while the attack does, until the test lets it finish.
		release := filepath.Join(w.sandbox["b"], "work", "release")
		sib := w.spec("b", `while [ ! -e release ]; do sleep 0.05; done; echo sibling done`)
		sib.Env["SIBLING_KEY"] = siblingSecret
		sp := start(t, sib, "")
		script := strings.Join([]string{
			`g=$PPID; s=$(cut -d' ' -f4 /proc/$g/stat); b=` + strconv.Itoa(sp.PID()),
			`try() { if (eval "$2") >/dev/null 2>&1; then echo "ALLOWED $1"; else echo "REFUSED $1"; fi; }`,
			`for p in $g $s $b; do for f in /proc/$p/environ /proc/$p/task/*/environ; do try "read $f" "cat $f | grep -a -e SECRET -e PATH"; done; done`,
			`for p in $g $s $b; do for f in /proc/$p/mem /proc/$p/task/*/mem; do try "open $f" "exec 3<$f"; done; done`,
			`for p in $g $s $b; do for tk in /proc/$p/task/*; do try "signal ${tk##*/} of $p" "kill -0 ${tk##*/} && kill -CONT ${tk##*/}"; done; done`,
			`echo "guardian $g sidecar $s sibling $b"`,
		}, "\n")
		_, res := drain(t, start(t, w.spec("a", script), ""), nil)
		if err := os.WriteFile(release, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, sres := drain(t, sp, nil); sres.Status != StatusCompleted {
			t.Errorf("sibling: %s %s", sres.Status, sres.Reason)
		}
		t.Logf("uid %d:\n%s", os.Getuid(), res.Reply)
		if res.Status != StatusCompleted || !strings.Contains(res.Reply, "REFUSED open") {
			t.Fatalf("%s %s:\n%s", res.Status, res.Reason, res.Reply)
		}
		for _, l := range strings.Split(res.Reply, "\n") {
			if strings.HasPrefix(l, "ALLOWED") && (abi >= 6 || !strings.HasPrefix(l, "ALLOWED signal")) {
				t.Errorf("%s", l)
			}
		}
		for _, secret := range []string{sidecarSecret, siblingSecret} {
			if strings.Contains(res.Reply, secret) {
				t.Errorf("the agent got %s", secret)
			}
		}
	})
}

// When an agent's guardian is killed (from outside: no agent can), the turn fails saying so,
// and nothing the agent started outlives it, a setsid'd grandchild included; the agent's next
// turn runs as usual.
func TestKilledGuardianEndsDetachedChild(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		w := newConfinedWorld(t)
		work := filepath.Join(w.sandbox["a"], "work")
		script := `echo $PPID > guardian.pid; setsid sh -c 'echo $$ > detached.tmp && mv detached.tmp detached.pid; exec sleep 1000' & exec sleep 1000`
		p := start(t, w.spec("a", script), "")
		read := func(name string) int {
			b, _ := os.ReadFile(filepath.Join(work, name))
			n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return n
		}
		for limit := time.Now().Add(deadline); read("detached.pid") == 0 || read("guardian.pid") == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(limit) {
				t.Fatal("the agent never started its detached child")
			}
		}
		detached := read("detached.pid")
		if err := syscall.Kill(read("guardian.pid"), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_, res := drain(t, p, nil)
		if res.Status != StatusFailed || !strings.Contains(res.Reason, "the guardian of this turn died") {
			t.Errorf("%s %q: want failed, saying the guardian died", res.Status, res.Reason)
		}
		if err := syscall.Kill(detached, 0); err != syscall.ESRCH {
			t.Errorf("the detached child %d outlived its turn: %v", detached, err)
		}
		if _, res := drain(t, start(t, w.spec("a", "echo again"), ""), nil); res.Status != StatusCompleted {
			t.Errorf("the agent's next turn: %s %s", res.Status, res.Reason)
		}
	})
}
