// Package termsafe makes text that came from an agent or a file safe to print on a person's
// terminal. Whatever a terminal would act on rather than show — C0 and C1 control characters
// (ESC starts every escape sequence: a cursor move, a colour that hides a line, an OSC 52
// clipboard write, a window title), DEL, bytes that are not UTF-8 (a lone 0x9b is an 8-bit
// CSI), and the invisible format characters that reorder or hide what follows (U+202E, the
// zero-width ones) — is written out as an escape a person reads: \x1b, \u009b, \xff, \u202e.
// So is every character that shows as nothing and so makes one line read like another (the
// Hangul fillers, variation selectors: Invisible has the list).
//
// It is an allowlist: printable characters pass (so do café, 設計 and emoji), and everything
// else is made visible. Every printer of agent or file text on the command line goes through
// Text or Line.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text is s with every character a terminal would act on made visible, keeping newlines and
// tabs (multi-line text: a reply, a diff's lines, a test log).
func Text(s string) string { return clean(s, true) }

// Line is Text for one line: newlines and tabs are made visible too (a name, a status, a
// reason printed inside a sentence).
func Line(s string) string { return clean(s, false) }

// Safe says whether s prints as itself under Text (nothing in it is made visible).
func Safe(s string) bool { return firstUnsafe(s, true) < 0 }

func clean(s string, multiline bool) string {
	i := firstUnsafe(s, multiline)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !allowed(r, prev, multiline):
			b.WriteString(escape(r))
		default:
			b.WriteString(s[i : i+n])
		}
		prev = r
		i += n
	}
	return b.String()
}

// firstUnsafe is the index of the first byte that needs escaping, or -1.
func firstUnsafe(s string, multiline bool) int {
	prev := rune(0)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !allowed(rune(c), prev, multiline) {
				return i
			}
			prev = rune(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !allowed(r, prev, multiline) {
			return i
		}
		prev = r
		i += n
	}
	return -1
}

// allowed: r (after prev) prints as itself. Newline and tab only in multi-line text; nothing
// Invisible, but the variation selector that asks for a symbol's emoji or text form right
// after the symbol (⚠️, ✔️), where it shows as the symbol it changes.
func allowed(r, prev rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return multiline
	case r >= 0x20 && r < 0x7f:
		return true
	case (r == 0xfe0e || r == 0xfe0f) && prev >= 0x80 && unicode.Is(unicode.So, prev):
		return true
	}
	return Invisible(r) == ""
}

// Invisible names the kind of character r is when a terminal or an editor would act on it,
// or not show it as a character of its own, or "" when it prints as itself: a control
// character (C0, DEL, C1), a format character (bidi controls, zero-width spaces and joiners,
// the BOM, the soft hyphen), a line or paragraph separator, a variation selector or another
// default-ignorable code point (the Hangul fillers, the combining grapheme joiner), a
// private-use or surrogate code point. The one list for what a person cannot see: the
// printers escape these, and a proposal may not bring a name holding one.
func Invisible(r rune) string {
	switch {
	case unicode.Is(unicode.Bidi_Control, r):
		return "a bidirectional control character"
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		return "a control character"
	case r < 0x7f:
		return ""
	case unicode.In(r, unicode.Cf):
		return "an invisible format character"
	case unicode.In(r, unicode.Zl, unicode.Zp):
		return "a line or paragraph separator"
	case unicode.In(r, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point):
		return "an invisible (default-ignorable) character"
	case unicode.In(r, unicode.Co, unicode.Cs):
		return "a private-use or surrogate code point"
	}
	return ""
}

// escape writes r as a person reads it.
func escape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	if r > 0xffff {
		return fmt.Sprintf(`\U%08x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// Writer wraps w so that every write is passed through Text: for a stream that carries only
// plain text (the command line's stderr: warnings, errors, refusals), so that no message
// built from an agent's or a file's text reaches the terminal raw. Each write is cleaned on
// its own; writers print whole messages.
func Writer(w io.Writer) io.Writer {
	if _, ok := w.(*writer); ok {
		return w
	}
	return &writer{w: w}
}

type writer struct{ w io.Writer }

func (t *writer) Write(p []byte) (int, error) {
	s := string(p)
	if firstUnsafe(s, true) < 0 {
		return t.w.Write(p)
	}
	if _, err := io.WriteString(t.w, clean(s, true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// JSONWriter wraps w so that every write is passed through JSON: for a stream of JSON values
// on the command line's stdout (an encoder writes each value in one write), so that the text
// of an agent or a file in them reaches the terminal as \u escapes, meaning the same.
func JSONWriter(w io.Writer) io.Writer {
	if _, ok := w.(*jsonWriter); ok {
		return w
	}
	return &jsonWriter{w: w}
}

type jsonWriter struct{ w io.Writer }

func (j *jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// JSON makes JSON text safe to print: encoding/json leaves C1 controls and format characters
// (U+009B, U+202E) in strings as they are; they become \u escapes, so the JSON means the same.
// Bytes that are not UTF-8 do not occur in encoding/json's output (it writes U+FFFD).
func JSON(b []byte) []byte {
	s := string(b)
	if firstUnsafe(s, true) < 0 {
		return b
	}
	var out strings.Builder
	out.Grow(len(b) + 16)
	prev := rune(0)
	for _, r := range s {
		ok := allowed(r, prev, true) || r == '\r'
		prev = r
		if ok {
			out.WriteRune(r)
			continue
		}
		if r > 0xffff {
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&out, `\u%04x`, r)
	}
	return []byte(out.String())
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}
