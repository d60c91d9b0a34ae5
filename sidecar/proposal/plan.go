package proposal

// The plan: a patch checked against the workspace, every result computed in memory before
// anything is written. buildPlan runs the steps in order; each file goes through planFile
// (pick its hunks, reach its path, read its preimage, make its postimage, then record a
// deletion or a write), and the whole plan through checkTraversal last.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// planner is one buildPlan in progress.
type planner struct {
	d     *dirs
	sel   Selection
	rules safepath.Rules
	files []*gitdiff.File
	probs []Problem
	pl    *plan
	// final is what the patch leaves at each path it touches (kindNone: deleted); touched
	// tells a deleted path from one never seen.
	final   map[string]fileKind
	touched map[string]bool
	// patchDeletes are the paths the patch deletes (a folder prefix may be one of them: a file
	// replaced by a folder); selDeletes those the selection carries out.
	patchDeletes, selDeletes map[string]bool
}

// buildPlan checks a patch against the workspace and computes every result in memory.
func buildPlan(d *dirs, patch []byte, sel Selection, rules safepath.Rules, limit int64) (*plan, []Problem) {
	files, probs := parsePatch(patch, rules, limit)
	if len(probs) > 0 {
		return nil, probs
	}
	p := &planner{d: d, sel: sel, rules: rules, files: files, pl: &plan{},
		final: map[string]fileKind{}, touched: map[string]bool{}}
	if p.checkSelection(); len(p.probs) > 0 {
		return nil, p.probs
	}
	p.noteDeletions()
	for _, f := range files {
		if ok, hunkSel := selected(sel, f); ok {
			p.planFile(f, hunkSel)
		}
	}
	if len(p.probs) > 0 {
		return nil, p.probs
	}
	if p.checkTraversal(); len(p.probs) > 0 {
		return nil, p.probs
	}
	return p.pl, nil
}

func (p *planner) add(path, format string, a ...any) {
	p.probs = append(p.probs, Problem{Path: path, Reason: fmt.Sprintf(format, a...)})
}

// checkSelection: the selection must name only files of the patch.
func (p *planner) checkSelection() {
	known := map[string]bool{}
	for _, f := range p.files {
		known[f.OldName], known[f.NewName] = true, true
	}
	for _, name := range p.sel.Files {
		if !known[name] || name == "" {
			p.add(name, "the selection names a file the patch does not touch")
		}
	}
	for name := range p.sel.Hunks {
		if !known[name] || name == "" {
			p.add(name, "the selection names a file the patch does not touch")
		}
	}
}

// noteDeletions records the paths the patch deletes, and those the selection will delete
// (for folders that become files).
func (p *planner) noteDeletions() {
	p.patchDeletes, p.selDeletes = map[string]bool{}, map[string]bool{}
	for _, f := range p.files {
		if f.IsDelete || f.IsRename {
			p.patchDeletes[f.OldName] = true
			if ok, _ := selected(p.sel, f); ok {
				p.selDeletes[f.OldName] = true
			}
		}
	}
}

// planFile checks one file of the patch and adds its deletion and its write to the plan.
func (p *planner) planFile(f *gitdiff.File, hunkSel []int) {
	name := f.NewName
	if name == "" {
		name = f.OldName
	}
	frags, ok := p.pickHunks(f, name, hunkSel)
	if !ok || !p.reachable(f) {
		return
	}
	pre, oldKind, ok := p.readPreimage(f)
	if !ok {
		return
	}
	var old []byte
	if pre != nil {
		old = pre.data
	}
	data, ok := p.postimage(f, name, old, frags)
	if !ok {
		return
	}
	res := FileResult{Path: name, Status: fileStatus(f)}
	if f.IsRename || f.IsCopy {
		res.OldPath = f.OldName
	}
	if hunkSel != nil {
		res.Hunks = append([]int(nil), hunkSel...)
		sort.Ints(res.Hunks)
	}
	p.pl.files = append(p.pl.files, res)
	if f.IsDelete {
		if len(data) != 0 {
			p.add(name, "the deletion leaves content behind")
			return
		}
		p.addDeletion(f.OldName, pre)
		return
	}
	if f.IsRename {
		p.addDeletion(f.OldName, pre)
	}
	p.addWrite(f, name, pre, oldKind, data)
}

// pickHunks is the fragments to apply: all, or the ones a hunk selection names.
func (p *planner) pickHunks(f *gitdiff.File, name string, hunkSel []int) ([]*gitdiff.TextFragment, bool) {
	if hunkSel == nil {
		return f.TextFragments, true
	}
	if f.IsNew || f.IsDelete || f.IsRename || f.IsCopy || f.IsBinary {
		if !(len(hunkSel) == len(f.TextFragments) && len(f.TextFragments) <= 1) {
			p.add(name, "hunks can be chosen only in a modified text file; select the whole file")
			return nil, false
		}
	}
	var frags []*gitdiff.TextFragment
	seen := map[int]bool{}
	for _, h := range hunkSel {
		if h < 1 || h > len(f.TextFragments) || seen[h] {
			p.add(name, "hunk %d does not exist (the file has %d)", h, len(f.TextFragments))
			continue
		}
		seen[h] = true
		frags = append(frags, f.TextFragments[h-1])
	}
	sort.Slice(frags, func(i, j int) bool { return frags[i].OldPosition < frags[j].OldPosition })
	return frags, true
}

// reachable: no parent folder of the file's names is a symlink or a file on disk.
func (p *planner) reachable(f *gitdiff.File) bool {
	if f.OldName != "" && !p.onDisk(f.OldName) {
		return false
	}
	return f.NewName == "" || f.NewName == f.OldName || p.onDisk(f.NewName)
}

func (p *planner) onDisk(name string) bool {
	if reason := diskPrefixProblem(p.d, name, p.patchDeletes); reason != "" {
		p.add(name, "%s", reason)
		return false
	}
	return true
}

// readPreimage reads what the file is now (nil for a created file), checking it is the kind
// the patch expects; its bytes are the backup the apply restores.
func (p *planner) readPreimage(f *gitdiff.File) (*backup, fileKind, bool) {
	if f.IsNew {
		return nil, kindNone, true
	}
	if p.final[f.OldName] != kindNone || p.touched[f.OldName] {
		p.add(f.OldName, "the patch changes this path twice")
		return nil, kindNone, false
	}
	seen := time.Now()
	fi, err := p.d.lstat(f.OldName)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			p.add(f.OldName, "does not exist in the workspace")
		} else {
			p.add(f.OldName, "%v", err)
		}
		return nil, kindNone, false
	}
	if fi.Size() > maxVersionBytes {
		p.add(f.OldName, "is %s, over the %s of a file the apply keeps a copy of (the copy could not be read back to revert it)", byteSize(fi.Size()), byteSize(maxVersionBytes))
		return nil, kindNone, false
	}
	oldKind := kindOfMode(fi.Mode())
	want := kindFile
	if int(f.OldMode) == modeSymlink || f.OldMode == 0 && oldKind == kindSymlink {
		want = kindSymlink
	}
	if oldKind != want {
		p.add(f.OldName, "is a %s in the workspace, the patch expects a %s", kindName(oldKind), kindName(want))
		return nil, kindNone, false
	}
	var old []byte
	if oldKind == kindSymlink {
		t, err := p.d.readlink(f.OldName)
		if err != nil {
			p.add(f.OldName, "%v", err)
			return nil, kindNone, false
		}
		old = []byte(t)
	} else {
		if old, err = p.d.readFile(f.OldName); err != nil {
			p.add(f.OldName, "%v", err)
			return nil, kindNone, false
		}
	}
	return &backup{kind: oldKind, perm: fi.Mode().Perm(), data: old, stamp: stampOf(fi), seen: seen}, oldKind, true
}

// postimage applies the fragments to old, checking a binary patch's hashes both ways.
func (p *planner) postimage(f *gitdiff.File, name string, old []byte, frags []*gitdiff.TextFragment) ([]byte, bool) {
	if f.IsBinary && !f.IsNew && blobOID(old) != f.OldOIDPrefix {
		p.add(name, "the binary file has changed since the patch was made (its hash does not match the index line)")
		return nil, false
	}
	if why := anchorProblem(f, frags, old); why != "" && !f.IsBinary {
		p.add(name, "does not apply: %s", why)
		return nil, false
	}
	// A buffer sized for the result: growing it was a third of a check's memory.
	var out bytes.Buffer
	out.Grow(len(old) + addedBytes(frags))
	g := *f
	g.TextFragments = frags
	if err := gitdiff.Apply(&out, &byteLines{data: old}, &g); err != nil {
		p.add(name, "does not apply: %v", describeApplyErr(err))
		return nil, false
	}
	if out.Len() > maxVersionBytes {
		p.add(name, "the patch makes it %s, over the %s of a file the apply keeps a copy of (the copy could not be read back to revert it)", byteSize(int64(out.Len())), byteSize(maxVersionBytes))
		return nil, false
	}
	if f.IsBinary && !f.IsDelete && blobOID(out.Bytes()) != f.NewOIDPrefix {
		p.add(name, "the binary patch does not produce the file its index line names")
		return nil, false
	}
	if len(f.TextFragments) == 0 && !f.IsBinary && !f.IsNew && !f.IsRename && !f.IsCopy && f.IsDelete && len(old) != 0 {
		p.add(name, "the patch deletes an empty file, but the file in the workspace is not empty")
		return nil, false
	}
	return out.Bytes(), true
}

func (p *planner) addDeletion(name string, pre *backup) {
	p.pl.deletes = append(p.pl.deletes, deletion{path: name, old: pre})
	p.final[name] = kindNone
	p.touched[name] = true
}

// addWrite records the file's new version: its kind and exec bit, a symlink's target checked,
// a created path checked to be free.
func (p *planner) addWrite(f *gitdiff.File, name string, pre *backup, oldKind fileKind, data []byte) {
	newKind, exec := newKindOf(f, pre, oldKind)
	if w := modeWarning(f, pre); w != "" {
		p.pl.warnings = append(p.pl.warnings, w)
	}
	if newKind == kindSymlink {
		t := string(data)
		if t == "" || strings.ContainsAny(t, "\x00\n") {
			p.add(name, "the symlink target is empty or not a single line")
			return
		}
		if err := checkLinkTarget(f.NewName, t, p.rules); err != nil {
			p.add(name, "%v", err)
			return
		}
	}
	if (f.IsNew || f.IsRename || f.IsCopy) && !p.createsFree(f.NewName) {
		return
	}
	w := write{path: f.NewName, kind: newKind, exec: exec, data: data}
	if !f.IsNew && !f.IsRename && !f.IsCopy {
		w.old = pre
	}
	p.pl.writes = append(p.pl.writes, w)
	p.final[f.NewName] = newKind
	p.touched[f.NewName] = true
}

// newKindOf is what the patch leaves at the file's path: a file or a symlink, and the exec bit.
// A patch that does not change a file's mode (no "new mode" line: its index line only says
// what the mode was) leaves the exec bit as the file has it on disk, as git apply does: a
// chmod +x the person made since the proposal was made stays.
func newKindOf(f *gitdiff.File, pre *backup, oldKind fileKind) (fileKind, bool) {
	mode := int(f.NewMode)
	if mode == 0 {
		mode = int(f.OldMode)
	}
	newKind := kindFile
	if mode == modeSymlink || mode == 0 && oldKind == kindSymlink {
		newKind = kindSymlink
	}
	if !changesMode(f) && oldKind == kindFile && pre != nil {
		return newKind, pre.perm&0o100 != 0
	}
	return newKind, mode == modeExec
}

// changesMode: the patch gives the file a mode of its own (a new file, or "new mode").
func changesMode(f *gitdiff.File) bool {
	return f.IsNew || f.NewMode != 0 && f.NewMode != f.OldMode
}

// modeWarning is git apply's warning when the file on disk has another mode than the patch
// says it had: "a.sh has type 100755, expected 100644".
func modeWarning(f *gitdiff.File, pre *backup) string {
	if pre == nil || pre.kind != kindFile || f.OldMode == 0 || int(f.OldMode) == modeSymlink {
		return ""
	}
	disk := modeFile
	if pre.perm&0o100 != 0 {
		disk = modeExec
	}
	if disk == int(f.OldMode) {
		return ""
	}
	return fmt.Sprintf("%s has type %o, expected %o", f.OldName, disk, f.OldMode)
}

// createsFree: a path the patch creates must not exist yet, unless deleted just before or a
// folder whose every file the patch deletes first (deletions run first and leave it empty, and
// it is removed: a folder becoming a file).
func (p *planner) createsFree(name string) bool {
	if p.touched[name] || underDeleted(name, p.selDeletes) {
		return true
	}
	fi, err := p.d.lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		p.add(name, "%v", err)
		return false
	}
	if !fi.IsDir() || !emptiedBy(p.d.root, name, p.selDeletes) {
		p.add(name, "already exists in the workspace (as a %s)", kindName(kindOfMode(fi.Mode())))
		return false
	}
	return true
}

// checkTraversal: no written path may lie under a symlink or a file, whether it is there now
// or the patch puts it there. Deletions run before any write, on the tree as it is on disk
// (reachable checked them), so only the written paths are checked against what the patch
// creates.
func (p *planner) checkTraversal() {
	deleted := map[string]bool{}
	for _, d := range p.pl.deletes {
		deleted[d.path] = true
	}
	for _, w := range p.pl.writes {
		for q := path.Dir(w.path); q != "."; q = path.Dir(q) {
			if k, inPatch := p.final[q]; inPatch && k != kindNone {
				p.add(w.path, "lies under %s, which this patch creates as a %s", q, kindName(k))
				break
			}
			if deleted[q] || p.d.has(q) {
				continue
			}
			fi, err := p.d.lstat(q)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				p.add(w.path, "%v", err)
				break
			}
			if k := kindOfMode(fi.Mode()); k != kindDir {
				p.add(w.path, "lies under %s, which is a %s in the workspace", q, kindName(k))
				break
			}
		}
	}
}
