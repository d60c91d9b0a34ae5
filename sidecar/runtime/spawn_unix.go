//go:build unix

package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// osChild is one agent process group. On Linux it is started through the guardian (see
// guardian_linux.go), so pid() is the agent's pid, which is also its process-group id.
type osChild struct {
	g        *guardian // the turn's guardian; nil when started directly
	cmd      *exec.Cmd // the agent, when started directly
	agentPID int
	out, err *os.File
	in       stdinWriter
	// unconfined says why a turn that was to be confined is not (auto mode only); noWorld
	// why a confined turn has no world of its own where worlds were on.
	unconfined, noWorld string
	// failure says why the turn failed whatever the agent did: its guardian died.
	failure string

	mu     sync.Mutex
	gone   bool // the group was reaped: stop signalling (its id may be reused)
	pauses int  // how many times the group was paused: a later pause ends a resume's checks
	done   chan struct{}
	code   int
}

func (c *osChild) stdout() io.Reader         { return c.out }
func (c *osChild) stderr() io.Reader         { return c.err }
func (c *osChild) writeStdin(s string) error { return c.in.write(s) }
func (c *osChild) closeStdin()               { c.in.close() }
func (c *osChild) pid() int                  { return c.agentPID }

func (c *osChild) release() {
	c.in.close()
	c.out.Close()
	c.err.Close()
}

func (c *osChild) signal(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return syscall.ESRCH
	}
	if sig == sigPause {
		c.pauses++
		if c.g == nil {
			sig = syscall.SIGSTOP // a session of its own: SIGTSTP is discarded (spawnDirect)
		}
	}
	err := syscall.Kill(-c.agentPID, sig)
	if err == nil && sig == sigResume && resumeCheckable {
		go c.settleResume(c.pauses)
	}
	return err
}

func (c *osChild) wait() int {
	<-c.done
	return c.code
}

// spawnOS starts argv in dir with exactly env, in its own process group: through a guardian
// where there is one (Linux), directly otherwise; confined by conf's rules unless conf is nil.
func spawnOS(argv []string, dir string, env []string, stdinData string, keepStdin bool, conf *confinement) (*osChild, error) {
	exe := argv[0]
	if strings.Contains(exe, "/") && !filepath.IsAbs(exe) {
		exe = filepath.Join(dir, exe) // ./agents/x.sh is relative to the agent's working folder
	}
	path, err := lookPath(exe, env)
	if err != nil {
		return nil, err
	}
	var pol *confine.Policy
	if conf != nil {
		p := conf.policy(path, argv, env)
		pol = &p
	}
	var c *osChild
	if guardianSupported {
		req := newGuardianRequest(path, argv, dir, env)
		if pol != nil {
			req.policy = pol.Encode()
			// A guardian of confined turns filters itself (filterSelf): it serves no other kind.
			if req.world = worldFor(*pol); req.world != nil {
				req.owner += "\x00" + req.world.key
			} else {
				// Without a world the ABI changes nothing of the filter's options.
				req.owner += fmt.Sprintf("\x00confined %+v", pol.FilterOptions(0))
			}
		}
		c, err = spawnGuarded(req)
	}
	if c == nil && err == nil {
		// No guardian: our own binary cannot be re-executed (deleted by an upgrade, say).
		// Run the agent directly, still in its own group, without the guardian's guarantees.
		c, err = spawnDirect(path, argv, dir, env, pol)
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	go c.reap()
	go func() {
		if stdinData != "" {
			_ = c.in.write(stdinData) // EPIPE when the agent does not read its stdin: fine
		}
		if !keepStdin {
			c.in.close()
		}
	}()
	return c, nil
}

// stdio is a new agent's stdin, stdout and stderr pipes: the child's ends and the sidecar's.
type stdio struct {
	inR, outW, errW *os.File // the child's
	inW, outR, errR *os.File // ours
}

func newStdio() (*stdio, error) {
	var s stdio
	var err1, err2, err3 error
	s.inR, s.inW, err1 = os.Pipe()
	s.outR, s.outW, err2 = os.Pipe()
	s.errR, s.errW, err3 = os.Pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		s.closeChildEnds()
		s.closeOurEnds()
		return nil, err
	}
	return &s, nil
}

func (s *stdio) closeChildEnds() { closeFiles(s.inR, s.outW, s.errW) }
func (s *stdio) closeOurEnds()   { closeFiles(s.inW, s.outR, s.errR) }

// started is the osChild for this stdio once the agent started (the child's ends are closed:
// only the agent holds them now, so stdout's EOF means the agent's tree is done with it).
func (s *stdio) started(pid int) *osChild {
	s.closeChildEnds()
	c := &osChild{agentPID: pid, out: s.outR, err: s.errR, done: make(chan struct{})}
	c.in.w = s.inW
	return c
}

func spawnDirect(path string, argv []string, dir string, env []string, pol *confine.Policy) (*osChild, error) {
	s, err := newStdio()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0], cmd.Env, cmd.Dir = argv[0], env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.inR, s.outW, s.errW
	// A session of its own: no controlling terminal (see newGuardian). Its group is then
	// orphaned, where SIGTSTP does nothing: signal pauses it with SIGSTOP instead.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	unconfined := ""
	closeOnExecInherited() // its stdio only
	if pol == nil {
		err = cmd.Start()
	} else {
		// As the guardian does: the agent is forked from a thread of its own that carries
		// its rules and ends after the fork (no parent-death signal to keep it for).
		done := make(chan error)
		go func() {
			goruntime.LockOSThread() // never unlocked: the thread ends with this goroutine
			if _, rerr := pol.RestrictThread(); rerr != nil {
				if pol.Required {
					done <- fmt.Errorf("confinement: %w", rerr)
					return
				}
				unconfined = rerr.Error()
			}
			done <- cmd.Start()
		}()
		err = <-done
	}
	if err != nil {
		s.closeChildEnds()
		s.closeOurEnds()
		return nil, err
	}
	// Set after the start, unlike the guardian's: what the agent forks before this keeps the
	// sidecar's score and core limit. A fallback's weaker guarantee (docs/security.md).
	_ = setAgentLimits(cmd.Process.Pid)
	c := s.started(cmd.Process.Pid)
	c.cmd = cmd
	c.unconfined = unconfined
	return c, nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

func (c *osChild) reap() {
	code := -1
	var err error
	var reuse *guardian
	if c.g != nil {
		// The guardian reports the agent's own exit after it has ended the whole tree.
		var ok bool
		if code, ok = c.g.endTurn(); ok {
			reuse = c.g
		} else {
			// The guardian died (killed by someone outside: no agent can signal it). What
			// is left of the agent's group goes, and so does everything the sidecar adopted
			// from the guardian (setsid'd grandchildren included); the turn fails.
			_ = syscall.Kill(-c.agentPID, syscall.SIGKILL)
			err = c.g.wait()
			code = c.g.cmd.ProcessState.ExitCode()
			n := endAdopted()
			c.failure = fmt.Sprintf("the guardian of this turn died (%s) while the agent ran: the agent and the %d processes it left were ended", c.g.cmd.ProcessState, n)
		}
	} else {
		err = c.cmd.Wait()
		code = c.cmd.ProcessState.ExitCode()
		// Without a guardian: whatever is left in the agent's group goes with it.
		_ = syscall.Kill(-c.agentPID, syscall.SIGKILL)
	}
	if code < 0 {
		code = 128
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		}
	}
	c.mu.Lock()
	c.gone = true
	c.code = code
	c.mu.Unlock()
	c.in.close()
	// Back to the idle guardians after c.gone (no signal of this turn may reach its next
	// agent) and before done (the agent's next turn finds it there).
	if reuse != nil {
		putGuardian(reuse)
	}
	close(c.done)
}
