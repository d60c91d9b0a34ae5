//go:build linux

package runtime

import (
	"os"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// A confined agent goes for the guardian that forked it (its parent) and for the sidecar
// (the guardian's parent), through every thread: it reads no environment, opens no memory
// and sends no signal, as root and as nobody. A sibling agent's secret and one only the
// sidecar holds are nowhere in what it got.
func TestConfinedAgentCannotReachGuardian(t *testing.T) {
	abi := confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		const sidecarSecret, siblingSecret = "sidecar-only-SECRET-77a1", "sibling-SECRET-9c2e"
		t.Setenv("AGENTCANVAS_TEST_SIDECAR_SECRET", sidecarSecret)
		w := newConfinedWorld(t)
		sib := w.spec("b", "echo sibling done")
		sib.Env["SIBLING_KEY"] = siblingSecret
		if _, res := drain(t, start(t, sib, ""), nil); res.Status != StatusCompleted {
			t.Fatalf("sibling: %s %s", res.Status, res.Reason)
		}
		script := strings.Join([]string{
			`g=$PPID; s=$(cut -d' ' -f4 /proc/$g/stat)`,
			`try() { if (eval "$2") >/dev/null 2>&1; then echo "ALLOWED $1"; else echo "REFUSED $1"; fi; }`,
			`for p in $g $s; do for f in /proc/$p/environ /proc/$p/task/*/environ; do try "read $f" "cat $f | grep -a -e SECRET -e PATH"; done; done`,
			`for p in $g $s; do for f in /proc/$p/mem /proc/$p/task/*/mem; do try "open $f" "exec 3<$f"; done; done`,
			`for p in $g $s; do for tk in /proc/$p/task/*; do try "signal ${tk##*/} of $p" "kill -0 ${tk##*/} && kill -CONT ${tk##*/}"; done; done`,
			`echo "guardian $g sidecar $s"`,
		}, "\n")
		_, res := drain(t, start(t, w.spec("a", script), ""), nil)
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
