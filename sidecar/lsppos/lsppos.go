// Package lsppos converts between the sidecar's positions (span: 1-based lines, 1-based
// columns in Unicode code points, byte offsets) and LSP positions (go.lsp.dev/protocol's
// Position: 0-based lines, 0-based columns in UTF-16 code units), and applies LSP content
// changes to a document's bytes. go.lsp.dev/protocol declares the types but converts
// nothing, so the counting of UTF-16 units is here.
//
// Lines end at '\n' (a preceding '\r' is not part of the line), as span.Index counts them.
package lsppos

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// Mapper converts positions for one version of a document.
type Mapper struct {
	Index *span.Index
}

// NewMapper indexes src.
func NewMapper(src []byte) *Mapper { return &Mapper{Index: span.NewIndex(src)} }

// FromIndex wraps an existing index (a flow.Flow's, say) without re-indexing.
func FromIndex(x *span.Index) *Mapper { return &Mapper{Index: x} }

// OffsetPosition converts a byte offset to an LSP position. An offset inside a multi-byte
// character is moved back to the character's start.
func (m *Mapper) OffsetPosition(offset int) protocol.Position {
	src := m.Index.Src()
	if offset < 0 {
		offset = 0
	}
	if offset > len(src) {
		offset = len(src)
	}
	p := m.Index.At(offset)
	start := m.Index.LineStart(p.Line)
	for offset > start && offset < len(src) && !utf8.RuneStart(src[offset]) {
		offset--
	}
	return protocol.Position{Line: uint32(p.Line - 1), Character: uint32(utf16Len(src[start:offset]))}
}

// SpanOffset resolves a span position to a byte offset. Positions carry both a line and
// column and an offset; the offset wins when it agrees with the line and column, otherwise
// (a position written by hand, or for another version) the line and column are used.
func (m *Mapper) SpanOffset(p span.Pos) int {
	if p.Line <= 0 {
		return clamp(p.Offset, len(m.Index.Src()))
	}
	if p.Offset >= 0 && p.Offset <= len(m.Index.Src()) {
		if at := m.Index.At(p.Offset); at.Line == p.Line && at.Col == p.Col {
			return p.Offset
		}
	}
	return m.Index.Pos(p.Line, p.Col).Offset
}

// Position converts a span position to an LSP position.
func (m *Mapper) Position(p span.Pos) protocol.Position { return m.OffsetPosition(m.SpanOffset(p)) }

// Range converts a span range to an LSP range.
func (m *Mapper) Range(r span.Range) protocol.Range {
	return protocol.Range{Start: m.Position(r.Start), End: m.Position(r.End)}
}

// TextEdit converts a span edit to an LSP edit.
func (m *Mapper) TextEdit(e span.TextEdit) protocol.TextEdit {
	return protocol.TextEdit{Range: m.Range(e.Range), NewText: e.NewText}
}

// TextEdits converts span edits to LSP edits.
func (m *Mapper) TextEdits(es []span.TextEdit) []protocol.TextEdit {
	out := make([]protocol.TextEdit, len(es))
	for i, e := range es {
		out[i] = m.TextEdit(e)
	}
	return out
}

// Offset converts an LSP position to a byte offset. As the LSP specification asks, a
// character past the end of the line means the end of the line. A line past the end of
// the document, or a column that splits a UTF-16 surrogate pair, is an error.
func (m *Mapper) Offset(p protocol.Position) (int, error) {
	src := m.Index.Src()
	line := int(p.Line) + 1
	if line > m.Index.LineCount() {
		return 0, fmt.Errorf("line %d is past the end of the document (%d lines)", p.Line, m.Index.LineCount())
	}
	off := m.Index.LineStart(line)
	end := m.Index.LineEnd(line)
	want := int(p.Character)
	for units := 0; units < want && off < end; {
		r, n := utf8.DecodeRune(src[off:end])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > want {
			return 0, fmt.Errorf("character %d of line %d splits a UTF-16 surrogate pair", p.Character, p.Line)
		}
		units += w
		off += n
	}
	return off, nil
}

// SpanPos converts an LSP position to a span position.
func (m *Mapper) SpanPos(p protocol.Position) (span.Pos, error) {
	off, err := m.Offset(p)
	if err != nil {
		return span.Pos{}, err
	}
	return m.Index.At(off), nil
}

// OffsetRange converts an LSP range to byte offsets, checking start <= end.
func (m *Mapper) OffsetRange(r protocol.Range) (start, end int, err error) {
	if start, err = m.Offset(r.Start); err != nil {
		return 0, 0, err
	}
	if end, err = m.Offset(r.End); err != nil {
		return 0, 0, err
	}
	if end < start {
		return 0, 0, fmt.Errorf("range end %d:%d is before its start %d:%d", r.End.Line, r.End.Character, r.Start.Line, r.Start.Character)
	}
	return start, end, nil
}

// ApplyChanges applies LSP content changes in order, each against the text the previous
// one produced, and returns the new text. src is not modified (with no changes, src itself
// is returned).
func ApplyChanges(src []byte, changes []protocol.TextDocumentContentChangeEvent) ([]byte, error) {
	cur := src
	for i, ch := range changes {
		var c *protocol.TextDocumentContentChangePartial
		switch ch := ch.(type) {
		case *protocol.TextDocumentContentChangeWholeDocument:
			cur = []byte(ch.Text)
			continue
		case *protocol.TextDocumentContentChangePartial:
			c = ch
		default:
			return nil, fmt.Errorf("content change %d: neither a range and text nor a whole text", i)
		}
		m := NewMapper(cur)
		start, end, err := m.OffsetRange(c.Range)
		if err != nil {
			return nil, fmt.Errorf("content change %d: %w", i, err)
		}
		next := make([]byte, 0, len(cur)-(end-start)+len(c.Text))
		next = append(next, cur[:start]...)
		next = append(next, c.Text...)
		next = append(next, cur[end:]...)
		cur = next
	}
	return cur, nil
}

func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if utf16.RuneLen(r) == 2 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func clamp(v, hi int) int {
	if v < 0 {
		return 0
	}
	if v > hi {
		return hi
	}
	return v
}
