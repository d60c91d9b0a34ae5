package flow

import (
	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// nodeRange computes the source range of a node. yaml.v3 records only where a node starts,
// so the end is found by scanning the source: to the end of a scalar's token, or to the end
// of a collection's last child (and its closing bracket in flow style). indent is the
// indentation of the line that owns the node, which bounds block scalars.
func (f *Flow) nodeRange(n *yaml.Node, indent int, inFlow bool) span.Range {
	src := f.Index.Src()
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return f.Index.Range(0, 0)
		}
		return f.nodeRange(n.Content[0], indent, inFlow)
	}
	start := f.Index.Pos(n.Line, n.Column).Offset
	end := start
	switch n.Kind {
	case yaml.ScalarNode:
		end = scalarEnd(f.Index, src, start, n, indent, inFlow)
	case yaml.AliasNode:
		end = tokenEnd(src, start, inFlow)
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle != 0 {
			end = closingBracket(src, start)
		} else if len(n.Content) > 0 {
			// The last child's owning line is its key's (mapping) or its dash's (sequence).
			last := n.Content[len(n.Content)-1]
			owner := n.Column - 1
			if n.Kind == yaml.MappingNode {
				owner = n.Content[len(n.Content)-2].Column - 1
			}
			end = f.nodeRange(last, owner, false).End.Offset
			if end < start {
				end = start
			}
		}
	}
	return f.Index.Range(start, end)
}

func scalarEnd(x *span.Index, src []byte, start int, n *yaml.Node, indent int, inFlow bool) int {
	if start >= len(src) {
		return start
	}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0 && src[start] == '"':
		for i := start + 1; i < len(src); i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return len(src)
	case n.Style&yaml.SingleQuotedStyle != 0 && src[start] == '\'':
		for i := start + 1; i < len(src); i++ {
			if src[i] == '\'' {
				if i+1 < len(src) && src[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
		return len(src)
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		// The block runs over the following lines that are blank or indented deeper than
		// the owning line; it ends at the end of the last such non-blank line.
		line := x.At(start).Line
		end := x.LineEnd(line)
		for l := line + 1; l <= x.LineCount(); l++ {
			ls, le := x.LineStart(l), x.LineEnd(l)
			text := src[ls:le]
			ind := 0
			for ind < len(text) && text[ind] == ' ' {
				ind++
			}
			if ind == len(text) {
				continue // blank lines belong to the block only if more follows
			}
			if ind <= indent {
				break
			}
			end = le
		}
		return end
	case n.Tag == "!!null" && n.Value == "":
		return start // an empty value has no text
	}
	return tokenEnd(src, start, inFlow)
}

// tokenEnd finds the end of a plain token on its line: before a " #" comment, before flow
// indicators when inside a flow collection, without trailing blanks.
func tokenEnd(src []byte, start int, inFlow bool) int {
	i := start
	for i < len(src) && src[i] != '\n' && src[i] != '\r' {
		if src[i] == '#' && i > start && (src[i-1] == ' ' || src[i-1] == '\t') {
			break
		}
		if inFlow && (src[i] == ',' || src[i] == ']' || src[i] == '}') {
			break
		}
		if src[i] == ':' && (i+1 == len(src) || src[i+1] == ' ' || src[i+1] == '\t' || src[i+1] == '\n' || src[i+1] == '\r') {
			break
		}
		i++
	}
	for i > start && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	return i
}

// closingBracket returns the offset just past the bracket that closes the flow collection
// opening at start, skipping quoted strings and comments.
func closingBracket(src []byte, start int) int {
	depth := 0
	for i := start; i < len(src); i++ {
		switch src[i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(src); i++ {
				if src[i] == '\'' {
					if i+1 < len(src) && src[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case '#':
			if i > start && (src[i-1] == ' ' || src[i-1] == '\t') {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			}
		}
	}
	return len(src)
}
