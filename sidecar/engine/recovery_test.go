package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// errorAgent prints the spec's [ERROR] example (Rate limit exceeded) with the given recovery
// in its first turn and fails; a later turn completes.
func errorAgent(t *testing.T, recovery string) string {
	block := `printf '[ERROR]\ntype: recoverable\nmessage: Rate limit exceeded\ndetails: API rate limit hit, will retry after cooldown\nrecovery: ` + recovery + `\nretry_after: 0.05\n[/ERROR]\n'`
	return script(t, t.TempDir(), "agent.sh", "cat >/dev/null\nif [ \"$AGENTCANVAS_TURN\" = 1 ]; then "+block+"; exit 1; fi\necho \"ANSWER: done\"\n")
}

func errorRun(t *testing.T, recovery string, h Human) (*Outcome, []string) {
	t.Helper()
	ws, f := workspace(t, strings.ReplaceAll(oneAgentFlow, "AGENT", errorAgent(t, recovery)))
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Human: h})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range events(t, ws, f.Name) {
		names = append(names, e.Event)
	}
	return out, names
}

// Each recovery strategy does what agent-stdout-protocols.md §4 says: pause_and_retry resumes
// after the reset and retries (counted in the metrics); checkpoint_and_fail fails the agent
// with no retry; notify_user asks the person, whose choice decides, and a run that cannot
// ask anyone stops with the error.
func TestRecoveryStrategies(t *testing.T) {
	t.Run("pause_and_retry", func(t *testing.T) {
		out, names := errorRun(t, "pause_and_retry", nil)
		if out.Status != StatusCompleted || out.Metrics.Retries != 1 || out.Metrics.RetriesByKind[RetryRecoverableError] != 1 {
			t.Fatalf("run %s (%s), retries %d %v", out.Status, out.Reason, out.Metrics.Retries, out.Metrics.RetriesByKind)
		}
		if !strings.Contains(strings.Join(names, " "), "agent_paused") {
			t.Error("not paused")
		}
	})
	t.Run("checkpoint_and_fail", func(t *testing.T) {
		out, names := errorRun(t, "checkpoint_and_fail", nil)
		if out.Status != StatusFailed || !strings.Contains(out.Reason, "checkpoint_and_fail): Rate limit exceeded") || out.Metrics.Turns != 1 || out.Metrics.Retries != 0 {
			t.Fatalf("run %s (%s), %d turns, %d retries", out.Status, out.Reason, out.Metrics.Turns, out.Metrics.Retries)
		}
		if strings.Contains(strings.Join(names, " "), "agent_paused") {
			t.Error("paused for a retry that is not to come")
		}
	})
	t.Run("notify_user non-interactive", func(t *testing.T) {
		out, names := errorRun(t, "notify_user", NonInteractive{})
		if out.Status != StatusFailed || !strings.Contains(out.Reason, "no one can choose in a non-interactive run: Rate limit exceeded") || out.Metrics.Turns != 1 {
			t.Fatalf("run %s (%s), %d turns", out.Status, out.Reason, out.Metrics.Turns)
		}
		if j := strings.Join(names, " "); !strings.Contains(j, "recovery_asked") || !strings.Contains(j, "recovery_resolved") {
			t.Errorf("events %s", j)
		}
	})
	for _, c := range []struct {
		typed   string
		status  string
		retries int
	}{
		{"1\n", StatusCompleted, 1}, // retry
		{"skip\n", StatusCompleted, 0},
		{"maybe\nstop\n", StatusFailed, 0},
	} {
		t.Run("notify_user at the terminal "+strings.Fields(c.typed)[len(strings.Fields(c.typed))-1], func(t *testing.T) {
			var shown strings.Builder
			out, _ := errorRun(t, "notify_user", &Terminal{R: strings.NewReader(c.typed), W: &shown})
			if out.Status != c.status || out.Metrics.Retries != c.retries {
				t.Fatalf("run %s (%s), %d retries, want %s after %d", out.Status, out.Reason, out.Metrics.Retries, c.status, c.retries)
			}
			if !strings.Contains(shown.String(), "worker reported an error: Rate limit exceeded") || !strings.Contains(shown.String(), "3) stop") {
				t.Errorf("the terminal showed:\n%s", shown.String())
			}
			if c.status == StatusFailed && !strings.Contains(out.Reason, "you chose to stop") {
				t.Errorf("reason %q", out.Reason)
			}
		})
	}
	t.Run("notify_user in the editor", func(t *testing.T) {
		inbox := &Inbox{}
		var refused error
		var once sync.Once
		inbox.Notify = func(r Request) {
			go once.Do(func() {
				refused = inbox.Answer(r.RunID, r.ID, Response{Value: "later"})
				if err := inbox.Answer(r.RunID, r.ID, Response{Value: "retry"}); err != nil {
					t.Error(err)
				}
			})
		}
		out, _ := errorRun(t, "notify_user", inbox)
		if out.Status != StatusCompleted || out.Metrics.Retries != 1 {
			t.Fatalf("run %s (%s), %d retries", out.Status, out.Reason, out.Metrics.Retries)
		}
		if refused == nil || !strings.Contains(refused.Error(), "retry, skip or stop") {
			t.Errorf("an answer other than the three was not refused: %v", refused)
		}
	})
}
