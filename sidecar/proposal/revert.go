package proposal

// Revert takes one apply back out of the workspace, leaving whatever was applied or edited
// after it in place: each file is merged three ways with base the file just after that apply,
// ours the file now and theirs the file just before it (from the ledger's copies), so later
// changes elsewhere in the file stay and the apply's own lines go. When a later change touches
// those lines the revert does not apply and nothing is written; the patch it makes goes
// through the same checks and the same all-or-nothing apply as any proposal.

import (
	"context"
	"fmt"
	"io/fs"
	"runtime"
	"strconv"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// Revert reverts the apply ref names: a ledger entry id, or a proposal (proposal.json, its
// sandbox folder) whose latest apply is meant. With o.DryRun it only checks. The revert is
// itself a ledger entry (and can be reverted in turn).
func Revert(ctx context.Context, workspace, ref string, o ApplyOptions) (*Result, error) {
	if o.Flow != "" && !o.DryRun {
		if err := eventlog.CheckFlowName(o.Flow); err != nil {
			return nil, err
		}
	}
	lg, lerr := ReadLedger(workspace)
	if lg == nil {
		return nil, lerr
	}
	e, err := lg.find(ref)
	if err != nil && !ValidLedgerID(ref) {
		if l, lerr2 := Load(workspace, ref); lerr2 == nil && l.AgentDir != "" {
			e, err = lg.find(proposalKey(workspace, l.AgentDir))
		}
	}
	if err != nil {
		if lerr != nil {
			err = fmt.Errorf("%w (and %v)", err, lerr)
		}
		return nil, err
	}
	if by, done := lg.Reverted[e.ID]; done {
		return nil, fmt.Errorf("ledger entry %s was reverted already (by %s)", e.ID, by)
	}
	res := &Result{DryRun: o.DryRun, Files: []FileResult{}, Warnings: []string{}}
	rev := &LedgerEntry{Kind: "revert", Reverts: e.ID, RunID: e.RunID, AgentID: e.AgentID, Proposal: e.Proposal, Notes: e.Notes, Origin: e.Origin}
	flow := o.Flow
	if flow == "" && e.Origin != nil {
		flow = e.Origin.Flow
	}
	rec := &record{entry: rev, what: "revert of " + describeProposal(e, ref), finish: func(res *Result) *journalFinish {
		return &journalFinish{Proposal: e.Proposal, Flow: flow, Event: "proposal_reverted",
			Status: &Status{State: "reverted", Reason: "ledger entry " + e.ID},
			Fields: map[string]any{"reverts": e.ID, "ledger": res.Ledger, "files": res.Files}}
	}}
	return applyPlanned(ctx, workspace, res, o, func(d *dirs) (*plan, []Problem) {
		// Again with the lock held: a revert that ran meanwhile has taken e out already.
		if now, _ := ReadLedger(workspace); now != nil && now.Reverted[e.ID] != "" {
			return nil, []Problem{{Reason: fmt.Sprintf("ledger entry %s was reverted already (by %s)", e.ID, now.Reverted[e.ID])}}
		}
		return planRevert(d, e, o)
	}, rec)
}

// bigRead is how much a revert reads to make its patch before it collects that garbage.
const bigRead = 64 << 20

// planRevert makes the patch that takes e's changes out of the workspace as it is, and checks it.
func planRevert(d *dirs, e *LedgerEntry, o ApplyOptions) (*plan, []Problem) {
	var probs []Problem
	var patch []byte
	objs := openObjects(d.root)
	defer objs.close()
	read := 0
	for _, f := range e.Files {
		secs, n, why := revertSections(d, objs, f, o.Rules)
		read += n
		if why != "" {
			probs = append(probs, Problem{Path: f.Path, Reason: why})
			continue
		}
		for _, s := range secs {
			patch = append(patch, s...)
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	if read > bigRead {
		// The versions read to make the patch are garbage now, and the check reads the
		// files again: collect them first, or a big file is in memory four times at once.
		runtime.GC()
	}
	pl, probs := buildPlan(d, patch, Selection{}, o.Rules, noPatchLimit)
	if pl != nil {
		keepPerms(pl, e)
	}
	return pl, probs
}

// revertSections is the patch that takes f's change out of the file as it is now, or why it
// cannot be made. The file is compared with the versions by blob id first, so that a file the
// apply left as it was (the usual case) costs its own bytes and its old version's, not the
// apply's version besides.
func revertSections(d *dirs, objs *objects, f LedgerFile, rules safepath.Rules) (secs [][]byte, read int, why string) {
	// The ledger is a file in the workspace: its names get every rule a patch's do before
	// anything is read.
	if c, err := safepath.Clean(f.Path, rules); err != nil || c != f.Path {
		reason := "the name is not in canonical form"
		if err != nil {
			reason = err.(*safepath.Error).Reason
		}
		return nil, 0, "the ledger names this path: " + reason
	}
	cur, err := readSideAt(d, f.Path)
	if err != nil {
		return nil, 0, err.Error()
	}
	read = len(cur.data)
	var target side
	switch now := blobOf(cur); {
	case sameBlob(now, f.Before):
		return nil, read, "" // already as it was before (reverted by hand)
	case sameBlob(now, f.After):
		if target, err = objs.read(f.Before); err != nil {
			return nil, read, err.Error()
		}
	default:
		before, err := objs.read(f.Before)
		var after side
		if err == nil {
			after, err = objs.read(f.After)
		}
		if err != nil {
			return nil, read, err.Error()
		}
		read += len(before.data) + len(after.data)
		if target, why = revertTarget(before, after, cur); why != "" {
			return nil, read, "the revert does not apply: " + why
		}
		if target.equal(cur) {
			return nil, read, ""
		}
	}
	read += len(target.data)
	secs, _, _, err = changeSections(f.Path, cur, target)
	if err != nil {
		return nil, read, err.Error()
	}
	return secs, read, ""
}

// keepPerms gives a file the revert makes again (the apply had deleted it) the permission bits
// it had, as the ledger recorded them: a 0600 file must not come back readable by all.
func keepPerms(pl *plan, e *LedgerEntry) {
	perms := map[string]fs.FileMode{}
	for _, f := range e.Files {
		if p, err := strconv.ParseUint(f.Perm, 8, 32); err == nil {
			perms[f.Path] = fs.FileMode(p) & fs.ModePerm
		}
	}
	for i, w := range pl.writes {
		if perm, ok := perms[w.path]; ok && w.old == nil && w.kind == kindFile {
			pl.writes[i].perm = perm
		}
	}
}

// revertTarget is the file without the apply's change (before → after), given how it is now;
// or why that cannot be worked out.
func revertTarget(before, after, cur side) (side, string) {
	switch {
	case cur.equal(after):
		return before, ""
	case cur.equal(before):
		return cur, ""
	case !after.exists:
		return side{}, "the apply deleted this file, and it exists again"
	case !cur.exists:
		return side{}, "the file was deleted after the apply"
	case !before.exists:
		return side{}, "the apply added this file, and it has changed since"
	case !before.text() || !after.text() || !cur.text():
		return side{}, "a binary file or symlink that has changed since the apply"
	}
	base, ours, theirs := splitLines(after.data), splitLines(cur.data), splitLines(before.data)
	chunks := merge3(base, ours, theirs)
	var clash []string
	for _, c := range chunks {
		if c.kind == mergeConflict {
			clash = append(clash, LineRange{c.ours0 + 1, c.ours1 - c.ours0}.String())
		}
	}
	if len(clash) > 0 {
		return side{}, fmt.Sprintf("%s of the file changed since the apply, over or next to the lines it wrote", strings.Join(clash, ", "))
	}
	mode := cur.mode
	if cur.mode == after.mode {
		mode = before.mode
	}
	return side{exists: true, mode: mode, data: renderMerge(base, ours, theirs, chunks, func(int, mergeChunk) resolution { return resolution{} }, mergeLabels{})}, ""
}
