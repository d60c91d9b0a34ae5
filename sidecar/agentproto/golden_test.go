package agentproto

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/scan/*.golden from the parser's output")

// event is one thing the parser reported: a block or a log line.
type event struct {
	block *Block
	line  int
	text  string // log text; pieces of one long line are merged
	buf   []byte // text while pieces are still arriving
}

// run feeds input to a new parser in the given chunks and returns every event,
// checking after each call that the parser stays under its cap.
func run(t testing.TB, opt Options, chunks [][]byte) []event {
	var evs []event
	opt.OnBlock = func(b Block) { evs = append(evs, event{block: &b}) }
	opt.OnLog = func(line int, text []byte) {
		if n := len(evs); n > 0 && evs[n-1].block == nil && evs[n-1].line == line {
			evs[n-1].buf = append(evs[n-1].buf, text...)
			return
		}
		evs = append(evs, event{line: line, buf: append([]byte(nil), text...)})
	}
	p := NewParser(opt)
	max := 2 * opt.MaxBlockBytes
	if opt.MaxBlockBytes == 0 {
		max = 2 * DefaultMaxBlockBytes
	}
	if max < 2*minMaxBlockBytes {
		max = 2 * minMaxBlockBytes
	}
	if p.Cap() != max {
		t.Fatalf("Cap() = %d, want %d", p.Cap(), max)
	}
	returned := 0
	for _, c := range chunks {
		returned += len(p.Write(c))
		if p.Buffered() > max {
			t.Fatalf("parser holds %d bytes, cap %d", p.Buffered(), max)
		}
	}
	returned += len(p.Flush())
	for i := range evs {
		if evs[i].block == nil {
			evs[i].text, evs[i].buf = string(evs[i].buf), nil
		}
	}
	blocks := 0
	for _, e := range evs {
		if e.block != nil {
			blocks++
		}
	}
	if blocks != returned {
		t.Fatalf("Write/Flush returned %d blocks, OnBlock saw %d", returned, blocks)
	}
	return evs
}

// render writes events one a line: blocks as scan --json prints them (plus Raw
// when withRaw), log lines as "log N: text".
func render(evs []event, withRaw bool) string {
	var sb strings.Builder
	for _, e := range evs {
		if e.block == nil {
			fmt.Fprintf(&sb, "log %d: %q\n", e.line, e.text)
			continue
		}
		sb.WriteString(scanJSON(*e.block))
		if withRaw {
			fmt.Fprintf(&sb, " raw=%q of=%s field=%s", e.block.Raw, e.block.Of, e.block.Field)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// golden is the checked-in form: the blocks as scan --json prints them, then
// the line numbers that went to Log, as ranges.
func golden(evs []event) string {
	var sb strings.Builder
	var logs []int
	for _, e := range evs {
		if e.block == nil {
			logs = append(logs, e.line)
			continue
		}
		sb.WriteString(scanJSON(*e.block))
		sb.WriteByte('\n')
	}
	sb.WriteString("# log lines: " + ranges(logs) + "\n")
	return sb.String()
}

// scanJSON is a block as `protocol scan --json` prints it.
func scanJSON(b Block) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(b)
	return strings.TrimSuffix(buf.String(), "\n")
}

func ranges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprint(ns[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func inputs(t *testing.T) map[string][]byte {
	files, err := filepath.Glob("testdata/scan/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	m := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m[f] = b
	}
	return m
}

func TestGolden(t *testing.T) {
	for f, in := range inputs(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			got := golden(run(t, Options{}, [][]byte{in}))
			gf := strings.TrimSuffix(f, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(gf, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(gf)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the parser's output (go test -update to accept):\n%s", gf, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff shows the first differing line of two renderings.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\nwant %s\ngot  %s", i+1, a, b)
		}
	}
	return "(same lines)"
}

// splitEvery cuts b into chunks of n bytes.
func splitEvery(b []byte, n int) [][]byte {
	var cs [][]byte
	for len(b) > n {
		cs = append(cs, b[:n])
		b = b[n:]
	}
	return append(cs, b)
}

// splitRandom cuts b at random places, many of them tiny.
func splitRandom(b []byte, r *rand.Rand) [][]byte {
	var cs [][]byte
	for len(b) > 0 {
		n := 1 + r.IntN(min(len(b), 1+r.IntN(200)))
		cs = append(cs, b[:n])
		b = b[n:]
	}
	return cs
}

// TestChunking feeds every golden input at every chunk size (1..len for inputs up
// to 4 KiB; 1..512 and random splits for the spec documents) and requires the exact same events,
// Raw included, as one Write of the whole input.
func TestChunking(t *testing.T) {
	for f, in := range inputs(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			checkChunking(t, Options{}, in)
		})
	}
}

func checkChunking(t *testing.T, opt Options, in []byte) {
	t.Helper()
	want := render(run(t, opt, [][]byte{in}), true)
	limit := len(in) // every chunk size for small inputs
	if limit > 4096 {
		limit = 512 // and the small sizes, plus random splits, for the spec documents
	}
	for n := 1; n <= limit; n++ {
		if got := render(run(t, opt, splitEvery(in, n)), true); got != want {
			t.Fatalf("chunk size %d: events differ from one whole write:\n%s", n, lineDiff(want, got))
		}
	}
	r := rand.New(rand.NewPCG(1, uint64(len(in))))
	for i := 0; i < 30; i++ {
		if got := render(run(t, opt, splitRandom(in, r)), true); got != want {
			t.Fatalf("random split %d: events differ from one whole write:\n%s", i, lineDiff(want, got))
		}
	}
}

// crlf turns every LF into CRLF.
func crlf(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }

// colour paints every line the way a terminal-happy agent would: a colour at
// the start, a reset before the first ": ", a reset at the end, and a cursor
// escape in the middle of the opening tags.
func colour(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		if len(l) == 0 {
			continue
		}
		l = bytes.Replace(l, []byte(": "), []byte(":\x1b[0m "), 1)
		l = bytes.Replace(l, []byte("[ERR"), []byte("[\x1b[K\x1b]8;;\x07ERR"), 1)
		lines[i] = append(append([]byte("\x1b[1;38;5;208m"), l...), "\x1b[0m"...)
	}
	return bytes.Join(lines, []byte("\n"))
}

// TestVariants requires CRLF line endings and ANSI colour codes, alone and
// together and under random chunking, to give the same blocks and the same log
// text as the plain input (Raw aside: it keeps the bytes as received).
func TestVariants(t *testing.T) {
	for f, in := range inputs(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want := render(run(t, Options{}, [][]byte{in}), false)
			variants := map[string][]byte{
				"crlf":        crlf(in),
				"ansi":        colour(in),
				"crlf+ansi":   crlf(colour(in)),
				"trailing-ws": bytes.ReplaceAll(in, []byte("]\n"), []byte("]  \n")),
			}
			r := rand.New(rand.NewPCG(7, 7))
			for name, v := range variants {
				got := render(run(t, Options{}, [][]byte{v}), false)
				if name == "trailing-ws" {
					got = strings.ReplaceAll(got, `]  "`, `]"`)
				}
				if got != want {
					t.Errorf("%s: differs from the plain input:\n%s", name, lineDiff(want, got))
					continue
				}
				if name == "trailing-ws" {
					continue
				}
				for i := 0; i < 5; i++ {
					if got := render(run(t, Options{}, splitRandom(v, r)), false); got != want {
						t.Errorf("%s, random split %d: differs from the plain input:\n%s", name, i, lineDiff(want, got))
						break
					}
				}
			}
		})
	}
}

// TestIndentedBlocks: a whole input indented (as inside a Markdown list) gives
// the same blocks.
func TestIndentedBlocks(t *testing.T) {
	for f, in := range inputs(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			blocksOnly := func(evs []event) string {
				var kept []event
				for _, e := range evs {
					if e.block != nil {
						kept = append(kept, e)
					}
				}
				return render(kept, false)
			}
			want := blocksOnly(run(t, Options{}, [][]byte{in}))
			ind := bytes.ReplaceAll(append([]byte("    "), in...), []byte("\n"), []byte("\n    "))
			if got := blocksOnly(run(t, Options{}, [][]byte{ind})); got != want {
				t.Errorf("indented input gives other blocks:\n%s", lineDiff(want, got))
			}
		})
	}
}

// TestSpecExamplesAllFound: every opening line in the spec documents yields
// exactly one block, so no example block is skipped.
func TestSpecExamplesAllFound(t *testing.T) {
	for f, in := range inputs(t) {
		if !strings.Contains(f, "spec-") {
			continue
		}
		openers := 0
		for _, l := range strings.Split(string(in), "\n") {
			t := strings.TrimSpace(l)
			if taggedOpener(t) != "" || isHandoffHeading(t) {
				openers++
			} else if _, ok := phaseMarker(t); ok {
				openers++
			}
		}
		blocks := 0
		for _, e := range run(t, Options{}, [][]byte{in}) {
			if e.block != nil {
				blocks++
			}
		}
		if openers == 0 || blocks != openers {
			t.Errorf("%s: %d opening lines, %d blocks", f, openers, blocks)
		}
	}
}
