// Package validate checks a loaded flow against the rules of spec §8 and more, producing
// diagnostics with stable codes, messages that say how to fix the problem, and mechanical
// fixes where there is one. docs/validation.md lists every code with a broken and a fixed
// example.
package validate

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// The stable diagnostic codes. yaml-syntax and schema also come from the loader.
const (
	CodeYAMLSyntax          = flow.CodeYAMLSyntax
	CodeSchema              = flow.CodeSchema
	CodeDuplicateID         = "duplicate-id"
	CodeUnknownAgent        = "unknown-agent"
	CodeUnknownPattern      = "unknown-pattern"
	CodeTerminationRequired = "termination-required"
	CodeInvalidTermination  = "invalid-termination"
	CodeTimeoutRequired     = "timeout-required"
	CodeRetentionRequired   = "retention-required"
	CodeRateLimitRequired   = "rate-limit-required"
	CodeRawSecret           = "raw-secret"
	CodeUnsafePath          = "unsafe-path"
	CodeMissingRole         = "missing-role"
	CodeSkillInvalid        = "skill-invalid"
	CodeMCPPolicy           = "mcp-policy"
	CodeRoundCap            = "round-cap"
	CodeCommandPath         = "command-path"
	CodeSpendUnknown        = "spend-unknown"
	CodePermissionMode      = "permission-mode"
)

// Codes lists every code, in the order docs/validation.md documents them.
var Codes = []string{
	CodeYAMLSyntax, CodeSchema, CodeDuplicateID, CodeUnknownAgent, CodeUnknownPattern,
	CodeTerminationRequired, CodeInvalidTermination, CodeTimeoutRequired, CodeRetentionRequired,
	CodeRateLimitRequired, CodeRawSecret, CodeUnsafePath, CodeMissingRole, CodeSkillInvalid, CodeMCPPolicy,
	CodeRoundCap, CodeCommandPath, CodeSpendUnknown, CodePermissionMode,
}

// Workspace gives the rules that look outside the flow file what they need.
type Workspace struct {
	// Root is the workspace folder ("" when unknown: workspace rules are skipped).
	Root string
	// MCPAllowlist is the set of MCP servers agents may use. nil means "read it from
	// Root/.agentcanvas/mcp-allowlist.json" (no file: every server is unlisted); set it to a
	// non-nil slice to supply it directly.
	MCPAllowlist []string
	// Rules are the person's allowed and blocked folders (the editor's settings, the command
	// line's flags), which agents' files must obey on top of the built-in rules. Rule
	// references are read by the sidecar, not copied into sandboxes: the built-in rules only.
	Rules safepath.Rules
}

// Flow validates f and returns every diagnostic, the loader's problems included, sorted.
func Flow(f *flow.Flow, ws Workspace) []diag.Diagnostic {
	c := &checker{f: f, ws: ws, out: append([]diag.Diagnostic(nil), f.Problems...)}
	for i, d := range c.out {
		// The loader leaves a zero range on a few problems inside YAML aliases (a key it
		// recorded no span for); point them at the nearest enclosing element instead.
		if d.Range.Start.Line == 0 {
			c.out[i].Range = f.KeySpan(d.Path)
		}
	}
	if f.Doc != nil {
		c.run()
	}
	diag.Sort(c.out)
	return c.out
}

// checker holds one validation pass.
type checker struct {
	f     *flow.Flow
	ws    Workspace
	out   []diag.Diagnostic
	nodes map[string]flow.Node
	// edgeIDs are every edge id (written or derived), for layout checks.
	edgeIDs map[string]bool
	// fixes and fixBytes count the quick fixes built so far (see FixBudget).
	fixes, fixBytes int
	// aliases is set when the file uses YAML aliases: then Spans is not the whole story.
	aliases bool
	// secretAt marks the paths raw-secret reported, so other rules stay quiet there.
	secretAt map[string]bool
	keys     map[string]bool // secretKey's answers
	skills   map[string]skillResult
	patterns map[string]patternInfo
	// missing marks the bounds (timeout, retention, rate limit) found missing per interaction.
	missing map[string]bool
	mcp     *allowlist
}

func (c *checker) run() {
	c.nodes = make(map[string]flow.Node, len(c.f.Agents)+len(c.f.SystemNodes))
	for _, a := range c.f.Agents {
		if _, dup := c.nodes[a.ID]; !dup && a.ID != "" {
			c.nodes[a.ID] = flow.Node{ID: a.ID, Agent: a}
		}
	}
	for _, s := range c.f.SystemNodes {
		if _, dup := c.nodes[s.ID]; !dup && s.ID != "" {
			c.nodes[s.ID] = flow.Node{ID: s.ID, System: s}
		}
	}
	c.secretAt = map[string]bool{}
	c.secrets()
	c.schema()
	c.unsafeIDs()
	c.duplicateIDs()
	c.references()
	c.interactions()
	c.honour() // honour.go
	c.spendUnknown()
	c.policyPricing() // gateway.go
	c.paths()
	c.sandboxSetup()
	c.workspace()
	c.permissions()
}

// report adds a diagnostic at r.
func (c *checker) report(path string, r span.Range, sev diag.Severity, code, msg string, fix *diag.Fix) {
	c.out = append(c.out, diag.Diagnostic{File: c.f.File, Range: r, Severity: sev, Code: code, Message: msg, Path: path, Fix: fix})
}

// at is the range of a path's value; head is the first line of it (for an element as a
// whole: a multi-line squiggle helps nobody).
func (c *checker) at(path string) span.Range { return c.f.Span(path) }

func (c *checker) head(path string) span.Range {
	r := c.f.Span(path)
	if r.End.Line > r.Start.Line {
		r.End = c.f.Index.At(c.f.Index.LineEnd(r.Start.Line))
	}
	return r
}

// has reports whether the file has a value at path, following YAML aliases (whose insides
// have no spans of their own).
func (c *checker) has(path string) bool {
	if _, ok := c.f.Spans[path]; ok {
		return true
	}
	return c.aliases && nodeAt(c.f, path) != nil
}

// mayHaveKey is a cheap pre-check before has() on a big file: does the text of the value at
// path mention one of the keys at all?
func (c *checker) mayHaveKey(path string, keys ...string) bool {
	r, ok := c.f.Spans[path]
	if !ok || c.aliases {
		return true
	}
	text := c.f.Index.Src()[r.Start.Offset:r.End.Offset]
	for _, k := range keys {
		if bytes.Contains(text, []byte(k)) {
			return true
		}
	}
	return false
}

// line is "line N" of a path, for messages that point elsewhere.
func (c *checker) line(path string) string { return fmt.Sprintf("line %d", c.at(path).Start.Line) }

// suggest returns the closest candidate to s, when one is close enough to be a typo or a
// prefix ("debate" → "debate_judge").
func suggest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, cand := range candidates {
		lc := strings.ToLower(cand)
		if ls == lc {
			return cand
		}
		d := editDistance(ls, lc)
		if len(ls) >= 3 && (strings.HasPrefix(lc, ls) || strings.HasPrefix(ls, lc) || strings.HasSuffix(lc, "_"+ls)) {
			d = min(d, 2)
		}
		if d < bestD {
			best, bestD = cand, d
		}
	}
	if best == "" || bestD > max(2, len(s)/3) {
		return ""
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func quoteList(vs []string) string { return strings.Join(vs, ", ") }

// enum reports a value outside its closed set, with a fix to the closest value.
func (c *checker) enum(path, what, value string, allowed []string) {
	if value == "" || slices.Contains(allowed, value) {
		return
	}
	msg := fmt.Sprintf("%s %q is not one of: %s", what, value, quoteList(allowed))
	var fix *diag.Fix
	if s := suggest(value, allowed); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
		fix = c.replaceFix(fmt.Sprintf("Change to %q", s), path, s)
	}
	c.report(path, c.at(path), diag.Error, CodeSchema, msg, fix)
}

// required reports a missing field of the element at path.
func (c *checker) required(path, key, value, what, example string) {
	c.requiredFix(path, key, value, what, example, nil)
}

// requiredFix is required with a quick fix that writes fixValue(), when there is one.
func (c *checker) requiredFix(path, key, value, what, example string, fixValue func() string) {
	if value != "" {
		return
	}
	var fix *diag.Fix
	if fixValue != nil {
		v := fixValue()
		fix = c.setFix(fmt.Sprintf("Add %s: %s", key, v), path+"/"+key, v)
	}
	kp := path + "/" + key
	if c.has(kp) {
		if r := c.at(kp); r.End.Offset > r.Start.Offset {
			return // present but not a string: the loader reported its type
		}
		c.report(kp, c.f.KeySpan(kp), diag.Error, CodeSchema, fmt.Sprintf("%s has an empty %s; write %s", what, key, example), fix)
		return
	}
	c.report(path, c.head(path), diag.Error, CodeSchema, fmt.Sprintf("%s has no %s; add %s", what, key, example), fix)
}
