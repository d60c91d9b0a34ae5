package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// proposalCompare is `proposal interdiff A B`: what differs between the files proposal A leaves
// and those proposal B leaves, or, for two runs (a run and its fork), the same agent by agent.
func proposalCompare(ws, a, b string, asJSON, revisions bool, stdout, stderr io.Writer) int {
	if revisions {
		fmt.Fprintln(stderr, "agentcanvas proposal interdiff: --from and --to go with one PROPOSAL (its revisions), not two")
		return exitUsage
	}
	var out any
	var err error
	if isRun(ws, a) && isRun(ws, b) {
		var cs []proposal.Comparison
		if cs, err = proposal.CompareRuns(ws, a, b); err == nil {
			out = cs
			if !asJSON {
				printRunComparison(stdout, a, b, cs)
			}
		}
	} else {
		var c *proposal.Comparison
		if c, err = proposal.CompareProposals(ws, a, b); err == nil {
			out = c
			if !asJSON {
				io.WriteString(stdout, c.Patch)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas proposal interdiff: %v\n", err)
		return exitFail
	}
	if asJSON {
		printJSON(stdout, out)
	}
	return exitOK
}

// isRun: name is a run id of the workspace (a folder of its runs or sandboxes).
func isRun(ws, name string) bool {
	if sandbox.ValidateRunID(name) != nil {
		return false
	}
	for _, dir := range []string{engine.RunsDir, sandbox.Dir} {
		if st, err := os.Stat(filepath.Join(ws, filepath.FromSlash(dir), name)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

func printRunComparison(w io.Writer, a, b string, cs []proposal.Comparison) {
	for _, c := range cs {
		switch {
		case len(c.Files) == 0:
			fmt.Fprintf(w, "# %s: the same in run %s and run %s\n", c.Agent, a, b)
			continue
		case c.A == "":
			fmt.Fprintf(w, "# %s: no proposal in run %s; in run %s:\n", c.Agent, a, b)
		case c.B == "":
			fmt.Fprintf(w, "# %s: no proposal in run %s; from run %s's:\n", c.Agent, b, a)
		default:
			fmt.Fprintf(w, "# %s: from run %s's proposal to run %s's\n", c.Agent, a, b)
		}
		io.WriteString(w, c.Patch)
	}
}
