package mdsafe

import (
	"regexp"
	"strings"
	"testing"
)

// hostile is an agent's text written to lie once rendered: an image that calls home, a link
// whose words lie about its target, raw HTML, an entity that is a bidi override, a comment
// that hides the rest, a table cell and a code span broken out of, an OSC 52 write.
const hostile = "ok ``x` | <img src=https://evil.example/t.png> [✅ all good](https://evil.example) &#x202e; <!-- \x1b]52;c;eA==\a"

// Rendered reports the parts of md a Markdown renderer would read as markup: what is left
// outside fenced blocks and code spans once escaped characters are taken out.
func rendered(md string) string {
	var out []string
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimLeft(line, " ")
		switch {
		case fence != "" && strings.TrimRight(t, " ") == fence:
			fence = ""
		case fence != "":
		case strings.HasPrefix(t, "```"):
			fence = t[:len(t)-len(strings.TrimLeft(t, "`"))]
		default:
			out = append(out, line)
		}
	}
	s := regexp.MustCompile(`\\.`).ReplaceAllString(strings.Join(out, "\n"), "")
	for { // code spans: a run of backticks to the next run of the same length
		m := regexp.MustCompile("`+").FindStringIndex(s)
		if m == nil {
			return s
		}
		ticks := s[m[0]:m[1]]
		end := strings.Index(s[m[1]:], ticks)
		for end >= 0 && m[1]+end+len(ticks) < len(s) && s[m[1]+end+len(ticks)] == '`' {
			next := strings.Index(s[m[1]+end+len(ticks):], ticks)
			if next < 0 {
				end = -1
				break
			}
			end += len(ticks) + next
		}
		if end < 0 {
			return s // an unclosed run is text
		}
		s = s[:m[0]] + s[m[1]+end+len(ticks):]
	}
}

func markup(t *testing.T, what, md string) {
	t.Helper()
	left := rendered(md)
	for _, m := range []string{"<", "](", "&#", "|"} {
		if strings.Contains(left, m) {
			t.Errorf("%s renders %q as markup:\n%s", what, m, md)
		}
	}
	if strings.Contains(md, "\x1b") {
		t.Errorf("%s holds a raw escape: %q", what, md)
	}
}

func TestNothingAnAgentWroteIsMarkup(t *testing.T) {
	markup(t, "Text", Text(hostile))
	markup(t, "Code", Code(hostile))
	markup(t, "Block", Block(hostile+"\n```\n<img src=x>\n````", "  "))
	for _, s := range []string{"a.go", "a`b.go", "`a", "a``", "x|y"} {
		if got, want := rendered("| "+Code(s)+" |"), "|  |"; got != want {
			t.Errorf("Code(%q) = %s: renders as %q", s, Code(s), got)
		}
	}
}
