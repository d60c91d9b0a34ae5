package termview

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
)

// The lines of messages between agents and of what went wrong on the way: refusals,
// warnings and errors, each said where the person looks.

// handoff is the one message type worth a line: the work moving from one agent to others.
func (v *View) handoff(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	if eventlog.Str(f["type"]) != "handoff" {
		return nil
	}
	return p.one(cyan, "→", fmt.Sprintf("%s hands off to %s", eventlog.Str(f["from"]), strings.Join(eventlog.Strs(f["to"]), ", ")))
}

func (v *View) messageRefused(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	return p.one(yellow, "!", fmt.Sprintf("message %s from %s to %s refused: %s", eventlog.Str(f["type"]), eventlog.Str(f["from"]), strings.Join(eventlog.Strs(f["to"]), ", "), eventlog.Str(f["error"])))
}

func (v *View) busMessage(ev eventlog.Event, p printer) []string {
	return p.one(busLine(ev))
}

func (v *View) undeliverable(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	return p.one(yellow, "!", fmt.Sprintf("%s's message is undeliverable: no peer carries %s", eventlog.Str(f["from"]), strings.Join(eventlog.Strs(f["to"]), ", ")))
}

func (v *View) dependencyInvalid(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	return p.one(yellow, "!", fmt.Sprintf("%s's dependency %s: the value given was refused (%s); asked again", agentOf(ev), eventlog.Str(f["name"]), eventlog.Str(f["error"])))
}

func (v *View) accessDenied(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	msg := fmt.Sprintf("%s was refused access to %s", agentOf(ev), firstNonEmpty(eventlog.Str(f["path"]), "a file"))
	if m := eventlog.Str(f["message"]); m != "" {
		msg += ": " + m
	}
	return p.one(yellow, "!", msg)
}

func (v *View) proposalConflict(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	return p.one(yellow, "!", fmt.Sprintf("%s's proposal collides with %s's (run %s) in %s: %s", agentOf(ev), eventlog.Str(f["otherAgentId"]), eventlog.Str(f["otherRunId"]), eventlog.Str(f["path"]), eventlog.Str(f["message"])))
}

func (v *View) replyRepair(ev eventlog.Event, p printer) []string {
	return p.one(yellow, "!", fmt.Sprintf("%s's reply lacks `%s`: asked again", agentOf(ev), strings.Join(eventlog.Strs(ev.Fields["missing"]), "`, `")))
}

func (v *View) warning(ev eventlog.Event, p printer) []string {
	msg := eventlog.Str(ev.Fields["message"])
	if who := agentOf(ev); who != "" {
		msg = who + ": " + msg
	}
	return p.one(yellow, "!", msg)
}

// errorLine is an error's message; for an invalid protocol block, its kind and what was
// wrong with it.
func (v *View) errorLine(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	msg := eventlog.Str(f["message"])
	if b := eventlog.Object(f["block"]); b != nil {
		fields := eventlog.Object(b["fields"])
		msg = firstNonEmpty(eventlog.Str(fields["message"]), eventlog.Str(b["error"]), "an invalid block")
		msg = fmt.Sprintf("[%s] %s", eventlog.Str(b["kind"]), msg)
	}
	if who := agentOf(ev); who != "" {
		msg = who + ": " + msg
	}
	return p.one(red, "✗", msg)
}
