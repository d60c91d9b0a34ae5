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
	f := ev.Fields
	who := eventlog.Str(f["agent"])
	head := v.stamp(ev)
	if ev.InteractionID != "" {
		head += v.paint(bold, ev.InteractionID) + " "
	}
	one := func(s style, mark, text string) []string {
		if mark != "" {
			mark = v.paint(s, mark) + " "
		}
		return []string{head + mark + multiline(termsafe.Text(text))} // agents' and files' text made visible
	}
	switch ev.Event {
	case "run_started", "run_resumed":
		verb := "run"
		if ev.Event == "run_resumed" {
			verb = "resumed run"
		}
		n, _ := eventlog.Num(f["interactions"])
		what := fmt.Sprintf("%s %s of %s: %s", verb, ev.RunID, ev.Flow, plural(int(n), "interaction", "interactions"))
		if eventlog.Str(f["dryRun"]) == "true" {
			what += ", dry run (no model is called)"
		}
		out := []string{head + v.paint(bold, "▶ "+what)}
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
	case "interaction_started":
		return one(plain, "", fmt.Sprintf("started %s: %s", eventlog.Str(f["patternId"]), strings.Join(eventlog.Strs(f["nodes"]), ", ")))
	case "agent_started":
		if v.o.Live {
			return nil
		}
		round, _ := eventlog.Num(f["round"]) // the engine counts from 0; people from 1
		return one(dim, "·", fmt.Sprintf("%s started (round %d, %s)", who, int(round)+1, eventlog.Str(f["backend"])))
	case "agent_finished":
		a := v.r.byID[who]
		if st := eventlog.Str(f["status"]); st == "stopped" {
			return one(yellow, "■", fmt.Sprintf("%s: turn %s", who, v.stopReason(eventlog.Str(f["error"]))))
		} else if st != "completed" {
			msg := fmt.Sprintf("%s: turn %s", who, st)
			if e := eventlog.Str(f["error"]); e != "" {
				msg += ": " + e
			}
			out := one(red, "✗", msg)
			for _, l := range eventlog.Strs(f["stderr"]) {
				out = append(out, Indent+"  "+v.paint(dim, "│ ")+termsafe.Line(l))
			}
			if len(eventlog.Strs(f["stderr"])) == 0 && st == "failed" {
				out = append(out, Indent+"  "+v.paint(dim, "(the agent printed nothing on stderr)"))
			}
			return out
		}
		if v.o.Live {
			return nil
		}
		msg := who + " finished"
		if a != nil {
			msg += " (" + strings.Join(spend(a, false), ", ") + ")"
		}
		if n := v.notes[who]; n != "" {
			msg += ": " + cut(n, 80)
		}
		return one(dim, "·", msg)
	case "message":
		if eventlog.Str(f["type"]) == "handoff" {
			return one(cyan, "→", fmt.Sprintf("%s hands off to %s", eventlog.Str(f["from"]), strings.Join(eventlog.Strs(f["to"]), ", ")))
		}
	case "message_refused":
		return one(yellow, "!", fmt.Sprintf("message %s from %s to %s refused: %s", eventlog.Str(f["type"]), eventlog.Str(f["from"]), strings.Join(eventlog.Strs(f["to"]), ", "), eventlog.Str(f["error"])))
	case "message_held", "message_released", "message_expired", "message_dropped":
		return one(busLine(ev))
	case "dependency_invalid":
		return one(yellow, "!", fmt.Sprintf("%s's dependency %s: the value given was refused (%s); asked again", who, eventlog.Str(f["name"]), eventlog.Str(f["error"])))
	case "access_denied":
		msg := fmt.Sprintf("%s was refused access to %s", who, firstNonEmpty(eventlog.Str(f["path"]), "a file"))
		if m := eventlog.Str(f["message"]); m != "" {
			msg += ": " + m
		}
		return one(yellow, "!", msg)
	case "undeliverable":
		return one(yellow, "!", fmt.Sprintf("%s's message is undeliverable: no peer carries %s", eventlog.Str(f["from"]), strings.Join(eventlog.Strs(f["to"]), ", ")))
	case "proposal_conflict":
		return one(yellow, "!", fmt.Sprintf("%s's proposal collides with %s's (run %s) in %s: %s", who, eventlog.Str(f["otherAgentId"]), eventlog.Str(f["otherRunId"]), eventlog.Str(f["path"]), eventlog.Str(f["message"])))
	case "reply_repair":
		return one(yellow, "!", fmt.Sprintf("%s's reply lacks `%s`: asked again", who, strings.Join(eventlog.Strs(f["missing"]), "`, `")))
	case "warning":
		msg := eventlog.Str(f["message"])
		if who != "" {
			msg = who + ": " + msg
		}
		return one(yellow, "!", msg)
	case "error":
		msg := eventlog.Str(f["message"])
		if b := eventlog.Object(f["block"]); b != nil {
			fields := eventlog.Object(b["fields"])
			msg = firstNonEmpty(eventlog.Str(fields["message"]), eventlog.Str(b["error"]), "an invalid block")
			msg = fmt.Sprintf("[%s] %s", eventlog.Str(b["kind"]), msg)
		}
		if who != "" {
			msg = who + ": " + msg
		}
		return one(red, "✗", msg)
	case "question_asked":
		q := eventlog.Object(f["fields"])
		msg := fmt.Sprintf("%s asks: %s", who, eventlog.Str(q["question"]))
		if opts := eventlog.Strs(q["options"]); len(opts) > 0 {
			msg += " [" + strings.Join(opts, " / ") + "]"
		}
		if d := eventlog.Str(q["default"]); d != "" {
			msg += " (default: " + d + ")"
		}
		return one(yellow, "?", msg)
	case "dependency_requested":
		q := eventlog.Object(f["fields"])
		msg := fmt.Sprintf("%s needs %s %q", who, firstNonEmpty(eventlog.Str(q["type"]), "a value"), eventlog.Str(q["name"]))
		if r := eventlog.Str(q["description"]); r != "" {
			msg += ": " + r
		}
		return one(yellow, "?", msg)
	case "phase_completed":
		q := eventlog.Object(f["fields"])
		return one(yellow, "?", fmt.Sprintf("%s completed phase %s and waits for approval", who, eventlog.Str(q["N"])))
	case "question_answered", "dependency_resolved", "phase_resolved":
		what := map[string]string{"question_answered": "question", "dependency_resolved": "dependency request", "phase_resolved": "phase"}[ev.Event]
		out := eventlog.Str(f["outcome"])
		s := yellow
		if strings.HasPrefix(out, "failed") || strings.HasPrefix(out, "error") {
			s = red
		}
		return one(s, "?", fmt.Sprintf("%s's %s %s: %s", who, what, eventlog.Str(f["id"]), out))
	case "phase_verified":
		if eventlog.Str(f["passed"]) == "true" {
			return one(green, "✓", fmt.Sprintf("%s: phase %s passed its check", who, eventlog.Str(f["id"])))
		}
		out := one(yellow, "!", fmt.Sprintf("%s: phase %s failed its check (rework %s): %s", who, eventlog.Str(f["id"]), eventlog.Str(f["reworks"]), strings.Join(eventlog.Strs(f["command"]), " ")))
		if o := strings.TrimSpace(eventlog.Str(f["output"])); o != "" {
			out = append(out, Indent+"  "+v.paint(dim, "│ ")+cut(termsafe.Line(firstLine(o)), 160))
		}
		return out
	case "proposal_created":
		files := eventlog.List(f["changedFiles"])
		names := make([]string, 0, 3)
		for i, cf := range files {
			if i == 3 {
				names = append(names, fmt.Sprintf("and %d more", len(files)-3))
				break
			}
			names = append(names, fmt.Sprintf("%s (%s)", eventlog.Str(cf["path"]), eventlog.Str(cf["status"])))
		}
		return one(cyan, "+", fmt.Sprintf("%s proposes %s: %s", who, plural(len(files), "file", "files"), strings.Join(names, ", ")))
	case "proposal_reviewed":
		var out []string
		if held := eventlog.List(f["held"]); len(held) > 0 {
			var names []string
			for _, h := range held {
				names = append(names, eventlog.Str(h["shown"]))
			}
			out = one(yellow, "⚠", fmt.Sprintf("%s's proposal changes how things run (%s): it waits for a person to confirm each by name", who, strings.Join(names, ", ")))
		}
		if eventlog.Str(f["applicable"]) != "false" {
			return out
		}
		var probs []string
		for _, p := range eventlog.List(f["problems"]) {
			probs = append(probs, strings.TrimPrefix(eventlog.Str(p["path"])+": "+eventlog.Str(p["reason"]), ": "))
		}
		return append(out, one(yellow, "!", fmt.Sprintf("%s's proposal does not apply to the workspace: %s", who, firstNonEmpty(strings.Join(probs, "; "), "see proposal review")))...)
	case "proposal_applied":
		return one(green, "✓", fmt.Sprintf("%s's proposal applied to the workspace", who))
	case "proposal_held":
		return one(plain, "·", fmt.Sprintf("%s's proposal left for review: %s", who, eventlog.Str(f["reason"])))
	case "tests_run":
		return v.testsRun(ev, one)
	case "vote_counted":
		share, _ := eventlog.Num(f["share"])
		return one(plain, "·", fmt.Sprintf("vote: %q with %.0f%%", eventlog.Str(f["winner"]), share*100))
	case "awarded":
		return one(plain, "·", fmt.Sprintf("awarded to %s", eventlog.Str(f["winner"])))
	case "terminated":
		return v.terminated(ev, one)
	case "run_interrupted":
		return []string{head + v.paint(yellow, "■ run interrupted: "+termsafe.Line(eventlog.Str(f["reason"])))}
	case "run_finished":
		return []string{head + v.finished(ev)}
	}
	return nil
}

// testsRun is a check run in a worker's sandbox: passed, or failed with its command, exit
// status and failing lines (the review shows the same).
func (v *View) testsRun(ev eventlog.Event, one func(style, string, string) []string) []string {
	f := ev.Fields
	who, cmd := eventlog.Str(f["agent"]), strings.Join(eventlog.Strs(f["command"]), " ")
	if eventlog.Str(f["passed"]) == "true" {
		return one(green, "✓", fmt.Sprintf("%s's tests passed: %s", who, cmd))
	}
	how := "exited " + eventlog.Str(f["exitCode"])
	if e := eventlog.Str(f["error"]); e != "" {
		how = "could not run: " + e
	}
	out := one(red, "✗", fmt.Sprintf("%s's tests FAILED: %s %s", who, cmd, how))
	for i, l := range eventlog.Strs(f["failing"]) {
		if i == 5 {
			out = append(out, Indent+"  "+v.paint(dim, "│ … (proposal review shows them all)"))
			break
		}
		out = append(out, Indent+"  "+v.paint(dim, "│ ")+cut(termsafe.Line(l), 160))
	}
	return out
}

func (v *View) terminated(ev eventlog.Event, one func(style, string, string) []string) []string {
	f := ev.Fields
	status, reason := eventlog.Str(f["status"]), eventlog.Str(f["reason"])
	rounds, _ := eventlog.Num(f["rounds"])
	switch {
	case reason == "skipped":
		return one(dim, "■", "skipped: "+eventlog.Str(f["note"]))
	case status == "failed":
		return one(red, "■", "failed: "+firstNonEmpty(eventlog.Str(f["error"]), reason))
	case status == "stopped":
		return one(yellow, "■", "stopped")
	}
	msg := fmt.Sprintf("%s (%s) after %s", status, reason, plural(int(rounds), "round", "rounds"))
	if r := firstLine(eventlog.Str(f["result"])); r != "" {
		msg += ": " + cut(r, 160)
	}
	return one(green, "■", msg)
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
