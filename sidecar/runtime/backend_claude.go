package runtime

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/mcpconfig"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// claudeBackend runs Claude Code headless: claude -p PROMPT --output-format stream-json
// --verbose (the CLI refuses stream-json in print mode without --verbose).
type claudeBackend struct{}

func (claudeBackend) id() string { return BackendClaude }

func (claudeBackend) argv(s *Spec, in turnInput) ([]string, error) {
	// claude -p without a prompt argument reads it from stdin (backend.go: never in argv).
	a := []string{exe(s, "claude"), "-p", "--output-format", "stream-json", "--verbose"}
	if in.resume != "" {
		a = append(a, "--resume", in.resume)
	}
	if s.Model != "" {
		a = append(a, "--model", s.Model)
	}
	if s.MaxTurns > 0 {
		a = append(a, "--max-turns", strconv.Itoa(s.MaxTurns))
	}
	if len(s.AllowedTools) > 0 {
		a = append(a, "--allowedTools", strings.Join(s.AllowedTools, ","))
	}
	if mode := claudeMode(s); mode != "" {
		if err := checkMode(s, "claude", "runtime.permissionMode", mode, claudePermissionModes); err != nil {
			return nil, err
		}
		a = append(a, "--permission-mode", mode)
	}
	if s.SystemPrompt != "" {
		a = append(a, "--append-system-prompt", s.SystemPrompt)
	}
	if s.MCPServers != nil {
		// The definitions as one JSON string (no file to leave behind); --strict-mcp-config
		// makes them the only servers, ignoring the workspace's .mcp.json and user settings.
		// Claude expands their ${NAME} references from its own environment.
		a = append(a, "--mcp-config", mcpconfig.Document(s.MCPServers), "--strict-mcp-config")
	}
	return append(a, s.ExtraArgs...), nil
}

func (claudeBackend) stdin(_ *Spec, in turnInput) string { return in.prompt }
func (claudeBackend) newDecoder(s *Spec, in turnInput) decoder {
	return &claudeDecoder{mode: claudeMode(s), tools: map[string]claudeContent{}, denied: map[string]bool{}}
}
func (claudeBackend) followUp(o, a, s string) turnInput {
	return cliFollowUp(o, a, s)
}

// claudeDecoder reads claude -p --output-format stream-json --verbose (2.1.330: system/init,
// assistant, user, system/permission_denied, system/api_retry, rate_limit_event, result, and
// more system subtypes and types, kept as raw events).
type claudeDecoder struct {
	mode      string // the permission mode in force
	session   string
	text      strings.Builder // all assistant text, the reply when no result arrives
	gotResult bool
	out       turnOutcome
	tools     map[string]claudeContent // tool_use id → the call, for denials
	denied    map[string]bool          // tool_use ids reported as denied
}

type claudeContent struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     map[string]any  `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	// Message is an object in assistant and user lines and a string in system lines
	// (permission_denied): decoded by type.
	Message      json.RawMessage `json:"message"`
	IsError      bool            `json:"is_error"`
	Result       string          `json:"result"`
	TotalCostUSD *float64        `json:"total_cost_usd"`
	NumTurns     int             `json:"num_turns"`
	Usage        struct {
		InputTokens              int64 `json:"input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
	// system/permission_denied
	ToolName           string `json:"tool_name"`
	ToolUseID          string `json:"tool_use_id"`
	DecisionReasonType string `json:"decision_reason_type"`
	DecisionReason     string `json:"decision_reason"`
	// result: every denial of the turn (the system lines report them as they happen)
	PermissionDenials []struct {
		ToolName  string         `json:"tool_name"`
		ToolUseID string         `json:"tool_use_id"`
		ToolInput map[string]any `json:"tool_input"`
	} `json:"permission_denials"`
	// system/api_retry
	Attempt      int   `json:"attempt"`
	MaxRetries   int   `json:"max_retries"`
	RetryDelayMS int64 `json:"retry_delay_ms"`
	ErrorStatus  *int  `json:"error_status"`
	// rate_limit_event
	RateLimitInfo *struct {
		Status        string `json:"status"`
		ResetsAt      *int64 `json:"resetsAt"`
		RateLimitType string `json:"rateLimitType"`
	} `json:"rate_limit_info"`
}

type claudeMessage struct {
	Content []claudeContent `json:"content"`
}

func (d *claudeDecoder) line(l []byte) []Event {
	var m claudeLine
	if evs, ok := decodeLine("claude", l, &m); !ok {
		return evs
	}
	switch m.Type {
	case "system":
		switch m.Subtype {
		case "init":
			d.session = m.SessionID
			return []Event{{Kind: EventSession, SessionID: m.SessionID, Model: m.Model}}
		case "permission_denied":
			var msg string
			_ = json.Unmarshal(m.Message, &msg)
			return d.deny(m.ToolUseID, m.ToolName, nil, msg, m.DecisionReasonType)
		case "api_retry":
			status := "no response"
			if m.ErrorStatus != nil {
				status = "HTTP " + strconv.Itoa(*m.ErrorStatus)
			}
			return []Event{{Kind: EventWarning, Reason: fmt.Sprintf("claude: API error (%s: %s), retry %d of %d in %d ms",
				status, orNone(errorText(m.Error)), m.Attempt, m.MaxRetries, m.RetryDelayMS)}}
		}
		return rawEvent("system/"+m.Subtype, l)
	case "rate_limit_event":
		evs := rawEvent("rate_limit_event", l)
		if r := m.RateLimitInfo; r != nil && r.Status != "" && r.Status != "allowed" {
			reason := "claude: rate limit " + r.Status
			if r.RateLimitType != "" {
				reason += " (" + r.RateLimitType + ")"
			}
			if r.ResetsAt != nil {
				reason += ", resets at " + time.Unix(*r.ResetsAt, 0).UTC().Format(time.RFC3339)
			}
			evs = append(evs, Event{Kind: EventWarning, Reason: reason})
		}
		return evs
	case "assistant":
		var msg claudeMessage
		_ = json.Unmarshal(m.Message, &msg)
		var evs []Event
		for _, c := range msg.Content {
			switch c.Type {
			case "text":
				d.text.WriteString(c.Text)
				evs = append(evs, Event{Kind: EventText, Text: c.Text})
			case "tool_use":
				d.tools[c.ID] = c
				evs = append(evs, Event{Kind: EventToolUse, Tool: c.Name, ToolID: c.ID, Input: c.Input})
			}
		}
		if len(evs) == 0 {
			return rawEvent("assistant", l) // thinking blocks and the like
		}
		return evs
	case "user":
		var msg claudeMessage
		_ = json.Unmarshal(m.Message, &msg)
		var evs []Event
		for _, c := range msg.Content {
			if c.Type == "tool_result" {
				evs = append(evs, Event{Kind: EventToolResult, ToolID: c.ToolUseID, Text: toolResultText(c.Content), IsError: c.IsError})
			}
		}
		if len(evs) == 0 {
			return rawEvent("user", l)
		}
		return evs
	case "result":
		d.gotResult = true
		if m.SessionID != "" {
			d.session = m.SessionID
		}
		d.out.reply = m.Result
		var evs []Event
		d.out.usage = Usage{
			InputTokens:         tally.Sum(m.Usage.InputTokens, m.Usage.CacheReadInputTokens, m.Usage.CacheCreationInputTokens),
			CachedInputTokens:   m.Usage.CacheReadInputTokens,
			CacheCreationTokens: m.Usage.CacheCreationInputTokens,
			OutputTokens:        m.Usage.OutputTokens,
		}
		if why := tally.Report([]int64{m.Usage.InputTokens, m.Usage.CacheReadInputTokens, m.Usage.CacheCreationInputTokens, m.Usage.OutputTokens}, nil); why != "" {
			d.out.usage = Usage{} // not counted: the engine sees a turn that reported nothing
			evs = append(evs, Event{Kind: EventWarning, Reason: "Claude Code's usage report was ignored: " + why})
		}
		for _, pd := range m.PermissionDenials { // any the system lines did not report
			evs = append(evs, d.deny(pd.ToolUseID, pd.ToolName, pd.ToolInput, "", "")...)
		}
		ev := Event{Kind: EventUsage, Usage: &d.out.usage}
		if m.TotalCostUSD != nil {
			d.out.cost, d.out.costKnown = *m.TotalCostUSD, true
			c := *m.TotalCostUSD
			ev.CostUSD = &c
		}
		// A failed API call has been seen reported as subtype success with is_error true:
		// either one makes the turn failed.
		if m.IsError || m.Subtype != "success" {
			d.out.failed = true
			d.out.reason = fmt.Sprintf("claude result: subtype %s, is_error %v", orNone(m.Subtype), m.IsError)
			if m.Result != "" {
				d.out.reason += ": " + firstLine(m.Result)
			}
		}
		return append(evs, ev)
	case "error":
		msg := errorText(m.Error)
		if msg == "" {
			msg = string(l)
		}
		return []Event{{Kind: EventWarning, Reason: "claude error: " + firstLine(msg)}}
	}
	return rawEvent(m.Type, l)
}

// deny reports a denied tool call once, naming the file (from its tool_use) and the field
// that allows it.
func (d *claudeDecoder) deny(id, tool string, input map[string]any, msg, reasonType string) []Event {
	if id != "" {
		if d.denied[id] {
			return nil
		}
		d.denied[id] = true
		if c, ok := d.tools[id]; ok {
			if tool == "" {
				tool = c.Name
			}
			if input == nil {
				input = c.Input
			}
		}
	}
	dn := denial{cli: "claude", tool: orNone(tool), message: msg, mode: "permission mode " + orNone(d.mode)}
	dn.path, dn.command = toolTarget(input)
	switch {
	case reasonType == "workingDir":
		dn.outside = true
	case claudeEditTools[tool]:
		dn.field, dn.fix = "runtime.permissionMode", "acceptEdits"
	default:
		dn.field, dn.fix = "runtime.allowedTools", "["+tool+"]"
		if f := strings.Fields(dn.command); len(f) > 0 {
			dn.fix = "[\"" + tool + "(" + f[0] + " *)\"]"
		}
	}
	return []Event{dn.event()}
}

// claudeEditTools are the tools acceptEdits allows in the working folder.
var claudeEditTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

func (d *claudeDecoder) end(code int) turnOutcome {
	d.out.sessionID = d.session
	if !d.gotResult {
		d.out.reply = d.text.String()
		d.out.failed = true
		d.out.reason = fmt.Sprintf("claude exited with code %d without a result", code)
	} else if code != 0 && !d.out.failed {
		d.out.failed = true
		d.out.reason = fmt.Sprintf("claude exited with code %d", code)
	}
	return d.out
}

// toolResultText flattens a tool_result content: a string, or a list of {type:text,text}.
func toolResultText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return string(raw)
}

// nonJSONLine reports a stdout line of a JSON-stream CLI that is not JSON (a banner, a
// warning): it is not agent text, so it is not parsed for protocol blocks.
func nonJSONLine(cli string, l []byte) []Event {
	s := strings.TrimRight(string(l), "\r\n")
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []Event{{Kind: EventWarning, Reason: cli + ": non-JSON stdout line: " + truncate(s, 2000)}}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return truncate(s, 500)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
