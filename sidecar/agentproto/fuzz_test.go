package agentproto

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParser feeds arbitrary output with an arbitrary cap and chunking and
// checks: no panic; the parser never holds more than its cap, Parser.Cap()
// (checked by run after every Write); the events are the same as for one whole write; and every
// input line is accounted for exactly once, in order, either as a log line or
// inside exactly one block's Raw.
func FuzzParser(f *testing.F) {
	files, _ := filepath.Glob("testdata/scan/*.txt")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(0), uint64(1))
		f.Add(crlf(colour(b)), uint16(300), uint64(2))
	}
	f.Add([]byte("[ERROR]\ntype: fatal\n"+string(bytes.Repeat([]byte("x"), 600))+"\n[/ERROR]\n"), uint16(256), uint64(3))
	f.Add([]byte("=== PHASE 1 COMPLETE ===\r"), uint16(0), uint64(4))
	f.Fuzz(func(t *testing.T, in []byte, max uint16, seed uint64) {
		opt := Options{MaxBlockBytes: int(max)}
		whole := run(t, opt, [][]byte{in})
		want := render(whole, true)
		r := rand.New(rand.NewPCG(seed, 0))
		if got := render(run(t, opt, splitRandom(in, r)), true); got != want {
			t.Fatalf("random chunking changes the events:\n%s", lineDiff(want, got))
		}
		checkAccounting(t, in, whole)
	})
}

// checkAccounting checks that log lines and block spans cover lines 1..N of
// the input exactly once, in stream order.
func checkAccounting(t *testing.T, in []byte, evs []event) {
	t.Helper()
	total := bytes.Count(in, []byte{'\n'})
	if len(in) > 0 && in[len(in)-1] != '\n' {
		total++
	}
	next := 1
	for _, e := range evs {
		if e.block == nil {
			if e.line != next {
				t.Fatalf("log line %d reported where line %d was due", e.line, next)
			}
			next++
			continue
		}
		b := e.block
		if b.Line != next {
			t.Fatalf("%s block at line %d where line %d was due", b.Kind, b.Line, next)
		}
		n := bytes.Count([]byte(b.Raw), []byte{'\n'})
		if len(b.Raw) > 0 && b.Raw[len(b.Raw)-1] != '\n' {
			n++
		}
		if n == 0 {
			t.Fatalf("%s block at line %d has empty Raw", b.Kind, b.Line)
		}
		if !bytes.Contains(in, []byte(b.Raw)) {
			t.Fatalf("block Raw is not a piece of the input: %q", b.Raw)
		}
		next += n
	}
	if next != total+1 {
		t.Fatalf("events account for %d lines, input has %d", next-1, total)
	}
}

// TestAccounting runs the accounting check over the golden inputs.
func TestAccounting(t *testing.T) {
	for f, in := range inputs(t) {
		for _, v := range [][]byte{in, crlf(colour(in))} {
			checkAccounting(t, v, run(t, Options{MaxBlockBytes: 300}, [][]byte{v}))
			checkAccounting(t, v, run(t, Options{}, [][]byte{v}))
		}
		_ = f
	}
}
