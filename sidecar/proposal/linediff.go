package proposal

// A line diff (Myers' O(ND) algorithm) and git-style hunks with three lines of context.

import (
	"bytes"
	"strings"
)

// maxEditDistance bounds the Myers search; beyond it the changed middle is emitted as one
// delete-then-add block (still a correct patch, just not a minimal one).
const maxEditDistance = 2000

const contextLines = 3

// edit is one line of an edit script. a and b are the line indexes in old and new at which the
// line sits (for '+', a is where it is inserted; for '-', b likewise).
type edit struct {
	kind byte // ' ', '-', '+'
	a, b int
}

// splitLines cuts data after every '\n'; the last line may lack it. The lines are substrings
// of one copy of data (a copy per line was most of a diff's allocations).
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := string(data)
	out := make([]string, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// diffLines returns an edit script turning old into new. The common head and tail are kept
// out of the search (and out of the interning, most of a file when little changed).
func diffLines(old, new []string) []edit {
	pre := 0
	for pre < len(old) && pre < len(new) && old[pre] == new[pre] {
		pre++
	}
	suf := 0
	for suf < len(old)-pre && suf < len(new)-pre && old[len(old)-1-suf] == new[len(new)-1-suf] {
		suf++
	}
	oldMid, newMid := old[pre:len(old)-suf], new[pre:len(new)-suf]
	ids := make(map[string]int, len(oldMid)+len(newMid))
	intern := func(ls []string) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	a, b := intern(oldMid), intern(newMid)
	script := make([]edit, 0, pre+suf+len(a)+len(b))
	for i := 0; i < pre; i++ {
		script = append(script, edit{' ', i, i})
	}
	script = append(script, myers(a, b, pre, pre)...)
	for i := 0; i < suf; i++ {
		script = append(script, edit{' ', len(old) - suf + i, len(new) - suf + i})
	}
	return script
}

// myers computes a shortest edit script of a into b; offA/offB shift the reported indexes.
func myers(a, b []int, offA, offB int) []edit {
	n, m := len(a), len(b)
	replaceAll := func() []edit {
		var s []edit
		for i := 0; i < n; i++ {
			s = append(s, edit{'-', offA + i, offB})
		}
		for j := 0; j < m; j++ {
			s = append(s, edit{'+', offA + n, offB + j})
		}
		return s
	}
	if n == 0 || m == 0 {
		return replaceAll()
	}
	maxD := min(n+m, maxEditDistance)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int32 // memory grows with D², hence the bound above
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		snap := make([]int32, 2*d+1)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
			}
		}
		for k := -d; k <= d; k++ {
			snap[k+d] = int32(v[off+k])
		}
		trace = append(trace, snap)
	}
	if found < 0 {
		return replaceAll()
	}
	// Walk back through the snapshots: each step d is one insertion or deletion followed by a
	// (possibly empty) diagonal of equal lines.
	var rev []edit
	x, y := n, m
	for d := found; d > 0; d-- {
		prev := trace[d-1] // V after step d-1, indexed k+(d-1)
		k := x - y
		var pk int
		if k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := int(prev[pk+d-1])
		py := px - pk
		sx, sy := px+1, py // after a deletion of a[px]
		if pk == k+1 {
			sx, sy = px, py+1 // after an insertion of b[py]
		}
		for x > sx && y > sy {
			x--
			y--
			rev = append(rev, edit{' ', offA + x, offB + y})
		}
		if pk == k+1 {
			rev = append(rev, edit{'+', offA + px, offB + py})
		} else {
			rev = append(rev, edit{'-', offA + px, offB + py})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, edit{' ', offA + x, offB + y})
	}
	out := make([]edit, len(rev))
	for i := range rev {
		out[i] = rev[len(rev)-1-i]
	}
	return out
}

// hunk is a range of the edit script shown together.
type hunk struct {
	oldStart, oldCount, newStart, newCount int // 0-based starts
	edits                                  []edit
}

// hunks groups an edit script into git-style hunks.
func hunks(script []edit) []hunk {
	var out []hunk
	i := 0
	for i < len(script) {
		for i < len(script) && script[i].kind == ' ' {
			i++
		}
		if i == len(script) {
			break
		}
		start := max(0, i-contextLines)
		for start < i && script[start].kind != ' ' {
			start++
		}
		end := i // one past the last change seen
		for j := i; j < len(script); j++ {
			if script[j].kind != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*contextLines {
				break
			}
		}
		stop := min(len(script), end+contextLines)
		h := hunk{edits: script[start:stop], oldStart: script[start].a, newStart: script[start].b}
		for _, e := range h.edits {
			if e.kind != '+' {
				h.oldCount++
			}
			if e.kind != '-' {
				h.newCount++
			}
		}
		out = append(out, h)
		i = stop
	}
	return out
}
