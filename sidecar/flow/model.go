// Package flow is the flow model: a flow YAML file (spec §10 plus DESIGN.md's additions)
// loaded through yaml.v3's Node API so every field keeps its source range, and edited
// through minimal text edits so comments, key order and untouched bytes survive.
//
// The YAML text is the single source of truth. A Flow is a read-only view of one version of
// that text; edits produce TextEdits against it, never a re-marshalled file.
package flow

import (
	"gopkg.in/yaml.v3"

	"github.com/agentcanvas/agentcanvas/sidecar/diag"
	"github.com/agentcanvas/agentcanvas/sidecar/span"
)

// Flow is one loaded flow file.
type Flow struct {
	File         string         `json:"file"`
	Name         string         `json:"name"` // the file name without .yaml; logs are grouped by it
	Version      string         `json:"version,omitempty"`
	Title        string         `json:"title,omitempty"` // the optional top-level "name:" field
	Description  string         `json:"description,omitempty"`
	CommonRules  CommonRules    `json:"commonRules"`
	Policy       Policy         `json:"policy"`
	Agents       []*Agent       `json:"agents"`
	SystemNodes  []*SystemNode  `json:"systemNodes"`
	Interactions []*Interaction `json:"interactions"`
	Layout       Layout         `json:"layout"`

	// Spans maps a model path ("/agents/1/runtime/backendId") to the source range of its
	// value; KeySpans maps it to the range of its key, when it has one.
	Spans    map[string]span.Range `json:"spans"`
	KeySpans map[string]span.Range `json:"-"`
	// Problems are the syntax and type errors found while loading.
	Problems []diag.Diagnostic `json:"-"`

	Doc   *yaml.Node  `json:"-"` // the document node; nil when the file does not parse
	Index *span.Index `json:"-"` // the source bytes, indexed
}

// CommonRules apply to every agent: rule-chain references such as
// "CODEX_GLOBAL:~/.codex/AGENTS.md" and "PROJECT:./AGENTS.md", then plain rules.
type CommonRules struct {
	RuleChainRefs []string `json:"ruleChainRefs,omitempty"`
	Rules         []string `json:"rules,omitempty"`
}

// Policy holds flow-wide run policy.
type Policy struct {
	// AutoApply lets a worker's proposal be applied without review when its quality gate
	// passed (spec §6.7). Off by default.
	AutoApply bool `json:"autoApply"`
	// Budget bounds the spend of a whole run, from the usage its agents report.
	Budget *Budget `json:"budget,omitempty"`
	// DependencyTimeoutMs bounds how long a [DEPENDENCY_REQUEST] waits for its value (0: one
	// hour); run --dependency-timeout overrides it.
	DependencyTimeoutMs int64 `json:"dependencyTimeoutMs,omitempty"`

	// Pricing overrides entries of the model gateway's price table for this flow's runs, in
	// its shape (provider → model prefix → prices; docs/agents.md, Gateway).
	Pricing map[string]any `json:"pricing,omitempty"`
}

// Budget is a run's spend limit: USD of reported cost, Tokens of reported tokens (either or
// both). The engine stops the run when one is reached.
type Budget struct {
	USD    *float64 `json:"usd,omitempty"`
	Tokens *int64   `json:"tokens,omitempty"`
}

// Agent is an LLM-backed node.
type Agent struct {
	ID           string   `json:"id"`
	Name         string   `json:"name,omitempty"`
	Role         string   `json:"role,omitempty"`
	Description  string   `json:"description,omitempty"`
	Instructions string   `json:"instructions,omitempty"`
	Rules        []string `json:"rules,omitempty"`
	Skills       []string `json:"skills,omitempty"`
	MCP          []string `json:"mcp,omitempty"`
	Files        []string `json:"files,omitempty"`
	Runtime      *Runtime `json:"runtime,omitempty"`
	Path         string   `json:"path"` // model path, e.g. "/agents/0"
}

// Runtime says how an agent (or an LLM-backed system node) is run.
type Runtime struct {
	Kind      string   `json:"kind,omitempty"`      // "cli"
	BackendID string   `json:"backendId,omitempty"` // auto, claude, codex, gemini, command, dry-run
	CwdMode   string   `json:"cwdMode,omitempty"`   // workspace, agentHome
	Env       []string `json:"env,omitempty"`       // environment-variable NAMES only
	// Secrets are more names passed like Env whose values are secrets: redacted wherever the
	// sidecar reports, logs or keeps text (the provider key variables are secret anyway).
	Secrets      []string `json:"secrets,omitempty"`
	Command      []string `json:"command,omitempty"` // argv for backendId command
	Model        string   `json:"model,omitempty"`
	MaxTurns     int      `json:"maxTurns,omitempty"`
	AllowedTools []string `json:"allowedTools,omitempty"`
	// The CLIs' own permission settings; unset, the engine's role defaults apply (a worker in
	// its sandbox may edit, every other role only reads; docs/agents.md).
	PermissionMode     string       `json:"permissionMode,omitempty"`     // claude --permission-mode
	CodexSandbox       string       `json:"codexSandbox,omitempty"`       // codex --sandbox: read-only, workspace-write, danger-full-access
	GeminiApprovalMode string       `json:"geminiApprovalMode,omitempty"` // gemini --approval-mode: default, auto_edit, yolo, plan
	Interactive        bool         `json:"interactive,omitempty"`        // a command agent keeps stdin open for answers
	Network            string       `json:"network,omitempty"`            // none: no TCP connect or bind (command agents, when confined); open: a gateway-routed agent may connect anywhere
	UnixSockets        []string     `json:"unixSockets,omitempty"`        // socket paths a confined agent may connect to (absolute or workspace-relative)
	SessionLoop        *SessionLoop `json:"sessionLoop,omitempty"`

	// MaxCostUSD is the agent's spend limit over the run, enforced by the model gateway before
	// each model call (docs/agents.md, Gateway); 0: none.
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
	// MaxModelCalls is the most model calls the agent may make over the run, counted by the
	// model gateway; nil: the default when the flow sets no spend limit for the agent
	// (docs/agents.md, Gateway), 0: none.
	MaxModelCalls *int64 `json:"maxModelCalls,omitempty"`
	// Shared are workspace-relative dependency folders (node_modules, .venv…) linked into the
	// agent's sandbox read-only instead of copied; Setup is a command run once in the sandbox
	// after it is prepared, confined like the agent.
	Shared []string `json:"shared,omitempty"`
	Setup  []string `json:"setup,omitempty"`
}

// SessionLoop runs an agent as repeated fresh-context sessions (cli-agent-session-loop.md).
type SessionLoop struct {
	MaxIterations int    `json:"maxIterations,omitempty"`
	DelayMs       int    `json:"delayMs,omitempty"`
	FeatureList   string `json:"featureList,omitempty"`  // relative to the agent's working folder
	ProgressFile  string `json:"progressFile,omitempty"` // relative to the agent's working folder
}

// SystemNode types.
var SystemNodeTypes = []string{"judge", "blackboard", "router", "broker", "manager", "aggregator", "curator", "bridge"}

// SystemNode is a node the engine provides (a blackboard, a router…), drawn with its own
// icon. Judges, managers and curators may be LLM-backed through Runtime.
type SystemNode struct {
	ID      string         `json:"id"`
	Type    string         `json:"type"`
	Role    string         `json:"role,omitempty"` // the pattern role it plays, e.g. tiebreak for a judge
	Name    string         `json:"name,omitempty"`
	Runtime *Runtime       `json:"runtime,omitempty"`
	Params  map[string]any `json:"params,omitempty"`
	Path    string         `json:"path"`
}

// Interaction is one use of a pattern: a set of edges between nodes.
type Interaction struct {
	ID          string   `json:"id"`
	PatternID   string   `json:"patternId"`
	Name        string   `json:"name,omitempty"`
	Description string   `json:"description,omitempty"`
	DependsOn   []string `json:"dependsOn,omitempty"` // interactions that must finish first
	Edges       []*Edge  `json:"edges"`
	Path        string   `json:"path"`
}

// Edge connects two nodes within an interaction.
type Edge struct {
	ID     string   `json:"id"` // as written, or derived as "<interaction>-e<n>"
	Source string   `json:"source"`
	Target string   `json:"target"`
	Data   EdgeData `json:"data"`
	Path   string   `json:"path"`
}

// EdgeData carries the six interaction axes (spec §4.1) and the rest of §4.2.
type EdgeData struct {
	Intent        string         `json:"intent,omitempty"`
	Topology      string         `json:"topology,omitempty"`
	MessageForm   string         `json:"messageForm,omitempty"`
	Sync          string         `json:"sync,omitempty"`
	Termination   *Termination   `json:"termination,omitempty"`
	Verification  []string       `json:"verification,omitempty"`
	Params        map[string]any `json:"params,omitempty"`
	Observability *Observability `json:"observability,omitempty"`
	Sources       []Source       `json:"sources,omitempty"`
}

// Termination is one condition, or an any:/all: combination of conditions.
type Termination struct {
	Type      string         `json:"type,omitempty"`
	Rounds    *int           `json:"rounds,omitempty"`
	Ms        *int64         `json:"ms,omitempty"`
	Threshold *float64       `json:"threshold,omitempty"`
	Metric    string         `json:"metric,omitempty"`
	Op        string         `json:"op,omitempty"`
	Value     *float64       `json:"value,omitempty"`
	USD       *float64       `json:"usd,omitempty"`    // max_cost_usd
	Tokens    *int64         `json:"tokens,omitempty"` // max_tokens
	Any       []*Termination `json:"any,omitempty"`
	All       []*Termination `json:"all,omitempty"`
	Path      string         `json:"path"`
}

// Walk calls fn for t and every condition nested in it.
func (t *Termination) Walk(fn func(*Termination)) {
	if t == nil {
		return
	}
	fn(t)
	for _, c := range t.Any {
		c.Walk(fn)
	}
	for _, c := range t.All {
		c.Walk(fn)
	}
}

// Observability of an edge (spec §4.2).
type Observability struct {
	Logs       *bool `json:"logs,omitempty"`
	Traces     *bool `json:"traces,omitempty"`
	RetainDays *int  `json:"retain_days,omitempty"` // nil: unset, the log is kept
}

// Source is a paper or spec an interaction follows.
type Source struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
	Note string `json:"note,omitempty"`
}

// Layout keeps canvas positions, by node id and edge id.
type Layout struct {
	Nodes map[string]Point          `json:"nodes"`
	Edges map[string]map[string]any `json:"edges"`
}

// Point is a canvas position.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Node is any node an edge may name: an agent or a system node.
type Node struct {
	ID     string
	Agent  *Agent      // set for agents
	System *SystemNode // set for system nodes
}

// NodeByID finds an agent or system node.
func (f *Flow) NodeByID(id string) (Node, bool) {
	for _, a := range f.Agents {
		if a.ID == id {
			return Node{ID: id, Agent: a}, true
		}
	}
	for _, s := range f.SystemNodes {
		if s.ID == id {
			return Node{ID: id, System: s}, true
		}
	}
	return Node{}, false
}

// Span returns the source range of a model path's value, falling back to the nearest
// enclosing path that has one, and to the start of the file.
func (f *Flow) Span(path string) span.Range {
	for p := path; ; p = parentPath(p) {
		if r, ok := f.Spans[p]; ok {
			return r
		}
		if p == "" {
			break
		}
	}
	return span.Range{Start: span.Pos{Line: 1, Col: 1}, End: span.Pos{Line: 1, Col: 1}}
}

// KeySpan returns the range of a path's key, or of its value when it has no key.
func (f *Flow) KeySpan(path string) span.Range {
	if r, ok := f.KeySpans[path]; ok {
		return r
	}
	return f.Span(path)
}

func parentPath(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return ""
}
