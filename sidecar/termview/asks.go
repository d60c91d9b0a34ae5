package termview

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// The lines of what waits for a person: questions, dependency requests and phase approvals,
// how each was answered, and each phase's check.

func (v *View) questionAsked(ev eventlog.Event, p printer) []string {
	q := eventlog.Object(ev.Fields["fields"])
	msg := fmt.Sprintf("%s asks: %s", agentOf(ev), eventlog.Str(q["question"]))
	if opts := eventlog.Strs(q["options"]); len(opts) > 0 {
		msg += " [" + strings.Join(opts, " / ") + "]"
	}
	if d := eventlog.Str(q["default"]); d != "" {
		msg += " (default: " + d + ")"
	}
	return p.one(yellow, "?", msg)
}

func (v *View) dependencyRequested(ev eventlog.Event, p printer) []string {
	q := eventlog.Object(ev.Fields["fields"])
	msg := fmt.Sprintf("%s needs %s %q", agentOf(ev), firstNonEmpty(eventlog.Str(q["type"]), "a value"), eventlog.Str(q["name"]))
	if r := eventlog.Str(q["description"]); r != "" {
		msg += ": " + r
	}
	return p.one(yellow, "?", msg)
}

func (v *View) phaseCompleted(ev eventlog.Event, p printer) []string {
	q := eventlog.Object(ev.Fields["fields"])
	return p.one(yellow, "?", fmt.Sprintf("%s completed phase %s and waits for approval", agentOf(ev), eventlog.Str(q["N"])))
}

// answered is how a question, dependency request or phase was resolved; red when it failed.
func (v *View) answered(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	what := map[string]string{"question_answered": "question", "dependency_resolved": "dependency request", "phase_resolved": "phase"}[ev.Event]
	out := eventlog.Str(f["outcome"])
	s := yellow
	if strings.HasPrefix(out, "failed") || strings.HasPrefix(out, "error") {
		s = red
	}
	return p.one(s, "?", fmt.Sprintf("%s's %s %s: %s", agentOf(ev), what, eventlog.Str(f["id"]), out))
}

// phaseVerified is a phase's check: passed, or failed with its command and first output line.
func (v *View) phaseVerified(ev eventlog.Event, p printer) []string {
	f, who := ev.Fields, agentOf(ev)
	if eventlog.Str(f["passed"]) == "true" {
		return p.one(green, "✓", fmt.Sprintf("%s: phase %s passed its check", who, eventlog.Str(f["id"])))
	}
	out := p.one(yellow, "!", fmt.Sprintf("%s: phase %s failed its check (rework %s): %s", who, eventlog.Str(f["id"]), eventlog.Str(f["reworks"]), strings.Join(eventlog.Strs(f["command"]), " ")))
	if o := strings.TrimSpace(eventlog.Str(f["output"])); o != "" {
		out = append(out, Indent+"  "+v.paint(dim, "│ ")+cut(termsafe.Line(firstLine(o)), 160))
	}
	return out
}
