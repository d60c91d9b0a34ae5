package engine

import (
	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// Following a running agent process: its events become the run's (spend, requests for a
// person, protocol blocks, warnings, refused accesses) until it ends.

// processOut is what one agent process (a turn, or a session of a session loop) yielded.
type processOut struct {
	res        runtime.Result
	handoffErr string   // why the last HANDOFF block was invalid ("" when valid or none)
	stderr     []string // its last stderr lines
	// stderrAll is every stderr line up to the transcript's bound; redact scrubs the
	// process's secrets from a text (the prompt, for the transcript).
	stderrAll []string
	redact    func(string) string
	// tools and said are the turn's tool calls and what the agent said as it went, for the
	// transcript (said stands for the reply of a turn stopped before it gave one).
	tools []transcript.ToolCall
	said  string
}

// scrub is text with the process's secrets masked; "" when no process ran (nothing to
// scrub with, so nothing is kept).
func (o processOut) scrub(text string) string {
	if o.redact == nil {
		return ""
	}
	return o.redact(text)
}

// scrubTools are the turn's tool calls with the process's secrets masked.
func (o processOut) scrubTools() []transcript.ToolCall {
	out := make([]transcript.ToolCall, len(o.tools))
	for i, t := range o.tools {
		t.Input, t.Output = o.scrub(t.Input), o.scrub(t.Output)
		out[i] = t
	}
	return out
}

// follow forwards a running agent's events to the log (spend, questions, blocks, warnings…)
// until it ends, and counts its spend and time. resume: its CLI session is resumed on the
// node's next turn (not for a session loop, whose sessions start fresh by design).
func (c *ictx) follow(proc *runtime.Process, node, edge, backend string, resume bool) processOut {
	started := c.r.now()
	var out processOut
	ts := &turnSpend{backend: backend}
	var stderr stderrTail
	var stderrAll stderrLog
	var acts turnActions
	for ev := range proc.Events() {
		acts.add(ev)
		switch ev.Kind {
		case runtime.EventUsage:
			c.spendEvent(node, ts, ev)
		case runtime.EventStderr:
			stderr.add(ev.Text)
			stderrAll.add(ev.Text)
		case runtime.EventPending:
			c.r.asks.Add(1)
			go func(pend *runtime.Pending) {
				defer c.r.asks.Done()
				c.handlePending(proc, node, pend)
			}(ev.Pending)
		case runtime.EventSession:
			if resume {
				c.mu.Lock()
				c.sessions[node] = ev.SessionID
				c.mu.Unlock()
				c.keepSession(node, proc.Backend(), ev.SessionID) // session.go
			}
		case runtime.EventBlock:
			c.block(node, edge, ev.Block, &out.handoffErr)
		case runtime.EventPaused, runtime.EventResumed:
			if ev.Block != nil { // a recoverable [ERROR]: paused until its reset (a question's pause is its own event)
				c.r.emit(c.in.ID, edge, "agent_"+string(ev.Kind), map[string]any{"agent": node, "reason": ev.Reason})
			}
		case runtime.EventWarning:
			w := map[string]any{"agent": node, "message": firstNonEmpty(ev.Reason, ev.Text)}
			for k, v := range map[string]string{"tool": ev.Tool, "path": ev.Path, "field": ev.Field} {
				if v != "" { // a permission denial: what was refused, and the setting that allows it
					w[k] = v
				}
			}
			c.r.emit(c.in.ID, edge, "warning", w)
		case runtime.EventDenied:
			// The agent saw an EACCES (the confinement's, or the file's own permissions) and
			// goes on; the log says who tried what.
			c.r.emit(c.in.ID, edge, "access_denied", map[string]any{"agent": node, "path": ev.Text, "message": ev.Reason, "turn": ev.Turn})
		}
	}
	out.res = c.meteredResult(node, proc.Wait()) // gateway.go
	out.stderr, out.stderrAll, out.redact = stderr.lines, stderrAll.lines, proc.Redact
	out.tools, out.said = acts.tools, acts.said.String()
	c.spendResult(node, ts, out.res)
	c.r.metrics.addTurn(node, out.res, c.r.now().Sub(started))
	c.r.metrics.addRetries(node, RetryRecoverableError, out.res.Retries)
	return out
}

// block logs a protocol block worth an event: an [ERROR] or an invalid block; a HANDOFF's
// validity is kept (the last block counts: a valid one clears an earlier error).
func (c *ictx) block(node, edge string, b *agentproto.Block, handoffErr *string) {
	if b == nil {
		return
	}
	if b.Kind == "invalid" || b.Kind == "error" {
		c.r.emit(c.in.ID, edge, "error", map[string]any{"agent": node, "block": b})
	}
	if b.Of == agentproto.KindHandoff {
		*handoffErr = b.Error
	}
}
