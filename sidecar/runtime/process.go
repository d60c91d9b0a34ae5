package runtime

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
)

// Errors of the control methods.
var (
	ErrFinished   = errors.New("runtime: the agent has finished")
	ErrNotPending = errors.New("runtime: no such pending request")
)

// Process is one running agent: one or more turns (process invocations) of its backend.
type Process struct {
	spec    Spec
	be      backend
	prompt  string
	dir     string
	ctx     context.Context
	backend string

	conf    *confinement // nil: unconfined
	denials denials
	// homeSnap is the private CLI home's watched files as the current turn started.
	homeSnap map[string]string

	mu       sync.Mutex
	red      redactor
	cur      child
	closed   bool              // the event stream is closed
	extraEnv map[string]string // values of provided dependencies, for later turns

	resolveCh  chan resolution
	stopCh     chan struct{}
	stopOnce   sync.Once
	stopReason string

	in     chan<- Event
	out    <-chan Event
	done   chan struct{}
	result Result
	nextID map[PendingKind]int
}

// resolution is a call of Answer, ProvideDependency, RejectDependency or Continue.
type resolution struct {
	id     string
	kind   PendingKind
	reject bool
	value  string
	reason string
	// timedOut: the dependency timeout resolved it (as a rejection), not a person.
	timedOut bool
	errc     chan error
}

// Start starts an agent with its first prompt. Errors that prevent the first turn from
// starting (bad spec, no such backend, executable not found) are returned here; anything
// later ends up in the Result. The process stops when ctx is cancelled.
func Start(ctx context.Context, spec Spec, prompt string) (*Process, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	dir, err := spec.workDir()
	if err != nil {
		return nil, err
	}
	be, err := resolveBackend(&spec, spec.environ(nil, 1))
	if err != nil {
		return nil, err
	}
	conf, confWarnings, err := newConfinement(&spec, be.id(), dir, spec.environ(nil, 1))
	if err != nil {
		return nil, fmt.Errorf("runtime: agent %s: %w", spec.AgentID, err)
	}
	spec.confined = conf != nil
	if spec.ResumeBackend != "" && spec.ResumeBackend != be.id() {
		spec.ResumeSession = "" // another backend's session: a fresh context
	}
	if spec.StopGrace <= 0 {
		spec.StopGrace = defaultStopGrace
	}
	if spec.DependencyTimeout <= 0 {
		spec.DependencyTimeout = defaultDependencyTimeout
	}
	if spec.MaxFollowUpTurns <= 0 {
		spec.MaxFollowUpTurns = defaultMaxFollowUps
	}
	in, out := eventPump()
	p := &Process{
		spec: spec, be: be, prompt: prompt, dir: dir, ctx: ctx, backend: be.id(), conf: conf,
		extraEnv:  map[string]string{},
		resolveCh: make(chan resolution),
		stopCh:    make(chan struct{}),
		in:        in, out: out,
		done:   make(chan struct{}),
		nextID: map[PendingKind]int{},
	}
	for n, v := range spec.Env {
		if spec.secret(n) { // only secrets: a value such as DB_CHOICE=postgres is no secret
			p.red.add(n, v)
		}
	}
	for _, w := range append(mcpWarnings(be.id(), spec.MCPServers), confWarnings...) {
		p.emit(Event{Kind: EventWarning, Reason: w})
	}
	first := turnInput{prompt: prompt, resume: spec.ResumeSession, turn: 1}
	c, err := p.startTurn(first)
	if err != nil {
		conf.remove()
		close(in)
		return nil, p.red.err(fmt.Errorf("runtime: agent %s (%s): %w", spec.AgentID, be.id(), err))
	}
	go p.run(c, first)
	return p, nil
}

// Events is the agent's event stream, closed after the EventExit. Read it to the end (or not
// at all: events are queued in memory, never dropped and never blocking the agent).
func (p *Process) Events() <-chan Event { return p.out }

// Redact replaces the secret values this agent was given (its environment, the dependency
// values delivered to it) in s, as everything the runtime reports is: the engine keeps the
// prompt it sent in the run's transcript.
func (p *Process) Redact(s string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.red.str(s)
}

// Wait blocks until the agent is finished and returns its result.
func (p *Process) Wait() Result {
	<-p.done
	return p.result
}

// Done is closed when the agent is finished.
func (p *Process) Done() <-chan struct{} { return p.done }

// Backend is the backend id actually used (auto resolved).
func (p *Process) Backend() string { return p.backend }

// PID is the process-group id of the current turn (0 for dry-run or between turns).
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return 0
	}
	return p.cur.pid()
}

// Stop ends the agent: SIGTERM to its process group, SIGKILL after the grace period. The
// result's status is stopped (unless it had already finished).
func (p *Process) Stop(reason string) {
	p.stopOnce.Do(func() {
		if reason == "" {
			reason = "stopped"
		}
		p.mu.Lock()
		p.stopReason = reason
		p.mu.Unlock()
		close(p.stopCh)
	})
}

// Pause stops the agent's process group (SIGTSTP) by hand; Resume continues it (SIGCONT).
func (p *Process) Pause() error  { return p.signalCurrent(true) }
func (p *Process) Resume() error { return p.signalCurrent(false) }

func (p *Process) signalCurrent(pause bool) error {
	select {
	case <-p.done:
		return ErrFinished
	default:
	}
	p.mu.Lock()
	c := p.cur
	p.mu.Unlock()
	if c == nil {
		return ErrFinished
	}
	if pause {
		err := c.signal(sigPause)
		if err == nil {
			p.emit(Event{Kind: EventPaused, Reason: "paused by request"})
		}
		return err
	}
	err := c.signal(sigResume)
	if err == nil {
		p.emit(Event{Kind: EventResumed, Reason: "resumed by request"})
	}
	return err
}

// Answer answers a pending [USER_QUESTION].
func (p *Process) Answer(questionID, answer string) error {
	return p.resolve(resolution{id: questionID, kind: PendingQuestion, value: answer})
}

// ProvideDependency provides the value of a pending [DEPENDENCY_REQUEST]. The value is
// validated for the request's type; an invalid value is refused and the request stays
// pending. Secret types (api_key, env_variable, service) reach only the agent's environment
// (and its stdin when interactive) and are scrubbed from all output.
func (p *Process) ProvideDependency(id, value string) error {
	return p.resolve(resolution{id: id, kind: PendingDependency, value: value})
}

// RejectDependency rejects a pending dependency: a required one fails the agent, an optional
// one is resumed with the block's `default` (an empty value without one).
func (p *Process) RejectDependency(id, reason string) error {
	return p.resolve(resolution{id: id, kind: PendingDependency, reject: true, reason: reason})
}

// Continue resumes an agent paused at === PHASE N COMPLETE === (Spec.PauseOnPhaseComplete).
func (p *Process) Continue(id string) error {
	return p.resolve(resolution{id: id, kind: PendingPhase})
}

// Rework resumes an agent paused at a completed phase with the reason the phase must be
// done again (a failed verification); the agent gets it as its next input.
func (p *Process) Rework(id, feedback string) error {
	return p.resolve(resolution{id: id, kind: PendingPhase, reject: true, reason: feedback})
}

func (p *Process) resolve(r resolution) error {
	r.errc = make(chan error, 1)
	select {
	case p.resolveCh <- r:
		return <-r.errc
	case <-p.done:
		return ErrFinished
	}
}

// emit scrubs secrets from ev and queues it.
func (p *Process) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	p.mu.Lock()
	r := &p.red
	ev.Text = r.str(ev.Text)
	ev.Reason = r.str(ev.Reason)
	ev.Path = r.str(ev.Path)
	if ev.Data != nil {
		ev.Data = r.any(ev.Data).(map[string]any)
	}
	if ev.Input != nil {
		ev.Input = r.any(ev.Input).(map[string]any)
	}
	if ev.Argv != nil {
		ev.Argv = r.any(ev.Argv).([]string)
	}
	if ev.Block != nil {
		b := *ev.Block
		b.Error, b.Raw = r.str(b.Error), r.str(b.Raw)
		if b.Fields != nil {
			b.Fields = r.any(b.Fields).(map[string]any)
		}
		ev.Block = &b
	}
	if ev.Pending != nil {
		pd := *ev.Pending
		pd.raw = pd.RawFields()
		pd.Fields = r.any(pd.Fields).(map[string]any)
		ev.Pending = &pd
	}
	if ev.Result != nil {
		res := *ev.Result
		res.Reply, res.Reason = r.str(res.Reply), r.str(res.Reason)
		if res.Handoff != nil {
			res.Handoff = r.any(res.Handoff).(map[string]any)
		}
		ev.Result = &res
	}
	// Sent under the lock so that nothing is sent after run has closed the stream (a late
	// Pause, say); the pump never waits for p.mu, so this cannot deadlock.
	if !p.closed {
		p.in <- ev
	}
	p.mu.Unlock()
}

// startTurn starts one process invocation.
func (p *Process) startTurn(in turnInput) (child, error) {
	var c child
	var argv []string
	if p.be.id() == BackendDryRun {
		text, err := dryRunReply(&p.spec, in)
		if err != nil {
			return nil, err
		}
		c, argv = startInproc(text), []string{"(dry-run)"}
	} else {
		var err error
		argv, err = p.be.argv(&p.spec, in)
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		extra := make(map[string]string, len(p.extraEnv))
		for k, v := range p.extraEnv {
			extra[k] = v
		}
		p.mu.Unlock()
		if es, ok := p.be.(envSetter); ok {
			for k, v := range es.env(&p.spec) {
				if _, listed := p.spec.Env[k]; !listed {
					extra[k] = v
				}
			}
		}
		if p.conf != nil {
			for k, v := range p.conf.env() {
				extra[k] = v
			}
		}
		keep := p.spec.Interactive && p.be.id() == BackendCommand
		p.homeSnap = p.conf.homeSnapshot()
		oc, err := spawnOS(argv, p.dir, p.spec.environ(extra, in.turn), p.be.stdin(&p.spec, in), keep, p.conf)
		if err != nil {
			return nil, err
		}
		if oc.unconfined != "" {
			p.emit(Event{Kind: EventWarning, Turn: in.turn, Reason: "this turn runs unconfined: " + oc.unconfined})
		}
		if oc.noWorld != "" {
			p.emit(Event{Kind: EventWarning, Turn: in.turn, Reason: noWorldWarning + oc.noWorld})
		}
		c = oc
	}
	p.mu.Lock()
	p.cur = c
	p.mu.Unlock()
	shown := make([]string, len(argv))
	for i, a := range argv {
		if a == in.prompt && a != "" {
			a = "<prompt>"
		}
		shown[i] = a
	}
	p.emit(Event{Kind: EventStarted, Turn: in.turn, PID: c.pid(), Argv: shown})
	return c, nil
}

// agentState is what the supervisor learns across the turns of one agent.
type agentState struct {
	failReason string
	handoff    map[string]any
	carry      []string // answers for the next turn
	// recoverable is the message of a recoverable [ERROR] of the current turn; retries
	// counts the turns retried after one (recoverable.go).
	recoverable string
	retries     int
	// skipped is the message of an [ERROR] the person chose to skip (notify_user): the turn's
	// failure, if it fails, is not the agent's.
	skipped string
	pauses  int // pauses for recoverable errors
	invalid int // invalid protocol blocks (HANDOFFs aside) so far
}

// maxInvalidBlocks invalid protocol blocks are sent back to the agent to be printed again;
// one more fails it as the spec's fatal "Invalid protocol format".
const maxInvalidBlocks = 3

// followUpPreface introduces the answers in a follow-up turn's prompt.
const followUpPreface = "[AGENTCANVAS] Answers to your pending requests follow. Continue your task.\n\n"

func (p *Process) run(c child, in turnInput) {
	res := Result{Backend: p.be.id()}
	st := &agentState{}
	for {
		res.Turns++
		out, code, stopped := p.runTurn(c, in, st)
		if msg := p.conf.homeChanges(p.homeSnap, p.conf.homeSnapshot()); msg != "" {
			p.emit(Event{Kind: EventWarning, Turn: in.turn, Reason: msg})
		}
		res.Usage.add(out.usage)
		if out.costKnown {
			res.CostUSD += out.cost
			res.CostKnown = true
		}
		res.Reply, res.ExitCode = out.reply, code
		if out.sessionID != "" {
			res.SessionID = out.sessionID
		}
		if stopped {
			p.mu.Lock()
			res.Status, res.Reason = StatusStopped, p.stopReason
			p.mu.Unlock()
			break
		}
		if st.failReason != "" {
			res.Status, res.Reason = StatusFailed, st.failReason
			break
		}
		if out.failed && st.skipped != "" {
			out.failed = p.skipFailure(st, in.turn) // the person chose to go on past the error
		}
		if out.failed && (st.recoverable == "" || !p.retryAfterError(st, &res)) {
			if res.Status == "" {
				res.Status, res.Reason = StatusFailed, out.reason
			}
			break
		}
		st.recoverable, st.skipped = "", "" // the turn got past it
		if len(st.carry) == 0 {
			res.Status = StatusCompleted
			break
		}
		if res.Turns > p.spec.MaxFollowUpTurns {
			res.Status, res.Reason = StatusFailed, fmt.Sprintf("more than %d follow-up turns", p.spec.MaxFollowUpTurns)
			break
		}
		in = p.be.followUp(p.prompt, followUpPreface+strings.Join(st.carry, "\n"), res.SessionID)
		in.turn = res.Turns + 1
		st.carry = nil
		var err error
		if c, err = p.startTurn(in); err != nil {
			res.Status, res.Reason = StatusFailed, "follow-up turn: "+err.Error()
			break
		}
	}
	res.Handoff = st.handoff
	p.conf.remove()
	p.mu.Lock()
	p.cur = nil
	res.rawReply = res.Reply
	res.Reply, res.Reason = p.red.str(res.Reply), p.red.str(res.Reason)
	p.mu.Unlock()
	p.result = res
	p.emit(Event{Kind: EventExit, Result: &res, ExitCode: res.ExitCode, Failed: res.Status != StatusCompleted, Reason: res.Reason})
	p.mu.Lock()
	p.closed = true
	close(p.in)
	p.mu.Unlock()
	close(p.done)
}

// turn is the supervisor's handle on one running turn.
type turn struct {
	c          child
	n          int
	terminated bool
	kill       <-chan time.Time
	stopped    bool
}

// terminate sends SIGTERM (and SIGCONT, so a paused group can act on it) and arms SIGKILL.
func (p *Process) terminate(t *turn) {
	if t.terminated {
		return
	}
	t.terminated = true
	_ = t.c.signal(sigTerm)
	_ = t.c.signal(sigResume)
	t.kill = time.After(p.spec.StopGrace)
}

// onStop reacts to Stop: the turn ends as stopped.
func (p *Process) onStop(t *turn) {
	t.stopped = true
	p.terminate(t)
}

const readChunk = 64 << 10

// quietDelay is how long stdout must be silent before an open-ended block is ended.
var quietDelay = 500 * time.Millisecond

// maxJSONLine bounds one line of a JSON-stream CLI held in memory (a variable for tests).
var maxJSONLine = 32 << 20

type chunk struct {
	b       []byte
	partial bool // a piece of a line longer than readChunk
}

// readers and readBufs keep the 64 KiB stdout and stderr buffers between turns: a small
// agent's turn otherwise allocates (and the collector clears) 128 KiB. Chunks sent on are
// copies, so a buffer is free again when its reader returns.
var (
	readers  = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readChunk) }}
	readBufs = sync.Pool{New: func() any { return new([readChunk]byte) }}
)

func readChunks(r io.Reader, ch chan<- chunk) {
	defer close(ch)
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() { br.Reset(nil); readers.Put(br) }()
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 {
			ch <- chunk{b: append([]byte(nil), b...), partial: err == bufio.ErrBufferFull}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// readBatches is readChunks for plain-text agents: each chunk is as many whole lines as one
// read returned, so a fast talker costs a few events per 64 KiB, not one per line.
func readBatches(r io.Reader, ch chan<- chunk) {
	defer close(ch)
	b := readBufs.Get().(*[readChunk]byte)
	defer readBufs.Put(b)
	buf := b[:]
	n := 0
	for {
		m, err := r.Read(buf[n:])
		n += m
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			ch <- chunk{b: append([]byte(nil), buf[:i+1]...)}
			n = copy(buf, buf[i+1:n])
		} else if n == len(buf) {
			ch <- chunk{b: append([]byte(nil), buf...), partial: true}
			n = 0
		}
		if err != nil {
			if n > 0 {
				ch <- chunk{b: append([]byte(nil), buf[:n]...)}
			}
			return
		}
	}
}

// stderrTailLines is how many of a turn's last stderr lines a failure's reason quotes.
const stderrTailLines = 5

// stderrTail keeps a turn's last non-blank stderr lines (ANSI escapes removed): an agent CLI
// that fails says why there (gemini's untrusted folder, a crash), not in its exit code.
type stderrTail struct{ lines []string }

func (t *stderrTail) add(line string) {
	line = strings.TrimSpace(string(agentproto.StripANSI([]byte(line))))
	if line == "" {
		return
	}
	if len(t.lines) == stderrTailLines {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, truncate(line, 500))
}

// explain adds the tail to a failure's reason.
func (t *stderrTail) explain(reason string) string {
	if len(t.lines) == 0 {
		return reason
	}
	return reason + "; stderr: " + strings.Join(t.lines, " | ")
}

// readStderr forwards a turn's stderr as events, with what the backend finds in it, and
// keeps its tail; tail is the caller's once done is closed.
func (p *Process) readStderr(r io.Reader, turnN int, tail *stderrTail, done chan<- struct{}) {
	defer close(done)
	if r == nil {
		return
	}
	ch := make(chan chunk, 16)
	go readChunks(r, ch)
	sr, _ := p.be.(stderrReader)
	skipping := false
	for c := range ch {
		if !skipping {
			line := truncate(strings.TrimRight(string(c.b), "\r\n"), 4000)
			p.emit(Event{Kind: EventStderr, Turn: turnN, Text: line})
			tail.add(line)
			p.reportDenials(turnN, line)
			if sr != nil {
				for _, ev := range sr.stderrEvents(&p.spec, line) {
					ev.Turn = turnN
					p.emit(ev)
				}
			}
		}
		skipping = c.partial
	}
}

// reportDenials emits what a confined agent says of accesses it was refused.
func (p *Process) reportDenials(turn int, text string) {
	if p.conf == nil {
		return
	}
	for _, ev := range p.denials.scan(turn, text) {
		p.emit(ev)
	}
}

// runTurn supervises one turn until its process tree is gone.
func (p *Process) runTurn(c child, in turnInput, st *agentState) (turnOutcome, int, bool) {
	t := &turn{c: c, n: in.turn}
	parser := agentproto.NewParser(agentproto.Options{MaxBlockBytes: p.spec.MaxBlockBytes})
	dec := p.be.newDecoder(&p.spec, in)
	textual := p.be.id() == BackendCommand || p.be.id() == BackendDryRun

	lines := make(chan chunk, 64)
	if textual {
		go readBatches(c.stdout(), lines)
	} else {
		go readChunks(c.stdout(), lines)
	}
	stderrDone := make(chan struct{})
	var tail stderrTail
	go p.readStderr(c.stderr(), in.turn, &tail, stderrDone)

	needNL := false
	feed := func(text string, cont bool) {
		if !cont && needNL {
			p.handleBlocks(t, parser.Write([]byte("\n")), st)
		}
		p.handleBlocks(t, parser.Write([]byte(text)), st)
		needNL = !strings.HasSuffix(text, "\n")
	}
	var pending []byte // a JSON line longer than readChunk, being assembled
	dropping := false
	stopCh := p.stopCh
	ctxDone := p.ctx.Done()
	waitCh := make(chan int, 1)
	waiting := false
	code := 0
	// PHASE_COMPLETE and HANDOFF have no closing line: when the output goes quiet, end an
	// open one, or an agent that prints one and then waits would never be seen to.
	quiet := time.NewTimer(quietDelay)
	defer quiet.Stop()
	for {
		if lines == nil && !waiting {
			waiting = true
			go func() { waitCh <- c.wait() }()
		}
		select {
		case ch, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			quiet.Reset(quietDelay)
			line := ch.b
			if !textual {
				if dropping { // the rest of a line already reported as too long
					dropping = ch.partial
					continue
				}
				if len(pending)+len(line) > maxJSONLine {
					dropping = ch.partial
					pending = nil
					p.emit(Event{Kind: EventWarning, Turn: in.turn, Reason: fmt.Sprintf("%s: a stdout line longer than %d bytes was skipped", p.be.id(), maxJSONLine)})
					continue
				}
				if ch.partial {
					pending = append(pending, line...)
					continue
				}
				if pending != nil {
					line = append(pending, line...)
					pending = nil
				}
			}
			for _, ev := range dec.line(line) {
				ev.Turn = in.turn
				p.emit(ev)
				if ev.Kind == EventText {
					feed(ev.Text, ev.cont)
				}
				if ev.Kind == EventToolResult && ev.IsError {
					p.reportDenials(in.turn, ev.Text)
				}
			}
		case <-quiet.C:
			p.handleBlocks(t, parser.EndOpenBlock(), st)
		case code = <-waitCh:
			goto exited
		case <-stopCh:
			stopCh = nil
			p.onStop(t)
		case <-ctxDone:
			ctxDone = nil
			p.Stop("cancelled: " + p.ctx.Err().Error())
		case <-t.kill:
			t.kill = nil
			_ = c.signal(sigKill)
		case r := <-p.resolveCh:
			r.errc <- fmt.Errorf("%w: %s", ErrNotPending, r.id)
		}
	}
exited:
	if needNL {
		p.handleBlocks(t, parser.Write([]byte("\n")), st)
	}
	p.handleBlocks(t, parser.Flush(), st)
	<-stderrDone
	c.release()
	out := dec.end(code)
	if oc, ok := c.(*osChild); ok && oc.failure != "" && !t.stopped {
		out.failed, out.reason = true, oc.failure
	}
	if t.stopped {
		out.failed = false
	} else if out.failed {
		out.reason = tail.explain(out.reason)
	}
	p.emit(Event{Kind: EventTurnEnd, Turn: in.turn, ExitCode: code, Failed: out.failed, Reason: out.reason})
	select {
	case <-p.stopCh:
		t.stopped = true
	default:
	}
	return out, code, t.stopped
}

// handleBlocks acts on the blocks one write produced in the spec's priority order: ERROR,
// PHASE_COMPLETE, DEPENDENCY_REQUEST, USER_QUESTION.
func (p *Process) handleBlocks(t *turn, blocks []agentproto.Block, st *agentState) {
	agentproto.SortByPriority(blocks)
	for i := range blocks {
		p.handleBlock(t, blocks[i], st)
	}
}

func (p *Process) newID(k PendingKind) string {
	p.nextID[k]++
	prefix := map[PendingKind]string{PendingQuestion: "q", PendingDependency: "dep", PendingPhase: "phase", PendingError: "err"}[k]
	return fmt.Sprintf("%s_%d", prefix, p.nextID[k])
}

func (p *Process) handleBlock(t *turn, b agentproto.Block, st *agentState) {
	p.emit(Event{Kind: EventBlock, Turn: t.n, Block: &b})
	if t.stopped || st.failReason != "" {
		return // the agent is ending: nothing more to ask anyone
	}
	var kind PendingKind
	switch b.Kind {
	case agentproto.KindHandoff:
		if b.Error == "" {
			st.handoff = b.Fields
		}
		return
	case agentproto.KindError:
		if !p.onError(t, b, st) {
			return
		}
		kind = PendingError // notify_user: the person decides (recoverable.go)
	case agentproto.KindUserQuestion:
		kind = PendingQuestion
	case agentproto.KindDependencyRequest:
		kind = PendingDependency
	case agentproto.KindPhaseComplete:
		if !p.spec.PauseOnPhaseComplete {
			return
		}
		kind = PendingPhase
	case agentproto.KindInvalid:
		// An invalid block asks nothing; its event names the field (the person is told). A
		// per-turn agent is told in its next turn so it can print the block again; the
		// (maxInvalidBlocks+1)th invalid protocol block of one agent run is the spec's fatal
		// error instead (agent-stdout-protocols.md, 검증 실패 시; docs/agent-protocol.md).
		if b.Of != agentproto.KindHandoff {
			if st.invalid++; st.invalid > maxInvalidBlocks {
				spec := b.SpecError()
				p.checkpoint(Pending{ID: "error", Kind: PendingError, Fields: spec.Fields, Line: b.Line})
				st.failReason = fmt.Sprintf("the agent reported a fatal error: Invalid protocol format (%d invalid blocks; the last: %s)", st.invalid, b.Error)
				p.terminate(t)
				return
			}
		}
		if !p.interactive() && (b.Of == agentproto.KindUserQuestion || b.Of == agentproto.KindDependencyRequest) {
			st.carry = append(st.carry, "[AGENTCANVAS] Your "+strings.ToUpper(string(b.Of))+" block (line "+fmt.Sprint(b.Line)+") was not understood: "+b.Error+". Print it again, corrected.\n")
		}
		return
	default:
		return
	}
	pend := &Pending{ID: p.newID(kind), Kind: kind, Fields: b.Fields, Line: b.Line}
	if kind == PendingDependency {
		pend.Deadline = time.Now().Add(p.spec.DependencyTimeout)
	}
	p.emit(Event{Kind: EventPending, Turn: t.n, Pending: pend})
	p.checkpoint(*pend)
	paused := false
	if !t.terminated && t.c.signal(sigPause) == nil {
		paused = true
		p.emit(Event{Kind: EventPaused, Turn: t.n, Reason: "waiting for " + string(kind) + " " + pend.ID})
	}
	p.waitResolution(t, pend, st)
	if paused && !t.terminated {
		_ = t.c.signal(sigResume)
		p.emit(Event{Kind: EventResumed, Turn: t.n, Reason: string(kind) + " " + pend.ID + " " + pend.Outcome})
	}
}

func (p *Process) checkpoint(pd Pending) {
	if p.spec.Checkpoint == nil {
		return
	}
	if err := p.spec.Checkpoint(pd); err != nil {
		p.emit(Event{Kind: EventWarning, Reason: "checkpoint before pause failed: " + err.Error()})
	}
}

// waitResolution blocks the supervisor until pend is resolved, timed out or the agent stops.
func (p *Process) waitResolution(t *turn, pend *Pending, st *agentState) {
	var timeout <-chan time.Time
	if pend.Kind == PendingDependency {
		tm := time.NewTimer(time.Until(pend.Deadline))
		defer tm.Stop()
		timeout = tm.C
	}
	ctxDone := p.ctx.Done()
	for {
		select {
		case r := <-p.resolveCh:
			if r.id != pend.ID || r.kind != pend.Kind {
				r.errc <- fmt.Errorf("%w: %s (waiting for %s)", ErrNotPending, r.id, pend.ID)
				continue
			}
			err := p.apply(t, pend, r, st)
			r.errc <- err
			if err == nil {
				return
			}
		case <-timeout:
			name := pend.str("name")
			if pend.Required() {
				p.finishPending(pend, "timeout")
				st.failReason = "required dependency timeout: " + name
				p.terminate(t)
				return
			}
			// An optional one goes on with its default (empty without one), as rejected.
			_ = p.apply(t, pend, resolution{kind: PendingDependency, reject: true, timedOut: true}, st)
			return
		case <-p.stopCh:
			p.onStop(t)
			p.finishPending(pend, "stopped")
			return
		case <-ctxDone:
			ctxDone = nil
			p.Stop("cancelled: " + p.ctx.Err().Error())
		case <-t.kill:
			t.kill = nil
			_ = t.c.signal(sigKill)
		}
	}
}

func (p *Process) finishPending(pend *Pending, outcome string) {
	pend.Outcome = outcome
	p.emit(Event{Kind: EventAnswered, Pending: pend})
}

// apply validates a resolution and delivers it to the agent.
func (p *Process) apply(t *turn, pend *Pending, r resolution, st *agentState) error {
	switch pend.Kind {
	case PendingQuestion:
		p.deliver(t, questionAnswerJSON(pend.ID, r.value), st)
		p.finishPending(pend, "answered")
	case PendingPhase:
		if r.reject {
			p.deliver(t, "[AGENTCANVAS] The phase you completed did not pass verification; rework it:\n"+r.reason+"\n", st)
			p.finishPending(pend, "rework")
			break
		}
		p.finishPending(pend, "continued")
	case PendingError:
		return p.applyRecovery(t, pend, r, st)
	case PendingDependency:
		name, typ := pend.str("name"), pend.str("type")
		value := r.value
		outcome := "provided"
		if r.reject {
			if pend.Required() {
				p.finishPending(pend, "rejected")
				st.failReason = "required dependency rejected: " + name
				if r.reason != "" {
					st.failReason += ": " + r.reason
				}
				p.terminate(t)
				return nil
			}
			value, outcome = pend.str("default"), "rejected" // an optional one takes its default
			if r.timedOut {
				outcome = "timeout"
			}
		} else if value == "" && pend.Required() {
			return fmt.Errorf("runtime: dependency %s (%s) is required: its value cannot be empty", pend.ID, name)
		} else if value != "" {
			if err := agentproto.ValidateDependencyValue(typ, value); err != nil {
				return fmt.Errorf("runtime: dependency %s (%s): %w", pend.ID, name, err)
			}
		}
		shown := value
		if secretDependencyType(typ) {
			p.mu.Lock()
			p.red.add(name, value)
			if envNameRE.MatchString(name) {
				p.extraEnv[name] = value
			}
			p.mu.Unlock()
			shown = "(set in the environment variable " + name + ")"
		}
		if p.interactive() && t.c.writeStdin(dependencyProvidedBlock(name, value)) == nil {
			// delivered on stdin
		} else {
			st.carry = append(st.carry, dependencyProvidedBlock(name, shown))
		}
		p.finishPending(pend, outcome)
	}
	return nil
}

// interactive reports whether answers go to the running agent's stdin.
func (p *Process) interactive() bool { return p.spec.Interactive && p.be.id() == BackendCommand }

// deliver writes an answer to an interactive agent's stdin, or keeps it for the next turn.
func (p *Process) deliver(t *turn, text string, st *agentState) {
	if p.interactive() && t.c.writeStdin(text) == nil {
		return
	}
	st.carry = append(st.carry, text)
}

func fieldString(f map[string]any, name string) string {
	if v, ok := f[name]; ok {
		if s, ok := v.(string); ok {
			return strings.TrimSpace(s)
		}
		return fmt.Sprint(v)
	}
	return ""
}

// eventPump is an unbounded FIFO: senders never block for long, the reader gets every event.
func eventPump() (chan<- Event, <-chan Event) {
	in := make(chan Event)
	out := make(chan Event)
	go func() {
		src := in
		var q []Event
		for src != nil || len(q) > 0 {
			var send chan Event
			var first Event
			if len(q) > 0 {
				send, first = out, q[0]
			}
			select {
			case ev, ok := <-src:
				if !ok {
					src = nil
					continue
				}
				q = append(q, ev)
			case send <- first:
				q[0] = Event{}
				q = q[1:]
			}
		}
		close(out)
	}()
	return in, out
}
