package main

import (
	"bufio"
	"errors"
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

// proposalCommands are proposal's subcommands: each one's usage line and what it does.
var proposalCommands = []struct{ name, usage, about string }{
	{"create", "--workspace W --run R --agent A [--notes T] [--test-log FILE] [--flow F]",
		"Diffs a worker's sandbox (W/.agentcanvas/sandboxes/R/A) into a proposal and prints it as JSON.\nExit status: 0, 1 refused, 2 usage."},
	{"list", "--workspace W [--json]",
		"Lists the workspace's proposals, newest run first: status (with the suggested order of\napplying), run, revision, agent and files.\nExit status: 0, 1 the proposals could not be read, 2 usage."},
	{"review", "--workspace W [--json] [--flow F] [--record] [--allow DIR]… [--block DIR]… PROPOSAL",
		"Prints a proposal as a person reads it: each file's diff, whether it applies to the workspace as\nit is now, and the command that applies it.\nExit status: 0, 1 no such proposal, 2 usage."},
	{"comment", "--workspace W [--json] [--delete ID] PROPOSAL [PATH:LINE=TEXT…]",
		"Adds review comments for the worker (PATH=TEXT for a whole file; TEXT \"reject: why\" rejects the\nhunk), deletes one not yet sent, or, with none, lists the comments, the worker's answers and the\nproposal's revisions.\nExit status: 0, 1 refused, 2 usage."},
	{"request-changes", "--workspace W [--comment PATH:LINE=TEXT]… [--comments FILE] [--dry-run] [--backend B] [--non-interactive] [--json] [--confine auto|required|off] PROPOSAL",
		"The worker that made the proposal gets its comments as a new turn in its own sandbox; what it\nchanges becomes the proposal's next revision (interdiff shows what changed).\nExit status: 0 a new revision, 1 the revision failed or changed nothing, 2 usage."},
	{"interdiff", "--workspace W [--from N] [--to N] [--json] PROPOSAL | PROPOSAL OTHER | RUN OTHER_RUN",
		"Prints what changed between two revisions of a proposal (default: the latest and the one before);\nwith two proposals, or two runs agent by agent (a run and its fork), what differs between the\nfiles the first leaves and those the second leaves.\nExit status: 0, 1 no such revision, proposal or run, 2 usage."},
	{"apply", "--workspace W [--check] [--files a,b] [--hunks path:1,path:3] [--merge path:N]… [--resolve path:N=TAKE]… [--against path=BLOB]… [--confirm-control PATH]… [--allow DIR]… [--block DIR]… [--flow F] PROPOSAL",
		"Applies a proposal all or nothing (its accepted files and hunks), after checking that the workspace\nfiles it changes are as they were; re-based on the workspace when it moved. --merge, --resolve: in\na file the workspace changed since the proposal was made, the hunks of its three-way merge\n(numbered as review's files[].merge.hunks) and how each conflict is settled: TAKE is mine, theirs,\nboth, markers, or @FILE (the text of FILE). --against: the merge's workspace blob.\nExit status: 0 applied (or, with --check, would apply), 1 refused or conflict (workspace unchanged), 2 usage."},
	{"reject", "--workspace W [--reason T] [--flow F] PROPOSAL",
		"Marks a proposal rejected; the workspace is not touched.\nExit status: 0, 1 refused, 2 usage."},
	{"revert", "--workspace W [--check] [--json] [--allow DIR]… [--block DIR]… [--flow F] ID",
		"Takes one apply back out, later ones kept. ID: a ledger entry id (proposal ledger lists them) or a\nPROPOSAL (its latest apply).\nExit status: 0 reverted, 1 refused or conflict (workspace unchanged), 2 usage."},
	{"ledger", "--workspace W [--json]",
		"Lists every apply and revert of the workspace: entry id, what, which agent, run and revision, files.\nExit status: 0, 1 the ledger could not be read, 2 usage."},
	{"origins", "--workspace W [--json] FILE",
		"Says which apply (agent, run, interaction, round, prompt) wrote which lines of FILE.\nExit status: 0, 1 the ledger could not be read, 2 usage."},
	{"export", "--workspace W [--out FILE] [--author \"Name <email>\"] [--allow DIR]… [--block DIR]… RUN_ID [AGENT…]",
		"A run's pending proposals (or the named agents') as one mbox patch for git am / git apply, one\nmessage per proposal.\nExit status: 0, 1 they conflict or one does not apply, 2 usage."},
}

// What PROPOSAL, --allow and --block mean, wherever they are taken.
const (
	proposalNote = "PROPOSAL: a proposal.json, a sandbox agent folder, or a .patch file."
	rulesNote    = `--allow: the patch may only touch files inside these workspace-relative folders; --block: nor
files in these folders, besides .agentcanvas, .git, node_modules and dist (both repeatable).`
)

// proposalUsage is the group's help: every subcommand's usage line.
func proposalUsage() string {
	var b strings.Builder
	b.WriteString("usage: agentcanvas proposal SUBCOMMAND …   (review and apply agents' edits, or send comments back)\n")
	for _, c := range proposalCommands {
		fmt.Fprintf(&b, "       agentcanvas proposal %s %s\n", c.name, c.usage)
	}
	b.WriteString(proposalNote + "\n" + rulesNote + "\n")
	fmt.Fprintf(&b, "Run '%s proposal SUBCOMMAND --help' for what one does and every flag.", invokedAs())
	return b.String()
}

func runProposal(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return groupHelp("proposal", proposalUsage(), args, stdout, stderr)
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
	}
	return groupHelp("proposal", proposalUsage(), args, stdout, stderr)
}

// newFlags makes the flags of `proposal NAME`, with the two every subcommand takes.
func newFlags(name string, stdout, stderr io.Writer) (*cmdFlags, *string, *string) {
	usage := ""
	for _, c := range proposalCommands {
		if c.name != name {
			continue
		}
		about, exit, _ := strings.Cut(c.about, "Exit status:")
		if strings.Contains(c.usage, "PROPOSAL") {
			about += proposalNote + "\n"
		}
		if strings.Contains(c.usage, "--allow") {
			about += rulesNote + "\n"
		}
		usage = "usage: agentcanvas proposal " + name + " " + c.usage + "\n" + about + "Exit status:" + exit
	}
	fs := newCmdFlags("proposal "+name, usage, stdout, stderr)
	ws := fs.String("workspace", ".", "the workspace root `DIR`")
	flow := fs.String("flow", "", "the `FLOW` name for the event log (.agentcanvas/logs/<flow>/; default: the flow that made the proposal, else "+proposal.DefaultFlow+")")
	return fs, ws, flow
}

func parseFlags(fs *cmdFlags, args []string) (int, bool) { return fs.parse(args) }

func proposalCreate(args []string, stdout, stderr io.Writer) int {
	fs, ws, flow := newFlags("create", stdout, stderr)
	runID := fs.String("run", "", "the `RUN` id")
	agent := fs.String("agent", "", "the `AGENT` id")
	notes := fs.String("notes", "", "`TEXT` for proposal.json's notes")
	testLog := fs.String("test-log", "", "a `FILE` with the output of the tests the handoff named; copied to proposal/test.log")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *runID == "" || *agent == "" || fs.NArg() != 0 {
		return fs.usageError("--run and --agent are required and no other arguments are taken")
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
	fs, ws, flow := newFlags("apply", stdout, stderr)
	check := fs.Bool("check", false, "check only; change nothing")
	var files, hunks, merge, resolve, against listFlag
	fs.Var(&files, "files", "apply only these `FILES` (comma-separated or repeated)")
	fs.Var(&hunks, "hunks", "apply only these hunks, as `PATH:N` (1-based, as 'proposal review' numbers them)")
	fs.Var(&merge, "merge", "in a file the workspace changed since, apply these hunks of its merge, as `PATH:N`")
	fs.Var(&resolve, "resolve", "settle a conflict of a merge, as `PATH:N=TAKE` (TAKE: mine, theirs, both, markers or @FILE)")
	fs.Var(&against, "against", "the workspace blob a file's merge was reviewed against, as `PATH=BLOB` (review's merge.workspace)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	var confirm argvFlag // verbatim: a name may hold commas
	fs.Var(&confirm, "confirm-control", "apply this held `PATH` (a control file, or a name that looks like another), as the review names it; repeatable")
	rf := addRuleFlags(fs.FlagSet)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	rules, err := rf.rules(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "proposal apply: %v\n", err)
		return exitUsage
	}
	if fs.NArg() != 1 {
		return fs.usageError("exactly one PROPOSAL is required")
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
	fs, ws, flow := newFlags("review", stdout, stderr)
	record := fs.Bool("record", false, "append a proposal_reviewed event")
	asJSON := fs.Bool("json", false, "print the review data as JSON (for tools) instead of the diff")
	rf := addRuleFlags(fs.FlagSet)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	rules, err := rf.rules(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "proposal review: %v\n", err)
		return exitUsage
	}
	if fs.NArg() != 1 {
		return fs.usageError("exactly one PROPOSAL is required")
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
	fs, ws, flow := newFlags("reject", stdout, stderr)
	reason := fs.String("reason", "", "why it was rejected, as `TEXT`")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fs.usageError("exactly one PROPOSAL is required")
	}
	if !recoverFirst(*ws, stderr) {
		return exitFail
	}
	if err := proposal.Reject(*ws, fs.Arg(0), *reason, *flow); err != nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return exitFail
	}
	fmt.Fprintln(stdout, "rejected: nothing in the workspace changed; proposal list shows it as rejected")
	return exitOK
}

func proposalList(args []string, stdout, stderr io.Writer) int {
	fs, ws, _ := newFlags("list", stdout, stderr)
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
