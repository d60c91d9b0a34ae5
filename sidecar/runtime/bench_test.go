package runtime

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkClaudeDecode: decoding claude's stream-json (in memory), MB/s of stdout.
func BenchmarkClaudeDecode(b *testing.B) {
	raw, err := os.ReadFile("testdata/streams/claude/ok.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimSpace(raw), []byte("\n"))
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		d := &claudeDecoder{}
		for _, l := range lines {
			d.line(l)
		}
		d.end(0)
	}
}

// BenchmarkCommandAgentPipeline: a command agent printing 8 MB of mixed output (text with a
// protocol block every 100 lines) through the whole path: process group, guardian, pipes,
// decoder, protocol parser, scrubbing and the event stream.
func BenchmarkCommandAgentPipeline(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 8<<20; i++ {
		if i%100 == 0 {
			buf.WriteString("=== PHASE 1 COMPLETE ===\nPhase: Planning\nDocuments created:\n- docs/planning/01_idea.md\n\n")
		}
		buf.WriteString("Running the tests for module ")
		buf.WriteString(strings.Repeat("x", i%50))
		buf.WriteString(": ok\n")
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		p, err := Start(b.Context(), Spec{AgentID: "bench", BackendID: BackendCommand, Workspace: dir,
			Command: []string{"cat", file}, Env: map[string]string{"TOKEN": "not-in-the-output-123"}}, "")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for ev := range p.Events() {
			if ev.Kind == EventBlock {
				n++
			}
		}
		if res := p.Wait(); res.Status != StatusCompleted || n == 0 {
			b.Fatalf("%s %s, %d blocks", res.Status, res.Reason, n)
		}
	}
}
