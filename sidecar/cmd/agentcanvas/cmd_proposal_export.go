package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// proposal export: a run's proposals as one patch (docs/proposals.md, Exporting a run).
func proposalExport(args []string, stdout, stderr io.Writer) int {
	fs, ws, _ := newFlags("export", stdout, stderr)
	out := fs.String("out", "", "write the patch to `FILE` (atomically) instead of stdout")
	author := fs.String("author", "", "the `\"Name <email>\"` of every message (default: each proposal's agent)")
	rf := addRuleFlags(fs.FlagSet)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 {
		return fs.usageError("a RUN_ID is required (then, optionally, the agents whose proposals to export)")
	}
	rules, err := rf.rules(*ws)
	if err != nil {
		fmt.Fprintf(stderr, "proposal export: %v\n", err)
		return exitUsage
	}
	runID := fs.Arg(0)
	ctx, cancel := signalContext()
	defer cancel()
	ex, err := proposal.Export(ctx, *ws, runID, proposal.ExportOptions{Agents: fs.Args()[1:], Rules: rules, Author: *author})
	if err != nil {
		var conflict *proposal.ConflictError
		var refused *proposal.RefusedError
		switch {
		case errors.As(err, &conflict):
			fmt.Fprintf(stderr, "proposal export: run %s: %v\n", runID, err)
			fmt.Fprintf(stderr, "nothing was written. Export the proposals one at a time (%s proposal export --workspace %s %s AGENT), or apply one and run the flow again for the other.\n", invokedAs(), shellQuote(*ws), runID)
		case errors.As(err, &refused):
			for _, p := range refused.Problems {
				fmt.Fprintf(stderr, "refused: %s\n", p)
			}
			fmt.Fprintln(stderr, "nothing was written.")
		default:
			fmt.Fprintf(stderr, "proposal export: %v\n", err)
		}
		return exitFail
	}
	for _, s := range ex.Skipped {
		fmt.Fprintf(stderr, "left out: %s\n", s)
	}
	if len(ex.Proposals) == 0 {
		fmt.Fprintf(stderr, "proposal export: run %s has no pending proposal: nothing to export\n", runID)
	}
	for _, p := range ex.Proposals {
		add, del := 0, 0
		for _, f := range p.Files {
			add, del = add+f.Added, del+f.Deleted
		}
		fmt.Fprintf(stderr, "exported: %s (%d file(s), +%d -%d) %s\n", p.Agent, len(p.Files), add, del, p.Proposal)
		for _, h := range p.Held {
			fmt.Fprintf(stderr, "  held: %s: %s (named in its commit message: confirm it before merging)\n", h.Shown, h.Reason)
		}
	}
	if *out != "" {
		if err := writeFileAtomic(*out, ex.Patch); err != nil {
			fmt.Fprintf(stderr, "proposal export: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	if _, err := io.WriteString(stdout, terminalText(stdout, string(ex.Patch))); err != nil {
		fmt.Fprintf(stderr, "proposal export: %v\n", err)
		return exitUsage
	}
	return exitOK
}
