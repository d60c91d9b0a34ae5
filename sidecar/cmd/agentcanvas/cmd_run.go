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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/runsummary"
	"github.com/agentcanvas/agentcanvas/sidecar/termview"
)

func init() {
	register(&command{name: "run", summary: "run a flow headless (a live view on a terminal, --json for the event lines); run show RUN [AGENT]: its transcript", run: runFlow})
}

func runFlow(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "show" {
		return runShow(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workspace := fs.String("workspace", "", "workspace root (default: the folder holding the flow's .agentcanvas/ or flows/)")
	dryRun := fs.Bool("dry-run", false, "run every agent with the built-in dry-run backend (no CLI, no key)")
	answers := fs.String("answers", "", "JSON file of answers by question id or text")
	nonInteractive := fs.Bool("non-interactive", false, "never prompt: questions take their default or fail the run")
	backend := fs.String("backend", "", "override every agent's backendId (claude, codex, gemini, command, dry-run; auto keeps each agent's own)")
	task := fs.String("task", "", "the run's task (default: the flow's description)")
	pace := fs.Duration("pace", 0, "with --dry-run: wait this long before each agent turn, to watch the run unfold (e.g. 1s)")
	resume := fs.String("resume", "", "continue the interrupted run RUN_ID (its completed interactions are kept)")
	skill := fs.String("skill", "", "instead of a FLOW, invoke the skill NAME of .agentcanvas/skills/ (--task: what you ask of it)")
	var files listFlag
	var command argvFlag
	fs.Var(&files, "file", "with --skill: a workspace-relative file the agent's sandbox receives (repeat or comma-separate)")
	fs.Var(&command, "command", "with --skill and --backend command: the agent's argv, one --command per word")
	asJSON := fs.Bool("json", false, "print the events as JSON lines on stdout (the machine format), not the human view")
	summary := fs.String("summary", "", "write a Markdown summary of the run to `FILE` (default: append it to $GITHUB_STEP_SUMMARY when that is set)")
	depTimeout := fs.Duration("dependency-timeout", 0, "how long an agent's dependency request waits for its value (e.g. 10m; default: the flow's policy.dependencyTimeoutMs, else 1h)")
	rf := addRuleFlags(fs)
	autoApply := &choiceFlag[engine.AutoApply]{engine.AutoApplyFlow, engine.ParseAutoApply}
	fs.Var(autoApply, "auto-apply", "cap on the flow's policy.autoApply: off (apply nothing unreviewed), whenClean (as the flow says, and only on an unchanged HEAD) or flow")
	confineMode := &choiceFlag[confine.Mode]{confine.ModeAuto, confine.ParseMode}
	gw := addGatewayFlags(fs) // flags_gateway.go
	fs.Var(confineMode, "confine", "confine agent processes with the kernel (Landlock): auto (where it can, with a warning where it cannot), required (refuse a run that cannot be) or off")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: agentcanvas run [--workspace W] [--dry-run [--pace D]] [--backend B] [--task TEXT] [--answers FILE] [--non-interactive] [--json] [--summary FILE] [--resume RUN_ID] [--allow DIR]… [--block DIR]… [--auto-apply off|whenClean|flow] [--confine auto|required|off] [--dependency-timeout D] [--gateway auto|logins|off] [--pricing FILE] FLOW")
		fmt.Fprintln(stderr, "       agentcanvas run [--workspace W] [--dry-run] [--json] [--summary FILE] [--backend B] [--allow DIR]… [--block DIR]… [--confine auto|required|off] --skill NAME [--file F]... [--task TEXT]")
		fmt.Fprintln(stderr, "       agentcanvas run show [--workspace W] [--json] RUN [AGENT]   (a run's transcript)")
		fmt.Fprintln(stderr, "Flags may come before or after FLOW.")
		fs.PrintDefaults()
	}
	if err := parseAnywhere(fs, args); err != nil {
		return exitUsage
	}
	if reason := runArgsProblem(fs.Args(), *skill, *resume, len(files) > 0 || len(command) > 0); reason != "" {
		fmt.Fprintf(stderr, "agentcanvas run: %s\n", reason)
		fs.Usage()
		return exitUsage
	}
	if *pace < 0 || *pace > 0 && !*dryRun {
		fmt.Fprintln(stderr, "agentcanvas run: --pace goes with --dry-run (a real run goes at its agents' pace), and is not negative")
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
	opts := engine.Options{Workspace: ws, DryRun: *dryRun, Pace: *pace, Backend: *backend, Task: *task, Limits: func() engine.Limits { return limits }, DependencyTimeout: *depTimeout}
	if err := gw.apply(&opts); err != nil {
		fmt.Fprintf(stderr, "agentcanvas run: %v\n", err)
		return exitUsage
	}
	var ans map[string]string
	if *answers != "" {
		if ans, err = engine.LoadAnswers(*answers); err != nil {
			fmt.Fprintf(stderr, "agentcanvas run: %v\n", err)
			return exitUsage
		}
	}
	// stdout: the JSON event lines (--json), or the view: live on a terminal, plain lines
	// elsewhere. Questions are asked at the prompt when stdin is a terminal; on a live view
	// the prompt shares its terminal, so it is written there and the block steps aside.
	var view *termview.View
	var sink func(eventlog.Event)
	prompt := stderr
	if *asJSON {
		enc := json.NewEncoder(stdout)
		sink = func(ev eventlog.Event) { _ = enc.Encode(ev) }
	} else {
		mode := termview.ModeFor(stdout)
		view = termview.New(stdout, termview.Options{Mode: mode, Width: columnsEnv()})
		defer view.Close()
		sink = view.Event
		if mode.Live {
			prompt = stdout
		}
	}
	sum := summaryTarget(*summary)
	var events []eventlog.Event // for the summary
	var sinkMu sync.Mutex       // the engine emits from several goroutines
	opts.Sink = func(ev eventlog.Event) {
		sinkMu.Lock()
		defer sinkMu.Unlock()
		if sum.path != "" {
			events = append(events, ev)
		}
		sink(ev)
	}
	if *nonInteractive || !termview.IsTerminal(stdin) {
		opts.Human = engine.NonInteractive{Answers: ans}
	} else {
		var h engine.Human = &engine.Terminal{R: stdin, W: prompt, Answers: ans}
		if view != nil {
			h = view.Human(h)
		}
		opts.Human = h
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if view != nil { // stopped turns say "stopped by you", not the Go error of the cancellation
		ended := make(chan struct{})
		defer close(ended)
		go func() {
			select {
			case <-ctx.Done():
				view.StoppedByYou()
			case <-ended:
			}
		}()
	}
	// A run reads the workspace (and copies it into sandboxes): an apply cut short is
	// recovered first, and said so.
	if !recoverFirst(ws, stderr) {
		return exitFail
	}
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
		if sum.path != "" {
			sum.write(stderr, runsummary.Refused(firstNonEmptyStr(file, "--skill "+*skill), err))
		}
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
	summaryFailed := false
	if sum.path != "" {
		sinkMu.Lock()
		md := runsummary.Markdown(runsummary.Input{Outcome: out, Events: events, Workspace: ws, FlowFile: firstNonEmptyStr(file, f.File)})
		sinkMu.Unlock()
		summaryFailed = !sum.write(stderr, md) && !sum.appending
	}
	logDir := filepath.Join(ws, eventlog.LogsDir, f.Name)
	if view == nil {
		printOutcome(stderr, out, ws, logDir)
	} else {
		for i, p := range out.Proposals {
			label := "proposals: "
			if i > 0 {
				label = "           "
			}
			view.Printf("%s%s%s", termview.Indent, label, p)
		}
		if len(out.Proposals) > 0 {
			view.Printf("%scheck:     %s proposal apply --check --workspace %s PROPOSAL   (without --check: apply it)", termview.Indent, invokedAs(), shellQuote(ws))
			view.Printf("%sexport:    %s proposal export --workspace %s %s > %s.patch", termview.Indent, invokedAs(), shellQuote(ws), out.RunID, out.RunID)
		}
		view.Printf("%slog:       %s", termview.Indent, logDir)
		if sum.path != "" && !summaryFailed {
			view.Printf("%ssummary:   %s", termview.Indent, sum.path)
		}
	}
	switch {
	case out.Status != engine.StatusCompleted:
		return exitFail
	case summaryFailed:
		return exitUsage // the run went well, the file the person asked for was not written
	}
	return exitOK
}

// summaryFile is where the run's Markdown summary goes: --summary FILE (replaced), else
// GitHub's job summary file when the run is a GitHub Actions step (appended: every step of
// the job adds its part there).
type summaryFile struct {
	path      string
	appending bool
}

func summaryTarget(flag string) summaryFile {
	if flag != "" {
		return summaryFile{path: flag}
	}
	return summaryFile{path: os.Getenv("GITHUB_STEP_SUMMARY"), appending: true}
}

// write writes the summary, saying on stderr when it could not.
func (s summaryFile) write(stderr io.Writer, md []byte) bool {
	var err error
	if s.appending {
		err = appendFile(s.path, md)
	} else {
		err = writeFileAtomic(s.path, md)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas run: the summary was not written: %v\n", err)
		return false
	}
	return true
}

// printOutcome is the closing summary of a --json run, on stderr (stdout is the events').
func printOutcome(w io.Writer, out *engine.Outcome, ws, logDir string) {
	fmt.Fprintf(w, "run %s: %s", out.RunID, out.Status)
	if out.Reason != "" {
		fmt.Fprintf(w, " (%s)", out.Reason)
	}
	fmt.Fprintln(w)
	for _, in := range out.Interactions {
		fmt.Fprintf(w, "  %-12s %-24s %-10s %-20s rounds=%d  %s\n", in.ID, in.PatternID, in.Status, in.Reason, in.Rounds, oneLine(firstNonEmptyStr(in.Error, engine.Summary(in.Result)), 80))
	}
	for _, p := range out.Proposals {
		fmt.Fprintf(w, "  proposal: %s (review: %s proposal apply --check --workspace %s %s)\n", p, invokedAs(), shellQuote(ws), p)
	}
	fmt.Fprintf(w, "  log: %s\n", logDir)
}

// shellQuote quotes a path for a command a person copies, when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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

// runArgsProblem says in one line what is wrong with run's arguments, or "".
func runArgsProblem(args []string, skill, resume string, skillFlags bool) string {
	switch {
	case skill == "" && len(args) == 0:
		return "no FLOW given: name a flow file (or --skill NAME)"
	case skill == "" && len(args) > 1:
		return fmt.Sprintf("one FLOW at a time, got %d: %s", len(args), strings.Join(args, " "))
	case skill != "" && len(args) > 0:
		return fmt.Sprintf("--skill takes no FLOW, got %s", strings.Join(args, " "))
	case skill != "" && resume != "":
		return "--resume continues a flow's run, not a skill's"
	case skill == "" && skillFlags:
		return "--file and --command go with --skill"
	}
	return ""
}

// columnsEnv is $COLUMNS, the width piped lines wrap to (at spaces) when it is set: a pipe
// that ends on a terminal (| tee, | less) would otherwise break them anywhere.
func columnsEnv() int {
	n, err := strconv.Atoi(os.Getenv("COLUMNS"))
	if err != nil || n < 20 {
		return 0
	}
	return n
}
