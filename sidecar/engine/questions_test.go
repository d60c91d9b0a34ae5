package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

var oneAgentFlow = bridgeFlow("{rate_limit_per_min: 10}")

// questionBlock prints question N with a default (answered by a non-interactive run).
const questionBlock = `printf '[USER_QUESTION]\ncategory: choice\nquestion: Question %s?\noptions:\n  - yes\n  - no\ndefault: yes\nrequired: true\n[/USER_QUESTION]\n' "$AGENTCANVAS_TURN"
`

// askingRun runs an agent that asks a question in each of its first turns (body decides)
// and returns the run's log as written to disk.
func askingRun(t *testing.T, body string) []eventlog.Event {
	t.Helper()
	agent := script(t, t.TempDir(), "agent.sh", "cat >/dev/null\nn=$AGENTCANVAS_TURN\n"+body)
	ws, f := workspace(t, strings.ReplaceAll(oneAgentFlow, "AGENT", agent))
	out, err := Run(context.Background(), f, Options{Limits: recording, Workspace: ws, Human: NonInteractive{}})
	if err != nil || out.Status != StatusCompleted {
		t.Fatalf("run: %v %+v", err, out)
	}
	return events(t, ws, f.Name)
}

func isTooManyQuestions(e eventlog.Event) bool {
	return e.Event == "warning" && strings.Contains(rawString(e.Fields["message"]), "more than three questions")
}

// rawString is a string field of an event read back from the log.
func rawString(v any) string {
	var s string
	if raw, ok := v.(json.RawMessage); ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// Spec agent-stdout-protocols.md §2 (at most three questions a phase): the fourth question
// within one phase is logged as a warning, and no earlier one is.
func TestFourthQuestionInAPhaseIsAWarning(t *testing.T) {
	evs := askingRun(t, `if [ "$n" -le 4 ]; then `+questionBlock+` exit 0; fi
echo "ANSWER: done"
`)
	var asked []string
	warnedAt := -1
	for _, e := range evs {
		switch {
		case e.Event == "question_asked":
			asked = append(asked, rawString(e.Fields["id"]))
		case isTooManyQuestions(e):
			if warnedAt >= 0 {
				t.Fatalf("warned twice")
			}
			warnedAt = len(asked)
		}
	}
	if len(asked) != 4 {
		t.Fatalf("%d questions asked, want 4", len(asked))
	}
	// Logged with the fourth question (before its question_asked), after the first three.
	if warnedAt != 3 {
		t.Fatalf("warning logged after %d questions, want after 3 (with the fourth)", warnedAt)
	}
}

// A completed phase starts the count again: three questions, a phase, one more question.
func TestQuestionsAreCountedPerPhase(t *testing.T) {
	evs := askingRun(t, `if [ "$n" -le 3 ]; then `+questionBlock+` exit 0; fi
if [ "$n" -eq 4 ]; then echo "=== PHASE 1 COMPLETE ==="; echo "Phase: one"; `+questionBlock+` exit 0; fi
echo "ANSWER: done"
`)
	asked, phases := 0, 0
	for _, e := range evs {
		switch {
		case e.Event == "question_asked":
			asked++
		case e.Event == "phase_completed":
			phases++
		case isTooManyQuestions(e):
			t.Fatalf("warned with %d questions asked, %d phases: the count is per phase", asked, phases)
		}
	}
	if asked != 4 || phases != 1 {
		t.Fatalf("%d questions and %d phases, want 4 and 1", asked, phases)
	}
}

// A client that answers the moment it hears of a request (question_asked,
// dependency_requested, phase_completed as runEvents) is never refused: the event comes
// once the request can take its answer.
func TestAnswerOnTheEventIsTaken(t *testing.T) {
	agent := script(t, t.TempDir(), "agent.sh", `cat >/dev/null
case "$AGENTCANVAS_TURN" in
1) `+questionBlock+`;;
2) printf '[DEPENDENCY_REQUEST]\ntype: api_key\nname: MY_KEY\ndescription: a key\nrequired: true\n[/DEPENDENCY_REQUEST]\n';;
*) [ -n "$MY_KEY" ] || exit 3; echo "=== PHASE 1 COMPLETE ==="; echo "Phase: one"; echo "ANSWER: done";;
esac
`)
	ws, f := workspace(t, strings.ReplaceAll(oneAgentFlow, "AGENT", agent))
	var mu sync.Mutex
	var answerErrs []error
	answered := map[string]int{}
	started := time.Now()
	m := &Manager{Limits: recording, Workspace: ws}
	m.Event = func(ev eventlog.Event) {
		id, _ := ev.Fields["id"].(string)
		var err error
		switch ev.Event {
		case "question_asked", "phase_completed":
			err = m.Answer(ev.RunID, id, "yes")
		case "dependency_requested":
			// its deadline: the runtime's dependency timeout from when it was asked
			if d, perr := time.Parse(time.RFC3339, fmt.Sprint(ev.Fields["deadline"])); perr != nil || d.Before(started.Add(time.Hour-time.Second)) || d.After(time.Now().Add(time.Hour)) {
				t.Errorf("dependency_requested deadline %v (%v), want an hour after it was asked", ev.Fields["deadline"], perr)
			}
			err = m.Provide(ev.RunID, id, "value-123456")
		default:
			return
		}
		mu.Lock()
		answered[ev.Event]++
		if err != nil {
			answerErrs = append(answerErrs, err)
			_ = m.Stop(ev.RunID) // nobody else will answer: end the run rather than wait
		}
		mu.Unlock()
	}
	info, err := m.Start(f, StartParams{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := m.Wait(info.RunID)
	mu.Lock()
	defer mu.Unlock()
	if len(answerErrs) > 0 {
		t.Fatalf("answers sent on the event were refused: %v", answerErrs)
	}
	if answered["question_asked"] != 1 || answered["dependency_requested"] != 1 || answered["phase_completed"] != 1 {
		t.Fatalf("requests answered: %v", answered)
	}
	if out.Status != StatusCompleted {
		t.Fatalf("outcome %+v", out)
	}
	for _, e := range events(t, ws, f.Name) {
		if strings.HasSuffix(e.Event, "_answered") || strings.HasSuffix(e.Event, "_resolved") {
			if o := rawString(e.Fields["outcome"]); o != "answered" && o != "provided" {
				t.Errorf("%s: outcome %q", e.Event, o)
			}
		}
	}
}
