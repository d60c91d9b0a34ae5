package runtime

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"
)

// An [ERROR] block (agent-stdout-protocols.md §4) is handled by its type and recovery:
//
//   - type fatal, or recovery checkpoint_and_fail: a checkpoint, then the agent fails, with no
//     retry;
//   - recoverable, pause_and_retry: a checkpoint, the agent's process group paused until the
//     reset the block names, then resumed; a turn that then fails is retried (a follow-up
//     turn, its CLI session resumed), at most maxErrorRetries times; after that it fails;
//   - recoverable, notify_user: a checkpoint, the group paused, and the person asked (a
//     pending request of kind error): retry (resumed now, its failure retried as above), skip
//     (resumed, and a failure of the turn is not the agent's) or stop (the agent fails).
//
// A recoverable error with no recovery, or one this runtime does not know, is paused and
// retried.

// Recovery choices a person makes for a notify_user [ERROR] (ResolveError).
const (
	RecoveryRetry = "retry"
	RecoveryStop  = "stop"
	RecoverySkip  = "skip"
)

// RecoveryChoices lists them in the order they are offered.
var RecoveryChoices = []string{RecoveryRetry, RecoverySkip, RecoveryStop}

// ResolveError answers a pending notify_user [ERROR] with the person's choice: retry, skip or
// stop (reason, for stop, says who or why).
func (p *Process) ResolveError(id, choice, reason string) error {
	return p.resolve(resolution{id: id, kind: PendingError, value: choice, reason: reason})
}

// onError acts on an [ERROR] block as its type and recovery say; it reports whether the
// person is to be asked (notify_user), which the caller does as for any pending request.
func (p *Process) onError(t *turn, b agentproto.Block, st *agentState) (ask bool) {
	msg := fieldString(b.Fields, "message")
	recovery := fieldString(b.Fields, "recovery")
	switch {
	case fieldString(b.Fields, "type") == "fatal":
		p.checkpoint(Pending{ID: "error", Kind: PendingError, Fields: b.Fields, Line: b.Line})
		st.failReason = "the agent reported a fatal error: " + msg
		p.terminate(t)
	case fieldString(b.Fields, "type") != "recoverable":
		// The parser lets no other type through.
	case recovery == "checkpoint_and_fail":
		p.checkpoint(Pending{ID: "error", Kind: PendingError, Fields: b.Fields, Line: b.Line})
		st.failReason = "the agent reported an error and asked to fail on it (checkpoint_and_fail): " + msg
		p.terminate(t)
	case recovery == "notify_user":
		return true
	default:
		p.recoverError(t, b.Fields, st)
	}
	return false
}

// applyRecovery carries out the person's choice on a notify_user [ERROR].
func (p *Process) applyRecovery(t *turn, pend *Pending, r resolution, st *agentState) error {
	msg := pend.str("message")
	switch strings.ToLower(strings.TrimSpace(r.value)) {
	case RecoveryRetry:
		st.recoverable = msg // a failure of the turn is retried, as after a reset
		p.finishPending(pend, RecoveryRetry)
	case RecoverySkip:
		st.skipped = msg
		p.finishPending(pend, RecoverySkip)
	case RecoveryStop:
		st.failReason = "the agent reported an error and " + firstNonBlank(r.reason, "the person chose to stop") + ": " + msg
		p.finishPending(pend, RecoveryStop)
		p.terminate(t)
	default:
		return fmt.Errorf("runtime: error %s: answer retry, skip or stop, not %q", pend.ID, r.value)
	}
	return nil
}

// skipFailure: the turn failed after the person chose to skip its error: its failure is not
// counted (the agent goes on as if the turn completed), and said.
func (p *Process) skipFailure(st *agentState, turn int) (failed bool) {
	p.emit(Event{Kind: EventWarning, Turn: turn, Reason: "the turn failed after the error " + strconv.Quote(st.skipped) + "; you chose to skip it, so the agent goes on"})
	st.skipped = ""
	return false
}

func firstNonBlank(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

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

// recoverError handles a recoverable [ERROR] with pause_and_retry: checkpoint, pause the
// group, wait for the reset (a Stop ends the wait), resume, and mark the turn for a retry
// should it fail.
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
	res.Retries = min(st.retries, maxErrorRetries)
	if st.retries > maxErrorRetries {
		res.Status, res.Reason = StatusFailed, fmt.Sprintf("the agent's recoverable error persisted after %d retries: %s", maxErrorRetries, msg)
		return false
	}
	p.emit(Event{Kind: EventWarning, Reason: fmt.Sprintf("retry %d of %d after the recoverable error: %s", st.retries, maxErrorRetries, msg)})
	st.carry = append(st.carry, "[AGENTCANVAS] You reported a recoverable error ("+msg+"). The wait for its reset is over: retry what failed, then go on with your task.\n")
	return true
}
