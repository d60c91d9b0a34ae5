package proposal

// Combining the proposals of a run into one patch. Which ones cannot be combined is decided by
// clash.go, the rule create reports collisions by; here each collision becomes a Conflict, and
// the changes of proposals that share a path are combined: every proposal read the workspace's
// version (export checks each against it), so the changes of text files are line edits in the
// workspace's numbering, applied together; any other change two proposals share is the same
// change (else it would collide), made once.

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
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

// planChanges is a checked proposal's changes against the workspace, from its plan.
type planChanges struct {
	changeIndex
	before, after map[string]side
}

func changesOf(pl *plan) *planChanges {
	paths, before, after := planSides(pl)
	changes := make(map[string]bool, len(paths))
	for _, p := range paths {
		changes[p] = after[p].exists
	}
	return &planChanges{changeIndex: newChangeIndex(changes), before: before, after: after}
}

func (c *planChanges) sides(p string) (side, side, error) { return c.before[p], c.after[p], nil }

// findConflicts checks every pair of proposals (in export order) with the shared rule.
func findConflicts(agents []string, sets []changeSet) []Conflict {
	var out []Conflict
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			out = append(out, pairConflicts(agents[i], agents[j], clashes(sets[i], sets[j]))...)
		}
	}
	slices.SortStableFunc(out, func(a, b Conflict) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Agents[0], b.Agents[0]), cmp.Compare(a.Agents[1], b.Agents[1]))
	})
	return out
}

// pairConflicts words the clashes of a (earlier) with b: one conflict per path, the line
// ranges of a text file together.
func pairConflicts(a, b string, cs []clash) []Conflict {
	var out []Conflict
	add := func(p, reason string) { out = append(out, Conflict{Agents: [2]string{a, b}, Path: p, Reason: reason}) }
	var ranges []string
	for i, c := range cs {
		switch c.kind {
		case CollideLines:
			ranges = append(ranges, exportRange(c.lines)+" and "+exportRange(c.otherLines))
			if i+1 == len(cs) || cs[i+1].kind != CollideLines || cs[i+1].path != c.path {
				add(c.path, fmt.Sprintf("both change the same or adjacent lines (%s)", strings.Join(ranges, "; ")))
				ranges = nil
			}
		case CollideDeleteEdit, CollideEditDelete:
			add(c.path, "one deletes it and the other changes it")
		case CollideBothAdd:
			add(c.path, "both add it, differently")
		case CollideFileFolder:
			add(c.path, fmt.Sprintf("%s keeps a file here and %s puts %s under it", a, b, c.otherPath))
		case CollideFolderFile:
			add(c.otherPath, fmt.Sprintf("%s keeps a file here and %s puts %s under it", b, a, c.path))
		case CollideWholeFile:
			if c.why == wholeMode {
				add(c.path, "both change its mode, differently")
			} else {
				add(c.path, "both change it, differently, and it is or becomes a binary file or a symlink (nothing to merge line by line)")
			}
		}
	}
	return out
}

// exportRange names lines of the workspace's file as a person reads them.
func exportRange(r LineRange) string {
	switch r.Count {
	case 0:
		return fmt.Sprintf("an insertion after line %d", r.Start-1)
	case 1:
		return fmt.Sprintf("line %d", r.Start)
	}
	return fmt.Sprintf("lines %d–%d", r.Start, r.Start+r.Count-1)
}

// exportDiff is proposal at's diff in the export: its patch's own sections, except for the
// paths other proposals change too (or that the check merged with the workspace), whose
// sections are made again from the file as the proposals before it leave it to the file as
// it leaves it.
func exportDiff(ls []exportLoaded, at int) ([]byte, []FileStat, error) {
	x := ls[at]
	var diff bytes.Buffer
	var stats []FileStat
	sections := splitSections(x.l.Patch)
	done := map[string]bool{}
	for k, f := range x.files {
		names := slices.Compact(slices.Sorted(slices.Values([]string{f.OldName, f.NewName})))
		asMade := !slices.ContainsFunc(names, func(n string) bool {
			_, planned := x.changes.before[n]
			return n != "" && (!planned || sharedBy(ls, n) > 1 || slices.Contains(x.merged, n))
		})
		if asMade {
			diff.Write(sections[k])
			rf := reviewFile(f)
			stats = append(stats, FileStat{Path: rf.Path, Status: rf.Status, Added: rf.Added, Deleted: rf.Deleted, Binary: rf.Binary})
			continue
		}
		for _, name := range names {
			if _, planned := x.changes.before[name]; name == "" || !planned || done[name] {
				continue // not changed by the plan: the workspace has it already
			}
			done[name] = true
			before, after, err := combinedAt(ls, at, name)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			if before.equal(after) {
				continue // an earlier proposal made the same change
			}
			secs, add, del, err := changeSections(name, before, after)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			for _, sec := range secs {
				diff.Write(sec)
			}
			stats = append(stats, FileStat{Path: name, Status: statusOf(before, after), Added: add, Deleted: del, Binary: binarySide(before) || binarySide(after)})
		}
	}
	return diff.Bytes(), stats, nil
}

// sharedBy counts the proposals that change path p.
func sharedBy(ls []exportLoaded, p string) int {
	n := 0
	for _, x := range ls {
		if _, ok := x.changes.before[p]; ok {
			n++
		}
	}
	return n
}

// combinedAt is path p before and after proposal at, when the proposals before it that change
// p have been applied too.
func combinedAt(ls []exportLoaded, at int, p string) (before, after side, err error) {
	var base *side
	var prior []side
	for i, x := range ls[:at+1] {
		b, ok := x.changes.before[p]
		if !ok {
			continue
		}
		if base == nil {
			base = &b
		} else if !base.equal(b) {
			return before, after, fmt.Errorf("the workspace's file changed while the export read it")
		}
		if i < at {
			prior = append(prior, x.changes.after[p])
		}
	}
	if before, err = combineSides(*base, prior); err != nil {
		return before, after, err
	}
	after, err = combineSides(*base, append(prior, ls[at].changes.after[p]))
	return before, after, err
}

func statusOf(before, after side) string {
	switch {
	case !before.exists:
		return "added"
	case !after.exists:
		return "deleted"
	}
	return "modified"
}

func binarySide(s side) bool { return s.exists && s.mode != modeSymlink && isBinary(s.data) }

// combineSides is a path as the given proposals (in order) leave it, all of them having
// changed base and none colliding with another: text edits are applied together (an edit
// several made, once); a new mode is the one set; anything else they all made alike.
func combineSides(base side, afters []side) (side, error) {
	if len(afters) == 0 {
		return base, nil
	}
	text := base.exists && base.text()
	for _, a := range afters {
		text = text && a.exists && a.text()
	}
	if !text {
		for _, a := range afters[1:] {
			if !a.equal(afters[0]) {
				return side{}, fmt.Errorf("the proposals' versions of it cannot be combined")
			}
		}
		return afters[0], nil
	}
	out := side{exists: true, mode: base.mode}
	var edits []lineEdit
	lines := splitLines(base.data)
	for _, a := range afters {
		if a.mode != base.mode {
			out.mode = a.mode
		}
		for _, e := range textEdits(lines, splitLines(a.data)) {
			if !slices.ContainsFunc(edits, e.same) {
				edits = append(edits, e)
			}
		}
	}
	data, err := applyEdits(base.data, edits)
	out.data = data
	return out, err
}

// lineEdit replaces the base lines [start, end) (0-based), which read old, with lines.
type lineEdit struct {
	start, end int
	old, lines []string
}

func (e lineEdit) same(o lineEdit) bool {
	return e.start == o.start && e.end == o.end && equalLines(e.lines, o.lines)
}

// textEdits are the changes that turn base into after, as line edits.
func textEdits(base, after []string) []lineEdit {
	var out []lineEdit
	for _, c := range lineChanges(diffLines(base, after)) {
		out = append(out, lineEdit{start: c.a, end: c.a + c.na, old: base[c.a : c.a+c.na], lines: after[c.b : c.b+c.nb]})
	}
	return out
}

// applyEdits applies non-overlapping edits to base's lines, checking that the lines they
// replace are the ones expected.
func applyEdits(base []byte, edits []lineEdit) ([]byte, error) {
	lines := splitLines(base)
	sorted := slices.Clone(edits)
	slices.SortStableFunc(sorted, func(a, b lineEdit) int { return cmp.Compare(a.start, b.start) })
	var out bytes.Buffer
	at := 0
	for _, e := range sorted {
		if e.start < at || e.end > len(lines) || !slices.Equal(lines[e.start:e.end], e.old) {
			return nil, fmt.Errorf("%s does not read as the proposal expects", exportRange(LineRange{e.start + 1, e.end - e.start}))
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
