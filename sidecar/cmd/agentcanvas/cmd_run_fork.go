package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/termview"
)

const runForkUsage = `usage: agentcanvas run fork [--workspace W] --at TURN [--set KEY=VALUE]… [--plan] [--json] [--summary FILE] [--non-interactive] [--answers FILE] [--auto-apply off|whenClean|flow] [--confine auto|required|off] RUN
Starts a new run from the end of turn TURN of RUN ("last": the newest run; agentcanvas run show
RUN numbers its turns): the interactions RUN had completed are kept, the turns it had finished
are replayed without the agents, every worker's sandbox comes back as it was then, each CLI
session where its backend can resume it, and the fork goes on from there, live, under the flow
as it is now. Before it starts it says, per agent, what it cannot restore. --set changes the
fork's flow: agent.<id>.backend=codex, agent.<id>.model=…, agent.<id>.prompt=…,
agent.<id>.command=…, task=…. --plan prints what the fork would do, and does nothing.
A fork's proposals wait for review unless --auto-apply says otherwise (default off). A fork is a
run of its own: stopped or killed, it is resumed as any run is (run --resume FORK FLOW).
Exit status: 0 the fork completed (or, with --plan, was planned); 1 it was refused (no such run
or turn, a --set that does not apply), failed or was stopped; 2 usage.`

// runFork is `agentcanvas run fork`: the plan, then the fork run as `run` runs a flow (the
// same view, questions, Ctrl-C, summary and closing lines: runInvocation).
func runFork(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCmdFlags("run fork", runForkUsage, stdout, stderr)
	ws := fs.String("workspace", ".", "the workspace root `DIR`")
	at := fs.Int("at", 0, "the `TURN` of RUN to fork from (its end), as agentcanvas run show numbers them")
	var sets argvFlag
	fs.Var(&sets, "set", "a change to the fork's flow, `KEY=VALUE` (repeatable): agent.<id>.backend|model|prompt|command, task")
	planOnly := fs.Bool("plan", false, "print what the fork would restore and what it cannot, then stop")
	rc := &runInvocation{stdout: stdout, stderr: stderr}
	rc.asJSON = fs.Bool("json", false, "print the events as JSON lines on stdout (with --plan: the plan as JSON)")
	rc.summary = fs.String("summary", "", "write a Markdown summary of the fork to `FILE` (default: append it to $GITHUB_STEP_SUMMARY when that is set)")
	rc.nonInteractive = fs.Bool("non-interactive", false, "never prompt: questions take their default or fail the run")
	answers := fs.String("answers", "", "JSON `FILE` of answers by question id or text")
	autoApply := &choiceFlag[engine.AutoApply]{engine.AutoApplyOff, engine.ParseAutoApply}
	fs.Var(autoApply, "auto-apply", "`MODE`, a cap on the flow's policy.autoApply: off (the default for a fork), whenClean or flow")
	confineMode := &choiceFlag[confine.Mode]{confine.ModeAuto, confine.ParseMode}
	fs.Var(confineMode, "confine", "how agent processes are confined by the kernel, a `MODE`: auto, required or off")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() != 1 || *at == 0 {
		return fs.usageError("name one RUN and the turn to fork from (--at TURN)")
	}
	root, err := filepath.Abs(*ws)
	if err != nil {
		return fs.usageError("%v", err)
	}
	if *answers != "" {
		if rc.answersByQuestion, err = engine.LoadAnswers(*answers); err != nil {
			return fs.usageError("%v", err)
		}
	}
	plan, code := planFork(root, fs.Arg(0), *at, sets, stderr)
	if plan == nil {
		return code
	}
	switch {
	case *planOnly && *rc.asJSON:
		printJSON(stdout, plan)
		return exitOK
	case *planOnly:
		printForkPlan(stdout, plan)
		return exitOK
	case *rc.asJSON:
		printForkPlan(stderr, plan)
	default:
		printForkPlan(stdout, plan)
	}
	limits := engine.Limits{AutoApply: autoApply.v, AutoApplyFrom: "--auto-apply", Confine: confineMode.v, ConfineFrom: "--confine"}
	rc.ws, rc.file = root, plan.Flow().File
	rc.opts = engine.Options{Limits: func() engine.Limits { return limits }}
	rc.sum = summaryTarget(*rc.summary)
	if !*rc.asJSON {
		rc.view = termview.New(stdout, termview.Options{Mode: termview.ModeFor(stdout), Width: columnsEnv()})
		defer rc.view.Close()
	}
	rc.connect(stdin)
	ctx, stop := rc.signals()
	defer stop()
	out, err := engine.Fork(ctx, plan, rc.opts)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas run fork: %v\n", err)
		return exitFail
	}
	code = rc.report(plan.Flow(), out)
	compare := fmt.Sprintf("%s proposal interdiff --workspace %s %s %s", invokedAs(), shellQuote(root), plan.Origin.RunID, out.RunID)
	if rc.view == nil {
		fmt.Fprintf(stderr, "  compare with run %s: %s\n", plan.Origin.RunID, compare)
	} else {
		rc.view.Printf("%scompare:   %s", termview.Indent, compare)
	}
	return code
}

// planFork plans the fork of RUN (or "last") at turn at; a refusal is said on stderr, with
// the exit code.
func planFork(root, run string, at int, sets []string, stderr io.Writer) (*engine.ForkPlan, int) {
	runID, err := namedRun(root, run)
	if err == nil {
		var plan *engine.ForkPlan
		if plan, err = engine.PlanFork(root, engine.ForkRequest{RunID: runID, At: at, Set: sets}); err == nil {
			return plan, exitOK
		}
	}
	var inv *engine.InvalidFlowError
	if errors.As(err, &inv) {
		fmt.Fprintln(stderr, err)
	} else {
		fmt.Fprintf(stderr, "agentcanvas run fork: %v\n", err)
	}
	return nil, exitFail
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
