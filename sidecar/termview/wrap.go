package termview

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Long lines are wrapped by the view, at spaces, rather than left to the terminal, which
// breaks them anywhere (a run id or a path cut in two). A word longer than the width stays
// whole. A hint that is a command is wrapped with " \" at each break, so it still pastes.

var escapeRE = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// visible is s's width on screen: its runes, colour codes left out.
func visible(s string) int { return utf8.RuneCountInString(escapeRE.ReplaceAllString(s, "")) }

// wrapLine breaks line at spaces so that no piece is wider than width; pieces after the
// first start with indent, and every piece but the last ends with cont (" \\" for a command).
// A word too long for a line of its own is not moved: the break would gain nothing.
func wrapLine(line string, width int, indent, cont string) []string {
	if width <= 0 || visible(line) <= width {
		return []string{line}
	}
	lead := len(line) - len(strings.TrimLeft(line, " "))
	words := strings.Split(line[lead:], " ")
	var out []string
	cur := line[:lead]
	curW := lead
	started := false // cur holds a word
	for _, w := range words {
		ww := visible(w)
		fitsAlone := visible(indent)+ww+visible(cont) <= width // else breaking gains nothing
		if started && w != "" && fitsAlone && curW+1+ww+visible(cont) > width {
			out = append(out, strings.TrimRight(cur, " ")+cont)
			cur, curW, started = indent+w, visible(indent)+ww, true
			continue
		}
		if started {
			cur += " "
			curW++
		}
		cur += w
		curW += ww
		started = started || w != ""
	}
	return append(out, cur)
}

// wrapText wraps each line of text (lines end with "\n").
func wrapText(text string, width int, indent, cont string) string {
	if width <= 0 {
		return text
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if l == "" {
			continue
		}
		nl := strings.HasSuffix(l, "\n")
		for _, piece := range wrapLine(strings.TrimSuffix(l, "\n"), width, indent, cont) {
			b.WriteString(piece)
			b.WriteString("\n")
		}
		if !nl {
			s := b.String()
			return s[:len(s)-1]
		}
	}
	return b.String()
}

// isCommand: a hint line that holds a command to paste (check:, export:, or any line naming
// agentcanvas).
func isCommand(line string) bool { return strings.Contains(line, "agentcanvas ") }
