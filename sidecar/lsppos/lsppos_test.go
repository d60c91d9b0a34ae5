package lsppos

import (
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

type (
	Position = protocol.Position
	Range    = protocol.Range
)

func pos(line, char uint32) Position { return Position{Line: line, Character: char} }

// partial is an LSP content change of a range.
func partial(r Range, text string) protocol.TextDocumentContentChangeEvent {
	return &protocol.TextDocumentContentChangePartial{Range: r, Text: text}
}

// The UTF-16 column of each rune: ASCII 1 unit, Hangul 1 unit (3 bytes), emoji 2 units (4 bytes).
func TestRoundTrip(t *testing.T) {
	src := []byte("a: 한글\r\nb: 😀x\n\nlast")
	m := NewMapper(src)
	for off := 0; off <= len(src); off++ {
		p := m.OffsetPosition(off)
		back, err := m.Offset(p)
		if err != nil {
			t.Fatalf("offset %d -> %+v: %v", off, p, err)
		}
		// Offsets inside a multi-byte rune or inside "\r\n" map back to the rune's start
		// or the line's end.
		if back > off {
			t.Errorf("offset %d -> %+v -> %d", off, p, back)
		}
	}
	cases := []struct {
		pos  Position
		want int
	}{
		{pos(0, 0), 0},
		{pos(0, 3), 3},
		{pos(0, 4), 6},  // after 한 (3 bytes, 1 unit)
		{pos(0, 5), 9},  // end of line 0, before "\r\n"
		{pos(0, 99), 9}, // past the end: end of line
		{pos(1, 3), 14}, // before 😀
		{pos(1, 5), 18}, // after 😀 (4 bytes, 2 units)
		{pos(1, 6), 19}, // after x
		{pos(2, 0), 20}, // the empty line
		{pos(3, 4), 25}, // end of file
	}
	for _, c := range cases {
		got, err := m.Offset(c.pos)
		if err != nil || got != c.want {
			t.Errorf("Offset(%+v) = %d, %v; want %d", c.pos, got, err, c.want)
		}
		if p := m.OffsetPosition(c.want); c.pos.Character != 99 && p != c.pos {
			t.Errorf("OffsetPosition(%d) = %+v; want %+v", c.want, p, c.pos)
		}
	}
	if _, err := m.Offset(pos(1, 4)); err == nil {
		t.Error("a column inside a surrogate pair was accepted")
	}
	if _, err := m.Offset(pos(4, 0)); err == nil {
		t.Error("a line past the end was accepted")
	}
}

func TestSpanConversion(t *testing.T) {
	src := []byte("x: 😀😀 y\n")
	m := NewMapper(src)
	// Column 4 in code points is after one emoji: 3 + 2 UTF-16 units.
	p := m.Position(span.Pos{Line: 1, Col: 5})
	if p != (pos(0, 5)) {
		t.Fatalf("got %+v", p)
	}
	// A position whose offset disagrees with its line and column is resolved by line/column.
	p = m.Position(span.Pos{Line: 1, Col: 6, Offset: 0})
	if p != (pos(0, 7)) {
		t.Fatalf("got %+v", p)
	}
	sp, err := m.SpanPos(pos(0, 7))
	if err != nil || sp.Col != 6 || sp.Offset != 11 {
		t.Fatalf("SpanPos = %+v, %v", sp, err)
	}
}

func TestApplyChanges(t *testing.T) {
	src := []byte("name: 😀\nagents: []\n")
	got, err := ApplyChanges(src, []protocol.TextDocumentContentChangeEvent{
		partial(Range{Start: pos(0, 6), End: pos(0, 8)}, "flow"),
		partial(Range{Start: pos(1, 8), End: pos(1, 10)}, "[{id: a1}]"),
		partial(Range{Start: pos(2, 0), End: pos(2, 0)}, "# end\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "name: flow\nagents: [{id: a1}]\n# end\n"; string(got) != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if string(src) != "name: 😀\nagents: []\n" {
		t.Fatal("source modified")
	}
	got, err = ApplyChanges(src, []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: "whole"}})
	if err != nil || string(got) != "whole" {
		t.Fatalf("whole: %q %v", got, err)
	}
	if _, err := ApplyChanges(src, []protocol.TextDocumentContentChangeEvent{partial(Range{Start: pos(1, 2), End: pos(0, 1)}, "")}); err == nil {
		t.Fatal("inverted range accepted")
	}
}

func FuzzApplyChanges(f *testing.F) {
	f.Add([]byte("a: 😀\nb\n"), uint32(0), uint32(3), uint32(1), uint32(1), "x")
	f.Fuzz(func(t *testing.T, src []byte, l1, c1, l2, c2 uint32, text string) {
		out, err := ApplyChanges(src, []protocol.TextDocumentContentChangeEvent{partial(Range{Start: pos(l1, c1), End: pos(l2, c2)}, text)})
		if err != nil {
			return
		}
		if len(out) < len(text) {
			t.Fatalf("lost the inserted text")
		}
	})
}

// Every character boundary of a text mixing ASCII, the BMP (Hangul, an em dash) and the
// astral planes (emoji, a Gothic letter, a CJK extension B ideograph: two UTF-16 units each)
// maps to the column unicode/utf16 counts for the line up to it, and back.
func TestAstralPlaneAgainstUTF16(t *testing.T) {
	lines := []string{"name: \"😀 Planner — 계획 𐌰\"", "  - 𠀋𠀋: x😀y", "", "🎉"}
	var src []byte
	for i, l := range lines {
		if i > 0 {
			src = append(src, '\n')
		}
		src = append(src, l...)
	}
	m := NewMapper(src)
	off := 0
	for line, l := range lines {
		for i := 0; ; {
			want := Position{Line: uint32(line), Character: uint32(len(utf16.Encode([]rune(l[:i]))))}
			if got := m.OffsetPosition(off + i); got != want {
				t.Errorf("line %d byte %d: OffsetPosition = %+v, want %+v", line, i, got, want)
			}
			if back, err := m.Offset(want); err != nil || back != off+i {
				t.Errorf("line %d: Offset(%+v) = %d, %v; want %d", line, want, back, err, off+i)
			}
			if i == len(l) {
				break
			}
			r, n := utf8.DecodeRuneInString(l[i:])
			if utf16.RuneLen(r) == 2 {
				// The column between the two halves of the pair is refused, not rounded.
				if _, err := m.Offset(Position{Line: want.Line, Character: want.Character + 1}); err == nil {
					t.Errorf("line %d: a column inside the surrogate pair of %q was accepted", line, r)
				}
			}
			i += n
		}
		off += len(l) + 1
	}
	// An edit after astral characters lands where the UTF-16 columns say.
	got, err := ApplyChanges(src, []protocol.TextDocumentContentChangeEvent{partial(Range{Start: pos(1, 13), End: pos(1, 14)}, "Y")})
	if err != nil {
		t.Fatal(err)
	}
	if want := "  - 𠀋𠀋: x😀Y"; string(got[len(lines[0])+1:len(lines[0])+1+len(want)]) != want {
		t.Errorf("edit after astral characters: %q", got)
	}
}
