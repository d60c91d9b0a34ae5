package proposal

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchTree is the shape scripts/bench-proposals.sh measures: files of ~40 lines in folders of
// 100, 1% of them changed (a line edited, a line inserted, every other one's exec bit flipped).
type benchTree struct {
	ws      string
	patch   []byte
	changed map[string][]byte // original content of every changed file
}

func newBenchTree(b *testing.B, n int) *benchTree {
	b.Helper()
	r := rand.New(rand.NewSource(1))
	bt := &benchTree{ws: b.TempDir(), changed: map[string][]byte{}}
	var patch []byte
	for i := 0; i < n; i++ {
		var sb strings.Builder
		for j := 0; j < 40; j++ {
			fmt.Fprintf(&sb, "line %d of file %d: %s\n", j, i, strings.Repeat("x", 10+r.Intn(50)))
		}
		name := fmt.Sprintf("src/pkg%03d/file%05d.txt", i/100, i)
		p := filepath.Join(bt.ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		data := []byte(sb.String())
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		if i%100 != 3 {
			continue
		}
		lines := strings.SplitAfter(sb.String(), "\n")
		lines[5] = "edited line\n"
		lines = append(lines[:30], append([]string{"inserted line\n"}, lines[30:]...)...)
		mode := modeFile
		if i%200 == 3 {
			mode = modeExec
		}
		d, _, _, err := fileDiff(name, side{exists: true, mode: modeFile, data: data}, side{exists: true, mode: mode, data: []byte(strings.Join(lines, ""))})
		if err != nil {
			b.Fatal(err)
		}
		patch = append(patch, d...)
		bt.changed[name] = data
	}
	bt.patch = patch
	return bt
}

// reset puts the changed files back as they were.
func (bt *benchTree) reset(b *testing.B) {
	for name, data := range bt.changed {
		p := filepath.Join(bt.ws, filepath.FromSlash(name))
		os.Remove(p)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply applies a 100-file patch to a 10,000-file tree (the bench script's shape),
// without the process start-up the script also measures.
func BenchmarkApply(b *testing.B) {
	bt := newBenchTree(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := ApplyPatch(context.Background(), bt.ws, bt.patch, Selection{}, ApplyOptions{})
		if err != nil || !res.Applied {
			b.Fatal(err)
		}
		b.StopTimer()
		bt.reset(b)
		b.StartTimer()
	}
}

// BenchmarkCheck is BenchmarkApply's check alone (apply --check).
func BenchmarkCheck(b *testing.B) {
	bt := newBenchTree(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ApplyPatch(context.Background(), bt.ws, bt.patch, Selection{}, ApplyOptions{DryRun: true}); err != nil {
			b.Fatal(err)
		}
	}
}
