package runtime

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/mcpconfig"
)

// codexBackend runs the Codex CLI non-interactively: codex exec --json [flags] PROMPT, and
// codex exec --json [flags] resume THREAD_ID PROMPT to carry answers (flags repeated, as the
// CLI requires). exec never asks for approval; --sandbox bounds what it may touch.
type codexBackend struct{}

func (codexBackend) id() string { return BackendCodex }

func (codexBackend) argv(s *Spec, in turnInput) ([]string, error) {
	a := []string{exe(s, "codex"), "exec", "--json", "--skip-git-repo-check"}
	sb := codexSandbox(s)
	if err := checkMode(s, "codex", "runtime.codexSandbox", sb, codexSandboxModes); err != nil {
		return nil, err
	}
	if s.confined {
		// Codex's own sandbox (bubblewrap) cannot start under Landlock, which refuses the
		// mounts it makes: every command would fail. The agent's Landlock rules take its place
		// (read-only outside work/ and TMPDIR, whatever the mode), and a codex agent is never
		// started unconfined instead (selfSandboxed).
		sb = "danger-full-access"
	}
	a = append(a, "--sandbox", sb)
	if s.Model != "" {
		a = append(a, "-m", s.Model)
	}
	a = append(a, codexMCPArgs(s.MCPServers)...)
	a = append(a, codexGatewayArgs(s)...) // gateway_env.go
	a = append(a, s.ExtraArgs...)
	if in.resume != "" {
		a = append(a, "resume", in.resume)
	}
	return append(a, "-"), nil // codex exec reads the prompt from stdin (backend.go: never in argv)
}

// codexMCPArgs gives codex each server as -c mcp_servers.<name>.<key>=<TOML value> overrides
// (codex has no flag for a server file). Variables are passed by name only: env_vars (stdio),
// bearer_token_env_var and env_http_headers (http); codex reads the values from its own
// environment. Codex has no SSE transport: such servers are left out (see mcpWarnings).
func codexMCPArgs(servers []mcpconfig.Server) []string {
	var a []string
	set := func(name, key, value string) {
		a = append(a, "-c", "mcp_servers."+name+"."+key+"="+value)
	}
	for _, srv := range servers {
		switch srv.Type {
		case mcpconfig.TypeStdio:
			set(srv.Name, "command", tomlString(srv.Command))
			if len(srv.Args) > 0 {
				set(srv.Name, "args", tomlStrings(srv.Args))
			}
			if len(srv.Env) > 0 {
				set(srv.Name, "env_vars", tomlStrings(sortedKeys(srv.EnvRefs())))
			}
		case mcpconfig.TypeHTTP:
			set(srv.Name, "url", tomlString(srv.URL))
			var headers []string
			for _, h := range sortedKeys(srv.Headers) {
				ref, bearer := srv.HeaderRef(h)
				if bearer && strings.EqualFold(h, "Authorization") {
					set(srv.Name, "bearer_token_env_var", tomlString(ref))
					continue
				}
				if bearer {
					continue // codex cannot prefix "Bearer " to another header (warned)
				}
				headers = append(headers, tomlString(h)+" = "+tomlString(ref))
			}
			if len(headers) > 0 {
				set(srv.Name, "env_http_headers", "{ "+strings.Join(headers, ", ")+" }")
			}
		}
	}
	return a
}

// tomlString is a TOML basic string; JSON's string escapes are all valid TOML escapes.
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (codexBackend) stdin(_ *Spec, in turnInput) string { return in.prompt }
func (codexBackend) newDecoder(s *Spec, in turnInput) decoder {
	return &codexDecoder{sandbox: codexSandbox(s), resumed: in.resume != ""}
}

// stderrEvents finds what codex tells only on stderr: a patch its sandbox refused
// ("ERROR codex_core::tools::router: error=patch rejected: writing is blocked by read-only
// sandbox; rejected by user approval settings").
func (codexBackend) stderrEvents(s *Spec, line string) []Event {
	_, msg, ok := strings.Cut(line, "patch rejected: ")
	if !ok {
		return nil
	}
	return []Event{codexDenial(codexSandbox(s), "apply_patch", "", "", "patch rejected: "+msg).event()}
}

// codexDenial is a write codex's sandbox refused.
func codexDenial(sandbox, tool, path, command, msg string) denial {
	d := denial{cli: "codex", tool: tool, path: path, command: command, message: msg, mode: "sandbox " + sandbox,
		field: "runtime.codexSandbox", fix: "workspace-write"}
	if sandbox != "read-only" { // workspace-write refuses only what is outside the working folder
		d.outside, d.fix = true, "danger-full-access"
	}
	return d
}

// erofsPath finds the file in a shell's "…: hello.txt: Read-only file system", the error a
// command gets from codex's sandbox when it writes where it may not.
var erofsPath = regexp.MustCompile(`([^\s:]+): Read-only file system`)

func (codexBackend) followUp(o, a, s string) turnInput {
	return cliFollowUp(o, a, s)
}

type codexDecoder struct {
	sandbox   string // the --sandbox in force
	resumed   bool   // the turn resumes a thread: its usage is the thread's running total
	thread    string
	completed bool
	failedMsg string
	lastError string
	out       turnOutcome
}

type codexItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	Text             string `json:"text"`
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	Status           string `json:"status"`
	Changes          []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Query     string          `json:"query"`
	Message   string          `json:"message"`
	Items     []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"`
}

type codexLine struct {
	Type     string    `json:"type"`
	ThreadID string    `json:"thread_id"`
	Item     codexItem `json:"item"`
	Usage    struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
	} `json:"usage"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

func (d *codexDecoder) line(l []byte) []Event {
	var m codexLine
	if evs, ok := decodeLine("codex", l, &m); !ok {
		return evs
	}
	switch m.Type {
	case "thread.started":
		d.thread = m.ThreadID
		return []Event{{Kind: EventSession, SessionID: m.ThreadID}}
	case "turn.completed":
		d.completed = true
		u := codexTurnUsage(d.thread, d.resumed, Usage{InputTokens: m.Usage.InputTokens, CachedInputTokens: m.Usage.CachedInputTokens,
			CacheCreationTokens: m.Usage.CacheWriteInputTokens, OutputTokens: m.Usage.OutputTokens})
		d.out.usage.add(u)
		return []Event{{Kind: EventUsage, Usage: &u}}
	case "turn.failed":
		d.failedMsg = m.Error.Message
		if d.failedMsg == "" {
			d.failedMsg = "turn failed"
		}
		return []Event{{Kind: EventWarning, Reason: "codex turn.failed: " + firstLine(d.failedMsg)}}
	case "error":
		d.lastError = m.Message
		return []Event{{Kind: EventWarning, Reason: "codex error: " + firstLine(m.Message)}}
	case "item.started", "item.updated", "item.completed":
		if evs := d.item(m.Type, &m.Item); len(evs) > 0 {
			return evs
		}
		return rawEvent(m.Type+"/"+m.Item.Type, l)
	}
	return rawEvent(m.Type, l)
}

func (d *codexDecoder) item(phase string, it *codexItem) []Event {
	done := phase == "item.completed"
	switch it.Type {
	case "agent_message":
		if !done {
			return nil
		}
		d.out.reply = it.Text
		return []Event{{Kind: EventText, Text: it.Text}}
	case "command_execution":
		if phase == "item.started" {
			return []Event{{Kind: EventToolUse, Tool: "command_execution", ToolID: it.ID, Input: map[string]any{"command": it.Command}}}
		}
		if done {
			failed := it.Status == "failed" || (it.ExitCode != nil && *it.ExitCode != 0)
			evs := []Event{{Kind: EventToolResult, Tool: "command_execution", ToolID: it.ID, Text: it.AggregatedOutput, IsError: failed}}
			if m := erofsPath.FindStringSubmatch(it.AggregatedOutput); failed && m != nil {
				evs = append(evs, codexDenial(d.sandbox, "exec_command", m[1], it.Command, firstLine(m[0])).event())
			}
			return evs
		}
	case "file_change":
		if !done {
			return nil
		}
		ch := make([]any, 0, len(it.Changes))
		for _, c := range it.Changes {
			ch = append(ch, map[string]any{"path": c.Path, "kind": c.Kind})
		}
		return []Event{
			{Kind: EventToolUse, Tool: "file_change", ToolID: it.ID, Input: map[string]any{"changes": ch}},
			{Kind: EventToolResult, Tool: "file_change", ToolID: it.ID, Text: it.Status, IsError: it.Status == "failed"},
		}
	case "mcp_tool_call":
		if phase == "item.started" {
			var args any
			_ = json.Unmarshal(it.Arguments, &args)
			return []Event{{Kind: EventToolUse, Tool: it.Server + "." + it.Tool, ToolID: it.ID, Input: map[string]any{"arguments": args}}}
		}
		if done {
			return []Event{{Kind: EventToolResult, Tool: it.Server + "." + it.Tool, ToolID: it.ID, Text: it.Status, IsError: it.Status == "failed"}}
		}
	case "web_search":
		if done {
			return []Event{{Kind: EventToolUse, Tool: "web_search", ToolID: it.ID, Input: map[string]any{"query": it.Query}}}
		}
	case "todo_list":
		if done {
			var items []any
			for _, t := range it.Items {
				items = append(items, map[string]any{"text": t.Text, "completed": t.Completed})
			}
			return []Event{{Kind: EventToolUse, Tool: "todo_list", ToolID: it.ID, Input: map[string]any{"items": items}}}
		}
	case "error":
		if done {
			return []Event{{Kind: EventWarning, Reason: "codex item error: " + firstLine(it.Message)}}
		}
	}
	// reasoning and unknown item types are not agent output (the caller keeps them raw).
	return nil
}

func (d *codexDecoder) end(code int) turnOutcome {
	d.out.sessionID = d.thread
	switch {
	case d.failedMsg != "":
		d.out.failed, d.out.reason = true, "codex turn failed: "+firstLine(d.failedMsg)
	case !d.completed && d.lastError != "":
		d.out.failed, d.out.reason = true, "codex error: "+firstLine(d.lastError)
	case !d.completed:
		d.out.failed, d.out.reason = true, fmt.Sprintf("codex exited with code %d without turn.completed", code)
	case code != 0:
		d.out.failed, d.out.reason = true, fmt.Sprintf("codex exited with code %d", code)
	}
	return d.out
}

// codexTotals remembers, per Codex thread, the usage its last turn.completed reported: codex
// exec reports the thread's running total, so a resumed thread's turn (an answer, a manager's
// second round) would count every earlier turn again. Per turn is that total less the last
// one seen. A thread resumed after the sidecar restarted counts its earlier turns once more.
var codexTotals struct {
	sync.Mutex
	m map[string]Usage
}

// maxCodexThreads bounds codexTotals (a long-lived sidecar runs many threads).
const maxCodexThreads = 4096

func codexTurnUsage(thread string, resumed bool, total Usage) Usage {
	if thread == "" {
		return total
	}
	codexTotals.Lock()
	defer codexTotals.Unlock()
	prev, seen := codexTotals.m[thread]
	if codexTotals.m == nil || len(codexTotals.m) >= maxCodexThreads && !seen {
		codexTotals.m = map[string]Usage{}
	}
	codexTotals.m[thread] = total
	if !resumed || !seen || total.InputTokens < prev.InputTokens || total.OutputTokens < prev.OutputTokens ||
		total.CachedInputTokens < prev.CachedInputTokens || total.CacheCreationTokens < prev.CacheCreationTokens {
		return total // a new thread, one not seen yet, or a count that is no running total
	}
	return Usage{
		InputTokens:         total.InputTokens - prev.InputTokens,
		CachedInputTokens:   total.CachedInputTokens - prev.CachedInputTokens,
		CacheCreationTokens: total.CacheCreationTokens - prev.CacheCreationTokens,
		OutputTokens:        total.OutputTokens - prev.OutputTokens,
	}
}
