package eventlog

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// An event's Fields hold Go values when the event comes from a writer (the engine's sink) and
// json.RawMessage when it was read back from a log; these read a field (or a value nested in
// one) either way, for the views of a run (the terminal view, the CI summary).

// Str reads a string (anything else as fmt prints it; nil as "").
func Str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.RawMessage:
		var s string
		if json.Unmarshal(x, &s) == nil {
			return s
		}
		return string(x)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// Num reads a number; ok is false when v is none.
func Num(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case json.RawMessage:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	}
	return 0, false
}

// Strs reads a list of strings; a single string is a list of one.
func Strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x} // a message's "to" is one name or a list
	case nil:
		return nil
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, Str(e))
		}
		return out
	case json.RawMessage:
		var out []string
		if json.Unmarshal(x, &out) == nil {
			return out
		}
		var one string
		if json.Unmarshal(x, &one) == nil {
			return []string{one}
		}
	}
	return nil
}

// Object reads a map (a struct, a map or raw JSON).
func Object(v any) map[string]any {
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		return x
	case json.RawMessage:
		var m map[string]any
		if json.Unmarshal(x, &m) == nil {
			return m
		}
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// List reads a list of maps (a slice of structs, of maps, or raw JSON).
func List(v any) []map[string]any {
	var raw []any
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		raw = x
	default:
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &raw) != nil {
			return nil
		}
	}
	out := make([]map[string]any, 0, len(raw))
	for _, e := range raw {
		if m := Object(e); m != nil {
			out = append(out, m)
		}
	}
	return out
}
