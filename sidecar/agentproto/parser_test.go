package agentproto

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func blocksOf(evs []event) []Block {
	var bs []Block
	for _, e := range evs {
		if e.block != nil {
			bs = append(bs, *e.block)
		}
	}
	return bs
}

func logsOf(evs []event) map[int]string {
	m := map[int]string{}
	for _, e := range evs {
		if e.block == nil {
			m[e.line] = e.text
		}
	}
	return m
}

// A block that never closes is cut off at the cap: one invalid block holding
// what was buffered, then ordinary lines again, and a later block still parses.
func TestOverflowUnterminatedBlock(t *testing.T) {
	var in bytes.Buffer
	in.WriteString("[USER_QUESTION]\ncategory: business\n")
	for i := 0; i < 200; i++ {
		in.WriteString("  and the question goes on and on\n")
	}
	in.WriteString("[/USER_QUESTION]\n[ERROR]\ntype: fatal\nmessage: still seen\nrecovery: notify_user\n[/ERROR]\n")
	opt := Options{MaxBlockBytes: 300}
	evs := run(t, opt, [][]byte{in.Bytes()})
	bs := blocksOf(evs)
	if len(bs) != 2 {
		t.Fatalf("got %d blocks, want 2: %+v", len(bs), bs)
	}
	b := bs[0]
	if b.Kind != KindInvalid || b.Of != KindUserQuestion || b.Line != 1 ||
		!strings.Contains(b.Error, "USER_QUESTION: block is larger than 300 bytes") {
		t.Errorf("first block = %+v", b)
	}
	if len(b.Raw) > 300 || !strings.HasPrefix(b.Raw, "[USER_QUESTION]\n") {
		t.Errorf("invalid block Raw has %d bytes (cap 300): %q", len(b.Raw), b.Raw)
	}
	if bs[1].Kind != KindError || bs[1].Fields["message"] != "still seen" {
		t.Errorf("second block = %+v", bs[1])
	}
	logs := logsOf(evs)
	if logs[203] != "[/USER_QUESTION]" {
		t.Errorf("the stray closing tag should be a log line, got %q", logs[203])
	}
	checkChunking(t, opt, in.Bytes())
}

// A single line far larger than the cap is an ordinary line, passed on in
// pieces that join to the original, while the parser holds at most the cap.
func TestHugeLine(t *testing.T) {
	line := strings.Repeat("0123456789\x1b[31m", 100_000)
	in := []byte("before\n" + line + "\r\nafter\n[ERROR]\ntype: fatal\nmessage: m\nrecovery: notify_user\n[/ERROR]\n")
	for _, chunk := range []int{1 << 20, 4096, 7} {
		evs := run(t, Options{MaxBlockBytes: 1024}, splitEvery(in, chunk))
		logs := logsOf(evs)
		if logs[2] != line {
			t.Fatalf("chunk %d: line 2 came through as %d bytes, want %d unmodified", chunk, len(logs[2]), len(line))
		}
		if logs[1] != "before" || logs[3] != "after" {
			t.Errorf("chunk %d: logs %q %q", chunk, logs[1], logs[3])
		}
		if bs := blocksOf(evs); len(bs) != 1 || bs[0].Kind != KindError || bs[0].Line != 4 {
			t.Errorf("chunk %d: blocks %+v", chunk, bs)
		}
	}
}

// A huge line inside a block overflows it; an opening tag padded past the cap
// is not an opening tag, whatever the chunking.
func TestOverflowByOneLine(t *testing.T) {
	in := "[ERROR]\ntype: fatal\nmessage: " + strings.Repeat("x", 5000) + "\nrecovery: notify_user\n[/ERROR]\n" +
		"[ERROR]" + strings.Repeat(" ", 2000) + "\ntype: fatal\n"
	opt := Options{MaxBlockBytes: 512}
	evs := run(t, opt, [][]byte{[]byte(in)})
	bs := blocksOf(evs)
	if len(bs) != 1 || bs[0].Kind != KindInvalid || bs[0].Of != KindError {
		t.Fatalf("blocks = %+v", bs)
	}
	logs := logsOf(evs)
	for _, n := range []int{3, 4, 5, 6, 7} {
		if _, ok := logs[n]; !ok {
			t.Errorf("line %d should be a log line", n)
		}
	}
	checkChunking(t, opt, []byte(in))
}

func TestLogLines(t *testing.T) {
	var got []string
	p := NewParser(Options{OnLog: func(line int, text []byte) {
		got = append(got, string(text))
	}})
	p.Write([]byte("\x1b[32mgreen\x1b[0m\r\nplain\n[ERROR] inline tag\nHANDOFF later in a sentence\nlast without newline"))
	if bs := p.Flush(); len(bs) != 0 {
		t.Errorf("blocks: %+v", bs)
	}
	want := []string{"green", "plain", "[ERROR] inline tag", "HANDOFF later in a sentence", "last without newline"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("log lines %q, want %q", got, want)
	}
	if p.Lines() != 5 {
		t.Errorf("Lines() = %d, want 5", p.Lines())
	}
}

// A phase block is complete only when a line that is not part of it arrives,
// or at Flush.
func TestPhaseCompleteEndsAtFlush(t *testing.T) {
	p := NewParser(Options{})
	if bs := p.Write([]byte("=== PHASE 2 COMPLETE ===\n")); len(bs) != 0 {
		t.Fatalf("block before its end: %+v", bs)
	}
	bs := p.Flush()
	if len(bs) != 1 || bs[0].Kind != KindPhaseComplete || bs[0].Fields["N"] != 2 {
		t.Fatalf("Flush = %+v", bs)
	}
}

// EndOpenBlock releases an open-ended block without waiting for more output,
// and leaves tagged blocks alone.
func TestEndOpenBlock(t *testing.T) {
	var seen []Kind
	p := NewParser(Options{OnBlock: func(b Block) { seen = append(seen, b.Kind) }})
	p.Write([]byte("=== PHASE 1 COMPLETE ===\nPhase: Planning\n"))
	bs := p.EndOpenBlock()
	if len(bs) != 1 || bs[0].Kind != KindPhaseComplete || bs[0].Fields["Phase"] != "Planning" {
		t.Fatalf("EndOpenBlock = %+v", bs)
	}
	p.Write([]byte("[USER_QUESTION]\ncategory: confirmation\n"))
	if bs := p.EndOpenBlock(); len(bs) != 0 {
		t.Fatalf("EndOpenBlock closed a tagged block: %+v", bs)
	}
	bs = p.Write([]byte("question: Go on?\nrequired: true\n[/USER_QUESTION]\n"))
	if len(bs) != 1 || bs[0].Kind != KindUserQuestion || bs[0].Line != 3 {
		t.Fatalf("after EndOpenBlock: %+v", bs)
	}
	if len(p.Flush()) != 0 || len(seen) != 2 {
		t.Errorf("OnBlock saw %v", seen)
	}
}

func TestPriority(t *testing.T) {
	bs := []Block{
		{Kind: KindUserQuestion, Line: 1},
		{Kind: KindHandoff, Line: 2},
		{Kind: KindInvalid, Line: 3},
		{Kind: KindDependencyRequest, Line: 4},
		{Kind: KindPhaseComplete, Line: 5},
		{Kind: KindError, Line: 6},
		{Kind: KindUserQuestion, Line: 7},
	}
	if u, ok := Urgent(bs); !ok || u.Line != 6 {
		t.Errorf("Urgent = %+v, want the ERROR at line 6", u)
	}
	SortByPriority(bs)
	var order []int
	for _, b := range bs {
		order = append(order, b.Line)
	}
	if got := fmt.Sprint(order); got != "[6 3 5 4 1 7 2]" {
		t.Errorf("SortByPriority order = %s, want [6 3 5 4 1 7 2]", got)
	}
	if _, ok := Urgent(nil); ok {
		t.Error("Urgent(nil) found a block")
	}
	if Priority(KindError) >= Priority(KindPhaseComplete) || Priority(KindPhaseComplete) >= Priority(KindDependencyRequest) ||
		Priority(KindDependencyRequest) >= Priority(KindUserQuestion) || Priority(KindUserQuestion) >= Priority("log") {
		t.Error("Priority does not follow ERROR > PHASE_COMPLETE > DEPENDENCY_REQUEST > USER_QUESTION > log")
	}
}

func TestSpecError(t *testing.T) {
	p := NewParser(Options{})
	bs := append(p.Write([]byte("[DEPENDENCY_REQUEST]\nname: X\ndescription: d\nrequired: true\n[/DEPENDENCY_REQUEST]\n")), p.Flush()...)
	if len(bs) != 1 || bs[0].Kind != KindInvalid || bs[0].Field != "type" {
		t.Fatalf("blocks = %+v", bs)
	}
	e := bs[0].SpecError()
	// The spec's own example of a validation failure (agent-stdout-protocols.md, 검증 실패 시).
	want := map[string]any{"type": "fatal", "message": "Invalid protocol format",
		"details": "DEPENDENCY_REQUEST: missing required field 'type'", "recovery": "notify_user"}
	for k, v := range want {
		if e.Fields[k] != v {
			t.Errorf("SpecError field %s = %v, want %v", k, e.Fields[k], v)
		}
	}
	if e.Kind != KindError {
		t.Errorf("SpecError kind %s", e.Kind)
	}
}

// A line longer than the cap ends an open-ended block, which stays valid; a
// tagged block that would have to hold it is invalid.
func TestLongLineAfterBlocks(t *testing.T) {
	long := strings.Repeat(`{"type":"assistant"}`, 100)
	in := "=== PHASE 1 COMPLETE ===\nPhase: Planning\n" + long + "\n" +
		"HANDOFF\nDoD: go test passes\nSandboxWorkDir: w\nProposalJson: p\nChangedFiles:\n  - a.go\n" + long + "\n" +
		"[ERROR]\ntype: fatal\n" + long + "\n[/ERROR]\n"
	opt := Options{MaxBlockBytes: 1000}
	evs := run(t, opt, [][]byte{[]byte(in)})
	bs := blocksOf(evs)
	if len(bs) != 3 || bs[0].Kind != KindPhaseComplete || bs[1].Kind != KindHandoff || bs[2].Kind != KindInvalid {
		t.Fatalf("blocks = %+v", bs)
	}
	if bs[2].Error != "ERROR: line 13 is longer than 1000 bytes" {
		t.Errorf("error = %q", bs[2].Error)
	}
	logs := logsOf(evs)
	for _, n := range []int{3, 10, 13} {
		if logs[n] != long {
			t.Errorf("line %d: log %q…", n, clip(logs[n]))
		}
	}
	checkChunking(t, opt, []byte(in))
}

// A block that outgrows the cap is invalid, and the line that did not fit is
// read afresh: here it opens the next block.
func TestOverflowThenNextBlock(t *testing.T) {
	var in strings.Builder
	in.WriteString("HANDOFF\nChangedFiles:\n")
	for i := 0; i < 40; i++ {
		in.WriteString("  - src/some/fairly/long/path/file.go\n")
	}
	in.WriteString("[USER_QUESTION]\ncategory: confirmation\nquestion: Go on?\nrequired: true\n[/USER_QUESTION]\n")
	opt := Options{MaxBlockBytes: 400}
	bs := blocksOf(run(t, opt, [][]byte{[]byte(in.String())}))
	if len(bs) != 2 || bs[0].Kind != KindInvalid || bs[0].Of != KindHandoff || bs[1].Kind != KindUserQuestion {
		t.Fatalf("blocks = %+v", bs)
	}
	checkChunking(t, opt, []byte(in.String()))
}

func TestAsWriter(t *testing.T) {
	var got []Block
	p := NewParser(Options{OnBlock: func(b Block) { got = append(got, b) }})
	in := "x\n[ERROR]\ntype: fatal\nmessage: m\nrecovery: notify_user\n[/ERROR]\n"
	if _, err := io.Copy(p.AsWriter(), iotest.OneByteReader(strings.NewReader(in))); err != nil {
		t.Fatal(err)
	}
	p.Flush()
	if len(got) != 1 || got[0].Kind != KindError || got[0].Line != 2 {
		t.Errorf("blocks %+v", got)
	}
}
