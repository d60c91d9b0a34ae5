// Package pattern is the library of the 20 interaction patterns (spec §5, P01…P20): it loads
// and checks the templates embedded from patterns/, answers lookups by id or alias, and
// instantiates a pattern as a subgraph (agents, system nodes, one interaction, positions) in
// plain structs whose yaml/json tags match the flow YAML, so the flow package can marshal them.
// It knows nothing of flow text edits or JSON-RPC.
package pattern

import "strings"

// The taxonomy axes (spec §4.1). Order is the spec's order.
var (
	Intents          = []string{"solve", "verify", "negotiate", "explore", "simulate", "align"}
	Topologies       = []string{"p2p", "manager_worker", "pipeline", "blackboard", "market_auction", "debate_judge", "broker", "router_targeted", "broadcast"}
	MessageForms     = []string{"nl_text", "structured_json", "acl_performative", "multimodal"}
	SyncModes        = []string{"turn_based", "req_res", "async", "streaming"}
	TerminationTypes = []string{"max_rounds", "timeout_ms", "judge_decision", "consensus_threshold", "quality_gate", "max_cost_usd", "max_tokens"}
	Verifications    = []string{"critic_loop", "cross_check_vote", "tool_based", "sandbox_constraints", "audit_log"}
	// SystemTypes are the system-node kinds a flow may hold (DESIGN.md flow YAML additions).
	SystemTypes = []string{"judge", "blackboard", "router", "broker", "manager", "aggregator", "curator", "bridge"}
	// BackendIDs are the agent runtimes a flow may name (DESIGN.md).
	BackendIDs = []string{"auto", "claude", "codex", "gemini", "command", "dry-run"}
)

// CanonicalIDs lists the canonical snake_case pattern ids in P-number order: CanonicalIDs[0] is P01.
var CanonicalIDs = []string{
	"manager_worker", "role_play_pair", "chat_chain_pipeline", "sop_assembly_line", "debate_judge",
	"critic_refiner_curator", "majority_vote", "self_consistency", "contract_net", "bilateral_negotiation",
	"blackboard", "publish_subscribe", "broker_facilitator", "router_targeted", "hierarchical_tree",
	"red_team_judge", "fact_check_verifier", "plan_execute_reflect", "memory_sync", "protocol_bridge",
}

// Termination is one stop condition, or a list of them under Any (stop when any holds) or All
// (stop when all hold). It is the flow YAML's `termination` value, e.g.
// {type: max_rounds, rounds: 3} or {any: [{type: max_rounds, rounds: 3}, {type: judge_decision}]}.
type Termination struct {
	Type      string        `json:"type,omitempty" yaml:"type,omitempty"`
	Rounds    int           `json:"rounds,omitempty" yaml:"rounds,omitempty"`       // max_rounds
	Ms        int64         `json:"ms,omitempty" yaml:"ms,omitempty"`               // timeout_ms
	Threshold float64       `json:"threshold,omitempty" yaml:"threshold,omitempty"` // consensus_threshold, in (0,1]
	Metric    string        `json:"metric,omitempty" yaml:"metric,omitempty"`       // quality_gate
	Op        string        `json:"op,omitempty" yaml:"op,omitempty"`               // quality_gate: ">=" or "<="
	Value     *float64      `json:"value,omitempty" yaml:"value,omitempty"`         // quality_gate; a pointer so 0 is kept
	USD       float64       `json:"usd,omitempty" yaml:"usd,omitempty"`             // max_cost_usd, > 0
	Tokens    int64         `json:"tokens,omitempty" yaml:"tokens,omitempty"`       // max_tokens, ≥ 1
	Any       []Termination `json:"any,omitempty" yaml:"any,omitempty"`
	All       []Termination `json:"all,omitempty" yaml:"all,omitempty"`
}

// Runtime is an agent's (or an LLM-backed system node's) runtime, as in the flow YAML.
type Runtime struct {
	Kind      string `json:"kind" yaml:"kind"`
	BackendID string `json:"backendId" yaml:"backendId"`
	CwdMode   string `json:"cwdMode,omitempty" yaml:"cwdMode,omitempty"`
}

// Observability is an edge's logging settings (spec §4.2).
type Observability struct {
	Logs       bool `json:"logs" yaml:"logs"`
	Traces     bool `json:"traces" yaml:"traces"`
	RetainDays int  `json:"retain_days,omitempty" yaml:"retain_days,omitempty"`
}

// Source is a paper or specification a pattern comes from (spec §4.2 sources).
type Source struct {
	Kind string `json:"kind" yaml:"kind"` // paper | spec
	Ref  string `json:"ref" yaml:"ref"`
	Note string `json:"note,omitempty" yaml:"note,omitempty"`
}

// Role is one part a pattern needs: agents (kind "agent") or a system node (kind "system",
// with SystemType). Count is how many instances a fresh instantiation creates; MinCount is the
// fewest a flow using the pattern may have (the validator's missing-role rule).
type Role struct {
	Role        string   `json:"role"`
	Name        string   `json:"name"`
	Kind        string   `json:"kind"`
	SystemType  string   `json:"systemType,omitempty"`
	Count       int      `json:"count"`
	MinCount    int      `json:"minCount"`
	Layer       int      `json:"layer"` // layout band: row (layout TB) or column (layout LR)
	Runtime     *Runtime `json:"runtime,omitempty"`
	Description string   `json:"description"`
}

// TemplateEdge connects two roles. Between two different roles every source instance is
// joined to every target instance, unless Mode is "partition" (targets are split evenly among
// the sources, as in a tree). Between a role and itself each pair of instances is joined once.
// Messages names what travels on the edge (both directions), for the run engine and the canvas.
type TemplateEdge struct {
	Source   string   `json:"source"`
	Target   string   `json:"target"`
	Mode     string   `json:"mode,omitempty"` // "" (all pairs) or "partition"
	Messages []string `json:"messages"`
}

// Route is one of the pattern's own message routes: what a node playing From sends to a node
// playing To when the pattern runs, whatever edges are drawn (a debate's debaters read each
// other's answers even when each is drawn only to the judge). The run engine's access rules
// are the routes between the roles present plus the drawn edges; the pattern's document lists
// the same routes ("How AgentCanvas runs it").
type Route struct {
	From     string   `json:"from"`
	To       string   `json:"to"`
	Messages []string `json:"messages"`
}

// Text is the route as the pattern documents write it: `debater → judge`: `final_answer`.
func (r Route) Text() string {
	msgs := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = "`" + m + "`"
	}
	return "`" + r.From + " → " + r.To + "`: " + strings.Join(msgs, ", ")
}

// Template is the parsed .json file beside each pattern's .md.
type Template struct {
	ID                 string         `json:"id"`
	PatternID          string         `json:"patternId"`
	Name               string         `json:"name"`
	Summary            string         `json:"summary"`
	Intent             string         `json:"intent"`
	Topology           string         `json:"topology"`
	MessageForm        string         `json:"messageForm"`
	Sync               string         `json:"sync"`
	Verification       string         `json:"verification"`
	Layout             string         `json:"layout"` // TB (layers are rows) or LR (layers are columns)
	Roles              []Role         `json:"roles"`
	Edges              []TemplateEdge `json:"edges"`
	Routes             []Route        `json:"routes"`
	DefaultTermination Termination    `json:"defaultTermination"`
	Params             map[string]any `json:"params"`
	Observability      Observability  `json:"observability"`
	Sources            []Source       `json:"sources"`
}

// Pattern is one library entry. Doc is the pattern's Markdown document. The json tags are
// for JSON-RPC answers (agentcanvas/listPatterns).
type Pattern struct {
	ID                 string         `json:"id"`                 // "P05"
	PatternID          string         `json:"patternId"`          // "debate_judge"
	Name               string         `json:"name"`               // "Debate + Judge"
	Topology           string         `json:"topology"`           // spec §4.1 topology
	Roles              []Role         `json:"roles"`              //
	DefaultTermination Termination    `json:"defaultTermination"` //
	DefaultParams      map[string]any `json:"defaultParams"`      // numbers are int64 or float64
	Doc                string         `json:"doc"`                // the .md file
	Template           Template       `json:"template"`           // the whole .json file
}
