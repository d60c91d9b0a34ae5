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

// spawnOS starts argv in dir with exactly env, in its own process group: through a guardian
// where there is one (Linux), directly otherwise.
func spawnOS(argv []string, dir string, env []string, stdinData string, keepStdin bool) (*osChild, error) {
	exe := argv[0]
	if strings.Contains(exe, "/") && !filepath.IsAbs(exe) {
		exe = filepath.Join(dir, exe) // ./agents/x.sh is relative to the agent's working folder
	}
	path, err := lookPath(exe, env)
	if err != nil {
		return nil, err
	}
	var c *osChild
	if guardianSupported {
		c, err = spawnGuarded(newGuardianRequest(path, argv, dir, env))
	}
	if c == nil && err == nil {
		// No guardian: our own binary cannot be re-executed (deleted by an upgrade, say).
		// Run the agent directly, still in its own group, without the guardian's guarantees.
		c, err = spawnDirect(path, argv, dir, env)
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

func spawnDirect(path string, argv []string, dir string, env []string) (*osChild, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeFiles(inR, inW, outR, outW)
		return nil, err
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0], cmd.Env, cmd.Dir = argv[0], env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	closeFiles(inR, outW, errW) // only the child keeps its ends
	if err != nil {
		closeFiles(inW, outR, errR)
		return nil, err
	}
	c := &osChild{cmd: cmd, agentPID: cmd.Process.Pid, out: outR, err: errR, done: make(chan struct{})}
	c.in.w = inW
	return c, nil
}

// spawnGuarded starts a turn through a guardian; (nil, nil) when no guardian can be started.
func spawnGuarded(req guardianRequest) (*osChild, error) {
	msg, err := req.encode()
	if err != nil {
		return nil, err
	}
	g, spare := takeGuardian()
	if g == nil {
		return nil, nil
	}
	c, err := g.startTurn(msg)
	if err == errGuardianGone && spare {
		// The spare died while it waited (killed by someone): once more with a new one.
		if g = newGuardian(); g == nil {
			return nil, nil
		}
		c, err = g.startTurn(msg)
	}
	return c, err
}

// guardian is a started guardian process waiting for its turn's request, with the
// sidecar's ends of its pipes.
type guardian struct {
	cmd      *exec.Cmd
	lifeline *os.File // the request goes here; then held open while the guardian runs
	status   *os.File
	stdin    *os.File
	stdout   *os.File
	stderr   *os.File
}

// The spare guardian, started one turn ahead: a Go binary takes milliseconds to start, and
// doing that while the previous turn runs takes it off every turn's path. It holds no
// agent and no state, so one spare serves any agent; it exits when the sidecar does.
var spareGuardian struct {
	sync.Mutex
	g        *guardian
	starting bool
}

// takeGuardian returns the spare guardian (spare true) or a new one, and has the next spare
// started in the background. It returns nil when this binary cannot be re-executed.
func takeGuardian() (g *guardian, spare bool) {
	spareGuardian.Lock()
	g, spareGuardian.g = spareGuardian.g, nil
	spareGuardian.Unlock()
	spare = g != nil
	if g == nil {
		if g = newGuardian(); g == nil {
			return nil, false
		}
	}
	go refillSpareGuardian()
	return g, spare
}

func refillSpareGuardian() {
	spareGuardian.Lock()
	if spareGuardian.g != nil || spareGuardian.starting {
		spareGuardian.Unlock()
		return
	}
	spareGuardian.starting = true
	spareGuardian.Unlock()
	g := newGuardian()
	spareGuardian.Lock()
	spareGuardian.starting = false
	if spareGuardian.g == nil {
		spareGuardian.g, g = g, nil
	}
	spareGuardian.Unlock()
	if g != nil { // a spare appeared meanwhile (cannot today; harmless if it ever does)
		g.abandon()
	}
}

// newGuardian starts a guardian; nil when this binary cannot be re-executed.
func newGuardian() *guardian {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	var files []*os.File
	pipe := func() (r, w *os.File) {
		if r, w, err2 := os.Pipe(); err2 == nil {
			files = append(files, r, w)
			return r, w
		} else if err == nil {
			err = err2
		}
		return nil, nil
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	lifeR, lifeW := pipe()
	statR, statW := pipe()
	if err != nil {
		closeFiles(files...)
		return nil
	}
	cmd := exec.Command(self)
	cmd.Args[0] = "agentcanvas-guardian"
	cmd.Env = append(os.Environ(), guardianEnv+"="+guardianMagic)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.ExtraFiles = []*os.File{lifeR, statW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	closeFiles(inR, outW, errW, lifeR, statW) // only the guardian keeps its ends
	if err != nil {
		closeFiles(inW, outR, errR, lifeW, statR)
		return nil
	}
	return &guardian{cmd: cmd, lifeline: lifeW, status: statR, stdin: inW, stdout: outR, stderr: errR}
}

var errGuardianGone = errors.New("the guardian ended before starting the agent")

// startTurn sends the request and waits for the guardian to say the agent started.
func (g *guardian) startTurn(request []byte) (*osChild, error) {
	status := bufio.NewReader(g.status)
	_, err := g.lifeline.Write(request)
	line := ""
	if err == nil {
		line, _ = status.ReadString('\n')
		line = strings.TrimSpace(line)
	}
	pid, perr := strconv.Atoi(strings.TrimPrefix(line, "started "))
	if !strings.HasPrefix(line, "started ") || perr != nil {
		g.abandon()
		if msg, ok := strings.CutPrefix(line, "error "); ok {
			return nil, errors.New(msg)
		}
		return nil, errGuardianGone
	}
	c := &osChild{cmd: g.cmd, agentPID: pid, out: g.stdout, err: g.stderr, done: make(chan struct{}),
		status: status, statusR: g.status, lifeline: g.lifeline}
	c.in.w = g.stdin
	return c, nil
}

// abandon ends a guardian that has no agent (EOF on its lifeline) and frees its pipes.
func (g *guardian) abandon() {
	closeFiles(g.lifeline, g.stdin, g.stdout, g.stderr)
	_ = g.cmd.Wait()
	g.status.Close()
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
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
