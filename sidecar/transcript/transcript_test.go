package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Texts past the bounds are cut (at a rune boundary) and the turn says which; stderr keeps
// its last lines.
func TestAppendBoundsEachTurn(t *testing.T) {
	ws := t.TempDir()
	w := NewWriter(ws, "run_1")
	long := strings.Repeat("é", MaxText) // 2 bytes a rune: cut mid-text
	var stderr []string
	for i := range MaxStderrLines + 5 {
		stderr = append(stderr, strings.Repeat("x", i))
	}
	stderr[len(stderr)-1] = strings.Repeat("y", MaxLine+10)
	if _, err := w.Append(Turn{Agent: "a", Prompt: long, Reply: "short", Stderr: stderr}); err != nil {
		t.Fatal(err)
	}
	turns, err := Read(ws, "run_1")
	if err != nil || len(turns) != 1 {
		t.Fatalf("%v %v", turns, err)
	}
	got := turns[0]
	if len(got.Prompt) > MaxText || !strings.HasPrefix(long, got.Prompt) || strings.ContainsRune(got.Prompt, '\uFFFD') {
		t.Errorf("prompt cut to %d bytes", len(got.Prompt))
	}
	if got.Reply != "short" || len(got.Stderr) != MaxStderrLines || got.Stderr[0] != stderr[5] || len(got.Stderr[MaxStderrLines-1]) != MaxLine {
		t.Errorf("reply %q, %d stderr lines, first %q", got.Reply, len(got.Stderr), got.Stderr[0])
	}
	if !slices.Equal(got.Truncated, []string{"prompt", "stderr"}) {
		t.Errorf("truncated = %v", got.Truncated)
	}
}

// Once the run's file is full, turns are still recorded (who, when, how it ended) without
// their texts; concurrent appends get distinct, dense sequence numbers.
func TestAppendStopsTextsAtTheFileBound(t *testing.T) {
	ws := t.TempDir()
	w := NewWriter(ws, "run_2")
	big := strings.Repeat("p", MaxText)
	var wg sync.WaitGroup
	n := MaxFile/MaxText + 8
	for range n {
		wg.Add(1)
		go func() { defer wg.Done(); w.Append(Turn{Agent: "a", Prompt: big, Status: "completed"}) }()
	}
	wg.Wait()
	turns, err := Read(ws, "run_2")
	if err != nil || len(turns) != n {
		t.Fatalf("%d turns, %v", len(turns), err)
	}
	st, _ := os.Stat(filepath.Join(ws, RunsDir, "run_2", FileName))
	if st.Size() > MaxFile {
		t.Errorf("file is %d bytes, bound %d", st.Size(), MaxFile)
	}
	last := turns[n-1]
	if last.Prompt != "" || !slices.Contains(last.Truncated, "texts") || last.Status != "completed" {
		t.Errorf("last turn: %+v", last.Truncated)
	}
	seqs := map[int]bool{}
	for _, tr := range turns {
		seqs[tr.Seq] = true
	}
	if len(seqs) != n {
		t.Errorf("sequence numbers repeat: %d distinct of %d", len(seqs), n)
	}
	// A resumed run goes on numbering.
	if seq, _ := NewWriter(ws, "run_2").Append(Turn{Agent: "b"}); seq != n+1 {
		t.Errorf("resumed seq = %d", seq)
	}
}

// Prune removes transcripts older than MaxAge and beyond the MaxRuns newest, and nothing else.
func TestPruneKeepsTheNewest(t *testing.T) {
	ws := t.TempDir()
	now := time.Now()
	for i := range MaxRuns + 3 {
		id := "run_" + strings.Repeat("0", 3-len(itoa(i))) + itoa(i)
		NewWriter(ws, id).Append(Turn{Agent: "a"})
		os.WriteFile(filepath.Join(ws, RunsDir, id, "state.json"), []byte("{}"), 0o644)
		mod := now.Add(-time.Duration(i) * time.Minute)
		if i == 1 {
			mod = now.Add(-MaxAge - time.Hour)
		}
		os.Chtimes(filepath.Join(ws, RunsDir, id, FileName), mod, mod)
	}
	n, err := Prune(ws, now)
	if err != nil || n != 3 { // run_001 (too old, so the oldest), run_051 and run_052 (past the 50 newest)
		t.Fatalf("pruned %d, %v", n, err)
	}
	// Age alone prunes too.
	old := filepath.Join(ws, RunsDir, "run_000", FileName)
	os.Chtimes(old, now.Add(-MaxAge-time.Minute), now.Add(-MaxAge-time.Minute))
	if n, _ := Prune(ws, now); n != 1 {
		t.Errorf("second prune removed %d, want run_000 only", n)
	}
	for _, id := range []string{"run_002", "run_050"} {
		if _, err := Read(ws, id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	for _, id := range []string{"run_000", "run_001", "run_051", "run_052"} {
		if _, err := Read(ws, id); err == nil {
			t.Errorf("%s kept", id)
		}
		if _, err := os.Stat(filepath.Join(ws, RunsDir, id, "state.json")); err != nil {
			t.Errorf("%s: state.json removed", id)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// A transcript with a torn line (a write cut short, and a turn appended to it before appends
// started on a line of their own) is read past it: every whole turn, and the lines skipped
// named; the next turn appended after a torn tail gets a line of its own.
func TestReadPastATornLine(t *testing.T) {
	ws := t.TempDir()
	w := NewWriter(ws, "run_3")
	w.Append(Turn{Agent: "a", Reply: "one"})
	file := filepath.Join(ws, RunsDir, "run_3", FileName)
	f, _ := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":2,"agent":"a","reply":"cut sh` + `{"seq":3,"agent":"a","reply":"joined"}` + "\n" + `{"seq":4,"agent":"a","reply":"torn tail`)
	f.Close()
	w = NewWriter(ws, "run_3")
	if _, err := w.Append(Turn{Agent: "a", Reply: "after"}); err != nil {
		t.Fatal(err)
	}
	turns, err := Read(ws, "run_3")
	var skipped *SkippedError
	if !errors.As(err, &skipped) || !slices.Equal(skipped.Lines, []int{2, 3}) {
		t.Fatalf("skipped: %v", err)
	}
	var replies []string
	for _, tn := range turns {
		replies = append(replies, tn.Reply+"#"+strconv.Itoa(tn.Seq))
	}
	if !slices.Equal(replies, []string{"one#1", "joined#3", "after#5"}) {
		t.Fatalf("turns: %v", replies)
	}
}
