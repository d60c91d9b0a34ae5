package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// Op is one edit operation (docs/flow-edits.md). Objects (agent, node, interaction, edge,
// value) are raw JSON so their key order is kept in the YAML written.
type Op struct {
	Op            string           `json:"op"`
	ID            string           `json:"id,omitempty"`
	NewID         string           `json:"newId,omitempty"`
	Agent         json.RawMessage  `json:"agent,omitempty"`
	Node          json.RawMessage  `json:"node,omitempty"`
	Interaction   json.RawMessage  `json:"interaction,omitempty"`
	InteractionID string           `json:"interactionId,omitempty"`
	Edge          json.RawMessage  `json:"edge,omitempty"`
	EdgeID        string           `json:"edgeId,omitempty"`
	Path          string           `json:"path,omitempty"`
	Value         json.RawMessage  `json:"value,omitempty"`
	Position      *Point           `json:"position,omitempty"`
	Positions     map[string]Point `json:"positions,omitempty"`
	PatternID     string           `json:"patternId,omitempty"`
}

// OpError names the operation that failed.
type OpError struct {
	Index int
	Op    string
	Err   error
}

func (e *OpError) Error() string { return fmt.Sprintf("operation %d (%s): %v", e.Index, e.Op, e.Err) }
func (e *OpError) Unwrap() error { return e.Err }

// Edit applies ops in order to src and returns minimal line-granular text edits against
// src. All or nothing: on error no edit is returned. insertPattern must be expanded by the
// caller (it needs the pattern library).
func Edit(src []byte, file string, ops []Op) ([]span.TextEdit, error) {
	out, err := EditText(src, file, ops)
	if err != nil {
		return nil, err
	}
	return Diff(src, out), nil
}

// EditText is Edit returning the whole new text.
func EditText(src []byte, file string, ops []Op) ([]byte, error) {
	cur := src
	for i, op := range ops {
		next, err := applyOp(cur, file, op)
		if err != nil {
			return nil, &OpError{Index: i, Op: op.Op, Err: err}
		}
		cur = next
	}
	return cur, nil
}

func applyOp(src []byte, file string, op Op) ([]byte, error) {
	for _, s := range []string{op.ID, op.NewID, op.Path, op.EdgeID, op.InteractionID} {
		if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
			return nil, fmt.Errorf("an id or path holds invalid UTF-8 or a control character")
		}
	}
	for id := range op.Positions {
		if !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) {
			return nil, fmt.Errorf("a node id is not valid UTF-8")
		}
	}
	e, err := newEditor(src, file)
	if err != nil {
		return nil, err
	}
	switch op.Op {
	case "set":
		if op.Path == "" {
			return nil, fmt.Errorf("set needs a path")
		}
		if op.Value == nil {
			return nil, fmt.Errorf("set needs a value (null deletes the key)")
		}
		v, err := jsonNode(op.Value)
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		if v.Tag == "!!null" {
			return e.delete(op.Path)
		}
		return e.set(op.Path, v)
	case "addAgent":
		return e.addNode("/agents", op.Agent, "agent", "a", op.Position)
	case "addSystemNode":
		return e.addNode("/systemNodes", op.Node, "node", "", op.Position)
	case "addInteraction":
		n, err := e.objectWithID(op.Interaction, "interaction", func() string { return e.freshID("i") })
		if err != nil {
			return nil, err
		}
		return e.appendItem("/interactions", n)
	case "addEdge":
		in := e.interaction(op.InteractionID)
		if in == nil {
			return nil, fmt.Errorf("no interaction %q", op.InteractionID)
		}
		n, err := e.object(op.Edge, "edge")
		if err != nil {
			return nil, err
		}
		return e.appendItem(in.Path+"/edges", n)
	case "removeEdge":
		for _, in := range e.f.Interactions {
			for _, ed := range in.Edges {
				if ed.ID == op.EdgeID {
					return e.delete(ed.Path)
				}
			}
		}
		return nil, fmt.Errorf("no edge %q", op.EdgeID)
	case "removeInteraction":
		in := e.interaction(op.ID)
		if in == nil {
			return nil, fmt.Errorf("no interaction %q", op.ID)
		}
		return e.delete(in.Path)
	case "removeNode":
		return removeNode(src, file, op.ID)
	case "moveNode":
		if op.Position == nil {
			return nil, fmt.Errorf("moveNode needs a position")
		}
		if _, ok := e.f.NodeByID(op.ID); !ok {
			return nil, fmt.Errorf("no node %q", op.ID)
		}
		return e.set("/layout/nodes/"+escape(op.ID), pointNode(*op.Position))
	case "setLayout":
		return setLayout(src, file, op.Positions)
	case "rename":
		return rename(src, file, op.ID, op.NewID)
	case "insertPattern":
		return nil, fmt.Errorf("insertPattern is expanded by the server; the flow package cannot do it alone")
	case "":
		return nil, fmt.Errorf("missing op")
	}
	return nil, fmt.Errorf("unknown op %q", op.Op)
}

// editor holds one parsed version of the text.
type editor struct {
	src  []byte
	file string
	f    *Flow
	root *yaml.Node
}

func newEditor(src []byte, file string) (*editor, error) {
	f := Parse(file, src)
	if f.Doc == nil {
		msg := "the file does not parse"
		if len(f.Problems) > 0 {
			msg = f.Problems[0].Message
		}
		return nil, fmt.Errorf("cannot edit a flow that does not parse: %s", msg)
	}
	root := f.Doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		if !(root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
			return nil, fmt.Errorf("cannot edit: the flow's top level is not a mapping")
		}
	}
	return &editor{src: src, file: file, f: f, root: root}, nil
}

func (e *editor) interaction(id string) *Interaction {
	for _, in := range e.f.Interactions {
		if in.ID == id {
			return in
		}
	}
	return nil
}

// freshID returns prefix+N, the smallest N ≥ 1 not used by any node or interaction.
func (e *editor) freshID(prefix string) string {
	used := map[string]bool{}
	for _, a := range e.f.Agents {
		used[a.ID] = true
	}
	for _, s := range e.f.SystemNodes {
		used[s.ID] = true
	}
	for _, in := range e.f.Interactions {
		used[in.ID] = true
	}
	for n := 1; ; n++ {
		if id := prefix + strconv.Itoa(n); !used[id] {
			return id
		}
	}
}

func (e *editor) object(raw json.RawMessage, what string) (*yaml.Node, error) {
	if raw == nil {
		return nil, fmt.Errorf("missing %s", what)
	}
	n, err := jsonNode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s must be an object", what)
	}
	return n, nil
}

// objectWithID decodes an object and puts an id first, fresh when it has none.
func (e *editor) objectWithID(raw json.RawMessage, what string, fresh func() string) (*yaml.Node, error) {
	n, err := e.object(raw, what)
	if err != nil {
		return nil, err
	}
	if id := mapGet(n, "id"); id == nil || id.Value == "" {
		mapDel(n, "id")
		n.Content = append([]*yaml.Node{strNode("id"), strNode(fresh())}, n.Content...)
	} else if _, taken := e.f.NodeByID(id.Value); taken || e.interaction(id.Value) != nil {
		return nil, fmt.Errorf("%s id %q is already used", what, id.Value)
	}
	return n, nil
}

func (e *editor) addNode(list string, raw json.RawMessage, what, prefix string, pos *Point) ([]byte, error) {
	n, err := e.objectWithID(raw, what, func() string {
		p := prefix
		if p == "" {
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			p, _ = m["type"].(string)
			if p == "" {
				p = "node"
			}
		}
		return e.freshID(p)
	})
	if err != nil {
		return nil, err
	}
	out, err := e.appendItem(list, n)
	if err != nil || pos == nil {
		return out, err
	}
	return applyOp(out, e.file, Op{Op: "moveNode", ID: mapGet(n, "id").Value, Position: pos})
}

func removeNode(src []byte, file, id string) ([]byte, error) {
	e, err := newEditor(src, file)
	if err != nil {
		return nil, err
	}
	node, ok := e.f.NodeByID(id)
	if !ok {
		return nil, fmt.Errorf("no node %q", id)
	}
	// Collect every path to delete, then delete from the last to the first so earlier
	// paths stay valid.
	var paths []string
	for _, in := range e.f.Interactions {
		var gone int
		var edgePaths []string
		for _, ed := range in.Edges {
			if ed.Source == id || ed.Target == id {
				gone++
				edgePaths = append(edgePaths, ed.Path)
			}
		}
		if gone > 0 && gone == len(in.Edges) {
			paths = append(paths, in.Path)
		} else {
			paths = append(paths, edgePaths...)
		}
	}
	if node.Agent != nil {
		paths = append(paths, node.Agent.Path)
	} else {
		paths = append(paths, node.System.Path)
	}
	if _, ok := e.f.Layout.Nodes[id]; ok {
		paths = append(paths, "/layout/nodes/"+escape(id))
	}
	sort.Slice(paths, func(i, j int) bool { return pathLess(paths[j], paths[i]) })
	cur := src
	for _, p := range paths {
		ed, err := newEditor(cur, file)
		if err != nil {
			return nil, err
		}
		if cur, err = ed.delete(p); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

// pathLess orders model paths by source order: numeric components numerically.
func pathLess(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] == bs[i] {
			continue
		}
		ai, aerr := strconv.Atoi(as[i])
		bi, berr := strconv.Atoi(bs[i])
		if aerr == nil && berr == nil {
			return ai < bi
		}
		return as[i] < bs[i]
	}
	return len(as) < len(bs)
}

func setLayout(src []byte, file string, positions map[string]Point) ([]byte, error) {
	ids := make([]string, 0, len(positions))
	for id := range positions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	e, err := newEditor(src, file)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, ok := e.f.NodeByID(id); !ok {
			return nil, fmt.Errorf("no node %q", id)
		}
	}
	// Existing entries are replaced in place in one pass; the rest are added one by one.
	var edits []span.TextEdit
	var missing []string
	for _, id := range ids {
		p := "/layout/nodes/" + escape(id)
		if _, ok := e.f.Spans[p]; ok {
			ed, err := e.replaceEdit(p, pointNode(positions[id]))
			if err != nil {
				return nil, err
			}
			edits = append(edits, ed)
		} else {
			missing = append(missing, id)
		}
	}
	cur, err := span.Apply(src, edits)
	if err != nil {
		return nil, err
	}
	for _, id := range missing {
		ed, err := newEditor(cur, file)
		if err != nil {
			return nil, err
		}
		if cur, err = ed.set("/layout/nodes/"+escape(id), pointNode(positions[id])); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

func rename(src []byte, file, id, newID string) ([]byte, error) {
	e, err := newEditor(src, file)
	if err != nil {
		return nil, err
	}
	if newID == "" {
		return nil, fmt.Errorf("rename needs newId")
	}
	if _, taken := e.f.NodeByID(newID); taken || e.interaction(newID) != nil {
		return nil, fmt.Errorf("id %q is already used", newID)
	}
	var sets []string // paths whose value becomes newID
	if node, ok := e.f.NodeByID(id); ok {
		if node.Agent != nil {
			sets = append(sets, node.Agent.Path+"/id")
		} else {
			sets = append(sets, node.System.Path+"/id")
		}
		for _, in := range e.f.Interactions {
			for _, ed := range in.Edges {
				if ed.Source == id {
					sets = append(sets, ed.Path+"/source")
				}
				if ed.Target == id {
					sets = append(sets, ed.Path+"/target")
				}
			}
		}
	} else if in := e.interaction(id); in != nil {
		sets = append(sets, in.Path+"/id")
		for _, other := range e.f.Interactions {
			for i, dep := range other.DependsOn {
				if dep == id {
					sets = append(sets, fmt.Sprintf("%s/dependsOn/%d", other.Path, i))
				}
			}
		}
	} else {
		return nil, fmt.Errorf("no node or interaction %q", id)
	}
	var edits []span.TextEdit
	for _, p := range sets {
		ed, err := e.replaceEdit(p, strNode(newID))
		if err != nil {
			return nil, err
		}
		edits = append(edits, ed)
	}
	// The layout key is renamed in place, keeping its value and comments.
	if kr, ok := e.f.KeySpans["/layout/nodes/"+escape(id)]; ok {
		edits = append(edits, span.TextEdit{Range: kr, NewText: inline(strNode(newID))})
	}
	return span.Apply(src, edits)
}

// --- path resolution -------------------------------------------------------------------

type located struct {
	key, val *yaml.Node // key is nil for sequence items and the root
	parent   *yaml.Node
	inFlow   bool // val sits inside a flow collection
	path     string
}

// locate walks path as far as it exists. It returns the deepest existing node and the
// components that remain.
func (e *editor) locate(path string) (located, []string, error) {
	comps := splitPath(path)
	cur := located{val: e.root, path: ""}
	for i, c := range comps {
		n := resolve(cur.val)
		childFlow := cur.inFlow || n.Style&yaml.FlowStyle != 0
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == c {
					cur = located{key: n.Content[j], val: n.Content[j+1], parent: n, inFlow: childFlow, path: cur.path + "/" + escape(c)}
					found = true
					break
				}
			}
			if !found {
				return cur, comps[i:], nil
			}
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(c)
			if err != nil || idx < 0 || idx >= len(n.Content) {
				return cur, nil, fmt.Errorf("path %s: no item %q in the list at %s", path, c, orRoot(cur.path))
			}
			cur = located{val: n.Content[idx], parent: n, inFlow: childFlow, path: fmt.Sprintf("%s/%d", cur.path, idx)}
		default:
			if n.Tag == "!!null" {
				return cur, comps[i:], nil
			}
			return cur, nil, fmt.Errorf("path %s: %s is a single value, not a mapping or list", path, orRoot(cur.path))
		}
	}
	return cur, nil, nil
}

func orRoot(p string) string {
	if p == "" {
		return "the top level"
	}
	return p
}

func splitPath(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

// --- primitive edits --------------------------------------------------------------------

// set replaces the value at path, or adds the key (and missing parents).
func (e *editor) set(path string, v *yaml.Node) ([]byte, error) {
	loc, rest, err := e.locate(path)
	if err != nil {
		return nil, err
	}
	if len(rest) == 0 {
		ed, err := e.replaceEdit(path, v)
		if err != nil {
			return nil, err
		}
		return span.Apply(e.src, []span.TextEdit{ed})
	}
	// Build the missing part as nested mappings around v.
	for i := len(rest) - 1; i >= 1; i-- {
		v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{strNode(rest[i]), v}}
	}
	parent := resolve(loc.val)
	if parent.Kind != yaml.MappingNode || parent.Style&yaml.FlowStyle != 0 || loc.inFlow || len(parent.Content) == 0 {
		// A null, empty or flow-style parent is re-rendered whole with the new key.
		m := cloneMapping(parent)
		m.Content = append(m.Content, strNode(rest[0]), v)
		if loc.path == "" {
			return nil, fmt.Errorf("cannot add %s: the file is empty", path)
		}
		ed, err := e.replaceEdit(loc.path, m)
		if err != nil {
			return nil, err
		}
		return span.Apply(e.src, []span.TextEdit{ed})
	}
	// A block mapping: insert "key: value" after its last entry, at its indentation.
	indent := parent.Content[0].Column - 1
	end := e.pastTrailingComment(e.f.Span(loc.path).End.Offset)
	if loc.path == "" {
		end = e.rootEnd()
	}
	text := "\n" + strings.Repeat(" ", indent) + e.keyValue(rest[0], v, indent)
	if end == len(e.src) && !bytes.HasSuffix(e.src, []byte("\n")) || loc.path == "" {
		// At the end of the file (or of the root mapping) keep the final newline last.
		text = strings.TrimPrefix(text, "\n") + "\n"
		if end > 0 && e.src[end-1] != '\n' {
			text = "\n" + text
		}
	}
	return span.Apply(e.src, []span.TextEdit{{Range: e.f.Index.Range(end, end), NewText: text}})
}

// pastTrailingComment moves an insertion point at the end of a value to the end of its line
// when the rest of that line is a comment, so that "writer: {x: 0}   # below" keeps its
// comment and the new entry starts on the next line. (Inserting at the value's end would hand
// the comment to the new last line.) A line break before the comment's is kept after it.
func (e *editor) pastTrailingComment(end int) int {
	if end <= 0 || end > len(e.src) || e.src[end-1] == '\n' {
		return end
	}
	i := end
	for i < len(e.src) && (e.src[i] == ' ' || e.src[i] == '\t') {
		i++
	}
	if i == len(e.src) || e.src[i] != '#' {
		return end
	}
	for i < len(e.src) && e.src[i] != '\n' && e.src[i] != '\r' {
		i++
	}
	return i
}

// rootEnd is where a new top-level key goes: after the root mapping's last line.
func (e *editor) rootEnd() int {
	end := e.f.Span("").End.Offset
	line := e.f.Index.At(end).Line
	if line < e.f.Index.LineCount() {
		return e.f.Index.LineStart(line + 1)
	}
	return len(e.src)
}

// keyValue renders "key: value" (or "key:\n  block") for a key at indent.
func (e *editor) keyValue(key string, v *yaml.Node, indent int) string {
	k := inline(strNode(key))
	if isInline(v) {
		return k + ": " + inline(v)
	}
	return k + ":\n" + strings.TrimRight(block(v, indent+2), "\n")
}

// replaceEdit builds the edit that replaces the value at an existing path.
func (e *editor) replaceEdit(path string, v *yaml.Node) (span.TextEdit, error) {
	loc, rest, err := e.locate(path)
	if err != nil {
		return span.TextEdit{}, err
	}
	if len(rest) > 0 {
		return span.TextEdit{}, fmt.Errorf("path %s does not exist", path)
	}
	r := e.f.Span(path)
	old := resolve(loc.val)
	keepStyle(old, v)
	if loc.inFlow {
		// Inside a flow collection only an inline value fits.
		return span.TextEdit{Range: r, NewText: inline(flowAll(v))}, nil
	}
	if isInline(v) {
		if loc.key != nil && isBlockCollection(old) {
			// "key:\n  a: 1" becomes "key: value": replace from just after the colon.
			start := e.afterColon(loc.key)
			return span.TextEdit{Range: e.f.Index.Range(start, r.End.Offset), NewText: " " + inline(v)}, nil
		}
		if loc.key != nil && old.Tag == "!!null" && old.Value == "" {
			start := e.afterColon(loc.key)
			return span.TextEdit{Range: e.f.Index.Range(start, start), NewText: " " + inline(v)}, nil
		}
		return span.TextEdit{Range: r, NewText: inline(v)}, nil
	}
	if loc.key != nil {
		indent := loc.key.Column - 1
		start := e.afterColon(loc.key)
		return span.TextEdit{Range: e.f.Index.Range(start, r.End.Offset), NewText: "\n" + strings.TrimRight(block(v, indent+2), "\n")}, nil
	}
	if loc.parent != nil && loc.parent.Kind == yaml.SequenceNode {
		// A list item: its first line follows the dash.
		indent := loc.val.Column - 1
		if isBlockCollection(old) {
			indent = old.Column - 1
		}
		b := strings.TrimRight(block(v, indent), "\n")
		return span.TextEdit{Range: r, NewText: strings.TrimPrefix(b, strings.Repeat(" ", indent))}, nil
	}
	return span.TextEdit{Range: r, NewText: strings.TrimRight(block(v, 0), "\n")}, nil
}

// afterColon is the offset just past the ':' that follows key.
func (e *editor) afterColon(key *yaml.Node) int {
	kr := e.f.nodeRange(key, 0, false)
	i := kr.End.Offset
	for i < len(e.src) && e.src[i] != ':' {
		i++
	}
	if i < len(e.src) {
		i++
	}
	return i
}

// delete removes the key or list item at path, with its whole lines.
func (e *editor) delete(path string) ([]byte, error) {
	loc, rest, err := e.locate(path)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("path %s does not exist", path)
	}
	if loc.parent == nil {
		return nil, fmt.Errorf("cannot delete the whole flow")
	}
	parentPath := parentPath(loc.path)
	if loc.inFlow || loc.parent.Style&yaml.FlowStyle != 0 {
		// Re-render the flow collection without the element.
		return e.rewriteWithout(parentPath, loc)
	}
	if (loc.parent.Kind == yaml.MappingNode && len(loc.parent.Content) == 2) || (loc.parent.Kind == yaml.SequenceNode && len(loc.parent.Content) == 1) {
		empty := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
		if loc.parent.Kind == yaml.SequenceNode {
			empty = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		}
		if parentPath == "" {
			return nil, fmt.Errorf("cannot delete the last key of the flow")
		}
		ed, err := e.replaceEdit(parentPath, empty)
		if err != nil {
			return nil, err
		}
		return span.Apply(e.src, []span.TextEdit{ed})
	}
	// The element's first line starts at its key (or dash); it ends with its value.
	startNode := loc.key
	if startNode == nil {
		startNode = loc.val
	}
	start := e.f.Index.Pos(startNode.Line, startNode.Column).Offset
	end := e.f.Span(loc.path).End.Offset
	ls := e.f.Index.LineStart(startNode.Line)
	prefix := e.src[ls:start]
	if loc.key == nil {
		// A list item: start at its dash.
		dash := bytes.LastIndexByte(prefix, '-')
		if dash >= 0 {
			start = ls + dash
			prefix = e.src[ls:start]
		}
	}
	if len(bytes.TrimLeft(prefix, " ")) == 0 {
		// The element owns its lines: remove them whole, trailing comment included.
		endLine := e.f.Index.At(end).Line
		stop := e.f.Index.LineStart(endLine + 1)
		if endLine >= e.f.Index.LineCount() {
			stop = len(e.src)
		}
		return span.Apply(e.src, []span.TextEdit{{Range: e.f.Index.Range(ls, stop), NewText: ""}})
	}
	// The element shares its first line with a dash ("- id: a1"): remove up to the next
	// sibling key, which then takes its place after the dash.
	next := e.nextSiblingKey(loc)
	if next == nil {
		return nil, fmt.Errorf("cannot delete %s", path)
	}
	stop := e.f.Index.Pos(next.Line, next.Column).Offset
	return span.Apply(e.src, []span.TextEdit{{Range: e.f.Index.Range(start, stop), NewText: ""}})
}

func (e *editor) nextSiblingKey(loc located) *yaml.Node {
	c := loc.parent.Content
	for i := 0; i+2 < len(c); i += 2 {
		if c[i] == loc.key {
			return c[i+2]
		}
	}
	return nil
}

func (e *editor) rewriteWithout(parentPath string, loc located) ([]byte, error) {
	p := loc.parent
	n := &yaml.Node{Kind: p.Kind, Tag: p.Tag, Style: p.Style}
	for i := 0; i < len(p.Content); i++ {
		if p.Kind == yaml.MappingNode {
			if p.Content[i] == loc.key {
				i++
				continue
			}
		} else if p.Content[i] == loc.val {
			continue
		}
		n.Content = append(n.Content, p.Content[i])
	}
	ed, err := e.replaceEdit(parentPath, n)
	if err != nil {
		return nil, err
	}
	return span.Apply(e.src, []span.TextEdit{ed})
}

// appendItem adds an item at the end of the list at path (created when missing).
func (e *editor) appendItem(path string, item *yaml.Node) ([]byte, error) {
	loc, rest, err := e.locate(path)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return e.set(path, &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{item}})
	}
	seq := resolve(loc.val)
	if seq.Kind != yaml.SequenceNode || seq.Style&yaml.FlowStyle != 0 || loc.inFlow || len(seq.Content) == 0 {
		if seq.Kind != yaml.SequenceNode && seq.Tag != "!!null" {
			return nil, fmt.Errorf("%s is not a list", path)
		}
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if seq.Kind == yaml.SequenceNode {
			n.Content = append(n.Content, seq.Content...)
		}
		n.Content = append(n.Content, item)
		ed, err := e.replaceEdit(path, n)
		if err != nil {
			return nil, err
		}
		return span.Apply(e.src, []span.TextEdit{ed})
	}
	indent := seq.Column - 1
	end := e.pastTrailingComment(e.f.Span(path).End.Offset)
	b := strings.TrimRight(block(item, indent+2), "\n")
	text := "\n" + strings.Repeat(" ", indent) + "- " + strings.TrimPrefix(b, strings.Repeat(" ", indent+2))
	return span.Apply(e.src, []span.TextEdit{{Range: e.f.Index.Range(end, end), NewText: text}})
}

// --- rendering ---------------------------------------------------------------------------

const inlineMax = 72

// isInline says whether a value is written on its key's line: scalars, and collections of
// scalars that are short enough.
func isInline(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode, yaml.AliasNode:
		return !strings.Contains(n.Value, "\n")
	case yaml.MappingNode, yaml.SequenceNode:
		if len(n.Content) == 0 {
			return true
		}
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || strings.Contains(c.Value, "\n") {
				return false
			}
		}
		return len(inline(n)) <= inlineMax
	}
	return false
}

func isBlockCollection(n *yaml.Node) bool {
	return (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle == 0 && len(n.Content) > 0
}

// keepStyle carries a scalar's quoting style over to its replacement.
func keepStyle(old, v *yaml.Node) {
	if old.Kind == yaml.ScalarNode && v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Style == 0 {
		if old.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			v.Style = old.Style & (yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle)
		}
	}
}

func encode(n *yaml.Node) string {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		panic(fmt.Sprintf("flow: encoding a node built from valid JSON failed: %v", err))
	}
	_ = enc.Close()
	return buf.String()
}

// inline renders n on one line.
func inline(n *yaml.Node) string {
	return strings.TrimRight(encode(flowAll(n)), "\n")
}

func flowAll(n *yaml.Node) *yaml.Node {
	c := *n
	if c.Kind == yaml.MappingNode || c.Kind == yaml.SequenceNode {
		c.Style |= yaml.FlowStyle
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			c.Content[i] = flowAll(x)
		}
	}
	return &c
}

// block renders n in block style with every line indented by indent; short collections of
// scalars inside it stay on one line, as a person would write them.
func block(n *yaml.Node, indent int) string {
	text := encode(shortFlow(n, true, false))
	pad := strings.Repeat(" ", indent)
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if l == "" {
			continue
		}
		if l != "\n" {
			b.WriteString(pad)
		}
		b.WriteString(l)
	}
	return b.String()
}

// Items of a top-level list are records (agents, edges…) and stay in block style.
func shortFlow(n *yaml.Node, top, record bool) *yaml.Node {
	c := *n
	if c.Kind == yaml.MappingNode || c.Kind == yaml.SequenceNode {
		if !top && !record && isInline(&c) {
			c.Style |= yaml.FlowStyle
			return &c
		}
		c.Style &^= yaml.FlowStyle
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			c.Content[i] = shortFlow(x, false, top && c.Kind == yaml.SequenceNode)
		}
	}
	if c.Kind == yaml.ScalarNode && strings.Contains(c.Value, "\n") {
		c.Style = yaml.LiteralStyle
	}
	return &c
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func pointNode(p Point) *yaml.Node {
	num := func(f float64) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(math.Round(f)), 10)}
	}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Content: []*yaml.Node{strNode("x"), num(p.X), strNode("y"), num(p.Y)}}
}

func cloneMapping(n *yaml.Node) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if n.Kind == yaml.MappingNode {
		m.Content = append(m.Content, n.Content...)
	}
	return m
}

func mapGet(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func mapDel(n *yaml.Node, key string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = append(n.Content[:i], n.Content[i+2:]...)
			return
		}
	}
}

// jsonNode decodes JSON into a yaml.Node, keeping object key order.
func jsonNode(raw json.RawMessage) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := jsonValue(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return n, nil
}

func jsonValue(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, strNode(kt.(string)), v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for dec.More() {
				v, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			_, err := dec.Token()
			return n, err
		}
	case string:
		return strNode(t), nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t)}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}
