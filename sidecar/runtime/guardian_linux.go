package runtime

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The guardian is how no agent process outlives its agent or the sidecar, even when the
// sidecar is killed with SIGKILL. It is this binary re-executed with AGENTCANVAS_GUARDIAN
// set; init below then runs guardianMain instead of the program. One guardian serves one
// agent turn. It
//
//   - makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so every descendant of the
//     agent that loses its parent (daemons, setsid'd grandchildren) is re-parented to it;
//   - reads the turn's request (argv, env, dir; see guardianRequest) from a pipe whose only
//     write end the sidecar holds, and keeps watching that pipe as its lifeline: EOF means
//     the sidecar is gone, however it died;
//   - starts the agent in a new process group (the group the sidecar pauses, resumes and
//     stops) with Pdeathsig=SIGKILL, and reports its pid on its status pipe;
//   - when the agent exits, the lifeline breaks or it is told to stop, it sends SIGTERM to
//     every descendant, waits a grace period, then SIGKILLs until it has no child left, and
//     reports the agent's exit code on its status pipe.
//
// Starting a Go binary costs milliseconds, so the sidecar starts each guardian one turn
// ahead (spawn_unix.go): the next turn's guardian has already started up and waits, blocked
// on its request pipe, doing nothing. If the sidecar dies first, it sees EOF and exits.
//
// It lives outside the agent's process group, so SIGTSTP to the group does not stop it, and
// the group is never orphaned (which would make the kernel discard SIGTSTP).
const guardianSupported = true

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER, linux/prctl.h

func init() {
	if os.Getenv(guardianEnv) != guardianMagic {
		return
	}
	os.Exit(guardianMain())
}

func guardianMain() int {
	// Pdeathsig fires when the forking thread exits; keep this goroutine on its thread.
	goruntime.LockOSThread()
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	lifeline := bufio.NewReader(os.NewFile(3, "lifeline"))
	status := os.NewFile(4, "status")
	// Everything that does not depend on the request is done before it comes.
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0); e != 0 {
		fmt.Fprintf(status, "error guardian: PR_SET_CHILD_SUBREAPER: %v\n", e)
		return 2
	}
	req, err := readGuardianRequest(lifeline)
	if err == io.EOF {
		return 0 // the sidecar ended, or gave up on this guardian, with no turn to start
	}
	if err != nil {
		fmt.Fprintf(status, "error %v\n", err)
		return 2
	}
	// No signal.Ignore here: ignored dispositions survive exec, and the agent must stop on
	// SIGTSTP. The guardian is outside the agent's group, so group signals never reach it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	grace := req.grace
	proc, err := os.StartProcess(req.path, req.argv, &os.ProcAttr{
		Dir:   req.dir,
		Env:   req.env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(status, "error %v\n", err)
		return 127
	}
	leader := proc.Pid
	fmt.Fprintf(status, "started %d\n", leader)
	// Only the agent tree holds the stdio pipes now: the sidecar sees EOF when it is gone.
	os.Stdin.Close()
	os.Stdout.Close()
	os.Stderr.Close()

	lifelineGone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, lifeline)
		close(lifelineGone)
	}()

	leaderExit := make(chan int, 1)
	noChildren := make(chan struct{})
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil { // ECHILD: no child and so no descendant left
				close(noChildren)
				return
			}
			if pid == leader {
				code := ws.ExitStatus()
				if ws.Signaled() {
					code = 128 + int(ws.Signal())
				}
				// The common case: the agent left nothing behind. Saying so before the exit
				// code spares killTree its two scans of /proc (most of a turn's cost).
				if !reapExited() {
					close(noChildren)
					leaderExit <- code
					return
				}
				leaderExit <- code
			}
		}
	}()

	code := -1
	select {
	case code = <-leaderExit:
	case <-lifelineGone:
		grace = 0 // the sidecar is gone: nobody waits for a graceful end
	case <-sigs:
	}
	select {
	case <-noChildren: // nothing left to end
	default:
		killTree(leader, syscall.SIGTERM, grace, noChildren)
	}
	if code < 0 {
		select {
		case code = <-leaderExit:
		default:
			code = 128 + int(syscall.SIGKILL)
		}
	}
	fmt.Fprintf(status, "exit %d\n", code)
	return code
}

// reapExited reaps the children that have already exited and reports whether any child is
// left (ECHILD: none, and so no descendant either).
func reapExited() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil:
			return false
		case pid == 0:
			return true
		}
	}
}

// killTree ends the agent's group and every descendant of this process: SIGTERM (and
// SIGCONT, so stopped processes act on it), up to grace for them to go, then SIGKILL
// repeatedly until no child is left.
func killTree(leader int, first syscall.Signal, grace time.Duration, noChildren <-chan struct{}) {
	self := os.Getpid()
	signalAll := func(sig syscall.Signal) {
		_ = syscall.Kill(-leader, sig)
		for _, pid := range descendants(self) {
			_ = syscall.Kill(pid, sig)
		}
	}
	if grace > 0 {
		signalAll(first)
		signalAll(syscall.SIGCONT)
		select {
		case <-noChildren:
			return
		case <-time.After(grace):
		}
	}
	for {
		signalAll(syscall.SIGKILL)
		select {
		case <-noChildren:
			return
		case <-time.After(20 * time.Millisecond):
			// A killed process's own children are re-parented to us only after it died:
			// go round again to catch them.
		}
	}
}

// descendants lists every process below root, from /proc.
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentPID(pid); ok {
			kids[ppid] = append(kids[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, k := range kids[p] {
			out = append(out, k)
			queue = append(queue, k)
		}
	}
	return out
}

// parentPID reads the ppid field of /proc/PID/stat (after the parenthesised command name,
// which may itself contain spaces and parentheses).
func parentPID(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
