//go:build unix

package runtime

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// osChild is one agent process group. On Linux it is started through the guardian (see
// guardian_linux.go), so pid() is the agent's pid, which is also its process-group id.
type osChild struct {
	cmd      *exec.Cmd
	agentPID int
	out, err *os.File
	in       stdinWriter

	status   *bufio.Reader // guardian status lines; nil without a guardian
	statusR  *os.File
	lifeline *os.File // write end held open while the guardian runs

	mu   sync.Mutex
	gone bool // the group was reaped: stop signalling (its id may be reused)
	done chan struct{}
	code int
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
	return syscall.Kill(-c.agentPID, sig)
}

func (c *osChild) wait() int {
	<-c.done
	return c.code
}

// guardianEnv marks a re-execution of this binary as an agent's guardian.
const (
	guardianEnv   = "AGENTCANVAS_GUARDIAN"
	guardianMagic = "v1"
	// guardianGraceEnv is how long leftovers of a finished agent get between SIGTERM and SIGKILL.
	guardianGraceEnv = "AGENTCANVAS_GUARDIAN_GRACE_MS"
)

// spawnOS starts argv in dir with exactly env, in its own process group.
func spawnOS(argv []string, dir string, env []string, stdinData string, keepStdin bool) (*osChild, error) {
	exe := argv[0]
	if strings.Contains(exe, "/") && !filepath.IsAbs(exe) {
		exe = filepath.Join(dir, exe) // ./agents/x.sh is relative to the agent's working folder
	}
	path, err := lookPath(exe, env)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, err
	}
	c := &osChild{out: outR, err: errR, done: make(chan struct{})}
	c.in.w = inW

	var lifeR, statW *os.File
	useGuardian := guardianSupported
	if useGuardian {
		self, err := os.Executable()
		if err != nil {
			useGuardian = false
		} else {
			var err4, err5 error
			var lifeW, statR *os.File
			lifeR, lifeW, err4 = pipe()
			statR, statW, err5 = pipe()
			if err := errors.Join(err4, err5); err != nil {
				closeAll()
				return nil, err
			}
			c.lifeline = lifeW
			c.status, c.statusR = bufio.NewReader(statR), statR
			c.cmd = exec.Command(self, append([]string{path}, argv[1:]...)...)
			c.cmd.Env = append(append([]string(nil), env...), guardianEnv+"="+guardianMagic)
			c.cmd.ExtraFiles = []*os.File{lifeR, statW}
		}
	}
	if !useGuardian {
		c.cmd = exec.Command(path, argv[1:]...)
		c.cmd.Env = env
	}
	c.cmd.Args[0] = argv[0]
	c.cmd.Dir = dir
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = inR, outW, errW
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil && useGuardian {
		// Our own binary cannot be re-executed (deleted by an upgrade, say): run the agent
		// directly, still in its own group, without the guardian's guarantees.
		c.lifeline.Close()
		c.statusR.Close()
		c.status, c.lifeline, c.statusR = nil, nil, nil
		direct := exec.Command(path, argv[1:]...)
		direct.Args[0], direct.Env, direct.Dir = argv[0], env, dir
		direct.Stdin, direct.Stdout, direct.Stderr = inR, outW, errW
		direct.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		c.cmd = direct
		if err := c.cmd.Start(); err != nil {
			closeAll()
			return nil, fmt.Errorf("start %s: %w", argv[0], err)
		}
	} else if err != nil {
		closeAll()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	// Only the child keeps its ends of the pipes.
	for _, f := range []*os.File{inR, outW, errW, lifeR, statW} {
		if f != nil {
			f.Close()
		}
	}
	if c.status != nil {
		line, _ := c.status.ReadString('\n')
		line = strings.TrimSpace(line)
		pidStr, ok := strings.CutPrefix(line, "started ")
		pid, perr := strconv.Atoi(pidStr)
		if !ok || perr != nil {
			c.cmd.Wait()
			c.lifeline.Close()
			c.statusR.Close()
			outR.Close()
			errR.Close()
			inW.Close()
			msg := strings.TrimPrefix(line, "error ")
			if msg == "" {
				msg = "the guardian ended before starting the agent"
			}
			return nil, fmt.Errorf("start %s: %s", argv[0], msg)
		}
		c.agentPID = pid
	} else {
		c.agentPID = c.cmd.Process.Pid
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

func (c *osChild) reap() {
	err := c.cmd.Wait()
	code := c.cmd.ProcessState.ExitCode()
	if c.status != nil {
		// The guardian reports the agent's own exit after it has cleaned up the tree.
		line, _ := c.status.ReadString('\n')
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "exit "); ok {
			if n, err := strconv.Atoi(s); err == nil {
				code = n
			}
		}
		c.lifeline.Close()
		c.statusR.Close()
	} else {
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
	close(c.done)
}
