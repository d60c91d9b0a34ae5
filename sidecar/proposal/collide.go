package proposal

// Collisions between open proposals, seen before anything is applied: two workers of one
// workspace (in one run or in two) that change the same lines of a file, lines next to each
// other, a file one deletes and the other edits, or a path both add. The rule is the merge's
// (merge.go): changes that overlap or touch conflict unless they are the same change, so what
// is reported here is what the three-way merge will ask the person to resolve once one of the
// two is applied.

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// LineRange is lines of a file: Start is 1-based; Count 0 is an insertion before line Start.
type LineRange struct {
	Start int `json:"start"`
	Count int `json:"count"`
}

func (r LineRange) String() string {
	switch r.Count {
	case 0:
		return fmt.Sprintf("an insertion before line %d", r.Start)
	case 1:
		return fmt.Sprintf("line %d", r.Start)
	}
	return fmt.Sprintf("lines %d–%d", r.Start, r.Start+r.Count-1)
}

// Collision kinds.
const (
	CollideLines      = "lines"       // overlapping or adjacent changed lines
	CollideDeleteEdit = "delete-edit" // this proposal deletes a file the other edits
	CollideEditDelete = "edit-delete" // this proposal edits a file the other deletes
	CollideBothAdd    = "both-add"    // both add the path, with different content
	CollideWholeFile  = "whole-file"  // binary, symlink or mode changes, or the two saw the file differently
)

// Collision is one place where this proposal and another open one change the same part of a
// file. Lines are in this proposal's input/ version of the file, OtherLines in the other's.
type Collision struct {
	Path         string    `json:"path"`
	Kind         string    `json:"kind"`
	Lines        LineRange `json:"lines"`
	OtherRunID   string    `json:"otherRunId"`
	OtherAgentID string    `json:"otherAgentId"`
	OtherLines   LineRange `json:"otherLines"`
	// Hunk is the review hunk of this proposal that holds Lines (0 when not known).
	Hunk    int    `json:"hunk,omitempty"`
	Message string `json:"message"`
}

// sandboxProposal is a proposal read for comparison: the status of each changed path and,
// read on demand, its input/ and work/ versions.
type sandboxProposal struct {
	runID, agentID string
	agentDir       string // workspace-relative
	files          map[string]string
	root           *os.Root
	d              *dirs
	cache          map[string][2]side
}

func openSandboxProposal(workspace string, s Summary) (*sandboxProposal, error) {
	root, err := os.OpenRoot(filepath.Join(workspace, filepath.FromSlash(s.AgentDir)))
	if err != nil {
		return nil, err
	}
	p := &sandboxProposal{runID: s.RunID, agentID: s.AgentID, agentDir: s.AgentDir, files: map[string]string{}, root: root, d: newDirs(root), cache: map[string][2]side{}}
	for _, c := range s.ChangedFiles {
		p.files[c.Path] = c.Status
	}
	return p, nil
}

func (p *sandboxProposal) close() {
	p.d.close()
	p.root.Close()
}

// versions returns the input/ and work/ versions of a path (through per-folder handles, so a
// symlink in the sandbox cannot lead the read elsewhere).
func (p *sandboxProposal) versions(name string) (in, work side, err error) {
	if v, ok := p.cache[name]; ok {
		return v[0], v[1], nil
	}
	if in, err = readSideAt(p.d, path.Join("input", name)); err != nil {
		return in, work, err
	}
	if work, err = readSideAt(p.d, path.Join("work", name)); err != nil {
		return in, work, err
	}
	p.cache[name] = [2]side{in, work}
	return in, work, nil
}

// openProposals lists the pending proposals of the workspace (every run), opened for
// comparison; close them when done.
func openProposals(workspace string) ([]*sandboxProposal, []Summary, error) {
	all, err := list(workspace)
	if err != nil {
		return nil, nil, err
	}
	var out []*sandboxProposal
	var sums []Summary
	for _, s := range all {
		if s.State != "pending" || s.Error != "" {
			continue
		}
		p, err := openSandboxProposal(workspace, s)
		if err != nil {
			continue // vanished meanwhile
		}
		out = append(out, p)
		sums = append(sums, s)
	}
	return out, sums, nil
}

// collide compares a with b: every place where their changes collide, from a's side.
func collide(a, b *sandboxProposal) []Collision {
	var out []Collision
	paths := make([]string, 0, len(a.files))
	for p := range a.files {
		if _, ok := b.files[p]; ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		aIn, aWork, err1 := a.versions(p)
		bIn, bWork, err2 := b.versions(p)
		if err1 != nil || err2 != nil {
			continue // an unreadable sandbox file: the proposal's own check names it
		}
		whole := func(kind, why string) {
			out = append(out, Collision{Path: p, Kind: kind, Lines: wholeRange(aIn, aWork), OtherRunID: b.runID, OtherAgentID: b.agentID,
				OtherLines: wholeRange(bIn, bWork), Message: fmt.Sprintf("%s %s (run %s)", why, b.agentID, b.runID)})
		}
		aSt, bSt := a.files[p], b.files[p]
		switch {
		case aWork.equal(bWork):
			// the same result (both delete it, or write the same content): nothing to resolve
		case aSt == "deleted":
			whole(CollideDeleteEdit, "deletes the file, which is edited by")
		case bSt == "deleted":
			whole(CollideEditDelete, "edits the file, which is deleted by")
		case aSt == "added" && bSt == "added":
			whole(CollideBothAdd, "adds the file, which is also added (differently) by")
		case aSt == "added" || bSt == "added" || !aIn.text() || !aWork.text() || !bIn.text() || !bWork.text():
			whole(CollideWholeFile, "changes the whole file, as does")
		case aIn.mode != aWork.mode && bIn.mode != bWork.mode && aWork.mode != bWork.mode:
			whole(CollideWholeFile, "sets the file's mode differently from")
		default:
			out = append(out, collideLines(p, aIn, aWork, bIn, bWork, b)...)
		}
	}
	return out
}

func wholeRange(in, work side) LineRange {
	n := len(splitLines(in.data))
	if !in.exists {
		n = len(splitLines(work.data))
	}
	return LineRange{Start: 1, Count: n}
}

// collideLines compares the changed lines of two edits of a text file. When the two started
// from different versions of it, b's lines are placed in a's version by aligning the two.
func collideLines(p string, aIn, aWork, bIn, bWork side, b *sandboxProposal) []Collision {
	aBase, bBase := splitLines(aIn.data), splitLines(bIn.data)
	aNew, bNew := splitLines(aWork.data), splitLines(bWork.data)
	ra := lineChanges(diffLines(aBase, aNew))
	rb := lineChanges(diffLines(bBase, bNew))
	at := identityPositions(len(bBase))
	if !aIn.equal(bIn) {
		at = alignPositions(bBase, aBase)
	}
	var out []Collision
	for _, x := range ra {
		for _, y := range rb {
			ys, ye := at[y.a], at[y.a+y.na]
			if !(x.a <= ye && ys <= x.a+x.na) {
				continue // at least one untouched line between them
			}
			if x.a == ys && x.na == ye-ys && equalLines(aNew[x.b:x.b+x.nb], bNew[y.b:y.b+y.nb]) {
				continue // the same change
			}
			mine, theirs := LineRange{x.a + 1, x.na}, LineRange{y.a + 1, y.na}
			rel := "overlaps"
			if x.a == ye || ys == x.a+x.na {
				rel = "is next to"
			}
			out = append(out, Collision{Path: p, Kind: CollideLines, Lines: mine, OtherRunID: b.runID, OtherAgentID: b.agentID, OtherLines: theirs,
				Message: fmt.Sprintf("%s %s %s changed by %s (run %s)", capitalise(mine.String()), rel, theirs, b.agentID, b.runID)})
		}
	}
	return out
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func identityPositions(n int) []int {
	at := make([]int, n+1)
	for i := range at {
		at[i] = i
	}
	return at
}

// alignPositions maps every position (the boundary before each line, and the end) of from to
// the matching position of to, through a line diff: a line both have maps to its copy; a line
// only from has maps to where it would be in to.
func alignPositions(from, to []string) []int {
	at := make([]int, len(from)+1)
	for _, e := range diffLines(from, to) {
		if e.kind != '+' {
			at[e.a] = e.b
		}
	}
	at[len(from)] = len(to)
	return at
}

// findCollisions compares the proposal in agentDir (workspace-relative) with every other open
// proposal of the workspace.
func findCollisions(workspace string, self Summary) ([]Collision, error) {
	others, sums, err := openProposals(workspace)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, o := range others {
			o.close()
		}
	}()
	me, err := openSandboxProposal(workspace, self)
	if err != nil {
		return nil, err
	}
	defer me.close()
	// Oldest first: the messages read in the order the proposals were made.
	idx := make([]int, len(others))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := sums[idx[i]], sums[idx[j]]
		if a.CreatedAt != b.CreatedAt {
			return a.CreatedAt < b.CreatedAt
		}
		return a.AgentDir < b.AgentDir
	})
	out := []Collision{}
	for _, i := range idx {
		o := others[i]
		if sums[i].AgentDir == self.AgentDir {
			continue
		}
		out = append(out, collide(me, o)...)
	}
	return out, nil
}

// summaryOf describes a loaded proposal as List does (workspace-relative folder).
func summaryOf(workspace string, l *Loaded) (Summary, bool) {
	if l.Proposal == nil || l.AgentDir == "" {
		return Summary{}, false
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return Summary{}, false
	}
	rel, err := filepath.Rel(abs, l.AgentDir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return Summary{}, false
	}
	return Summary{RunID: l.Proposal.RunID, AgentID: l.Proposal.AgentID, AgentDir: filepath.ToSlash(rel), ChangedFiles: l.Proposal.ChangedFiles, State: "pending"}, true
}

// CollisionEvents groups collisions by the other proposal and file, one proposal_conflict event
// each: both agents and runs, the file, and every pair of line ranges.
func CollisionEvents(cs []Collision) []map[string]any {
	type key struct{ run, agent, path string }
	var order []key
	groups := map[key][]Collision{}
	for _, c := range cs {
		k := key{c.OtherRunID, c.OtherAgentID, c.Path}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	var out []map[string]any
	for _, k := range order {
		g := groups[k]
		ranges := make([]map[string]any, 0, len(g))
		msgs := make([]string, 0, len(g))
		for _, c := range g {
			ranges = append(ranges, map[string]any{"lines": c.Lines, "otherLines": c.OtherLines})
			msgs = append(msgs, c.Message)
		}
		out = append(out, map[string]any{"otherRunId": k.run, "otherAgentId": k.agent, "path": k.path, "kind": g[0].Kind,
			"ranges": ranges, "message": k.path + ": " + strings.Join(msgs, "; ")})
	}
	return out
}

// ProposalRef names another proposal: its run and agent.
type ProposalRef struct {
	RunID   string `json:"runId"`
	AgentID string `json:"agentId"`
	// Files are the paths where the two collide.
	Files []string `json:"files,omitempty"`
}

// orderOpen fills Conflicts and Order of the pending summaries: each proposal's collisions with
// the others, and a suggested order of applying them, the one that conflicts least first (the
// oldest first among equals): applied in that order, the fewest proposals need their
// conflicts resolved.
func orderOpen(workspace string, sums []Summary) {
	var idx []int
	var open []*sandboxProposal
	for i, s := range sums {
		if s.State != "pending" || s.Error != "" {
			continue
		}
		p, err := openSandboxProposal(workspace, s)
		if err != nil {
			continue
		}
		idx = append(idx, i)
		open = append(open, p)
	}
	defer func() {
		for _, p := range open {
			p.close()
		}
	}()
	count := make([]int, len(open))
	for a := range open {
		sums[idx[a]].Conflicts = []ProposalRef{}
		for b := range open {
			if a == b {
				continue
			}
			cs := collide(open[a], open[b])
			if len(cs) == 0 {
				continue
			}
			ref := ProposalRef{RunID: open[b].runID, AgentID: open[b].agentID}
			for _, c := range cs {
				if !slices.Contains(ref.Files, c.Path) {
					ref.Files = append(ref.Files, c.Path)
				}
			}
			sums[idx[a]].Conflicts = append(sums[idx[a]].Conflicts, ref)
			count[a] += len(cs)
		}
	}
	rank := make([]int, len(open))
	for i := range rank {
		rank[i] = i
	}
	sort.SliceStable(rank, func(i, j int) bool {
		a, b := rank[i], rank[j]
		ca, cb := len(sums[idx[a]].Conflicts), len(sums[idx[b]].Conflicts)
		if ca != cb {
			return ca < cb
		}
		if count[a] != count[b] {
			return count[a] < count[b]
		}
		return sums[idx[a]].CreatedAt < sums[idx[b]].CreatedAt
	})
	for n, a := range rank {
		sums[idx[a]].Order = n + 1
	}
}
