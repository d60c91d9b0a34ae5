package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"go.lsp.dev/protocol"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

func init() {
	register("agentcanvas/loadFlow", method{handle: (*Server).loadFlow, async: true})
	register("agentcanvas/validateFlow", method{handle: (*Server).validateFlow, async: true})
	register("agentcanvas/editFlow", method{handle: (*Server).editFlow})
}

// flowRef names a flow: by URI, optionally at a document version, or with its text.
type flowRef struct {
	URI     string `json:"uri"`
	Version *int32 `json:"version,omitempty"`
	// Text, when given, is the flow's text as the client has it: used as is (no version
	// check), for clients that do not sync the document.
	Text *string `json:"text,omitempty"`
}

// flowAt returns the analysis of a flow: the open document's (refusing a version that is
// not the current one), else the file on disk, read through os.Root inside the workspace.
func (s *Server) flowAt(ref flowRef) (a *analysis, open bool, err error) {
	if ref.URI == "" {
		return nil, false, badParams("uri is required")
	}
	path, err := uriPath(ref.URI)
	if err != nil {
		return nil, false, err
	}
	if ref.Text != nil {
		if !isFlowPath(path) {
			return nil, false, badParams("%s is not a flow file (flows/*.yaml or .agentcanvas/flows/*.yaml)", ref.URI)
		}
		var v int32
		if ref.Version != nil {
			v = *ref.Version
		}
		return s.analyze(path, v, []byte(*ref.Text)), ref.Version != nil, nil
	}
	if d := s.docs.get(ref.URI); d != nil {
		if !d.isFlow {
			return nil, true, badParams("%s is not a flow file (flows/*.yaml or .agentcanvas/flows/*.yaml)", ref.URI)
		}
		a := s.current(d)
		if ref.Version != nil && *ref.Version != a.version {
			return nil, true, stale("%s is at version %d, not %d", ref.URI, a.version, *ref.Version)
		}
		return a, true, nil
	}
	if ref.Version != nil {
		return nil, false, stale("%s is not open, so it has no version %d", ref.URI, *ref.Version)
	}
	text, err := s.readWorkspaceFile(path)
	if err != nil {
		return nil, false, err
	}
	return s.analyze(path, 0, text), false, nil
}

// readWorkspaceFile reads a flow file inside the workspace through os.Root.
func (s *Server) readWorkspaceFile(path string) ([]byte, error) {
	root := s.workspaceRoot()
	if root == "" {
		return nil, fmt.Errorf("%s is not open and the session has no workspace folder to read it from", path)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, badParams("%s is outside the workspace %s", path, root)
	}
	clean, err := safepath.Clean(filepath.ToSlash(rel), safepath.Lexical)
	if err != nil {
		return nil, badParams("%s is outside the workspace %s: %v", path, root, err)
	}
	if !isFlowPath(clean) {
		return nil, badParams("%s is not a flow file (flows/*.yaml or .agentcanvas/flows/*.yaml)", clean)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(filepath.FromSlash(clean))
}

type loadFlowResult struct {
	URI         string                    `json:"uri"`
	Version     *int32                    `json:"version"` // null when read from disk
	Flow        json.RawMessage           `json:"flow"`
	Spans       map[string]protocol.Range `json:"spans"`
	Diagnostics diagnostics               `json:"diagnostics"`
}

func (s *Server) loadFlow(ctx context.Context, params json.RawMessage) (any, error) {
	var ref flowRef
	if err := decode(params, &ref); err != nil {
		return nil, err
	}
	a, open, err := s.flowAt(ref)
	if err != nil {
		return nil, err
	}
	// The model without its span map: spans are sent as LSP ranges instead.
	model := *a.flow
	model.Spans = nil
	raw, err := json.Marshal(&model)
	if err != nil {
		return nil, bugf("marshalling the flow model: %v", err)
	}
	r := loadFlowResult{URI: ref.URI, Flow: raw, Spans: make(map[string]protocol.Range, len(a.flow.Spans)),
		Diagnostics: s.lspDiagnostics(a, a.diags)}
	for p, sp := range a.flow.Spans {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.Spans[p] = a.mapper.Range(sp)
	}
	if open {
		v := a.version
		r.Version = &v
	}
	return r, nil
}

type validateFlowResult struct {
	URI         string      `json:"uri"`
	Version     *int32      `json:"version"`
	Diagnostics diagnostics `json:"diagnostics"`
	// The command line's 1-based form, for the canvas and for copying into reports.
	Problems []problem `json:"problems"`
}

type problem struct {
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	Severity  string `json:"severity"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Path      string `json:"path,omitempty"`
}

func (s *Server) validateFlow(ctx context.Context, params json.RawMessage) (any, error) {
	var ref flowRef
	if err := decode(params, &ref); err != nil {
		return nil, err
	}
	a, open, err := s.flowAt(ref)
	if err != nil {
		return nil, err
	}
	r := validateFlowResult{URI: ref.URI, Diagnostics: s.lspDiagnostics(a, a.diags), Problems: []problem{}}
	for _, d := range a.diags {
		r.Problems = append(r.Problems, problem{d.Range.Start.Line, d.Range.Start.Col, d.Range.End.Line, d.Range.End.Col,
			string(d.Severity), d.Code, d.Message, d.Path})
	}
	if open {
		v := a.version
		r.Version = &v
	}
	return r, nil
}

type editFlowResult struct {
	URI     string              `json:"uri"`
	Version *int32              `json:"version"`
	Edits   []protocol.TextEdit `json:"edits"`
}

// editFlow turns canvas operations into minimal text edits against the given version; the
// extension applies them as a WorkspaceEdit. It runs inline (not async) so it is ordered
// with didChange: the version check and the edit see the same text.
func (s *Server) editFlow(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		flowRef
		Ops json.RawMessage `json:"ops"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	var ops []flow.Op
	if len(p.Ops) == 0 || json.Unmarshal(p.Ops, &ops) != nil {
		return nil, badParams("ops must be an array of edit operations (docs/flow-edits.md)")
	}
	a, open, err := s.flowAt(p.flowRef)
	if err != nil {
		return nil, err
	}
	if ops, err = s.expandPatterns(ctx, a, ops); err != nil {
		return nil, err
	}
	edits, err := s.svc.EditFlow(a.text, a.flow.File, ops)
	if err != nil {
		return nil, badParams("%v", err)
	}
	r := editFlowResult{URI: p.URI, Edits: a.mapper.TextEdits(edits)}
	if open {
		v := a.version
		r.Version = &v
	}
	return r, nil
}

// expandPatterns replaces insertPattern operations by the operations that add the
// pattern's subgraph (the flow package cannot expand them: it knows no patterns).
func (s *Server) expandPatterns(ctx context.Context, a *analysis, ops []flow.Op) ([]flow.Op, error) {
	out := make([]flow.Op, 0, len(ops))
	existing := flowIDs(a.flow)
	for i, op := range ops {
		if op.Op != "insertPattern" {
			out = append(out, op)
			continue
		}
		if s.svc.ExpandPattern == nil {
			return nil, notAvailable("operation " + strconv.Itoa(i) + " (insertPattern) needs the pattern catalog (sidecar/pattern has not landed in this build)")
		}
		more, err := s.svc.ExpandPattern(ctx, op.PatternID, existing, op.Position, a.flow.Layout.Nodes)
		if err != nil {
			return nil, badParams("operation %d (insertPattern): %v", i, err)
		}
		existing = append(existing, opIDs(more)...)
		out = append(out, more...)
	}
	return out, nil
}

// opIDs lists the ids the add operations of an expansion introduce.
func opIDs(ops []flow.Op) []string {
	var ids []string
	for _, op := range ops {
		var v struct {
			ID    string `json:"id"`
			Edges []struct {
				ID string `json:"id"`
			} `json:"edges"`
		}
		for _, raw := range []json.RawMessage{op.Agent, op.Node, op.Interaction} {
			if len(raw) > 0 && json.Unmarshal(raw, &v) == nil {
				ids = append(ids, v.ID)
				for _, e := range v.Edges {
					ids = append(ids, e.ID)
				}
			}
		}
	}
	return ids
}

// flowIDs lists every id of a flow: nodes, interactions, edges.
func flowIDs(f *flow.Flow) []string {
	var ids []string
	for _, ag := range f.Agents {
		ids = append(ids, ag.ID)
	}
	for _, sn := range f.SystemNodes {
		ids = append(ids, sn.ID)
	}
	for _, in := range f.Interactions {
		ids = append(ids, in.ID)
		for _, e := range in.Edges {
			ids = append(ids, e.ID)
		}
	}
	return ids
}
