package flow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// Codes of the problems the loader itself reports.
const (
	CodeYAMLSyntax = "yaml-syntax"
	CodeSchema     = "schema"
)

// Parse loads a flow from its bytes. It never fails: a file that does not parse yields a
// Flow with a yaml-syntax problem and no model; fields of the wrong type are reported as
// schema problems and left empty, so the rest of the flow is still usable.
func Parse(file string, src []byte) *Flow {
	f := &Flow{
		File:     file,
		Name:     flowName(file),
		Spans:    map[string]span.Range{},
		KeySpans: map[string]span.Range{},
		Index:    span.NewIndex(src),
		Layout:   Layout{Nodes: map[string]Point{}, Edges: map[string]map[string]any{}},
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			f.problem("", CodeSchema, diag.Error, "the file is empty; a flow needs at least version, agents and interactions", span.Range{Start: span.Pos{Line: 1, Col: 1}, End: span.Pos{Line: 1, Col: 1}})
			return f
		}
		f.syntaxProblem(err, src)
		return f
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		f.problem("", CodeYAMLSyntax, diag.Error, "more than one YAML document in the file; a flow is exactly one document (remove the '---' separator)", f.nodeRange(&extra, 0, false))
	}
	f.Doc = &doc
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	d := decoder{f: f}
	values, keys := countPaths(root)
	f.Spans = make(map[string]span.Range, values)
	f.KeySpans = make(map[string]span.Range, keys)
	d.record(root, "", 0, false)
	d.flowRoot(root)
	return f
}

func flowName(file string) string {
	base := filepath.Base(file)
	for _, ext := range []string{".yaml", ".yml"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (f *Flow) syntaxProblem(err error, src []byte) {
	msg := err.Error()
	line := 1
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		line = problemLine(src, line, msg)
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	start := f.Index.Pos(line, 1)
	end := f.Index.At(f.Index.LineEnd(line))
	f.problem("", CodeYAMLSyntax, diag.Error, "YAML syntax error: "+msg+"; fix the indentation or quoting on this line", span.Range{Start: start, End: end})
}

// maxProblemScan bounds problemLine's work: a flow is rarely longer.
const maxProblemScan = 2000

// problemLine finds the line a YAML error is on. yaml.v3 reports the line where the
// construct it was reading began (the list above a badly indented item, the line before an
// unclosed '{'), not the line that breaks it; the first prefix of the file, from that line
// on, that fails with the same message ends at the line that does.
func problemLine(src []byte, context int, msg string) int {
	lines := bytes.SplitAfter(src, []byte("\n"))
	if len(lines) > maxProblemScan {
		return context
	}
	prefix := 0
	for i := 0; i < context-1 && i < len(lines); i++ {
		prefix += len(lines[i])
	}
	for n := context; n <= len(lines); n++ {
		prefix += len(lines[n-1])
		var doc yaml.Node
		err := yaml.Unmarshal(src[:prefix], &doc)
		if err == nil {
			continue
		}
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil && m[2] == msg {
			return n
		}
	}
	return context
}

func (f *Flow) problem(path, code string, sev diag.Severity, msg string, r span.Range) {
	f.Problems = append(f.Problems, diag.Diagnostic{File: f.File, Range: r, Severity: sev, Code: code, Message: msg, Path: path})
}

// decoder fills the model from the node tree, recording spans and type problems.
type decoder struct{ f *Flow }

// record stores the value range of n at path, and of every descendant.
func (d *decoder) record(n *yaml.Node, path string, indent int, inFlow bool) span.Range {
	r := d.f.nodeRange(n, indent, inFlow)
	inFlow = inFlow || n.Style&yaml.FlowStyle != 0
	d.f.Spans[path] = r
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := path + "/" + escape(k.Value)
			d.f.KeySpans[p] = d.f.nodeRange(k, indent, inFlow)
			d.record(v, p, k.Column-1, inFlow)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			d.record(c, path+"/"+strconv.Itoa(i), n.Column-1, inFlow)
		}
	}
	return r
}

// countPaths sizes the span maps up front: growing them was most of the loader's time on
// large flows.
func countPaths(n *yaml.Node) (values, keys int) {
	values = 1
	step := 1
	if n.Kind == yaml.MappingNode {
		step = 2
	}
	for i := step - 1; i < len(n.Content); i += step {
		v, k := countPaths(n.Content[i])
		values += v
		keys += k
		if step == 2 {
			keys++
		}
	}
	return values, keys
}

// escape escapes a map key for a model path (JSON pointer rules).
func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

type fieldFn func(k, v *yaml.Node, path string)

// fields decodes a mapping by a table of known keys, reporting unknown and repeated keys and
// a node that is not a mapping at all.
func (d *decoder) fields(n *yaml.Node, path, what string, table map[string]fieldFn) bool {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			return false
		}
		d.typeProblem(path, what+" must be a mapping (key: value lines)", n)
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := path + "/" + escape(k.Value)
		if seen[k.Value] {
			d.f.problem(p, CodeSchema, diag.Error, fmt.Sprintf("%s has the key %q twice; keep one", what, k.Value), d.f.KeySpan(p))
			continue
		}
		seen[k.Value] = true
		fn, ok := table[k.Value]
		if !ok {
			// An error, not a warning: a field a run would ignore (backendid for backendId)
			// silently changes what it does (another backend, no limit).
			d.unknownField(p, k.Value, what, table)
			continue
		}
		fn(k, v, p)
	}
	return true
}

// unknownField reports a key of no field, with the field it may have meant and the quick
// fix that renames it.
func (d *decoder) unknownField(path, key, what string, table map[string]fieldFn) {
	r := d.f.KeySpan(path)
	best := closestKey(key, table)
	if best == "" {
		d.f.problem(path, CodeSchema, diag.Error, fmt.Sprintf("unknown field %q in %s; correct or remove it", key, what), r)
		return
	}
	d.f.problem(path, CodeSchema, diag.Error, fmt.Sprintf("unknown field %q in %s (did you mean %q?); correct or remove it", key, what, best), r)
	if r.End.Line == r.Start.Line && r.End.Col-r.Start.Col == len(key) { // a plain key, not quoted
		d.f.Problems[len(d.f.Problems)-1].Fix = &diag.Fix{Title: fmt.Sprintf("Rename to %q", best), Edits: []span.TextEdit{{Range: r, NewText: best}}}
	}
}

// closestKey is the known key within two edits of key (case aside), or "".
func closestKey(key string, table map[string]fieldFn) string {
	best, bestD := "", 3
	for k := range table {
		if dd := editDistance(strings.ToLower(key), strings.ToLower(k)); dd < bestD || dd == bestD && k < best {
			best, bestD = k, dd
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func (d *decoder) typeProblem(path, msg string, n *yaml.Node) {
	d.f.problem(path, CodeSchema, diag.Error, msg, d.f.Span(path))
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func (d *decoder) str(n *yaml.Node, path, what string) string {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || isNull(n) {
		if !isNull(n) {
			d.typeProblem(path, what+" must be a single value (a string)", n)
		}
		return ""
	}
	return n.Value
}

func (d *decoder) strList(n *yaml.Node, path, what string) []string {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.typeProblem(path, what+" must be a list of strings, e.g. [a, b]", n)
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		c = resolve(c)
		p := fmt.Sprintf("%s/%d", path, i)
		if c.Kind != yaml.ScalarNode || isNull(c) {
			d.typeProblem(p, what+" must hold strings only", c)
			continue
		}
		out = append(out, c.Value)
	}
	return out
}

func (d *decoder) integer(n *yaml.Node, path, what string) (int64, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		if v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			return v, true
		}
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil && v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v), true
		}
	}
	d.typeProblem(path, what+" must be a whole number", n)
	return 0, false
}

func (d *decoder) number(n *yaml.Node, path, what string) (float64, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		var v float64
		if err := n.Decode(&v); err == nil {
			return v, true
		}
	}
	d.typeProblem(path, what+" must be a number", n)
	return 0, false
}

func (d *decoder) boolean(n *yaml.Node, path, what string) (bool, bool) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var v bool
		if err := n.Decode(&v); err == nil {
			return v, true
		}
	}
	d.typeProblem(path, what+" must be true or false", n)
	return false, false
}

func (d *decoder) anyMap(n *yaml.Node, path, what string) map[string]any {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.typeProblem(path, what+" must be a mapping (key: value lines)", n)
		return nil
	}
	m := map[string]any{}
	if err := n.Decode(&m); err != nil {
		d.typeProblem(path, what+": "+err.Error(), n)
		return nil
	}
	return jsonable(m).(map[string]any)
}

// jsonable turns yaml.v3's decoded values into JSON-encodable ones (map[any]any cannot be).
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonable(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = jsonable(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = jsonable(x)
		}
		return t
	}
	return v
}

func (d *decoder) seq(n *yaml.Node, path, what string, each func(c *yaml.Node, path string)) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.typeProblem(path, what+" must be a list (lines starting with '- ')", n)
		return
	}
	for i, c := range n.Content {
		each(c, fmt.Sprintf("%s/%d", path, i))
	}
}

func (d *decoder) flowRoot(root *yaml.Node) {
	f := d.f
	if isNull(resolve(root)) {
		f.problem("", CodeSchema, diag.Error, "the file is empty; a flow needs at least version, agents and interactions", f.Span(""))
		return
	}
	d.fields(root, "", "the flow", map[string]fieldFn{
		"version":     func(_, v *yaml.Node, p string) { f.Version = d.str(v, p, "version") },
		"name":        func(_, v *yaml.Node, p string) { f.Title = d.str(v, p, "name") },
		"description": func(_, v *yaml.Node, p string) { f.Description = d.str(v, p, "description") },
		"commonRules": func(_, v *yaml.Node, p string) {
			d.fields(v, p, "commonRules", map[string]fieldFn{
				"ruleChainRefs": func(_, v *yaml.Node, p string) { f.CommonRules.RuleChainRefs = d.strList(v, p, "ruleChainRefs") },
				"rules":         func(_, v *yaml.Node, p string) { f.CommonRules.Rules = d.strList(v, p, "rules") },
			})
		},
		"policy": func(_, v *yaml.Node, p string) {
			d.fields(v, p, "policy", map[string]fieldFn{
				"autoApply": func(_, v *yaml.Node, p string) { f.Policy.AutoApply, _ = d.boolean(v, p, "autoApply") },
				"dependencyTimeoutMs": func(_, v *yaml.Node, p string) {
					f.Policy.DependencyTimeoutMs, _ = d.integer(v, p, "policy.dependencyTimeoutMs")
				},
				"pricing": func(_, v *yaml.Node, p string) { f.Policy.Pricing = d.anyMap(v, p, "policy.pricing") },
				"budget": func(_, v *yaml.Node, p string) {
					b := &Budget{}
					if d.fields(v, p, "policy.budget", map[string]fieldFn{
						"usd": func(_, v *yaml.Node, p string) { x, ok := d.number(v, p, "policy.budget.usd"); b.USD = ptrIf(x, ok) },
						"tokens": func(_, v *yaml.Node, p string) {
							x, ok := d.integer(v, p, "policy.budget.tokens")
							b.Tokens = ptrIf(x, ok)
						},
					}) {
						f.Policy.Budget = b
					}
				},
			})
		},
		"agents": func(_, v *yaml.Node, p string) {
			d.seq(v, p, "agents", func(c *yaml.Node, p string) { f.Agents = append(f.Agents, d.agent(c, p)) })
		},
		"systemNodes": func(_, v *yaml.Node, p string) {
			d.seq(v, p, "systemNodes", func(c *yaml.Node, p string) { f.SystemNodes = append(f.SystemNodes, d.systemNode(c, p)) })
		},
		"interactions": func(_, v *yaml.Node, p string) {
			d.seq(v, p, "interactions", func(c *yaml.Node, p string) { f.Interactions = append(f.Interactions, d.interaction(c, p)) })
		},
		"layout": func(_, v *yaml.Node, p string) { d.layout(v, p) },
	})
}

func (d *decoder) agent(n *yaml.Node, path string) *Agent {
	a := &Agent{Path: path}
	d.fields(n, path, "an agent", map[string]fieldFn{
		"id":           func(_, v *yaml.Node, p string) { a.ID = d.str(v, p, "id") },
		"name":         func(_, v *yaml.Node, p string) { a.Name = d.str(v, p, "name") },
		"role":         func(_, v *yaml.Node, p string) { a.Role = d.str(v, p, "role") },
		"description":  func(_, v *yaml.Node, p string) { a.Description = d.str(v, p, "description") },
		"instructions": func(_, v *yaml.Node, p string) { a.Instructions = d.str(v, p, "instructions") },
		"rules":        func(_, v *yaml.Node, p string) { a.Rules = d.strList(v, p, "rules") },
		"skills":       func(_, v *yaml.Node, p string) { a.Skills = d.strList(v, p, "skills") },
		"mcp":          func(_, v *yaml.Node, p string) { a.MCP = d.strList(v, p, "mcp") },
		"files":        func(_, v *yaml.Node, p string) { a.Files = d.strList(v, p, "files") },
		"runtime":      func(_, v *yaml.Node, p string) { a.Runtime = d.runtime(v, p) },
	})
	return a
}

func (d *decoder) systemNode(n *yaml.Node, path string) *SystemNode {
	s := &SystemNode{Path: path}
	d.fields(n, path, "a system node", map[string]fieldFn{
		"id":      func(_, v *yaml.Node, p string) { s.ID = d.str(v, p, "id") },
		"type":    func(_, v *yaml.Node, p string) { s.Type = d.str(v, p, "type") },
		"role":    func(_, v *yaml.Node, p string) { s.Role = d.str(v, p, "role") },
		"name":    func(_, v *yaml.Node, p string) { s.Name = d.str(v, p, "name") },
		"runtime": func(_, v *yaml.Node, p string) { s.Runtime = d.runtime(v, p) },
		"params":  func(_, v *yaml.Node, p string) { s.Params = d.anyMap(v, p, "params") },
	})
	return s
}

func (d *decoder) runtime(n *yaml.Node, path string) *Runtime {
	r := &Runtime{}
	ok := d.fields(n, path, "runtime", map[string]fieldFn{
		"kind":      func(_, v *yaml.Node, p string) { r.Kind = d.str(v, p, "runtime.kind") },
		"backendId": func(_, v *yaml.Node, p string) { r.BackendID = d.str(v, p, "runtime.backendId") },
		"cwdMode":   func(_, v *yaml.Node, p string) { r.CwdMode = d.str(v, p, "runtime.cwdMode") },
		"env":       func(_, v *yaml.Node, p string) { r.Env = d.strList(v, p, "runtime.env") },
		"secrets":   func(_, v *yaml.Node, p string) { r.Secrets = d.strList(v, p, "runtime.secrets") },
		"command":   func(_, v *yaml.Node, p string) { r.Command = d.strList(v, p, "runtime.command") },
		"model":     func(_, v *yaml.Node, p string) { r.Model = d.str(v, p, "runtime.model") },
		"maxTurns": func(_, v *yaml.Node, p string) {
			x, _ := d.integer(v, p, "runtime.maxTurns")
			r.MaxTurns = int(x)
		},
		"allowedTools":   func(_, v *yaml.Node, p string) { r.AllowedTools = d.strList(v, p, "runtime.allowedTools") },
		"permissionMode": func(_, v *yaml.Node, p string) { r.PermissionMode = d.str(v, p, "runtime.permissionMode") },
		"codexSandbox":   func(_, v *yaml.Node, p string) { r.CodexSandbox = d.str(v, p, "runtime.codexSandbox") },
		"geminiApprovalMode": func(_, v *yaml.Node, p string) {
			r.GeminiApprovalMode = d.str(v, p, "runtime.geminiApprovalMode")
		},
		"interactive": func(_, v *yaml.Node, p string) { r.Interactive, _ = d.boolean(v, p, "runtime.interactive") },
		"network":     func(_, v *yaml.Node, p string) { r.Network = d.str(v, p, "runtime.network") },
		"unixSockets": func(_, v *yaml.Node, p string) { r.UnixSockets = d.strList(v, p, "runtime.unixSockets") },
		"maxCostUsd":  func(_, v *yaml.Node, p string) { r.MaxCostUSD, _ = d.number(v, p, "runtime.maxCostUsd") },
		"maxModelCalls": func(_, v *yaml.Node, p string) {
			if x, ok := d.integer(v, p, "runtime.maxModelCalls"); ok {
				r.MaxModelCalls = &x
			}
		},
		"shared": func(_, v *yaml.Node, p string) { r.Shared = d.strList(v, p, "runtime.shared") },
		"setup":  func(_, v *yaml.Node, p string) { r.Setup = d.strList(v, p, "runtime.setup") },
		"sessionLoop": func(_, v *yaml.Node, p string) {
			sl := &SessionLoop{}
			if d.fields(v, p, "runtime.sessionLoop", map[string]fieldFn{
				"maxIterations": func(_, v *yaml.Node, p string) { x, _ := d.integer(v, p, "maxIterations"); sl.MaxIterations = int(x) },
				"delayMs":       func(_, v *yaml.Node, p string) { x, _ := d.integer(v, p, "delayMs"); sl.DelayMs = int(x) },
				"featureList":   func(_, v *yaml.Node, p string) { sl.FeatureList = d.str(v, p, "featureList") },
				"progressFile":  func(_, v *yaml.Node, p string) { sl.ProgressFile = d.str(v, p, "progressFile") },
			}) {
				r.SessionLoop = sl
			}
		},
	})
	if !ok {
		return nil
	}
	return r
}

func (d *decoder) interaction(n *yaml.Node, path string) *Interaction {
	in := &Interaction{Path: path}
	d.fields(n, path, "an interaction", map[string]fieldFn{
		"id":          func(_, v *yaml.Node, p string) { in.ID = d.str(v, p, "id") },
		"patternId":   func(_, v *yaml.Node, p string) { in.PatternID = d.str(v, p, "patternId") },
		"name":        func(_, v *yaml.Node, p string) { in.Name = d.str(v, p, "name") },
		"description": func(_, v *yaml.Node, p string) { in.Description = d.str(v, p, "description") },
		"dependsOn":   func(_, v *yaml.Node, p string) { in.DependsOn = d.strList(v, p, "dependsOn") },
		"edges": func(_, v *yaml.Node, p string) {
			d.seq(v, p, "edges", func(c *yaml.Node, p string) { in.Edges = append(in.Edges, d.edge(c, p)) })
		},
	})
	for i, e := range in.Edges {
		if e.ID == "" {
			e.ID = fmt.Sprintf("%s-e%d", in.ID, i+1)
		}
	}
	return in
}

func (d *decoder) edge(n *yaml.Node, path string) *Edge {
	e := &Edge{Path: path}
	d.fields(n, path, "an edge", map[string]fieldFn{
		"id":     func(_, v *yaml.Node, p string) { e.ID = d.str(v, p, "id") },
		"source": func(_, v *yaml.Node, p string) { e.Source = d.str(v, p, "source") },
		"target": func(_, v *yaml.Node, p string) { e.Target = d.str(v, p, "target") },
		"data":   func(_, v *yaml.Node, p string) { d.edgeData(v, p, &e.Data) },
	})
	return e
}

func (d *decoder) edgeData(n *yaml.Node, path string, ed *EdgeData) {
	d.fields(n, path, "edge data", map[string]fieldFn{
		"intent":      func(_, v *yaml.Node, p string) { ed.Intent = d.str(v, p, "intent") },
		"topology":    func(_, v *yaml.Node, p string) { ed.Topology = d.str(v, p, "topology") },
		"messageForm": func(_, v *yaml.Node, p string) { ed.MessageForm = d.str(v, p, "messageForm") },
		"sync":        func(_, v *yaml.Node, p string) { ed.Sync = d.str(v, p, "sync") },
		"termination": func(_, v *yaml.Node, p string) { ed.Termination = d.termination(v, p) },
		"verification": func(_, v *yaml.Node, p string) {
			if rv := resolve(v); rv.Kind == yaml.ScalarNode && !isNull(rv) {
				ed.Verification = []string{rv.Value}
				return
			}
			ed.Verification = d.strList(v, p, "verification")
		},
		"params": func(_, v *yaml.Node, p string) { ed.Params = d.anyMap(v, p, "params") },
		"observability": func(_, v *yaml.Node, p string) {
			o := &Observability{}
			if d.fields(v, p, "observability", map[string]fieldFn{
				"logs": func(_, v *yaml.Node, p string) { b, ok := d.boolean(v, p, "observability.logs"); o.Logs = ptrIf(b, ok) },
				"traces": func(_, v *yaml.Node, p string) {
					b, ok := d.boolean(v, p, "observability.traces")
					o.Traces = ptrIf(b, ok)
				},
				"retain_days": func(_, v *yaml.Node, p string) {
					x, ok := d.integer(v, p, "retain_days")
					o.RetainDays = ptrIf(int(x), ok)
				},
			}) {
				ed.Observability = o
			}
		},
		"sources": func(_, v *yaml.Node, p string) {
			d.seq(v, p, "sources", func(c *yaml.Node, p string) {
				var s Source
				d.fields(c, p, "a source", map[string]fieldFn{
					"kind": func(_, v *yaml.Node, p string) { s.Kind = d.str(v, p, "source kind") },
					"ref":  func(_, v *yaml.Node, p string) { s.Ref = d.str(v, p, "source ref") },
					"note": func(_, v *yaml.Node, p string) { s.Note = d.str(v, p, "source note") },
				})
				ed.Sources = append(ed.Sources, s)
			})
		},
	})
}

func ptrIf[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}

func (d *decoder) termination(n *yaml.Node, path string) *Termination {
	t := &Termination{Path: path}
	list := func(v *yaml.Node, p, what string) []*Termination {
		var out []*Termination
		d.seq(v, p, what, func(c *yaml.Node, p string) { out = append(out, d.termination(c, p)) })
		return out
	}
	if !d.fields(n, path, "termination", map[string]fieldFn{
		"type": func(_, v *yaml.Node, p string) { t.Type = d.str(v, p, "termination type") },
		"rounds": func(_, v *yaml.Node, p string) {
			x, ok := d.integer(v, p, "rounds")
			t.Rounds = ptrIf(int(x), ok)
		},
		"ms": func(_, v *yaml.Node, p string) { x, ok := d.integer(v, p, "ms"); t.Ms = ptrIf(x, ok) },
		"threshold": func(_, v *yaml.Node, p string) {
			x, ok := d.number(v, p, "threshold")
			t.Threshold = ptrIf(x, ok)
		},
		"metric": func(_, v *yaml.Node, p string) { t.Metric = d.str(v, p, "metric") },
		"op":     func(_, v *yaml.Node, p string) { t.Op = d.str(v, p, "op") },
		"value":  func(_, v *yaml.Node, p string) { x, ok := d.number(v, p, "value"); t.Value = ptrIf(x, ok) },
		"usd":    func(_, v *yaml.Node, p string) { x, ok := d.number(v, p, "usd"); t.USD = ptrIf(x, ok) },
		"tokens": func(_, v *yaml.Node, p string) { x, ok := d.integer(v, p, "tokens"); t.Tokens = ptrIf(x, ok) },
		"any":    func(_, v *yaml.Node, p string) { t.Any = list(v, p, "any") },
		"all":    func(_, v *yaml.Node, p string) { t.All = list(v, p, "all") },
	}) {
		return nil
	}
	return t
}

func (d *decoder) layout(n *yaml.Node, path string) {
	f := d.f
	d.fields(n, path, "layout", map[string]fieldFn{
		"nodes": func(_, v *yaml.Node, p string) {
			v = resolve(v)
			if isNull(v) {
				return
			}
			if v.Kind != yaml.MappingNode {
				d.typeProblem(p, "layout.nodes must map node ids to {x, y}", v)
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				id, pv := v.Content[i].Value, v.Content[i+1]
				pp := p + "/" + escape(id)
				var pt Point
				d.fields(pv, pp, "a layout position", map[string]fieldFn{
					"x": func(_, v *yaml.Node, p string) { pt.X, _ = d.number(v, p, "x") },
					"y": func(_, v *yaml.Node, p string) { pt.Y, _ = d.number(v, p, "y") },
				})
				f.Layout.Nodes[id] = pt
			}
		},
		"edges": func(_, v *yaml.Node, p string) {
			for id, x := range d.anyMap(v, p, "layout.edges") {
				if m, ok := x.(map[string]any); ok {
					f.Layout.Edges[id] = m
				}
			}
		},
	})
}
