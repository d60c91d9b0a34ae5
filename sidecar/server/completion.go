package server

import (
	"context"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
)

func init() {
	register("textDocument/completion", method{handle: lsp((*Server).completion), async: true})
}

// The CompletionItemKinds used here.
const (
	kindField     = protocol.CompletionItemKindField
	kindReference = protocol.CompletionItemKindReference
	kindEnum      = protocol.CompletionItemKindEnumMember
)

// item is a completion item; empty strings are left out.
func item(label string, kind protocol.CompletionItemKind, detail, doc, insert string) protocol.CompletionItem {
	it := protocol.CompletionItem{Label: label, Kind: kind}
	if detail != "" {
		it.Detail = protocol.NewOptional(detail)
	}
	if doc != "" {
		it.Documentation = protocol.String(doc)
	}
	if insert != "" {
		it.InsertText = protocol.NewOptional(insert)
	}
	return it
}

// completion offers field names for the mapping the cursor is in, enum values and
// references (agent ids, pattern ids, interaction ids) after "key: ". The position in the
// tree is found from indentation, not from a parse, so it works while the YAML is broken
// mid-edit; the ids come from the last analysis of the document.
func (s *Server) completion(ctx context.Context, p *protocol.CompletionParams) (*protocol.CompletionList, error) {
	d := s.docs.get(string(p.TextDocument.URI))
	if d == nil || !d.isFlow {
		return &protocol.CompletionList{Items: []protocol.CompletionItem{}}, nil
	}
	a := s.current(d)
	off, err := a.mapper.Offset(p.Position)
	if err != nil {
		return nil, badParams("position: %v", err)
	}
	lines := strings.Split(string(a.text[:off]), "\n")
	out := &protocol.CompletionList{Items: []protocol.CompletionItem{}}
	chain, key, inValue, present := yamlContext(lines)
	parentPath := ""
	if len(chain) > 0 {
		parentPath = "/" + strings.Join(chain, "/")
	}
	parent := lookup(parentPath)
	if parent == nil {
		return out, nil
	}
	if !inValue && len(chain) > 0 && chain[len(chain)-1] == "*" && parent.fields == nil {
		// An item of a list of scalars ("dependsOn:\n  - |"): complete the values.
		inValue, key = true, chain[len(chain)-2]
		parent = lookup("/" + strings.Join(chain[:len(chain)-2], "/"))
		if len(chain) == 2 {
			parent = schema
		}
		if parent == nil {
			return out, nil
		}
	}
	if inValue {
		f := parent.fields[key]
		if f == nil {
			return out, nil
		}
		for _, v := range f.enum {
			out.Items = append(out.Items, item(v, kindEnum, key, "", ""))
		}
		switch f.refs {
		case "pattern":
			for i, id := range PatternIDs {
				_, alias, _ := patternAlias(id)
				out.Items = append(out.Items, item(id, kindReference, alias, "pattern "+PatternIDs[i], ""))
			}
		case "node":
			for _, ag := range a.flow.Agents {
				if ag.ID != "" {
					out.Items = append(out.Items, item(ag.ID, kindReference, strings.TrimSpace("agent "+ag.Role), "", ""))
				}
			}
			for _, sn := range a.flow.SystemNodes {
				if sn.ID != "" {
					out.Items = append(out.Items, item(sn.ID, kindReference, "system node "+sn.Type, "", ""))
				}
			}
		case "interaction":
			for _, in := range a.flow.Interactions {
				if in.ID != "" {
					out.Items = append(out.Items, item(in.ID, kindReference, "interaction "+in.PatternID, "", ""))
				}
			}
		}
		return out, nil
	}
	names := make([]string, 0, len(parent.fields))
	for n := range parent.fields {
		if !present[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		out.Items = append(out.Items, item(n, kindField, "", parent.fields[n].doc, n+": "))
	}
	return out, nil
}

// yamlLine is one line of block YAML, seen by indentation only.
type yamlLine struct {
	blank  bool
	dash   bool // starts with "- "
	dashAt int  // column of the dash
	keyAt  int  // column of the key (after "- ")
	key    string
	rest   string // text after "key:"
	hasKey bool
}

func parseLine(s string) yamlLine {
	l := yamlLine{}
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if i == len(s) || s[i] == '#' {
		l.blank = true
		return l
	}
	if s[i] == '-' && (i+1 == len(s) || s[i+1] == ' ') {
		l.dash, l.dashAt = true, i
		i++
		for i < len(s) && s[i] == ' ' {
			i++
		}
	}
	l.keyAt = i
	body := s[i:]
	if k, rest, ok := strings.Cut(body, ":"); ok && !strings.ContainsAny(k, "{}[],\"'#") && (rest == "" || rest[0] == ' ') {
		l.key, l.rest, l.hasKey = strings.TrimSpace(k), rest, true
	} else {
		l.key = body
	}
	return l
}

// yamlContext reads the lines up to the cursor (the last one is the cursor's line, cut
// at the cursor) and returns the schema path of the mapping the cursor is in (with "*"
// for list items), the key when the cursor is in a value ("key: |"), and the keys
// already present in that mapping.
func yamlContext(lines []string) (chain []string, key string, inValue bool, present map[string]bool) {
	present = map[string]bool{}
	cur := parseLine(lines[len(lines)-1])
	indent := cur.keyAt
	if cur.blank {
		indent = len(lines[len(lines)-1])
	}
	if cur.hasKey {
		key, inValue = cur.key, true
	}
	var rev []string
	seqAt := -1 // when >= 0, we are in a list item whose dash is at this column
	if cur.dash {
		seqAt = cur.dashAt
		rev = append(rev, "*")
	}
	sameMapping := true
	for i := len(lines) - 2; i >= 0; i-- {
		l := parseLine(lines[i])
		if l.blank || !l.hasKey && !l.dash {
			continue
		}
		if seqAt >= 0 {
			// Looking for the key that owns the list at seqAt.
			if l.dash && l.dashAt == seqAt {
				continue // a sibling item
			}
			if l.dash && l.keyAt > seqAt {
				continue // inside a sibling item
			}
			if !l.dash && l.keyAt > seqAt {
				continue // inside a sibling item
			}
			if l.hasKey && (l.keyAt < seqAt || !l.dash && l.keyAt == seqAt) {
				rev = append(rev, l.key)
				indent, seqAt = l.keyAt, -1
				if l.dash {
					rev = append(rev, "*")
					seqAt = l.dashAt
				}
				continue
			}
			continue
		}
		switch {
		case l.keyAt == indent && l.hasKey:
			if sameMapping {
				present[l.key] = true
			}
			if l.dash {
				// The first key of the item we are in.
				rev = append(rev, "*")
				seqAt = l.dashAt
				sameMapping = false
			}
		case l.keyAt < indent && l.hasKey:
			sameMapping = false
			rev = append(rev, l.key)
			indent = l.keyAt
			if l.dash {
				rev = append(rev, "*")
				seqAt = l.dashAt
			}
		}
		if indent == 0 && seqAt < 0 {
			break
		}
	}
	for i := len(rev) - 1; i >= 0; i-- {
		chain = append(chain, rev[i])
	}
	return chain, key, inValue, present
}
