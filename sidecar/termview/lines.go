package termview

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// lines are what an event is worth printing: the events that matter to a person (questions,
// handoffs, proposals, warnings, errors, the ends of interactions and of the run). Agents'
// turns are the live block's; without one (plain output) each turn's start and end is a
// line too, so a CI log still says who worked when.
func (v *View) lines(ev eventlog.Event) []string {
	head := v.stamp(ev)
	if ev.InteractionID != "" {
		head += v.paint(bold, ev.InteractionID) + " "
	}
	if print := eventLines[ev.Event]; print != nil {
		return print(v, ev, printer{v: v, head: head})
	}
	return nil
}

// eventLines says each kind of event worth printing in lines, one function a kind (or a
// family printed alike); events not listed print nothing.
var eventLines = map[string]func(*View, eventlog.Event, printer) []string{
	"run_started":          (*View).runStarted,
	"run_resumed":          (*View).runStarted,
	"interaction_started":  (*View).interactionStarted,
	"agent_started":        (*View).agentStarted,
	"agent_finished":       (*View).agentFinished,
	"message":              (*View).handoff,
	"message_refused":      (*View).messageRefused,
	"message_held":         (*View).busMessage,
	"message_released":     (*View).busMessage,
	"message_expired":      (*View).busMessage,
	"message_dropped":      (*View).busMessage,
	"dependency_invalid":   (*View).dependencyInvalid,
	"access_denied":        (*View).accessDenied,
	"undeliverable":        (*View).undeliverable,
	"proposal_conflict":    (*View).proposalConflict,
	"reply_repair":         (*View).replyRepair,
	"warning":              (*View).warning,
	"error":                (*View).errorLine,
	"question_asked":       (*View).questionAsked,
	"dependency_requested": (*View).dependencyRequested,
	"phase_completed":      (*View).phaseCompleted,
	"question_answered":    (*View).answered,
	"dependency_resolved":  (*View).answered,
	"phase_resolved":       (*View).answered,
	"phase_verified":       (*View).phaseVerified,
	"proposal_created":     (*View).proposalCreated,
	"proposal_reviewed":    (*View).proposalReviewed,
	"proposal_applied":     (*View).proposalApplied,
	"proposal_held":        (*View).proposalHeld,
	"tests_run":            (*View).testsRun,
	"vote_counted":         (*View).voteCounted,
	"awarded":              (*View).awarded,
	"terminated":           (*View).terminated,
	"run_interrupted":      (*View).runInterrupted,
	"run_finished":         (*View).runFinished,
}

// printer starts an event's lines: its time stamp and interaction are the head of its first.
type printer struct {
	v    *View
	head string
}

// one is the one line most events take: head, a painted mark, and the text made visible
// (agents' and files' text may hold control characters).
func (p printer) one(s style, mark, text string) []string {
	if mark != "" {
		mark = p.v.paint(s, mark) + " "
	}
	return []string{p.head + mark + multiline(termsafe.Text(text))}
}

// agentOf is the agent an event is about, "" for none.
func agentOf(ev eventlog.Event) string { return eventlog.Str(ev.Fields["agent"]) }

// runStarted is the run's first line, then its task and the limits it runs under.
func (v *View) runStarted(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	verb := "run"
	if ev.Event == "run_resumed" {
		verb = "resumed run"
	}
	n, _ := eventlog.Num(f["interactions"])
	what := fmt.Sprintf("%s %s of %s: %s", verb, ev.RunID, ev.Flow, plural(int(n), "interaction", "interactions"))
	if eventlog.Str(f["dryRun"]) == "true" {
		what += ", dry run (no model is called)"
	}
	out := []string{p.head + v.paint(bold, "▶ "+what)}
	if t := firstLine(eventlog.Str(f["task"])); t != "" {
		out = append(out, Indent+"task: "+termsafe.Line(t))
	}
	if m := eventlog.Str(eventlog.Object(f["defaultLimit"])["message"]); m != "" {
		out = append(out, Indent+"limit: "+m)
	}
	if b := budgetWords(eventlog.Object(f["budget"])); b != "" {
		out = append(out, Indent+"limit: the run stops at "+b+" spent (policy.budget)")
	}
	return out
}

func (v *View) interactionStarted(ev eventlog.Event, p printer) []string {
	return p.one(plain, "", fmt.Sprintf("started %s: %s", eventlog.Str(ev.Fields["patternId"]), strings.Join(eventlog.Strs(ev.Fields["nodes"]), ", ")))
}

// agentStarted is a line in plain output only; the live block shows running agents.
func (v *View) agentStarted(ev eventlog.Event, p printer) []string {
	if v.o.Live {
		return nil
	}
	round, _ := eventlog.Num(ev.Fields["round"]) // the engine counts from 0; people from 1
	return p.one(dim, "·", fmt.Sprintf("%s started (round %d, %s)", agentOf(ev), int(round)+1, eventlog.Str(ev.Fields["backend"])))
}

// agentFinished says a stopped or failed turn always; a completed one only in plain output,
// with what it spent and its note.
func (v *View) agentFinished(ev eventlog.Event, p printer) []string {
	f, who := ev.Fields, agentOf(ev)
	if st := eventlog.Str(f["status"]); st == "stopped" {
		return p.one(yellow, "■", fmt.Sprintf("%s: turn %s", who, v.stopReason(eventlog.Str(f["error"]))))
	} else if st != "completed" {
		return v.turnFailed(ev, p, st)
	}
	if v.o.Live {
		return nil
	}
	msg := who + " finished"
	if a := v.r.byID[who]; a != nil {
		msg += " (" + strings.Join(spend(a, false), ", ") + ")"
	}
	if n := v.notes[who]; n != "" {
		msg += ": " + cut(n, 80)
	}
	return p.one(dim, "·", msg)
}

// turnFailed is a failed turn's line and its stderr, or that it printed none, so the
// person sees why without opening the log.
func (v *View) turnFailed(ev eventlog.Event, p printer, status string) []string {
	f := ev.Fields
	msg := fmt.Sprintf("%s: turn %s", agentOf(ev), status)
	if e := eventlog.Str(f["error"]); e != "" {
		msg += ": " + e
	}
	out := p.one(red, "✗", msg)
	for _, l := range eventlog.Strs(f["stderr"]) {
		out = append(out, Indent+"  "+v.paint(dim, "│ ")+termsafe.Line(l))
	}
	if len(eventlog.Strs(f["stderr"])) == 0 && status == "failed" {
		out = append(out, Indent+"  "+v.paint(dim, "(the agent printed nothing on stderr)"))
	}
	return out
}

func (v *View) terminated(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	status, reason := eventlog.Str(f["status"]), eventlog.Str(f["reason"])
	rounds, _ := eventlog.Num(f["rounds"])
	switch {
	case reason == "skipped":
		return p.one(dim, "■", "skipped: "+eventlog.Str(f["note"]))
	case status == "failed":
		return p.one(red, "■", "failed: "+firstNonEmpty(eventlog.Str(f["error"]), reason))
	case status == "stopped":
		return p.one(yellow, "■", "stopped")
	}
	msg := fmt.Sprintf("%s (%s) after %s", status, reason, plural(int(rounds), "round", "rounds"))
	if r := firstLine(eventlog.Str(f["result"])); r != "" {
		msg += ": " + cut(r, 160)
	}
	return p.one(green, "■", msg)
}

func (v *View) runInterrupted(ev eventlog.Event, p printer) []string {
	return []string{p.head + v.paint(yellow, "■ run interrupted: "+termsafe.Line(eventlog.Str(ev.Fields["reason"])))}
}

func (v *View) runFinished(ev eventlog.Event, p printer) []string {
	return []string{p.head + v.finished(ev)}
}

// finished is the run's last line: how it ended, how long it took, what it did and cost.
func (v *View) finished(ev eventlog.Event) string {
	f := ev.Fields
	status := eventlog.Str(f["status"])
	took := time.Duration(0)
	if !v.r.started.IsZero() {
		took = ev.Time().Sub(v.r.started)
	}
	msg := fmt.Sprintf("■ run %s in %s", status, Duration(took))
	if r := eventlog.Str(f["reason"]); r != "" {
		msg += " (" + termsafe.Line(r) + ")"
	}
	parts := []string{plural(v.r.turns, "agent turn", "agent turns")}
	if v.r.tokens > 0 {
		parts = append(parts, Tokens(v.r.tokens)+" tokens")
	}
	if v.r.turns > 0 && v.r.costKnown {
		parts = append(parts, USD(v.r.cost))
	} else if v.r.turns > 0 {
		parts = append(parts, "cost not reported by every backend")
	}
	if n := len(eventlog.Strs(f["proposals"])); n > 0 {
		parts = append(parts, plural(n, "proposal", "proposals"))
	}
	s := green
	if status != "completed" {
		s = red
	}
	return v.paint(s, msg) + ": " + strings.Join(parts, ", ")
}

func firstLine(s string) string { return engine.Summary(s) }

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// budgetWords says a policy.budget in words: "$5 or 2M tokens", "" for none.
func budgetWords(b map[string]any) string {
	var parts []string
	if usd, ok := eventlog.Num(b["usd"]); ok && usd > 0 {
		parts = append(parts, USD(usd))
	}
	if tok, ok := eventlog.Num(b["tokens"]); ok && tok > 0 {
		parts = append(parts, Tokens(int64(tok))+" tokens")
	}
	return strings.Join(parts, " or ")
}

// stopReason says why a turn was stopped in words, not as the Go error the cancellation gave
// it ("cancelled: context canceled").
func (v *View) stopReason(err string) string {
	switch {
	case v.r.byYou:
		return "stopped by you"
	case v.r.belowOneCall:
		return "stopped: its " + v.r.limit + " limit is below what one model call needs"
	case v.r.limit != "":
		return "stopped: the run reached its " + v.r.limit + " limit"
	case strings.Contains(err, "deadline exceeded"):
		return "stopped: its interaction's time limit was reached"
	case strings.Contains(err, "context canceled") || err == "":
		return "stopped: its interaction or the run ended"
	}
	return "stopped: " + err
}
