//go:build linux

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// hostilePython is what each process of a run tries, labelled with its kind (argv[1]):
// another process's resource limit (the sidecar's), a process of the person's priority, an
// MPTCP connection and a UDP datagram past network none, and a daemon left to outlive it.
func hostilePython(sidecar, person int, tcpPort, udpPort, marker string) string {
	return fmt.Sprintf(`import os, resource, socket, subprocess, sys
label = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "test"
def t(what, f):
    try:
        f()
        print("ALLOWED %%s-%%s" %% (label, what), flush=True)
    except OSError as e:
        print("REFUSED %%s-%%s: %%s" %% (label, what, e), flush=True)
t("prlimit", lambda: resource.prlimit(%d, resource.RLIMIT_CORE, (4242, resource.prlimit(%d, resource.RLIMIT_CORE)[1])))
t("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, %d, 19))
t("mptcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262).connect(("127.0.0.1", %s)))
t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", %s)))
subprocess.Popen(["bash", "-c", "exec -a %s-" + label + " sleep 1000"], start_new_session=True,
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
`, sidecar, sidecar, person, tcpPort, udpPort, marker)
}

// Every kind of process a run starts on an agent's behalf, each hostile: a command worker's
// turn (network none), its runtime.setup, the test file it planted that params.test_command
// runs, its manager (a command agent in the workspace, as judges are), and a session loop's
// sessions. None reaches the sidecar's limits, a process of the person's, the network past
// none, or lives past the run. As root and as nobody.
func TestAttackEveryProcessOfARun(t *testing.T) {
	confinetest.Landlock(t)
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		canary := exec.Command("sleep", "1000")
		if err := canary.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = canary.Process.Kill(); _ = canary.Wait() })
		var core unix.Rlimit
		_ = unix.Getrlimit(unix.RLIMIT_CORE, &core)
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer udp.Close()
		marker := fmt.Sprintf("cfa-run-%d", os.Getpid())
		bin := t.TempDir()
		attack := filepath.Join(bin, "attack.py")
		code := hostilePython(os.Getpid(), canary.Process.Pid, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port), marker)
		if err := os.WriteFile(attack, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}

		// A manager and a worker: the worker plants a test file, which test_command runs.
		ws := gitWorkspace(t)
		agent := script(t, bin, "agent.sh", `prompt=$(cat)
case "$AGENTCANVAS_ROLE" in
manager)
	`+python+` `+attack+` manager
	if grep -q "Review your team" <<<"$prompt"; then echo "ACCEPT all"; exit 0; fi
	grep -o 'Team: .*' <<<"$prompt" | head -1 | sed 's/^Team: //' | tr ',' '\n' | while read -r m; do [ -n "$m" ] && echo "ASSIGN $m: tests"; done ;;
*)	`+python+` `+attack+` worker
	{ cat `+attack+`; printf 'import unittest\nclass T(unittest.TestCase):\n    def test_nothing(self):\n        pass\n'; } > test_attack.py
	echo "wrote my tests" ;;
esac
`)
		f := patternFlow(t, ws, "hostile", flowSpec{pattern: "manager_worker", counts: map[string]int{"worker": 1},
			runtime: map[string]any{"kind": "cli", "backendId": "command", "command": []string{"bash", agent, attack}, "network": "none",
				"setup": []string{python, attack, "setup"}},
			description: "the task",
			edit: func(sg *pattern.Subgraph) {
				setParam("test_command", []any{python, "-m", "unittest", "-v"})(sg)
				setTermination(pattern.Termination{Type: "max_rounds", Rounds: 1})(sg)
			}})
		rec := &recorder{}
		out, err := Run(context.Background(), f, Options{Limits: confined, Workspace: ws, Sink: rec.sink})
		if err != nil {
			t.Fatal(err)
		}
		seen, _ := json.Marshal(rec.evs)
		said := string(seen)
		if log, err := os.ReadFile(filepath.Join(ws, ".agentcanvas", "sandboxes", out.RunID, "worker", "proposal", "test.log")); err == nil {
			said += "\n" + string(log)
		}

		// A session loop's sessions.
		loop := script(t, bin, "loop.sh", "cat >/dev/null\n"+python+" "+attack+" session\necho 'ANSWER: done'\n")
		loopFlow := strings.NewReplacer("maxIterations: 3", "maxIterations: 1", "sessionLoop:", "network: none, sessionLoop:", "AGENT", loop+", "+attack).Replace(sessionFlow)
		lws, lf := workspace(t, loopFlow)
		lrec := &recorder{}
		if _, err := Run(context.Background(), lf, Options{Limits: confined, Workspace: lws, Sink: lrec.sink}); err != nil {
			t.Fatal(err)
		}
		seen, _ = json.Marshal(lrec.evs)
		said += "\n" + string(seen)

		var attempts []string // what each attack said, one line each
		for _, l := range strings.Split(strings.NewReplacer(`\n`, "\n", `"`, "\n").Replace(said), "\n") {
			if strings.HasPrefix(l, "ALLOWED ") || strings.HasPrefix(l, "REFUSED ") {
				attempts = append(attempts, l)
			}
		}
		t.Logf("uid %d:\n%s", os.Getuid(), strings.Join(attempts, "\n"))
		for _, kind := range []string{"manager", "worker", "setup", "test", "session"} {
			if !strings.Contains(said, "REFUSED "+kind+"-prlimit") {
				t.Errorf("the %s's attack did not run, or got through", kind)
			}
		}
		for _, l := range attempts {
			if strings.HasPrefix(l, "ALLOWED ") {
				t.Errorf("got through: %s", l)
			}
		}
		var after unix.Rlimit
		_ = unix.Getrlimit(unix.RLIMIT_CORE, &after)
		if after != core {
			t.Errorf("the sidecar's core limit changed: %+v, was %+v", after, core)
		}
		if prio, err := unix.Getpriority(unix.PRIO_PROCESS, canary.Process.Pid); err != nil || prio != 20 {
			t.Errorf("the person's process's priority: %d (kernel form, 20 is nice 0), %v", prio, err)
		}
		if s := survivors(marker); len(s) > 0 {
			t.Errorf("alive after the run:\n%s", strings.Join(s, "\n"))
		}
	})
}

// survivors lists the processes whose command line holds marker.
func survivors(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if strings.Contains(string(b), marker) && !strings.Contains(string(st), ") Z") {
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}
