package server

import (
	"context"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

func init() {
	register("textDocument/hover", method{handle: lsp((*Server).hover), async: true})
}

// hover documents the field under the cursor, or the pattern a patternId names.
func (s *Server) hover(ctx context.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
	d := s.docs.get(string(p.TextDocument.URI))
	if d == nil || !d.isFlow {
		return nil, nil
	}
	a := s.current(d)
	off, err := a.mapper.Offset(p.Position)
	if err != nil {
		return nil, badParams("position: %v", err)
	}
	path, onKey, r := pathAt(a, off)
	if r == nil {
		return nil, nil
	}
	f := lookup(path)
	if f == nil {
		return nil, nil
	}
	var b strings.Builder
	last := path[strings.LastIndex(path, "/")+1:]
	value := strings.TrimSpace(string(a.text[r.Start.Offset:r.End.Offset]))
	switch {
	case !onKey && f.refs == "pattern":
		b.WriteString(s.patternDoc(strings.Trim(value, `"'`)))
	case !onKey && f.refs == "node":
		id := strings.Trim(value, `"'`)
		if n, ok := a.flow.NodeByID(id); ok && n.Agent != nil {
			fmt.Fprintf(&b, "**agent `%s`**", id)
			if n.Agent.Name != "" {
				fmt.Fprintf(&b, " — %s", n.Agent.Name)
			}
			if n.Agent.Role != "" {
				fmt.Fprintf(&b, "\n\nrole: %s", n.Agent.Role)
			}
		} else if ok {
			fmt.Fprintf(&b, "**system node `%s`** (%s)", id, n.System.Type)
		} else {
			fmt.Fprintf(&b, "no agent or system node has the id `%s`", id)
		}
	default:
		fmt.Fprintf(&b, "**%s**\n\n%s", last, f.doc)
		if len(f.enum) > 0 {
			fmt.Fprintf(&b, "\n\nOne of: `%s`", strings.Join(f.enum, "`, `"))
		}
	}
	rng := a.mapper.Range(*r)
	return &protocol.Hover{Contents: &protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: b.String()}, Range: &rng}, nil
}

// patternDoc is a pattern's markdown, from the catalog when it is available.
func (s *Server) patternDoc(id string) string {
	if s.svc.Patterns != nil {
		if md, ok := s.svc.Patterns.Doc(id); ok {
			return md
		}
	}
	if canon, alias, ok := patternAlias(id); ok {
		return fmt.Sprintf("**%s** (%s)\n\n`agentcanvas patterns` lists every pattern.", canon, alias)
	}
	return fmt.Sprintf("`%s` is not a pattern id. Pattern ids: `%s`.", id, strings.Join(PatternIDs, "`, `"))
}

// pathAt finds the innermost model path whose key or value contains off.
func pathAt(a *analysis, off int) (path string, onKey bool, r *span.Range) {
	best := -1
	consider := func(p string, sp span.Range, key bool) {
		if off < sp.Start.Offset || off > sp.End.Offset {
			return
		}
		size := sp.End.Offset - sp.Start.Offset
		// Prefer the smallest range; on a tie the deeper path (the value inside a key).
		if best < 0 || size < best || (size == best && len(p) > len(path)) {
			best, path, onKey = size, p, key
			rr := sp
			r = &rr
		}
	}
	for p, sp := range a.flow.KeySpans {
		consider(p, sp, true)
	}
	for p, sp := range a.flow.Spans {
		if p == "" {
			continue
		}
		consider(p, sp, false)
	}
	return path, onKey, r
}
