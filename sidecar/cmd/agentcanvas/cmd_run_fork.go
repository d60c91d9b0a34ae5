package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/termview"
)

const runForkUsage = `usage: agentcanvas run fork [--workspace W] --at TURN [--set KEY=VALUE]… [--plan] [--json] [--non-interactive] [--answers FILE] [--auto-apply off|whenClean|flow] [--confine auto|required|off] RUN
Starts a new run from the end of turn TURN of RUN ("last": the newest run; agentcanvas run show
RUN numbers its turns): the interactions RUN had completed are kept, the turns it had finished
are replayed without the agents, every worker's sandbox comes back as it was then, each CLI
session where its backend can resume it, and the fork goes on from there, live, under the flow
as it is now. Before it starts it says, per agent, what it cannot restore. --set changes the
fork's flow: agent.<id>.backend=codex, agent.<id>.model=…, agent.<id>.prompt=…,
agent.<id>.command=…, task=…. --plan prints what the fork would do, and does nothing.
A fork's proposals wait for review unless --auto-apply says otherwise (default off).`

// runFork is `agentcanvas run fork`.
func runFork(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run fork", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ws := fs.String("workspace", ".", "workspace root")
	at := fs.Int("at", 0, "the turn of RUN to fork from (its end), as agentcanvas run show numbers them")
	var sets argvFlag
	fs.Var(&sets, "set", "a change to the fork's flow, KEY=VALUE (repeatable): agent.<id>.backend|model|prompt|command, task")
	planOnly := fs.Bool("plan", false, "print what the fork would restore and what it cannot, then stop")
	asJSON := fs.Bool("json", false, "print the events as JSON lines on stdout (with --plan: the plan as JSON)")
	nonInteractive := fs.Bool("non-interactive", false, "never prompt: questions take their default or fail the run")
	answers := fs.String("answers", "", "JSON file of answers by question id or text")
	autoApply := &choiceFlag[engine.AutoApply]{engine.AutoApplyOff, engine.ParseAutoApply}
	fs.Var(autoApply, "auto-apply", "cap on the flow's policy.autoApply: off (default for a fork), whenClean or flow")
	confineMode := &choiceFlag[confine.Mode]{confine.ModeAuto, confine.ParseMode}
	fs.Var(confineMode, "confine", "confine agent processes with the kernel: auto, required or off")
	fs.Usage = func() { fmt.Fprintln(stderr, runForkUsage); fs.PrintDefaults() }
	if err := parseAnywhere(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 || *at == 0 {
		fmt.Fprintln(stderr, "agentcanvas run fork: name one RUN and the turn to fork from (--at TURN)")
		fs.Usage()
		return exitUsage
	}
	root, err := filepath.Abs(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas run fork: %v\n", err)
		return exitUsage
	}
	runID, err := namedRun(root, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas run fork: %v\n", err)
		return exitFail
	}
	plan, err := engine.PlanFork(root, engine.ForkRequest{RunID: runID, At: *at, Set: sets})
	if err != nil {
		var inv *engine.InvalidFlowError
		if errors.As(err, &inv) {
			fmt.Fprintln(stderr, err)
		} else {
			fmt.Fprintf(stderr, "agentcanvas run fork: %v\n", err)
		}
		return exitFail
	}
	switch {
	case *planOnly && *asJSON:
		printJSON(stdout, plan)
		return exitOK
	case *planOnly:
		printForkPlan(stdout, plan)
		return exitOK
	case *asJSON:
		printForkPlan(stderr, plan)
	default:
		printForkPlan(stdout, plan)
	}
	var ans map[string]string
	if *answers != "" {
		if ans, err = engine.LoadAnswers(*answers); err != nil {
			fmt.Fprintf(stderr, "agentcanvas run fork: %v\n", err)
			return exitUsage
		}
	}
	limits := engine.Limits{AutoApply: autoApply.v, AutoApplyFrom: "--auto-apply", Confine: confineMode.v, ConfineFrom: "--confine"}
	opts := engine.Options{Limits: func() engine.Limits { return limits }}
	view, prompt := forkSink(&opts, *asJSON, stdout, stderr)
	if view != nil {
		defer view.Close()
	}
	opts.Human = engine.NonInteractive{Answers: ans}
	if !*nonInteractive && termview.IsTerminal(stdin) {
		var h engine.Human = &engine.Terminal{R: stdin, W: prompt, Answers: ans}
		if view != nil {
			h = view.Human(h)
		}
		opts.Human = h
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := engine.Fork(ctx, plan, opts)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas run fork: %v\n", err)
		return exitFail
	}
	compare := fmt.Sprintf("%s proposal interdiff --workspace %s %s %s", invokedAs(), shellQuote(root), runID, out.RunID)
	if view == nil {
		printOutcome(stderr, out, root, filepath.Join(root, eventlog.LogsDir, out.Flow))
		fmt.Fprintf(stderr, "  compare with run %s: %s\n", runID, compare)
	} else {
		for _, p := range out.Proposals {
			view.Printf("%sproposal:  %s", termview.Indent, p)
		}
		view.Printf("%scompare:   %s", termview.Indent, compare)
	}
	if out.Status != engine.StatusCompleted {
		return exitFail
	}
	return exitOK
}

// forkSink sends the fork's events to stdout: JSON lines, or the view (live on a terminal).
// It returns the view (nil for JSON) and where questions are asked.
func forkSink(o *engine.Options, asJSON bool, stdout, stderr io.Writer) (*termview.View, io.Writer) {
	var mu sync.Mutex
	if asJSON {
		enc := json.NewEncoder(stdout)
		o.Sink = func(ev eventlog.Event) { mu.Lock(); defer mu.Unlock(); _ = enc.Encode(ev) }
		return nil, stderr
	}
	mode := termview.ModeFor(stdout)
	view := termview.New(stdout, termview.Options{Mode: mode, Width: columnsEnv()})
	o.Sink = func(ev eventlog.Event) { mu.Lock(); defer mu.Unlock(); view.Event(ev) }
	if mode.Live {
		return view, stdout
	}
	return view, stderr
}

// namedRun is RUN, or the newest run for "last".
func namedRun(ws, name string) (string, error) {
	if name != "last" {
		return name, nil
	}
	states, err := engine.ListStates(ws)
	if err != nil || len(states) == 0 {
		return "", fmt.Errorf("no runs in %s", filepath.Join(ws, engine.RunsDir))
	}
	return states[0].RunID, nil
}

// printForkPlan says what the fork restores and what it cannot, before it starts.
func printForkPlan(w io.Writer, p *engine.ForkPlan) {
	fmt.Fprintf(w, "fork %s: run %s from the end of its turn %d of %d, flow %s\n", p.RunID, p.Origin.RunID, p.Origin.Turn, p.Turns, p.FlowFile)
	for _, c := range p.Cleaned {
		fmt.Fprintf(w, "  (%s)\n", c)
	}
	for _, c := range p.Changes {
		fmt.Fprintf(w, "  changed: %s\n", c)
	}
	for _, a := range p.Agents {
		fmt.Fprintf(w, "  %s: %s", a.ID, a.Files)
		if a.Session != "" {
			fmt.Fprintf(w, "; %s", a.Session)
		}
		fmt.Fprintln(w)
		for _, l := range a.Limits {
			fmt.Fprintf(w, "    not restored: %s\n", l)
		}
	}
	for _, l := range p.Limits {
		fmt.Fprintf(w, "  not restored: %s\n", strings.TrimSuffix(l, "."))
	}
}
