// Package span holds source positions, ranges and text edits over a file's bytes. Lines and
// columns are 1-based; columns count Unicode code points, as yaml.v3 does. Offsets are byte
// offsets, which is what edits are applied with. Conversion to LSP's UTF-16 columns is the
// server's business.
package span

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Pos is a position in a file.
type Pos struct {
	Line   int `json:"line"`
	Col    int `json:"column"`
	Offset int `json:"offset"`
}

// Range is a half-open range [Start, End).
type Range struct {
	Start Pos `json:"start"`
	End   Pos `json:"end"`
}

func (r Range) String() string {
	return fmt.Sprintf("%d:%d-%d:%d", r.Start.Line, r.Start.Col, r.End.Line, r.End.Col)
}

// TextEdit replaces the bytes of Range with NewText. An insertion has Start == End.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// Index maps between byte offsets and line/column positions of one source.
type Index struct {
	src   []byte
	lines []int // byte offset of the start of each line
}

// NewIndex indexes src. It keeps a reference to src; do not modify it afterwards.
func NewIndex(src []byte) *Index {
	lines := []int{0}
	for i, b := range src {
		if b == '\n' {
			lines = append(lines, i+1)
		}
	}
	return &Index{src: src, lines: lines}
}

// Src is the indexed source.
func (x *Index) Src() []byte { return x.src }

// LineCount is the number of lines (a trailing newline starts an empty last line).
func (x *Index) LineCount() int { return len(x.lines) }

// LineStart is the byte offset of the start of line (1-based), clamped to the file.
func (x *Index) LineStart(line int) int {
	if line < 1 {
		return 0
	}
	if line > len(x.lines) {
		return len(x.src)
	}
	return x.lines[line-1]
}

// LineEnd is the byte offset of the end of line (before its newline, and before a '\r').
func (x *Index) LineEnd(line int) int {
	if line >= len(x.lines) {
		end := len(x.src)
		if end > 0 && x.src[end-1] == '\r' {
			end--
		}
		return end
	}
	end := x.lines[line] - 1
	if end > 0 && x.src[end-1] == '\r' {
		end--
	}
	return end
}

// At returns the position of a byte offset.
func (x *Index) At(offset int) Pos {
	if offset < 0 {
		offset = 0
	}
	if offset > len(x.src) {
		offset = len(x.src)
	}
	line := sort.Search(len(x.lines), func(i int) bool { return x.lines[i] > offset })
	start := x.lines[line-1]
	return Pos{Line: line, Col: utf8.RuneCount(x.src[start:offset]) + 1, Offset: offset}
}

// Pos returns the position of line and column (both 1-based, column in code points),
// clamped to the end of the line.
func (x *Index) Pos(line, col int) Pos {
	off := x.LineStart(line)
	end := x.LineEnd(line)
	for c := 1; c < col && off < end; c++ {
		_, n := utf8.DecodeRune(x.src[off:end])
		off += n
	}
	return x.At(off)
}

// Range returns the range between two byte offsets.
func (x *Index) Range(start, end int) Range { return Range{Start: x.At(start), End: x.At(end)} }

// Apply applies non-overlapping edits (by byte offset) to src and returns the new bytes.
func Apply(src []byte, edits []TextEdit) ([]byte, error) {
	sorted := append([]TextEdit(nil), edits...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Range.Start.Offset < sorted[j].Range.Start.Offset })
	out := make([]byte, 0, len(src))
	last := 0
	for _, e := range sorted {
		s, t := e.Range.Start.Offset, e.Range.End.Offset
		if s < last || t < s || t > len(src) {
			return nil, fmt.Errorf("span: overlapping or out-of-range edit at %s", e.Range)
		}
		out = append(out, src[last:s]...)
		out = append(out, e.NewText...)
		last = t
	}
	return append(out, src[last:]...), nil
}
