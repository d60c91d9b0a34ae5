package runtime

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
)

// A recoverable [ERROR] (agent-stdout-protocols.md §4: checkpoint, pause, resume by itself
// after the rate limit's reset) pauses the agent's process group after a checkpoint, waits for
// the reset the block names, and resumes it. A turn that then fails is retried (a follow-up
// turn, its CLI session resumed), at most maxErrorRetries times; after that the agent fails.

// maxErrorRetries bounds the retries after recoverable errors, per agent run.
const maxErrorRetries = 3

// Reset waits: the block's, else defaultErrorReset; never more than maxErrorReset.
var (
	defaultErrorReset = time.Minute
	maxErrorReset     = 15 * time.Minute
)

// retryAfterRE finds a reset in the block's details: "retry after 30s", "reset in 2 minutes".
var retryAfterRE = regexp.MustCompile(`(?i)(?:after|in)\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?)\b`)

// errorReset is how long to wait before a recoverable error is retried: the block's
// `retry_after` (seconds, or a duration such as 90s), else a reset its details name ("retry
// after 30 seconds"), else a minute; at most 15 minutes.
func errorReset(fields map[string]any) time.Duration {
	d := defaultErrorReset
	if v := fieldString(fields, "retry_after"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			d = time.Duration(s * float64(time.Second))
		} else if pd, err := time.ParseDuration(v); err == nil && pd >= 0 {
			d = pd
		}
	} else if m := retryAfterRE.FindStringSubmatch(fieldString(fields, "details") + " " + fieldString(fields, "message")); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute}[strings.ToLower(m[2])[0]]
		if strings.HasPrefix(strings.ToLower(m[2]), "ms") || strings.HasPrefix(strings.ToLower(m[2]), "milli") {
			unit = time.Millisecond
		}
		d = time.Duration(n * float64(unit))
	}
	return min(d, maxErrorReset)
}

// waitReset is the wait for a recoverable error's reset (a variable so that a test can end the
// pause when it has seen the agent stopped, rather than race a timer).
var waitReset = time.After

// recoverError handles a recoverable [ERROR]: checkpoint, pause the group, wait for the reset
// (a Stop ends the wait), resume, and mark the turn for a retry should it fail.
func (p *Process) recoverError(t *turn, fields map[string]any, st *agentState) {
	p.checkpoint(Pending{ID: "error", Kind: PendingError, Fields: fields})
	msg := fieldString(fields, "message")
	// An agent that keeps reporting recoverable errors (one per retry, or many in one turn)
	// is not paused without end: past one pause per allowed retry it fails.
	if st.pauses++; st.pauses > maxErrorRetries+1 {
		st.failReason = fmt.Sprintf("the agent reported %d recoverable errors; the last: %s", st.pauses, msg)
		p.terminate(t)
		return
	}
	reset := errorReset(fields)
	st.recoverable = msg
	paused := !t.terminated && t.c.signal(sigPause) == nil
	blk := &agentproto.Block{Kind: agentproto.KindError, Fields: fields}
	p.emit(Event{Kind: EventPaused, Turn: t.n, Block: blk, Reason: fmt.Sprintf("recoverable error (%s): retrying after %s", msg, reset)})
	select {
	case <-waitReset(reset):
	case <-p.stopCh:
		p.onStop(t)
		return
	case <-p.ctx.Done():
		p.Stop("cancelled: " + p.ctx.Err().Error())
		return
	}
	if paused && !t.terminated {
		_ = t.c.signal(sigResume)
	}
	p.emit(Event{Kind: EventResumed, Turn: t.n, Block: blk, Reason: "recoverable error (" + msg + "): reset over"})
}

// retryAfterError decides what a failed turn that reported a recoverable error becomes: a
// retry (the carry says why) while retries remain, else the agent's failure reason.
func (p *Process) retryAfterError(st *agentState, res *Result) (retry bool) {
	msg := st.recoverable
	st.recoverable = ""
	st.retries++
	if st.retries > maxErrorRetries {
		res.Status, res.Reason = StatusFailed, fmt.Sprintf("the agent's recoverable error persisted after %d retries: %s", maxErrorRetries, msg)
		return false
	}
	p.emit(Event{Kind: EventWarning, Reason: fmt.Sprintf("retry %d of %d after the recoverable error: %s", st.retries, maxErrorRetries, msg)})
	st.carry = append(st.carry, "[AGENTCANVAS] You reported a recoverable error ("+msg+"). The wait for its reset is over: retry what failed, then go on with your task.\n")
	return true
}
