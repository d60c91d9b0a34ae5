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
	"syscall"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

func init() {
	register(&command{name: "run", summary: "run a flow headless (events to the JSONL log and to stdout)", run: runFlow})
}

func runFlow(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workspace := fs.String("workspace", "", "workspace root (default: the folder holding the flow's .agentcanvas/ or flows/)")
	dryRun := fs.Bool("dry-run", false, "run every agent with the built-in dry-run backend (no CLI, no key)")
	answers := fs.String("answers", "", "JSON file of answers by question id or text")
	nonInteractive := fs.Bool("non-interactive", false, "never prompt: questions take their default or fail the run")
	backend := fs.String("backend", "", "override every agent's backendId (claude, codex, gemini, command, dry-run; auto keeps each agent's own)")
	task := fs.String("task", "", "the run's task (default: the flow's description)")
	resume := fs.String("resume", "", "continue the interrupted run RUN_ID (its completed interactions are kept)")
	skill := fs.String("skill", "", "instead of a FLOW, invoke the skill NAME of .agentcanvas/skills/ (--task: what you ask of it)")
	var files listFlag
	var command argvFlag
	fs.Var(&files, "file", "with --skill: a workspace-relative file the agent's sandbox receives (repeat or comma-separate)")
	fs.Var(&command, "command", "with --skill and --backend command: the agent's argv, one --command per word")
	rf := addRuleFlags(fs)
	autoApply := &choiceFlag[engine.AutoApply]{engine.AutoApplyFlow, engine.ParseAutoApply}
	fs.Var(autoApply, "auto-apply", "cap on the flow's policy.autoApply: off (apply nothing unreviewed), whenClean (as the flow says, and only on an unchanged HEAD) or flow")
	confineMode := &choiceFlag[confine.Mode]{confine.ModeAuto, confine.ParseMode}
	fs.Var(confineMode, "confine", "confine agent processes with the kernel (Landlock): auto (where it can, with a warning where it cannot), required (refuse a run that cannot be) or off")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentcanvas run [--workspace W] [--dry-run] [--answers FILE] [--non-interactive] [--resume RUN_ID] [--allow DIR]… [--block DIR]… [--auto-apply off|whenClean|flow] [--confine auto|required|off] FLOW")
		fmt.Fprintln(stderr, "       agentcanvas run [--workspace W] [--dry-run] [--backend B] [--allow DIR]… [--block DIR]… [--confine auto|required|off] --skill NAME [--file F]... [--task TEXT]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *skill == "" && fs.NArg() != 1 || *skill != "" && (fs.NArg() != 0 || *resume != "") || *skill == "" && (len(files) > 0 || len(command) > 0) {
		fs.Usage()
		return exitUsage
	}
	var file string
	var src []byte
	ws := *workspace
	if *skill == "" {
		file = fs.Arg(0)
		var err error
		if src, err = os.ReadFile(file); err != nil {
			fmt.Fprintf(stderr, "agentcanvas run: %v\n", err)
			return exitUsage
		}
		if ws == "" {
			ws = workspaceOf(file)
		}
	} else if ws == "" {
		ws = workspaceOf(filepath.Join(".", "SKILL.md"))
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas run: %v\n", err)
		return exitUsage
	}
	rules, err := rf.rules(ws)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas run: %v\n", err)
		return exitUsage
	}
	limits := engine.Limits{Rules: rules, AutoApply: autoApply.v, AutoApplyFrom: "--auto-apply", Confine: confineMode.v, ConfineFrom: "--confine"}
	opts := engine.Options{Workspace: ws, DryRun: *dryRun, Backend: *backend, Task: *task, Limits: func() engine.Limits { return limits }}
	var ans map[string]string
	if *answers != "" {
		if ans, err = engine.LoadAnswers(*answers); err != nil {
			fmt.Fprintf(stderr, "agentcanvas run: %v\n", err)
			return exitUsage
		}
	}
	if *nonInteractive || !isTerminal(stdin) {
		opts.Human = engine.NonInteractive{Answers: ans}
	} else {
		opts.Human = &engine.Terminal{R: stdin, W: stderr, Answers: ans}
	}
	enc := json.NewEncoder(stdout)
	opts.Sink = func(ev eventlog.Event) { _ = enc.Encode(ev) }

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var f *flow.Flow
	var out *engine.Outcome
	switch {
	case *skill != "":
		// The skill's flow carries the backend and the request; the run's id names its folder.
		opts.RunID, opts.Backend, opts.Task = engine.NewRunID(time.Now()), "", ""
		inv := engine.SkillInvocation{Name: *skill, Arguments: *task, Files: files, Backend: *backend, Command: command}
		if f, err = engine.WriteSkillFlow(ws, opts.RunID, inv); err == nil {
			out, err = engine.Run(ctx, f, opts)
		}
	case *resume != "":
		f = flow.Parse(file, src)
		out, err = engine.Resume(ctx, f, *resume, opts)
	default:
		f = flow.Parse(file, src)
		out, err = engine.Run(ctx, f, opts)
	}
	if err != nil {
		var inv *engine.InvalidFlowError
		if errors.As(err, &inv) {
			fmt.Fprintln(stderr, err)
			return exitFail
		}
		if errors.Is(err, engine.ErrConfinementUnavailable) {
			fmt.Fprintf(stderr, "agentcanvas run: the run was not started: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stderr, "agentcanvas run: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "run %s: %s", out.RunID, out.Status)
	if out.Reason != "" {
		fmt.Fprintf(stderr, " (%s)", out.Reason)
	}
	fmt.Fprintln(stderr)
	for _, in := range out.Interactions {
		fmt.Fprintf(stderr, "  %-12s %-24s %-10s %-20s rounds=%d  %s\n", in.ID, in.PatternID, in.Status, in.Reason, in.Rounds, oneLine(firstNonEmptyStr(in.Error, engine.Summary(in.Result)), 80))
	}
	for _, p := range out.Proposals {
		fmt.Fprintf(stderr, "  proposal: %s (review: agentcanvas proposal apply --check --workspace %s %s)\n", p, ws, p)
	}
	fmt.Fprintf(stderr, "  log: %s\n", filepath.Join(ws, eventlog.LogsDir, f.Name))
	if out.Status != engine.StatusCompleted {
		return exitFail
	}
	return exitOK
}

// workspaceOf finds the workspace of a flow file: the folder above its .agentcanvas/flows/ or
// flows/ folder, else the nearest ancestor holding .agentcanvas/ or .git/, else the cwd.
func workspaceOf(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "."
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) == "flows" {
		parent := filepath.Dir(dir)
		if filepath.Base(parent) == ".agentcanvas" {
			return filepath.Dir(parent)
		}
		return parent
	}
	for d := dir; ; d = filepath.Dir(d) {
		for _, marker := range []string{".agentcanvas", ".git"} {
			if st, err := os.Stat(filepath.Join(d, marker)); err == nil && st.IsDir() {
				return d
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	wd, _ := os.Getwd()
	return wd
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func oneLine(s string, n int) string {
	for i, c := range s {
		if c == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func firstNonEmptyStr(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// argvFlag collects a command's words, one per use: unlike listFlag it never splits on
// commas, which may be part of an argument.
type argvFlag []string

func (l *argvFlag) String() string     { return strings.Join(*l, " ") }
func (l *argvFlag) Set(v string) error { *l = append(*l, v); return nil }
