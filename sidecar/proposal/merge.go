package proposal

// A three-way merge of lines: git merge-file's algorithm (xdiff's xdl_merge at its default
// level, XDL_MERGE_ZEALOUS_ALNUM, in the "merge" style), written on the project's own line diff
// (linediff.go) so that a proposal's patch, its rebase on the workspace and its revert all see
// the same changes. merge_test.go holds it to `git merge-file -p` byte for byte.
//
// The steps, as xdiff takes them:
//  1. diff base→ours and base→theirs into changes (a base range and the lines that replace it);
//  2. walk both lists: a change with at least one untouched base line before the other side's
//     next change is clean; changes that overlap or touch (adjacent, or two insertions at one
//     place) are one conflict, unless both sides made exactly the same change;
//  3. refine each conflict by diffing its two sides: lines both sides agree on leave the
//     conflict, splitting it (or dissolving it when the sides are equal);
//  4. join two conflicts separated by at most three lines, or by lines with no letter or
//     digit in them (braces, blank lines), into one.

// mergeKind says what one chunk of a merge is. The values are xdiff's modes.
type mergeKind uint8

const (
	mergeConflict mergeKind = 0 // both sides changed these base lines differently
	mergeOurs     mergeKind = 1 // only ours changed them
	mergeTheirs   mergeKind = 2 // only theirs changed them
	mergeSame     mergeKind = 4 // both sides made the same change
)

// mergeChunk is one change of a merge, as 0-based half-open line ranges of each file. Between
// chunks the three files agree. For a conflict that refinement split or that simplification
// joined, the base range is the whole region's (only the sides are exact).
type mergeChunk struct {
	kind             mergeKind
	base0, base1     int
	ours0, ours1     int
	theirs0, theirs1 int
}

// lineChange is one change of a diff: base lines [a, a+na) replaced by side lines [b, b+nb).
type lineChange struct{ a, na, b, nb int }

// lineChanges groups an edit script into changes.
func lineChanges(script []edit) []lineChange {
	var out []lineChange
	for i := 0; i < len(script); {
		if script[i].kind == ' ' {
			i++
			continue
		}
		c := lineChange{a: script[i].a, b: script[i].b}
		for ; i < len(script) && script[i].kind != ' '; i++ {
			if script[i].kind == '-' {
				c.na++
			} else {
				c.nb++
			}
		}
		out = append(out, c)
	}
	return out
}

// merge3 merges ours and theirs, both made from base, into chunks (xdl_do_merge).
func merge3(base, ours, theirs []string) []mergeChunk {
	x1 := lineChanges(diffLines(base, ours))
	x2 := lineChanges(diffLines(base, theirs))
	var out []mergeChunk
	// appendChunk joins a chunk that overlaps or touches the last one (in ours or theirs
	// coordinates) into it; joined chunks of different kinds are a conflict.
	appendChunk := func(c mergeChunk) {
		if n := len(out); n > 0 {
			m := &out[n-1]
			if c.ours0 <= m.ours1 || c.theirs0 <= m.theirs1 {
				if c.kind != m.kind {
					m.kind = mergeConflict
				}
				m.base1, m.ours1, m.theirs1 = c.base1, c.ours1, c.theirs1
				return
			}
		}
		out = append(out, c)
	}
	oursOnly := func(c lineChange, theirsAt int) mergeChunk {
		return mergeChunk{kind: mergeOurs, base0: c.a, base1: c.a + c.na, ours0: c.b, ours1: c.b + c.nb, theirs0: theirsAt, theirs1: theirsAt + c.na}
	}
	theirsOnly := func(c lineChange, oursAt int) mergeChunk {
		return mergeChunk{kind: mergeTheirs, base0: c.a, base1: c.a + c.na, ours0: oursAt, ours1: oursAt + c.na, theirs0: c.b, theirs1: c.b + c.nb}
	}
	i, j := 0, 0
	for i < len(x1) && j < len(x2) {
		a, b := x1[i], x2[j]
		if a.a+a.na < b.a {
			appendChunk(oursOnly(a, b.b-b.a+a.a))
			i++
			continue
		}
		if b.a+b.na < a.a {
			appendChunk(theirsOnly(b, a.b-a.a+b.a))
			j++
			continue
		}
		if a.a != b.a || a.na != b.na || a.nb != b.nb || !equalLines(ours[a.b:a.b+a.nb], theirs[b.b:b.b+b.nb]) {
			// The conflict spans both changes: each side's range grows by the other's overhang.
			off := a.a - b.a
			ffo := off + a.na - b.na
			i0, i1, i2 := a.a, a.b, b.b
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := a.a + a.na - i0
			chg1 := a.b + a.nb - i1
			chg2 := b.b + b.nb - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			appendChunk(mergeChunk{kind: mergeConflict, base0: i0, base1: i0 + chg0, ours0: i1, ours1: i1 + chg1, theirs0: i2, theirs1: i2 + chg2})
		}
		end1, end2 := a.a+a.na, b.a+b.na
		if end1 >= end2 {
			j++
		}
		if end2 >= end1 {
			i++
		}
	}
	for ; i < len(x1); i++ {
		a := x1[i]
		appendChunk(oursOnly(a, a.a+len(theirs)-len(base)))
	}
	for ; j < len(x2); j++ {
		b := x2[j]
		appendChunk(theirsOnly(b, b.a+len(ours)-len(base)))
	}
	out = refineConflicts(out, ours, theirs)
	return joinConflicts(out, ours)
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// refineConflicts diffs the two sides of each conflict: where they agree the lines are common,
// so the conflict shrinks to the lines that differ, possibly in several pieces, or dissolves
// into a same-change chunk when the sides are equal (xdl_refine_conflicts).
func refineConflicts(chunks []mergeChunk, ours, theirs []string) []mergeChunk {
	out := make([]mergeChunk, 0, len(chunks))
	for _, m := range chunks {
		if m.kind != mergeConflict || m.ours1 == m.ours0 || m.theirs1 == m.theirs0 {
			out = append(out, m)
			continue
		}
		diffs := lineChanges(diffLines(ours[m.ours0:m.ours1], theirs[m.theirs0:m.theirs1]))
		if len(diffs) == 0 {
			m.kind = mergeSame
			out = append(out, m)
			continue
		}
		for _, d := range diffs {
			out = append(out, mergeChunk{kind: mergeConflict, base0: m.base0, base1: m.base1,
				ours0: m.ours0 + d.a, ours1: m.ours0 + d.a + d.na, theirs0: m.theirs0 + d.b, theirs1: m.theirs0 + d.b + d.nb})
		}
	}
	return out
}

// joinConflicts joins two consecutive conflicts separated by three lines or fewer of ours, or
// by lines without a letter or digit, into one (xdl_simplify_non_conflicts, ALNUM level): a
// person resolves one region rather than several split by a closing brace.
func joinConflicts(chunks []mergeChunk, ours []string) []mergeChunk {
	out := make([]mergeChunk, 0, len(chunks))
	for _, m := range chunks {
		if n := len(out); n > 0 {
			prev := &out[n-1]
			if prev.kind == mergeConflict && m.kind == mergeConflict {
				begin, end := prev.ours1, m.ours0
				if end-begin <= 3 || !linesHaveAlnum(ours[begin:end]) {
					prev.ours1, prev.theirs1 = m.ours1, m.theirs1
					prev.base1 = max(prev.base1, m.base1)
					continue
				}
			}
		}
		out = append(out, m)
	}
	return out
}

func linesHaveAlnum(lines []string) bool {
	for _, l := range lines {
		for i := 0; i < len(l); i++ {
			c := l[i]
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return true
			}
		}
	}
	return false
}

// mergeLabels name the sides in conflict markers: "<<<<<<< Ours", ">>>>>>> Theirs".
type mergeLabels struct{ Ours, Theirs string }

// mergeFile merges whole files as `git merge-file -p -L ours -L base -L theirs` does: the result
// with conflict markers, and the number of conflicts (git's exit status).
func mergeFile(base, ours, theirs []byte, labels mergeLabels) ([]byte, int) {
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	chunks := merge3(b, o, t)
	conflicts := 0
	for _, c := range chunks {
		if c.kind == mergeConflict {
			conflicts++
		}
	}
	return renderMerge(b, o, t, chunks, func(int, mergeChunk) resolution { return resolution{} }, labels), conflicts
}

// take says how one chunk of a merge is resolved in the output.
type take uint8

const (
	takeDefault take = iota // a clean chunk: the side that changed it; a conflict: markers
	takeOurs                // the lines as ours has them
	takeTheirs              // the lines as theirs has them
	takeBoth                // ours, then theirs
	takeText                // text given by the person
	takeMarkers             // both sides between conflict markers
)

type resolution struct {
	take take
	text []byte
}

// renderMerge writes the merged file: ours, with each chunk replaced as decide says
// (xdl_fill_merge_buffer). decide gets the chunk's index in chunks.
func renderMerge(base, ours, theirs []string, chunks []mergeChunk, decide func(i int, c mergeChunk) resolution, labels mergeLabels) []byte {
	var out []byte
	copyLines := func(lines []string, addNL, cr bool) {
		for _, l := range lines {
			out = append(out, l...)
		}
		if addNL && len(lines) > 0 {
			if last := lines[len(lines)-1]; last == "" || last[len(last)-1] != '\n' {
				if cr {
					out = append(out, '\r')
				}
				out = append(out, '\n')
			}
		}
	}
	marker := func(c byte, label string, cr bool) {
		for k := 0; k < 7; k++ {
			out = append(out, c)
		}
		if label != "" {
			out = append(out, ' ')
			out = append(out, label...)
		}
		if cr {
			out = append(out, '\r')
		}
		out = append(out, '\n')
	}
	at := 0 // next line of ours to copy
	for i, c := range chunks {
		r := decide(i, c)
		if c.kind == mergeSame || c.kind == mergeOurs && r.take == takeDefault {
			continue // ours has it already: copied with the lines that follow
		}
		copyLines(ours[at:c.ours0], false, false)
		at = c.ours1
		o, t := ours[c.ours0:c.ours1], theirs[c.theirs0:c.theirs1]
		switch r.take {
		case takeDefault:
			if c.kind == mergeTheirs {
				copyLines(t, false, false)
				continue
			}
			fallthrough
		case takeMarkers:
			cr := needsCR(base, ours, theirs, c)
			marker('<', labels.Ours, cr)
			copyLines(o, true, cr)
			marker('=', "", cr)
			copyLines(t, true, cr)
			marker('>', labels.Theirs, cr)
		case takeOurs:
			copyLines(o, false, false)
		case takeTheirs:
			copyLines(t, false, false)
		case takeBoth:
			cr := needsCR(base, ours, theirs, c)
			copyLines(o, len(t) > 0, cr)
			copyLines(t, false, false)
		case takeText:
			out = append(out, r.text...)
		}
	}
	copyLines(ours[at:], false, false)
	return out
}

// eolCRLF says whether line i of a file ends in CRLF: 1 yes, 0 no, -1 undecided (is_eol_crlf).
func eolCRLF(lines []string, i int) int {
	crlf := func(l string) int {
		if len(l) > 1 && l[len(l)-2] == '\r' {
			return 1
		}
		return 0
	}
	switch {
	case i < len(lines)-1:
		return crlf(lines[i])
	case len(lines) == 0:
		return -1
	}
	if l := lines[i]; l != "" && l[len(l)-1] == '\n' {
		return crlf(l)
	}
	if i == 0 {
		return -1
	}
	return crlf(lines[i-1])
}

// needsCR: conflict markers (and a newline added to a last line) follow the files' line ends
// (is_cr_needed): CRLF when the lines before the chunk in both sides and base's first line end
// so, LF when any says LF or nothing can be told.
func needsCR(base, ours, theirs []string, c mergeChunk) bool {
	before := func(n int) int { return max(n-1, 0) }
	v := eolCRLF(ours, before(c.ours0))
	if v != 0 {
		v = eolCRLF(theirs, before(c.theirs0))
	}
	if v != 0 {
		v = eolCRLF(base, 0)
	}
	return v == 1
}
