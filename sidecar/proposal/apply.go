package proposal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/statedir"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// Op names one filesystem step of an apply, for the fault-injection hook.
type Op string

const (
	OpRemove  Op = "remove"  // delete a file or symlink
	OpRmdir   Op = "rmdir"   // delete a folder the deletions left empty
	OpMkdir   Op = "mkdir"   // create a parent folder
	OpWrite   Op = "write"   // write a temporary file (called after half the data is written)
	OpSymlink Op = "symlink" // create a temporary symlink
	OpRename  Op = "rename"  // move a temporary file into place
	OpChmod   Op = "chmod"   // change only the permission bits of a file whose content stays
	OpObjects Op = "objects" // store the ledger's copies of every version
	OpJournal Op = "journal" // write the journal (nothing in the workspace has changed yet)
	OpLedger  Op = "ledger"  // write the ledger entry (the commit point)
	OpFinish  Op = "finish"  // write the status and the event (kill only: past the commit point)
	OpDone    Op = "done"    // remove the journal (kill only)
)

// ApplyOptions for Check and Apply.
type ApplyOptions struct {
	DryRun        bool           // check only (the --check of the command line)
	Rules         safepath.Rules // the person's allowed and blocked folders; zero: the built-in rules
	MaxPatchBytes int64          // 0 means MaxPatchBytes
	Flow          string         // event log flow; "" means DefaultFlow
	// Hook, if set, runs before each filesystem step and fails the step when it returns an
	// error. Tests use it to inject faults (permission denied on the Nth file, a full disk).
	Hook func(op Op, path string) error
	// Waiting, if set, is told who holds the workspace lock when the apply has to wait for it.
	Waiting func(holder string)
	// Accept, if set, sees the checked result (its files and warnings) with the workspace lock
	// held, before anything is written: a reason it returns holds the apply back (*HeldError).
	// So a decision on the check, such as auto-apply's "only when the check warns of nothing",
	// is made on the very workspace the apply then changes.
	Accept func(*Result) string
	// Confirm names the held files (holds.go: a control file, a name that looks like another)
	// the person confirmed, each by its path or by its name as shown (Hold.Shown). An apply
	// that touches a held file not named here is held back (*HeldError), a check too.
	Confirm []string
	// Reviewing: a review, not an apply. Holds are listed in Result.Held without holding
	// anything back, and a patch changed since it was made is a warning, not a refusal.
	Reviewing bool
	// Reviewed is the digest of the patch the person reviewed (Review.PatchDigest): when set,
	// an apply of any other patch is refused. Without it the patch must be the one the
	// proposal was made with or the one a review last recorded (integrity.go).
	Reviewed string
}

// HeldError is an apply held back, by ApplyOptions.Accept or because it touches held files
// the person has not confirmed (Held); nothing was written.
type HeldError struct {
	Reason string
	Held   []Hold // the unconfirmed holds, when they are the reason
}

func (e *HeldError) Error() string { return "not applied: " + e.Reason }

// Result of Check or Apply.
type Result struct {
	Applied  bool         `json:"applied"` // false for a dry run or a refusal
	DryRun   bool         `json:"dryRun"`
	Files    []FileResult `json:"files"`
	Warnings []string     `json:"warnings"`
	Problems []Problem    `json:"problems,omitempty"`
	// Merged lists the files applied through a three-way merge with the workspace (they had
	// changed since the proposal was made; rebase.go).
	Merged []string `json:"merged,omitempty"`
	// Ledger is the apply ledger entry that records this apply (ledger.go).
	Ledger string `json:"ledger,omitempty"`
	// Held are the files a person must confirm by name (holds.go), whether or not they were.
	Held []Hold `json:"held,omitempty"`
}

// Check is Apply with DryRun set.
func Check(ctx context.Context, workspace, ref string, sel Selection, o ApplyOptions) (*Result, error) {
	o.DryRun = true
	return Apply(ctx, workspace, ref, sel, o)
}

// Apply checks the proposal (or patch) ref against the workspace and, unless o.DryRun, applies
// the selection all-or-nothing, journalled (journal.go) and recorded in the ledger. A refusal
// returns *RefusedError with the Result listing the problems; the workspace is unchanged after
// any error.
func Apply(ctx context.Context, workspace, ref string, sel Selection, o ApplyOptions) (*Result, error) {
	if o.Flow != "" && !o.DryRun {
		if err := eventlog.CheckFlowName(o.Flow); err != nil {
			return nil, err
		}
	}
	l, err := Load(workspace, ref)
	if err != nil {
		return nil, err
	}
	e := entryFor(workspace, l)
	e.Patch, e.Part = PatchDigest(l.Patch), !sel.all() || sel.merging()
	if !sel.merging() {
		e.Picked = sel.Hunks
	}
	rec := &record{entry: e, loaded: l, once: true, what: "apply of " + describeProposal(e, ref), finish: func(res *Result) *journalFinish {
		f := &journalFinish{Proposal: e.Proposal, Flow: o.Flow, Event: "proposal_applied",
			Fields: map[string]any{"files": res.Files, "ledger": res.Ledger}}
		if len(res.Merged) > 0 {
			f.Fields["merged"] = res.Merged
		}
		if len(res.Warnings) > 0 {
			f.Fields["warnings"] = res.Warnings
		}
		if l.AgentDir != "" {
			var files []string
			for _, f := range res.Files {
				files = append(files, f.Path)
			}
			f.Status = &Status{State: "applied", Files: files}
		}
		return f
	}}
	return applyLoaded(ctx, workspace, l, sel, o, rec)
}

// ApplyPatch checks and applies patch bytes directly (no proposal, no events).
func ApplyPatch(ctx context.Context, workspace string, patch []byte, sel Selection, o ApplyOptions) (*Result, error) {
	return ApplyLoaded(ctx, workspace, &Loaded{Patch: patch}, sel, o)
}

// ApplyLoaded is Apply for an already loaded proposal; it writes no status, no event and no
// ledger entry (it is still journalled).
func ApplyLoaded(ctx context.Context, workspace string, l *Loaded, sel Selection, o ApplyOptions) (*Result, error) {
	return applyLoaded(ctx, workspace, l, sel, o, &record{what: "apply of a patch"})
}

// record is what an apply writes besides the workspace: its ledger entry (the commit point)
// and after it the proposal's status and the event.
type record struct {
	what   string                       // "apply of coder's proposal (run r1)", for the lock and recovery
	entry  *LedgerEntry                 // nil: no ledger entry
	loaded *Loaded                      // the proposal, for the status and the event; nil: load it
	finish func(*Result) *journalFinish // nil: nothing after the entry
	// once: the apply is of a proposal, applied at most once (once.go); prior is what the
	// ledger says of its earlier applies, read with the lock held before the plan is made.
	once  bool
	prior *priorApplies
}

// applyLoaded checks and applies l.
func applyLoaded(ctx context.Context, workspace string, l *Loaded, sel Selection, o ApplyOptions, rec *record) (*Result, error) {
	res := &Result{DryRun: o.DryRun, Files: []FileResult{}, Warnings: []string{}}
	if l.Proposal != nil && l.Proposal.Base.GitHead != "" {
		if head := sandbox.GitHead(workspace); head != l.Proposal.Base.GitHead {
			cur := head
			if cur == "" {
				cur = "none"
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("the workspace HEAD (%s) differs from the proposal's base.gitHead (%s); the files may have changed since the sandbox was prepared", cur, l.Proposal.Base.GitHead))
		}
	}
	planner := func(d *dirs) (*plan, []Problem) { return planApply(d, l, sel, o, res, rec.prior) }
	return applyPlanned(ctx, workspace, res, o, withProposalChecks(workspace, l, res, o, planner), rec)
}

// applyPlanned checks (planner makes the plan, reading the workspace through d) and applies,
// with the workspace lock held throughout: an interrupted apply found first is recovered, then
// the ledger's copies and the journal are written, then the workspace, then the ledger entry.
func applyPlanned(ctx context.Context, workspace string, res *Result, o ApplyOptions, planner func(d *dirs) (*plan, []Problem), rec *record) (*Result, error) {
	lk, err := wslock.Acquire(ctx, workspace, rec.what, wslock.Options{Waiting: o.Waiting})
	if err != nil {
		return nil, err
	}
	defer lk.Release()
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if notice, err := recoverLocked(workspace, root); err != nil {
		return nil, err
	} else if notice != "" {
		res.Warnings = append(res.Warnings, notice)
	}
	d := newDirs(root)
	defer d.close()
	pl, err := checkPlanned(workspace, root, d, planner, rec, res)
	if err != nil {
		return res, err
	}
	if err := holdBack(res, o); err != nil {
		return res, err
	}
	if o.Accept != nil {
		if why := o.Accept(res); why != "" {
			return res, &HeldError{Reason: why}
		}
	}
	if o.DryRun {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	t := &txn{root: root, dirs: d, hook: o.Hook, killAt: testKillStep()}
	if err := t.commit(workspace, pl, rec, res); err != nil {
		return res, err
	}
	t.finish(workspace, rec, res)
	return res, nil
}

// checkPlanned is the check, with the lock held: the ledger's word on earlier applies of the
// proposal (once.go), the plan, and whether its records fit their readers (records.go).
func checkPlanned(workspace string, root *os.Root, d *dirs, planner func(d *dirs) (*plan, []Problem), rec *record, res *Result) (*plan, error) {
	refuse := func(probs []Problem) (*plan, error) {
		res.Problems = probs
		return nil, &RefusedError{Problems: probs}
	}
	if err := rec.readPrior(workspace); err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			res.Problems = refused.Problems
		}
		return nil, err
	}
	pl, probs := planner(d)
	if len(probs) > 0 {
		return refuse(probs)
	}
	res.Files = pl.files
	res.Warnings = append(res.Warnings, pl.warnings...)
	if len(pl.files) == 0 {
		res.Warnings = append(res.Warnings, "nothing to apply: the patch (or the selection) holds no changes")
	}
	if probs := recordsFit(root, d, pl, rec, res); len(probs) > 0 {
		return refuse(probs)
	}
	return pl, nil
}

// finish is what an apply does past its commit point: the status and the event, then the
// journal's removal. What could not be written keeps the journal, holding only that, so the
// next command's recovery writes it: the status never stays behind the ledger.
func (t *txn) finish(workspace string, rec *record, res *Result) {
	res.Applied = true
	if rec.finish != nil {
		t.step(OpFinish, "")
		warn, left := finishRecord(workspace, rec.finish(res), rec.loaded)
		res.Warnings = append(res.Warnings, warn...)
		if left != nil && keepJournalFor(t.root, left) == nil {
			res.Warnings = append(res.Warnings, "the journal stays: the next agentcanvas command records what could not be recorded now")
			return
		}
	}
	t.step(OpDone, "")
	if err := removeJournal(t.root); err != nil {
		res.Warnings = append(res.Warnings, "could not remove the finished apply's journal (the next command finishes it): "+err.Error())
	}
}

// keepJournalFor rewrites the journal of an apply past its commit point with left as what is
// still to write after it.
func keepJournalFor(root *os.Root, left *journalFinish) error {
	j, err := readJournal(root)
	if err != nil || j == nil {
		return fmt.Errorf("the journal cannot be read again: %v", err)
	}
	j.Finish = left
	return j.write(root)
}

// commit is the apply proper: ledger copies, journal, workspace, ledger entry. After an error
// the workspace is as it was and no journal is left, or, when the rollback itself failed,
// the journal and every kept old version stay for the next command's recovery.
func (t *txn) commit(workspace string, pl *plan, rec *record, res *Result) error {
	if err := checkSpace(t.root, workspace, pl); err != nil {
		return err
	}
	rc, err := makeRecords(t.dirs, pl, rec, res)
	if err != nil {
		res.Ledger = ""
		return fmt.Errorf("apply refused, nothing was changed: %w", err)
	}
	if err := t.step(OpObjects, ""); err != nil {
		return t.failed(err, workspace)
	}
	if err := storeObjects(t.root, rc.versions); err != nil {
		return t.failed(err, workspace)
	}
	syncObjects(t.root, true) // started now, waited for at the commit point
	if err := t.step(OpJournal, ""); err != nil {
		return t.failed(err, workspace)
	}
	if err := writeDurable(t.root, journalFile, rc.journal); err != nil {
		return t.failed(fmt.Errorf("the journal %s: %w", journalFile, err), workspace)
	}
	err = t.run(pl)
	if err == nil && rec.entry != nil {
		err = t.writeEntry(rec.entry.ID, rc.entry)
	}
	if err != nil {
		res.Ledger = ""
		return t.undoAll(err, workspace, rec)
	}
	t.dropAside()
	return nil
}

// writeEntry writes the ledger entry: the commit point.
func (t *txn) writeEntry(id string, entry []byte) error {
	if err := t.step(OpLedger, ""); err != nil {
		return err
	}
	if err := syncObjects(t.root, false); err != nil {
		return fmt.Errorf("the ledger's copies of the versions could not be made durable (an apply that could not be reverted does not happen): %w", err)
	}
	if err := writeLedgerEntry(t.root, id, entry); err != nil {
		return fmt.Errorf("its ledger entry could not be written (an apply that could not be reverted does not happen): %w", err)
	}
	return nil
}

// undoAll rolls back after err. Only a rollback that succeeded removes the old versions kept
// aside and the journal: after one that failed they may be the only whole copies, and the next
// command's recovery needs them.
func (t *txn) undoAll(err error, workspace string, rec *record) error {
	if rec.entry != nil {
		t.root.Remove(entryPath(rec.entry.ID)) // first: with it, recovery would finish the apply
	}
	rerr := t.rollback()
	if rerr == nil {
		t.dropAside()
		rerr = removeJournal(t.root)
	}
	if rerr != nil {
		return fmt.Errorf("apply failed: %v; ROLLBACK INCOMPLETE (the next agentcanvas command finishes it from the journal): %v", t.explain(err, workspace), rerr)
	}
	return fmt.Errorf("apply failed, workspace restored: %w", t.explain(err, workspace))
}

// failed is an error before any workspace file changed.
func (t *txn) failed(err error, workspace string) error {
	emptyTmp(t.root)
	return fmt.Errorf("apply failed, nothing was changed: %w", t.explain(err, workspace))
}

// explain adds the free space to a full disk's error (which names the file already).
func (t *txn) explain(err error, workspace string) error {
	if errors.Is(err, syscall.ENOSPC) {
		free, _ := freeSpace(t.root)
		return fmt.Errorf("%w (the disk of %s has %s free)", err, workspace, byteSize(max(free, 0)))
	}
	return err
}

// finishRecord writes the status and the event of an apply past its commit point; problems
// are warnings, for the apply has happened. l nil: loaded from f.Proposal. left is what could
// not be written (nil: everything was).
func finishRecord(workspace string, f *journalFinish, l *Loaded) (warn []string, left *journalFinish) {
	if f == nil {
		return nil, nil
	}
	if l == nil {
		l = &Loaded{PatchPath: filepath.Join(workspace, filepath.FromSlash(f.Proposal))}
		if strings.HasSuffix(f.Proposal, "/"+JSONFile) {
			if got, err := Load(workspace, f.Proposal); err == nil {
				l = got
			}
		}
	}
	rest := *f
	if f.Status != nil && l.AgentDir != "" {
		if err := writeStatus(l, *f.Status); err != nil {
			warn = append(warn, "could not record the status: "+err.Error())
			left = &rest
		} else {
			rest.Status = nil
		}
	}
	if f.Event != "" {
		if err := logEvent(workspace, f.Flow, l, f.Event, f.Fields); err != nil {
			warn = append(warn, "could not write the event log: "+err.Error())
			left = &rest
		} else {
			rest.Event = ""
		}
	}
	return warn, left
}

// planApply checks the patch against the workspace: as made, or, when the selection speaks of
// merges or whole files are asked for and the patch no longer applies because the workspace has
// changed since, re-based on the workspace with a three-way merge per changed file. Either way
// the plan comes from buildPlan: every rule, every name, every preimage.
func planApply(d *dirs, l *Loaded, sel Selection, o ApplyOptions, res *Result, prior *priorApplies) (*plan, []Problem) {
	again, probs := appliedAgain(l, sel, o, prior)
	if len(probs) > 0 {
		return nil, probs
	}
	var direct []Problem
	if !sel.merging() && len(again) == 0 {
		pl, probs := buildPlan(d, l.Patch, sel, o.Rules, o.MaxPatchBytes)
		// Picked hunks are the patch's own; a whole file picked (or everything) is merged
		// when the workspace has changed since.
		if len(probs) == 0 || len(sel.Hunks) > 0 {
			return pl, probs
		}
		direct = probs
	}
	files, probs := parsePatch(l.Patch, o.Rules, o.MaxPatchBytes)
	if len(probs) > 0 {
		return nil, probs
	}
	bases := prior.mergeBases()
	pm, probs := mergeProposal(d, l, files, bases)
	switch {
	case pm == nil && len(probs) == 0 && len(again) > 0:
		return nil, againProblems(again)
	case pm == nil && len(probs) == 0 && sel.merging():
		return nil, []Problem{{Reason: "this patch has no sandbox (input/ and work/) to merge from, or it renames or copies files"}}
	case direct != nil && (pm == nil || len(probs) == 0 && !pm.moved()):
		return nil, direct // the workspace has not moved: the patch's own problems stand
	case len(probs) > 0:
		return nil, probs
	}
	patch, msel, merged, probs := pm.mergedPatch(sel, mergeLabelsFor(l))
	if len(probs) > 0 {
		return nil, probs
	}
	pl, probs := buildPlan(d, patch, msel, o.Rules, noPatchLimit)
	if len(probs) == 0 && len(merged) > 0 {
		res.Merged = merged
		res.Warnings = append(res.Warnings, mergedWarnings(merged, bases)...)
	}
	return pl, probs
}

// mergedWarnings say which files were merged, and from which base.
func mergedWarnings(merged []string, bases map[string]*LedgerBlob) []string {
	var fromInput, fromApply []string
	for _, p := range merged {
		if bases[p] != nil {
			fromApply = append(fromApply, p)
		} else {
			fromInput = append(fromInput, p)
		}
	}
	var out []string
	if len(fromInput) > 0 {
		out = append(out, fmt.Sprintf("merged with the workspace (three-way, base: the sandbox's input/): %s changed since the proposal was made", strings.Join(fromInput, ", ")))
	}
	if len(fromApply) > 0 {
		out = append(out, fmt.Sprintf("merged with the workspace (three-way, base: the file as an earlier apply of this proposal wrote it): %s; only what the worker changed since is applied", strings.Join(fromApply, ", ")))
	}
	return out
}

// mergeLabelsFor names the sides in conflict markers a person asks for.
func mergeLabelsFor(l *Loaded) mergeLabels {
	labels := mergeLabels{Ours: "workspace", Theirs: "proposal"}
	if l.Proposal != nil {
		labels.Theirs = fmt.Sprintf("%s (run %s)", l.Proposal.AgentID, l.Proposal.RunID)
	}
	return labels
}

// backup is the byte-exact state of one path before the apply touched it.
type backup struct {
	kind fileKind
	perm fs.FileMode
	data []byte // content or symlink target
	// stamp is what lstat said just before data was read, at seen (stamp.go).
	stamp fileStamp
	seen  time.Time
}

type txn struct {
	root   *os.Root // rollback goes through it, by full paths
	dirs   *dirs    // the forward steps go through per-folder handles
	hook   func(Op, string) error
	undo   []func() error
	killAt int // testKillStep; 0: off
	steps  int
	aside  []string // the replaced and deleted files, kept (swapped-out names, .agentcanvas/tmp) until the apply stands
}

// step runs before each step of the apply: the test kill switch, then the fault hook (which
// past the commit point, OpFinish and OpDone, cannot fail the apply).
func (t *txn) step(op Op, p string) error {
	t.steps++
	if t.killAt > 0 && t.steps == t.killAt {
		killSelf()
	}
	if t.hook != nil && op != OpFinish && op != OpDone {
		if err := t.hook(op, p); err != nil {
			return fmt.Errorf("%s %s: %w", op, p, err)
		}
	}
	return nil
}

// stepping: some step has a hook, so a write is split to let a fault land mid-file.
func (t *txn) stepping() bool { return t.hook != nil || t.killAt > 0 }

// unchanged checks, just before p is replaced or removed, that it is still what the plan read:
// an editor that saved the file since must not lose that save.
func (t *txn) unchanged(p string, old *backup) error {
	if old != nil && old.stamp.settled(old.seen) {
		if fi, err := t.dirs.lstat(p); err == nil && stampOf(fi) == old.stamp {
			return nil // one lstat instead of a read (stamp.go says when that is enough)
		}
	}
	same, err := diskIs(t.dirs, p, sideOfBackup(old)) // a block at a time: no second copy of a big file
	if err == nil && !same {
		err = errors.New("it changed while the apply ran (it is no longer what the check read)")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// restore puts a backup back at p (or removes p when there was nothing).
func (t *txn) restore(p string, b *backup) error {
	if b == nil {
		err := t.root.Remove(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return restoreSide(t.root, p, sideOfBackup(b), b.perm)
}

// tempName is a fresh temporary name in p's folder: .agentcanvas-<16 hex>.tmp.
func tempName(p string) string { return statedir.TempName(path.Dir(p)) }

// isTempName says whether p's last element is a name tempName makes.
func isTempName(p string) bool { return statedir.IsTempName(p) }

func (t *txn) run(pl *plan) error {
	for _, del := range pl.deletes {
		p, b := del.path, del.old
		if err := t.step(OpRemove, p); err != nil {
			return err
		}
		if err := t.unchanged(p, b); err != nil {
			return err
		}
		if err := t.removeKeeping(p, del.aside, b); err != nil {
			return err
		}
		// git removes the folders a deletion leaves empty.
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			fi, err := t.dirs.lstat(d)
			if err != nil || !fi.IsDir() {
				break
			}
			if err := t.step(OpRmdir, d); err != nil {
				return err
			}
			if err := t.dirs.rmdir(d); err != nil {
				break // not empty: the folder stays, as with git
			}
			perm := fi.Mode().Perm()
			t.undo = append(t.undo, func() error { return t.root.Mkdir(d, perm) })
		}
	}
	return t.writeAll(pl.writes)
}

func (t *txn) mkdirs(dir string) error {
	if dir == "." {
		return nil
	}
	comps := strings.Split(dir, "/")
	for i := range comps {
		d := strings.Join(comps[:i+1], "/")
		if t.dirs.has(d) {
			continue // opened as a folder already
		}
		fi, err := t.dirs.lstat(d)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a folder", d)
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := t.step(OpMkdir, d); err != nil {
			return err
		}
		if err := t.dirs.mkdir(d, 0o755); err != nil {
			return err
		}
		t.undo = append(t.undo, func() error { return t.root.Remove(d) })
	}
	return nil
}

func (t *txn) rollback() error {
	var errs []error
	for i := len(t.undo) - 1; i >= 0; i-- {
		if err := t.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	t.undo = nil
	return errors.Join(errs...)
}
