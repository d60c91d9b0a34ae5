package jsonenc

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// same checks that AppendValue writes exactly what json.Marshal writes.
func same(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, gerr := AppendValue([]byte("prefix"), v)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%#v: error %v, json.Marshal's %v", v, gerr, werr)
	}
	if werr == nil && string(got) != "prefix"+string(want) {
		t.Fatalf("%#v:\n got %s\nwant prefix%s", v, got, want)
	}
}

func TestAppendValueMatchesEncodingJSON(t *testing.T) {
	type named string
	for _, v := range []any{
		nil, "", "plain", "quote \" backslash \\ slash /", "<html> & co", "\x00\x01\x1f\b\f\n\r\t\x7f",
		"bad utf-8 \xff\xfe end", "line\u2028para\u2029", "ünïcödé 日本語 😀", true, false, 0, -42, math.MaxInt64, int64(math.MinInt64),
		[]string(nil), []string{}, []string{"a", "<b>"}, []any(nil), []any{}, []any{1, "x", nil, true, []string{"y"}},
		map[string]any(nil), map[string]any{}, map[string]any{"b": 1, "a": "x", "<": map[string]any{"z": []any{}, "y": nil}},
		map[string]string{"k2": "v", "k1": "\n"}, map[string]any{"k": map[string]string{"x": "y"}},
		// through encoding/json
		1.5, 1e21, 1e-7, float32(0.1), named("n"), time.Date(2026, 11, 22, 1, 2, 3, 4, time.UTC), struct{ A int }{1},
		map[string]any{"f": 2.5, "s": struct {
			B string `json:"b,omitempty"`
		}{}}, map[int]string{2: "b", 1: "a"},
	} {
		same(t, v)
	}
	// Values encoding/json refuses are refused.
	same(t, math.NaN())
	same(t, map[string]any{"bad": math.Inf(1)})
	same(t, []any{make(chan int)})
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "<&>", "\u2028", "\xff", "\x00", "日本", "\"\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		same(t, s)
		same(t, map[string]any{s: []string{s}})
	})
}
