package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

func init() {
	register(&command{
		name:    "patterns",
		summary: "list the 20 interaction patterns (--json for machines)",
		run:     runPatterns,
	})
}

// patternRole and patternEntry are the JSON shape of `agentcanvas patterns --json` (DESIGN.md
// command line contract: {id, patternId, name, topology, roles, defaultTermination}).
type patternRole struct {
	Role        string `json:"role"`
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	SystemType  string `json:"systemType,omitempty"`
	Count       int    `json:"count"`
	MinCount    int    `json:"minCount"`
	Description string `json:"description"`
}

type patternEntry struct {
	ID                 string              `json:"id"`
	PatternID          string              `json:"patternId"`
	Name               string              `json:"name"`
	Topology           string              `json:"topology"`
	Roles              []patternRole       `json:"roles"`
	DefaultTermination pattern.Termination `json:"defaultTermination"`
}

func runPatterns(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newCmdFlags("patterns", `usage: agentcanvas patterns [--json]
Lists the 20 interaction patterns: id, name, topology, roles and default termination.
Exit status: 0.`, stdout, stderr)
	asJSON := fs.Bool("json", false, "print one JSON array instead of a table")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fs.usageError("unexpected argument %q", fs.Arg(0))
	}
	if err := pattern.Err(); err != nil {
		fmt.Fprintf(stderr, "agentcanvas patterns: the built-in pattern library is broken (a bug): %v\n", err)
		return exitFail
	}
	all := pattern.All()
	if *asJSON {
		entries := make([]patternEntry, len(all))
		for i, p := range all {
			e := patternEntry{ID: p.ID, PatternID: p.PatternID, Name: p.Name, Topology: p.Topology, DefaultTermination: p.DefaultTermination}
			for _, r := range p.Roles {
				e.Roles = append(e.Roles, patternRole{r.Role, r.Name, r.Kind, r.SystemType, r.Count, r.MinCount, r.Description})
			}
			entries[i] = e
		}
		out, err := json.MarshalIndent(entries, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas patterns: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "%s\n", out)
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPATTERN\tNAME\tTOPOLOGY\tROLES\tDEFAULT TERMINATION")
	for _, p := range all {
		roles := make([]string, len(p.Roles))
		for i, r := range p.Roles {
			roles[i] = r.Role
			if r.Kind == "system" {
				roles[i] += "*"
			}
			if r.Count > 1 {
				roles[i] += fmt.Sprintf("×%d", r.Count)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.PatternID, p.Name, p.Topology, strings.Join(roles, ", "), p.DefaultTermination)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\n* system node   ×N default count   details: docs/patterns.md, patterns/<ID>-<patternId>.md")
	return exitOK
}
