package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
)

// A request's body is split into its members in one pass over its bytes, without decoding
// the values: a 50 KB turn of Claude Code is read in a few tens of microseconds, where
// decoding it took most of a millisecond. Values are checked only as far as finding where
// they end; a body that is not valid JSON past that is the provider's to refuse (and it
// bills nothing for it).

var errNotObject = errors.New("not a JSON object")

// members splits a JSON object into its members by exact name (escapes decoded), each value
// as written. dup: a name came twice (the last is kept; the body must then be re-encoded so
// the provider reads the same one).
func members(b []byte) (m map[string]json.RawMessage, dup bool, err error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false, errNotObject
	}
	m = map[string]json.RawMessage{}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return m, false, trailing(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false, errNotObject
		}
		end := stringEnd(b, i)
		if end < 0 {
			return nil, false, errNotObject
		}
		name, ok := stringValue(b[i : end+1])
		if !ok {
			return nil, false, errNotObject
		}
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return nil, false, errNotObject
		}
		start := skipSpace(b, i+1)
		vend := valueEnd(b, start)
		if vend < 0 {
			return nil, false, errNotObject
		}
		if _, seen := m[name]; seen {
			dup = true
		}
		m[name] = json.RawMessage(b[start:vend])
		i = skipSpace(b, vend)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return m, dup, trailing(b, i+1)
		default:
			return nil, false, errNotObject
		}
	}
}

// elements splits a JSON array into its elements, each as written.
func elements(b []byte) ([]json.RawMessage, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, errors.New("not a JSON list")
	}
	var out []json.RawMessage
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, trailing(b, i+1)
	}
	for {
		end := valueEnd(b, i)
		if end < 0 {
			return nil, errors.New("not a JSON list")
		}
		out = append(out, json.RawMessage(b[i:end]))
		i = skipSpace(b, end)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == ']':
			return out, trailing(b, i+1)
		default:
			return nil, errors.New("not a JSON list")
		}
	}
}

// valueEnd is the index just past the JSON value starting at b[i] (-1: none there).
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		if e := stringEnd(b, i); e >= 0 {
			return e + 1
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = stringEnd(b, j); j < 0 {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r', ':', '"', '{', '[':
		return true
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return errNotObject
	}
	return nil
}

// stringValue decodes a JSON string literal (quotes included).
func stringValue(lit []byte) (string, bool) {
	for _, c := range lit[1 : len(lit)-1] {
		if c == '\\' || c < 0x20 {
			var s string
			return s, json.Unmarshal(lit, &s) == nil
		}
	}
	return string(lit[1 : len(lit)-1]), true
}

// encodeObject writes members as one JSON object, by name, each value as it was read.
func encodeObject(m map[string]json.RawMessage) ([]byte, error) {
	names := make([]string, 0, len(m))
	size := 2
	for k, v := range m {
		names = append(names, k)
		size += len(k) + len(v) + 4
	}
	sort.Strings(names)
	out := make([]byte, 0, size)
	out = append(out, '{')
	for i, k := range names {
		if i > 0 {
			out = append(out, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		out = append(append(append(out, kb...), ':'), bytes.TrimSpace(m[k])...)
	}
	return append(out, '}'), nil
}

func encodeList(items []map[string]json.RawMessage) ([]byte, error) {
	out := []byte{'['}
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		b, err := encodeObject(it)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return append(out, ']'), nil
}

// eachString calls fn with each JSON string of b in order (its literal, quotes included) and
// whether it is a member's name, until fn returns false. b is read only as far as finding
// its strings; where a string does not end, b is not JSON, for the provider to refuse.
func eachString(b []byte, fn func(lit []byte, isName bool) bool) {
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end := stringEnd(b, i)
		if end < 0 || !fn(b[i:end+1], nextNonSpace(b, end+1) == ':') {
			return
		}
		i = end
	}
}
