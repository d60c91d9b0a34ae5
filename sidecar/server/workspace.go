package server

import (
	"context"
	"encoding/json"
)

func init() {
	// Inline (not async): a request sent after the change is handled with the new settings.
	register("workspace/didChangeConfiguration", method{handle: (*Server).didChangeConfiguration})
	// The sidecar watches its files itself (watch.go: flowChanged, proposalChanged), so a
	// client's file events would only repeat what it already reported; taken and dropped.
	register("workspace/didChangeWatchedFiles", method{handle: func(*Server, context.Context, json.RawMessage) (any, error) { return nil, nil }})
}

// didChangeConfiguration takes the agentcanvas section of the settings: vscode-languageclient
// (synchronize.configurationSection "agentcanvas") sends {settings: {agentcanvas: {…every
// key…}}} once after initialized and again on every change. Settings of other sections, and
// a null settings (a client that expects workspace/configuration pulls), change nothing.
func (s *Server) didChangeConfiguration(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Settings struct {
			AgentCanvas *settingsParams `json:"agentcanvas"`
		} `json:"settings"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Settings.AgentCanvas == nil {
		return nil, nil
	}
	if s.applySettings(*p.Settings.AgentCanvas, "workspace/didChangeConfiguration") {
		s.docs.revalidate()
	}
	return nil, nil
}
