package server

import (
	"context"
	"slices"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

func init() {
	register("textDocument/codeAction", method{handle: lsp((*Server).codeAction), async: true})
}

// codeAction offers the validator's mechanical fixes (diag.Fix) as quick fixes for the
// diagnostics that touch the requested range. The edit names the document version it was
// computed for, so the client refuses it if the document changed meanwhile.
func (s *Server) codeAction(ctx context.Context, p *protocol.CodeActionParams) ([]protocol.CodeAction, error) {
	out := []protocol.CodeAction{}
	if len(p.Context.Only) > 0 && !slices.ContainsFunc(p.Context.Only, func(k protocol.CodeActionKind) bool {
		return k == protocol.CodeActionKindQuickFix || k == protocol.CodeActionKindEmpty
	}) {
		return out, nil
	}
	d := s.docs.get(string(p.TextDocument.URI))
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
		var edits []protocol.TextDocumentEditElement
		for _, e := range a.mapper.TextEdits(dg.Fix.Edits) {
			edits = append(edits, &e)
		}
		version := a.version
		out = append(out, protocol.CodeAction{
			Title: dg.Fix.Title, Kind: ptr(protocol.CodeActionKindQuickFix), IsPreferred: ptr(true),
			Diagnostics: s.lspDiagnostics(a, a.diags[i:i+1]),
			Edit: &protocol.WorkspaceEdit{DocumentChanges: []protocol.DocumentChange{&protocol.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{
					TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: uri.URI(d.uri)}, Version: &version},
				Edits: edits,
			}}},
		})
	}
	return out, nil
}
