package lsppos

import (
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

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
		{Position{0, 0}, 0},
		{Position{0, 3}, 3},
		{Position{0, 4}, 6},  // after 한 (3 bytes, 1 unit)
		{Position{0, 5}, 9},  // end of line 0, before "\r\n"
		{Position{0, 99}, 9}, // past the end: end of line
		{Position{1, 3}, 14}, // before 😀
		{Position{1, 5}, 18}, // after 😀 (4 bytes, 2 units)
		{Position{1, 6}, 19}, // after x
		{Position{2, 0}, 20}, // the empty line
		{Position{3, 4}, 25}, // end of file
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
	if _, err := m.Offset(Position{1, 4}); err == nil {
		t.Error("a column inside a surrogate pair was accepted")
	}
	if _, err := m.Offset(Position{4, 0}); err == nil {
		t.Error("a line past the end was accepted")
	}
}

func TestSpanConversion(t *testing.T) {
	src := []byte("x: 😀😀 y\n")
	m := NewMapper(src)
	// Column 4 in code points is after one emoji: 3 + 2 UTF-16 units.
	p := m.Position(span.Pos{Line: 1, Col: 5})
	if p != (Position{0, 5}) {
		t.Fatalf("got %+v", p)
	}
	// A position whose offset disagrees with its line and column is resolved by line/column.
	p = m.Position(span.Pos{Line: 1, Col: 6, Offset: 0})
	if p != (Position{0, 7}) {
		t.Fatalf("got %+v", p)
	}
	sp, err := m.SpanPos(Position{0, 7})
	if err != nil || sp.Col != 6 || sp.Offset != 11 {
		t.Fatalf("SpanPos = %+v, %v", sp, err)
	}
}

func TestApplyChanges(t *testing.T) {
	src := []byte("name: 😀\nagents: []\n")
	got, err := ApplyChanges(src, []Change{
		{Range: &Range{Position{0, 6}, Position{0, 8}}, Text: "flow"},
		{Range: &Range{Position{1, 8}, Position{1, 10}}, Text: "[{id: a1}]"},
		{Range: &Range{Position{2, 0}, Position{2, 0}}, Text: "# end\n"},
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
	got, err = ApplyChanges(src, []Change{{Text: "whole"}})
	if err != nil || string(got) != "whole" {
		t.Fatalf("whole: %q %v", got, err)
	}
	if _, err := ApplyChanges(src, []Change{{Range: &Range{Position{1, 2}, Position{0, 1}}}}); err == nil {
		t.Fatal("inverted range accepted")
	}
}

func FuzzApplyChanges(f *testing.F) {
	f.Add([]byte("a: 😀\nb\n"), uint32(0), uint32(3), uint32(1), uint32(1), "x")
	f.Fuzz(func(t *testing.T, src []byte, l1, c1, l2, c2 uint32, text string) {
		out, err := ApplyChanges(src, []Change{{Range: &Range{Position{l1, c1}, Position{l2, c2}}, Text: text}})
		if err != nil {
			return
		}
		if len(out) < len(text) {
			t.Fatalf("lost the inserted text")
		}
	})
}
