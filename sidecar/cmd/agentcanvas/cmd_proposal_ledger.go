package main

// proposal revert, ledger and origins (the apply ledger), and the merge flags of apply.

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// parseMergeSelection reads --merge PATH:N, --resolve PATH:N=TAKE (TAKE @FILE: the text of
// FILE, an edit) and --against PATH=BLOB into sel.
func parseMergeSelection(sel *proposal.Selection, merge, resolve, against listFlag) error {
	var err error
	if sel.Merge, err = parseHunkRefs("--merge", merge); err != nil {
		return err
	}
	for _, r := range resolve {
		ref, take, ok := strings.Cut(r, "=")
		if !ok {
			return fmt.Errorf("--resolve %q: want PATH:N=mine|theirs|both|markers|@FILE", r)
		}
		p, n, err := parseHunkRef("--resolve", ref)
		if err != nil {
			return err
		}
		res := proposal.Resolution{Path: p, Hunk: n, Take: take}
		if file, isFile := strings.CutPrefix(take, "@"); isFile {
			b, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("--resolve %q: %v", r, err)
			}
			res.Take, res.Text = "edit", string(b)
		} else if take != "mine" && take != "theirs" && take != "both" && take != "markers" {
			return fmt.Errorf("--resolve %q: %q is not mine, theirs, both, markers or @FILE", r, take)
		}
		sel.Resolve = append(sel.Resolve, res)
	}
	for _, a := range against {
		p, blob, ok := strings.Cut(a, "=")
		if !ok || p == "" {
			return fmt.Errorf("--against %q: want PATH=BLOB", a)
		}
		if sel.Against == nil {
			sel.Against = map[string]string{}
		}
		sel.Against[p] = blob
	}
	return nil
}

func proposalRevert(args []string, stdout, stderr io.Writer) int {
	fs, ws, flow := newFlags("revert", stdout, stderr)
	check := fs.Bool("check", false, "check only; change nothing")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	rf := addRuleFlags(fs.FlagSet)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	rules, err := rf.rules(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "proposal revert: %v\n", err)
		return exitUsage
	}
	if fs.NArg() != 1 {
		return fs.usageError("exactly one ID (a ledger entry or a proposal) is required")
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "flow" })
	if !given {
		*flow = "" // the log of the flow whose run made the proposal
	}
	ctx, cancel := signalContext()
	defer cancel()
	res, err := proposal.Revert(ctx, *ws, fs.Arg(0), proposal.ApplyOptions{DryRun: *check, Flow: *flow, Rules: rules, Waiting: waitingNote(stderr)})
	return printResult(stdout, stderr, res, err, *asJSON, map[bool]string{false: "reverted", true: "would revert"}[*check])
}

func proposalLedger(args []string, stdout, stderr io.Writer) int {
	fs, ws, _ := newFlags("ledger", stdout, stderr)
	asJSON := fs.Bool("json", false, "print the ledger as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if !recoverFirst(*ws, stderr) {
		return exitFail
	}
	lg, err := proposal.ReadLedger(*ws)
	if lg == nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return exitFail
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
	}
	if *asJSON {
		printJSON(stdout, lg)
		return exitOK
	}
	w := bufio.NewWriter(stdout)
	for _, e := range lg.Entries {
		who := e.Proposal
		if e.AgentID != "" {
			who = fmt.Sprintf("%s (run %s%s)", e.AgentID, e.RunID, revisionNote(e.Revision))
		}
		var files []string
		for _, f := range e.Files {
			files = append(files, f.Status+" "+f.Path)
		}
		note := ""
		switch {
		case e.Kind == "revert":
			note = " reverts " + e.Reverts
		case lg.Reverted[e.ID] != "":
			note = " (reverted by " + lg.Reverted[e.ID] + ")"
		}
		fmt.Fprintln(w, termsafe.Line(fmt.Sprintf("%s %s %s: %s%s", e.ID, e.Kind, who, strings.Join(files, ", "), note)))
	}
	w.Flush()
	return exitOK
}

func proposalOrigins(args []string, stdout, stderr io.Writer) int {
	fs, ws, _ := newFlags("origins", stdout, stderr)
	asJSON := fs.Bool("json", false, "print the origins as JSON")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fs.usageError("exactly one FILE (workspace-relative) is required")
	}
	if !recoverFirst(*ws, stderr) {
		return exitFail
	}
	origins, err := proposal.LineOrigins(*ws, fs.Arg(0), nil)
	if err != nil && origins == nil {
		fmt.Fprintf(stderr, "agentcanvas: %v\n", err)
		return exitFail
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
	}
	if *asJSON {
		if origins == nil {
			origins = []proposal.LineOrigin{}
		}
		printJSON(stdout, origins)
		return exitOK
	}
	w := bufio.NewWriter(stdout)
	for _, o := range origins {
		line := fmt.Sprintf("%s: %s (run %s)", proposal.LineRange{Start: o.Start, Count: o.Count}, o.AgentID, o.RunID)
		if o.Origin != nil {
			line += fmt.Sprintf(", interaction %s round %d, %s", o.Origin.InteractionID, o.Origin.Round, o.Origin.Backend)
			if o.Origin.Prompt != "" {
				line += ": " + o.Origin.Prompt // the agent's prompt: made visible below
			}
		}
		fmt.Fprintln(w, termsafe.Line(line+" ["+o.Entry+"]"))
	}
	w.Flush()
	return exitOK
}

// revisionNote is ", revision N" for a proposal's revision after the first, else "".
func revisionNote(n int) string {
	if n < 2 {
		return ""
	}
	return fmt.Sprintf(", revision %d", n)
}
