package main

import (
	"encoding/json"
	"errors"
	"flag"
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
newest run.`

// runShow is `agentcanvas run show`.
func runShow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ws := fs.String("workspace", ".", "workspace root")
	asJSON := fs.Bool("json", false, "print the turns as one JSON array")
	fs.Usage = func() { fmt.Fprintln(stderr, runShowUsage); fs.PrintDefaults() }
	if err := parseAnywhere(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintf(stderr, "agentcanvas run show: expected RUN and at most one AGENT, got %d arguments\n", fs.NArg())
		fs.Usage()
		return exitUsage
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
	section(w, "reply", t.Reply)
	section(w, "stderr", strings.Join(t.Stderr, "\n"))
	if len(t.Truncated) > 0 {
		fmt.Fprintf(w, "(cut to fit the transcript's bounds: %s)\n", termsafe.Line(strings.Join(t.Truncated, ", ")))
	}
	fmt.Fprintln(w)
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
