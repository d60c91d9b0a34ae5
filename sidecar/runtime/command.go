package runtime

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Command is a program run on an agent's behalf that is not one of its turns: a check the
// flow runs in the agent's folder (params.test_command, params.verify_command), its
// runtime.setup. It starts as the agent's turns do (spawnOS, the one way this package starts
// a process): confined by the agent's rules, with the environment the flow gives the agent
// (never the sidecar's), in a session of its own. Its output is plain text, never read for
// protocol blocks: what an agent's files print cannot ask the person anything.
type Command struct {
	// Agent is the agent whose rules, environment and folders apply (its Spec as for a turn;
	// the backend, CLI settings and protocol options are not used).
	Agent Spec
	Argv  []string
	// Dir is the working folder ("" for the agent's: Spec.workDir). A relative program in
	// Argv ("./check.sh") is found there.
	Dir string
	// MaxOutput caps the output kept (stdout and stderr as they came), 1 MiB when 0.
	MaxOutput int
	// Timeout, when positive, ends the command with SIGTERM, then SIGKILL after
	// Agent.StopGrace.
	Timeout time.Duration
	// OnLine, when set, gets each line of output (stream "stdout" or "stderr"), secrets
	// redacted, at most 4000 bytes each.
	OnLine func(stream, line string)
}

// CommandResult is how a Command ended.
type CommandResult struct {
	ExitCode int // 128+N when killed by signal N
	// Output is the first MaxOutput bytes of output, secrets redacted; Truncated says
	// there was more.
	Output    []byte
	Truncated bool
	// TimedOut: the Timeout ended it; Stopped: the context did.
	TimedOut, Stopped bool
	// Warnings say what the agent's turns would say about its confinement (a turn that runs
	// unconfined in auto mode, network none not enforced).
	Warnings []string
}

// Passed reports whether the command exited 0 by itself.
func (r CommandResult) Passed() bool { return r.ExitCode == 0 && !r.TimedOut && !r.Stopped }

const defaultMaxOutput = 1 << 20

// RunCommand runs c and waits until it and everything it started are gone.
func RunCommand(ctx context.Context, c Command) (CommandResult, error) {
	if len(c.Argv) == 0 {
		return CommandResult{}, errors.New("runtime: no command")
	}
	if ctx.Err() != nil {
		return CommandResult{ExitCode: -1, Stopped: true}, nil // stopped before it started
	}
	s := c.Agent
	s.BackendID, s.Command, s.Interactive, s.MCPServers = BackendCommand, c.Argv, false, nil
	if err := s.validate(); err != nil {
		return CommandResult{}, err
	}
	dir := c.Dir
	if dir == "" {
		var err error
		if dir, err = s.workDir(); err != nil {
			return CommandResult{}, err
		}
	}
	env := s.environ(nil, 1)
	conf, warnings, err := newConfinement(&s, BackendCommand, dir, env)
	if err != nil {
		return CommandResult{}, fmt.Errorf("runtime: agent %s: %w", s.AgentID, err)
	}
	defer conf.remove()
	if conf != nil {
		env = s.environ(conf.env(), 1)
	}
	var red redactor
	for n, v := range s.Env {
		if s.secret(n) { // only secrets, as for the agent's own turns
			red.add(n, v)
		}
	}
	oc, err := spawnOS(c.Argv, dir, env, "", false, conf)
	if err != nil {
		return CommandResult{}, red.err(fmt.Errorf("runtime: agent %s: %w", s.AgentID, err))
	}
	if oc.unconfined != "" {
		warnings = append(warnings, "this command runs unconfined: "+oc.unconfined)
	}
	if oc.noWorld != "" {
		warnings = append(warnings, noWorldWarning+oc.noWorld)
	}
	res := CommandResult{Warnings: warnings}
	out := &boundedOutput{max: c.MaxOutput, red: &red, onLine: c.OnLine}
	if out.max <= 0 {
		out.max = defaultMaxOutput
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); out.read("stdout", oc.stdout()) }()
	go func() { defer readers.Done(); out.read("stderr", oc.stderr()) }()
	res.ExitCode, res.TimedOut, res.Stopped = waitCommand(ctx, oc, c.Timeout, s.StopGrace)
	readers.Wait()
	oc.release()
	res.Output, res.Truncated = out.buf.Bytes(), out.truncated
	if oc.failure != "" {
		return res, errors.New(oc.failure)
	}
	return res, nil
}

// waitCommand waits for the command's tree to end, ending it on timeout or cancellation.
func waitCommand(ctx context.Context, oc *osChild, timeout, grace time.Duration) (code int, timedOut, stopped bool) {
	if grace <= 0 {
		grace = defaultStopGrace
	}
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	var kill <-chan time.Time
	done := ctx.Done()
	term := func() {
		_ = oc.signal(sigTerm)
		_ = oc.signal(sigResume)
		t := time.NewTimer(grace)
		kill = t.C
	}
	waited := make(chan int, 1)
	go func() { waited <- oc.wait() }()
	for {
		select {
		case code = <-waited:
			return code, timedOut, stopped
		case <-expire:
			expire, timedOut = nil, true
			term()
		case <-done:
			done, stopped = nil, true
			term()
		case <-kill:
			kill = nil
			_ = oc.signal(sigKill)
		}
	}
}

// boundedOutput keeps a command's output as it comes from both streams, up to max bytes.
type boundedOutput struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	max       int
	truncated bool
	red       *redactor
	onLine    func(stream, line string)
}

func (o *boundedOutput) read(stream string, r io.Reader) {
	if r == nil {
		return
	}
	br := bufio.NewReaderSize(r, readChunk)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			o.add(stream, line)
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

func (o *boundedOutput) add(stream string, b []byte) {
	text := o.red.str(string(b))
	o.mu.Lock()
	if room := o.max - o.buf.Len(); room < len(text) {
		o.buf.WriteString(text[:max(room, 0)])
		o.truncated = true
	} else {
		o.buf.WriteString(text)
	}
	o.mu.Unlock()
	if o.onLine != nil {
		o.onLine(stream, truncate(string(bytes.TrimRight([]byte(text), "\r\n")), 4000))
	}
}
