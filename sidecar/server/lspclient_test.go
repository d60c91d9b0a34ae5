package server

import (
	"go.lsp.dev/protocol"
)

// The server's LSP messages as a plain JSON client reads them (encoding/json, the fields the
// extension uses): the tests' oracle for the wire, independent of the go.lsp.dev/protocol
// types the server writes them with. TestProtocolClient decodes the same messages with
// protocol's types, as a Go client would.

type clientPublishDiagnostics struct {
	URI         string             `json:"uri"`
	Version     *int32             `json:"version,omitempty"`
	Diagnostics []clientDiagnostic `json:"diagnostics"`
}

type clientDiagnostic struct {
	Range    protocol.Range `json:"range"`
	Severity int            `json:"severity"`
	Code     string         `json:"code,omitempty"`
	Source   string         `json:"source"`
	Message  string         `json:"message"`
	Data     *diagData      `json:"data,omitempty"`
}

type clientHover struct {
	Contents struct {
		Kind  string `json:"kind"`
		Value string `json:"value"`
	} `json:"contents"`
	Range protocol.Range `json:"range"`
}

type clientCompletionList struct {
	IsIncomplete bool `json:"isIncomplete"`
	Items        []struct {
		Label         string `json:"label"`
		Kind          int    `json:"kind"`
		Detail        string `json:"detail,omitempty"`
		Documentation string `json:"documentation,omitempty"`
		InsertText    string `json:"insertText,omitempty"`
	} `json:"items"`
}

type clientCodeAction struct {
	Title       string             `json:"title"`
	Kind        string             `json:"kind"`
	Diagnostics []clientDiagnostic `json:"diagnostics"`
	IsPreferred bool               `json:"isPreferred"`
	Edit        struct {
		DocumentChanges []struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int32  `json:"version"`
			} `json:"textDocument"`
			Edits []protocol.TextEdit `json:"edits"`
		} `json:"documentChanges"`
	} `json:"edit"`
}

// rangeChange is a didChange content change of r.
func rangeChange(r protocol.Range, text string) protocol.TextDocumentContentChangeEvent {
	return &protocol.TextDocumentContentChangePartial{Range: r, Text: text}
}

// pos is an LSP position.
func pos(line, char uint32) protocol.Position { return protocol.Position{Line: line, Character: char} }

// clientValidateFlow is agentcanvas/validateFlow's result as the client reads it.
type clientValidateFlow struct {
	URI         string             `json:"uri"`
	Version     *int32             `json:"version"`
	Diagnostics []clientDiagnostic `json:"diagnostics"`
	Problems    []problem          `json:"problems"`
}
