package proposal

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// Side by side across runs: what differs between the files one proposal leaves and those
// another leaves — the same agent's proposals in a run and in a fork of it, typically — and
// the same for every agent of two runs. Each proposal is taken as its latest revision leaves
// the files (its work/ for what it changes, its input/ for the rest), as the interdiff of two
// revisions is.

// Comparison is the patch that takes the files proposal A leaves to those B leaves.
type Comparison struct {
	Agent     string   `json:"agent,omitempty"`
	A         string   `json:"a"` // workspace-relative proposal.json, "" when the agent made none
	B         string   `json:"b"`
	RevisionA int      `json:"revisionA,omitempty"`
	RevisionB int      `json:"revisionB,omitempty"`
	Files     []string `json:"files"` // the paths the two leave differently
	Patch     string   `json:"patch"`
}

// CompareProposals compares two proposals' results over the files either changes.
func CompareProposals(workspace, a, b string) (*Comparison, error) {
	sa, err := latestSide(workspace, a)
	if err != nil {
		return nil, err
	}
	defer sa.close()
	sb, err := latestSide(workspace, b)
	if err != nil {
		return nil, err
	}
	defer sb.close()
	c := &Comparison{A: sa.ref, B: sb.ref, RevisionA: sa.revision, RevisionB: sb.revision, Files: []string{}}
	return c, c.diff(sa, sb)
}

// CompareRuns compares, agent by agent, the proposals of run a with those of run b. An agent
// with a proposal in one run only is compared with its input in the other (or no change).
func CompareRuns(workspace, a, b string) ([]Comparison, error) {
	pa, err := runProposals(workspace, a)
	if err != nil {
		return nil, err
	}
	pb, err := runProposals(workspace, b)
	if err != nil {
		return nil, err
	}
	agents := map[string]bool{}
	for k := range pa {
		agents[k] = true
	}
	for k := range pb {
		agents[k] = true
	}
	names := make([]string, 0, len(agents))
	for k := range agents {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Comparison
	for _, agent := range names {
		sa, err := sideOrNone(workspace, pa[agent])
		if err != nil {
			return nil, err
		}
		sb, err := sideOrNone(workspace, pb[agent])
		if err != nil {
			sa.close()
			return nil, err
		}
		c := Comparison{Agent: agent, A: sa.ref, B: sb.ref, RevisionA: sa.revision, RevisionB: sb.revision, Files: []string{}}
		err = c.diff(sa, sb)
		sa.close()
		sb.close()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// proposalSide is one proposal's latest revision, read from its agent folder; a nil root
// stands for no proposal (nothing changed).
type proposalSide struct {
	ref      string
	revision int
	root     *os.Root
	rs       *revSide
}

func (s *proposalSide) close() {
	if s.root != nil {
		s.root.Close()
	}
}

func (s *proposalSide) read(name string) (side, error) {
	if s.root == nil {
		return side{}, errNoSide
	}
	return s.rs.read(s.root, name)
}

var errNoSide = errors.New("no proposal")

func latestSide(workspace, ref string) (*proposalSide, error) {
	l, err := Load(workspace, ref)
	if err != nil {
		return nil, err
	}
	if l.Proposal == nil || l.AgentDir == "" {
		return nil, fmt.Errorf("%s is a bare patch: compare proposals a run made", ref)
	}
	s, err := ReadReviewState(l.AgentDir, l.Proposal)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return nil, err
	}
	rs, err := revisionSide(root, l, s, s.Revision)
	if err != nil {
		root.Close()
		return nil, err
	}
	rel, err := filepath.Rel(workspace, filepath.Join(l.AgentDir, "proposal", "proposal.json"))
	if err != nil {
		rel = ref
	}
	return &proposalSide{ref: filepath.ToSlash(rel), revision: s.Revision, root: root, rs: rs}, nil
}

func sideOrNone(workspace, ref string) (*proposalSide, error) {
	if ref == "" {
		return &proposalSide{}, nil
	}
	return latestSide(workspace, ref)
}

// diff fills c with the patch from a's files to b's. A side with no proposal leaves each file
// as the other side's input holds it.
func (c *Comparison) diff(a, b *proposalSide) error {
	names := map[string]bool{}
	for _, s := range []*proposalSide{a, b} {
		if s.rs != nil {
			for n := range s.rs.changed {
				names[n] = true
			}
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var patch bytes.Buffer
	for _, n := range sorted {
		x, y, err := bothSides(a, b, n)
		if err != nil {
			return err
		}
		if x.exists == y.exists && x.mode == y.mode && bytes.Equal(x.data, y.data) {
			continue
		}
		sections, _, _, err := changeSections(n, x, y)
		if err != nil {
			return err
		}
		for _, sec := range sections {
			patch.Write(sec)
		}
		c.Files = append(c.Files, n)
	}
	c.Patch = patch.String()
	return nil
}

// bothSides reads name from each side; a side without a proposal reads the other's input.
func bothSides(a, b *proposalSide, name string) (side, side, error) {
	x, errA := a.read(name)
	y, errB := b.read(name)
	switch {
	case errors.Is(errA, errNoSide):
		x, errA = readInput(b.root, name)
	case errors.Is(errB, errNoSide):
		y, errB = readInput(a.root, name)
	}
	return x, y, errors.Join(errA, errB)
}

func readInput(root *os.Root, name string) (side, error) {
	return (&revSide{dir: "input", changed: map[string]bool{}}).read(root, name)
}

// runProposals are a run's proposals by agent: the sandboxes of the run that hold one.
func runProposals(workspace, runID string) (map[string]string, error) {
	if err := sandbox.ValidateRunID(runID); err != nil {
		return nil, err
	}
	dir := path.Join(sandbox.Dir, runID)
	entries, err := os.ReadDir(filepath.Join(workspace, filepath.FromSlash(dir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %s has no sandboxes in %s", runID, workspace)
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		ref := path.Join(dir, e.Name(), "proposal", "proposal.json")
		if !e.IsDir() {
			continue
		}
		if l, err := Load(workspace, ref); err == nil && l.Proposal != nil {
			out[l.Proposal.AgentID] = ref
		}
	}
	return out, nil
}
