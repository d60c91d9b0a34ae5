package runtime

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/mcpconfig"
)

// claudeBackend runs Claude Code headless: claude -p PROMPT --output-format stream-json
// --verbose (the CLI refuses stream-json in print mode without --verbose).
type claudeBackend struct{}

func (claudeBackend) id() string { return BackendClaude }

func (claudeBackend) argv(s *Spec, in turnInput) ([]string, error) {
	a := []string{exe(s, "claude"), "-p", in.prompt, "--output-format", "stream-json", "--verbose"}
	if len(in.prompt) > maxArgPrompt {
		a = append(a[:2], a[3:]...) // claude -p reads the prompt from stdin
	}
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
	if s.PermissionMode != "" {
		switch s.PermissionMode {
		case "default", "acceptEdits", "plan", "bypassPermissions":
		default:
			return nil, fmt.Errorf("runtime: agent %s: claude permission mode %q is not default, acceptEdits, plan or bypassPermissions", s.AgentID, s.PermissionMode)
		}
		a = append(a, "--permission-mode", s.PermissionMode)
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

func (claudeBackend) stdin(_ *Spec, in turnInput) string {
	if len(in.prompt) > maxArgPrompt {
		return in.prompt
	}
	return ""
}
func (claudeBackend) newDecoder() decoder { return &claudeDecoder{} }
func (claudeBackend) followUp(o, a, s string) turnInput {
	return cliFollowUp(o, a, s)
}

type claudeDecoder struct {
	session   string
	text      strings.Builder // all assistant text, the reply when no result arrives
	gotResult bool
	out       turnOutcome
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
	Message   struct {
		Content []claudeContent `json:"content"`
	} `json:"message"`
	IsError      bool     `json:"is_error"`
	Result       string   `json:"result"`
	TotalCostUSD *float64 `json:"total_cost_usd"`
	NumTurns     int      `json:"num_turns"`
	Usage        struct {
		InputTokens              int64 `json:"input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
	} `json:"usage"`
	Error string `json:"error"`
}

func (d *claudeDecoder) line(l []byte) []Event {
	var m claudeLine
	if err := json.Unmarshal(l, &m); err != nil {
		return nonJSONLine("claude", l)
	}
	switch m.Type {
	case "system":
		if m.Subtype == "init" {
			d.session = m.SessionID
			return []Event{{Kind: EventSession, SessionID: m.SessionID, Model: m.Model}}
		}
	case "assistant":
		var evs []Event
		for _, c := range m.Message.Content {
			switch c.Type {
			case "text":
				d.text.WriteString(c.Text)
				evs = append(evs, Event{Kind: EventText, Text: c.Text})
			case "tool_use":
				evs = append(evs, Event{Kind: EventToolUse, Tool: c.Name, ToolID: c.ID, Input: c.Input})
			}
		}
		return evs
	case "user":
		var evs []Event
		for _, c := range m.Message.Content {
			if c.Type == "tool_result" {
				evs = append(evs, Event{Kind: EventToolResult, ToolID: c.ToolUseID, Text: toolResultText(c.Content), IsError: c.IsError})
			}
		}
		return evs
	case "result":
		d.gotResult = true
		if m.SessionID != "" {
			d.session = m.SessionID
		}
		d.out.reply = m.Result
		d.out.usage = Usage{
			InputTokens:         m.Usage.InputTokens,
			CachedInputTokens:   m.Usage.CacheReadInputTokens,
			CacheCreationTokens: m.Usage.CacheCreationInputTokens,
			OutputTokens:        m.Usage.OutputTokens,
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
		return []Event{ev}
	case "error":
		msg := m.Error
		if msg == "" {
			msg = string(l)
		}
		return []Event{{Kind: EventWarning, Reason: "claude error: " + firstLine(msg)}}
	}
	return nil
}

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
