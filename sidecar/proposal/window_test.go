package proposal

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// The window diff makes exactly the edits and hunks of the whole files' diff, on random
// versions with long common heads and tails, repeated lines and missing final newlines.
func TestWindowDiffIsTheWholeDiff(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	words := []string{"a\n", "b\n", "}\n", "\n", "long line of text\n"}
	lines := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[r.Intn(len(words))])
		}
		return b.String()
	}
	render := func(hs []hunk, oldL, newL []string, oldOff, newOff int) string {
		var b strings.Builder
		for _, h := range hs {
			fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(oldOff+h.oldStart, h.oldCount), hunkRange(newOff+h.newStart, h.newCount))
			for _, e := range h.edits {
				var l string
				if e.kind == '+' {
					l = newL[e.b]
				} else {
					l = oldL[e.a]
				}
				fmt.Fprintf(&b, "%c%q\n", e.kind, l)
			}
		}
		return b.String()
	}
	for i := range 3000 {
		head, tail := lines(r.Intn(40)), lines(r.Intn(40))
		old := head + lines(r.Intn(6)) + tail
		new := head + lines(r.Intn(6)) + tail
		if r.Intn(3) == 0 {
			old += "no newline"
		}
		if r.Intn(3) == 0 {
			new += "no newline"
		}
		ol, nl := splitLines([]byte(old)), splitLines([]byte(new))
		wantChanges := fmt.Sprint(lineChanges(diffLines(ol, nl)))
		if got := fmt.Sprint(lineChangesOf([]byte(old), []byte(new))); got != wantChanges {
			t.Fatalf("case %d: changes %s, want %s\nold %q\nnew %q", i, got, wantChanges, old, new)
		}
		want := render(hunks(diffLines(ol, nl)), ol, nl, 0, 0)
		w := windowOf([]byte(old), []byte(new), contextLines)
		if got := render(hunks(diffLines(w.oldLines, w.newLines)), w.oldLines, w.newLines, w.oldFirst, w.newFirst); got != want {
			t.Fatalf("case %d: hunks\n%s\nwant\n%s\nold %q\nnew %q", i, got, want, old, new)
		}
	}
}
