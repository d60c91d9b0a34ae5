package proposal

// Collisions between open proposals, seen before anything is applied: two workers of one
// workspace (in one run or in two) that change the same lines of a file, lines next to each
// other, a file one deletes and the other edits, a path both add, or a file where the other
// puts a folder. Whether two proposals collide is decided in clash.go, the rule export uses
// too; here it is reported: as Collisions, proposal_conflict events and list's order.

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
	// CollideFileFolder and CollideFolderFile: clash.go.
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
	// OtherPath is the other proposal's path when it is not Path (a file against a folder).
	OtherPath string `json:"otherPath,omitempty"`
	// Hunk is the review hunk of this proposal that holds Lines (0 when not known).
	Hunk    int    `json:"hunk,omitempty"`
	Message string `json:"message"`
}

// sandboxProposal is a proposal read for comparison: the status of each changed path and,
// read on demand, its input/ and work/ versions.
type sandboxProposal struct {
	runID, agentID string
	flow           string // the flow whose run made it (origin.json; "" when none did)
	agentDir       string // workspace-relative
	files          map[string]string
	root           *os.Root
	d              *dirs
	cache          map[string][2]side
	changeIndex    // the changed paths, and whether it leaves something at each
}

func openSandboxProposal(workspace string, s Summary) (*sandboxProposal, error) {
	root, err := os.OpenRoot(filepath.Join(workspace, filepath.FromSlash(s.AgentDir)))
	if err != nil {
		return nil, err
	}
	p := &sandboxProposal{runID: s.RunID, agentID: s.AgentID, agentDir: s.AgentDir, files: map[string]string{}, root: root, d: newDirs(root), cache: map[string][2]side{}}
	if o := readOrigin(filepath.Join(workspace, filepath.FromSlash(s.AgentDir))); o != nil {
		p.flow = o.Flow
	}
	changes := map[string]bool{}
	for _, c := range s.ChangedFiles {
		p.files[c.Path] = c.Status
		changes[c.Path] = c.Status != "deleted"
	}
	p.changeIndex = newChangeIndex(changes)
	return p, nil
}

func (p *sandboxProposal) close() {
	p.d.close()
	p.root.Close()
}

// sides returns the input/ and work/ versions of a path (through per-folder handles, so a
// symlink in the sandbox cannot lead the read elsewhere).
func (p *sandboxProposal) sides(name string) (in, work side, err error) {
	if v, ok := p.cache[name]; ok {
		return v[0], v[1], nil
	}
	// An added path was not there before, a deleted one is not there after (a folder may be
	// in its place: a file that became a folder, or the other way round).
	if p.files[name] != "added" {
		if in, err = readSideAt(p.d, path.Join("input", name)); err != nil {
			return in, work, err
		}
	}
	if p.files[name] != "deleted" {
		if work, err = readSideAt(p.d, path.Join("work", name)); err != nil {
			return in, work, err
		}
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

// collide compares a with b: every place where their changes collide (clash.go), from a's
// side, each with a sentence naming b.
func collide(a, b *sandboxProposal) []Collision {
	cs := clashes(a, b)
	out := make([]Collision, 0, len(cs))
	for _, c := range cs {
		out = append(out, Collision{Path: c.path, Kind: c.kind, Lines: c.lines, OtherRunID: b.runID, OtherAgentID: b.agentID,
			OtherLines: c.otherLines, OtherPath: otherPath(c), Message: collisionMessage(c, b.agentID, b.runID)})
	}
	return out
}

// otherPath is the other proposal's path when it is not the collision's own.
func otherPath(c clash) string {
	if c.otherPath == c.path {
		return ""
	}
	return c.otherPath
}

// collisionMessage says what c is, from this proposal's side, naming the other.
func collisionMessage(c clash, agent, run string) string {
	by := fmt.Sprintf("%s (run %s)", agent, run)
	switch c.kind {
	case CollideLines:
		rel := "overlaps"
		if c.next {
			rel = "is next to"
		}
		return fmt.Sprintf("%s %s %s changed by %s", capitalise(c.lines.String()), rel, c.otherLines, by)
	case CollideDeleteEdit:
		return "deletes the file, which is edited by " + by
	case CollideEditDelete:
		return "edits the file, which is deleted by " + by
	case CollideBothAdd:
		return "adds the file, which is also added (differently) by " + by
	case CollideFileFolder:
		return fmt.Sprintf("keeps a file here, where %s puts %s under it", by, c.otherPath)
	case CollideFolderFile:
		return fmt.Sprintf("puts the file under %s, which %s keeps as a file", c.otherPath, by)
	}
	if c.why == wholeMode {
		return "sets the file's mode differently from " + by
	}
	return "changes the whole file, as does " + by
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
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
		if sums[i].AgentDir == self.AgentDir || me.sameWorker(o) {
			continue
		}
		out = append(out, collide(me, o)...)
	}
	return out, nil
}

// sameWorker: a and b were made by the same agent of the same flow, in two runs. The newer
// is another attempt at the same task, not a change that collides with the older (which the
// person applies or rejects, one or the other); they are not reported as conflicts.
func (a *sandboxProposal) sameWorker(b *sandboxProposal) bool {
	return a.agentID == b.agentID && a.flow == b.flow
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
			if a == b || open[a].sameWorker(open[b]) {
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
