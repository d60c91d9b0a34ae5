package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/agentcanvas/agentcanvas/sidecar/lsppos"
)

func init() {
	register("textDocument/didOpen", method{handle: lspNotification((*Server).didOpen)})
	register("textDocument/didChange", method{handle: func(s *Server, ctx context.Context, params json.RawMessage) (any, error) {
		p, err := decodeDidChange(params)
		if err != nil && p != nil && s.docs.get(string(p.TextDocument.URI)) != nil {
			// The client applied a change the server could not read: their texts now differ.
			s.status.set(s, healthWarning, docOutOfSync+string(p.TextDocument.URI))
		}
		if err != nil {
			return nil, err
		}
		return nil, s.didChange(ctx, p)
	}})
	register("textDocument/didSave", method{handle: lspNotification((*Server).didSave)})
	register("textDocument/didClose", method{handle: lspNotification((*Server).didClose)})
}

func (s *Server) didOpen(ctx context.Context, p *protocol.DidOpenTextDocumentParams) error {
	// Cloned: protocol's decoded strings share one copy of the message, text and all, which
	// the document would otherwise keep alive as long as it is open.
	uri := strings.Clone(string(p.TextDocument.URI))
	path, err := uriPath(uri)
	if err != nil {
		return err
	}
	d := &document{
		uri: uri, path: path, isFlow: isFlowPath(path),
		version: p.TextDocument.Version, text: []byte(p.TextDocument.Text),
	}
	s.docs.mu.Lock()
	if old := s.docs.open[d.uri]; old != nil {
		old.mu.Lock()
		old.closed = true
		if old.timer != nil {
			old.timer.Stop()
		}
		old.mu.Unlock()
	}
	s.docs.open[d.uri] = d
	s.docs.mu.Unlock()
	// Reopening a document that went out of sync repairs it.
	s.status.clear(s, docOutOfSync+d.uri)
	d.mu.Lock()
	s.scheduleDiagnostics(d)
	d.mu.Unlock()
	return nil
}

// decodeDidChange reads didChange's params into protocol's type, its content changes strictly.
// go.lsp.dev/protocol v1.0.1 decides a content change's kind by trying the range form and then
// the whole-text form, so a change whose range is malformed silently replaces the whole
// document, and one whose range is null (as a Go client with a *Range field writes a whole-text
// change) inserts its text at the start. Here a malformed range is refused, naming the change,
// and a null or absent range replaces the document. On that refusal p still names the document.
func decodeDidChange(params json.RawMessage) (*protocol.DidChangeTextDocumentParams, error) {
	var p protocol.DidChangeTextDocumentParams
	if err := decodeLSP(params, &p); err != nil {
		return nil, err
	}
	var raw struct {
		ContentChanges []struct {
			Range json.RawMessage `json:"range"`
			Text  string          `json:"text"`
		} `json:"contentChanges"`
	}
	if err := decode(params, &raw); err != nil {
		return nil, err
	}
	p.ContentChanges = make([]protocol.TextDocumentContentChangeEvent, len(raw.ContentChanges))
	for i, c := range raw.ContentChanges {
		if len(c.Range) == 0 || string(c.Range) == "null" {
			p.ContentChanges[i] = &protocol.TextDocumentContentChangeWholeDocument{Text: c.Text}
			continue
		}
		var r protocol.Range
		if err := protocol.Unmarshal(c.Range, &r); err != nil {
			field := fmt.Sprintf("/contentChanges/%d/range", i)
			return &p, badParams("%s%s: %v", field, fieldAt(c.Range, err), err)
		}
		p.ContentChanges[i] = &protocol.TextDocumentContentChangePartial{Range: r, Text: c.Text}
	}
	return &p, nil
}

const docOutOfSync = "a document change could not be applied, so the server's copy is out of date; reopen "

func (s *Server) didChange(ctx context.Context, p *protocol.DidChangeTextDocumentParams) error {
	d := s.docs.get(string(p.TextDocument.URI))
	if d == nil {
		return badParams("didChange for %s, which is not open", p.TextDocument.URI)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.TextDocument.Version <= d.version {
		// Out-of-order or repeated versions would corrupt the text: keep the newer one.
		return badParams("didChange for %s: version %d is not newer than %d; change ignored", d.uri, p.TextDocument.Version, d.version)
	}
	text, err := lsppos.ApplyChanges(d.text, p.ContentChanges)
	if err != nil {
		// The client and server now disagree about the text; say so loudly.
		s.status.set(s, healthWarning, docOutOfSync+d.uri)
		return badParams("didChange for %s version %d: %v", d.uri, p.TextDocument.Version, err)
	}
	d.text = text
	d.version = p.TextDocument.Version
	d.analysis = nil
	s.scheduleDiagnostics(d)
	return nil
}

func (s *Server) didSave(ctx context.Context, p *protocol.DidSaveTextDocumentParams) error {
	d := s.docs.get(string(p.TextDocument.URI))
	if d == nil {
		return nil
	}
	// Workspace rules look at the disk, which just changed: validate again.
	d.mu.Lock()
	d.analysis = nil
	s.scheduleDiagnostics(d)
	d.mu.Unlock()
	return nil
}

func (s *Server) didClose(ctx context.Context, p *protocol.DidCloseTextDocumentParams) error {
	uri := string(p.TextDocument.URI)
	s.docs.mu.Lock()
	d := s.docs.open[uri]
	delete(s.docs.open, uri)
	s.docs.mu.Unlock()
	if d == nil {
		return nil
	}
	d.mu.Lock()
	d.closed = true
	if d.timer != nil {
		d.timer.Stop()
	}
	isFlow := d.isFlow
	d.mu.Unlock()
	if isFlow {
		// Clear the problems of a closed file (LSP leaves that to the server).
		s.notify("textDocument/publishDiagnostics", &protocol.PublishDiagnosticsParams{URI: p.TextDocument.URI, Diagnostics: []protocol.Diagnostic{}})
	}
	return nil
}
