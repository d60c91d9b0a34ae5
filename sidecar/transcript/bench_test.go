package transcript

import (
	"strings"
	"testing"
)

// The cost of recording one turn of typical size (a 6 KB prompt, a 2 KB reply, 20 stderr
// lines): an open-append-close through os.Root per turn.
func BenchmarkAppend(b *testing.B) {
	ws := b.TempDir()
	w := NewWriter(ws, "run_bench")
	t := Turn{Agent: "coder", Prompt: strings.Repeat("p", 6<<10), Reply: strings.Repeat("r", 2<<10), Stderr: strings.Split(strings.Repeat("a stderr line\n", 20), "\n")}
	for b.Loop() {
		w.Append(t)
	}
}
