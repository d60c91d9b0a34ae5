package server

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/lsppos"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

// documents are the open text documents. Changes to one document are applied under its
// lock, in wire order (notification handlers run on the read loop); diagnostics are
// computed off the loop after a debounce and published only if the document is still at
// the version they were computed for, so a newer version always wins.
type documents struct {
	s    *Server
	mu   sync.Mutex
	open map[string]*document // by the URI's canonical form (docKey)
}

type document struct {
	uri    string // canonical, as go.lsp.dev/protocol decodes a URI
	path   string
	isFlow bool

	mu        sync.Mutex
	version   int32
	text      []byte
	closed    bool
	timer     *time.Timer
	analysis  *analysis // for the current version, when computed
	published int32     // the version last published
}

// analysis is the flow, its diagnostics and a position mapper for one document version
// under one generation of the settings (the allowed and blocked folders are validated).
type analysis struct {
	version int32
	gen     int
	text    []byte
	flow    *flow.Flow
	diags   []diag.Diagnostic
	mapper  *lsppos.Mapper
}

func newDocuments(s *Server) *documents {
	return &documents{s: s, open: map[string]*document{}}
}

// isFlowPath says whether a file is a flow: a .yaml file in a "flows" folder
// (.agentcanvas/flows/*.yaml or flows/*.yaml).
func isFlowPath(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	return (ext == ".yaml" || ext == ".yml") && filepath.Base(filepath.Dir(p)) == "flows"
}

func (ds *documents) get(uri string) *document {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.open[docKey(uri)]
}

// docKey is a document URI's canonical form (vscode-uri's, which go.lsp.dev/protocol gives
// every URI it decodes), so that an agentcanvas/* request naming a document as the client
// spelled it (file:///a+b/…) finds the document its didOpen opened (file:///a%2Bb/…).
func docKey(s string) string {
	if u, err := uri.Parse(s); err == nil {
		return string(u)
	}
	return s
}

func (ds *documents) stop() {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for _, d := range ds.open {
		d.mu.Lock()
		d.closed = true
		if d.timer != nil {
			d.timer.Stop()
		}
		d.mu.Unlock()
	}
}

// snapshot returns the document's current version and text.
func (d *document) snapshot() (int32, []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.version, d.text
}

// analyze parses and validates text with the current settings.
func (s *Server) analyze(path string, version int32, text []byte) *analysis {
	f := flow.Parse(path, text)
	s.settingsMu.Lock()
	gen, rules := s.settings.gen, s.settings.limits.Rules
	s.settingsMu.Unlock()
	ds := validate.Flow(f, validate.Workspace{Root: s.workspaceRoot(), Rules: rules})
	return &analysis{version: version, gen: gen, text: text, flow: f, diags: ds, mapper: lsppos.FromIndex(f.Index)}
}

// fresh: a is the analysis of version under the current settings.
func (s *Server) fresh(a *analysis, version int32) bool {
	return a != nil && a.version == version && a.gen == s.settingsGen()
}

// revalidate publishes every open flow's diagnostics again (the settings changed).
func (ds *documents) revalidate() {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	for _, d := range ds.open {
		d.mu.Lock()
		ds.s.scheduleDiagnostics(d)
		d.mu.Unlock()
	}
}

// current returns the analysis of the document's current version, computing it if needed.
func (s *Server) current(d *document) *analysis {
	d.mu.Lock()
	if a := d.analysis; s.fresh(a, d.version) {
		d.mu.Unlock()
		return a
	}
	version, text := d.version, d.text
	d.mu.Unlock()
	a := s.analyze(d.path, version, text)
	d.mu.Lock()
	if d.version == version {
		d.analysis = a
	}
	d.mu.Unlock()
	return a
}

// schedule (re)starts the diagnostics debounce for the document's current version.
// The caller holds d.mu.
func (s *Server) scheduleDiagnostics(d *document) {
	if !d.isFlow || d.closed {
		return
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	version := d.version
	d.timer = time.AfterFunc(s.opts.DiagnosticsDelay, func() { s.publishDiagnostics(d, version) })
}

// publishDiagnostics computes and publishes diagnostics for version, unless the document
// has moved on (the newer version has its own timer).
func (s *Server) publishDiagnostics(d *document, version int32) {
	d.mu.Lock()
	if d.closed || d.version != version {
		d.mu.Unlock()
		return
	}
	text := d.text
	a := d.analysis
	d.mu.Unlock()
	if !s.fresh(a, version) {
		a = s.analyze(d.path, version, text)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.version != version {
		return
	}
	d.analysis = a
	d.published = version
	// Sent under the lock so two publications for one document cannot overtake each other.
	s.notify("textDocument/publishDiagnostics", &protocol.PublishDiagnosticsParams{
		URI: uri.URI(d.uri), Version: protocol.NewOptional(version), Diagnostics: s.lspDiagnostics(a, a.diags),
	})
}

// diagData is a diagnostic's data: the model path (for the canvas) and the title of its
// quick fix, if it has one.
type diagData struct {
	Path string `json:"path,omitempty"`
	Fix  string `json:"fix,omitempty"` // the quick fix's title
}

// diagnostics are LSP diagnostics in an agentcanvas/* result, which encoding/json writes:
// they are written with go.lsp.dev/protocol's codec, as in publishDiagnostics.
type diagnostics []protocol.Diagnostic

func (ds diagnostics) MarshalJSON() ([]byte, error) {
	return protocol.Marshal([]protocol.Diagnostic(ds))
}

func severity(s diag.Severity) protocol.DiagnosticSeverity {
	switch s {
	case diag.Error:
		return protocol.DiagnosticSeverityError
	case diag.Warning:
		return protocol.DiagnosticSeverityWarning
	case diag.Info:
		return protocol.DiagnosticSeverityInformation
	}
	return protocol.DiagnosticSeverityHint
}

func (s *Server) lspDiagnostics(a *analysis, ds []diag.Diagnostic) diagnostics {
	out := make(diagnostics, 0, len(ds))
	for _, d := range ds {
		ld := protocol.Diagnostic{
			Range: a.mapper.Range(d.Range), Severity: severity(d.Severity),
			Source: protocol.NewOptional("agentcanvas"), Message: protocol.String(d.Message),
		}
		if d.Code != "" {
			ld.Code = protocol.String(d.Code)
		}
		if d.Path != "" || d.Fix != nil {
			data := diagData{Path: d.Path}
			if d.Fix != nil {
				data.Fix = d.Fix.Title
			}
			ld.Data, _ = json.Marshal(data) // two strings: cannot fail
		}
		out = append(out, ld)
	}
	return out
}
