package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
)

// geminiBackend runs the Gemini CLI headless: gemini -p PROMPT --output-format stream-json,
// resumed with --resume SESSION_ID.
type geminiBackend struct{}

func (geminiBackend) id() string { return BackendGemini }

func (geminiBackend) argv(s *Spec, in turnInput) ([]string, error) {
	// gemini puts what it reads on stdin before the -p prompt: with -p empty, the prompt is
	// stdin alone (backend.go: never in argv), and -p keeps it from asking interactively.
	a := []string{exe(s, "gemini"), "-p", "", "--output-format", "stream-json"}
	if in.resume != "" {
		a = append(a, "--resume", in.resume)
	}
	if s.Model != "" {
		a = append(a, "-m", s.Model)
	}
	if mode := geminiApproval(s); mode != "" {
		if err := checkMode(s, "gemini", "runtime.geminiApprovalMode", mode, geminiApprovalModes); err != nil {
			return nil, err
		}
		a = append(a, "--approval-mode", mode)
	}
	if s.MCPServers != nil {
		// Gemini takes server definitions from its own settings only; what it does take is
		// the names it may connect to. No server: a name no settings file defines.
		names := geminiNoMCPServer
		if len(s.MCPServers) > 0 {
			names = mcpNames(s.MCPServers)
		}
		a = append(a, "--allowed-mcp-server-names", names)
	}
	return append(a, s.ExtraArgs...), nil
}

// geminiNoMCPServer is allowed when an agent gets no MCP server, so gemini connects to none.
const geminiNoMCPServer = "agentcanvas-no-mcp-server"

func (geminiBackend) stdin(_ *Spec, in turnInput) string { return in.prompt }
func (geminiBackend) newDecoder(s *Spec, in turnInput) decoder {
	return &geminiDecoder{mode: geminiApproval(s), tools: map[string]geminiLine{}}
}

// env trusts the sandbox folders the engine made: headless gemini refuses a folder it has not
// been told to trust (exit 55, "not running in a trusted directory"), and a trusted folder
// is also where it reads a project's .gemini settings from. The workspace itself is trusted
// only by the user (in gemini, or by listing GEMINI_CLI_TRUST_WORKSPACE in runtime.env).
func (geminiBackend) env(s *Spec) map[string]string {
	if s.CwdMode == CwdAgentHome && s.SandboxWork != "" {
		return map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"}
	}
	return nil
}
func (geminiBackend) followUp(o, a, s string) turnInput {
	return cliFollowUp(o, a, s)
}

// geminiExitReasons are the Gemini CLI's documented exit codes.
var geminiExitReasons = map[int]string{
	1: "general error or API failure", 41: "authentication error", 42: "input error",
	52: "configuration error", 53: "turn limit exceeded", 54: "fatal tool error",
	55: "the working folder is not trusted", 130: "interrupted",
}

type geminiDecoder struct {
	mode      string                // the approval mode in force
	tools     map[string]geminiLine // tool_id → its tool_use, for denials
	session   string
	reply     strings.Builder
	inMessage bool // the previous event was an assistant message chunk
	gotResult bool
	out       turnOutcome
}

type geminiLine struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters map[string]any  `json:"parameters"`
	Status     string          `json:"status"`
	Output     json.RawMessage `json:"output"`
	Error      json.RawMessage `json:"error"`
	Severity   string          `json:"severity"`
	Message    string          `json:"message"`
	Stats      struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		Cached       int64 `json:"cached"`
	} `json:"stats"`
}

func (d *geminiDecoder) line(l []byte) []Event {
	var m geminiLine
	if evs, ok := decodeLine("gemini", l, &m); !ok {
		return evs
	}
	wasInMessage := d.inMessage
	d.inMessage = false
	switch m.Type {
	case "init":
		d.session = m.SessionID
		return []Event{{Kind: EventSession, SessionID: m.SessionID, Model: m.Model}}
	case "message":
		if m.Role != "assistant" {
			return rawEvent("message/"+m.Role, l) // the prompt, echoed
		}
		d.inMessage = m.Delta
		d.reply.WriteString(m.Content)
		// Delta chunks of one message continue each other: no line break between them.
		return []Event{{Kind: EventText, Text: m.Content, cont: m.Delta && wasInMessage}}
	case "tool_use":
		d.tools[m.ToolID] = m
		d.reply.Reset() // the reply is what the model says after its last tool call
		return []Event{{Kind: EventToolUse, Tool: m.ToolName, ToolID: m.ToolID, Input: m.Parameters}}
	case "tool_result":
		failed := m.Status == "error" || len(m.Error) > 0 && string(m.Error) != "null"
		text := rawText(m.Output)
		if failed && text == "" {
			text = errorText(m.Error)
		}
		evs := []Event{{Kind: EventToolResult, ToolID: m.ToolID, Text: text, IsError: failed}}
		if failed {
			evs = append(evs, d.denial(m)...)
		}
		return evs
	case "error":
		return []Event{{Kind: EventWarning, Reason: "gemini " + orNone(m.Severity) + ": " + firstLine(m.Message)}}
	case "result":
		d.gotResult = true
		d.out.usage = Usage{InputTokens: m.Stats.InputTokens, CachedInputTokens: m.Stats.Cached, OutputTokens: m.Stats.OutputTokens}
		if m.Status != "success" || (len(m.Error) > 0 && string(m.Error) != "null") {
			d.out.failed = true
			d.out.reason = "gemini result: status " + orNone(m.Status)
			if e := errorText(m.Error); e != "" {
				d.out.reason += ": " + firstLine(e)
			}
		}
		return []Event{{Kind: EventUsage, Usage: &d.out.usage}}
	}
	return rawEvent(m.Type, l)
}

// denial reads a failed tool result for a call the approval mode did not allow: in default
// (and plan) mode a headless gemini offers no edit or shell tool, so a call of one fails as
// tool_not_registered; a path outside the workspace folders fails with its own message.
func (d *geminiDecoder) denial(m geminiLine) []Event {
	var e struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(m.Error, &e)
	use := d.tools[m.ToolID]
	dn := denial{cli: "gemini", tool: orNone(use.ToolName), message: firstNonEmptyString(e.Message, rawText(m.Output)), mode: "approval mode " + orNone(d.mode)}
	dn.path, dn.command = toolTarget(use.Parameters)
	switch {
	case e.Type == "tool_not_registered" && geminiEditTools[use.ToolName]:
		dn.field, dn.fix = "runtime.geminiApprovalMode", "auto_edit"
	case e.Type == "tool_not_registered":
		dn.field, dn.fix = "runtime.geminiApprovalMode", "yolo"
	case strings.Contains(dn.message, "workspace director"):
		dn.outside = true
	default:
		return nil // an ordinary tool failure
	}
	return []Event{dn.event()}
}

// geminiEditTools are the tools auto_edit offers and runs without asking.
var geminiEditTools = map[string]bool{"write_file": true, "replace": true, "edit": true}

func firstNonEmptyString(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func (d *geminiDecoder) end(code int) turnOutcome {
	d.out.sessionID = d.session
	d.out.reply = d.reply.String()
	if code != 0 && !d.out.failed {
		d.out.failed = true
		d.out.reason = fmt.Sprintf("gemini exited with code %d", code)
		if r, ok := geminiExitReasons[code]; ok {
			d.out.reason += " (" + r + ")"
		}
	} else if !d.gotResult && !d.out.failed {
		d.out.failed = true
		d.out.reason = fmt.Sprintf("gemini exited with code %d without a result", code)
	}
	return d.out
}

func rawText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func errorText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var e struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	return rawText(raw)
}
