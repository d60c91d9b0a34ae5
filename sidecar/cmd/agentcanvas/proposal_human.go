package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/termview"
)

// How `proposal review` and `proposal list` read to a person (--json keeps the machine
// format): the review as a diff, coloured on a terminal; the list as one line a proposal.

// painter colours text with an ANSI code, or not at all (off a terminal, NO_COLOR).
type painter bool

func painterFor(w io.Writer) painter { return painter(termview.ModeFor(w).Color) }

func (p painter) paint(code, s string) string {
	if !p || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func printReview(w io.Writer, rv *proposal.Review, ref string) {
	p := painterFor(w)
	if pr := rv.Proposal; pr != nil {
		fmt.Fprintf(w, "proposal of %s, run %s, made %s from %s\n", p.paint("1", pr.AgentID), pr.RunID, pr.CreatedAt, shortHead(pr.Base.GitHead))
		if n := strings.TrimSpace(pr.Notes); n != "" {
			fmt.Fprintf(w, "notes: %s\n", strings.ReplaceAll(n, "\n", "\n       "))
		}
	} else {
		fmt.Fprintf(w, "patch %s\n", rv.PatchFile)
	}
	if rv.Applicable {
		fmt.Fprintln(w, p.paint("32", "✓ applies to the workspace as it is now"))
	} else {
		fmt.Fprintln(w, p.paint("31", "✗ does not apply to the workspace as it is now:"))
		for _, pb := range rv.Problems {
			fmt.Fprintf(w, "  %s\n", pb.String())
		}
	}
	for _, m := range rv.Merged {
		fmt.Fprintf(w, "%s %s changed in the workspace since: merged (see --json's files[].merge)\n", p.paint("33", "!"), m)
	}
	for _, c := range rv.Collisions {
		fmt.Fprintf(w, "%s collides with %s (run %s) in %s: %s\n", p.paint("33", "!"), c.OtherAgentID, c.OtherRunID, c.Path, c.Message)
	}
	for _, wn := range rv.Warnings {
		fmt.Fprintf(w, "%s %s\n", p.paint("33", "!"), wn)
	}
	for _, f := range rv.Files {
		printReviewFile(w, p, f)
	}
	if rv.Applicable {
		fmt.Fprintf(w, "\napply it: %s proposal apply --workspace . %s\n", invokedAs(), shellQuote(ref))
	}
}

func printReviewFile(w io.Writer, p painter, f proposal.ReviewFile) {
	name := f.Path
	if f.OldPath != "" && f.OldPath != f.Path {
		name = f.OldPath + " → " + f.Path
	}
	fmt.Fprintf(w, "\n%s\n", p.paint("1", fmt.Sprintf("── %s (%s, +%d -%d)", name, f.Status, f.Added, f.Deleted)))
	switch {
	case f.Binary:
		fmt.Fprintln(w, "   (binary file)")
	case f.Symlink:
		fmt.Fprintln(w, "   (symbolic link)")
	}
	for _, h := range f.Hunks {
		fmt.Fprintln(w, p.paint("36", h.Header))
		for _, l := range h.Lines {
			code := map[string]string{"+": "32", "-": "31"}[l.Kind]
			fmt.Fprintln(w, p.paint(code, l.Kind+l.Text))
			if l.NoEOL {
				fmt.Fprintln(w, `\ No newline at end of file`)
			}
		}
	}
}

func shortHead(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "a folder without git history"
	}
	return h
}

func printList(w io.Writer, list []proposal.Summary) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no proposals in this workspace")
		return
	}
	p := painterFor(w)
	colour := map[string]string{"pending": "33", "applied": "32", "rejected": "2", "reverted": "2"}
	pending := 0
	for _, s := range list {
		files := make([]string, 0, len(s.ChangedFiles))
		for _, c := range s.ChangedFiles {
			files = append(files, c.Path+" ("+c.Status+")")
		}
		what := strings.Join(files, ", ")
		if len(files) > 3 {
			what = strings.Join(files[:3], ", ") + fmt.Sprintf(" and %d more", len(files)-3)
		}
		state := s.State
		if s.State == "pending" {
			pending++
			if s.Order > 0 {
				state += fmt.Sprintf(" (apply %s)", ordinal(s.Order))
			}
		}
		who := p.paint("1", s.AgentID)
		if s.Revision > 1 {
			who += fmt.Sprintf(" (revision %d)", s.Revision)
		}
		fmt.Fprintf(w, "%s  %s  %s: %s\n", p.paint(colour[s.State], state), s.RunID, who, firstNonEmptyStr(what, "no files"))
		fmt.Fprintf(w, "    %s\n", s.ProposalFile)
		for _, c := range s.Conflicts {
			fmt.Fprintf(w, "    %s conflicts with %s (run %s) in %s\n", p.paint("33", "!"), c.AgentID, c.RunID, strings.Join(c.Files, ", "))
		}
		if s.Error != "" {
			fmt.Fprintf(w, "    %s %s\n", p.paint("31", "✗"), s.Error)
		}
	}
	if pending > 0 {
		fmt.Fprintf(w, "review one: %s proposal review --workspace . PROPOSAL\n", invokedAs())
	}
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}
