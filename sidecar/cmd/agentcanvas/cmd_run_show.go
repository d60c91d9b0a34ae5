package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
	"github.com/agentcanvas/agentcanvas/sidecar/termview"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

const runShowUsage = `usage: agentcanvas run show [--workspace W] [--json] RUN [AGENT]
Prints a run's transcript (.agentcanvas/runs/RUN/turns.jsonl): without AGENT the run as a
timeline, one line a turn; with AGENT every turn of that agent whole — the prompt it was sent
(secrets redacted), its reply, its stderr, exit, duration, tokens and cost. RUN "last" is the
newest run.
Exit status: 0, 1 no such run or agent, 2 usage.`

// runShow is `agentcanvas run show`.
func runShow(args []string, stdout, stderr io.Writer) int {
	fs := newCmdFlags("run show", runShowUsage, stdout, stderr)
	ws := fs.String("workspace", ".", "the workspace root `DIR`")
	asJSON := fs.Bool("json", false, "print the turns as one JSON array")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return fs.usageError("expected RUN and at most one AGENT, got %d arguments", fs.NArg())
	}
	runID, agent := fs.Arg(0), fs.Arg(1)
	if runID == "last" {
		states, err := engine.ListStates(*ws)
		if err != nil || len(states) == 0 {
			fmt.Fprintf(stderr, "agentcanvas run show: no runs in %s\n", filepath.Join(*ws, engine.RunsDir))
			return exitFail
		}
		runID = states[0].RunID
	}
	turns, err := transcript.Read(*ws, runID)
	if errors.Is(err, iofs.ErrNotExist) {
		fmt.Fprintf(stderr, "agentcanvas run show: run %s has no transcript in %s (no agent turn ran, or the run is older than transcripts)\n", runID, filepath.Join(*ws, engine.RunsDir))
		return exitFail
	}
	if err != nil && len(turns) == 0 {
		fmt.Fprintf(stderr, "agentcanvas run show: %v\n", err)
		return exitFail
	}
	if err != nil { // a line cut by a crash or a full disk: show the others, and say so
		fmt.Fprintf(stderr, "warning: %v (the other turns are shown)\n", err)
	}
	if agent != "" {
		turns = agentTurns(turns, agent)
		if len(turns) == 0 {
			fmt.Fprintf(stderr, "agentcanvas run show: agent %q has no turns in run %s\n", agent, runID)
			return exitFail
		}
	}
	switch {
	case *asJSON:
		if turns == nil {
			turns = []transcript.Turn{}
		}
		b, err := json.MarshalIndent(turns, "", "  ")
		if err != nil {
			return exitUsage
		}
		fmt.Fprintf(stdout, "%s\n", termsafe.JSON(b))
	case agent != "":
		for _, t := range turns {
			printTurn(stdout, t)
		}
	default:
		printTimeline(stdout, runID, turns)
	}
	return exitOK
}

func agentTurns(turns []transcript.Turn, agent string) []transcript.Turn {
	var out []transcript.Turn
	for _, t := range turns {
		if t.Agent == agent {
			out = append(out, t)
		}
	}
	return out
}

// turnHeader is a turn in one line: when, where, who asked whom, how it ended, what it cost.
func turnHeader(t transcript.Turn, start time.Time) string {
	parts := []string{
		fmt.Sprintf("#%d", t.Seq), "+" + termview.Duration(t.Started.Sub(start)),
		t.InteractionID, fmt.Sprintf("round %d", t.Round), t.From + " → " + t.Agent, t.Backend, t.Status,
	}
	if t.Status != "completed" || t.ExitCode != 0 {
		parts = append(parts, fmt.Sprintf("exit %d", t.ExitCode))
	}
	parts = append(parts, termview.Duration(time.Duration(t.DurationMs)*time.Millisecond))
	if t.InputTokens > 0 || t.OutputTokens > 0 {
		parts = append(parts, termview.Tokens(t.InputTokens)+" in / "+termview.Tokens(t.OutputTokens)+" out")
	}
	if t.CostUSD != nil {
		parts = append(parts, termview.USD(*t.CostUSD))
	}
	return termsafe.Line(strings.Join(parts, "  "))
}

func printTimeline(w io.Writer, runID string, turns []transcript.Turn) {
	fmt.Fprintf(w, "run %s: %d turns\n", runID, len(turns))
	if len(turns) == 0 {
		return
	}
	start := turns[0].Started
	for _, t := range turns {
		if t.Started.Before(start) {
			start = t.Started
		}
	}
	for _, t := range turns {
		fmt.Fprintln(w, turnHeader(t, start))
		if t.Reason != "" {
			fmt.Fprintf(w, "    reason: %s\n", termsafe.Line(firstTextLine(t.Reason)))
		}
		if len(t.Tools) > 0 {
			fmt.Fprintf(w, "    tools:  %s\n", termsafe.Line(toolNames(t.Tools)))
		}
		fmt.Fprintf(w, "    reply:  %s\n", termsafe.Line(firstTextLine(t.Reply)))
	}
	fmt.Fprintf(w, "one agent's turns whole: %s run show %s AGENT\n", invokedAs(), runID)
}

func printTurn(w io.Writer, t transcript.Turn) {
	fmt.Fprintf(w, "── %s\n", turnHeader(t, t.Started))
	if t.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", termsafe.Text(t.Reason))
	}
	section(w, "prompt", t.Prompt)
	printTools(w, t.Tools)
	if t.Partial {
		section(w, "reply (the turn ended before its reply; what the agent had said)", t.Reply)
	} else {
		section(w, "reply", t.Reply)
	}
	section(w, "stderr", strings.Join(t.Stderr, "\n"))
	if len(t.Truncated) > 0 {
		fmt.Fprintf(w, "(cut to fit the transcript's bounds: %s)\n", termsafe.Line(strings.Join(t.Truncated, ", ")))
	}
	fmt.Fprintln(w)
}

// printTools lists a turn's tool calls: the tool, its input and the first lines of what it
// gave back.
func printTools(w io.Writer, tools []transcript.ToolCall) {
	if len(tools) == 0 {
		return
	}
	fmt.Fprintf(w, "tool calls: %d\n", len(tools))
	for i, tc := range tools {
		// The tool's name, input and output are the agent's text: made safe for the terminal.
		fmt.Fprintf(w, "  %d. %s %s\n", i+1, termsafe.Line(tc.Tool), termsafe.Line(oneLine(tc.Input, 200)))
		switch {
		case tc.Unanswered:
			fmt.Fprintln(w, "     → (no result: the turn ended first)")
		case tc.IsError:
			fmt.Fprintf(w, "     → error: %s\n", termsafe.Line(oneLine(tc.Output, 200)))
		case strings.TrimSpace(tc.Output) != "":
			fmt.Fprintf(w, "     → %s\n", termsafe.Line(oneLine(tc.Output, 200)))
		}
	}
}

func section(w io.Writer, title, text string) {
	if strings.TrimSpace(text) == "" {
		fmt.Fprintf(w, "%s: (none)\n", title)
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", termsafe.Text(l))
	}
}

// toolNames is "Read, Write ×2": the tools a turn called, in order, repeats counted.
func toolNames(tools []transcript.ToolCall) string {
	var parts []string
	for i := 0; i < len(tools); {
		j := i
		for j < len(tools) && tools[j].Tool == tools[i].Tool {
			j++
		}
		if n := j - i; n > 1 {
			parts = append(parts, fmt.Sprintf("%s ×%d", tools[i].Tool, n))
		} else {
			parts = append(parts, tools[i].Tool)
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

// sectionTitle is a reply's numbered heading ("1. Intent"), which says nothing of the turn.
var sectionTitle = regexp.MustCompile(`^#*\s*\d+\.\s+[\w /]+$`)

// firstTextLine is s's first line with content (a numbered heading skipped), cut to 160
// characters.
func firstTextLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")); l != "" && !sectionTitle.MatchString(l) {
			if r := []rune(l); len(r) > 160 {
				return string(r[:159]) + "…"
			}
			return l
		}
	}
	return "(empty)"
}
