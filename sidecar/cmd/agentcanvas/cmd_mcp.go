package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// P20, the protocol bridge: `agentcanvas mcp FLOW` serves a flow as one MCP tool over stdio
// (newline-delimited JSON-RPC 2.0, the MCP stdio transport), so other agent tools can call
// a whole flow: tools/call runs it and returns its outcome.
func init() {
	register(&command{name: "mcp", summary: "serve a flow as an MCP tool over stdio (P20, protocol bridge)", run: mcpServe})
}

const mcpProtocolVersion = "2025-06-18"

func mcpServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCmdFlags("mcp", `usage: agentcanvas mcp [--workspace W] [--dry-run] FLOW
Serves FLOW as one MCP tool over stdio (newline-delimited JSON-RPC 2.0): tools/call runs the
flow and returns its outcome.
Exit status: 0 when the client closes stdin, 2 usage.`, stdout, stderr)
	workspace := fs.String("workspace", "", "the workspace root `DIR` (default: found from the flow's location)")
	dryRun := fs.Bool("dry-run", false, "run every agent with the built-in dry-run backend")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return fs.usageError("one FLOW is needed, got %d arguments", fs.NArg())
	}
	file := fs.Arg(0)
	src, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "agentcanvas mcp: %v\n", err)
		return exitUsage
	}
	ws := *workspace
	if ws == "" {
		ws = workspaceOf(file)
	}
	ws, _ = filepath.Abs(ws)
	f := flow.Parse(file, src)
	s := &mcpServer{file: file, flow: f, ws: ws, dryRun: *dryRun, out: json.NewEncoder(stdout), log: stderr}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		s.handle([]byte(line))
	}
	return exitOK
}

type mcpServer struct {
	file   string
	flow   *flow.Flow
	ws     string
	dryRun bool
	out    *json.Encoder
	log    io.Writer
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *mcpServer) reply(id json.RawMessage, result any, rerr *rpcError) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		msg["error"] = rerr
	} else {
		msg["result"] = result
	}
	if err := s.out.Encode(msg); err != nil {
		fmt.Fprintf(s.log, "agentcanvas mcp: %v\n", err)
	}
}

func (s *mcpServer) toolName() string { return toolName(s.flow.Title, s.flow.Name) }

func (s *mcpServer) handle(line []byte) {
	var m rpcMsg
	if err := json.Unmarshal(line, &m); err != nil {
		s.reply(json.RawMessage("null"), nil, &rpcError{Code: -32700, Message: "parse error: " + err.Error()})
		return
	}
	if m.ID == nil { // a notification (notifications/initialized, cancelled…): nothing to say
		return
	}
	switch m.Method {
	case "initialize":
		s.reply(m.ID, map[string]any{
			"protocolVersion": mcpProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo":      map[string]any{"name": "agentcanvas", "version": version},
			"instructions":    fmt.Sprintf("Call %s to run the AgentCanvas flow %q end to end.", s.toolName(), s.flow.Name),
		}, nil)
	case "ping":
		s.reply(m.ID, map[string]any{}, nil)
	case "tools/list":
		desc := firstNonEmptyStr(s.flow.Description, s.flow.Title, "Run the AgentCanvas flow "+s.flow.Name)
		s.reply(m.ID, map[string]any{"tools": []any{map[string]any{
			"name":        s.toolName(),
			"description": desc + fmt.Sprintf(" (%d agents, %d interactions). Returns the run's outcome: status, each interaction's termination reason and result, and proposals waiting for review.", len(s.flow.Agents)+len(s.flow.SystemNodes), len(s.flow.Interactions)),
			"inputSchema": toolInputSchema,
		}}}, nil)
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			s.reply(m.ID, nil, &rpcError{Code: -32602, Message: "invalid params: " + err.Error()})
			return
		}
		if p.Name != s.toolName() {
			s.reply(m.ID, nil, &rpcError{Code: -32602, Message: fmt.Sprintf("unknown tool %q; this server has %s", p.Name, s.toolName())})
			return
		}
		var args map[string]any
		if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
			if err := json.Unmarshal(p.Arguments, &args); err != nil {
				s.reply(m.ID, nil, &rpcError{Code: -32602, Message: "invalid params: arguments must be an object"})
				return
			}
		}
		// The advertised schema is the contract: a call it forbids runs nothing.
		if problem := checkArguments(toolInputSchema, args); problem != "" {
			s.reply(m.ID, nil, &rpcError{Code: -32602, Message: "invalid arguments for " + s.toolName() + ": " + problem})
			return
		}
		task, _ := args["task"].(string)
		out, err := engine.Run(context.Background(), s.flow, engine.Options{Workspace: s.ws, DryRun: s.dryRun, Task: task, Human: engine.NonInteractive{}})
		if err != nil {
			s.reply(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": err.Error()}}, "isError": true}, nil)
			return
		}
		body, _ := json.MarshalIndent(out, "", "  ")
		s.reply(m.ID, map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": string(body)}},
			"structuredContent": out,
			"isError":           out.Status != engine.StatusCompleted,
		}, nil)
	default:
		s.reply(m.ID, nil, &rpcError{Code: -32601, Message: "method not found: " + m.Method})
	}
}
