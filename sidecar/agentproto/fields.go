package agentproto

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// fieldParser reads a block body one line at a time (spec "파싱 규칙"):
//
//	key: value          a field; the key is matched case-insensitively
//	  more text         an indented line continues the previous value (joined by "\n")
//	key:                followed by "- item" lines (indented or not): a list
//	  - item
//
// Blank lines are skipped inside tagged blocks and end open-ended ones
// (PHASE_COMPLETE details, HANDOFF). It keeps the first format problem so the
// block can be reported invalid naming the line and field.
type fieldParser struct {
	known  map[string]string // lower-case key -> the spec's spelling
	values map[string]*value
	keys   []string
	last   *value // the field the next continuation or item belongs to
	err    *problem
}

// value collects a field's lines; they are joined once, at the end, so a long
// multi-line value costs linear time.
type value struct {
	key   string
	text  []string   // a text value, line by line
	items [][]string // a list: each item line by line
}

// fields returns the values as the Block carries them: string or []string.
func (f *fieldParser) fields() map[string]any {
	m := make(map[string]any, len(f.values))
	for k, v := range f.values {
		if v.items == nil {
			m[k] = strings.Join(v.text, "\n")
			continue
		}
		l := make([]string, len(v.items))
		for i, it := range v.items {
			l[i] = strings.Join(it, "\n")
		}
		m[k] = l
	}
	return m
}

type problem struct {
	field string
	msg   string
}

func newFieldParser(known map[string]string) *fieldParser {
	return &fieldParser{known: known, values: map[string]*value{}}
}

func (f *fieldParser) fail(field, format string, args ...any) {
	if f.err == nil {
		f.err = &problem{field, fmt.Sprintf(format, args...)}
	}
}

// lineShape is what a body line looks like.
type lineShape int

const (
	shapeBlank lineShape = iota
	shapeField
	shapeItem
	shapeContinuation
	shapeOther
)

// classify returns the line's shape and its parts (key and value for a field,
// the text for an item or continuation).
func classify(line string) (shape lineShape, key, val string) {
	t := strings.TrimSpace(line)
	if t == "" {
		return shapeBlank, "", ""
	}
	if t == "-" || strings.HasPrefix(t, "- ") {
		return shapeItem, "", strings.TrimSpace(t[1:])
	}
	if line[0] == ' ' || line[0] == '\t' {
		return shapeContinuation, "", t
	}
	if k, v, ok := splitField(t); ok {
		return shapeField, k, v
	}
	return shapeOther, "", t
}

// splitField recognises "key: value": a key that starts with a letter and holds
// letters, digits, spaces and _ - . /, at most 64 bytes, then a colon followed
// by a space or the end of the line (so "https://x" is not a field).
func splitField(t string) (key, val string, ok bool) {
	i := strings.IndexByte(t, ':')
	if i <= 0 || i > 64 {
		return "", "", false
	}
	if i+1 < len(t) && t[i+1] != ' ' && t[i+1] != '\t' {
		return "", "", false
	}
	key = strings.TrimRight(t[:i], " \t")
	r, _ := utf8.DecodeRuneInString(key)
	if !unicode.IsLetter(r) {
		return "", "", false
	}
	for _, r := range key {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" _-./", r)) {
			return "", "", false
		}
	}
	return key, strings.TrimSpace(t[i+1:]), true
}

// accepts reports whether feed would take line as part of an open-ended block,
// without changing anything.
func (f *fieldParser) accepts(line string) bool {
	switch shape, _, _ := classify(line); shape {
	case shapeField:
		return true
	case shapeItem, shapeContinuation:
		return f.last != nil
	}
	return false
}

// feed adds one body line (block indentation already removed). It returns
// false when the line does not fit the grammar; open-ended blocks end there,
// tagged blocks record a format problem.
func (f *fieldParser) feed(line string, lineNo int, tagged bool) bool {
	shape, key, val := classify(line)
	switch shape {
	case shapeBlank:
		return tagged
	case shapeField:
		if c, ok := f.known[strings.ToLower(key)]; ok {
			key = c
		}
		if _, dup := f.values[key]; dup {
			f.fail(key, "line %d: field '%s' appears twice", lineNo, key)
			f.last = nil
			return true
		}
		v := &value{key: key}
		if val != "" {
			v.text = []string{val}
		}
		f.values[key] = v
		f.keys = append(f.keys, key)
		f.last = v
		return true
	case shapeItem:
		v := f.last
		if v == nil {
			if tagged {
				f.fail("", "line %d: list item %q does not follow a 'key:' line", lineNo, clip(val))
			}
			return tagged
		}
		if len(v.text) > 0 {
			f.fail(v.key, "line %d: field '%s' has both a value and list items", lineNo, v.key)
			return true
		}
		v.items = append(v.items, []string{val})
		if val == "" {
			f.fail(v.key, "line %d: empty list item in field '%s'", lineNo, v.key)
		}
		return true
	case shapeContinuation:
		v := f.last
		if v == nil {
			if tagged {
				f.fail("", "line %d: indented line %q does not continue a field", lineNo, clip(val))
			}
			return tagged
		}
		if v.items != nil {
			it := v.items[len(v.items)-1]
			v.items[len(v.items)-1] = append(it, val)
		} else {
			v.text = append(v.text, val)
		}
		return true
	}
	if tagged {
		f.fail("", "line %d: expected 'key: value', got %q", lineNo, clip(val))
	}
	return false
}

// clip shortens text quoted in an error message.
func clip(s string) string {
	if len(s) <= 60 {
		return s
	}
	i := 57
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
