package engine

import (
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

// turnRecord is what the transcript needs of a turn beyond its result.
type turnRecord struct {
	from, node, backend, prompt string
	started                     time.Time
	stderr                      []string
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
		Prompt: t.prompt, Reply: res.Reply, Stderr: t.stderr,
	}
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
