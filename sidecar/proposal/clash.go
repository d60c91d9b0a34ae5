package proposal

// The one rule for whether two proposals' changes collide, and where. Create reports what it
// finds (collide.go: Collision, proposal_conflict events, review, list order) and export refuses
// to combine what it finds (export_combine.go: ConflictError), so the two cannot disagree.
//
// Two proposals collide at a path when both change it and what they leave there differs:
//   - one deletes it and the other edits it;
//   - both add it, with different content;
//   - either side is a binary file or a symlink (before or after), or one saw the file and
//     the other did not: there is nothing to merge line by line;
//   - both set its mode, to different modes;
//   - they change lines that overlap or touch (adjacent lines, or insertions at one place):
//     git's merge rule, at least one untouched line between two changes. The same change on
//     both sides is no collision.
//
// And across paths: one keeps a file (or symlink) at p where the other puts something under
// p/. A change one makes and the other does not (a mode change, lines elsewhere) combines.

import (
	"sort"
	"strings"
)

// Kinds of collision besides those of collide.go: across two paths, a file against a folder.
const (
	CollideFileFolder = "file-folder" // this proposal keeps a file where the other puts a folder
	CollideFolderFile = "folder-file" // this proposal puts the file under a path the other keeps as a file
)

// Why a whole file collides (kind CollideWholeFile).
const (
	wholeContent = "content" // binary or symlink changed differently, or seen differently
	wholeMode    = "mode"    // both set the mode, differently
)

// changeSet is one proposal's changes as the detector reads them.
type changeSet interface {
	// changed lists every path the proposal changes and whether something is left there
	// (false: it deletes the path).
	changed() map[string]bool
	// kept is the paths it leaves something at, sorted.
	kept() []string
	// sides is a path's version before the proposal (what it read) and after it.
	sides(p string) (before, after side, err error)
}

// changeIndex answers changed and kept, computed once per proposal (a proposal is compared
// with every other open one).
type changeIndex struct {
	changes    map[string]bool
	keptSorted []string
}

func newChangeIndex(changes map[string]bool) changeIndex {
	x := changeIndex{changes: changes}
	for p, kept := range changes {
		if kept {
			x.keptSorted = append(x.keptSorted, p)
		}
	}
	sort.Strings(x.keptSorted)
	return x
}

func (x changeIndex) changed() map[string]bool { return x.changes }
func (x changeIndex) kept() []string           { return x.keptSorted }

// clash is one place where a's changes collide with b's, from a's side.
type clash struct {
	kind              string // a Collide* kind
	why               string // for CollideWholeFile: wholeContent or wholeMode
	path              string // a's path
	otherPath         string // b's path: path itself, except across a file and a folder
	lines, otherLines LineRange
	next              bool // CollideLines: the ranges touch without overlapping
}

// clashes compares a with b: every collision, from a's side, ordered by path. A path whose
// versions cannot be read is left out (the proposal's own check names it).
func clashes(a, b changeSet) []clash {
	ac, bc := a.changed(), b.changed()
	var out []clash
	for _, p := range sortedKeys(ac) {
		if _, ok := bc[p]; !ok {
			continue
		}
		aIn, aWork, err1 := a.sides(p)
		bIn, bWork, err2 := b.sides(p)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, fileClashes(p, aIn, aWork, bIn, bWork)...)
	}
	out = append(out, folderClashes(a, b, CollideFileFolder)...)
	for _, c := range folderClashes(b, a, CollideFolderFile) {
		c.path, c.otherPath = c.otherPath, c.path
		c.lines, c.otherLines = c.otherLines, c.lines
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// fileClashes is the rule for one path both change: a went from aIn to aWork, b from bIn to bWork.
func fileClashes(p string, aIn, aWork, bIn, bWork side) []clash {
	whole := func(kind, why string) []clash {
		return []clash{{kind: kind, why: why, path: p, otherPath: p, lines: wholeRange(aIn, aWork), otherLines: wholeRange(bIn, bWork)}}
	}
	aDel, bDel := aIn.exists && !aWork.exists, bIn.exists && !bWork.exists
	aAdd, bAdd := !aIn.exists && aWork.exists, !bIn.exists && bWork.exists
	switch {
	case aWork.equal(bWork):
		return nil // the same result (both delete it, or leave the same content): nothing to resolve
	case aDel:
		return whole(CollideDeleteEdit, "")
	case bDel:
		return whole(CollideEditDelete, "")
	case aAdd && bAdd:
		return whole(CollideBothAdd, "")
	case aAdd || bAdd || !aIn.text() || !aWork.text() || !bIn.text() || !bWork.text():
		return whole(CollideWholeFile, wholeContent)
	case aIn.mode != aWork.mode && bIn.mode != bWork.mode && aWork.mode != bWork.mode:
		return whole(CollideWholeFile, wholeMode)
	}
	return lineClashes(p, aIn, aWork, bIn, bWork)
}

// lineClashes compares the changed lines of two edits of a text file. When the two started
// from different versions of it, b's lines are placed in a's version by aligning the two.
func lineClashes(p string, aIn, aWork, bIn, bWork side) []clash {
	aBase, bBase := splitLines(aIn.data), splitLines(bIn.data)
	aNew, bNew := splitLines(aWork.data), splitLines(bWork.data)
	ra := lineChanges(diffLines(aBase, aNew))
	rb := lineChanges(diffLines(bBase, bNew))
	at := identityPositions(len(bBase))
	if !aIn.equal(bIn) {
		at = alignPositions(bBase, aBase)
	}
	var out []clash
	for _, x := range ra {
		for _, y := range rb {
			ys, ye := at[y.a], at[y.a+y.na]
			if !(x.a <= ye && ys <= x.a+x.na) {
				continue // at least one untouched line between them
			}
			if x.a == ys && x.na == ye-ys && equalLines(aNew[x.b:x.b+x.nb], bNew[y.b:y.b+y.nb]) {
				continue // the same change
			}
			out = append(out, clash{kind: CollideLines, path: p, otherPath: p, lines: LineRange{x.a + 1, x.na}, otherLines: LineRange{y.a + 1, y.na},
				next: x.a == ye || ys == x.a+x.na})
		}
	}
	return out
}

// folderClashes: every path a keeps as a file (or symlink) under which b leaves something, as
// clashes of the given kind from a's side (path: a's file, otherPath: b's path under it).
func folderClashes(a, b changeSet, kind string) []clash {
	under := b.kept()
	var out []clash
	for _, p := range a.kept() {
		for i := sort.SearchStrings(under, p+"/"); i < len(under) && strings.HasPrefix(under[i], p+"/"); i++ {
			c := clash{kind: kind, path: p, otherPath: under[i]}
			if in, work, err := a.sides(p); err == nil {
				c.lines = wholeRange(in, work)
			}
			if in, work, err := b.sides(under[i]); err == nil {
				c.otherLines = wholeRange(in, work)
			}
			out = append(out, c)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func wholeRange(in, work side) LineRange {
	n := len(splitLines(in.data))
	if !in.exists {
		n = len(splitLines(work.data))
	}
	return LineRange{Start: 1, Count: n}
}

func identityPositions(n int) []int {
	at := make([]int, n+1)
	for i := range at {
		at[i] = i
	}
	return at
}

// alignPositions maps every position (the boundary before each line, and the end) of from to
// the matching position of to, through a line diff: a line both have maps to its copy; a line
// only from has maps to where it would be in to.
func alignPositions(from, to []string) []int {
	at := make([]int, len(from)+1)
	for _, e := range diffLines(from, to) {
		if e.kind != '+' {
			at[e.a] = e.b
		}
	}
	at[len(from)] = len(to)
	return at
}
