package runtime

import (
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/agentproto"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// EventKind names what an Event reports.
type EventKind string

const (
	EventStarted    EventKind = "started"     // a turn's process started: Turn, PID, Argv (no prompt)
	EventSession    EventKind = "session"     // the CLI reported its session/thread id: SessionID, Model
	EventText       EventKind = "text"        // agent text (assistant text, agent_message, stdout line)
	EventToolUse    EventKind = "tool_use"    // Tool, ToolID, Input
	EventToolResult EventKind = "tool_result" // ToolID, Text (output), IsError
	EventUsage      EventKind = "usage"       // Usage and CostUSD of one turn
	EventBlock      EventKind = "block"       // a protocol block (agentproto.Block, JSON {kind,line,fields,error?})
	EventPending    EventKind = "pending"     // a question/dependency/phase awaits an answer: Pending
	EventPaused     EventKind = "paused"      // the process group got SIGTSTP: Reason (Block: the recoverable [ERROR], when it paused for one)
	EventResumed    EventKind = "resumed"     // the process group got SIGCONT: Reason
	EventAnswered   EventKind = "answered"    // a pending request was resolved: Pending (no secret values)
	EventStderr     EventKind = "stderr"      // one line of the agent's stderr
	EventDenied     EventKind = "denied"      // a confined agent reported a refused access: Text (the path, if named), Reason (its line)
	EventWarning    EventKind = "warning"     // something went wrong that did not end the agent: Reason; a permission denial also sets Tool, Path (or Input) and Field
	EventRaw        EventKind = "raw"         // a stdout line of the CLI's JSON stream with no event of its own: Text (its type), Data (the line)
	EventTurnEnd    EventKind = "turn_end"    // a turn's process exited: Turn, ExitCode, Failed, Reason
	EventExit       EventKind = "exit"        // the agent is finished: Result (always the last event)
)

// Event is one thing that happened in a running agent. Only the fields its Kind names are set.
// Every string in an Event has had secret values scrubbed.
type Event struct {
	Kind EventKind `json:"kind"`
	Time time.Time `json:"ts"`
	Turn int       `json:"turn,omitempty"`

	Text      string            `json:"text,omitempty"`
	Tool      string            `json:"tool,omitempty"`
	ToolID    string            `json:"toolId,omitempty"`
	Input     map[string]any    `json:"input,omitempty"`
	IsError   bool              `json:"isError,omitempty"`
	SessionID string            `json:"sessionId,omitempty"`
	Model     string            `json:"model,omitempty"`
	Usage     *Usage            `json:"usage,omitempty"`
	CostUSD   *float64          `json:"costUsd,omitempty"`
	Block     *agentproto.Block `json:"block,omitempty"`
	Pending   *Pending          `json:"pending,omitempty"`
	Reason    string            `json:"reason,omitempty"`
	PID       int               `json:"pid,omitempty"`
	Argv      []string          `json:"argv,omitempty"`
	ExitCode  int               `json:"exitCode,omitempty"`
	Failed    bool              `json:"failed,omitempty"`
	Result    *Result           `json:"result,omitempty"`
	// Path is the file a denied tool call was for; Field the flow field that would allow it
	// (runtime.permissionMode, runtime.codexSandbox, runtime.geminiApprovalMode…).
	Path  string `json:"path,omitempty"`
	Field string `json:"field,omitempty"`
	// Data is the decoded JSON line of an EventRaw.
	Data map[string]any `json:"data,omitempty"`

	// cont marks a text chunk that continues the previous one (no line break between them).
	cont bool
}

// Usage is token usage as the CLI reported it (summed over turns in a Result), counted the
// same way for every CLI: InputTokens is every input token, including those read from or
// written to a prompt cache (Claude Code reports those apart; they are added in), and
// CachedInputTokens and CacheCreationTokens are the parts of it read from and written to a
// cache.
type Usage struct {
	InputTokens         int64 `json:"inputTokens"`
	CachedInputTokens   int64 `json:"cachedInputTokens,omitempty"`
	CacheCreationTokens int64 `json:"cacheCreationTokens,omitempty"`
	OutputTokens        int64 `json:"outputTokens"`
}

// add adds o to u, each count saturating (tally).
func (u *Usage) add(o Usage) {
	u.InputTokens = tally.Add(u.InputTokens, o.InputTokens)
	u.CachedInputTokens = tally.Add(u.CachedInputTokens, o.CachedInputTokens)
	u.CacheCreationTokens = tally.Add(u.CacheCreationTokens, o.CacheCreationTokens)
	u.OutputTokens = tally.Add(u.OutputTokens, o.OutputTokens)
}

// Check says why a reported usage (and cost, nil when none) cannot be counted: a negative
// count, or one larger than any turn could be ("" when it can).
func (u Usage) Check(cost *float64) string {
	return tally.Report([]int64{u.InputTokens, u.CachedInputTokens, u.CacheCreationTokens, u.OutputTokens}, cost)
}

// Status is how an agent ended.
type Status string

const (
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusStopped   Status = "stopped"
)

// Result is what Wait returns once the agent is finished.
type Result struct {
	Status Status `json:"status"`
	// Reason says why the agent failed or stopped (empty when completed).
	Reason string `json:"reason,omitempty"`
	// Reply is the agent's final answer: claude's result text, codex's last agent_message,
	// gemini's assistant message text, the stdout of a command or dry-run agent (last turn).
	Reply     string `json:"reply"`
	SessionID string `json:"sessionId,omitempty"`
	Backend   string `json:"backend"`
	Turns     int    `json:"turns"`
	Usage     Usage  `json:"usage"`
	// CostUSD is the summed reported cost; CostKnown is false when a CLI reports no cost
	// (codex, gemini, command): then CostUSD is 0 and means "unknown", not "free".
	CostUSD   float64 `json:"costUsd"`
	CostKnown bool    `json:"costKnown"`
	ExitCode  int     `json:"exitCode"`
	// Retries counts the turns retried after a recoverable [ERROR].
	Retries int `json:"retries,omitempty"`
	// rawReply is Reply before secrets were redacted from it (RawReply).
	rawReply string
	// Handoff is the fields of the last valid HANDOFF block the agent printed, if any.
	Handoff map[string]any `json:"handoff,omitempty"`
}

// RawReply is the reply as the agent wrote it, before its secrets were redacted: for what the
// engine parses (a secret in a line must not change what the line says), never for what it
// shows, logs or keeps, which take Reply.
func (r Result) RawReply() string {
	if r.rawReply == "" {
		return r.Reply
	}
	return r.rawReply
}
