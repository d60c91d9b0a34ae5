package termview

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// The lines of what workers propose and how it fares: the files, the review, tests, votes.

// proposalCreated names the first three changed files and counts the rest.
func (v *View) proposalCreated(ev eventlog.Event, p printer) []string {
	files := eventlog.List(ev.Fields["changedFiles"])
	names := make([]string, 0, 3)
	for i, cf := range files {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(files)-3))
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", eventlog.Str(cf["path"]), eventlog.Str(cf["status"])))
	}
	return p.one(cyan, "+", fmt.Sprintf("%s proposes %s: %s", agentOf(ev), plural(len(files), "file", "files"), strings.Join(names, ", ")))
}

// proposalReviewed says what of the review needs the person: changes held for confirmation
// by name, and a proposal that does not apply.
func (v *View) proposalReviewed(ev eventlog.Event, p printer) []string {
	f, who := ev.Fields, agentOf(ev)
	var out []string
	if held := eventlog.List(f["held"]); len(held) > 0 {
		var names []string
		for _, h := range held {
			names = append(names, eventlog.Str(h["shown"]))
		}
		out = p.one(yellow, "⚠", fmt.Sprintf("%s's proposal changes how things run (%s): it waits for a person to confirm each by name", who, strings.Join(names, ", ")))
	}
	if eventlog.Str(f["applicable"]) != "false" {
		return out
	}
	var probs []string
	for _, pr := range eventlog.List(f["problems"]) {
		probs = append(probs, strings.TrimPrefix(eventlog.Str(pr["path"])+": "+eventlog.Str(pr["reason"]), ": "))
	}
	return append(out, p.one(yellow, "!", fmt.Sprintf("%s's proposal does not apply to the workspace: %s", who, firstNonEmpty(strings.Join(probs, "; "), "see proposal review")))...)
}

func (v *View) proposalApplied(ev eventlog.Event, p printer) []string {
	return p.one(green, "✓", fmt.Sprintf("%s's proposal applied to the workspace", agentOf(ev)))
}

func (v *View) proposalHeld(ev eventlog.Event, p printer) []string {
	return p.one(plain, "·", fmt.Sprintf("%s's proposal left for review: %s", agentOf(ev), eventlog.Str(ev.Fields["reason"])))
}

// testsRun is a check run in a worker's sandbox: passed, or failed with its command, exit
// status and failing lines (the review shows the same).
func (v *View) testsRun(ev eventlog.Event, p printer) []string {
	f := ev.Fields
	who, cmd := agentOf(ev), strings.Join(eventlog.Strs(f["command"]), " ")
	if eventlog.Str(f["passed"]) == "true" {
		return p.one(green, "✓", fmt.Sprintf("%s's tests passed: %s", who, cmd))
	}
	how := "exited " + eventlog.Str(f["exitCode"])
	if e := eventlog.Str(f["error"]); e != "" {
		how = "could not run: " + e
	}
	out := p.one(red, "✗", fmt.Sprintf("%s's tests FAILED: %s %s", who, cmd, how))
	for i, l := range eventlog.Strs(f["failing"]) {
		if i == 5 {
			out = append(out, Indent+"  "+v.paint(dim, "│ … (proposal review shows them all)"))
			break
		}
		out = append(out, Indent+"  "+v.paint(dim, "│ ")+cut(termsafe.Line(l), 160))
	}
	return out
}

func (v *View) voteCounted(ev eventlog.Event, p printer) []string {
	share, _ := eventlog.Num(ev.Fields["share"])
	return p.one(plain, "·", fmt.Sprintf("vote: %q with %.0f%%", eventlog.Str(ev.Fields["winner"]), share*100))
}

func (v *View) awarded(ev eventlog.Event, p printer) []string {
	return p.one(plain, "·", fmt.Sprintf("awarded to %s", eventlog.Str(ev.Fields["winner"])))
}
