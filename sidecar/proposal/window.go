package proposal

// Two versions of a file diffed through the window where they differ: their common head and
// tail are found in their bytes, and only the lines between (with a margin of common lines on
// each side, for a patch's context) are split and diffed. diffLines trims the common lines of
// the window again, so the edits are exactly the whole files' edits; but a one-line change in
// a 200 MB file costs that line, not a copy of each version and a slot per line, which is
// what splitting the whole files cost (more memory than git apply takes for the same file).

import (
	"bytes"
	"io"
)

// lineWindow is where two versions differ, as lines.
type lineWindow struct {
	oldLines, newLines []string // the window's lines
	oldFirst, newFirst int      // the 0-based line number of each side's first window line
}

// windowOf is the window of old and new, with margin common lines on each side where the
// files have them.
func windowOf(old, new []byte, margin int) lineWindow {
	p := commonPrefix(old, new)
	cut := bytes.LastIndexByte(old[:p], '\n') + 1 // the lines before cut are the same
	s := commonSuffix(old[cut:], new[cut:])
	// The common tail, from the first line start inside it.
	endOld, endNew := len(old)-s, len(new)-s
	if j := bytes.IndexByte(old[endOld:], '\n'); j >= 0 {
		endOld, endNew = endOld+j+1, endNew+j+1
	} else {
		endOld, endNew = len(old), len(new)
	}
	start := cut
	for range margin {
		if start == 0 {
			break
		}
		start = bytes.LastIndexByte(old[:start-1], '\n') + 1
	}
	for range margin {
		j := bytes.IndexByte(old[endOld:], '\n')
		if j < 0 {
			endOld, endNew = len(old), len(new)
			break
		}
		endOld, endNew = endOld+j+1, endNew+j+1
	}
	first := bytes.Count(old[:start], []byte{'\n'})
	return lineWindow{oldLines: splitLines(old[start:endOld]), newLines: splitLines(new[start:endNew]), oldFirst: first, newFirst: first}
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && string(a[i:i+8]) == string(b[i:i+8]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && string(a[len(a)-i-8:len(a)-i]) == string(b[len(b)-i-8:len(b)-i]) {
		i += 8
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// lineChangesOf are the changed line ranges of old → new, numbered in the whole files.
func lineChangesOf(old, new []byte) []lineChange {
	w := windowOf(old, new, 0)
	cs := lineChanges(diffLines(w.oldLines, w.newLines))
	for i := range cs {
		cs[i].a += w.oldFirst
		cs[i].b += w.newFirst
	}
	return cs
}

// byteLines is a file's bytes as go-gitdiff reads a preimage's lines: each line a slice of
// the bytes (no copy), found by walking on from the last line asked for (no index of every
// line). go-gitdiff's own reader kept a copy of each line and an index of them all: three times
// a big file's size for a hunk in its middle.
type byteLines struct {
	data []byte
	line int64 // the line that starts at off
	off  int
}

// ReadAt is the bytes' (the applier reads a whole file that has no fragment this way).
func (b *byteLines) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b.data)) {
		return 0, io.EOF
	}
	n := copy(p, b.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// ReadLinesAt reads len(lines) lines from line offset (0-based), each with its newline.
func (b *byteLines) ReadLinesAt(lines [][]byte, offset int64) (int, error) {
	if offset < b.line {
		b.line, b.off = 0, 0
	}
	for b.line < offset && b.off < len(b.data) {
		b.off += lineLen(b.data[b.off:])
		b.line++
	}
	off := b.off
	for n := range lines {
		if off >= len(b.data) {
			return n, io.EOF
		}
		l := lineLen(b.data[off:])
		lines[n] = b.data[off : off+l : off+l]
		off += l
	}
	return len(lines), nil
}

// lineLen is the length of the first line of data, its newline included.
func lineLen(data []byte) int {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1
	}
	return len(data)
}
