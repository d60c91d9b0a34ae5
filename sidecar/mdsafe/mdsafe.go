// Package mdsafe writes text that came from an agent or a file into Markdown (a run's summary,
// a proposal's summary.md, both opened in a Markdown preview) so that it says only what it
// says: no link or image whose text lies about its target ([✅ tests pass](…), ![](…) that
// calls home when rendered), no raw HTML (<img>, <details>, a comment that hides the rest of
// the page), no entity (&#x202e; is a bidi override once rendered), no table cell or code
// span it breaks out of. Terminal controls are made visible as well (termsafe): a summary
// file is read with cat too.
package mdsafe

import (
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// Text is s on one line with every character that would make markup escaped.
func Text(s string) string { return escaper.Replace(OneLine(s)) }

var escaper = strings.NewReplacer(`\`, `\\`, "<", `\<`, ">", `\>`, "[", `\[`, "]", `\]`, "&", `\&`, "|", `\|`, "`", "\\`")

// OneLine is s on one line (runs of white space made one space), with whatever a terminal
// would act on made visible.
func OneLine(s string) string {
	return termsafe.Line(strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", "")), " "))
}

// Code is an inline code span of s on one line: its backtick string longer than any run of
// backticks in s, so s cannot close it; pipes escaped, for a table cell.
func Code(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(OneLine(s), "|", `\|`)
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if ticks != "`" { // spaced, so a backtick at either end is not part of the string
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}

// Block is a fenced code block of text, its fence longer than any run of backticks in it,
// each line indented by indent (a block inside a list item): nothing in it is markup.
func Block(text, indent string) string {
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	text = termsafe.Text(text)
	text = strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n"+indent)
	return indent + fence + "text\n" + indent + text + "\n" + indent + fence + "\n"
}

func longestRun(s string, c rune) int {
	longest, run := 0, 0
	for _, r := range s {
		if r == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
