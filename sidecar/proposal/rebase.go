package proposal

// Re-basing a proposal on the workspace as it is now. A proposal's patch is made against the
// sandbox's input/ snapshot; once another proposal (or the person) has changed a file since,
// the patch's hunks no longer sit where they were made. Each such file is merged three ways
// (base: input/, ours: the workspace now, theirs: work/) with merge.go: the proposal's changes
// that merge cleanly stay applicable hunk by hunk, and each one that collides with what changed
// in the workspace is a conflict the person resolves (mine, theirs, both, their own text, or
// conflict markers when they ask for them). The result is a patch against the workspace as it
// is, checked and applied all-or-nothing like any other (buildPlan, txn): nothing here writes.

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Resolution settles one conflict of a merge. Take is "mine" (the workspace's lines), "theirs"
// (the proposal's), "both" (the workspace's, then the proposal's), "edit" (Text) or "markers"
// (both sides between git's conflict markers, written into the file: only when asked for).
type Resolution struct {
	Path string `json:"path"`
	Hunk int    `json:"hunk"`
	Take string `json:"take"`
	Text string `json:"text,omitempty"`
}

var takes = map[string]take{"mine": takeOurs, "theirs": takeTheirs, "both": takeBoth, "edit": takeText, "markers": takeMarkers}

// ReviewMerge is a file the workspace changed since the sandbox was made, merged: the review
// shows these hunks instead of the patch's, numbered for Selection.Merge and Resolution.Hunk.
type ReviewMerge struct {
	// Workspace is the blob id of the workspace file the merge was made against ("" when the
	// file is missing); give it back in Selection.Against so a file changed since is refused.
	Workspace string `json:"workspace"`
	// State: "clean" (every hunk applies), "conflicts", or "applied" (the workspace already has
	// every change of the proposal in this file).
	State     string      `json:"state"`
	Conflicts int         `json:"conflicts"`
	Hunks     []MergeHunk `json:"hunks"`
}

// MergeHunk is one change of the proposal against the workspace now. Start and Count are the
// workspace lines it replaces (Count 0: inserted before line Start). Ours, Theirs and Base are
// the lines of the workspace, of the proposal's work/ and of its input/ (whole text).
type MergeHunk struct {
	Index    int    `json:"index"`
	Conflict bool   `json:"conflict"`
	Start    int    `json:"start"`
	Count    int    `json:"count"`
	Ours     string `json:"ours"`
	Theirs   string `json:"theirs"`
	Base     string `json:"base"`
	// Whole: the file cannot be merged line by line (a binary file, a symlink, a file one side
	// deletes): the hunk is the whole file, resolved by mine or theirs. Reason says why.
	Whole  bool   `json:"whole,omitempty"`
	Reason string `json:"reason,omitempty"`
	// From names the applied proposals the workspace's lines came from, when the apply ledger
	// knows ("w1 (run r1)").
	From []string `json:"from,omitempty"`
}

// fileMerge is one path of a proposal against the workspace.
type fileMerge struct {
	path           string
	in, work, ws   side
	moved          bool   // the workspace differs from input/
	whole          string // non-empty: merged as a whole file, for this reason
	base, ours, th []string
	chunks         []mergeChunk
	hunks          []int // chunk index of each hunk (numbered from 1)
}

// conflicts counts the hunks that conflict.
func (fm *fileMerge) conflicts() int {
	n := 0
	for _, i := range fm.hunks {
		if fm.whole != "" || fm.chunks[i].kind == mergeConflict {
			n++
		}
	}
	return n
}

func (fm *fileMerge) review(labels mergeLabels) *ReviewMerge {
	rm := &ReviewMerge{Workspace: fm.ws.oid(), State: "clean", Hunks: []MergeHunk{}}
	if fm.whole != "" && !fm.ws.equal(fm.work) {
		h := MergeHunk{Index: 1, Conflict: true, Start: 1, Count: len(splitLines(fm.ws.data)), Whole: true, Reason: fm.whole}
		if fm.ws.text() {
			h.Ours = string(fm.ws.data)
		}
		if fm.work.text() {
			h.Theirs = string(fm.work.data)
		}
		if fm.in.text() {
			h.Base = string(fm.in.data)
		}
		rm.Hunks = append(rm.Hunks, h)
	}
	for k, i := range fm.hunks {
		c := fm.chunks[i]
		rm.Hunks = append(rm.Hunks, MergeHunk{Index: k + 1, Conflict: c.kind == mergeConflict, Start: c.ours0 + 1, Count: c.ours1 - c.ours0,
			Ours: strings.Join(fm.ours[c.ours0:c.ours1], ""), Theirs: strings.Join(fm.th[c.theirs0:c.theirs1], ""), Base: strings.Join(fm.base[c.base0:c.base1], "")})
	}
	rm.Conflicts = 0
	for _, h := range rm.Hunks {
		if h.Conflict {
			rm.Conflicts++
		}
	}
	switch {
	case len(rm.Hunks) == 0:
		rm.State = "applied"
	case rm.Conflicts > 0:
		rm.State = "conflicts"
	}
	return rm
}

// mergeFileAt merges one path: in and work from the sandbox, ws from the workspace.
func mergeFileAt(name string, in, work, ws side) *fileMerge {
	return mergeFrom(name, in, work, ws, false)
}

// mergeFrom is mergeFileAt with base as the merge's base; rebased: base is not the sandbox's
// input/ but the file as an earlier apply of the proposal wrote it, so the file is merged
// even when the workspace still has that version (the patch no longer applies).
func mergeFrom(name string, in, work, ws side, rebased bool) *fileMerge {
	fm := &fileMerge{path: name, in: in, work: work, ws: ws, moved: rebased || !ws.equal(in)}
	if !fm.moved || ws.equal(work) {
		return fm // nothing to merge: the patch applies as made, or the workspace has it already
	}
	switch {
	case in.exists && !work.exists:
		fm.whole = "the proposal deletes this file, which has changed in the workspace since"
	case in.exists && !ws.exists:
		fm.whole = "the workspace no longer has this file (deleted since); the proposal edits it"
	case !in.exists && !work.exists:
		fm.whole = "the file appeared in the workspace since"
	case !in.text() || !work.text() || !ws.text():
		fm.whole = "a binary file or symlink that has changed in the workspace since"
	}
	if fm.whole != "" {
		return fm
	}
	fm.base, fm.ours, fm.th = splitLines(in.data), splitLines(ws.data), splitLines(work.data)
	fm.chunks = merge3(fm.base, fm.ours, fm.th)
	for i, c := range fm.chunks {
		if c.kind == mergeTheirs || c.kind == mergeConflict {
			fm.hunks = append(fm.hunks, i)
		}
	}
	return fm
}

// result is the version of the file the person's choices make. pick nil means every clean
// hunk (and every conflict must be resolved); otherwise the hunks to apply, conflicts among
// them needing a resolution; hunks not picked keep the workspace's lines.
func (fm *fileMerge) result(pick map[int]bool, res map[int]Resolution, labels mergeLabels) (side, []Problem) {
	var probs []Problem
	bad := func(k int, format string, a ...any) {
		probs = append(probs, Problem{Path: fm.path, Reason: fmt.Sprintf("hunk %d of the merge: ", k) + fmt.Sprintf(format, a...)})
	}
	for k := range res {
		if k < 1 || k > max(len(fm.hunks), btoi(fm.whole != "")) {
			bad(k, "does not exist (the merge has %d)", max(len(fm.hunks), btoi(fm.whole != "")))
		}
	}
	for k := range pick {
		if k < 1 || k > max(len(fm.hunks), btoi(fm.whole != "")) {
			bad(k, "does not exist (the merge has %d)", max(len(fm.hunks), btoi(fm.whole != "")))
		}
	}
	if len(probs) > 0 {
		return side{}, probs
	}
	if !fm.moved || fm.ws.equal(fm.work) {
		return fm.ws, nil // nothing to merge: the workspace has the file as the proposal left it
	}
	if fm.whole != "" {
		r, ok := res[1]
		switch {
		case !ok && (pick == nil || pick[1]):
			bad(1, "conflicts: %s (resolve it with mine or theirs)", fm.whole)
		case !ok || r.Take == "mine":
			return fm.ws, nil
		case r.Take == "theirs":
			return fm.work, nil
		default:
			bad(1, "%s: only mine or theirs can resolve it, not %q", fm.whole, r.Take)
		}
		return side{}, probs
	}
	chosen := map[int]resolution{}
	for k, i := range fm.hunks {
		n := k + 1
		c := fm.chunks[i]
		r, resolved := res[n]
		picked := pick == nil || pick[n]
		switch {
		case resolved:
			t, ok := takes[r.Take]
			if !ok {
				bad(n, "unknown resolution %q (mine, theirs, both, markers, or text of your own)", r.Take)
				continue
			}
			text := []byte(r.Text)
			if t == takeText && len(text) > 0 && text[len(text)-1] != '\n' && c.ours1 < len(fm.ours) {
				if needsCR(fm.base, fm.ours, fm.th, c) {
					text = append(text, '\r')
				}
				text = append(text, '\n') // the lines after it stay lines of their own
			}
			chosen[i] = resolution{take: t, text: text}
		case c.kind == mergeConflict && picked:
			bad(n, "conflicts with the workspace's %s (resolve it: mine, theirs, both, markers, or text of your own)", LineRange{c.ours0 + 1, c.ours1 - c.ours0})
		case !picked:
			chosen[i] = resolution{take: takeOurs}
		}
	}
	if len(probs) > 0 {
		return side{}, probs
	}
	data := renderMerge(fm.base, fm.ours, fm.th, fm.chunks, func(i int, c mergeChunk) resolution { return chosen[i] }, labels)
	mode := fm.ws.mode
	if fm.in.mode != fm.work.mode || !fm.ws.exists {
		mode = fm.work.mode
	}
	return side{exists: true, mode: mode, data: data}, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// proposalMerge is a whole proposal against the workspace: its patch's sections grouped by
// path, and each path's merge.
type proposalMerge struct {
	paths    []string
	sections map[string][][]byte
	files    map[string]*gitdiff.File // the last section of each path
	merges   map[string]*fileMerge
}

func (pm *proposalMerge) moved() bool {
	for _, fm := range pm.merges {
		if fm.moved {
			return true
		}
	}
	return false
}

// mergeProposal merges every path of a sandbox proposal's patch. A patch without a sandbox
// (a bare .patch), or with renames or copies, has nothing to merge from: nil. The base of each
// merge is the sandbox's input/, or, for a file an earlier apply of the proposal wrote as the
// worker had it (bases, from the ledger: once.go), that version: then what the worker changed
// since is what is merged in.
func mergeProposal(d *dirs, l *Loaded, files []*gitdiff.File, bases map[string]*LedgerBlob) (*proposalMerge, []Problem) {
	if l.AgentDir == "" {
		return nil, nil
	}
	for _, f := range files {
		if f.IsRename || f.IsCopy {
			return nil, nil
		}
	}
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return nil, []Problem{{Reason: "the sandbox cannot be read: " + err.Error()}}
	}
	defer root.Close()
	agent := newDirs(root)
	defer agent.close()
	pm := &proposalMerge{sections: map[string][][]byte{}, files: map[string]*gitdiff.File{}, merges: map[string]*fileMerge{}}
	secs := splitSections(l.Patch)
	var probs []Problem
	for i, f := range files {
		name := f.NewName
		if name == "" {
			name = f.OldName
		}
		if _, seen := pm.sections[name]; !seen {
			pm.paths = append(pm.paths, name)
		}
		pm.sections[name] = append(pm.sections[name], secs[i])
		pm.files[name] = f
	}
	objs := openObjects(d.root)
	defer objs.close()
	for _, name := range pm.paths {
		in, err := readSideAt(agent, path.Join("input", name))
		base, rebased := bases[name]
		if rebased && err == nil {
			in, err = objs.read(base)
		}
		if err == nil {
			var work side
			work, err = readSideAt(agent, path.Join("work", name))
			if err == nil {
				var ws side
				if ws, err = readSideAt(d, name); err == nil {
					if why := sandboxDisagrees(files, name, in, work, rebased); why != "" {
						probs = append(probs, Problem{Path: name, Reason: "cannot be merged: " + why})
						continue
					}
					pm.merges[name] = mergeFrom(name, in, work, ws, rebased)
					continue
				}
			}
		}
		probs = append(probs, Problem{Path: name, Reason: "cannot be merged: " + err.Error()})
	}
	return pm, probs
}

// sandboxDisagrees says why input/ and work/ are not what the patch was made from (their blob
// ids against the patch's index lines): then the patch, not the sandbox, is what was reviewed.
func sandboxDisagrees(files []*gitdiff.File, name string, in, work side, rebased bool) string {
	var first, last *gitdiff.File
	for _, f := range files {
		if f.NewName == name || f.NewName == "" && f.OldName == name {
			if first == nil {
				first = f
			}
			last = f
		}
	}
	if first == nil {
		return "not in the patch"
	}
	if o := first.OldOIDPrefix; !rebased && isFullOID(o) && o != zeroOID && o != in.oid() {
		return "the sandbox's input/ no longer matches the patch"
	}
	if o := last.NewOIDPrefix; isFullOID(o) && o != zeroOID && o != work.oid() {
		return "the sandbox's work/ no longer matches the patch"
	}
	return ""
}

// mergedPatch is the patch (and the selection of it) that applies the person's choices to the
// workspace as it is: the original sections of the paths the workspace has not changed (with
// the selection's patch hunks), and a section made from each merged path's result.
func (pm *proposalMerge) mergedPatch(sel Selection, labels mergeLabels) ([]byte, Selection, []string, []Problem) {
	var probs []Problem
	var merged []string
	var patch bytes.Buffer
	out := Selection{}
	all := sel.all() && len(sel.Merge) == 0 && len(sel.Resolve) == 0
	res := map[string]map[int]Resolution{}
	for _, r := range sel.Resolve {
		if res[r.Path] == nil {
			res[r.Path] = map[int]Resolution{}
		}
		if _, dup := res[r.Path][r.Hunk]; dup {
			probs = append(probs, Problem{Path: r.Path, Reason: fmt.Sprintf("hunk %d of the merge is resolved twice", r.Hunk)})
		}
		res[r.Path][r.Hunk] = r
	}
	known := map[string]bool{}
	for _, p := range pm.paths {
		known[p] = true
	}
	for _, names := range [][]string{slices.Sorted(maps.Keys(sel.Merge)), slices.Sorted(maps.Keys(res)), slices.Sorted(maps.Keys(sel.Against))} {
		for _, p := range names {
			if !known[p] {
				probs = append(probs, Problem{Path: p, Reason: "the selection names a file the patch does not touch"})
			}
		}
	}
	for p, oid := range sel.Against {
		if fm := pm.merges[p]; fm != nil && fm.ws.oid() != oid {
			probs = append(probs, Problem{Path: p, Reason: "changed in the workspace since the review; review it again"})
		}
	}
	for _, p := range pm.paths {
		fm := pm.merges[p]
		_, inMerge := sel.Merge[p]
		_, resolved := res[p]
		if !fm.moved {
			if inMerge || resolved {
				probs = append(probs, Problem{Path: p, Reason: "has not changed in the workspace since the proposal was made: select its patch hunks (hunks), not merge hunks"})
				continue
			}
			for _, s := range pm.sections[p] {
				patch.Write(s)
			}
			if all {
				continue
			}
			if h, ok := sel.Hunks[p]; ok {
				if out.Hunks == nil {
					out.Hunks = map[string][]int{}
				}
				out.Hunks[p] = h
			} else if slices.Contains(sel.Files, p) {
				out.Files = append(out.Files, p)
			}
			continue
		}
		if _, ok := sel.Hunks[p]; ok {
			probs = append(probs, Problem{Path: p, Reason: "has changed in the workspace since the proposal was made: its hunks are the merge's (select them with merge, as the review's merge lists them)"})
			continue
		}
		var pick map[int]bool
		switch {
		case all || slices.Contains(sel.Files, p):
			pick = nil // every clean hunk; every conflict must be resolved
		case inMerge || resolved:
			pick = map[int]bool{}
			for _, k := range sel.Merge[p] {
				pick[k] = true
			}
			for k := range res[p] {
				pick[k] = true
			}
		default:
			continue // not selected
		}
		final, ps := fm.result(pick, res[p], labels)
		if len(ps) > 0 {
			probs = append(probs, ps...)
			continue
		}
		if final.equal(fm.ws) {
			continue // the choices leave the file as it is
		}
		secs, _, _, err := changeSections(p, fm.ws, final)
		if err != nil {
			probs = append(probs, Problem{Path: p, Reason: err.Error()})
			continue
		}
		for _, s := range secs {
			patch.Write(s)
		}
		merged = append(merged, p)
		if !all {
			out.Files = append(out.Files, p)
		}
	}
	if len(probs) > 0 {
		return nil, Selection{}, nil, probs
	}
	if all && patch.Len() == 0 {
		return nil, Selection{}, nil, []Problem{{Reason: "the workspace already has every change of this proposal: nothing to apply"}}
	}
	if !all && len(out.Files) == 0 && len(out.Hunks) == 0 {
		return nil, Selection{}, nil, nil // nothing selected: an empty patch
	}
	return patch.Bytes(), out, merged, nil
}
