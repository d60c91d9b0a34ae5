package proposal

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/mdsafe"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// CreateOptions for Create.
type CreateOptions struct {
	Workspace string
	RunID     string
	AgentID   string
	Notes     string
	Flow      string // event log flow; "" means DefaultFlow
	// TestLog, when non-empty, is written to proposal/test.log (the handoff named tests and the
	// engine ran them).
	TestLog []byte
	// Origin, when set (a run made the proposal), is written to proposal/origin.json and
	// copied into the apply ledger when the proposal is applied.
	Origin *Origin
	// Rules: files in work/ under a blocked folder are left out (and listed). Rules.Allowed
	// is not applied here: a change outside the allowed folders is still proposed, so the
	// reviewer sees it, and check and apply refuse it by name.
	Rules safepath.Rules
	// SkipUnchanged: when work/ does not differ from input/, write and log nothing (the
	// result's ChangedFiles is empty). The run engine asks this after every turn of an agent
	// working in a sandbox, whether or not it handed off.
	SkipUnchanged bool
}

// Created is what Create returns: proposal.json as written, plus facts for the caller.
type Created struct {
	Proposal  *Proposal       `json:"proposal"`
	AgentDir  string          `json:"agentDir"` // absolute
	Stats     map[string]Stat `json:"stats"`    // per changed path
	Skipped   []string        `json:"skipped"`  // blocked folders in work/ left out (e.g. node_modules)
	PatchSize int             `json:"patchSize"`
	// Collisions with the other open proposals of the workspace (collide.go); empty: none.
	Collisions []Collision `json:"collisions"`
	// Warnings: what could not be done besides (comparing with the other proposals).
	Warnings []string `json:"warnings,omitempty"`
}

// Stat is the +/- line count of one path (binary files count 0/0 and say so).
type Stat struct {
	Added   int  `json:"added"`
	Deleted int  `json:"deleted"`
	Binary  bool `json:"binary"`
}

type node struct {
	mode int // modeFile, modeExec, modeSymlink
	size int64
}

// Create diffs input/ against work/ of a prepared sandbox and writes proposal/changes.patch,
// proposal/proposal.json and proposal/summary.md (and test.log). It appends proposal_created.
func Create(ctx context.Context, o CreateOptions) (*Created, error) {
	sb, err := openSandbox(o)
	if err != nil {
		return nil, err
	}
	defer sb.root.Close()
	names, err := sb.scan(o.Rules)
	if err != nil {
		return nil, err
	}
	results, err := diffAll(ctx, sb.root, names, sb.in, sb.work)
	if err != nil {
		return nil, err
	}
	pr, patch, stats := assemble(o, sb.meta, names, results)
	if err := fitsItsReaders(pr, patch); err != nil {
		return nil, err
	}
	created := &Created{Proposal: pr, AgentDir: sb.paths.AgentDir, Stats: stats, Skipped: sb.skipped, PatchSize: len(patch), Collisions: []Collision{}}
	if o.SkipUnchanged && len(pr.ChangedFiles) == 0 {
		return created, nil
	}
	if err := writeProposal(sb.root, o, pr, patch, stats, sb.skipped); err != nil {
		return nil, err
	}
	if err := announce(o, created); err != nil {
		return nil, err
	}
	return created, nil
}

// createSandbox is a prepared sandbox Create reads: its metadata, input/ and work/ listed.
type createSandbox struct {
	paths    sandbox.Paths
	meta     *sandbox.Meta
	root     *os.Root // the agent folder
	in, work map[string]node
	skipped  []string // blocked folders in work/, left out
}

// openSandbox checks the options and opens the sandbox of o's run and agent.
func openSandbox(o CreateOptions) (*createSandbox, error) {
	paths, err := sandbox.PathsFor(o.Workspace, o.RunID, o.AgentID)
	if err != nil {
		return nil, err
	}
	if o.Flow != "" {
		if err := eventlog.CheckFlowName(o.Flow); err != nil {
			return nil, err
		}
	}
	meta, err := sandbox.ReadMeta(o.Workspace, o.RunID, o.AgentID)
	if err != nil {
		return nil, fmt.Errorf("sandbox for run %s agent %s: %w (prepare it first)", o.RunID, o.AgentID, err)
	}
	root, err := os.OpenRoot(paths.AgentDir)
	if err != nil {
		return nil, err
	}
	return &createSandbox{paths: paths, meta: meta, root: root}, nil
}

// scan lists input/ and work/ and returns every path either holds, sorted. The allow-list is
// not applied: a change outside the allowed folders is still proposed, so the reviewer sees it.
func (sb *createSandbox) scan(rules safepath.Rules) ([]string, error) {
	rules.Allowed = nil
	var err error
	if sb.in, err = scanTree(sb.root, "input", rules, nil, nil); err != nil {
		return nil, err
	}
	if sb.work, err = scanTree(sb.root, "work", rules, &sb.skipped, sb.meta.Shared); err != nil {
		return nil, err
	}
	sb.skipped = slices.DeleteFunc(sb.skipped, func(rel string) bool { return sameTree(sb.root, "input/"+rel, "work/"+rel) })
	names := make([]string, 0, len(sb.in)+len(sb.work))
	for p := range sb.in {
		names = append(names, p)
	}
	for p := range sb.work {
		if _, ok := sb.in[p]; !ok {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	if err := refuseNewNames(names, sb.in); err != nil {
		return nil, err
	}
	return names, nil
}

// diffAll diffs every path, in parallel, one job per folder (so each folder of input/ and
// work/ is opened once).
func diffAll(ctx context.Context, root *os.Root, names []string, in, work map[string]node) ([]diffResult, error) {
	results := make([]diffResult, len(names))
	type group struct{ start, end int }
	var groups []group
	for i := 0; i < len(names); {
		j := i + 1
		for j < len(names) && j-i < 256 && path.Dir(names[j]) == path.Dir(names[i]) {
			j++
		}
		groups = append(groups, group{i, j})
		i = j
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     int
	)
	for range max(2, runtime.NumCPU()*2) {
		wg.Go(func() {
			for {
				mu.Lock()
				gi := next
				next++
				stop := firstErr != nil || gi >= len(groups) || ctx.Err() != nil
				mu.Unlock()
				if stop {
					return
				}
				g := groups[gi]
				if err := diffGroup(root, names[g.start:g.end], in, work, results[g.start:g.end]); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return results, ctx.Err()
}

// assemble makes proposal.json, the patch and the per-file stats from the diffs.
func assemble(o CreateOptions, meta *sandbox.Meta, names []string, results []diffResult) (*Proposal, []byte, map[string]Stat) {
	var patch bytes.Buffer
	pr := &Proposal{
		Version: jsonVersion, RunID: o.RunID, AgentID: o.AgentID,
		CreatedAt: time.Now().UTC().Format(timeLayout),
		Base:      Base{GitHead: meta.Base.GitHead},
		Paths:     Paths{InputDir: "input", WorkDir: "work", PatchFile: PatchFile, SummaryFile: SummaryFile},
		Notes:     cutNotes(o.Notes), ChangedFiles: []ChangedFile{},
	}
	stats := map[string]Stat{}
	for i, r := range results {
		if !r.changed {
			continue
		}
		for _, s := range r.sections {
			patch.Write(s)
		}
		pr.ChangedFiles = append(pr.ChangedFiles, ChangedFile{Path: names[i], Status: r.status})
		stats[names[i]] = r.stat
	}
	return pr, patch.Bytes(), stats
}

// writeProposal writes the proposal's files, proposal.json last. A patch that is what the
// proposal already holds keeps its status (applied, rejected or reverted): the state of the
// proposal is the state of that patch. Another patch makes it pending again. It runs with the
// workspace lock held, after recovery, so that an apply of the proposal is either done, with
// its status written, or not begun.
func writeProposal(root *os.Root, o CreateOptions, pr *Proposal, patch []byte, stats map[string]Stat, skipped []string) error {
	lk, err := wslock.Acquire(context.Background(), o.Workspace, fmt.Sprintf("writing %s's proposal (run %s)", o.AgentID, o.RunID), wslock.Options{})
	if err != nil {
		return err
	}
	defer lk.Release()
	if err := recoverWorkspace(o.Workspace); err != nil {
		return err
	}
	held, herr := readRootCapped(root, PatchFile, MaxPatchBytes)
	samePatch := herr == nil && bytes.Equal(held, patch)
	if err := writeFileAtomic(root, PatchFile, patch, 0o644); err != nil {
		return err
	}
	if err := writePatchRecord(root, DigestFile, patch); err != nil {
		return err
	}
	testKillAt("create-patch")
	if err := writeFileAtomic(root, SummaryFile, []byte(summaryMarkdown(pr, stats, skipped)), 0o644); err != nil {
		return err
	}
	if len(o.TestLog) > 0 {
		if err := writeFileAtomic(root, TestLogFile, testLogTail(o.TestLog), 0o644); err != nil {
			return err
		}
	}
	if o.Origin != nil {
		ob, _ := json.MarshalIndent(o.Origin, "", "  ")
		if err := writeFileAtomic(root, originFile, append(ob, '\n'), 0o644); err != nil {
			return err
		}
	} else {
		root.Remove(originFile) // a proposal made again by hand has no run behind it
	}
	jb, _ := json.MarshalIndent(pr, "", "  ")
	if err := writeFileAtomic(root, JSONFile, append(jb, '\n'), 0o644); err != nil {
		return err
	}
	if !samePatch {
		root.Remove(StatusFile) // a new patch is pending
	}
	return nil
}

// announce compares the new proposal with the other open ones and logs proposal_created and
// a proposal_conflict per collision.
func announce(o CreateOptions, created *Created) error {
	pr := created.Proposal
	l := &Loaded{Proposal: pr, AgentDir: created.AgentDir}
	files := make([]string, 0, len(pr.ChangedFiles))
	for _, c := range pr.ChangedFiles {
		files = append(files, c.Path)
	}
	if self, ok := summaryOf(o.Workspace, l); ok && len(pr.ChangedFiles) > 0 {
		if cs, err := findCollisions(o.Workspace, self); err != nil {
			created.Warnings = append(created.Warnings, "could not compare the proposal with the other open proposals: "+err.Error())
		} else {
			created.Collisions = cs
		}
	}
	if err := logEvent(o.Workspace, o.Flow, l, "proposal_created", map[string]any{"files": files, "conflicts": len(created.Collisions)}); err != nil {
		return err
	}
	for _, ev := range CollisionEvents(created.Collisions) {
		if err := logEvent(o.Workspace, o.Flow, l, "proposal_conflict", ev); err != nil {
			return err
		}
	}
	return nil
}

// scanTree lists files and symlinks under dir (folders are implicit, as in git). Blocked
// folders are skipped (recorded in skipped when non-nil); other unsafe names and special files
// are errors, since the patch could not be applied. The shared dependency folders linked
// into work/ are left out without a word: they are never proposed.
func scanTree(root *os.Root, dir string, rules safepath.Rules, skipped *[]string, shared []string) (map[string]node, error) {
	out := map[string]node{}
	err := fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel := strings.TrimPrefix(p, dir+"/")
		if slices.Contains(shared, rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if _, blocked := rules.Blocks(rel); blocked {
			if skipped != nil {
				*skipped = append(*skipped, rel)
			}
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if _, err := safepath.Clean(rel, rules); err != nil {
			return fmt.Errorf("%s/%s: cannot be proposed: %s", dir, rel, err.(*safepath.Error).Reason)
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			out[rel] = node{mode: modeSymlink}
		case fi.Mode().IsRegular():
			m := modeFile
			if fi.Mode()&0o100 != 0 {
				m = modeExec
			}
			out[rel] = node{mode: m, size: fi.Size()}
		default:
			return fmt.Errorf("%s/%s: cannot be proposed: not a regular file or symlink", dir, rel)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s/ is missing from the sandbox", dir)
	}
	return out, err
}

// sameTree: the sandbox copied the blocked folder (or file) a from the workspace (the files
// git tracks in a build folder) and b is unchanged from it: there is nothing to say was left
// out.
func sameTree(root *os.Root, a, b string) bool {
	same := true
	err := fs.WalkDir(root.FS(), b, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !same {
			return err
		}
		q := a + strings.TrimPrefix(p, b)
		da, err := root.Lstat(q)
		if err != nil || da.IsDir() != d.IsDir() || da.Mode().Type() != d.Type() {
			same = false
			return fs.SkipAll
		}
		switch {
		case d.Type().IsRegular():
			x, errx := root.ReadFile(p)
			y, erry := root.ReadFile(q)
			same = errx == nil && erry == nil && bytes.Equal(x, y)
		case d.Type()&fs.ModeSymlink != 0:
			x, errx := root.Readlink(p)
			y, erry := root.Readlink(q)
			same = errx == nil && erry == nil && x == y
		}
		return nil
	})
	if err != nil || !same {
		return false
	}
	n := 0 // and nothing of a was removed from b
	fs.WalkDir(root.FS(), a, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			if _, err := root.Lstat(b + strings.TrimPrefix(p, a)); err != nil {
				n++
			}
		}
		return nil
	})
	return n == 0
}

type diffResult struct {
	sections [][]byte
	stat     Stat
	status   string
	changed  bool
}

// diffGroup diffs paths that share one folder.
func diffGroup(root *os.Root, names []string, in, work map[string]node, out []diffResult) error {
	dir := path.Dir(names[0])
	open := func(side string, tree map[string]node) (*dirFiles, error) {
		for _, n := range names {
			if _, ok := tree[n]; ok {
				return openDirFiles(root, path.Join(side, dir))
			}
		}
		return nil, nil // the folder is only on the other side
	}
	inDir, err := open("input", in)
	if err != nil {
		return err
	}
	if inDir != nil {
		defer inDir.Close()
	}
	workDir, err := open("work", work)
	if err != nil {
		return err
	}
	if workDir != nil {
		defer workDir.Close()
	}
	for i, p := range names {
		if out[i], err = diffPath(inDir, workDir, p, in, work); err != nil {
			return err
		}
	}
	return nil
}

func readSide(d *dirFiles, p string, n node, ok bool) (side, error) {
	if !ok {
		return side{}, nil
	}
	if n.mode == modeSymlink {
		t, err := d.Readlink(p)
		return side{exists: true, mode: n.mode, data: []byte(t)}, err
	}
	data, err := d.ReadFile(p, n.size)
	if err != nil {
		return side{}, err
	}
	return side{exists: true, mode: n.mode, data: data}, nil
}

func diffPath(inDir, workDir *dirFiles, p string, in, work map[string]node) (r diffResult, err error) {
	a, aok := in[p]
	b, bok := work[p]
	// The agent's file is not read whole when no patch could carry it (a sparse terabyte
	// would be read into memory): a size of its own it can only have had from the agent.
	if bok && b.mode != modeSymlink && b.size > MaxPatchBytes && (!aok || a.size != b.size) {
		return r, fmt.Errorf("work/%s: cannot be proposed: %d bytes, more than a patch may hold (%d)", p, b.size, MaxPatchBytes)
	}
	old, err := readSide(inDir, p, a, aok)
	if err != nil {
		return r, err
	}
	new, err := readSide(workDir, p, b, bok)
	if err != nil {
		return r, err
	}
	if aok && bok && old.mode == new.mode && bytes.Equal(old.data, new.data) {
		return r, nil
	}
	r.changed = true
	switch {
	case !aok:
		r.status = "added"
	case !bok:
		r.status = "deleted"
	default:
		r.status = "modified"
	}
	r.stat.Binary = isBinary(old.data) || isBinary(new.data)
	r.sections, r.stat.Added, r.stat.Deleted, err = changeSections(p, old, new)
	return r, err
}

// fitsItsReaders refuses a proposal its readers could not read back: a patch over the size
// apply and review read, a proposal.json over theirs.
func fitsItsReaders(pr *Proposal, patch []byte) error {
	if len(patch) > MaxPatchBytes {
		return fmt.Errorf("proposal of %s (run %s): the patch would be %s, over the %s a proposal's patch can be (apply and review could not read it); propose fewer or smaller files", pr.AgentID, pr.RunID, byteSize(int64(len(patch))), byteSize(MaxPatchBytes))
	}
	if jb, _ := json.MarshalIndent(pr, "", "  "); len(jb) >= maxJSONBytes {
		return fmt.Errorf("proposal of %s (run %s): proposal.json would be %s, over the %s it can be (%d changed files); propose fewer files", pr.AgentID, pr.RunID, byteSize(int64(len(jb))), byteSize(maxJSONBytes), len(pr.ChangedFiles))
	}
	return nil
}

// maxNotes bounds the notes kept in proposal.json (and its summary), whose readers cap them.
const maxNotes = 256 << 10

// cutNotes is notes cut to maxNotes at a rune boundary, saying so.
func cutNotes(notes string) string {
	if len(notes) <= maxNotes {
		return notes
	}
	n := maxNotes
	for n > 0 && !utf8.RuneStart(notes[n]) {
		n--
	}
	return notes[:n] + "\n… (the notes were cut here)"
}

// testLogTail is the end of a test log, as much as a review reads (a test's failures are at
// its end).
func testLogTail(b []byte) []byte {
	if len(b) <= maxTestLogBytes {
		return b
	}
	note := fmt.Sprintf("(the first %s of the test log were cut)\n", byteSize(int64(len(b)-maxTestLogBytes+256)))
	return append([]byte(note), b[len(b)-maxTestLogBytes+256:]...)
}

func summaryMarkdown(pr *Proposal, stats map[string]Stat, skipped []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Proposal: %s / %s\n\n", pr.RunID, pr.AgentID)
	fmt.Fprintf(&b, "Created %s", pr.CreatedAt)
	if pr.Base.GitHead != "" {
		fmt.Fprintf(&b, " from commit `%s`", pr.Base.GitHead)
	}
	b.WriteString(".\n\n")
	if pr.Notes != "" { // the worker's words, shown as text: no markup of theirs renders
		b.WriteString(mdsafe.Block(pr.Notes, "") + "\n")
	}
	add, del := 0, 0
	for _, s := range stats {
		add += s.Added
		del += s.Deleted
	}
	fmt.Fprintf(&b, "%d file(s) changed, %d insertion(s)(+), %d deletion(s)(-)\n\n", len(pr.ChangedFiles), add, del)
	if len(pr.ChangedFiles) > 0 {
		b.WriteString("| file | status | + | - |\n|---|---|---|---|\n")
		for i, c := range pr.ChangedFiles {
			if b.Len() > maxSummaryBytes-64<<10 { // what a review reads, with room for the rest
				fmt.Fprintf(&b, "| … and %d more files | | | |\n", len(pr.ChangedFiles)-i)
				break
			}
			s := stats[c.Path]
			plus, minus := fmt.Sprint(s.Added), fmt.Sprint(s.Deleted)
			if s.Binary {
				plus, minus = "bin", "bin"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdsafe.Code(c.Path), mdsafe.Text(c.Status), plus, minus)
		}
	}
	if len(skipped) > 0 {
		b.WriteString("\nLeft out (blocked folders are never proposed):\n\n")
		for i, s := range skipped {
			if b.Len() > maxSummaryBytes-1<<10 {
				fmt.Fprintf(&b, "- … and %d more\n", len(skipped)-i)
				break
			}
			fmt.Fprintf(&b, "- %s\n", mdsafe.Code(path.Clean(s)))
		}
	}
	return b.String()
}
