package eventlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestConcurrentAppendsNeverInterleave(t *testing.T) {
	ws := t.TempDir()
	const writers, each = 8, 150
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Open(ws, "team-alpha") // a Log per goroutine: separate files handles, like separate processes
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Close()
			for i := 0; i < each; i++ {
				ev := Event{TS: time.Date(2026, 2, 19, 1, 2, 3, 0, time.UTC).UnixMilli(), RunID: "run_1", InteractionID: "i1", EdgeID: "e1",
					Event: "step", Fields: map[string]any{"step": i, "from": fmt.Sprint("w", w), "note": strings.Repeat("x", 3000)}}
				if err := l.Append(ev); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	evs, err := Read(ws, "team-alpha", "2026-02-19")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != writers*each {
		t.Fatalf("read %d events, want %d", len(evs), writers*each)
	}
	seen := map[string]bool{}
	for _, e := range evs {
		var step int
		json.Unmarshal(e.Fields["step"].(json.RawMessage), &step)
		var from string
		json.Unmarshal(e.Fields["from"].(json.RawMessage), &from)
		seen[fmt.Sprint(from, step)] = true
		if e.Flow != "team-alpha" || e.RunID != "run_1" || e.Event != "step" {
			t.Fatalf("bad event %+v", e)
		}
	}
	if len(seen) != writers*each {
		t.Fatalf("%d distinct events", len(seen))
	}
}

func TestLineFormatAndTornLastLine(t *testing.T) {
	ws := t.TempDir()
	l, err := Open(ws, "f")
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 2, 19, 23, 59, 59, 0, time.UTC).UnixMilli()
	if err := l.Append(Event{TS: ts, InteractionID: "i1", EdgeID: "e1", Event: "terminated", Fields: map[string]any{"reason": "judge_decision", "event": "ignored"}}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	name := filepath.Join(ws, ".agentcanvas/logs/f/2026-02-19.jsonl")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"ts":%d,"flow":"f","runId":"","interactionId":"i1","edgeId":"e1","event":"terminated","reason":"judge_decision"}`+"\n", ts)
	if string(b) != want {
		t.Fatalf("line:\n%s\nwant:\n%s", b, want)
	}
	// A writer killed mid-line leaves a torn last line: skipped, the rest read.
	os.WriteFile(name, append(b, []byte(`{"ts":1,"flow":"f","ev`)...), 0o644)
	evs, err := Read(ws, "f", "2026-02-19")
	if err != nil || len(evs) != 1 || evs[0].Event != "terminated" {
		t.Fatalf("%v %+v", err, evs)
	}
	// A bad line in the middle is an error naming its line.
	os.WriteFile(name, append([]byte("not json\n"), b...), 0o644)
	if _, err := Read(ws, "f", "2026-02-19"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("got %v", err)
	}
	days, _ := Days(ws, "f")
	if len(days) != 1 || days[0] != "2026-02-19" {
		t.Fatalf("days %v", days)
	}
}

func TestBadFlowNames(t *testing.T) {
	for _, f := range []string{"", "a/b", "..", ".git", "node_modules", "x\x00"} {
		if _, err := Open(t.TempDir(), f); err == nil {
			t.Errorf("flow %q accepted", f)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("{\"ts\":1,\"event\":\"x\"}\n{\"ts\":2"))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, _ := Decode(strings.NewReader(string(b)))
		for _, e := range evs {
			if _, err := json.Marshal(e); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A buffered log (the run engine's) keeps lines until Flush, Close, a new day or 64 KiB of
// lines, and then writes them in order, whole.
func TestBufferedLog(t *testing.T) {
	ws := t.TempDir()
	l, err := OpenBuffered(ws, "f")
	if err != nil {
		t.Fatal(err)
	}
	day1 := time.Date(2026, 2, 19, 23, 59, 59, 0, time.UTC).UnixMilli()
	day2 := time.Date(2026, 2, 20, 0, 0, 1, 0, time.UTC).UnixMilli()
	read := func(day string) []string {
		t.Helper()
		evs, err := Read(ws, "f", day)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range evs {
			names = append(names, e.Event)
		}
		return names
	}
	for _, name := range []string{"a", "b"} {
		if err := l.Append(Event{TS: day1, Event: name}); err != nil {
			t.Fatal(err)
		}
	}
	if got := read("2026-02-19"); len(got) != 0 {
		t.Fatalf("before Flush the file holds %v", got)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := read("2026-02-19"); strings.Join(got, ",") != "a,b" {
		t.Fatalf("after Flush: %v", got)
	}
	// A new day writes what the old one buffered to the old day's file.
	l.Append(Event{TS: day1, Event: "c"})
	l.Append(Event{TS: day2, Event: "d"})
	if got := read("2026-02-19"); strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("day 1 after the day changed: %v", got)
	}
	// 64 KiB of lines are written without a Flush.
	big := strings.Repeat("x", 1000)
	for i := 0; i < 70; i++ {
		l.Append(Event{TS: day2, Event: "big", Fields: map[string]any{"note": big}})
	}
	if got := read("2026-02-20"); len(got) < 60 || got[0] != "d" {
		t.Fatalf("day 2 after 70 KB of lines: %d events", len(got))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read("2026-02-20"); len(got) != 71 {
		t.Fatalf("after Close day 2 has %d events, want 71", len(got))
	}
}

// Fields of any type are written as encoding/json writes them.
func TestFieldsAsEncodingJSON(t *testing.T) {
	type term struct {
		Type   string `json:"type"`
		Rounds *int   `json:"rounds,omitempty"`
	}
	three := 3
	fields := map[string]any{"n": 7, "f": 0.25, "ok": true, "list": []string{"<a>", "b"}, "term": &term{"max_rounds", &three},
		"m": map[string]any{"z": nil, "a": []any{1.5, "x"}}, "s": "line\nbreak & \u2028"}
	b, err := json.Marshal(Event{TS: 5, Flow: "f", Event: "e", Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString(`{"ts":5,"flow":"f","runId":"","interactionId":"","edgeId":"","event":"e"`)
	for _, k := range []string{"f", "list", "m", "n", "ok", "s", "term"} {
		v, _ := json.Marshal(fields[k])
		fmt.Fprintf(&want, `,%q:%s`, k, v)
	}
	want.WriteString("}")
	if string(b) != want.String() {
		t.Fatalf("got  %s\nwant %s", b, want.String())
	}
}

// While another writer appends to the same file, WriteThrough keeps the buffered log's lines
// in the order they were logged; after done it buffers again.
func TestWriteThroughKeepsOrderWithAnotherWriter(t *testing.T) {
	ws := t.TempDir()
	engine, err := OpenBuffered(ws, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	other, err := Open(ws, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ts := time.Date(2026, 2, 19, 12, 0, 0, 0, time.UTC).UnixMilli()
	log := func(l *Log, name string) {
		if err := l.Append(Event{TS: ts, Event: name}); err != nil {
			t.Fatal(err)
		}
	}
	log(engine, "a")
	done, err := engine.WriteThrough()
	if err != nil {
		t.Fatal(err)
	}
	log(other, "b")
	log(engine, "c")
	log(other, "d")
	done()
	done() // twice is once
	log(engine, "e")
	names := func() string {
		evs, _ := Read(ws, "f", "2026-02-19")
		var out []string
		for _, e := range evs {
			out = append(out, e.Event)
		}
		return strings.Join(out, "")
	}
	if got := names(); got != "abcd" {
		t.Fatalf("file holds %q, want abcd (e buffered)", got)
	}
	engine.Flush()
	if got := names(); got != "abcde" {
		t.Fatalf("after Flush: %q", got)
	}
}

// A log with a torn line in its middle (a write a full disk cut short, and the next event
// appended to it) is read past it: every whole event, the joined one too, and the line named.
func TestReadPastATornLine(t *testing.T) {
	ws := t.TempDir()
	l, err := Open(ws, "f")
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC).UnixMilli()
	l.Append(Event{TS: ts, Event: "one"})
	l.Close()
	file := filepath.Join(ws, LogsDir, "f", "2026-11-20.jsonl")
	f, _ := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	fmt.Fprintf(f, `{"ts":%d,"flow":"f","event":"cut sh`+`{"ts":%d,"flow":"f","event":"joined"}`+"\n"+`{"ts":%d,"flow":"f","event":"three"}`+"\n", ts, ts, ts)
	f.Close()
	evs, err := ReadAll(ws, "f")
	var bad *BadLinesError
	if !errors.As(err, &bad) || len(bad.Lines) != 1 || bad.Lines[0] != 2 || !Skipped(err) || !strings.Contains(err.Error(), "2026-11-20.jsonl: skipped line 2") {
		t.Fatalf("err: %v", err)
	}
	var names []string
	for _, e := range evs {
		names = append(names, e.Event)
	}
	if strings.Join(names, ",") != "one,joined,three" {
		t.Fatalf("events: %v", names)
	}
}

// retain_days: day files older than the days kept are removed (retain_days 1 keeps today's
// and yesterday's); a link named like a day and a file of another name are left alone.
func TestPruneKeepsTheDaysRetained(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, LogsDir, "f")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"2020-01-01.jsonl", "2026-03-09.jsonl", "2026-03-10.jsonl", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(t.TempDir(), "keep.jsonl")
	os.WriteFile(outside, []byte("x"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "2019-05-05.jsonl")); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	removed, err := Prune(ws, "f", 1, now)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(removed, ",") != "2020-01-01" {
		t.Fatalf("removed %v", removed)
	}
	ents, _ := os.ReadDir(dir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if strings.Join(left, ",") != "2019-05-05.jsonl,2026-03-09.jsonl,2026-03-10.jsonl,notes.txt" {
		t.Errorf("left %v", left)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Error("the link's target was removed")
	}
	if removed, _ := Prune(ws, "f", 0, now); strings.Join(removed, ",") != "2026-03-09" {
		t.Errorf("retain_days 0 removed %v, want yesterday's", removed)
	}
}
