package validate

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// Fixes are minimal text edits against the exact source the flow was loaded from, so the
// server can offer them as quick fixes and the command line can show what they would do.

// setFix sets the value at a model path, adding missing keys, or returns nil when no edit
// can be built (for example when a parent on the way is a list or a scalar).
func setFix(f *flow.Flow, title, path string, value any) *diag.Fix {
	edits := setEdits(f, path, value)
	if len(edits) == 0 {
		return nil
	}
	return &diag.Fix{Title: title, Edits: edits}
}

// replaceFix replaces the scalar at path by a string value (quoted when YAML needs it).
func replaceFix(f *flow.Flow, title, path, value string) *diag.Fix {
	r, ok := f.Spans[path]
	if !ok {
		return nil
	}
	return &diag.Fix{Title: title, Edits: []span.TextEdit{{Range: r, NewText: inlineYAML(value)}}}
}

// setEdits is an interim implementation of a `set` operation (see docs/flow-edits.md): it
// replaces an existing value in place (written in flow style), or appends the missing keys
// to the deepest existing mapping, indented like its other keys.
// TODO(merge): replace by flow.Edit(src, file, []flow.Op{set}) once that is on main.
func setEdits(f *flow.Flow, path string, value any) []span.TextEdit {
	if f.Doc == nil || len(f.Doc.Content) == 0 {
		return nil
	}
	segs := splitPath(path)
	n := f.Doc.Content[0]
	found := 0
	for found < len(segs) {
		next := child(n, segs[found])
		if next == nil {
			break
		}
		n, found = next, found+1
	}
	n = deref(n)
	if found == len(segs) {
		r, ok := f.Spans[path]
		if !ok {
			return nil
		}
		return []span.TextEdit{{Range: r, NewText: inlineYAML(value)}}
	}
	rest := segs[found:]
	for _, s := range rest {
		if _, err := strconv.Atoi(s); err == nil {
			return nil // never invent list items
		}
	}
	// The value to add under n: {rest[0]: {rest[1]: … value}}.
	var v any = value
	for i := len(rest) - 1; i >= 1; i-- {
		v = map[string]any{rest[i]: v}
	}
	parentPath := joinPath(segs[:found])
	if n.Kind != yaml.MappingNode {
		return nil
	}
	if n.Style&yaml.FlowStyle != 0 || len(n.Content) == 0 {
		// Rewrite the (small) flow mapping with the new key appended.
		r, ok := f.Spans[parentPath]
		if !ok {
			return nil
		}
		cp := *n
		cp.Content = append(append([]*yaml.Node(nil), n.Content...), &yaml.Node{Kind: yaml.ScalarNode, Value: rest[0]}, toNode(v))
		if len(n.Content) == 0 && n.Style&yaml.FlowStyle == 0 {
			return nil
		}
		return []span.TextEdit{{Range: r, NewText: marshalFlow(&cp)}}
	}
	indent := n.Content[0].Column - 1
	lastKey := n.Content[len(n.Content)-2].Value
	last, ok := f.Spans[parentPath+"/"+escapeKey(lastKey)]
	if !ok {
		return nil
	}
	at := f.Index.LineEnd(last.End.Line)
	block := marshalBlock(map[string]any{rest[0]: v})
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
		b.WriteString("\n")
		b.WriteString(strings.Repeat(" ", indent))
		b.WriteString(line)
	}
	pos := f.Index.At(at)
	return []span.TextEdit{{Range: span.Range{Start: pos, End: pos}, NewText: b.String()}}
}

// nodeAt finds the node at a model path, following aliases; nil when there is none.
func nodeAt(f *flow.Flow, path string) *yaml.Node {
	if f.Doc == nil || len(f.Doc.Content) == 0 {
		return nil
	}
	n := f.Doc.Content[0]
	for _, seg := range splitPath(path) {
		if n = child(n, seg); n == nil {
			return nil
		}
	}
	return n
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func child(n *yaml.Node, seg string) *yaml.Node {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

func joinPath(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString("/")
		b.WriteString(escapeKey(s))
	}
	return b.String()
}

func escapeKey(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func toNode(v any) *yaml.Node {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
	return &n
}

// inlineYAML renders a value on one line: a plain or quoted scalar, or a flow collection.
func inlineYAML(v any) string { return marshalFlow(toNode(v)) }

func marshalFlow(n *yaml.Node) string {
	var setFlow func(*yaml.Node)
	setFlow = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			n.Style |= yaml.FlowStyle
		}
		for _, c := range n.Content {
			setFlow(c)
		}
	}
	setFlow(n)
	out, err := yaml.Marshal(n)
	if err != nil {
		return "null"
	}
	return strings.TrimRight(string(out), "\n")
}

func marshalBlock(v any) string {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	enc.Close()
	return b.String()
}

// deleteFix removes a key and its value from a block mapping (whole lines only), or returns
// nil when that cannot be done without touching other text.
// TODO(merge): replace by flow.Edit's `set` with a null value.
func deleteFix(f *flow.Flow, title, path string) *diag.Fix {
	k, ok := f.KeySpans[path]
	v, ok2 := f.Spans[path]
	if !ok || !ok2 {
		return nil
	}
	src := f.Index.Src()
	start := f.Index.LineStart(k.Start.Line)
	for i := start; i < k.Start.Offset; i++ {
		if src[i] != ' ' {
			return nil // not alone on its line (flow style or a list item's first key)
		}
	}
	endLine := max(v.End.Line, k.End.Line)
	end := f.Index.LineStart(endLine + 1)
	if endLine >= f.Index.LineCount() {
		end = len(src)
	}
	return &diag.Fix{Title: title, Edits: []span.TextEdit{{Range: f.Index.Range(start, end), NewText: ""}}}
}
