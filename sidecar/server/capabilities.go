package server

import (
	"encoding/json"

	"go.lsp.dev/protocol"
)

// agentCanvasCapabilities are the server's experimental capabilities: the custom methods
// it registers and the services in this build.
type agentCanvasCapabilities struct {
	AgentCanvas struct {
		Methods   []string `json:"methods"`
		Available []string `json:"available"`
	} `json:"agentcanvas"`
}

// capabilities are honest: only what the server implements is advertised.
func (s *Server) capabilities() (protocol.ServerCapabilities, error) {
	var exp agentCanvasCapabilities
	exp.AgentCanvas.Methods = customMethods()
	exp.AgentCanvas.Available = s.svc.available()
	raw, err := json.Marshal(exp)
	if err != nil {
		return protocol.ServerCapabilities{}, bugf("experimental capabilities: %v", err)
	}
	incremental := protocol.TextDocumentSyncKindIncremental
	return protocol.ServerCapabilities{
		PositionEncoding: protocol.PositionEncodingKindUTF16,
		TextDocumentSync: &protocol.TextDocumentSyncOptions{
			OpenClose: ptr(true), Change: &incremental,
			Save: &protocol.SaveOptions{IncludeText: ptr(false)},
		},
		HoverProvider:      protocol.Boolean(true),
		CompletionProvider: &protocol.CompletionOptions{TriggerCharacters: []string{":", " ", "-"}},
		CodeActionProvider: &protocol.CodeActionOptions{CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix}},
		Experimental:       raw,
	}, nil
}

func ptr[T any](v T) *T { return &v }
