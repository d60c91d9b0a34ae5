package runtime

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/signal"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// The guardian is how no agent process outlives its agent or the sidecar, even when the
// sidecar is killed with SIGKILL. It is this binary re-executed with AGENTCANVAS_GUARDIAN
// set; init below then runs guardianMain instead of the program. A guardian runs one agent
// turn at a time, and serves turn after turn (spawn_unix.go keeps idle ones for reuse:
// starting a Go binary costs more than the agent turn it would guard). It
//
//   - makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so every descendant of the
//     agent that loses its parent (daemons, setsid'd grandchildren) is re-parented to it;
//   - reads each turn's request (argv, env, dir, grace; see guardianRequest) and the agent's
//     stdin, stdout and stderr (SCM_RIGHTS) from a socket whose only other end the sidecar
//     holds, and watches that socket as its lifeline: EOF means the sidecar is gone, however
//     it died;
//   - is not dumpable (PR_SET_DUMPABLE 0) and runs with an environment of its own variable
//     only, not the sidecar's (newGuardian); it serves the turns of one agent only, so it
//     never held another agent's environment;
//   - starts the agent in a new process group (the group the sidecar pauses, resumes and
//     stops), confined by the turn's Landlock rules from a thread that ends right after the
//     fork when the request carries them, else with Pdeathsig=SIGKILL (serveRequests), and
//     replies "started PID";
//   - when the agent exits, the lifeline breaks or it is told to stop, it sends SIGTERM to
//     every descendant, waits a grace period, then SIGKILLs until it has no child left, and
//     replies "exit CODE". Having no child left, it has no descendant at all, so whatever is
//     re-parented to it during its next turn belongs to that turn.
//
// If the lifeline breaks or it is told to stop, it exits after ending the turn.
//
// It leads a session of its own, which has no controlling terminal (newGuardian), and lives
// outside the agent's process group, so SIGTSTP to the group does not stop it, and the group
// is never orphaned (which would make the kernel discard SIGTSTP). An agent is never a
// session leader, so it cannot take a terminal as its own either.
const guardianSupported = true

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER, linux/prctl.h

func init() {
	if os.Getenv(guardianEnv) != guardianMagic {
		return
	}
	os.Exit(guardianMain())
}

// guardianTurn is a turn whose agent has started.
type guardianTurn struct {
	leader int
	grace  time.Duration
}

// guardianControl is the control socket's descriptor, in blocking mode: the goroutine that
// reads requests sleeps in the kernel and wakes on its thread, with no scheduler hop.
const guardianControl = 3

func guardianMain() int {
	syscall.CloseOnExec(guardianControl)
	closeOnExecInherited() // an agent gets its stdin, stdout and stderr, nothing else
	guardianWorld.wanted = os.Getenv(guardianWorldEnv) == "1"
	reply := func(format string, args ...any) {
		_, _ = syscall.Write(guardianControl, []byte(fmt.Sprintf(format+"\n", args...)))
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0); e != 0 {
		reply("error guardian: PR_SET_CHILD_SUBREAPER: %v", e)
		return 2
	}
	// Every agent it forks inherits them: the OOM killer's first choice, no core dumps
	// (agentlimits_linux.go). Before PR_SET_DUMPABLE 0, which gives its /proc files to root.
	if err := setAgentLimits(0); err != nil {
		reply("error guardian: %v", err)
		return 2
	}
	// Not dumpable: no process of the user's but a privileged one may read the guardian's
	// memory or environment through /proc, or trace it (its agents' execs are dumpable
	// again: exec resets the flag).
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0, 0, 0, 0); e != 0 {
		reply("error guardian: PR_SET_DUMPABLE: %v", e)
		return 2
	}
	// No signal.Ignore here: ignored dispositions survive exec, and the agent must stop on
	// SIGTSTP. The guardian is outside the agent's group, so group signals never reach it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	turns := make(chan guardianTurn)
	lifelineGone := make(chan struct{})
	go serveRequests(turns, lifelineGone, reply)
	for {
		select {
		case <-lifelineGone:
			return 0
		case <-sigs:
			return 0
		case t := <-turns:
			if !guardTurn(t, reply, lifelineGone, sigs) {
				return 0
			}
		}
	}
}

// serveRequests reads the requests and starts the agents, on a thread of its own: Pdeathsig
// fires when the forking thread exits, so the thread lives as long as the unconfined agents
// it forked.
//
// A confined turn's agent is forked by this thread after it took the turn's Landlock rules
// (confine.Policy.RestrictThread): they live in the thread's credentials, which the agent
// inherits and exec keeps, while the guardian's other threads stay unconfined. Having taken
// them, the thread starts a successor on a fresh thread and ends as soon as the agent is
// forked: nothing of the guardian stays in the agent's Landlock domain, where the agent could
// read its memory and environment through /proc or signal it (a kill of a thread's id stops
// or kills its whole process). The agent so gets no parent-death signal; the guardian's
// lifeline and subreaper still end its whole tree, and an agent cannot signal or trace the
// guardian (Landlock scopes, PR_SET_DUMPABLE 0).
func serveRequests(turns chan<- guardianTurn, lifelineGone chan<- struct{}, reply func(string, ...any)) {
	goruntime.LockOSThread() // never unlocked: a thread that took a turn's rules ends with it
	for {
		req, stdio, err := readGuardianTurn(guardianControl)
		if err != nil {
			// EOF, or anything but a well-formed request (which only a broken sidecar
			// sends): the lifeline is gone.
			close(lifelineGone)
			select {}
		}
		if req.policy == nil {
			if leader, ok := forkAgent(req, stdio, reply, "", syscall.SIGKILL); ok {
				turns <- guardianTurn{leader, req.grace}
			}
			continue
		}
		go serveRequests(turns, lifelineGone, reply)
		if leader, ok := startConfined(req, stdio, reply); ok {
			go func() { turns <- guardianTurn{leader, req.grace} }()
		}
		return // the thread ends with the goroutine that locked it
	}
}

// startConfined restricts the calling thread with the request's policy and forks the agent
// from it, in the guardian's world when it has one: "started PID", with notes after tabs
// ("unconfined: WHY" in auto mode when the rules could not be applied, "noworld: WHY" when a
// world was wanted and could not be made), or "error MSG".
func startConfined(req guardianRequest, stdio []*os.File, reply func(string, ...any)) (int, bool) {
	pol, err := confine.Decode(req.policy)
	if err != nil {
		closeFiles(stdio...)
		reply("error %v", err)
		return 0, false
	}
	note := ""
	pol, noWorld := enterWorld(pol, req, reply)
	if noWorld != "" {
		note += "\tnoworld: " + oneLine(noWorld)
	}
	pol.ProcessFilter = filterSelf(pol)
	if _, err := restrictThread(pol, req.policy); err != nil {
		if pol.Required {
			closeFiles(stdio...)
			reply("error confinement: %v", err)
			return 0, false
		}
		note += "\tunconfined: " + oneLine(err.Error())
	}
	return forkAgent(req, stdio, reply, note, 0)
}

// forkAgent starts the agent from the calling thread and replies; deathSig is its
// parent-death signal (0: none, for an agent whose forking thread ends at once).
func forkAgent(req guardianRequest, stdio []*os.File, reply func(string, ...any), note string, deathSig syscall.Signal) (int, bool) {
	proc, err := os.StartProcess(req.path, req.argv, &os.ProcAttr{
		Dir:   req.dir,
		Env:   req.env,
		Files: stdio,
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig},
	})
	// Only the agent tree holds the stdio pipes now: the sidecar sees EOF when it is gone.
	closeFiles(stdio...)
	if err != nil {
		reply("error %v", err)
		return 0, false
	}
	leader := proc.Pid
	proc.Release() // reaped by guardTurn with wait4
	reply("started %d%s", leader, note)
	return leader, true
}

// guardianFilter is the system-call filter the guardian installed on itself (nil: none yet).
var guardianFilter *confine.FilterOptions

// filterSelf installs, at the guardian's first confined turn, the turn's system-call filter on
// every thread of the guardian: a guardian serves the confined turns of one agent only, all
// with this filter (the sidecar keys guardians so), and each turn's thread then inherits it
// instead of loading it again. It returns the filter the guardian has (nil: none).
func filterSelf(pol confine.Policy) *confine.FilterOptions {
	if guardianFilter == nil && confine.FilterSupported() {
		if st := confine.Probe(); st.Available() {
			opts := pol.FilterOptions(st.ABI)
			if confine.InstallProcessFilter(opts) == nil {
				guardianFilter = &opts
			}
		}
	}
	return guardianFilter
}

// worldRuleset is a world guardian's ruleset, made at its first turn from the policy its world
// was made from (worldPolicy, encoded): its later turns, which have the same rules (the sidecar
// keys world guardians by them), reuse it.
var (
	worldRuleset *confine.Ruleset
	worldPolicy  string
)

// restrictThread confines the calling thread with pol (encoded: the request's policy field).
func restrictThread(pol confine.Policy, encoded []string) (int, error) {
	if !pol.World {
		return pol.RestrictThread()
	}
	key := strings.Join(encoded, "\x00")
	if worldRuleset == nil || worldPolicy != key {
		r, err := pol.Prepare()
		if err != nil {
			return 0, err
		}
		if worldRuleset != nil {
			worldRuleset.Close()
		}
		worldRuleset, worldPolicy = r, key
	}
	return worldRuleset.RestrictThread()
}

// oneLine keeps a note on the reply's line.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\t", " ").Replace(s) }

// guardTurn runs one turn to the end of its whole tree; false when the guardian must exit.
func guardTurn(t guardianTurn, reply func(string, ...any), lifelineGone <-chan struct{}, sigs <-chan os.Signal) bool {
	leader := t.leader
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
				// code spares killTree its scans of /proc.
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
	grace := t.grace
	keep := true
	select {
	case code = <-leaderExit:
	case <-lifelineGone:
		grace = 0 // the sidecar is gone: nobody waits for a graceful end
		keep = false
	case <-sigs:
		keep = false
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
	reply("exit %d", code)
	return keep
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

// parentPID reads the ppid field of /proc/PID/stat.
func parentPID(pid int) (int, bool) {
	ppid, _, ok := procParent(pid)
	return ppid, ok
}

// readGuardianTurn reads one request from fd: a 4-byte big-endian length sent with the
// agent's stdin, stdout and stderr as SCM_RIGHTS, then that many bytes of encoded
// guardianRequest. io.EOF before its first byte means the sidecar is gone (or dismissed
// this guardian).
func readGuardianTurn(fd int) (guardianRequest, []*os.File, error) {
	var hdr [4]byte
	oob := make([]byte, syscall.CmsgSpace(3*4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = syscall.Recvmsg(fd, hdr[:], oob, syscall.MSG_CMSG_CLOEXEC)
		if err != syscall.EINTR {
			break
		}
	}
	if n == 0 && err == nil {
		err = io.EOF
	}
	if err != nil {
		return guardianRequest{}, nil, err
	}
	var stdio []*os.File
	if msgs, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			fds, err := syscall.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			for _, fd := range fds {
				stdio = append(stdio, os.NewFile(uintptr(fd), "stdio"))
			}
		}
	}
	fail := func(err error) (guardianRequest, []*os.File, error) {
		for _, f := range stdio {
			f.Close()
		}
		return guardianRequest{}, nil, err
	}
	if len(stdio) != 3 {
		return fail(fmt.Errorf("request with %d descriptors, want 3", len(stdio)))
	}
	if err := readFullFD(fd, hdr[n:]); err != nil {
		return fail(err)
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > maxGuardianRequest {
		return fail(fmt.Errorf("request of %d bytes", size))
	}
	body := make([]byte, size)
	if err := readFullFD(fd, body); err != nil {
		return fail(err)
	}
	req, err := decodeGuardianRequest(body)
	if err != nil {
		return fail(err)
	}
	return req, stdio, nil
}

func readFullFD(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Read(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
}
