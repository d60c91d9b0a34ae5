//go:build linux

package runtime

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"github.com/agentcanvas/agentcanvas/sidecar/internal/modelserver"
)

// The real Claude Code, confined and routed (its network is its model's port only), driven
// by a hostile scripted model whose Bash tool runs the attacks that got through before:
// prlimit and scheduling on a process of the person's and on the sidecar, the descriptors
// the sidecar inherited (a terminal, a pipe), MPTCP and UDP past the routing, and processes
// left behind to outlive the turn. Nothing gets through, as root and as nobody.
func TestAttackRealClaudeCode(t *testing.T) {
	exe := modelserver.Claude.Binary(t)
	confinetest.Landlock(t)
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		canary := exec.Command("sleep", "1000")
		if err := canary.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = canary.Process.Kill(); _ = canary.Wait() })
		before, self := schedOf(t, canary.Process.Pid), schedOf(t, os.Getpid())
		master, _, slave := openPTY(t)
		r, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); pw.Close() })
		leakToChildren(t, slave)
		leakToChildren(t, pw)
		other, otherGot := confinetest.Listener(t)
		udp, udpGot := udpListener(t, "udp4")

		s, work := hostileSpec(t, modelserver.Claude, exe)
		in := filepath.Join(filepath.Dir(work), "input") // readable to the agent
		b, err := os.ReadFile(attackBin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, "attack"), b, 0o755); err != nil {
			t.Fatal(err)
		}
		marker := fmt.Sprintf("cfa-claude-%d", os.Getpid())
		cmd := fmt.Sprintf("%s others=%d sidecar-limit=%d fds mptcp=%s udp=%s tcp=%s prio-user > attack.log 2>&1\n%s",
			filepath.Join(in, "attack"), canary.Process.Pid, os.Getpid(), other, udp, other, leaveBehind(marker))
		srv := modelserver.Claude.Start(t, script(modelserver.Reply{Text: "Working.", Calls: []modelserver.Call{
			{Tool: "Bash", Args: map[string]any{"command": cmd, "description": "run"}}}}, modelserver.Reply{Text: "Done."}))
		u, err := url.Parse(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		s.Env = modelserver.Claude.Env(t, srv)
		s.GatewayPort, _ = strconv.Atoi(u.Port()) // its model's port only, as a routed agent's
		worker(&s)
		s.AllowedTools = []string{"Bash"}
		p, err := Start(context.Background(), s, "Fix the README.")
		if err != nil {
			t.Fatal(err)
		}
		evs, res := drainWithin(t, p, nil, realDeadline)
		log, _ := os.ReadFile(filepath.Join(work, "attack.log"))
		if res.Status != StatusCompleted || !strings.Contains(string(log), "fds") {
			logRun(t, run{evs: evs, res: res, srv: srv})
			t.Fatalf("the attack did not run: %s %s; attack.log:\n%s", res.Status, res.Reason, log)
		}
		t.Logf("attack.log (uid %d):\n%s", os.Getuid(), log)
		if strings.Contains(string(log), "ALLOWED") {
			t.Errorf("an attack got through:\n%s", log)
		}
		if after := schedOf(t, canary.Process.Pid); after != before {
			t.Errorf("the person's process changed: %s, was %s", after, before)
		}
		if after := schedOf(t, os.Getpid()); after != self {
			t.Errorf("the sidecar changed: %s, was %s", after, self)
		}
		if b := readNow(r); b != "" || strings.Contains(readNow(master), "LEAKED") {
			t.Errorf("the agent wrote through a descriptor it inherited: %q", b)
		}
		if udpGot() {
			t.Error("a datagram got out")
		}
		select {
		case <-otherGot:
			t.Error("a connection got past the routing")
		default:
		}
		if s := survivors(marker); len(s) > 0 {
			t.Errorf("alive after the turn ended:\n%s", strings.Join(s, "\n"))
		}
	})
}
