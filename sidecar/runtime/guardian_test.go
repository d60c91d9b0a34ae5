//go:build linux

package runtime

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shellLines runs script as a command agent to its end and returns its reply's lines.
func shellLines(t *testing.T, script string) []string {
	t.Helper()
	_, res := drain(t, start(t, shellSpec(t, script), ""), nil)
	if res.Status != StatusCompleted {
		t.Fatalf("%s %s", res.Status, res.Reason)
	}
	return strings.Fields(res.Reply)
}

// A guardian serves turn after turn. A turn's leftover that escaped into its own session is
// still ended with that turn, and the next turn runs under the same guardian, which then
// has nothing of the previous turn below it.
func TestGuardianReusedAfterEscapedLeftover(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		if _, err := os.Stat("/bin/setsid"); err != nil {
			t.Skip("setsid (util-linux) is not installed")
		}
	}
	first := shellLines(t, `echo $PPID; setsid sleep 1000 & echo $!`)
	second := shellLines(t, `echo $PPID`)
	if len(first) != 2 || len(second) != 1 {
		t.Fatalf("replies %q, %q", first, second)
	}
	escaped, _ := strconv.Atoi(first[1])
	if escaped == 0 || alive(escaped) {
		t.Errorf("the escaped sleep %d outlived its turn", escaped)
	}
	if first[0] != second[0] {
		t.Errorf("second turn under guardian %s, first under %s: not reused", second[0], first[0])
	}
	guardian, _ := strconv.Atoi(second[0])
	if kids := descendants(guardian); len(kids) != 0 {
		t.Errorf("the idle guardian %d still has processes below it: %v", guardian, kids)
	}
	// Nor does it keep anything of its turns: the agents' stdio, pidfds.
	fds := func() int { e, _ := os.ReadDir("/proc/" + second[0] + "/fd"); return len(e) }
	before := fds()
	for range 5 {
		if got := shellLines(t, `echo $PPID; echo err >&2`); got[0] != second[0] {
			t.Fatalf("turn under guardian %s, not %s", got[0], second[0])
		}
	}
	if after := fds(); after != before {
		t.Errorf("the guardian's open descriptors went from %d to %d over 5 turns", before, after)
	}
}

// An idle guardian that dies (killed by someone) is replaced: the next turn still runs.
func TestIdleGuardianKilled(t *testing.T) {
	shellLines(t, `true`)
	idleGuardians.Lock()
	var pids []int
	for _, g := range idleGuardians.list {
		pids = append(pids, g.cmd.Process.Pid)
		_ = g.cmd.Process.Signal(syscall.SIGKILL)
	}
	idleGuardians.Unlock()
	if len(pids) == 0 {
		t.Fatal("no idle guardian after a turn")
	}
	waitUntil(t, "the killed guardians to be gone", func() bool {
		for _, pid := range pids {
			if alive(pid) {
				return false
			}
		}
		return true
	})
	if got := shellLines(t, `echo ok`); len(got) != 1 || got[0] != "ok" {
		t.Fatalf("reply %q", got)
	}
}

// A file the kernel cannot execute fails Start with the kernel's reason, and the guardian
// that tried serves the next turn.
func TestGuardianExecFailure(t *testing.T) {
	s := shellSpec(t, "")
	bad := filepath.Join(s.Workspace, "agent")
	if err := os.WriteFile(bad, []byte("\x7fELF garbage"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.Command = []string{bad}
	if p, err := Start(t.Context(), s, ""); err == nil {
		p.Stop("test")
		p.Wait()
		t.Fatal("an unexecutable agent started")
	} else if !strings.Contains(err.Error(), "exec format error") {
		t.Errorf("error %q does not give the kernel's reason", err)
	}
	if got := shellLines(t, `echo ok`); len(got) != 1 || got[0] != "ok" {
		t.Fatalf("reply %q", got)
	}
}

// The guardian's grace period comes from the agent's environment, which does not keep it.
func TestGuardianRequestFromEnvironment(t *testing.T) {
	r := newGuardianRequest("/bin/x", []string{"x", "a"}, "/w", []string{"A=1", guardianGraceEnv + "=150", guardianEnv + "=v0", "B=2"})
	if r.grace != 150*time.Millisecond || !reflect.DeepEqual(r.env, []string{"A=1", "B=2"}) {
		t.Errorf("grace %v env %q", r.grace, r.env)
	}
	if r := newGuardianRequest("/bin/x", []string{"x"}, "/w", []string{guardianGraceEnv + "=soon"}); r.grace != defaultGuardianGrace {
		t.Errorf("grace %v from a bad value", r.grace)
	}
	r.argv = []string{"x", "a\x00b"}
	if _, err := r.encode(); err == nil {
		t.Error("an argument with a NUL byte was encoded")
	}
}

// FuzzGuardianRequest: a guardian decoding any bytes does not panic, and whatever it accepts
// encodes back to the same bytes.
func FuzzGuardianRequest(f *testing.F) {
	for _, r := range []guardianRequest{
		{path: "/bin/sh", dir: "/tmp", grace: 2 * time.Second, argv: []string{"sh", "-c", "echo hi"}, env: []string{"A=1"}},
		{path: "/x", dir: "", argv: []string{""}},
	} {
		b, err := r.encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-3])
	}
	f.Add([]byte("v2\x00/x\x00/\x000\x0099999999\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeGuardianRequest(b)
		if err != nil {
			return
		}
		back, err := r.encode()
		if err != nil || string(back) != string(b) {
			t.Errorf("decoded %+v re-encodes to %q (%v), not %q", r, back, err, b)
		}
	})
}
