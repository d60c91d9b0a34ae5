// Package jsonenc appends JSON exactly as encoding/json's Marshal writes it, without
// reflection for the values hot paths write: strings, integers, booleans, nil, string
// lists and maps and lists of those. Anything else goes through encoding/json. The event
// log writes its lines and the message bus its signed envelopes with it.
package jsonenc

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json escapes it (HTML
// characters, U+2028 and U+2029 included; invalid UTF-8 becomes U+FFFD).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendValue appends v as json.Marshal would write it.
func AppendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return AppendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case []string:
		return appendList(dst, x, func(b []byte, s string) ([]byte, error) { return AppendString(b, s), nil })
	case []any:
		return appendList(dst, x, AppendValue)
	case map[string]any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return appendMap(dst, x)
	case map[string]string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return appendMap(dst, x)
	}
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

// appendList writes a list (null when nil, as encoding/json does).
func appendList[E any](dst []byte, list []E, elem func([]byte, E) ([]byte, error)) ([]byte, error) {
	if list == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, e := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = elem(dst, e); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// appendMap writes a map with its keys sorted, as encoding/json does.
func appendMap[V any](dst []byte, m map[string]V) ([]byte, error) {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = AppendValue(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}
