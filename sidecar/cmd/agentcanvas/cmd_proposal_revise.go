package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
	"github.com/agentcanvas/agentcanvas/sidecar/termview"
)

// terminalText is s made safe when w is a terminal (a patch piped to git stays byte for byte).
func terminalText(w io.Writer, s string) string {
	if termview.IsTerminal(w) {
		return termsafe.Text(s)
	}
	return s
}

// proposalComment adds review comments to a proposal, deletes one not yet sent, or lists
// them with the worker's answers and the proposal's revisions.
func proposalComment(args []string, stdout, stderr io.Writer) int {
	fs, ws, _ := newFlags("comment", stdout, stderr)
	del := fs.String("delete", "", "delete the comment `ID` (one not yet sent to the worker)")
	asJSON := fs.Bool("json", false, "print the review state as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 {
		return fs.usageError("a PROPOSAL is required")
	}
	ref := fs.Arg(0)
	var st *proposal.ReviewState
	var err error
	switch {
	case *del != "":
		st, err = proposal.DeleteComment(*ws, ref, *del)
	case fs.NArg() > 1:
		var cs []proposal.Comment
		for _, a := range fs.Args()[1:] {
			c, perr := proposal.ParseComment(a)
			if perr != nil {
				fmt.Fprintf(stderr, "agentcanvas proposal comment: %v\n", perr)
				return exitUsage
			}
			cs = append(cs, c)
		}
		st, _, err = proposal.AddComments(*ws, ref, cs)
	default:
		var l *proposal.Loaded
		if l, err = proposal.Load(*ws, ref); err == nil && l.Proposal == nil {
			err = errors.New(ref + " is a bare patch: it has no comments")
		}
		if err == nil {
			st, err = proposal.ReadReviewState(l.AgentDir, l.Proposal)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas proposal comment: %v\n", err)
		return exitFail
	}
	if *asJSON {
		printJSON(stdout, st)
		return exitOK
	}
	printReviewState(stdout, st)
	return exitOK
}

// printReviewState is the comments and revisions for a person.
func printReviewState(w io.Writer, st *proposal.ReviewState) {
	fmt.Fprintf(w, "revision %d", st.Revision)
	if st.Revising != nil {
		fmt.Fprintf(w, " (revision run %s at work)", st.Revising.RunID)
	}
	fmt.Fprintln(w)
	for _, c := range st.Comments {
		where := c.Path
		if c.Line > 0 {
			where = fmt.Sprintf("%s:%d", c.Path, c.Line)
		}
		state := "open"
		switch {
		case c.AnsweredIn != 0:
			state = fmt.Sprintf("answered in revision %d", c.AnsweredIn)
		case c.SentIn != 0:
			state = fmt.Sprintf("sent with revision %d, not answered", c.SentIn)
		}
		kind := ""
		if c.Kind == proposal.CommentReject {
			kind = " reject:"
		}
		fmt.Fprintf(w, "  %s %s%s %s  [%s]\n", termsafe.Line(c.ID), termsafe.Line(where), kind, termsafe.Line(oneLine(c.Text, 200)), state)
		if c.Answer != "" {
			fmt.Fprintf(w, "      worker: %s\n", termsafe.Line(oneLine(c.Answer, 200)))
		}
	}
	if len(st.Comments) == 0 {
		fmt.Fprintln(w, "  no comments")
	}
}

// readCommentsFile reads --comments FILE: a JSON array of comments ({path, line, text,
// kind}), or one PATH:LINE=TEXT a line (blank lines and lines starting with # skipped).
func readCommentsFile(name string) ([]proposal.Comment, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		var cs []proposal.Comment
		if err := json.Unmarshal(t, &cs); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return cs, nil
	}
	var cs []proposal.Comment
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c, err := proposal.ParseComment(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		cs = append(cs, c)
	}
	return cs, sc.Err()
}

// proposalRequestChanges sends a proposal's open comments (and those given here) back to
// the worker that made it, as a revision run, and reports the revision it made.
func proposalRequestChanges(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, ws, _ := newFlags("request-changes", stdout, stderr)
	var comments argvFlag // verbatim: a comment may hold commas
	fs.Var(&comments, "comment", "a comment `PATH:LINE=TEXT` (PATH=TEXT for the whole file; TEXT \"reject: why\" rejects the hunk); repeatable")
	file := fs.String("comments", "", "read comments from `FILE`: one PATH:LINE=TEXT a line, or a JSON array of {path,line,text,kind}")
	dryRun := fs.Bool("dry-run", false, "run the worker with the built-in dry-run backend")
	backend := fs.String("backend", "", "run the worker with this `BACKEND` instead of its own (claude, codex, gemini, command, dry-run)")
	nonInteractive := fs.Bool("non-interactive", false, "never prompt: questions take their default or fail the revision")
	asJSON := fs.Bool("json", false, "print the events as JSON lines, then the outcome")
	confineMode := &choiceFlag[confine.Mode]{confine.ModeAuto, confine.ParseMode}
	fs.Var(confineMode, "confine", "how the worker is confined by the kernel (Landlock), a `MODE`: auto, required or off")
	rf := addRuleFlags(fs.FlagSet)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fs.usageError("exactly one PROPOSAL is required")
	}
	root, err := filepath.Abs(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas proposal request-changes: %v\n", err)
		return exitUsage
	}
	var cs []proposal.Comment
	for _, a := range comments {
		c, err := proposal.ParseComment(a)
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas proposal request-changes: %v\n", err)
			return exitUsage
		}
		cs = append(cs, c)
	}
	if *file != "" {
		more, err := readCommentsFile(*file)
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas proposal request-changes: %v\n", err)
			return exitUsage
		}
		cs = append(cs, more...)
	}
	rules, err := rf.rules(root)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas proposal request-changes: %v\n", err)
		return exitUsage
	}
	limits := engine.Limits{Rules: rules, Confine: confineMode.v, ConfineFrom: "--confine"}
	opts := engine.Options{Workspace: root, DryRun: *dryRun, Backend: *backend, Limits: func() engine.Limits { return limits }}
	var view *termview.View
	var mu sync.Mutex
	if *asJSON {
		enc := jsonOut(stdout)
		opts.Sink = func(ev eventlog.Event) { mu.Lock(); defer mu.Unlock(); _ = enc.Encode(ev) }
	} else {
		view = termview.New(stdout, termview.Options{Mode: termview.ModeFor(stdout)})
		defer view.Close()
		opts.Sink = func(ev eventlog.Event) { mu.Lock(); defer mu.Unlock(); view.Event(ev) }
	}
	if *nonInteractive || !termview.IsTerminal(stdin) {
		opts.Human = engine.NonInteractive{}
	} else {
		opts.Human = &engine.Terminal{R: stdin, W: stderr}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := engine.Revise(ctx, engine.RevisionRequest{Proposal: fs.Arg(0), Comments: cs}, opts)
	if view != nil {
		view.Close()
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas proposal request-changes: %v\n", err)
		return exitFail
	}
	if *asJSON {
		printJSON(stdout, out)
	} else {
		printRevision(stderr, out, root)
	}
	if out.Status != engine.StatusCompleted {
		return exitFail
	}
	return exitOK
}

func printRevision(w io.Writer, out *engine.RevisionOutcome, ws string) {
	r := out.Result
	switch {
	case out.Status != engine.StatusCompleted:
		fmt.Fprintf(w, "the revision run %s %s: %s; the proposal stays at revision %d\n", out.RunID, out.Status, firstNonEmptyStr(out.Reason, "see its log"), r.Revision)
	case r.Changed:
		fmt.Fprintf(w, "revision %d of %s (run %s): %d comment(s) answered\n", r.Revision, out.Proposal, out.RunID, len(r.Answered))
		fmt.Fprintf(w, "  what changed: agentcanvas proposal interdiff --workspace %s %s\n", shellQuote(ws), out.Proposal)
	default:
		fmt.Fprintf(w, "the worker changed nothing (run %s); the proposal stays at revision %d, %d comment(s) answered\n", out.RunID, r.Revision, len(r.Answered))
	}
	for _, c := range r.Answered {
		if c.Answer != "" {
			fmt.Fprintf(w, "  %s %s: %s\n", c.ID, c.Path, oneLine(c.Answer, 200))
		}
	}
}

// proposalInterdiff prints what changed between two revisions of a proposal.
func proposalInterdiff(args []string, stdout, stderr io.Writer) int {
	fs, ws, _ := newFlags("interdiff", stdout, stderr)
	from := fs.Int("from", 0, "the earlier revision `N` (default: the one before --to)")
	to := fs.Int("to", 0, "the later revision `N` (default: the latest)")
	asJSON := fs.Bool("json", false, "print {from,to,files,patch} as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return fs.usageError("one PROPOSAL, or two proposals or runs to compare, is required")
	}
	if fs.NArg() == 2 { // across runs (cmd_proposal_compare.go)
		return proposalCompare(*ws, fs.Arg(0), fs.Arg(1), *asJSON, *from != 0 || *to != 0, stdout, stderr)
	}
	id, err := proposal.GetInterdiff(*ws, fs.Arg(0), *from, *to)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas proposal interdiff: %v\n", err)
		return exitFail
	}
	if *asJSON {
		printJSON(stdout, id)
		return exitOK
	}
	io.WriteString(stdout, terminalText(stdout, id.Patch))
	return exitOK
}
