package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recoverableBlock is a recoverable [ERROR] naming its reset.
func recoverableBlock(retryAfter string) string {
	return `printf '[ERROR]\ntype: recoverable\nmessage: Rate limit exceeded\ndetails: API rate limit hit\nrecovery: pause_and_retry\nretry_after: ` + retryAfter + `\n[/ERROR]\n'`
}

// agent-stdout-protocols.md §4: a recoverable [ERROR] is checkpointed, the agent paused
// (stopped in the process table) until the reset the block names is over, then resumed; the
// turn that failed is retried, told why, and the agent completes.
func TestRecoverableErrorPausesThenRetries(t *testing.T) {
	// The first turn reports the error and fails only once the test has seen it stopped: it
	// blocks reading a FIFO (a builtin, no child: a shell stopped while it vforks a child stays
	// in state D, never T), where a fixed sleep let a busy machine's pause come after the agent
	// had exited.
	fifo := filepath.Join(t.TempDir(), "release")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	s := shellSpec(t, `if [ "$AGENTCANVAS_TURN" = 1 ]; then `+recoverableBlock("1")+`; read line < '`+fifo+`'; exit 1; fi; cat; echo "ANSWER: done"`)
	var cps []Pending
	s.Checkpoint = func(pd Pending) error { cps = append(cps, pd); return nil }
	// The pause lasts until this test has seen the agent stopped: a timer of the block's second
	// could run out before a busy machine let the test look.
	release := make(chan time.Time)
	defer func(w func(time.Duration) <-chan time.Time) { waitReset = w }(waitReset)
	waitReset = func(d time.Duration) <-chan time.Time {
		if d != time.Second {
			t.Errorf("the pause waits %v, want the block's retry_after (1s)", d)
		}
		return release
	}
	p := start(t, s, "task")
	var pausedAt, resumedAt time.Time
	evs, res := drain(t, p, func(ev Event) {
		switch {
		case ev.Kind == EventPaused && strings.Contains(ev.Reason, "recoverable error"):
			pausedAt = time.Now()
			waitUntil(t, "the agent to be stopped", func() bool { st, _ := procState(p.PID()); return st == 'T' })
			close(release)
			go func() { // the agent, resumed, may go on: its read ends and the turn fails
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					f.WriteString("go on\n")
					f.Close()
				}
			}()
		case ev.Kind == EventResumed && strings.Contains(ev.Reason, "reset over"):
			resumedAt = time.Now()
		}
	})
	if res.Status != StatusCompleted || res.Turns != 2 || !strings.Contains(res.Reply, "You reported a recoverable error (Rate limit exceeded)") {
		t.Fatalf("status %s (%s), %d turns, reply %q", res.Status, res.Reason, res.Turns, res.Reply)
	}
	if len(cps) != 1 || cps[0].Kind != PendingError {
		t.Errorf("checkpoints %+v, want one before the pause", cps)
	}
	if pausedAt.IsZero() || resumedAt.IsZero() {
		t.Fatalf("no pause and resume in %v", evs)
	}
	var paused Event
	for _, ev := range ofKind(evs, EventPaused) {
		paused = ev
	}
	if !strings.Contains(paused.Reason, "retrying after 1s") {
		t.Errorf("paused: %q", paused.Reason)
	}
	if w := ofKind(evs, EventWarning); len(w) != 1 || !strings.Contains(w[0].Reason, "retry 1 of 3") {
		t.Errorf("warnings %+v", w)
	}
}

// The retries are bounded: an agent that fails with a recoverable error every time fails
// after the third retry, saying so.
func TestRecoverableErrorRetriesAreBounded(t *testing.T) {
	s := shellSpec(t, recoverableBlock("0.01")+`; sleep 0.1; exit 1`)
	_, res := drain(t, start(t, s, "task"), nil)
	if res.Status != StatusFailed || res.Turns != 4 || !strings.Contains(res.Reason, "recoverable error persisted after 3 retries: Rate limit exceeded") {
		t.Fatalf("status %s (%s), %d turns", res.Status, res.Reason, res.Turns)
	}
}

// The reset: the block's retry_after, else one its details name, else a minute; capped.
func TestErrorReset(t *testing.T) {
	for _, c := range []struct {
		fields map[string]any
		want   time.Duration
	}{
		{map[string]any{"retry_after": "30"}, 30 * time.Second},
		{map[string]any{"retry_after": "1.5"}, 1500 * time.Millisecond},
		{map[string]any{"retry_after": "2m"}, 2 * time.Minute},
		{map[string]any{"details": "rate limit hit, retry after 45 seconds"}, 45 * time.Second},
		{map[string]any{"details": "quota resets in 2 minutes"}, 2 * time.Minute},
		{map[string]any{"details": "will retry after cooldown"}, time.Minute},
		{map[string]any{"retry_after": "86400"}, 15 * time.Minute},
	} {
		if got := errorReset(c.fields); got != c.want {
			t.Errorf("%v: %v, want %v", c.fields, got, c.want)
		}
	}
}

// An invalid block is sent back to the agent to print again, three times; the fourth is the
// spec's fatal "Invalid protocol format" (after a checkpoint).
func TestInvalidBlocksBecomeFatalAfterThree(t *testing.T) {
	s := shellSpec(t, `cat >/dev/null; printf '[USER_QUESTION]\ncategory: choice\nrequired: true\n[/USER_QUESTION]\n'`)
	var cps []Pending
	s.Checkpoint = func(pd Pending) error { cps = append(cps, pd); return nil }
	_, res := drain(t, start(t, s, "task"), nil)
	if res.Status != StatusFailed || res.Turns != 4 || !strings.Contains(res.Reason, "Invalid protocol format (4 invalid blocks") {
		t.Fatalf("status %s (%s), %d turns", res.Status, res.Reason, res.Turns)
	}
	if len(cps) != 1 || cps[0].Kind != PendingError || cps[0].Fields["recovery"] != "notify_user" {
		t.Errorf("checkpoints %+v", cps)
	}
}

// Many recoverable errors in one turn do not pause the agent without end: the fifth fails it.
func TestRecoverableErrorsInOneTurnAreBounded(t *testing.T) {
	s := shellSpec(t, `for i in 1 2 3 4 5 6; do `+recoverableBlock("0.01")+`; done; echo "ANSWER: done"`)
	evs, res := drain(t, start(t, s, "task"), nil)
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "reported 5 recoverable errors") {
		t.Fatalf("status %s (%s)", res.Status, res.Reason)
	}
	if n := len(ofKind(evs, EventPaused)); n != 4 {
		t.Errorf("%d pauses, want 4", n)
	}
}

// errorBlock is a recoverable [ERROR] with the given recovery strategy.
func errorBlock(recovery string) string {
	return `printf '[ERROR]\ntype: recoverable\nmessage: Rate limit exceeded\nrecovery: ` + recovery + `\n[/ERROR]\n'`
}

// checkpoint_and_fail: a checkpoint, then the agent fails on the spot, with no retry, even
// though the error is recoverable.
func TestCheckpointAndFailIsNotRetried(t *testing.T) {
	s := shellSpec(t, `cat >/dev/null; `+errorBlock("checkpoint_and_fail")+`; sleep 5; exit 1`)
	var cps []Pending
	s.Checkpoint = func(pd Pending) error { cps = append(cps, pd); return nil }
	evs, res := drain(t, start(t, s, "task"), nil)
	if res.Status != StatusFailed || res.Turns != 1 || res.Retries != 0 || !strings.Contains(res.Reason, "checkpoint_and_fail): Rate limit exceeded") {
		t.Fatalf("status %s (%s), %d turns, %d retries", res.Status, res.Reason, res.Turns, res.Retries)
	}
	if len(cps) != 1 || cps[0].Kind != PendingError {
		t.Errorf("checkpoints %+v", cps)
	}
	if len(ofKind(evs, EventPaused)) != 0 {
		t.Error("paused for a retry that is not to come")
	}
}

// notify_user: the person is asked (a pending request of kind error, the agent paused), and
// their choice decides: retry runs the failed turn again, skip goes on as if it had not
// failed, stop fails the agent.
func TestNotifyUserAsksThePerson(t *testing.T) {
	for _, c := range []struct {
		choice string
		status Status
		turns  int
		reason string
	}{
		{RecoveryRetry, StatusCompleted, 2, ""},
		{RecoverySkip, StatusCompleted, 1, ""},
		{RecoveryStop, StatusFailed, 1, "the agent reported an error and stopped by you: Rate limit exceeded"},
	} {
		t.Run(c.choice, func(t *testing.T) {
			s := shellSpec(t, `cat >/dev/null; if [ "$AGENTCANVAS_TURN" = 1 ]; then `+errorBlock("notify_user")+`; sleep 0.2; exit 1; fi; echo "ANSWER: done"`)
			p := start(t, s, "task")
			asked := 0
			evs, res := drain(t, p, func(ev Event) {
				if ev.Kind == EventPending && ev.Pending.Kind == PendingError {
					asked++
					if err := p.ResolveError(ev.Pending.ID, "bogus", ""); err == nil {
						t.Error("an answer other than retry, skip or stop was taken")
					}
					if err := p.ResolveError(ev.Pending.ID, c.choice, "stopped by you"); err != nil {
						t.Error(err)
					}
				}
			})
			if asked != 1 || res.Status != c.status || res.Turns != c.turns || c.reason != "" && res.Reason != c.reason {
				t.Fatalf("asked %d; status %s (%s), %d turns", asked, res.Status, res.Reason, res.Turns)
			}
			var outcome string
			for _, ev := range ofKind(evs, EventAnswered) {
				outcome = ev.Pending.Outcome
			}
			if outcome != c.choice {
				t.Errorf("outcome %q", outcome)
			}
		})
	}
}
