package proposal

// Export: the proposals of one run as one patch a CI job can commit, in the mbox format of
// `git format-patch` — one message per proposal, in the order they were made, each with the
// agent as its author, its notes as the commit message and its diff — which `git am` turns into
// one commit per proposal and `git apply` applies as a whole.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"mime"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// ExportOptions for Export.
type ExportOptions struct {
	// Agents, when not empty, are the agents whose proposals are exported; each must have a
	// pending proposal in the run. Empty: every pending proposal of the run.
	Agents []string
	// Rules are the person's allowed and blocked folders, as for apply.
	Rules safepath.Rules
	// Author ("Name <email>") signs every message; empty: each agent signs its own, as
	// "<agent> (AgentCanvas) <agent@agentcanvas.invalid>".
	Author string
}

// Exported is the combined patch and what went into it.
type Exported struct {
	RunID     string             `json:"runId"`
	Patch     []byte             `json:"-"` // empty when there was nothing to export
	Proposals []ExportedProposal `json:"proposals"`
	Skipped   []string           `json:"skipped,omitempty"` // proposals left out, and why
}

// ExportedProposal is one message of the patch.
type ExportedProposal struct {
	Agent    string     `json:"agent"`
	Proposal string     `json:"proposal"` // workspace-relative proposal.json
	Files    []FileStat `json:"files"`
	// Held are its files that change how things run (holds.go): exported, and named in its
	// commit message, for the person who merges it to confirm.
	Held []Hold `json:"held,omitempty"`
}

var authorRE = regexp.MustCompile(`^[^<>\n]+ <[^<>\s@]+@[^<>\s@]+>$`)

// Export combines the pending proposals of a run (or of the named agents) into one patch
// that applies to the workspace as it is now. It refuses (*RefusedError) a proposal that does
// not apply to the workspace on its own, and (*ConflictError) proposals that conflict with
// each other; nothing is written anywhere.
func Export(ctx context.Context, workspace, runID string, o ExportOptions) (*Exported, error) {
	if o.Author != "" && !authorRE.MatchString(o.Author) {
		return nil, fmt.Errorf("--author %q: want \"Name <email>\"", o.Author)
	}
	all, err := List(workspace)
	if err != nil {
		return nil, err
	}
	var run []Summary
	for _, s := range all {
		if s.RunID == runID {
			run = append(run, s)
		}
	}
	if len(run) == 0 {
		return nil, fmt.Errorf("run %s has no proposals in %s/%s/", runID, ".agentcanvas/sandboxes", runID)
	}
	slices.SortStableFunc(run, func(a, b Summary) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.AgentDir, b.AgentDir))
	})

	out := &Exported{RunID: runID}
	var picked []Summary
	named := map[string]bool{} // the agents asked for, until their proposal is found
	for _, a := range o.Agents {
		named[a] = true
	}
	for _, s := range run {
		switch {
		case len(o.Agents) > 0 && !slices.Contains(o.Agents, s.AgentID):
			continue
		case s.Error != "":
			return nil, fmt.Errorf("proposal %s: %s", s.ProposalFile, s.Error)
		case s.State != "pending" && len(o.Agents) > 0:
			return nil, &RefusedError{Problems: []Problem{{Path: s.ProposalFile, Reason: fmt.Sprintf("%s's proposal is %s, not pending", s.AgentID, s.State)}}}
		case s.State != "pending":
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s (%s): %s", s.AgentID, s.ProposalFile, s.State))
			continue
		}
		delete(named, s.AgentID)
		picked = append(picked, s)
	}
	if len(named) > 0 {
		var have []string
		for _, s := range run {
			have = append(have, s.AgentID)
		}
		missing := slices.Sorted(maps.Keys(named))
		return nil, fmt.Errorf("run %s has no proposal from %s (it has proposals from %s)", runID, strings.Join(missing, ", "), strings.Join(have, ", "))
	}
	if len(picked) == 0 {
		return out, nil
	}

	ls, err := loadForExport(ctx, workspace, picked, o.Rules)
	if err != nil {
		return nil, err
	}
	agents := make([]string, len(ls))
	sets := make([]changeSet, len(ls))
	for i, x := range ls {
		agents[i], sets[i] = x.s.AgentID, x.changes
	}
	if cs := findConflicts(agents, sets); len(cs) > 0 {
		return nil, &ConflictError{Conflicts: cs}
	}

	type message struct {
		x     exportLoaded
		stats []FileStat
		diff  []byte
	}
	var msgs []message
	for i, x := range ls {
		diff, stats, err := exportDiff(ls, i)
		if err != nil {
			return nil, fmt.Errorf("%s's proposal, %w", x.s.AgentID, err)
		}
		if len(stats) == 0 {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s (%s): every change it makes is already made by the proposals before it", x.s.AgentID, x.s.ProposalFile))
			continue
		}
		msgs = append(msgs, message{x, stats, diff})
	}
	var mbox bytes.Buffer
	for n, m := range msgs {
		writeMessage(&mbox, m.x.l.Proposal, m.x.s, o.Author, n+1, len(msgs), m.stats, m.diff, m.x.held)
		out.Proposals = append(out.Proposals, ExportedProposal{Agent: m.x.s.AgentID, Proposal: m.x.s.ProposalFile, Files: m.stats, Held: m.x.held})
	}
	out.Patch = mbox.Bytes()
	return out, nil
}

// exportLoaded is a proposal an export takes: its patch's files and what it changes in the
// workspace as it is now.
type exportLoaded struct {
	s       Summary
	l       *Loaded
	files   []*gitdiff.File
	changes *planChanges
	merged  []string // files whose plan is a merge with the workspace (rebase.go)
	held    []Hold   // files that change how things run
}

// loadForExport checks that each proposal applies to the workspace on its own, with every
// safety rule, and reads what it changes there.
func loadForExport(ctx context.Context, workspace string, picked []Summary, rules safepath.Rules) ([]exportLoaded, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	d := newDirs(root)
	defer d.close()
	var ls []exportLoaded
	var refused []Problem
	for _, s := range picked {
		// Reviewing: held files are exported and named, for whoever merges the patch to confirm.
		res, err := Check(ctx, workspace, s.ProposalFile, Selection{}, ApplyOptions{Rules: rules, Reviewing: true})
		if err != nil {
			var ref *RefusedError
			if errors.As(err, &ref) && res != nil {
				for _, p := range res.Problems {
					refused = append(refused, Problem{Path: p.Path, Reason: fmt.Sprintf("%s's proposal does not apply to the workspace: %s", s.AgentID, p.Reason)})
				}
				continue
			}
			return nil, err
		}
		l, err := Load(workspace, s.ProposalFile)
		if err != nil {
			return nil, err
		}
		if why, _ := patchChanged(l, ""); why != "" {
			refused = append(refused, Problem{Reason: fmt.Sprintf("%s's proposal: %s", s.AgentID, why)})
			continue
		}
		files, probs := parsePatch(l.Patch, rules, 0)
		if len(probs) > 0 {
			return nil, &RefusedError{Problems: probs}
		}
		// The plan the check made: the patch as made, or merged with what changed since.
		var planned Result
		pl, probs := planApply(d, l, Selection{}, ApplyOptions{Rules: rules}, &planned, nil) // pending proposals only
		for _, p := range probs {
			refused = append(refused, Problem{Path: p.Path, Reason: fmt.Sprintf("%s's proposal does not apply to the workspace (it changed during the export): %s", s.AgentID, p.Reason)})
		}
		if len(probs) == 0 {
			ls = append(ls, exportLoaded{s: s, l: l, files: files, changes: changesOf(pl), merged: planned.Merged, held: res.Held})
		}
	}
	if len(refused) > 0 {
		return nil, &RefusedError{Problems: refused}
	}
	return ls, nil
}

// splitSections cuts a git patch into its files' sections ("diff --git" to the next one), in
// the order go-gitdiff parses them (parsePatch has checked the counts agree).
func splitSections(patch []byte) [][]byte {
	var out [][]byte
	start := -1
	for i := 0; i < len(patch); {
		if bytes.HasPrefix(patch[i:], []byte("diff --git ")) {
			if start >= 0 {
				out = append(out, patch[start:i])
			}
			start = i
		}
		nl := bytes.IndexByte(patch[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	if start >= 0 {
		out = append(out, patch[start:])
	}
	return out
}

// writeMessage writes one mbox message as `git format-patch` does: the "From " separator
// line, the headers, the commit message, "---", a diffstat, the diff.
func writeMessage(b *bytes.Buffer, pr *Proposal, s Summary, author string, n, total int, stats []FileStat, diff []byte, held []Hold) {
	if author == "" {
		author = fmt.Sprintf("%s (AgentCanvas) <%s@agentcanvas.invalid>", termsafe.Line(s.AgentID), mailLocal(s.AgentID))
	}
	name, addr, _ := strings.Cut(author, " <")
	date := time.Now()
	if t, err := time.Parse(timeLayout, s.CreatedAt); err == nil {
		date = t
	}
	// The message is the worker's text, which git log prints raw on the terminal of whoever
	// reads the history: what a terminal would act on is written as escapes (termsafe), as
	// every printer of agent text does. The diff below stays byte for byte.
	notes, agent := "", termsafe.Line(s.AgentID)
	if pr != nil {
		notes = termsafe.Text(strings.TrimSpace(pr.Notes))
	}
	title, body, _ := strings.Cut(notes, "\n")
	title = strings.Join(strings.Fields(title), " ")
	if title == "" || title == "<nil>" {
		title = "the proposal of run " + s.RunID
	}
	if len([]rune(title)) > 72 {
		title = string([]rune(title)[:71]) + "…"
	}
	prefix := "[PATCH]"
	if total > 1 {
		prefix = fmt.Sprintf("[PATCH %d/%d]", n, total)
	}
	fmt.Fprintf(b, "From %s Mon Sep 17 00:00:00 2001\n", zeroOID)
	fmt.Fprintf(b, "From: %s <%s\n", mime.QEncoding.Encode("UTF-8", name), addr)
	fmt.Fprintf(b, "Date: %s\n", date.Format(time.RFC1123Z))
	fmt.Fprintf(b, "Subject: %s %s\n", prefix, mime.QEncoding.Encode("UTF-8", agent+": "+title))
	b.WriteString("MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n\n")
	if body = strings.TrimSpace(body); body != "" {
		b.WriteString(messageText(body) + "\n\n")
	}
	fmt.Fprintf(b, "Proposal: %s\nRun: %s, agent %s", termsafe.Line(s.ProposalFile), termsafe.Line(s.RunID), agent)
	if s.GitHead != "" {
		fmt.Fprintf(b, ", from commit %s", s.GitHead)
	}
	if len(held) > 0 { // said where the person who merges it reads
		b.WriteString("\n\nChanges how things run (confirm each before merging):")
		for _, h := range held {
			fmt.Fprintf(b, "\n  %s: %s", h.Shown, h.Reason)
		}
	}
	b.WriteString("\n---\n")
	writeDiffstat(b, stats)
	b.WriteString("\n")
	b.Write(diff)
	if len(diff) > 0 && diff[len(diff)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("\n")
}

// messageText keeps a commit message's lines from being read as something else by git am
// (a "From " mbox separator, the "---" that ends the message, a diff header).
func messageText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "From ") || l == "---" || strings.HasPrefix(l, "diff -") || strings.HasPrefix(l, "Index: ") || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") {
			lines[i] = " " + l
		}
	}
	return strings.Join(lines, "\n")
}

// writeDiffstat writes git's --stat summary (without the graph's scaling).
func writeDiffstat(b *bytes.Buffer, stats []FileStat) {
	w := 0
	for _, s := range stats {
		w = max(w, len(s.Path))
	}
	add, del := 0, 0
	for _, s := range stats {
		if s.Binary {
			fmt.Fprintf(b, " %-*s | Bin\n", w, s.Path)
			continue
		}
		fmt.Fprintf(b, " %-*s | %d %s%s\n", w, s.Path, s.Added+s.Deleted, strings.Repeat("+", min(s.Added, 40)), strings.Repeat("-", min(s.Deleted, 40)))
		add += s.Added
		del += s.Deleted
	}
	fmt.Fprintf(b, " %d file%s changed, %d insertion%s(+), %d deletion%s(-)\n", len(stats), pl(len(stats)), add, pl(add), del, pl(del))
}

func pl(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// mailLocal makes an agent id usable as the local part of an address.
func mailLocal(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < 0x80 && (r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return cmp.Or(strings.Trim(b.String(), ".-"), "agent")
}
