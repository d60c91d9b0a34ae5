package proposal

// Which proposals of a run can be combined into one patch: a self-contained check, on the
// proposals' own patches and the workspace's files, kept apart from the export so that it can
// be replaced by a shared detector later. Two proposals conflict when they
//   - add the same path,
//   - touch one path where either deletes, renames, copies, changes the mode of or replaces a
//     binary file or a symlink (nothing to merge line by line),
//   - change the same or adjacent lines of a text file (their changed lines, in the
//     workspace's numbering, overlap or touch: which goes first is a decision for a person),
//   - or one leaves a file where the other puts a folder.
// Otherwise the edits of text files that several touch are combined in the workspace's
// numbering, each proposal's in turn.

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Conflict is one reason two proposals cannot go into one patch.
type Conflict struct {
	Agents [2]string `json:"agents"` // the earlier proposal's agent first
	Path   string    `json:"path"`
	Reason string    `json:"reason"`
}

func (c Conflict) String() string { return c.Path + ": " + c.Reason }

// ConflictError lists every conflict between the proposals an export was asked to combine.
type ConflictError struct{ Conflicts []Conflict }

func (e *ConflictError) Error() string {
	var b strings.Builder
	b.WriteString("the proposals conflict:")
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, "\n  %s and %s: %s", c.Agents[0], c.Agents[1], c)
	}
	return b.String()
}

// touch is what one proposal does to one path.
type touch struct {
	file  *gitdiff.File
	kind  string // "add", "delete", "modify" (text, same mode), "other" (rename, copy, mode, binary, symlink)
	edits []lineEdit
}

// lineEdit replaces the base lines [start, end) (0-based), which read old, with lines.
type lineEdit struct {
	start, end int
	old, lines []string
}

// touches lists the paths a parsed patch touches and how.
func touches(files []*gitdiff.File) map[string]*touch {
	out := map[string]*touch{}
	for _, f := range files {
		switch {
		case f.IsRename || f.IsCopy:
			out[f.OldName] = &touch{file: f, kind: "other"}
			out[f.NewName] = &touch{file: f, kind: "other"}
		case f.IsNew:
			if prev := out[f.NewName]; prev != nil { // a type change: deleted, then created
				prev.kind = "other"
				continue
			}
			out[f.NewName] = &touch{file: f, kind: "add"}
		case f.IsDelete:
			out[f.OldName] = &touch{file: f, kind: "delete"}
		case f.IsBinary || (f.NewMode != 0 && f.OldMode != f.NewMode) || int(f.OldMode) == modeSymlink:
			out[f.NewName] = &touch{file: f, kind: "other"}
		default:
			out[f.NewName] = &touch{file: f, kind: "modify", edits: fragmentEdits(f.TextFragments)}
		}
	}
	return out
}

// fragmentEdits turns hunks into edits in the old file's numbering.
func fragmentEdits(frags []*gitdiff.TextFragment) []lineEdit {
	var out []lineEdit
	for _, fr := range frags {
		pos := int(fr.OldPosition) - 1
		if fr.OldLines == 0 {
			pos = int(fr.OldPosition) // "@@ -5,0 …": inserted after line 5
		}
		var cur *lineEdit
		flush := func() {
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		}
		for _, ln := range fr.Lines {
			switch ln.Op {
			case gitdiff.OpContext:
				flush()
				pos++
			case gitdiff.OpDelete:
				if cur == nil {
					cur = &lineEdit{start: pos, end: pos}
				}
				cur.end++
				cur.old = append(cur.old, ln.Line)
				pos++
			case gitdiff.OpAdd:
				if cur == nil {
					cur = &lineEdit{start: pos, end: pos}
				}
				cur.lines = append(cur.lines, ln.Line)
			}
		}
		flush()
	}
	return out
}

// conflict says why a (earlier) and b cannot both touch one path, or "" when their edits combine.
func conflict(a, b *touch) string {
	switch {
	case a.kind == "add" && b.kind == "add":
		return "both add it"
	case a.kind == "delete" || b.kind == "delete":
		if a.kind == b.kind {
			return "both delete it"
		}
		return "one deletes it and the other changes it"
	case a.kind == "other" || b.kind == "other":
		return "both change it and one renames, copies, changes the mode of, or replaces it as a binary file or link"
	case a.kind != "modify" || b.kind != "modify":
		return "both change it"
	}
	for _, x := range a.edits {
		for _, y := range b.edits {
			if x.start <= y.end && y.start <= x.end {
				return fmt.Sprintf("both change the same or adjacent lines (%s and %s)", lineRange(x), lineRange(y))
			}
		}
	}
	return ""
}

// lineRange names an edit's lines in the old file, 1-based, as a person reads them.
func lineRange(e lineEdit) string {
	switch {
	case e.end == e.start:
		return fmt.Sprintf("an insertion after line %d", e.start)
	case e.end == e.start+1:
		return fmt.Sprintf("line %d", e.start+1)
	}
	return fmt.Sprintf("lines %d–%d", e.start+1, e.end)
}

// folderConflict: a keeps a file at p (adds or changes it) where b puts something under p/.
func folderConflict(p string, a *touch, bPaths map[string]*touch) string {
	if a.kind == "delete" {
		return ""
	}
	for q, t := range bPaths {
		if t.kind != "delete" && strings.HasPrefix(q, p+"/") {
			return q
		}
	}
	return ""
}

// findConflicts checks every pair of proposals (in export order).
func findConflicts(agents []string, paths []map[string]*touch) []Conflict {
	var out []Conflict
	for i := range paths {
		for j := i + 1; j < len(paths); j++ {
			for p, a := range paths[i] {
				if b := paths[j][p]; b != nil {
					if why := conflict(a, b); why != "" {
						out = append(out, Conflict{Agents: [2]string{agents[i], agents[j]}, Path: p, Reason: why})
					}
				}
				if q := folderConflict(p, a, paths[j]); q != "" {
					out = append(out, Conflict{Agents: [2]string{agents[i], agents[j]}, Path: p, Reason: fmt.Sprintf("%s keeps a file here and %s puts %s under it", agents[i], agents[j], q)})
				}
			}
			for p, b := range paths[j] {
				if q := folderConflict(p, b, paths[i]); q != "" {
					out = append(out, Conflict{Agents: [2]string{agents[i], agents[j]}, Path: p, Reason: fmt.Sprintf("%s keeps a file here and %s puts %s under it", agents[j], agents[i], q)})
				}
			}
		}
	}
	sortConflicts(out)
	return out
}

func sortConflicts(cs []Conflict) {
	slices.SortStableFunc(cs, func(a, b Conflict) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Agents[0], b.Agents[0]), cmp.Compare(a.Agents[1], b.Agents[1]))
	})
}

// applyEdits applies non-overlapping edits to base's lines, checking that the lines they
// replace are the ones the hunks expected (the workspace may have changed since the check).
func applyEdits(base []byte, edits []lineEdit) ([]byte, error) {
	lines := splitLines(base)
	sorted := slices.Clone(edits)
	slices.SortStableFunc(sorted, func(a, b lineEdit) int { return cmp.Compare(a.start, b.start) })
	var out bytes.Buffer
	at := 0
	for _, e := range sorted {
		if e.start < at || e.end > len(lines) || !slices.Equal(lines[e.start:e.end], e.old) {
			return nil, fmt.Errorf("%s no longer reads as the proposal expects (the file changed since it was checked)", lineRange(e))
		}
		for _, l := range lines[at:e.start] {
			out.WriteString(l)
		}
		for _, l := range e.lines {
			out.WriteString(l)
		}
		at = e.end
	}
	for _, l := range lines[at:] {
		out.WriteString(l)
	}
	return out.Bytes(), nil
}
