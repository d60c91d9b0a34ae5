package flow

import (
	"bytes"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// maxDiffD bounds the Myers search; past it the changed region is returned as one edit,
// which is still correct, only less minimal.
const maxDiffD = 2000

// Diff returns line-granular edits that turn old into new: one edit per run of changed
// lines, so untouched lines (and their comments) are never part of an edit.
func Diff(old, new []byte) []span.TextEdit {
	if bytes.Equal(old, new) {
		return nil
	}
	a, b := splitLines(old), splitLines(new)
	// Trim the common prefix and suffix first: edits are usually local.
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		suf++
	}
	x := span.NewIndex(old)
	aoff := lineOffsets(a)
	bmid := b[pre : len(b)-suf]
	amid := a[pre : len(a)-suf]
	var edits []span.TextEdit
	emit := func(ai, aj, bi, bj int) { // replace amid[ai:aj] by bmid[bi:bj]
		start := aoff[pre+ai]
		end := aoff[pre+aj]
		edits = append(edits, span.TextEdit{Range: x.Range(start, end), NewText: string(bytes.Join(bmid[bi:bj], nil))})
	}
	ops, ok := myers(amid, bmid)
	if !ok {
		emit(0, len(amid), 0, len(bmid))
		return edits
	}
	// Group the edit script into hunks of consecutive non-equal lines.
	ai, bi := 0, 0
	for k := 0; k < len(ops); {
		if ops[k] == opEq {
			ai++
			bi++
			k++
			continue
		}
		sa, sb := ai, bi
		for k < len(ops) && ops[k] != opEq {
			if ops[k] == opDel {
				ai++
			} else {
				bi++
			}
			k++
		}
		emit(sa, ai, sb, bi)
	}
	return edits
}

func splitLines(s []byte) [][]byte {
	var out [][]byte
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func lineOffsets(lines [][]byte) []int {
	off := make([]int, len(lines)+1)
	for i, l := range lines {
		off[i+1] = off[i] + len(l)
	}
	return off
}

type diffOp byte

const (
	opEq diffOp = iota
	opDel
	opIns
)

// myers computes a shortest edit script (Myers 1986). It gives up past maxDiffD.
func myers(a, b [][]byte) ([]diffOp, bool) {
	n, m := len(a), len(b)
	max := n + m
	if max == 0 {
		return nil, true
	}
	offset := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int
	for d := 0; d <= max; d++ {
		if d > maxDiffD {
			return nil, false
		}
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && bytes.Equal(a[x], b[y]) {
				x++
				y++
			}
			v[offset+k] = x
			if x >= n && y >= m {
				return backtrack(trace, offset, n, m, d), true
			}
		}
	}
	return nil, false
}

func backtrack(trace [][]int, offset, x, y, d int) []diffOp {
	var ops []diffOp
	for ; d > 0; d-- {
		v := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[offset+pk]
		py := px - pk
		for x > px && y > py {
			ops = append(ops, opEq)
			x--
			y--
		}
		if x == px {
			ops = append(ops, opIns)
		} else {
			ops = append(ops, opDel)
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		ops = append(ops, opEq)
		x--
		y--
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}
