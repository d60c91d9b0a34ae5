package main

import (
	"context"
	"errors"
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
	register(&command{name: "run", summary: "run a flow headless (a live view on a terminal, --json for the event lines); run show RUN [AGENT]: its transcript; run fork RUN --at TURN: a new run from that turn", run: runFlow})
}

const runUsage = `usage: agentcanvas run [flags] FLOW
       agentcanvas run --resume RUN_ID [flags] FLOW
       agentcanvas run --skill NAME [--file F]… [--task TEXT] [--backend B] [--command WORD]…
       agentcanvas run show [--workspace W] [--json] RUN [AGENT]   (a run's transcript)
Runs a flow headless: a live view of its agents on a terminal, plain lines when piped, the
event lines with --json. Questions are asked at the prompt (--answers and --non-interactive
answer them otherwise). Ctrl-C stops every agent; --resume RUN_ID goes on with a run that was
stopped or killed, keeping the interactions it completed. Flags may come before or after FLOW.
Exit status: 0 the run completed; 1 it failed or was stopped, or did not start because the flow
has errors or confinement is required and not available; 2 usage, or the run was refused before
any agent started for another reason (a CLI or command not found, a run that cannot be resumed).`

// runInvocation is one `agentcanvas run`: its flags, then what the run is given and prints.
type runInvocation struct {
	workspace, answers, backend, task, resume, skill, summary *string
	dryRun, nonInteractive, asJSON                            *bool
	pace, depTimeout                                          *time.Duration
	files                                                     listFlag
	command                                                   argvFlag
	rules                                                     *ruleFlags
	autoApply                                                 *choiceFlag[engine.AutoApply]
	confine                                                   *choiceFlag[confine.Mode]
	gateway                                                   *gatewayFlags

	stdout, stderr    io.Writer
	file              string // the FLOW ("" for a skill)
	src               []byte
	answersByQuestion map[string]string // --answers
	ws                string            // absolute
	opts              engine.Options
	view              *termview.View // nil with --json
	sum               summaryFile
	sinkMu            sync.Mutex       // the engine emits from several goroutines
	events            []eventlog.Event // for the summary
}

func runFlow(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "show" {
		return runShow(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "fork" {
		return runFork(args[1:], stdin, stdout, stderr) // cmd_run_fork.go
	}
	rc := &runInvocation{stdout: stdout, stderr: stderr}
	if code, ok := rc.parse(args); !ok {
		return code
	}
	if code, ok := rc.prepare(); !ok {
		return code
	}
	if rc.view != nil {
		defer rc.view.Close()
	}
	rc.connect(stdin)
	// A run reads the workspace (and copies it into sandboxes): an apply cut short is
	// recovered first, and said so.
	if !recoverFirst(rc.ws, stderr) {
		return exitFail
	}
	rc.mentionUnfinished()
	ctx, stop := rc.signals()
	defer stop()
	f, out, err := rc.start(ctx)
	if err != nil {
		return rc.refused(err)
	}
	return rc.report(f, out)
}

// parse reads the flags and checks that they go together.
func (rc *runInvocation) parse(args []string) (int, bool) {
	fs := newCmdFlags("run", runUsage, rc.stdout, rc.stderr)
	rc.workspace = fs.String("workspace", "", "the workspace root `DIR` (default: the folder holding the flow's .agentcanvas/ or flows/)")
	rc.dryRun = fs.Bool("dry-run", false, "run every agent with the built-in dry-run backend (no CLI, no key)")
	rc.answers = fs.String("answers", "", "JSON `FILE` of answers by question id or text")
	rc.nonInteractive = fs.Bool("non-interactive", false, "never prompt: questions take their default or fail the run")
	rc.backend = fs.String("backend", "", "override every agent's backendId with `BACKEND` (claude, codex, gemini, command, dry-run; auto keeps each agent's own)")
	rc.task = fs.String("task", "", "the run's task, as `TEXT` (default: the flow's description)")
	rc.pace = fs.Duration("pace", 0, "with --dry-run: wait this long before each agent turn, to watch the run unfold (e.g. 1s)")
	rc.resume = fs.String("resume", "", "go on with the run `RUN_ID` of FLOW, stopped or killed before it finished (its completed interactions are kept)")
	rc.skill = fs.String("skill", "", "instead of a FLOW, invoke the skill `NAME` of .agentcanvas/skills/ (--task: what you ask of it)")
	fs.Var(&rc.files, "file", "with --skill: a workspace-relative `FILE` the agent's sandbox receives (repeat or comma-separate)")
	fs.Var(&rc.command, "command", "with --skill and --backend command: one `WORD` of the agent's argv (one --command per word)")
	rc.asJSON = fs.Bool("json", false, "print the events as JSON lines on stdout (the machine format), not the human view")
	rc.summary = fs.String("summary", "", "write a Markdown summary of the run to `FILE` (default: append it to $GITHUB_STEP_SUMMARY when that is set)")
	rc.depTimeout = fs.Duration("dependency-timeout", 0, "how long an agent's dependency request waits for its value (e.g. 10m; default: the flow's policy.dependencyTimeoutMs, else 1h)")
	rc.rules = addRuleFlags(fs.FlagSet)
	rc.autoApply = &choiceFlag[engine.AutoApply]{engine.AutoApplyFlow, engine.ParseAutoApply}
	fs.Var(rc.autoApply, "auto-apply", "`MODE`, a cap on the flow's policy.autoApply: off (apply nothing unreviewed), whenClean (as the flow says, and only on an unchanged HEAD) or flow")
	rc.confine = &choiceFlag[confine.Mode]{confine.ModeAuto, confine.ParseMode}
	rc.gateway = addGatewayFlags(fs.FlagSet) // flags_gateway.go
	fs.Var(rc.confine, "confine", "how agent processes are confined by the kernel (Landlock), a `MODE`: auto (where it can, with a warning where it cannot), required (refuse a run that cannot be) or off")
	if code, ok := fs.parse(args); !ok {
		return code, false
	}
	if reason := runArgsProblem(fs.Args(), *rc.skill, *rc.resume, len(rc.files) > 0 || len(rc.command) > 0); reason != "" {
		return fs.usageError("%s", reason), false
	}
	if *rc.pace < 0 || *rc.pace > 0 && !*rc.dryRun {
		return fs.usageError("--pace goes with --dry-run (a real run goes at its agents' pace), and is not negative"), false
	}
	rc.file = fs.Arg(0)
	return exitOK, true
}

// prepare reads the flow and sets the run's options and output.
func (rc *runInvocation) prepare() (int, bool) {
	fail := func(err error) (int, bool) {
		fmt.Fprintf(rc.stderr, "agentcanvas run: %v\n", err)
		return exitUsage, false
	}
	ws := *rc.workspace
	if rc.file != "" {
		var err error
		if rc.src, err = os.ReadFile(rc.file); err != nil {
			return fail(err)
		}
		if ws == "" {
			ws = workspaceOf(rc.file)
		}
	} else if ws == "" {
		ws = workspaceOf(filepath.Join(".", "SKILL.md"))
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return fail(err)
	}
	rc.ws = ws
	rules, err := rc.rules.rules(ws)
	if err != nil {
		return fail(err)
	}
	limits := engine.Limits{Rules: rules, AutoApply: rc.autoApply.v, AutoApplyFrom: "--auto-apply", Confine: rc.confine.v, ConfineFrom: "--confine"}
	rc.opts = engine.Options{Workspace: ws, DryRun: *rc.dryRun, Pace: *rc.pace, Backend: *rc.backend, Task: *rc.task, Limits: func() engine.Limits { return limits }, DependencyTimeout: *rc.depTimeout}
	if err := rc.gateway.apply(&rc.opts); err != nil {
		return fail(err)
	}
	if *rc.answers != "" {
		if rc.answersByQuestion, err = engine.LoadAnswers(*rc.answers); err != nil {
			return fail(err)
		}
	}
	rc.sum = summaryTarget(*rc.summary)
	if !*rc.asJSON {
		rc.view = termview.New(rc.stdout, termview.Options{Mode: termview.ModeFor(rc.stdout), Width: columnsEnv()})
	}
	return exitOK, true
}

// connect gives the run its event sink (the view, or JSON lines on stdout) and the person
// who answers its questions: at the prompt when stdin is a terminal (on a live view the
// prompt shares its terminal, and the block steps aside), else the answers file or defaults.
func (rc *runInvocation) connect(stdin io.Reader) {
	var sink func(eventlog.Event)
	prompt := rc.stderr
	if rc.view == nil {
		enc := jsonOut(rc.stdout)
		sink = func(ev eventlog.Event) { _ = enc.Encode(ev) }
	} else {
		sink = rc.view.Event
		if termview.ModeFor(rc.stdout).Live {
			prompt = rc.stdout
		}
	}
	rc.opts.Sink = func(ev eventlog.Event) {
		rc.sinkMu.Lock()
		defer rc.sinkMu.Unlock()
		if rc.sum.path != "" {
			rc.events = append(rc.events, ev)
		}
		sink(ev)
	}
	ans := rc.answersByQuestion
	if *rc.nonInteractive || !termview.IsTerminal(stdin) {
		rc.opts.Human = engine.NonInteractive{Answers: ans}
		return
	}
	var h engine.Human = &engine.Terminal{R: stdin, W: prompt, Answers: ans}
	if rc.view != nil {
		h = rc.view.Human(h)
	}
	rc.opts.Human = h
}

// signals stops the run on Ctrl-C or SIGTERM; the view then says "stopped by you" of the
// stopped turns, not the Go error of the cancellation.
func (rc *runInvocation) signals() (context.Context, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if rc.view == nil {
		return ctx, stop
	}
	ended := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			rc.view.StoppedByYou()
		case <-ended:
		}
	}()
	return ctx, func() { close(ended); stop() }
}

// start runs the skill, the resumed run or the flow to its end.
func (rc *runInvocation) start(ctx context.Context) (*flow.Flow, *engine.Outcome, error) {
	switch {
	case *rc.skill != "":
		// The skill's flow carries the backend and the request; the run's id names its folder.
		opts := rc.opts
		opts.RunID, opts.Backend, opts.Task = engine.NewRunID(time.Now()), "", ""
		inv := engine.SkillInvocation{Name: *rc.skill, Arguments: *rc.task, Files: rc.files, Backend: *rc.backend, Command: rc.command}
		f, err := engine.WriteSkillFlow(rc.ws, opts.RunID, inv)
		if err != nil {
			return nil, nil, err
		}
		out, err := engine.Run(ctx, f, opts)
		return f, out, err
	case *rc.resume != "":
		f := flow.Parse(rc.file, rc.src)
		out, err := engine.Resume(ctx, f, *rc.resume, rc.opts)
		return f, out, err
	}
	f := flow.Parse(rc.file, rc.src)
	out, err := engine.Run(ctx, f, rc.opts)
	return f, out, err
}

// refused says why the run did not start, and returns the exit code.
func (rc *runInvocation) refused(err error) int {
	if rc.sum.path != "" {
		rc.sum.write(rc.stderr, runsummary.Refused(firstNonEmptyStr(rc.file, "--skill "+*rc.skill), err))
	}
	var inv *engine.InvalidFlowError
	switch {
	case errors.As(err, &inv):
		fmt.Fprintln(rc.stderr, err)
		return exitFail
	case errors.Is(err, engine.ErrConfinementUnavailable):
		fmt.Fprintf(rc.stderr, "agentcanvas run: the run was not started: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(rc.stderr, "agentcanvas run: %v\n", err)
	return exitUsage
}

// report prints where the run's proposals, log and summary are, and returns the exit code.
func (rc *runInvocation) report(f *flow.Flow, out *engine.Outcome) int {
	summaryFailed := false
	if rc.sum.path != "" {
		rc.sinkMu.Lock()
		md := runsummary.Markdown(runsummary.Input{Outcome: out, Events: rc.events, Workspace: rc.ws, FlowFile: firstNonEmptyStr(rc.file, f.File)})
		rc.sinkMu.Unlock()
		summaryFailed = !rc.sum.write(rc.stderr, md) && !rc.sum.appending
	}
	logDir := filepath.Join(rc.ws, eventlog.LogsDir, f.Name)
	if rc.view == nil {
		printOutcome(rc.stderr, out, rc.ws, logDir)
		if rc.file != "" && engine.ResumableOutcome(out) {
			fmt.Fprintf(rc.stderr, "  resume: %s\n", rc.resumeCommand(out.RunID))
		}
	} else {
		rc.printWhere(out, logDir, summaryFailed)
	}
	switch {
	case out.Status != engine.StatusCompleted:
		return exitFail
	case summaryFailed:
		return exitUsage // the run went well, the file the person asked for was not written
	}
	return exitOK
}

// printWhere closes the view with the run's proposals, the commands that check and export
// them, the log, the summary, and how to go on with a run that was stopped.
func (rc *runInvocation) printWhere(out *engine.Outcome, logDir string, summaryFailed bool) {
	v := rc.view
	for i, p := range out.Proposals {
		label := "proposals: "
		if i > 0 {
			label = "           "
		}
		v.Printf("%s%s%s", termview.Indent, label, p)
	}
	if len(out.Proposals) > 0 {
		v.Printf("%scheck:     %s proposal apply --check --workspace %s PROPOSAL   (without --check: apply it)", termview.Indent, invokedAs(), shellQuote(rc.ws))
		v.Printf("%sexport:    %s proposal export --workspace %s %s > %s.patch", termview.Indent, invokedAs(), shellQuote(rc.ws), out.RunID, out.RunID)
	}
	v.Printf("%slog:       %s", termview.Indent, logDir)
	if rc.sum.path != "" && !summaryFailed {
		v.Printf("%ssummary:   %s", termview.Indent, rc.sum.path)
	}
	if rc.file != "" && engine.ResumableOutcome(out) {
		v.Printf("%sresume:    %s", termview.Indent, rc.resumeCommand(out.RunID))
	}
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

// mentionUnfinished tells the person, before a new run of a flow, of the newest run of the
// same flow that did not finish and can be resumed: starting again is then a choice.
func (rc *runInvocation) mentionUnfinished() {
	if rc.file == "" || *rc.resume != "" {
		return
	}
	name := flow.Parse(rc.file, rc.src).Name
	states, err := engine.ListStates(rc.ws)
	if err != nil || name == "" {
		return
	}
	for _, st := range states {
		if st.Flow != name || !st.Resumable {
			continue
		}
		done := 0
		for _, in := range st.Interactions {
			if in.Status == engine.StatusCompleted {
				done++
			}
		}
		how := "was stopped"
		if st.Status != engine.StatusStopped {
			how = "ended before it finished (its process is gone)"
		}
		msg := fmt.Sprintf("run %s of this flow %s, %d of %d interactions done; this is a new run. To go on with that one instead: %s",
			st.RunID, how, done, len(st.Interactions), rc.resumeCommand(st.RunID))
		if rc.view != nil {
			rc.view.Printf("%s", msg)
		} else {
			fmt.Fprintln(rc.stderr, msg)
		}
		return
	}
}

// resumeCommand is the command that goes on with run id of this flow.
func (rc *runInvocation) resumeCommand(id string) string {
	return fmt.Sprintf("%s run --resume %s %s", invokedAs(), id, shellQuote(rc.file))
}
