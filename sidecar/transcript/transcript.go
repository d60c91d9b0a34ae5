// Package transcript keeps what every agent turn of a run was sent and what it answered:
// .agentcanvas/runs/<run>/turns.jsonl, one JSON object a line, so a flow author can see the
// prompt an agent got, its reply and its stderr without turning confinement off. Secrets are
// redacted by the caller (the runtime's redactor) before a turn reaches Append. The file is
// bounded (each field, and the whole file) and old transcripts are pruned when a run starts.
package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"
)

// FileName is a run's transcript inside .agentcanvas/runs/<run>/.
const FileName = "turns.jsonl"

// Bounds: a turn's prompt and reply keep their first MaxText bytes, its stderr its last
// MaxStderrLines lines of at most MaxLine bytes, its tool calls the first MaxTools with
// MaxToolText bytes of each input and output; a run's file stops taking texts at MaxFile
// bytes (the turns are still recorded, with their texts left out and Truncated saying so).
const (
	MaxText        = 64 << 10
	MaxStderrLines = 200
	MaxLine        = 1000
	MaxTools       = 200
	MaxToolText    = 2 << 10
	MaxFile        = 8 << 20
)

// Turn is one agent turn as the engine ran it.
type Turn struct {
	Seq           int       `json:"seq"`
	InteractionID string    `json:"interactionId"`
	Agent         string    `json:"agent"`
	From          string    `json:"from"`  // who asked: another agent or "engine"
	Round         int       `json:"round"` // counted from 1
	Backend       string    `json:"backend"`
	Started       time.Time `json:"started"`
	DurationMs    int64     `json:"durationMs"`
	Status        string    `json:"status"`           // completed, failed, stopped
	Reason        string    `json:"reason,omitempty"` // why it did not complete
	ExitCode      int       `json:"exitCode"`
	InputTokens   int64     `json:"inputTokens,omitempty"`
	OutputTokens  int64     `json:"outputTokens,omitempty"`
	CostUSD       *float64  `json:"costUsd,omitempty"` // absent when the backend reports no cost
	Prompt        string    `json:"prompt"`
	Reply         string    `json:"reply"`
	// Partial: the turn was stopped (or failed) before the CLI gave its reply; Reply is what
	// the agent had said until then.
	Partial bool       `json:"partial,omitempty"`
	Tools   []ToolCall `json:"tools,omitempty"` // the CLI's tool calls, in order
	Stderr  []string   `json:"stderr,omitempty"`
	// Truncated names the fields cut to fit the bounds ("prompt", "reply", "stderr", or
	// "texts" once the run's file is full).
	Truncated []string `json:"truncated,omitempty"`
}

// ToolCall is one tool call of a turn: the tool, its input (JSON) and what it gave back.
type ToolCall struct {
	Tool    string `json:"tool"`
	Input   string `json:"input,omitempty"`
	Output  string `json:"output,omitempty"`
	IsError bool   `json:"isError,omitempty"`
	// Unanswered: the turn ended before the tool gave its result.
	Unanswered bool `json:"unanswered,omitempty"`
}

// Writer appends a run's turns; it is safe for concurrent use (agents of one interaction
// run in parallel).
type Writer struct {
	workspace, runID string
	mu               sync.Mutex
	seq              int
	size             int64
	err              error // the first write error, reported once
}

// NewWriter writes the transcript of runID under workspace. A resumed run appends to the
// turns already there.
func NewWriter(workspace, runID string) *Writer {
	w := &Writer{workspace: workspace, runID: runID}
	var skipped *SkippedError
	if turns, err := Read(workspace, runID); err == nil || errors.As(err, &skipped) {
		w.seq = len(turns)
		if skipped != nil {
			w.seq += len(skipped.Lines) // a torn turn still took its number
		}
		for _, t := range turns {
			w.seq = max(w.seq, t.Seq)
		}
		w.size = fileSize(workspace, runID)
	}
	return w
}

// Len is how many turns the transcript holds (the last Seq given).
func (w *Writer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// Append records t (Seq is set here) and returns the error of the first failed write, once:
// a transcript that cannot be written must not stop the run, but the person must hear of it.
func (w *Writer) Append(t Turn) (seq int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	t.Seq = w.seq
	bound(&t)
	line, err := json.Marshal(t)
	if err == nil && w.size+int64(len(line)) > MaxFile {
		t.Prompt, t.Reply, t.Stderr, t.Tools = "", "", nil, nil
		t.Truncated = append(t.Truncated, "texts")
		line, err = json.Marshal(t)
	}
	if err == nil {
		err = appendLine(w.workspace, w.runID, append(line, '\n'))
	}
	if err != nil {
		first := w.err == nil
		w.err = err
		if first {
			return t.Seq, fmt.Errorf("transcript %s: %w", filepath.Join(RunsDir, w.runID, FileName), err)
		}
		return t.Seq, nil
	}
	w.size += int64(len(line)) + 1
	return t.Seq, nil
}

// bound cuts t's texts to the bounds, noting which it cut.
func bound(t *Turn) {
	var cut bool
	if t.Prompt, cut = head(t.Prompt, MaxText); cut {
		t.Truncated = append(t.Truncated, "prompt")
	}
	if t.Reply, cut = head(t.Reply, MaxText); cut {
		t.Truncated = append(t.Truncated, "reply")
	}
	lines := t.Stderr
	cut = false
	if len(lines) > MaxStderrLines {
		lines, cut = lines[len(lines)-MaxStderrLines:], true
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		var c bool
		out[i], c = head(l, MaxLine)
		cut = cut || c
	}
	if len(lines) > 0 {
		t.Stderr = out
	}
	if cut {
		t.Truncated = append(t.Truncated, "stderr")
	}
	cut = false
	if len(t.Tools) > MaxTools {
		t.Tools, cut = t.Tools[:MaxTools], true
	}
	for i := range t.Tools {
		var ci, co bool
		t.Tools[i].Input, ci = head(t.Tools[i].Input, MaxToolText)
		t.Tools[i].Output, co = head(t.Tools[i].Output, MaxToolText)
		cut = cut || ci || co
	}
	if cut {
		t.Truncated = append(t.Truncated, "tools")
	}
}

// head is s cut to at most n bytes at a rune boundary.
func head(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
