package server

import (
	"context"
	"encoding/json"

	"github.com/agentcanvas/agentcanvas/sidecar/lsppos"
)

func init() {
	register("textDocument/codeAction", method{handle: (*Server).codeAction, async: true})
}

type codeAction struct {
	Title       string          `json:"title"`
	Kind        string          `json:"kind"`
	Diagnostics []lspDiagnostic `json:"diagnostics"`
	IsPreferred bool            `json:"isPreferred"`
	Edit        workspaceEdit   `json:"edit"`
}

type workspaceEdit struct {
	DocumentChanges []textDocumentEdit `json:"documentChanges"`
}

type textDocumentEdit struct {
	TextDocument versionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []lsppos.TextEdit               `json:"edits"`
}

// codeAction offers the validator's mechanical fixes (diag.Fix) as quick fixes for the
// diagnostics that touch the requested range. The edit names the document version it was
// computed for, so the client refuses it if the document changed meanwhile.
func (s *Server) codeAction(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		TextDocument textDocumentIdentifier `json:"textDocument"`
		Range        lsppos.Range           `json:"range"`
		Context      struct {
			Only []string `json:"only"`
		} `json:"context"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	out := []codeAction{}
	if len(p.Context.Only) > 0 {
		ok := false
		for _, k := range p.Context.Only {
			if k == "quickfix" || k == "" {
				ok = true
			}
		}
		if !ok {
			return out, nil
		}
	}
	d := s.docs.get(p.TextDocument.URI)
	if d == nil || !d.isFlow {
		return out, nil
	}
	a := s.current(d)
	start, end, err := a.mapper.OffsetRange(p.Range)
	if err != nil {
		return nil, badParams("range: %v", err)
	}
	for i, dg := range a.diags {
		if dg.Fix == nil || len(dg.Fix.Edits) == 0 {
			continue
		}
		ds, de := a.mapper.SpanOffset(dg.Range.Start), a.mapper.SpanOffset(dg.Range.End)
		if de < start || ds > end {
			continue
		}
		out = append(out, codeAction{
			Title: dg.Fix.Title, Kind: "quickfix", IsPreferred: true,
			Diagnostics: s.lspDiagnostics(a, a.diags[i:i+1]),
			Edit: workspaceEdit{DocumentChanges: []textDocumentEdit{{
				TextDocument: versionedTextDocumentIdentifier{URI: d.uri, Version: a.version},
				Edits:        a.mapper.TextEdits(dg.Fix.Edits),
			}}},
		})
	}
	return out, nil
}
