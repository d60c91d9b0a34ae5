package eventlog

import (
	"encoding/json"
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
