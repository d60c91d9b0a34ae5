package proposal

// Exactly once. The ledger is the record of what was applied: an apply is keyed by its
// proposal, the proposal's revision and the digest of the patch applied. With the workspace
// lock held, and whoever asks (the command line, the editor, a run's auto-apply, a resumed
// run), an apply of a proposal whose very revision and patch the ledger records as applied
// whole and not reverted is refused: the person reverts it first. A file an earlier apply of
// the proposal changed (part of it, or another revision) is applied through the three-way
// merge with the workspace, never by the patch again: the merge leaves a change the workspace
// already has as it is, so nothing is written twice.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

// priorApplies is what the ledger says of earlier applies of a proposal that still stand.
type priorApplies struct {
	// same is a live apply of everything of this revision and patch: applying it again is
	// refused.
	same *LedgerEntry
	// paths are the files live applies of the proposal changed, with how each changed them.
	paths map[string][]priorChange
}

// priorChange is how one live apply changed a file.
type priorChange struct {
	entry   string
	sameRev bool  // of this revision and patch
	picked  []int // the patch's hunks it applied; nil: the whole file
	// after is the version it wrote when that is the worker's own (the whole file, not
	// merged with the workspace): the base of a later merge of the file.
	after *LedgerBlob
}

// mergeBases are the versions a merge of each file starts from instead of input/: the file as
// the latest live apply of the proposal wrote it from the worker's copy. Nil for nothing.
func (pr *priorApplies) mergeBases() map[string]*LedgerBlob {
	if pr == nil {
		return nil
	}
	out := map[string]*LedgerBlob{}
	for p, cs := range pr.paths {
		if last := cs[len(cs)-1]; last.after != nil {
			out[p] = last.after
		}
	}
	return out
}

// readPrior reads the ledger for the live applies of e's proposal (e is the entry the new
// apply would write). The caller holds the workspace lock.
func readPrior(workspace string, e *LedgerEntry) (*priorApplies, error) {
	pr := &priorApplies{paths: map[string][]priorChange{}}
	if e == nil || e.Proposal == "" {
		return pr, nil
	}
	lg, err := readProposalLedger(workspace, e.Proposal)
	if lg == nil {
		return nil, err
	}
	if err != nil {
		// An entry that cannot be read may be an apply of this proposal: refuse rather than
		// apply twice.
		return nil, fmt.Errorf("the apply ledger cannot be read whole, so whether this proposal was applied already is not known: %w", err)
	}
	for i := range lg.Entries {
		prev := &lg.Entries[i]
		if prev.Kind != "apply" || prev.Proposal != e.Proposal || lg.Reverted[prev.ID] != "" {
			continue
		}
		sameRev := prev.Revision == e.Revision && (prev.Patch == "" || prev.Patch == e.Patch)
		if !prev.Part && sameRev {
			pr.same = prev
		}
		for _, f := range prev.Files {
			c := priorChange{entry: prev.ID, sameRev: sameRev, picked: prev.Picked[f.Path]}
			if !prev.Merged && c.picked == nil && f.After != nil {
				c.after = f.After
			}
			pr.paths[f.Path] = append(pr.paths[f.Path], c)
		}
	}
	return pr, nil
}

// refusal is the refusal of applying pr.same again.
func (pr *priorApplies) refusal(what string) *RefusedError {
	e := pr.same
	rev := ""
	if e.Revision > 0 {
		rev = fmt.Sprintf(" (revision %d)", e.Revision)
	}
	return &RefusedError{Applied: e.ID, Problems: []Problem{{Reason: fmt.Sprintf(
		"%s%s was applied already (ledger entry %s, %s) and not reverted; applying it again would write its changes twice. Revert it first (agentcanvas proposal revert %s) to apply it again",
		what, rev, e.ID, e.At, e.ID)}}}
}

// readProposalLedger reads the entries of one proposal (its applies and their reverts): only
// an entry file that holds the proposal's name, as the entry writes it, is decoded.
func readProposalLedger(workspace, proposal string) (*Ledger, error) {
	name, _ := json.Marshal(proposal)
	return readLedger(workspace, func(b []byte) bool { return bytes.Contains(b, name) })
}

// readPrior reads the ledger for a proposal's apply (rec.once), refusing one that is applied
// already. The caller holds the workspace lock.
func (rec *record) readPrior(workspace string) error {
	if !rec.once {
		return nil
	}
	pr, err := readPrior(workspace, rec.entry)
	if err != nil {
		return err
	}
	if pr.same != nil {
		return pr.refusal(describeProposal(rec.entry, rec.entry.Proposal))
	}
	rec.prior = pr
	return rec.unchangedSince()
}

// unchangedSince refuses the apply of a proposal made again or revised after the apply read
// it and before it held the lock: it would write the patch it read, and the status "applied"
// would then stand beside a patch it did not apply. The caller holds the lock.
func (rec *record) unchangedSince() error {
	l := rec.loaded
	if l == nil || l.AgentDir == "" || rec.entry == nil {
		return nil
	}
	digest, err := fileDigest(l.PatchPath)
	rev, _ := reviewOf(l)
	if err == nil && digest == rec.entry.Patch && rev == rec.entry.Revision {
		return nil
	}
	why := "its patch changed"
	if err != nil {
		why = "its patch cannot be read again: " + err.Error()
	} else if rev != rec.entry.Revision {
		why = fmt.Sprintf("it is at revision %d now", rev)
	}
	return &RefusedError{Problems: []Problem{{Reason: fmt.Sprintf(
		"%s was made again while this apply waited for the workspace lock (%s); nothing was changed: review it again, then apply it",
		describeProposal(rec.entry, rec.entry.Proposal), why)}}}
}

// fileDigest is PatchDigest of the file's bytes, read as a stream.
func fileDigest(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// appliedAgain is the files of the selection that earlier applies of the proposal changed,
// which go through the merge with the workspace, each with the entry. Hunks picked again are
// the exception: hunks of this revision's patch picked one at a time apply as picked, and a
// hunk picked twice is refused; hunks picked in a file an earlier apply changed otherwise are
// refused, since the hunks the review shows for it are the merge's.
func appliedAgain(l *Loaded, sel Selection, o ApplyOptions, prior *priorApplies) (map[string]string, []Problem) {
	if prior == nil || len(prior.paths) == 0 || sel.merging() {
		return nil, nil
	}
	files, probs := parsePatch(l.Patch, o.Rules, o.MaxPatchBytes)
	if len(probs) > 0 {
		return nil, probs
	}
	again := map[string]string{}
	for _, f := range files {
		ok, picked := selected(sel, f)
		if !ok {
			continue
		}
		for _, p := range slices.Compact([]string{f.NewName, f.OldName}) {
			for _, c := range prior.paths[p] {
				switch {
				case picked == nil:
					again[p] = c.entry
				case !c.sameRev || c.picked == nil:
					probs = append(probs, Problem{Path: p, Reason: fmt.Sprintf("an earlier apply of this proposal (ledger entry %s) changed this file: pick the hunks of its merge with the workspace, as the review lists them (--merge), not the patch's", c.entry)})
				default:
					for _, h := range picked {
						if slices.Contains(c.picked, h) {
							probs = append(probs, Problem{Path: p, Reason: fmt.Sprintf("hunk %d was applied already (ledger entry %s)", h, c.entry)})
						}
					}
				}
			}
		}
	}
	return again, probs
}

// againProblems refuses files an earlier apply of the proposal changed, when the proposal has
// no sandbox to merge them from.
func againProblems(again map[string]string) []Problem {
	var probs []Problem
	for _, p := range sortedKeys(boolSet(again)) {
		probs = append(probs, Problem{Path: p, Reason: fmt.Sprintf("an earlier apply of this proposal (ledger entry %s) changed this file, and there is no sandbox to merge it from: revert that apply first", again[p])})
	}
	return probs
}

func boolSet(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// refuseIfApplied refuses to do "what" to e's proposal while an apply of it stands (the
// caller holds the workspace lock).
func refuseIfApplied(workspace string, e *LedgerEntry, what string) error {
	lg, err := readProposalLedger(workspace, e.Proposal)
	if lg == nil {
		return err
	}
	for i := len(lg.Entries) - 1; i >= 0; i-- {
		prev := &lg.Entries[i]
		if prev.Kind == "apply" && prev.Proposal == e.Proposal && lg.Reverted[prev.ID] == "" {
			return fmt.Errorf("%s is applied (ledger entry %s, %s): revert it first (agentcanvas proposal revert %s), then %s", describeProposal(e, e.Proposal), prev.ID, prev.At, prev.ID, what)
		}
	}
	if err != nil {
		return fmt.Errorf("the apply ledger cannot be read whole, so whether %s is applied is not known: %w", describeProposal(e, e.Proposal), err)
	}
	return nil
}

// recoverWorkspace recovers an interrupted apply with the lock held. The callers' commands
// recover first and say so (the command line's recoverFirst, the sidecar when it starts); this
// guards against a journal left since, so that the ledger read next is the truth.
func recoverWorkspace(workspace string) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	_, err = recoverLocked(workspace, root)
	return err
}
