package runtime

import (
	"fmt"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/mcpconfig"
)

// mcpNames is the servers' names, comma-separated.
func mcpNames(servers []mcpconfig.Server) string {
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name
	}
	return strings.Join(names, ",")
}

// mcpWarnings says where a backend cannot give an agent its MCP servers as defined, so
// nothing is dropped silently (reported as warning events when the agent starts).
func mcpWarnings(backendID string, servers []mcpconfig.Server) []string {
	var w []string
	switch backendID {
	case BackendCodex:
		for _, s := range servers {
			if s.Type == mcpconfig.TypeSSE {
				w = append(w, fmt.Sprintf("MCP server %q skipped: codex has no SSE transport (use a streamable HTTP url with \"type\": \"http\")", s.Name))
				continue
			}
			for _, h := range sortedKeys(s.Headers) {
				if _, bearer := s.HeaderRef(h); bearer && !strings.EqualFold(h, "Authorization") {
					w = append(w, fmt.Sprintf("MCP server %q: header %s left out: codex takes \"Bearer ${NAME}\" only for Authorization", s.Name, h))
				}
			}
		}
	case BackendGemini:
		if len(servers) > 0 {
			w = append(w, fmt.Sprintf("gemini agents get no per-agent MCP server definitions: gemini reads them from its own settings (.gemini/settings.json), not %s; --allowed-mcp-server-names limits it to %s", mcpconfig.ConfigFile, mcpNames(servers)))
		}
	}
	return w
}
