package flow

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

func TestDiffApplies(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{"a\n", "b\n", "c\n", "# comment\n", "  x: 1\n", "\n", "tail"}
	gen := func() string {
		var sb strings.Builder
		for i := r.Intn(30); i > 0; i-- {
			sb.WriteString(words[r.Intn(len(words)-1)])
		}
		if r.Intn(2) == 0 {
			sb.WriteString("tail")
		}
		return sb.String()
	}
	for i := 0; i < 2000; i++ {
		old, new := gen(), gen()
		edits := Diff([]byte(old), []byte(new))
		got, err := span.Apply([]byte(old), edits)
		if err != nil || string(got) != new {
			t.Fatalf("Diff(%q, %q) = %+v gives %q, %v", old, new, edits, got, err)
		}
	}
}

func TestDiffIsLocal(t *testing.T) {
	old := "a\nb\nc\nd\ne\n"
	new := "a\nB\nc\nd\ne\nf\n"
	edits := Diff([]byte(old), []byte(new))
	if len(edits) != 2 || edits[0].NewText != "B\n" || edits[0].Range.Start.Line != 2 || edits[1].NewText != "f\n" {
		t.Fatalf("edits = %+v", edits)
	}
}
