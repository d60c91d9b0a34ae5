package proposal

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Review is what the editor shows for a proposal: every file with its hunks, the check result
// against the current workspace, and warnings (a moved HEAD).
type Review struct {
	Proposal   *Proposal    `json:"proposal,omitempty"` // nil for a bare patch
	AgentDir   string       `json:"agentDir,omitempty"`
	PatchFile  string       `json:"patchFile"`
	Files      []ReviewFile `json:"files"`
	Applicable bool         `json:"applicable"` // the whole patch passes Check now
	Problems   []Problem    `json:"problems,omitempty"`
	Warnings   []string     `json:"warnings"`
	Summary    string       `json:"summary,omitempty"` // summary.md
	TestLog    string       `json:"testLog,omitempty"` // test.log, when there is one
	// Collisions with the other open proposals of the workspace, before anything is applied
	// (collide.go): empty when there are none (or the proposal is no longer pending).
	Collisions []Collision `json:"collisions"`
	// Merged lists the files the check merged with the workspace (they changed since the
	// proposal was made); each has its ReviewFile.Merge.
	Merged []string `json:"merged,omitempty"`
	// Review is the review conversation (comments, answers, revisions); nil for a bare patch.
	Review *ReviewState `json:"review,omitempty"`
	// Held are the files a person must confirm by name before the proposal is applied
	// (holds.go): control files and names that look like others. Empty: none.
	Held []Hold `json:"held"`
	// Tests are the last test and verify results in the proposal's sandbox (tests.go).
	Tests *Tests `json:"tests,omitempty"`
	// PatchDigest is the digest of the patch this review shows; an apply given it
	// (ApplyOptions.Reviewed) applies exactly that patch or nothing.
	PatchDigest string `json:"patchDigest"`
}

// ReviewFile is one file of a patch.
type ReviewFile struct {
	Path       string       `json:"path"`
	OldPath    string       `json:"oldPath,omitempty"`
	Status     string       `json:"status"` // added, modified, deleted, renamed, copied
	OldMode    string       `json:"oldMode,omitempty"`
	NewMode    string       `json:"newMode,omitempty"`
	Binary     bool         `json:"binary"`
	Symlink    bool         `json:"symlink"`
	Added      int          `json:"added"`
	Deleted    int          `json:"deleted"`
	Hunks      []ReviewHunk `json:"hunks"`
	Selectable bool         `json:"selectable"` // hunks can be applied one by one
	// Merge is set when the workspace has changed this file since the proposal was made: its
	// hunks re-based on the workspace (rebase.go), which Selection.Merge and Resolve address.
	Merge *ReviewMerge `json:"merge,omitempty"`
}

// ReviewHunk is one hunk; Index is the number a Selection uses.
type ReviewHunk struct {
	Index    int          `json:"index"`
	Header   string       `json:"header"` // "@@ -1,3 +1,4 @@"
	OldStart int64        `json:"oldStart"`
	OldLines int64        `json:"oldLines"`
	NewStart int64        `json:"newStart"`
	NewLines int64        `json:"newLines"`
	Lines    []ReviewLine `json:"lines"`
	// Collisions are the other open proposals' changes this hunk collides with.
	Collisions []Collision `json:"collisions,omitempty"`
	// Key names the hunk by its file and lines (HunkKey); Reviewed says whether the person
	// marked it reviewed (kept across revisions that leave the hunk as it was).
	Key      string `json:"key"`
	Reviewed bool   `json:"reviewed,omitempty"`
}

// ReviewLine is one line of a hunk. Kind is " ", "+" or "-"; Text has no newline.
type ReviewLine struct {
	Kind    string `json:"kind"`
	Text    string `json:"text"`
	NoEOL   bool   `json:"noEol,omitempty"`
	OldLine int64  `json:"oldLine,omitempty"`
	NewLine int64  `json:"newLine,omitempty"`
}

// ReviewOptions for GetReview.
type ReviewOptions struct {
	ApplyOptions
	// Record appends a proposal_reviewed event (the orchestrator or the user reviewed it).
	Record bool
	// Shown: the review is shown to a person, so proposal/reviewed.json records the patch
	// it showed (integrity.go); an apply may then apply that patch.
	Shown bool
}

// GetReview loads ref and returns its review data (named so as not to clash with the type).
func GetReview(ctx context.Context, workspace, ref string, o ReviewOptions) (*Review, error) {
	notice, err := Recover(ctx, workspace) // a half-applied workspace would review as applicable
	if err != nil {
		return nil, err
	}
	l, err := Load(workspace, ref)
	if err != nil {
		return nil, err
	}
	rv := &Review{Proposal: l.Proposal, AgentDir: l.AgentDir, PatchFile: l.PatchPath, Files: []ReviewFile{}, Warnings: []string{}, Collisions: []Collision{}}
	if notice != "" {
		rv.Warnings = append(rv.Warnings, notice)
	}
	files, probs := parsePatch(l.Patch, o.Rules, o.MaxPatchBytes)
	if len(probs) == 0 {
		for _, f := range files {
			rv.Files = append(rv.Files, reviewFile(f))
		}
	}
	res, err := ApplyLoaded(ctx, workspace, l, Selection{}, ApplyOptions{DryRun: true, Reviewing: true, Rules: o.Rules, MaxPatchBytes: o.MaxPatchBytes})
	if res != nil {
		rv.Warnings = append(rv.Warnings, res.Warnings...)
		rv.Problems = res.Problems
		rv.Merged = res.Merged
	}
	if err != nil && res == nil {
		return nil, err
	}
	rv.Applicable = err == nil
	if len(probs) == 0 {
		if err := reviewMerges(workspace, l, files, rv); err != nil {
			rv.Warnings = append(rv.Warnings, "could not merge with the workspace: "+err.Error())
		}
		if err := reviewCollisions(workspace, l, rv); err != nil {
			rv.Warnings = append(rv.Warnings, "could not compare with the other open proposals: "+err.Error())
		}
	}
	if l.AgentDir != "" && l.Proposal != nil {
		if st, err := ReadReviewState(l.AgentDir, l.Proposal); err == nil {
			rv.Review = st
		} else {
			rv.Warnings = append(rv.Warnings, "could not read the review comments: "+err.Error())
		}
	}
	markHunks(rv)
	var parsed []*gitdiff.File
	if len(probs) == 0 {
		parsed = files
	}
	reviewFacts(workspace, l, parsed, res, rv, o)
	if l.AgentDir != "" {
		if root, err := os.OpenRoot(l.AgentDir); err == nil {
			if b, err := readRootCapped(root, SummaryFile, maxSummaryBytes); err == nil {
				rv.Summary = string(b)
			}
			if b, err := readRootCapped(root, TestLogFile, maxTestLogBytes); err == nil {
				rv.TestLog = string(b)
			}
			root.Close()
		}
	}
	if o.Record {
		fields := map[string]any{"applicable": rv.Applicable, "files": len(rv.Files)}
		if len(rv.Problems) > 0 {
			fields["problems"] = rv.Problems
		}
		if len(rv.Held) > 0 {
			fields["held"] = rv.Held
		}
		if rv.Tests.Failed() {
			fields["testsFailed"] = true
		}
		if err := logEvent(workspace, o.Flow, l, "proposal_reviewed", fields); err != nil {
			rv.Warnings = append(rv.Warnings, "could not write the event log: "+err.Error())
		}
	}
	return rv, nil
}

// markHunks gives every hunk its key and the person's reviewed mark.
func markHunks(rv *Review) {
	for i := range rv.Files {
		f := &rv.Files[i]
		for j := range f.Hunks {
			h := &f.Hunks[j]
			h.Key = HunkKey(f.Path, *h)
			h.Reviewed = rv.Review != nil && rv.Review.IsReviewed(h.Key)
		}
	}
}

func modeString(m os.FileMode) string {
	if m == 0 {
		return ""
	}
	return strings.TrimLeft(fmtOctal(uint32(m)), "0")
}

func fmtOctal(v uint32) string {
	var b [12]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v&7)
		v >>= 3
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}

func reviewFile(f *gitdiff.File) ReviewFile {
	name := f.NewName
	if name == "" {
		name = f.OldName
	}
	rf := ReviewFile{Path: name, Status: fileStatus(f), OldMode: modeString(f.OldMode), NewMode: modeString(f.NewMode),
		Binary: f.IsBinary, Symlink: int(f.OldMode) == modeSymlink || int(f.NewMode) == modeSymlink, Hunks: []ReviewHunk{}}
	if f.IsRename || f.IsCopy {
		rf.OldPath = f.OldName
	}
	rf.Selectable = !f.IsNew && !f.IsDelete && !f.IsRename && !f.IsCopy && !f.IsBinary && len(f.TextFragments) > 0
	for i, fr := range f.TextFragments {
		h := ReviewHunk{Index: i + 1, Header: fr.Header(), OldStart: fr.OldPosition, OldLines: fr.OldLines,
			NewStart: fr.NewPosition, NewLines: fr.NewLines, Lines: []ReviewLine{}}
		oldN, newN := fr.OldPosition, fr.NewPosition
		for _, ln := range fr.Lines {
			rl := ReviewLine{Kind: ln.Op.String(), Text: strings.TrimSuffix(ln.Line, "\n"), NoEOL: ln.NoEOL()}
			switch ln.Op {
			case gitdiff.OpContext:
				rl.OldLine, rl.NewLine = oldN, newN
				oldN++
				newN++
			case gitdiff.OpDelete:
				rl.OldLine = oldN
				oldN++
				rf.Deleted++
			case gitdiff.OpAdd:
				rl.NewLine = newN
				newN++
				rf.Added++
			}
			h.Lines = append(h.Lines, rl)
		}
		rf.Hunks = append(rf.Hunks, h)
	}
	return rf
}

// reviewMerges sets ReviewFile.Merge for each file the workspace changed since the proposal was
// made, naming (from the apply ledger) whose lines each conflict is against.
func reviewMerges(workspace string, l *Loaded, files []*gitdiff.File, rv *Review) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	d := newDirs(root)
	defer d.close()
	var bases map[string]*LedgerBlob
	if l.AgentDir != "" {
		if prior, err := readPrior(workspace, entryFor(workspace, l)); err == nil {
			bases = prior.mergeBases()
		}
	}
	pm, probs := mergeProposal(d, l, files, bases)
	if pm == nil {
		return nil
	}
	labels := mergeLabelsFor(l)
	for i := range rv.Files {
		rf := &rv.Files[i]
		fm := pm.merges[rf.Path]
		if fm == nil || !fm.moved {
			continue
		}
		rf.Merge = fm.review(labels)
		if rf.Merge.Conflicts == 0 {
			continue
		}
		origins, _ := LineOrigins(workspace, rf.Path, fm.ws.data)
		for k := range rf.Merge.Hunks {
			h := &rf.Merge.Hunks[k]
			if h.Conflict {
				h.From = originNames(origins, h.Start-1, h.Start-1+h.Count)
			}
		}
	}
	if len(probs) > 0 {
		return &RefusedError{Problems: probs}
	}
	return nil
}

// reviewCollisions compares a pending proposal with the other open ones and puts each
// collision on the hunk that holds it.
func reviewCollisions(workspace string, l *Loaded, rv *Review) error {
	self, ok := summaryOf(workspace, l)
	if !ok || readState(l.AgentDir) != "pending" {
		return nil
	}
	cs, err := findCollisions(workspace, self)
	if err != nil {
		return err
	}
	for _, c := range cs {
		for i := range rv.Files {
			rf := &rv.Files[i]
			if rf.Path != c.Path {
				continue
			}
			for k := range rf.Hunks {
				h := &rf.Hunks[k]
				if c.Kind != CollideLines { // the whole file: every hunk of it
					h.Collisions = append(h.Collisions, c)
					continue
				}
				end := int(h.OldStart + h.OldLines)
				if int(h.OldStart) <= c.Lines.Start && c.Lines.Start+c.Lines.Count <= max(end, int(h.OldStart)+1) {
					c.Hunk = h.Index
					h.Collisions = append(h.Collisions, c)
					break
				}
			}
		}
		rv.Collisions = append(rv.Collisions, c)
	}
	return nil
}

// readState is a proposal's state from its status.json: pending when there is none.
func readState(agentDir string) string {
	root, err := os.OpenRoot(agentDir)
	if err != nil {
		return "pending"
	}
	defer root.Close()
	return stateIn(root, ".")
}

// stateIn reads dir/proposal/status.json through root.
func stateIn(root *os.Root, dir string) string {
	b, err := root.ReadFile(path.Join(dir, StatusFile))
	if err != nil {
		return "pending"
	}
	var st Status
	if json.Unmarshal(b, &st) == nil && st.State != "" {
		return st.State
	}
	return "pending"
}
