package runtime

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// The sidecar's side of the guardians (guardian_linux.go): starting them, keeping idle ones,
// and one turn's request and replies.

// spawnGuarded starts a turn through a guardian; (nil, nil) when no guardian can be started.
func spawnGuarded(req guardianRequest) (*osChild, error) {
	body, err := req.encode()
	if err != nil {
		return nil, err
	}
	s, err := newStdio()
	if err != nil {
		return nil, err
	}
	g, idle := takeGuardian(req.owner, req.world)
	var pid int
	var notes map[string]string
	if g != nil {
		pid, notes, err = g.startTurn(body, s.inR, s.outW, s.errW)
		retry := err == errGuardianGone && idle // the idle guardian died while it waited (killed by someone)
		if werr := worldError(fmt.Sprint(err)); werr != nil || err == errGuardianGone && !idle && req.world != nil {
			// Its world could not be made: worlds go off, and the turn goes on in an
			// ordinary guardian.
			worldFailed(cmp.Or(werr, err))
			req.world, retry = nil, true
		}
		if retry {
			if g, err = newGuardian(req.owner, req.world), nil; g != nil {
				pid, notes, err = g.startTurn(body, s.inR, s.outW, s.errW)
			}
		}
	}
	if g == nil || err != nil {
		s.closeChildEnds()
		s.closeOurEnds()
		return nil, err
	}
	c := s.started(pid)
	c.g = g
	c.unconfined, c.noWorld = notes["unconfined"], notes["noworld"]
	if c.noWorld != "" {
		worldFailed(errors.New(c.noWorld))
	}
	return c, nil
}

// guardian is a running guardian process and the sidecar's end of its control socket.
type guardian struct {
	cmd *exec.Cmd
	// fd is our end of the control socket: requests go out here, replies ("started PID",
	// "error MSG", "exit CODE") come back, and its EOF is the guardian's lifeline. It is in
	// blocking mode, as on the guardian's side: a reply wakes the reading thread itself,
	// without a hop through the network poller (a turn waits for two replies). One
	// goroutine at a time reads it, and it is closed only when none does.
	fd      int
	pending []byte // reply bytes read past the last line
	// owner is the one agent (run and agent id) whose turns this guardian serves: it never
	// holds, even in memory it has freed, another agent's environment.
	owner string
}

// Guardians between turns, for reuse: a turn through an idle guardian costs a few
// messages, one through a new guardian the start of a Go program (several times the cost
// of a small agent). Each has no child at all while idle, so reuse keeps it exact which
// turn every process re-parented to it belongs to.
var idleGuardians struct {
	sync.Mutex
	list []*guardian
}

// maxIdleGuardians bounds the guardians kept between turns (as many as agents ran at once,
// up to this).
const maxIdleGuardians = 8

// takeGuardian returns an idle guardian of owner (idle true) or a new one (in world when
// not nil); nil when this binary cannot be re-executed.
func takeGuardian(owner string, world *worldSpec) (g *guardian, idle bool) {
	idleGuardians.Lock()
	for i := len(idleGuardians.list) - 1; i >= 0; i-- {
		if idleGuardians.list[i].owner == owner {
			g = idleGuardians.list[i]
			idleGuardians.list = append(idleGuardians.list[:i], idleGuardians.list[i+1:]...)
			break
		}
	}
	idleGuardians.Unlock()
	if g != nil {
		return g, true
	}
	return newGuardian(owner, world), false
}

// putGuardian keeps a guardian whose turn has ended for its agent's next one, dismissing
// the one idle longest when there are too many.
func putGuardian(g *guardian) {
	idleGuardians.Lock()
	idleGuardians.list = append(idleGuardians.list, g)
	g = nil
	if len(idleGuardians.list) > maxIdleGuardians {
		g = idleGuardians.list[0]
		idleGuardians.list = idleGuardians.list[1:]
	}
	idleGuardians.Unlock()
	if g != nil {
		g.dismiss()
	}
}

// dismissGuardians ends the idle guardians of a run's agents: the run has ended.
func dismissGuardians(runID string) {
	idleGuardians.Lock()
	var gone []*guardian
	kept := idleGuardians.list[:0]
	for _, g := range idleGuardians.list {
		if strings.HasPrefix(g.owner, runID+"\x00") {
			gone = append(gone, g)
		} else {
			kept = append(kept, g)
		}
	}
	idleGuardians.list = kept
	idleGuardians.Unlock()
	for _, g := range gone {
		g.dismiss()
	}
}

// guardianEnviron is a guardian's whole environment: its marker, and the test hook that hides
// Landlock. Not the sidecar's: an agent must not find the sidecar's variables in it.
func guardianEnviron() []string {
	env := []string{guardianEnv + "=" + guardianMagic}
	for _, hook := range []string{confine.NoLandlockEnv, worldMountsRefusedEnv} {
		if v, ok := os.LookupEnv(hook); ok {
			env = append(env, hook+"="+v)
		}
	}
	return env
}

// newGuardian starts a guardian for owner's turns, in namespaces of its own for world (not
// nil); nil when this binary cannot be re-executed. Namespaces the kernel refuses turn worlds
// off, and the guardian starts without them.
func newGuardian(owner string, world *worldSpec) *guardian {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	theirs := os.NewFile(uintptr(fds[1]), "guardian")
	defer theirs.Close() // only the guardian keeps its end
	cmd := exec.Command(self)
	cmd.Args[0] = "agentcanvas-guardian"
	cmd.Env = guardianEnviron()
	cmd.ExtraFiles = []*os.File{theirs}
	// A session of its own, with no controlling terminal: the agents it starts, each in a
	// process group of its own in this session, can never reach the terminal the sidecar was
	// started from (TIOCSTI, escapes, job control), and their groups are not orphaned (their
	// parent, the guardian, is in the same session), so SIGTSTP still pauses them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	becomeSubreaper()
	closeOnExecInherited() // the guardian, and so its agents, get only the control socket
	if world != nil {
		cmd.SysProcAttr = worldAttrFor(world)
		cmd.Env = append(cmd.Env, guardianWorldEnv+"=1")
		if err := cmd.Start(); err == nil {
			addChild(cmd.Process.Pid)
			return &guardian{cmd: cmd, fd: fds[0], owner: owner}
		} else {
			worldFailed(fmt.Errorf("the kernel refused the namespaces: %w", err))
		}
		cmd = exec.Command(self)
		cmd.Args[0], cmd.Env, cmd.ExtraFiles = "agentcanvas-guardian", guardianEnviron(), []*os.File{theirs}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		syscall.Close(fds[0])
		return nil
	}
	addChild(cmd.Process.Pid)
	return &guardian{cmd: cmd, fd: fds[0], owner: owner}
}

var errGuardianGone = errors.New("the guardian ended before starting the agent")

// startTurn sends a request with the agent's stdio and waits for the guardian to say the
// agent started; notes are what the guardian added, by kind ("unconfined", "noworld").
func (g *guardian) startTurn(body []byte, stdin, stdout, stderr *os.File) (pid int, notes map[string]string, err error) {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
	rights := syscall.UnixRights(int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd()))
	err = g.send(hdr[:], rights)
	if err == nil {
		err = g.send(body, nil)
	}
	line := ""
	if err == nil {
		line, _ = g.readLine()
		line = strings.TrimSpace(line)
	}
	if s, ok := strings.CutPrefix(line, "started "); ok {
		fields := strings.Split(s, "\t")
		if pid, err := strconv.Atoi(fields[0]); err == nil {
			notes = map[string]string{}
			for _, f := range fields[1:] {
				if k, v, ok := strings.Cut(f, ": "); ok {
					notes[k] = v
				}
			}
			return pid, notes, nil
		}
	}
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		if worldError(msg) != nil {
			g.dismiss() // it exits: its view of the system is gone
		} else {
			putGuardian(g) // no agent started: ready for another turn (or gone, found next time)
		}
		return 0, nil, errors.New(msg)
	}
	g.dismiss()
	return 0, nil, errGuardianGone
}

// endTurn waits for the guardian's report that the agent's whole tree is gone; ok is false
// when the guardian itself died (its own exit status is then the best there is).
func (g *guardian) endTurn() (code int, ok bool) {
	line, err := g.readLine()
	if s, found := strings.CutPrefix(strings.TrimSpace(line), "exit "); found && err == nil {
		if n, err := strconv.Atoi(s); err == nil {
			return n, true
		}
	}
	return -1, false
}

// dismiss ends a guardian between turns (EOF on its lifeline) and reaps it.
func (g *guardian) dismiss() {
	syscall.Close(g.fd)
	go func() {
		_ = g.cmd.Wait()
		removeChild(g.cmd.Process.Pid)
	}()
}

// wait reaps a guardian that died during a turn.
func (g *guardian) wait() error {
	syscall.Close(g.fd)
	err := g.cmd.Wait()
	removeChild(g.cmd.Process.Pid)
	return err
}

// send writes b (with the descriptors in rights, if any) to the control socket.
func (g *guardian) send(b, rights []byte) error {
	for len(b) > 0 {
		n, err := syscall.SendmsgN(g.fd, b, rights, nil, syscall.MSG_NOSIGNAL)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b, rights = b[n:], nil // descriptors go with the first byte
	}
	return nil
}

// readLine returns the guardian's next reply line, newline included; an error when the
// guardian closed its end (it died) before a whole line.
func (g *guardian) readLine() (string, error) {
	for {
		if i := bytes.IndexByte(g.pending, '\n'); i >= 0 {
			line := string(g.pending[:i+1])
			g.pending = g.pending[i+1:]
			return line, nil
		}
		var buf [128]byte
		n, err := syscall.Read(g.fd, buf[:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", io.EOF
		}
		g.pending = append(g.pending, buf[:n]...)
	}
}
