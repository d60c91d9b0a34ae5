package server

import (
	"context"
	"encoding/json"

	"github.com/agentcanvas/agentcanvas/sidecar/lsppos"
)

func init() {
	register("textDocument/didOpen", method{handle: (*Server).didOpen})
	register("textDocument/didChange", method{handle: (*Server).didChange})
	register("textDocument/didSave", method{handle: (*Server).didSave})
	register("textDocument/didClose", method{handle: (*Server).didClose})
}

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type versionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

func (s *Server) didOpen(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		TextDocument struct {
			URI        string `json:"uri"`
			LanguageID string `json:"languageId"`
			Version    int32  `json:"version"`
			Text       string `json:"text"`
		} `json:"textDocument"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	path, err := uriPath(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	d := &document{
		uri: p.TextDocument.URI, path: path, isFlow: isFlowPath(path),
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
	return nil, nil
}

const docOutOfSync = "a document change could not be applied, so the server's copy is out of date; reopen "

func (s *Server) didChange(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		TextDocument   versionedTextDocumentIdentifier `json:"textDocument"`
		ContentChanges []lsppos.Change                 `json:"contentChanges"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	d := s.docs.get(p.TextDocument.URI)
	if d == nil {
		return nil, badParams("didChange for %s, which is not open", p.TextDocument.URI)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.TextDocument.Version <= d.version {
		// Out-of-order or repeated versions would corrupt the text: keep the newer one.
		return nil, badParams("didChange for %s: version %d is not newer than %d; change ignored", d.uri, p.TextDocument.Version, d.version)
	}
	text, err := lsppos.ApplyChanges(d.text, p.ContentChanges)
	if err != nil {
		// The client and server now disagree about the text; say so loudly.
		s.status.set(s, healthWarning, docOutOfSync+d.uri)
		return nil, badParams("didChange for %s version %d: %v", d.uri, p.TextDocument.Version, err)
	}
	d.text = text
	d.version = p.TextDocument.Version
	d.analysis = nil
	s.scheduleDiagnostics(d)
	return nil, nil
}

func (s *Server) didSave(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		TextDocument textDocumentIdentifier `json:"textDocument"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	d := s.docs.get(p.TextDocument.URI)
	if d == nil {
		return nil, nil
	}
	// Workspace rules look at the disk, which just changed: validate again.
	d.mu.Lock()
	d.analysis = nil
	s.scheduleDiagnostics(d)
	d.mu.Unlock()
	return nil, nil
}

func (s *Server) didClose(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		TextDocument textDocumentIdentifier `json:"textDocument"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s.docs.mu.Lock()
	d := s.docs.open[p.TextDocument.URI]
	delete(s.docs.open, p.TextDocument.URI)
	s.docs.mu.Unlock()
	if d == nil {
		return nil, nil
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
		s.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: p.TextDocument.URI, Diagnostics: []lspDiagnostic{}})
	}
	return nil, nil
}
