package proposal

// A revision survives a kill. Before a revision run starts, revision n is kept whole under
// revisions/<n>/ (built in a staging folder and renamed into place: there whole, or not at
// all), and only then does review.json say a revision run is at work (Revising, with the
// comments it was sent): that record is the revision's journal. review.json says n+1 exists
// only after n is kept. When the run ends (FinishRevision), or when its process died before
// (every change of review.json settles an interrupted revision first), the proposal is looked
// at as it is (settleRevision says how): made again to its end, it is revision n+1; otherwise
// it goes back to revision n, whole, from the kept copy.
//
// A kept revision is never written over: a revisions/<n>/ that holds another patch than the
// proposal's revision n is refused, naming it.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/procalive"
)

// keptDir is where revision n is kept.
func keptDir(n int) string { return path.Join(RevisionsDir, strconv.Itoa(n)) }

// interrupted says whether s records a revision run whose process is gone.
func interrupted(l *Loaded, s *ReviewState) bool {
	r := s.Revising
	if r == nil || revising.has(l.AgentDir) {
		return false
	}
	return r.PID == os.Getpid() || !procalive.Alive(r.PID)
}

// settleInterrupted finishes or rolls back a revision whose run's process died; the notice
// says which ("" when there was none).
func settleInterrupted(workspace string, root *os.Root, l *Loaded, s *ReviewState) (string, error) {
	if !interrupted(l, s) {
		return "", nil
	}
	r := *s.Revising
	var sent []Comment
	for _, c := range s.Comments {
		if slices.Contains(r.Comments, c.ID) {
			sent = append(sent, c)
		}
	}
	made, err := settleRevision(workspace, root, l, s, r.RunID, sent, nil, false, true)
	if err != nil {
		return "", fmt.Errorf("an interrupted revision (run %s) of %s's proposal could not be settled: %w", r.RunID, l.Proposal.AgentID, err)
	}
	if made {
		return fmt.Sprintf("an interrupted revision (run %s) of %s's proposal was finished: the proposal it had made is revision %d", r.RunID, l.Proposal.AgentID, s.Revision), nil
	}
	return fmt.Sprintf("an interrupted revision (run %s) of %s's proposal was rolled back: the proposal stays at revision %d", r.RunID, l.Proposal.AgentID, s.Revision), nil
}

// settleRevision records the end of revision run runID, from the proposal as it is: made
// says a revision n+1 was recorded.
//
//   - A run that completed (ok) and made the proposal again to its end (proposal.json, written
//     last, is not the kept one) made revision n+1; so did an interrupted run that got that far
//     (only its record was cut).
//   - A run that failed, or was interrupted before that, is not a revision: work/ and the
//     proposal's files go back to revision n, from the kept copy (restoreRevision).
//   - A run that completed without changing the patch leaves the revision as it was; one
//     whose patch was written without its proposal.json gets revision n's files back (its
//     edits stay in work/, for the next proposal).
//
// Comments sent are marked with the worker's answers (ok: a comment it did not answer by name
// counts as answered by the revision it made).
func settleRevision(workspace string, root *os.Root, l *Loaded, s *ReviewState, runID string, sent []Comment, answers map[string]string, ok, interrupted bool) (bool, error) {
	kept := keptDir(s.Revision)
	old, kerr := root.ReadFile(path.Join(kept, "changes.patch"))
	now, err := root.ReadFile(PatchFile)
	if err != nil {
		return false, err
	}
	changed := kerr == nil && !bytes.Equal(old, now)
	made := changed && (ok || interrupted) && madeToTheEnd(root, kept)
	switch {
	case kerr != nil: // nothing kept: the run never began
	case made:
		s.Revision++
		ids := make([]string, 0, len(sent))
		for _, c := range sent {
			ids = append(ids, c.ID)
		}
		s.Revisions = append(s.Revisions, Revision{Number: s.Revision, CreatedAt: l.Proposal.CreatedAt, RunID: runID, Comments: ids})
	default:
		var err error
		switch {
		case !ok:
			err = restoreRevision(workspace, root, l, s, kept)
		case changed:
			err = restoreRevisionFiles(root, kept, PatchFile, SummaryFile)
		}
		if err != nil {
			return false, fmt.Errorf("the revision run's edits could not be taken back (revision %d is kept in %s): %w", s.Revision, kept, err)
		}
		if err := root.RemoveAll(kept); err != nil {
			return false, err
		}
	}
	markSent(s, sent, answers, ok, made)
	if s.Revising != nil && s.Revising.RunID == runID {
		s.Revising = nil
		revising.set(l.AgentDir, false)
	}
	return made, nil
}

// madeToTheEnd: the proposal's proposal.json is not the kept revision's (Create writes it
// last).
func madeToTheEnd(root *os.Root, kept string) bool {
	keptJSON, err1 := root.ReadFile(path.Join(kept, "proposal.json"))
	nowJSON, err2 := root.ReadFile(JSONFile)
	return err1 == nil && err2 == nil && !bytes.Equal(keptJSON, nowJSON)
}

// restoreRevisionFiles puts files (proposal/ names) of the kept revision back, the patch with
// its digest record.
func restoreRevisionFiles(root *os.Root, kept string, files ...string) error {
	for _, f := range files {
		b, err := root.ReadFile(path.Join(kept, path.Base(f)))
		if err != nil {
			return err
		}
		if err := writeFileAtomic(root, f, b, 0o644); err != nil {
			return err
		}
		if f == PatchFile {
			if err := writePatchRecord(root, DigestFile, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// markSent marks each comment sent with the revision that carried it and the worker's answer.
func markSent(s *ReviewState, sent []Comment, answers map[string]string, ok, made bool) {
	for i := range s.Comments {
		c := &s.Comments[i]
		if !slices.ContainsFunc(sent, func(x Comment) bool { return x.ID == c.ID }) {
			continue
		}
		c.SentIn = s.Revision
		if a, found := answers[c.ID]; found && ok {
			c.Answer, c.AnsweredIn = a, s.Revision
		} else if made && ok {
			c.AnsweredIn = s.Revision // changed in answer, without a word about it
		}
	}
}

// archiveRevision keeps the current revision n under revisions/<n>/: its patch files and every
// changed file as work/ holds it now (a deleted one is simply absent), built in a staging
// folder and renamed into place. A revisions/<n>/ there already is kept as it is when it holds
// this very patch, and refused otherwise: a kept revision is never written over.
func archiveRevision(l *Loaded, n int) error {
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return err
	}
	defer root.Close()
	dir := keptDir(n)
	if held, err := root.ReadFile(path.Join(dir, "changes.patch")); err == nil {
		if now, err := root.ReadFile(PatchFile); err == nil && bytes.Equal(held, now) {
			return nil
		}
		return fmt.Errorf("%s holds another patch than the proposal's revision %d; it is kept as it is (move it away to revise the proposal again)", dir, n)
	}
	removeRevisionStaging(root) // copies a kill cut short (this runs with the workspace lock)
	var r [6]byte
	rand.Read(r[:])
	staging := path.Join(RevisionsDir, "."+strconv.Itoa(n)+".staging-"+hex.EncodeToString(r[:]))
	if err := root.MkdirAll(path.Join(staging, "post"), 0o755); err != nil {
		return err
	}
	if err := fillRevision(root, l, staging); err != nil {
		root.RemoveAll(staging)
		return err
	}
	root.RemoveAll(dir) // a folder without a patch: a copy cut short by an older version
	if err := root.Rename(staging, dir); err != nil {
		root.RemoveAll(staging)
		return err
	}
	return nil
}

// removeRevisionStaging removes the staging folders of revisions whose copy was cut short.
func removeRevisionStaging(root *os.Root) {
	ents, err := fs.ReadDir(root.FS(), RevisionsDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".staging-") {
			root.RemoveAll(path.Join(RevisionsDir, e.Name()))
		}
	}
}

// fillRevision copies the current revision's files into dir.
func fillRevision(root *os.Root, l *Loaded, dir string) error {
	for _, f := range []string{PatchFile, JSONFile, SummaryFile} {
		b, err := root.ReadFile(f)
		if err != nil {
			return err
		}
		if err := root.WriteFile(path.Join(dir, path.Base(f)), b, 0o644); err != nil {
			return err
		}
	}
	for _, c := range l.Proposal.ChangedFiles {
		if c.Status == "deleted" {
			continue
		}
		if err := copyInRoot(root, path.Join(l.Proposal.Paths.WorkDir, c.Path), path.Join(dir, "post", c.Path)); err != nil {
			return err
		}
	}
	return nil
}
