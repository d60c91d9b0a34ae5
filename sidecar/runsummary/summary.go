// Package runsummary writes the Markdown summary of a run for CI (`agentcanvas run --summary
// FILE`, and GitHub's job summary through $GITHUB_STEP_SUMMARY): how it ended, each
// interaction's outcome and termination reason, the proposals with their files and +/-
// counts, what each agent spent, and the warnings and errors, from the run's outcome and
// the events it emitted.
package runsummary

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/mdsafe"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
	"github.com/agentcanvas/agentcanvas/sidecar/termview"
)

// Input is what a summary is made from.
type Input struct {
	Outcome   *engine.Outcome
	Events    []eventlog.Event // the run's events, in the order the sink got them
	Workspace string           // proposals are read from here for their files and counts
	FlowFile  string           // the flow file as given on the command line
}

// Markdown renders the summary.
func Markdown(in Input) []byte {
	f := fold(in.Events)
	out := in.Outcome
	var b bytes.Buffer
	icon := map[string]string{engine.StatusCompleted: "✅", engine.StatusFailed: "❌", engine.StatusStopped: "⏹️"}[out.Status]
	if icon == "" {
		icon = "⚠️"
	}
	fmt.Fprintf(&b, "## %s AgentCanvas: %s %s\n\n", icon, mdsafe.Code(out.Flow), out.Status)
	facts := []string{"Run " + mdsafe.Code(out.RunID)}
	if in.FlowFile != "" {
		facts[0] += " of " + mdsafe.Code(filepath.ToSlash(in.FlowFile))
	}
	if !f.started.IsZero() && !f.finished.IsZero() {
		facts = append(facts, "took "+termview.Duration(f.finished.Sub(f.started)))
	}
	if f.dryRun {
		facts = append(facts, "dry run (no model was called)")
	}
	b.WriteString(strings.Join(facts, ", ") + ".")
	if out.Reason != "" {
		b.WriteString(" " + capital(out.Reason) + ".")
	}
	b.WriteString("\n")
	if f.task != "" {
		fmt.Fprintf(&b, "\n> %s\n", strings.ReplaceAll(termsafe.Text(strings.TrimSpace(f.task)), "\n", "\n> "))
	}

	b.WriteString("\n### Interactions\n\n| interaction | pattern | outcome | ended by | rounds | result |\n|---|---|---|---|--:|---|\n")
	for _, io := range out.Interactions {
		result := io.Error
		if result == "" {
			result = engine.Summary(io.Result)
		}
		if io.Status == engine.StatusSkipped && result == "" {
			result = f.skipNote[io.ID]
		}
		fmt.Fprintf(&b, "| %s | %s | %s %s | %s | %d | %s |\n", mdsafe.Code(io.ID), cell(io.PatternID), statusIcon(io.Status), io.Status, cell(io.Reason), io.Rounds, cell(cut(result, 200)))
	}

	writeProposals(&b, in, f)
	writeTests(&b, f)
	writeAgents(&b, f)
	writeProblems(&b, f)

	if out.Flow != "" {
		fmt.Fprintf(&b, "\n<sub>Event log: %s</sub>\n", mdsafe.Code(filepath.ToSlash(filepath.Join(eventlog.LogsDir, out.Flow))+"/"))
	}
	return b.Bytes()
}

// Refused is the summary of a run that never started (a flow with validation errors, an
// unreadable file): what was refused and why.
func Refused(flowFile string, err error) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## ❌ AgentCanvas: %s refused\n\nThe run did not start.\n\n%s", mdsafe.Code(filepath.ToSlash(flowFile)), mdsafe.Block(err.Error(), ""))
	return b.Bytes()
}

func writeProposals(b *bytes.Buffer, in Input, f *folded) {
	if len(in.Outcome.Proposals) == 0 {
		b.WriteString("\n### Proposals\n\nNone: no worker handed off a change.\n")
		return
	}
	b.WriteString("\n### Proposals\n\n| agent | file | change | + | − | state |\n|---|---|---|--:|--:|---|\n")
	files, added, deleted := 0, 0, 0
	for _, ref := range in.Outcome.Proposals {
		pr, stats, err := proposal.Stats(in.Workspace, ref)
		agent := f.proposalAgent[ref]
		if agent == "" && pr != nil {
			agent = pr.AgentID
		}
		state := f.proposalState[ref]
		if state == "" {
			state = "pending review"
		}
		if h := f.held[ref]; h != "" {
			state = "⚠️ changes how things run (" + h + "); " + state
		}
		if t := f.tests[agent]; t != nil && !t.passed {
			state = "❌ tests failed; " + state
		}
		if err != nil {
			fmt.Fprintf(b, "| %s | %s | unreadable: %s | | | %s |\n", mdsafe.Code(agent), mdsafe.Code(ref), cell(err.Error()), cell(state))
			continue
		}
		for i, s := range stats {
			who, st := "", ""
			if i == 0 {
				who, st = mdsafe.Code(agent), cell(state)
			}
			plus, minus := fmt.Sprint(s.Added), fmt.Sprint(s.Deleted)
			if s.Binary {
				plus, minus = "bin", "bin"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", who, mdsafe.Code(s.Path), s.Status, plus, minus, st)
			files++
			added += s.Added
			deleted += s.Deleted
		}
	}
	fmt.Fprintf(b, "\n%s, %s, +%d −%d. ", plural(len(in.Outcome.Proposals), "proposal", "proposals"), plural(files, "file", "files"), added, deleted)
	fmt.Fprintf(b, "One patch of them for `git am` or `git apply`: `agentcanvas proposal export --workspace . %s > %s.patch`.\n", in.Outcome.RunID, in.Outcome.RunID)
}

// testRun is a worker's last tests_run.
type testRun struct {
	passed             bool
	command, exit, err string
	failing            []string
}

// writeTests lists each worker's last test result: the command, how it ended, and for a
// failure the lines that say what failed.
func writeTests(b *bytes.Buffer, f *folded) {
	if len(f.testOrder) == 0 {
		return
	}
	b.WriteString("\n### Tests\n\n")
	for _, who := range f.testOrder {
		t := f.tests[who]
		if t.passed {
			fmt.Fprintf(b, "- ✅ %s: %s passed\n", mdsafe.Code(who), mdsafe.Code(t.command))
			continue
		}
		how := "exited " + t.exit
		if t.err != "" {
			how = "could not run: " + mdsafe.Text(t.err)
		}
		fmt.Fprintf(b, "- ❌ %s: %s **failed** (%s)\n", mdsafe.Code(who), mdsafe.Code(t.command), how)
		if len(t.failing) > 0 {
			b.WriteString(mdsafe.Block(strings.Join(t.failing, "\n"), "  "))
		}
	}
}

func writeAgents(b *bytes.Buffer, f *folded) {
	if len(f.agents) == 0 {
		return
	}
	b.WriteString("\n### Agents\n\n| agent | turns | time | tokens in | tokens out | cost |\n|---|--:|--:|--:|--:|--:|\n")
	var turns int
	var in, out int64
	var cost float64
	costKnown := true
	for _, a := range f.agents {
		c := "not reported"
		if a.costKnown {
			c = termview.USD(a.cost)
		} else {
			costKnown = false
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s |\n", mdsafe.Code(a.id), a.turns, termview.Duration(a.busy), count(a.in), count(a.out), c)
		turns += a.turns
		in += a.in
		out += a.out
		cost += a.cost
	}
	total := termview.USD(cost)
	if !costKnown {
		total += " + not reported"
	}
	fmt.Fprintf(b, "| **total** | %d | | %s | %s | %s |\n", turns, count(in), count(out), total)
}

func writeProblems(b *bytes.Buffer, f *folded) {
	if len(f.problems) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Warnings and errors (%d)\n\n", len(f.problems))
	for _, p := range f.problems {
		icon := "⚠️"
		if p.err {
			icon = "❌"
		}
		where := ""
		if p.interaction != "" {
			where = mdsafe.Code(p.interaction) + " "
		}
		if p.agent != "" {
			where += mdsafe.Code(p.agent) + ": "
		}
		fmt.Fprintf(b, "- %s %s%s\n", icon, where, mdsafe.Text(p.message))
		if len(p.detail) > 0 {
			b.WriteString(mdsafe.Block(strings.Join(p.detail, "\n"), "  "))
		}
	}
}

// --- what the events say ---------------------------------------------------------------------

type agentSpend struct {
	id        string
	turns     int
	busy      time.Duration
	started   time.Time
	in, out   int64
	cost      float64
	costKnown bool
}

type problem struct {
	err                bool
	interaction, agent string
	message            string
	detail             []string
}

type folded struct {
	started, finished time.Time
	dryRun            bool
	task              string
	agents            []*agentSpend
	byAgent           map[string]*agentSpend
	proposalAgent     map[string]string // proposal ref → agent
	proposalState     map[string]string // proposal ref → applied / left for review: why / does not apply: why
	held              map[string]string // proposal ref → the held files, shown escaped
	tests             map[string]*testRun
	testOrder         []string // agents in the order their tests first ran
	skipNote          map[string]string
	problems          []problem
}

func fold(evs []eventlog.Event) *folded {
	f := &folded{byAgent: map[string]*agentSpend{}, proposalAgent: map[string]string{}, proposalState: map[string]string{}, skipNote: map[string]string{},
		held: map[string]string{}, tests: map[string]*testRun{}}
	agent := func(id string) *agentSpend {
		a := f.byAgent[id]
		if a == nil {
			a = &agentSpend{id: id, costKnown: true}
			f.byAgent[id] = a
			f.agents = append(f.agents, a)
		}
		return a
	}
	for _, ev := range evs {
		fl := ev.Fields
		who := eventlog.Str(fl["agent"])
		switch ev.Event {
		case "run_started", "run_resumed":
			f.started = ev.Time()
			f.dryRun = eventlog.Str(fl["dryRun"]) == "true"
			f.task = eventlog.Str(fl["task"])
		case "run_finished":
			f.finished = ev.Time()
		case "agent_started":
			agent(who).started = ev.Time()
		case "agent_finished":
			a := agent(who)
			a.turns++
			if !a.started.IsZero() {
				a.busy += ev.Time().Sub(a.started)
				a.started = time.Time{}
			}
			in, _ := eventlog.Num(fl["inputTokens"])
			out, _ := eventlog.Num(fl["outputTokens"])
			a.in, a.out = a.in+int64(in), a.out+int64(out)
			if c, ok := eventlog.Num(fl["costUsd"]); ok {
				a.cost += c
			} else {
				a.costKnown = false
			}
			if st := eventlog.Str(fl["status"]); st != "completed" {
				f.problems = append(f.problems, problem{err: true, interaction: ev.InteractionID, agent: who,
					message: "turn " + st + ": " + eventlog.Str(fl["error"]), detail: eventlog.Strs(fl["stderr"])})
			}
		case "warning", "message_refused":
			msg := eventlog.Str(fl["message"])
			if ev.Event == "message_refused" {
				msg = fmt.Sprintf("message %s from %s refused: %s", eventlog.Str(fl["type"]), eventlog.Str(fl["from"]), eventlog.Str(fl["error"]))
				who = ""
			}
			f.problems = append(f.problems, problem{interaction: ev.InteractionID, agent: who, message: msg})
		case "error":
			msg := eventlog.Str(fl["message"])
			if msg == "" && fl["block"] != nil {
				msg = "the agent reported an error block"
			}
			f.problems = append(f.problems, problem{err: true, interaction: ev.InteractionID, agent: who, message: msg})
		case "proposal_created":
			f.proposalAgent[eventlog.Str(fl["proposal"])] = who
		case "tests_run":
			if f.tests[who] == nil {
				f.testOrder = append(f.testOrder, who)
			}
			f.tests[who] = &testRun{passed: eventlog.Str(fl["passed"]) == "true", command: strings.Join(eventlog.Strs(fl["command"]), " "),
				exit: eventlog.Str(fl["exitCode"]), err: eventlog.Str(fl["error"]), failing: eventlog.Strs(fl["failing"])}
		case "proposal_reviewed":
			var held []string
			for _, h := range eventlog.List(fl["held"]) {
				held = append(held, eventlog.Str(h["shown"]))
			}
			f.held[eventlog.Str(fl["proposal"])] = strings.Join(held, ", ")
			if eventlog.Str(fl["applicable"]) == "false" {
				f.proposalState[eventlog.Str(fl["proposal"])] = "does not apply to the workspace"
			}
		case "proposal_held":
			f.proposalState[eventlog.Str(fl["proposal"])] = "left for review: " + eventlog.Str(fl["reason"])
		case "proposal_applied":
			f.proposalState[eventlog.Str(fl["proposal"])] = "applied"
		case "terminated":
			if eventlog.Str(fl["reason"]) == "skipped" {
				f.skipNote[ev.InteractionID] = eventlog.Str(fl["note"])
			}
		}
	}
	return f
}

// --- formatting ------------------------------------------------------------------------------

func statusIcon(s string) string {
	switch s {
	case engine.StatusCompleted:
		return "✅"
	case engine.StatusFailed:
		return "❌"
	case engine.StatusSkipped:
		return "⏭️"
	case engine.StatusStopped:
		return "⏹️"
	}
	return "⏳"
}

// cell makes text safe in a table cell: mdsafe.Text, which escapes its pipes too.
func cell(s string) string { return mdsafe.Text(s) }

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// count writes a number with thousands separators (12,345).
func count(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
