package validate

import (
	"encoding/json"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// Fixes are minimal text edits against the exact source the flow was loaded from, so the
// server can offer them as quick fixes and the command line can show what they would do.

// setFix sets the value at a model path through flow.Edit's `set` operation (adding missing
// keys, replacing a value in place; a nil value deletes the key), or returns nil when no
// edit can be built, e.g. inside a YAML alias.
func setFix(f *flow.Flow, title, path string, value any) *diag.Fix {
	if throughAlias(f, path) {
		return nil // an edit there would change every user of the anchor
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil
	}
	edits, err := flow.Edit(f.Index.Src(), f.File, []flow.Op{{Op: "set", Path: path, Value: raw}})
	if err != nil || len(edits) == 0 {
		return nil
	}
	return &diag.Fix{Title: title, Edits: edits}
}

// replaceFix replaces the scalar at path by a string.
func replaceFix(f *flow.Flow, title, path, value string) *diag.Fix {
	return setFix(f, title, path, value)
}

// deleteFix removes the key at path and its value.
func deleteFix(f *flow.Flow, title, path string) *diag.Fix {
	return setFix(f, title, path, nil)
}

// throughAlias reports whether the existing part of path goes through a YAML alias.
func throughAlias(f *flow.Flow, path string) bool {
	if f.Doc == nil || len(f.Doc.Content) == 0 {
		return false
	}
	n := f.Doc.Content[0]
	for _, seg := range splitPath(path) {
		if n.Kind == yaml.AliasNode {
			return true
		}
		if n = child(n, seg); n == nil {
			return false
		}
	}
	return n.Kind == yaml.AliasNode
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
