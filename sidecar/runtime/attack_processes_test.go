//go:build linux

package runtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
	"golang.org/x/sys/unix"
)

// schedOf is what an agent could change of process pid without tracing it: its core-size
// limit, nice value, scheduling policy, allowed CPUs and I/O priority.
func schedOf(t *testing.T, pid int) string {
	t.Helper()
	var rl unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_CORE, nil, &rl); err != nil {
		t.Fatal(err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		t.Fatal(err)
	}
	prio, _, _ := unix.Syscall(unix.SYS_IOPRIO_GET, 1, uintptr(pid), 0)
	// f[16] is the nice value, f[38] the policy (proc(5), counting from the state).
	return fmt.Sprintf("core %d, nice %s, policy %s, cpus %d, ioprio %d", rl.Cur, f[16], f[38], set.Count(), prio)
}

// Processes the agent does not own but its user does: an agent can change another process
// of its user without tracing or signalling it, through the calls that name a process by id:
// its resource limits (prlimit: a CPU-time limit of one second kills the sidecar, a file
// limit of zero cripples it), its priority (setpriority, sched_setscheduler SCHED_IDLE), the
// CPUs it may run on (sched_setaffinity) and its I/O class (ioprio_set). Landlock does not
// see these. A process of the person's, the sidecar and the agent's guardian keep all of it,
// while the agent's own limits and priority still work (ulimit, nice). As root and as nobody,
// in a world and without.
func TestAttackOtherProcessesSchedulingAndLimits(t *testing.T) {
	confinetest.Landlock(t)
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			canary := exec.Command("sleep", "1000")
			if err := canary.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = canary.Process.Kill(); _ = canary.Wait() })
			pid := canary.Process.Pid
			before, self := schedOf(t, pid), schedOf(t, os.Getpid())
			w := newConfinedWorld(t)
			// The sidecar only by its limits: the rest would slow this test when it got through.
			out := attacked(t, w, "others="+strconv.Itoa(pid), "parent", "sidecar-limit="+strconv.Itoa(os.Getpid()), "prio-user", "own-limits")
			for _, what := range []string{"others-prlimit", "others-setpriority", "others-sched", "others-affinity", "others-ioprio",
				"parent-prlimit", "parent-setpriority", "parent-sched", "parent-affinity", "parent-ioprio", "sidecar-limit", "prio-user"} {
				expect(t, out, what, false)
			}
			expect(t, out, "own-limits", true)
			if after := schedOf(t, pid); after != before {
				t.Errorf("the person's process changed: %s, was %s", after, before)
			}
			if after := schedOf(t, os.Getpid()); after != self {
				t.Errorf("the sidecar changed: %s, was %s", after, self)
			}
			if err := canary.Process.Signal(syscall.Signal(0)); err != nil {
				t.Errorf("the person's process is gone: %v", err)
			}
		})
	})
}

// leakToChildren clears f's close-on-exec flag, as a descriptor the sidecar inherited from
// the shell or editor that started it has (a terminal, a pipe), for the test's length.
func leakToChildren(t *testing.T, f *os.File) {
	t.Helper()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = unix.FcntlInt(f.Fd(), unix.F_SETFD, unix.FD_CLOEXEC) })
}

// Descriptors the sidecar holds without close-on-exec, as every program inherits them from
// the shell or editor that started it: the person's terminal, a pipe. An agent (and a command
// run as it) gets its stdin, stdout and stderr and nothing else: it cannot write escapes onto
// the terminal or read what the person types there through a descriptor it was handed, nor
// write into the pipe. As root and as nobody, in a world and without.
func TestAttackInheritedDescriptors(t *testing.T) {
	confinetest.Landlock(t)
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			master, _, slave := openPTY(t)
			r, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); pw.Close() })
			leakToChildren(t, slave)
			leakToChildren(t, pw)
			w := newConfinedWorld(t)
			out := attacked(t, w, "fds")
			expect(t, out, "fds", false)
			res, err := RunCommand(context.Background(), Command{Agent: w.spec("a", ""), Argv: []string{attackBin, "fds"}})
			if err != nil {
				t.Fatal(err)
			}
			expect(t, string(res.Output), "fds", false)
			if b := readNow(r); len(b) > 0 {
				t.Errorf("the agent wrote into the sidecar's pipe: %q", b)
			}
			if shown := readNow(master); strings.Contains(shown, "LEAKED") {
				t.Errorf("the agent wrote onto the person's terminal: %q", shown)
			}
		})
	})
}

// Processes outside the agent's own tree, reached by every call that names one: a process
// of the person's, the sidecar, and a sibling agent running beside it (its environment holds
// its key). ptrace, process_vm_readv, kcmp, pidfd_getfd, process_madvise, pidfd_send_signal,
// perf_event_open, its /proc environ, and a SIGKILL delivered as the SIGIO of a pipe whose
// owner the agent set to it (F_SETOWN, F_SETSIG): each is refused or never lands, and all
// three live on. As root and as nobody, in a world and without.
func TestAttackReachOtherProcesses(t *testing.T) {
	if confinetest.Landlock(t) < 6 {
		t.Skip("signals are scoped from Landlock ABI 6")
	}
	needAttacker(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			canary := exec.Command("sleep", "1000")
			if err := canary.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = canary.Process.Kill(); _ = canary.Wait() })
			w := newConfinedWorld(t)
			sb := w.spec("b", "echo READY; exec sleep 1000")
			sb.Env["SIBLING_KEY"] = "SIBLING-KEY-SECRET"
			sibling := start(t, sb, "")
			for ev := range sibling.Events() {
				if ev.Kind == EventText && strings.Contains(ev.Text, "READY") {
					break
				}
			}
			var args []string
			for _, pid := range []int{canary.Process.Pid, os.Getpid(), sibling.PID()} {
				args = append(args, "reach="+strconv.Itoa(pid), "read=/proc/"+strconv.Itoa(pid)+"/environ")
			}
			out := attacked(t, w, args...)
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "ALLOWED ") && l != "ALLOWED reach-sigio-armed" {
					t.Errorf("got through: %s", l)
				}
			}
			if strings.Count(out, "REFUSED read") != 3 || strings.Contains(out, "SECRET") {
				t.Errorf("an environment was read:\n%s", out)
			}
			if err := canary.Process.Signal(syscall.Signal(0)); err != nil {
				t.Errorf("the person's process is gone: %v", err)
			}
			if st, ok := procState(sibling.PID()); !ok || st == 'Z' {
				t.Error("the sibling agent is gone")
			}
		})
	})
}

// Core dumps: an agent's process that crashes (or that the agent crashes on purpose, as it
// may signal its own) would have the kernel write its whole memory (the CLI's environment and
// key, its conversation) as a file in its working folder: a core in work/ is in the proposal
// the person applies, and a few of them fill the disk. Every process of an agent has a core
// size limit of zero, soft and hard, which it cannot raise. As root and as nobody, in a world
// and without.
func TestAttackNoCoreDump(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			w := newConfinedWorld(t)
			work := w.sandbox["a"] + "/work"
			script := `cd ` + work + `; ulimit -S -c unlimited 2>/dev/null || ulimit -S -c "$(ulimit -H -c)"
ulimit -H -c unlimited 2>/dev/null && echo RAISED
echo "HARD $(ulimit -H -c) SOFT $(ulimit -S -c)"
bash -c 'kill -SEGV $$'; echo "CRASHED $?"`
			_, res := drain(t, start(t, w.spec("a", script), ""), nil)
			t.Logf("uid %d: %s", os.Getuid(), res.Reply)
			if !strings.Contains(res.Reply, "HARD 0 SOFT 0") || strings.Contains(res.Reply, "RAISED") ||
				!strings.Contains(res.Reply, "CRASHED 139") {
				t.Errorf("want a core size limit of 0 it cannot raise, and a crash:\n%s", res.Reply)
			}
			entries, err := os.ReadDir(work)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				t.Errorf("the crash left %s in work/", e.Name())
			}
		})
	})
}
