// Package termview shows a run to a person in a terminal, fed by the engine's events: on a
// terminal, a live status block (one line per agent: state, interaction, round, elapsed time,
// tokens and cost when known) under the lines of what matters (questions, handoffs,
// proposals, warnings, errors with the agent's last stderr lines, the end of each
// interaction); anywhere else (a pipe, a CI log) the same lines, plain, without colour or
// cursor movement. The JSON event lines (`agentcanvas run --json`) are not this package's:
// they stay the machine format.
package termview

import (
	"io"
	"os"

	"golang.org/x/term"
)

// Mode is how the view writes.
type Mode struct {
	// Live: redraw a status block in place (cursor movement). Only on a terminal that
	// understands it.
	Live bool
	// Color: ANSI colours (never when NO_COLOR is set, https://no-color.org).
	Color bool
	// Size returns the terminal's columns and rows (0, 0 when unknown); the block is cut to
	// fit, because a wrapped line would break the redraw.
	Size func() (cols, rows int)
}

// ModeFor picks the mode for w from the environment: Live and Color on a terminal (not
// TERM=dumb), Color only without NO_COLOR; plain lines otherwise.
func ModeFor(w io.Writer) Mode {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("TERM") == "dumb" {
		return Mode{}
	}
	fd := int(f.Fd())
	return Mode{
		Live:  true,
		Color: os.Getenv("NO_COLOR") == "",
		Size: func() (int, int) {
			c, r, err := term.GetSize(fd)
			if err != nil {
				return 0, 0
			}
			return c, r
		},
	}
}

// IsTerminal reports whether r or w is a terminal (for deciding whether to prompt).
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
