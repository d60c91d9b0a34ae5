package engine

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// stderrLog keeps the last transcript.MaxStderrLines lines an agent printed on stderr in one
// turn, for the transcript (stderrTail keeps the few a failure's event shows).
type stderrLog struct{ lines []string }

func (l *stderrLog) add(line string) {
	if len(l.lines) == transcript.MaxStderrLines {
		l.lines = append(l.lines[:0], l.lines[1:]...)
	}
	l.lines = append(l.lines, line)
}

// turnActions collects what an agent does during a turn: its tool calls with their results,
// and its text as it says it (kept to the transcript's bound).
type turnActions struct {
	tools []transcript.ToolCall
	open  map[string]int // tool id → index in tools, until its result comes
	said  strings.Builder
}

func (a *turnActions) add(ev runtime.Event) {
	switch ev.Kind {
	case runtime.EventText:
		if room := transcript.MaxText + 1 - a.said.Len(); room > 0 { // one byte over: the transcript says it cut
			if a.said.Len() > 0 {
				a.said.WriteByte('\n')
			}
			text, _ := headBytes(ev.Text, room)
			a.said.WriteString(text)
		}
	case runtime.EventToolUse:
		if len(a.tools) == transcript.MaxTools+1 {
			return // the transcript keeps MaxTools, and says it cut the rest
		}
		input, _ := json.Marshal(ev.Input)
		if len(ev.Input) == 0 {
			input = nil
		}
		if a.open == nil {
			a.open = map[string]int{}
		}
		a.open[ev.ToolID] = len(a.tools)
		a.tools = append(a.tools, transcript.ToolCall{Tool: ev.Tool, Input: string(input), Unanswered: true})
	case runtime.EventToolResult:
		if i, ok := a.open[ev.ToolID]; ok {
			delete(a.open, ev.ToolID)
			t := &a.tools[i]
			t.Output, _ = headBytes(ev.Text, transcript.MaxToolText+1)
			t.IsError, t.Unanswered = ev.IsError, false
		}
	}
}

// headBytes is s cut to at most n bytes (the transcript cuts at a rune boundary after).
func headBytes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	return s[:n], true
}

// turnRecord is what the transcript needs of a turn beyond its result.
type turnRecord struct {
	from, node, backend, prompt string
	started                     time.Time
	stderr                      []string
	tools                       []transcript.ToolCall
	said                        string // what the agent said as it went
}

// record writes one turn to the run's transcript and returns its number. prompt must already
// be redacted (the runtime's Redact); reply, reason and stderr come from the runtime scrubbed.
// A transcript that cannot be written is a warning, never the run's end.
func (c *ictx) record(t turnRecord, res runtime.Result) int {
	turn := transcript.Turn{
		InteractionID: c.in.ID, Agent: t.node, From: firstNonEmpty(t.from, "engine"),
		Round: c.st.Round + 1, Backend: firstNonEmpty(res.Backend, t.backend), Started: t.started.UTC(),
		DurationMs: c.r.now().Sub(t.started).Milliseconds(), Status: string(res.Status), Reason: res.Reason,
		ExitCode: res.ExitCode, InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
		Prompt: t.prompt, Reply: res.Reply, Stderr: t.stderr, Tools: t.tools,
	}
	if res.Reply == "" { // a CLI stopped or failed before its reply: what it had said
		turn.Reply = t.said
	}
	turn.Partial = res.Status != runtime.StatusCompleted && turn.Reply != ""
	if res.CostKnown || res.Backend == runtime.BackendDryRun {
		cost := res.CostUSD
		turn.CostUSD = &cost
	}
	seq, err := c.r.turns.Append(turn)
	if err != nil {
		c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": t.node, "message": err.Error()})
	}
	return seq
}

// pace waits Options.Pace before a dry-run turn (a stop ends the wait); a replayed turn
// (a fork's) does not wait.
func (c *ictx) pace(replay *forkPoint) error {
	if !c.r.o.DryRun || c.r.o.Pace <= 0 || replay != nil {
		return nil
	}
	t := time.NewTimer(c.r.o.Pace)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}
