package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

func init() {
	register(&command{name: "proposal", summary: "review and apply agents' edits, or send comments back to their worker: proposal create|list|review|comment|request-changes|interdiff|apply|reject|revert|ledger|origins|export", run: runProposal, short: true})
}

const proposalUsage = `usage:
  agentcanvas proposal create --workspace W --run R --agent A [--notes T] [--test-log FILE] [--flow F]
  agentcanvas proposal apply  --workspace W [--check] [--files a,b] [--hunks path:1,path:3] [--merge path:N]… [--resolve path:N=TAKE]… [--against path=BLOB]… [--allow DIR]… [--block DIR]… [--flow F] PROPOSAL
  agentcanvas proposal review --workspace W [--json] [--flow F] [--record] [--allow DIR]… [--block DIR]… PROPOSAL
  agentcanvas proposal reject --workspace W [--reason T] [--flow F] PROPOSAL
  agentcanvas proposal list   --workspace W [--json]
  agentcanvas proposal comment --workspace W [--json] [--delete ID] PROPOSAL [PATH:LINE=TEXT…]
  agentcanvas proposal request-changes --workspace W [--comment PATH:LINE=TEXT]… [--comments FILE] [--dry-run] [--backend B] [--non-interactive] [--json] [--confine auto|required|off] PROPOSAL
  agentcanvas proposal interdiff --workspace W [--from N] [--to N] [--json] PROPOSAL
  agentcanvas proposal revert --workspace W [--check] [--json] [--allow DIR]… [--block DIR]… [--flow F] ID
  agentcanvas proposal ledger --workspace W [--json]
  agentcanvas proposal origins --workspace W [--json] FILE
  agentcanvas proposal export --workspace W [--out FILE] [--author "Name <email>"] [--allow DIR]… [--block DIR]… RUN_ID [AGENT…]
PROPOSAL: a proposal.json, a sandbox agent folder, or a .patch file.
--merge, --resolve: in a file the workspace changed since the proposal was made, the hunks of its
three-way merge (numbered as review's files[].merge.hunks) and how each conflict is settled: TAKE
is mine, theirs, both, markers, or @FILE (the text of FILE). --against: the merge's workspace blob.
ID (revert): a ledger entry id (proposal ledger lists them) or a PROPOSAL (its latest apply).
--allow: the patch may only touch files inside these workspace-relative folders; --block: nor
files in these folders, besides .agentcanvas, .git, node_modules and dist (both repeatable).
comment: with no comment, lists the proposal's comments, the worker's answers and its revision.
request-changes: the worker that made the proposal gets its comments as a new turn in its own
sandbox; what it changes becomes the proposal's next revision (interdiff shows what changed).
apply: exit 0 applied (or, with --check, would apply), 1 refused or conflict (workspace unchanged), 2 usage.
export: the run's pending proposals (or the named agents') as one mbox patch for git am / git
apply, one message per proposal; exit 0, 1 when they conflict or one does not apply, 2 usage.`

func runProposal(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, proposalUsage)
		return exitUsage
	}
	switch args[0] {
	case "create":
		return proposalCreate(args[1:], stdout, stderr)
	case "apply":
		return proposalApply(args[1:], stdout, stderr)
	case "review":
		return proposalReview(args[1:], stdout, stderr)
	case "reject":
		return proposalReject(args[1:], stdout, stderr)
	case "list":
		return proposalList(args[1:], stdout, stderr)
	case "revert":
		return proposalRevert(args[1:], stdout, stderr)
	case "ledger":
		return proposalLedger(args[1:], stdout, stderr)
	case "origins":
		return proposalOrigins(args[1:], stdout, stderr)
	case "export":
		return proposalExport(args[1:], stdout, stderr)
	case "comment":
		return proposalComment(args[1:], stdout, stderr)
	case "request-changes":
		return proposalRequestChanges(args[1:], stdin, stdout, stderr)
	case "interdiff":
		return proposalInterdiff(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stderr, proposalUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "proposal: unknown subcommand %q\n%s\n", args[0], proposalUsage)
	return exitUsage
}

func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *string, *string) {
	fs := flag.NewFlagSet("proposal "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, proposalUsage); fs.PrintDefaults() }
	ws := fs.String("workspace", ".", "workspace root")
	flow := fs.String("flow", "", "flow name for the event log (.agentcanvas/logs/<flow>/; default: the flow that made the proposal, else "+proposal.DefaultFlow+")")
	return fs, ws, flow
}

func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := parseAnywhere(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}

func proposalCreate(args []string, stdout, stderr io.Writer) int {
	fs, ws, flow := newFlags("create", stderr)
	runID := fs.String("run", "", "run id")
	agent := fs.String("agent", "", "agent id")
	notes := fs.String("notes", "", "notes for proposal.json")
	testLog := fs.String("test-log", "", "a file with the output of the tests the handoff named; copied to proposal/test.log")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *runID == "" || *agent == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "proposal create: --run and --agent are required and no other arguments are taken")
		return exitUsage
	}
	var tl []byte
	if *testLog != "" {
		b, err := os.ReadFile(*testLog)
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas: --test-log: %v\n", err)
			return exitUsage
		}
		tl = b
	}
	ctx, cancel := signalContext()
	defer cancel()
	c, err := proposal.Create(ctx, proposal.CreateOptions{Workspace: *ws, RunID: *runID, AgentID: *agent, Notes: *notes, Flow: *flow, TestLog: tl})
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return exitFail
	}
	printJSON(stdout, c.Proposal)
	for _, w := range c.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	for _, col := range c.Collisions {
		fmt.Fprintf(stderr, "conflict: %s: %s\n", col.Path, col.Message)
	}
	if len(c.Collisions) == 0 && len(c.Proposal.ChangedFiles) > 0 {
		fmt.Fprintln(stderr, "no conflict with the other open proposals")
	}
	if len(c.Proposal.ChangedFiles) > 0 {
		ref := filepath.Join(c.AgentDir, proposal.JSONFile)
		if res, _ := proposal.Check(ctx, *ws, ref, proposal.Selection{}, proposal.ApplyOptions{Flow: *flow, Reviewing: true}); res != nil {
			for _, h := range res.Held {
				fmt.Fprintf(stderr, "held: %s: %s (applied only when a person confirms it by name)\n", h.Shown, h.Reason)
			}
		}
	}
	return exitOK
}

// printHeldResult says which held files an apply did not touch and how to confirm them.
func printHeldResult(w io.Writer, held []proposal.Hold) {
	for _, h := range held {
		fmt.Fprintf(w, "held: %s: %s\n", h.Shown, h.Reason)
	}
	fmt.Fprintf(w, "nothing was applied. Review these files (proposal review), then confirm each by name: %s\n", strings.TrimSpace(confirmFlags(held)))
}

// parseSelection reads --files a,b and --hunks path:1,path:3 (a path may itself hold ':'; the
// hunk number is after the last one).
func parseSelection(files, hunks listFlag) (proposal.Selection, error) {
	sel := proposal.Selection{Files: files}
	var err error
	sel.Hunks, err = parseHunkRefs("--hunks", hunks)
	return sel, err
}

// parseHunkRefs reads PATH:N references (the path may hold ':'; N is after the last one).
func parseHunkRefs(flag string, refs listFlag) (map[string][]int, error) {
	var out map[string][]int
	for _, h := range refs {
		p, n, err := parseHunkRef(flag, h)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string][]int{}
		}
		out[p] = append(out[p], n)
	}
	return out, nil
}

func parseHunkRef(flag, h string) (string, int, error) {
	i := strings.LastIndexByte(h, ':')
	if i <= 0 {
		return "", 0, fmt.Errorf("%s %q: want PATH:N", flag, h)
	}
	n, err := strconv.Atoi(h[i+1:])
	if err != nil || n < 1 {
		return "", 0, fmt.Errorf("%s %q: hunk number must be 1 or more", flag, h)
	}
	return h[:i], n, nil
}

func proposalApply(args []string, stdout, stderr io.Writer) int {
	fs, ws, flow := newFlags("apply", stderr)
	check := fs.Bool("check", false, "check only; change nothing")
	var files, hunks, merge, resolve, against listFlag
	fs.Var(&files, "files", "apply only these files (comma-separated or repeated)")
	fs.Var(&hunks, "hunks", "apply only these hunks, as PATH:N (1-based, as 'proposal review' numbers them)")
	fs.Var(&merge, "merge", "in a file the workspace changed since, apply these hunks of its merge, as PATH:N")
	fs.Var(&resolve, "resolve", "settle a conflict of a merge, as PATH:N=mine|theirs|both|markers|@FILE")
	fs.Var(&against, "against", "the workspace blob a file's merge was reviewed against, as PATH=BLOB (review's merge.workspace)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	var confirm argvFlag // verbatim: a name may hold commas
	fs.Var(&confirm, "confirm-control", "apply this held `PATH` (a control file, or a name that looks like another), as the review names it; repeatable")
	rf := addRuleFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	rules, err := rf.rules(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "proposal apply: %v\n", err)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "proposal apply: exactly one PROPOSAL is required")
		return exitUsage
	}
	sel, err := parseSelection(files, hunks)
	if err == nil {
		err = parseMergeSelection(&sel, merge, resolve, against)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return exitUsage
	}
	ctx, cancel := signalContext()
	defer cancel()
	res, err := proposal.Apply(ctx, *ws, fs.Arg(0), sel, proposal.ApplyOptions{DryRun: *check, Flow: *flow, Rules: rules, Waiting: waitingNote(stderr), Confirm: confirm})
	return printResult(stdout, stderr, res, err, *asJSON, map[bool]string{false: "applied", true: "would apply"}[*check])
}

// printResult prints an apply's (or a revert's) result: warnings and refusals on stderr, the
// result as JSON, or a "VERB STATUS PATH" line a file; it returns the exit code.
func printResult(stdout, stderr io.Writer, res *proposal.Result, err error, asJSON bool, verb string) int {
	if res != nil {
		for _, w := range res.Warnings {
			fmt.Fprintf(stderr, "warning: %s\n", w)
		}
		if asJSON {
			printJSON(stdout, res)
		}
	}
	if err != nil {
		var ref *proposal.RefusedError
		var held *proposal.HeldError
		if errors.As(err, &held) && len(held.Held) > 0 {
			printHeldResult(stderr, held.Held)
			return exitFail
		}
		if errors.As(err, &ref) {
			conflict := false
			for _, p := range ref.Problems {
				fmt.Fprintf(stderr, "refused: %s\n", p)
				conflict = conflict || strings.Contains(p.Reason, "of the merge: conflicts with")
			}
			if conflict { // the command line's values for TAKE (the editor's "edit" is @FILE here)
				fmt.Fprintln(stderr, "resolve each conflict with --resolve PATH:N=TAKE, TAKE one of mine, theirs, both, markers or @FILE (the text of FILE); proposal review --json lists the merge's hunks")
			}
		} else {
			fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		}
		return exitFail
	}
	if !asJSON {
		w := bufio.NewWriter(stdout)
		for _, f := range res.Files {
			fmt.Fprintf(w, "%s %s %s\n", verb, f.Status, f.Path)
		}
		if res.Ledger != "" {
			fmt.Fprintf(w, "ledger entry %s\n", res.Ledger)
		}
		w.Flush()
	}
	return exitOK
}

func proposalReview(args []string, stdout, stderr io.Writer) int {
	fs, ws, flow := newFlags("review", stderr)
	record := fs.Bool("record", false, "append a proposal_reviewed event")
	asJSON := fs.Bool("json", false, "print the review data as JSON (for tools) instead of the diff")
	rf := addRuleFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	rules, err := rf.rules(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "proposal review: %v\n", err)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "proposal review: exactly one PROPOSAL is required")
		return exitUsage
	}
	ctx, cancel := signalContext()
	defer cancel()
	rv, err := proposal.GetReview(ctx, *ws, fs.Arg(0), proposal.ReviewOptions{ApplyOptions: proposal.ApplyOptions{Flow: *flow, Rules: rules}, Record: *record, Shown: true})
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return exitFail
	}
	if *asJSON {
		printJSON(stdout, rv)
	} else {
		printReview(stdout, rv, fs.Arg(0))
	}
	return exitOK
}

func proposalReject(args []string, stdout, stderr io.Writer) int {
	fs, ws, flow := newFlags("reject", stderr)
	reason := fs.String("reason", "", "why it was rejected")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "proposal reject: exactly one PROPOSAL is required")
		return exitUsage
	}
	if !recoverFirst(*ws, stderr) {
		return exitFail
	}
	if err := proposal.Reject(*ws, fs.Arg(0), *reason, *flow); err != nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return exitFail
	}
	fmt.Fprintln(stdout, "rejected")
	return exitOK
}

func proposalList(args []string, stdout, stderr io.Writer) int {
	fs, ws, _ := newFlags("list", stderr)
	asJSON := fs.Bool("json", false, "print the proposals as JSON (for tools)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if !recoverFirst(*ws, stderr) {
		return exitFail
	}
	list, err := proposal.List(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return exitFail
	}
	if list == nil {
		list = []proposal.Summary{}
	}
	if !*asJSON {
		printList(stdout, list)
		return exitOK
	}
	printJSON(stdout, list)
	return exitOK
}
