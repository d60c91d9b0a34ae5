package eventlog

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The field readers give the same answer for an event as written (Go values) and as read
// back from a log (json.RawMessage).
func TestFieldReadersAgreeOnWrittenAndReadEvents(t *testing.T) {
	type file struct {
		Path   string `json:"path"`
		Status string `json:"status"`
	}
	written := Event{Event: "x", Fields: map[string]any{
		"agent": "coder", "round": 2, "tokens": int64(1200), "cost": 0.25, "dryRun": true,
		"to": "lead", "nodes": []string{"a", "b"}, "files": []file{{"a.go", "added"}},
		"block": map[string]any{"kind": "error", "fields": map[string]any{"message": "boom"}},
	}}
	line, err := json.Marshal(written)
	if err != nil {
		t.Fatal(err)
	}
	var read Event
	if err := json.Unmarshal(line, &read); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []Event{written, read} {
		f := ev.Fields
		if Str(f["agent"]) != "coder" || Str(f["dryRun"]) != "true" || Str(f["missing"]) != "" {
			t.Errorf("Str: %q %q", Str(f["agent"]), Str(f["dryRun"]))
		}
		for k, want := range map[string]float64{"round": 2, "tokens": 1200, "cost": 0.25} {
			if got, ok := Num(f[k]); !ok || got != want {
				t.Errorf("Num(%s) = %v, %v", k, got, ok)
			}
		}
		if _, ok := Num(f["missing"]); ok {
			t.Error("Num of a missing field is ok")
		}
		if !reflect.DeepEqual(Strs(f["nodes"]), []string{"a", "b"}) || !reflect.DeepEqual(Strs(f["to"]), []string{"lead"}) {
			t.Errorf("Strs: %v %v", Strs(f["nodes"]), Strs(f["to"]))
		}
		if l := List(f["files"]); len(l) != 1 || Str(l[0]["path"]) != "a.go" {
			t.Errorf("List = %v", l)
		}
		if b := Object(f["block"]); Str(Object(b["fields"])["message"]) != "boom" {
			t.Errorf("Object = %v", b)
		}
	}
}
