package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
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
	printHeadline(w, p, rv)
	if pr := rv.Proposal; pr != nil {
		fmt.Fprintf(w, "proposal of %s, run %s, made %s from %s\n", p.paint("1", termsafe.Line(pr.AgentID)), termsafe.Line(pr.RunID), termsafe.Line(pr.CreatedAt), termsafe.Line(shortHead(pr.Base.GitHead)))
		if n := strings.TrimSpace(pr.Notes); n != "" {
			fmt.Fprintf(w, "notes: %s\n", strings.ReplaceAll(termsafe.Text(n), "\n", "\n       "))
		}
	} else {
		fmt.Fprintf(w, "patch %s\n", termsafe.Line(rv.PatchFile))
	}
	if rv.Applicable {
		fmt.Fprintln(w, p.paint("32", "✓ applies to the workspace as it is now"))
	} else {
		fmt.Fprintln(w, p.paint("31", "✗ does not apply to the workspace as it is now:"))
		for _, pb := range rv.Problems {
			fmt.Fprintf(w, "  %s\n", termsafe.Line(pb.String()))
		}
	}
	printHeld(w, p, rv.Held)
	printTests(w, p, rv.Tests)
	for _, m := range rv.Merged {
		fmt.Fprintf(w, "%s %s changed in the workspace since: merged (see --json's files[].merge)\n", p.paint("33", "!"), termsafe.Line(m))
	}
	for _, c := range rv.Collisions {
		fmt.Fprintf(w, "%s collides with %s (run %s) in %s: %s\n", p.paint("33", "!"), termsafe.Line(c.OtherAgentID), termsafe.Line(c.OtherRunID), proposal.ShowName(c.Path), termsafe.Line(c.Message))
	}
	for _, wn := range rv.Warnings {
		fmt.Fprintf(w, "%s %s\n", p.paint("33", "!"), termsafe.Line(wn))
	}
	for _, f := range rv.Files {
		printReviewFile(w, p, f)
	}
	if rv.Applicable {
		fmt.Fprintf(w, "\napply it: %s proposal apply --workspace . %s%s\n", invokedAs(), confirmFlags(rv.Held), shellQuote(ref))
	}
}

// printHeadline is the review's first line when something must be seen before anything else:
// failed tests, files held for a person's confirmation.
func printHeadline(w io.Writer, p painter, rv *proposal.Review) {
	if f := rv.Tests.FirstFailure(); f != nil {
		fmt.Fprintln(w, p.paint("1;31", "✗ TESTS FAILED: "+testSummary(f)))
	}
	if len(rv.Held) > 0 {
		fmt.Fprintln(w, p.paint("1;33", fmt.Sprintf("⚠ HELD: changes how things run (%d file(s)); applied only when you confirm each by name", len(rv.Held))))
	}
}

// printHeld lists the held files with why, names shown escaped.
func printHeld(w io.Writer, p painter, held []proposal.Hold) {
	for _, h := range held {
		what := "changes how things run"
		if h.Kind == proposal.HoldName {
			what = "its name deceives"
		}
		fmt.Fprintf(w, "%s %s %s: %s\n", p.paint("33", "⚠"), h.Shown, what, termsafe.Line(h.Reason))
	}
}

// printTests gives the last test and verify results: the command, its exit status and the
// failing lines.
func printTests(w io.Writer, p painter, t *proposal.Tests) {
	if t == nil {
		return
	}
	for _, r := range t.Results {
		stale := ""
		if !r.Current {
			stale = " (on an earlier version of this proposal)"
		}
		if r.Passed {
			fmt.Fprintf(w, "%s %s passed: %s%s\n", p.paint("32", "✓"), r.Kind, termsafe.Line(strings.Join(r.Command, " ")), stale)
			continue
		}
		fmt.Fprintf(w, "%s %s failed: %s%s\n", p.paint("31", "✗"), r.Kind, termsafe.Line(testSummary(&r)), stale)
		for _, l := range r.Failing {
			fmt.Fprintf(w, "    %s\n", termsafe.Line(l))
		}
	}
	if len(t.Results) == 0 && t.Log != "" {
		fmt.Fprintln(w, "! a test log is attached (proposal/test.log) without an exit status: read it before applying")
	}
}

// testSummary is a failed result in a few words: the command and how it ended.
func testSummary(r *proposal.TestResult) string {
	how := fmt.Sprintf("exited %d", r.ExitCode)
	if r.Error != "" {
		how = "could not run: " + r.Error
	}
	return termsafe.Line(strings.Join(r.Command, " ")) + " " + how
}

// confirmFlags are the --confirm-control flags an apply of these holds needs, each naming the
// file as shown (look-alike letters escaped), which apply takes as well as the name itself.
func confirmFlags(held []proposal.Hold) string {
	var b strings.Builder
	for _, h := range held {
		b.WriteString("--confirm-control " + shellQuote(h.Shown) + " ")
	}
	return b.String()
}

func printReviewFile(w io.Writer, p painter, f proposal.ReviewFile) {
	name := proposal.ShowName(f.Path)
	if f.OldPath != "" && f.OldPath != f.Path {
		name = proposal.ShowName(f.OldPath) + " → " + name
	}
	fmt.Fprintf(w, "\n%s\n", p.paint("1", fmt.Sprintf("── %s (%s, +%d -%d)", name, f.Status, f.Added, f.Deleted)))
	switch {
	case f.Binary:
		fmt.Fprintln(w, "   (binary file)")
	case f.Symlink:
		fmt.Fprintln(w, "   (symbolic link)")
	}
	width := lineNumberWidth(f)
	for _, h := range f.Hunks {
		fmt.Fprintln(w, p.paint("36", h.Header))
		for _, l := range h.Lines {
			code := map[string]string{"+": "32", "-": "31"}[l.Kind]
			fmt.Fprintf(w, "%s %s\n", p.paint("2", lineNumbers(l, width)), p.paint(code, l.Kind+reviewText(l.Text)))
			if l.NoEOL {
				fmt.Fprintln(w, strings.Repeat(" ", 2*width+2)+`\ No newline at end of file`)
			}
		}
	}
}

// lineNumbers are a review line's numbers in the file before and after ("  12   13 "), the
// new one being what request-changes --comment PATH:LINE takes.
func lineNumbers(l proposal.ReviewLine, width int) string {
	num := func(n int64) string {
		if n == 0 {
			return strings.Repeat(" ", width)
		}
		return fmt.Sprintf("%*d", width, n)
	}
	return num(l.OldLine) + " " + num(l.NewLine)
}

func lineNumberWidth(f proposal.ReviewFile) int {
	most := int64(1)
	for _, h := range f.Hunks {
		most = max(most, h.OldStart+h.OldLines, h.NewStart+h.NewLines)
	}
	return len(fmt.Sprint(most))
}

// maxReviewLine is how much of one line the text review shows; the rest is said, not hidden
// off the right edge (a line padded with spaces can push code out of sight).
const maxReviewLine = 400

// reviewText is a line of a file as the review prints it: escapes made visible (tabs kept),
// a long run of blanks between text shown as a count, and an overlong line cut with its
// length said.
func reviewText(s string) string {
	s = termsafe.Text(s) // one line: Text keeps its tabs, and it has no newline
	if locs := blankRun.FindAllStringIndex(s, -1); len(locs) > 0 {
		var b strings.Builder
		last := 0
		for _, l := range locs {
			if l[0] == 0 || l[1] == len(s) {
				continue // indentation, or blanks at the end: they hide nothing
			}
			fmt.Fprintf(&b, "%s ⟨%d blanks⟩ ", s[last:l[0]], l[1]-l[0])
			last = l[1]
		}
		s = b.String() + s[last:]
	}
	if r := []rune(s); len(r) > maxReviewLine {
		return string(r[:maxReviewLine]) + fmt.Sprintf(" ⟨… %d more characters: proposal review --json shows the whole line⟩", len(r)-maxReviewLine)
	}
	return s
}

// blankRun is a run of blanks long enough to push what follows out of sight, after some text.
var blankRun = regexp.MustCompile(`[ \t]{40,}`)

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
			files = append(files, proposal.ShowName(c.Path)+" ("+termsafe.Line(c.Status)+")")
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
		who := p.paint("1", termsafe.Line(s.AgentID))
		if s.Revision > 1 {
			who += fmt.Sprintf(" (revision %d)", s.Revision)
		}
		fmt.Fprintf(w, "%s  %s  %s: %s\n", p.paint(colour[s.State], termsafe.Line(state)), termsafe.Line(s.RunID), who, firstNonEmptyStr(what, "no files"))
		fmt.Fprintf(w, "    %s\n", termsafe.Line(s.ProposalFile))
		for _, c := range s.Conflicts {
			fmt.Fprintf(w, "    %s conflicts with %s (run %s) in %s\n", p.paint("33", "!"), termsafe.Line(c.AgentID), termsafe.Line(c.RunID), termsafe.Line(strings.Join(c.Files, ", ")))
		}
		if s.Error != "" {
			fmt.Fprintf(w, "    %s %s\n", p.paint("31", "✗"), termsafe.Line(s.Error))
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
