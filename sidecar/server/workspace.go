package server

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"
)

func init() {
	// Inline (not async): a request sent after the change is handled with the new settings.
	register("workspace/didChangeConfiguration", method{handle: lspNotification((*Server).didChangeConfiguration)})
	// The sidecar watches its files itself (watch.go: flowChanged, proposalChanged), so a
	// client's file events would only repeat what it already reported; taken and dropped.
	register("workspace/didChangeWatchedFiles", method{handle: func(*Server, context.Context, json.RawMessage) (any, error) { return nil, nil }})
}

// didChangeConfiguration takes the agentcanvas section of the settings: vscode-languageclient
// (synchronize.configurationSection "agentcanvas") sends {settings: {agentcanvas: {…every
// key…}}} once after initialized and again on every change. Settings of other sections, and
// a null settings (a client that expects workspace/configuration pulls), change nothing.
func (s *Server) didChangeConfiguration(ctx context.Context, p *protocol.DidChangeConfigurationParams) error {
	// The settings are LSPAny: the agentcanvas section is the server's own.
	var settings struct {
		AgentCanvas *settingsParams `json:"agentcanvas"`
	}
	if len(p.Settings) > 0 {
		if err := decode(json.RawMessage(p.Settings), &settings); err != nil {
			return err
		}
	}
	if settings.AgentCanvas == nil {
		return nil
	}
	if s.applySettings(*settings.AgentCanvas, "workspace/didChangeConfiguration") {
		s.docs.revalidate()
	}
	return nil
}
