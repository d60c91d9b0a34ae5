package termview

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

var marks = map[string]string{
	stateWaiting: "○", stateAsking: "?", stateIdle: "·", stateDone: "✓",
	stateFailed: "✗", stateStopped: "■", stateSkipped: "–", stateNotRun: "–",
}

var stateStyle = map[string]style{
	stateWaiting: dim, stateRunning: cyan, stateAsking: yellow, stateIdle: plain,
	stateDone: green, stateFailed: red, stateStopped: yellow, stateSkipped: dim, stateNotRun: dim,
}

// block is the live status block: a header line for the run, then a line per agent, cut to
// the terminal's width (a wrapped line would break the redraw) and to its height.
func (v *View) block() []string {
	cols, rows := v.size()
	now := v.o.Now()
	head := "agentcanvas"
	if v.r.id != "" {
		head = fmt.Sprintf("%s · %s · %s", v.r.flow, v.r.id, Clock(now.Sub(v.r.started)))
	}
	if v.r.interactions > 0 {
		head += fmt.Sprintf(" · %d of %d interactions ended", v.r.ended, v.r.interactions)
	}
	if v.r.tokens > 0 {
		head += " · " + Tokens(v.r.tokens) + " tokens"
	}
	if (v.r.turns > 0 || v.r.cost > 0) && v.r.costKnown {
		head += " · " + USD(v.r.cost)
	}
	out := []string{v.paint(dim, cut("── "+head, cols-1))}
	agents := v.r.agents
	if room := rows - 2; len(agents)+1 > room && room >= 3 {
		// Keep the agents at work on screen; say how many are left out.
		agents = busyFirst(agents)[:room-2]
		out = append(out, v.agentLines(agents, cols-1, true)...)
		return append(out, v.paint(dim, fmt.Sprintf("  … and %d more agents", len(v.r.agents)-len(agents))))
	}
	return append(out, v.agentLines(agents, cols-1, true)...)
}

// table is the agents' final states, printed once when the run ends (both modes).
func (v *View) table() []byte {
	var b bytes.Buffer
	width := 0
	if v.o.Live {
		width, _ = v.size()
		width--
	}
	for _, l := range v.agentLines(v.r.agents, width, false) {
		b.WriteString(Indent + l + "\n")
	}
	return b.Bytes()
}

// agentLines renders one line per agent with aligned columns. width <= 0: no cut.
func (v *View) agentLines(agents []*agent, width int, live bool) []string {
	idW, inW := 0, 0
	for _, a := range agents {
		idW, inW = max(idW, len([]rune(a.id))), max(inW, len([]rune(a.interaction)))
	}
	now := v.o.Now()
	out := make([]string, 0, len(agents))
	for _, a := range agents {
		mark := marks[a.state]
		if a.state == stateRunning {
			mark = "●"
			if live {
				mark = spinner[v.spin%len(spinner)]
			}
		}
		cols := []string{pad(termsafe.Line(a.id), idW), pad(termsafe.Line(a.interaction), inW), pad(fmt.Sprintf("round %d", a.round+1), 8), pad(a.state, 7), fmt.Sprintf("%5s", Clock(a.elapsed(now)))}
		if a.turns > 0 || a.metered { // a metered agent's spend shows during its first turn
			cols = append(cols, spend(a, true)...)
		}
		text := strings.Join(cols, "  ")
		if n := v.notes[a.id]; n != "" && live {
			text += "  " + n
		}
		if width > 0 {
			text = cut(text, width-2)
		}
		text = strings.TrimRight(text, " ")
		out = append(out, v.paint(stateStyle[a.state], mark)+" "+v.paint(styleOfText(a.state), text))
	}
	return out
}

// styleOfText: only the states that need attention colour the whole line.
func styleOfText(state string) style {
	switch state {
	case stateFailed:
		return red
	case stateAsking:
		return yellow
	case stateWaiting, stateSkipped, stateNotRun:
		return dim
	}
	return plain
}

// spend is an agent's turns, tokens and cost, as far as known.
func spend(a *agent, short bool) []string {
	out := []string{plural(a.turns, "turn", "turns")}
	if a.tokensKnown {
		out = append(out, Tokens(a.tokens)+" tokens")
	}
	if a.costKnown {
		out = append(out, USD(a.cost))
	}
	if short { // aligned in the block: " 1 turn ", "12 turns"
		out[0] = pad(fmt.Sprintf("%2d %s", a.turns, strings.Fields(out[0])[1]), 8)
	}
	return out
}

// busyFirst orders agents at work (running, asking, failed) before the others, keeping
// each group's order.
func busyFirst(agents []*agent) []*agent {
	out := make([]*agent, 0, len(agents))
	for pass := 0; pass < 2; pass++ {
		for _, a := range agents {
			busy := a.state == stateRunning || a.state == stateAsking || a.state == stateFailed
			if busy == (pass == 0) {
				out = append(out, a)
			}
		}
	}
	return out
}

func pad(s string, n int) string {
	if k := len([]rune(s)); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}
