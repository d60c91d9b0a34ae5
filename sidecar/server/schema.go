package server

import (
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

// field documents one flow YAML field for hover and completion. The schema mirrors the
// loader's field tables (sidecar/flow/load.go); schema_test.go checks that every field
// named here is one the loader accepts.
type field struct {
	doc    string
	enum   []string // allowed values, when fixed
	fields map[string]*field
	// refs says the value names something in the flow: "node" (agent or system node id),
	// "pattern" (a pattern id), "interaction" (an interaction id).
	refs string
	// list marks a sequence of mappings (its items have fields); "*" in schema paths.
	list bool
}

// PatternIDs are the twenty canonical pattern ids, P01…P20 in order (DESIGN.md).
var PatternIDs = []string{
	"manager_worker", "role_play_pair", "chat_chain_pipeline", "sop_assembly_line", "debate_judge",
	"critic_refiner_curator", "majority_vote", "self_consistency", "contract_net", "bilateral_negotiation",
	"blackboard", "publish_subscribe", "broker_facilitator", "router_targeted", "hierarchical_tree",
	"red_team_judge", "fact_check_verifier", "plan_execute_reflect", "memory_sync", "protocol_bridge",
}

// patternAlias maps "P05" to "debate_judge" (and a canonical id to itself).
func patternAlias(id string) (canonical, alias string, ok bool) {
	for i, p := range PatternIDs {
		a := "P" + string(rune('0'+(i+1)/10)) + string(rune('0'+(i+1)%10))
		if strings.EqualFold(id, a) || id == p {
			return p, a, true
		}
	}
	return "", "", false
}

func fields(m map[string]*field) map[string]*field { return m }

var runtimeField = &field{doc: "How the node is run: an agent CLI and its settings.", fields: fields(map[string]*field{
	"kind":               {doc: "The runtime kind. Only `cli` (an agent command-line tool) exists.", enum: []string{"cli"}},
	"backendId":          {doc: "Which CLI runs the agent: `auto` picks an installed one; `command` runs `command:` with the prompt on stdin; `dry-run` answers without calling a model.", enum: []string{"auto", "claude", "codex", "gemini", "command", "dry-run"}},
	"cwdMode":            {doc: "The agent's working folder: `agentHome` (its sandbox) or `workspace` (read-only view of the workspace).", enum: []string{"agentHome", "workspace"}},
	"env":                {doc: "Names of environment variables passed to the agent. Names only: never write a secret's value in a flow."},
	"secrets":            {doc: "Names of environment variables passed to the agent whose values are secrets: redacted wherever the sidecar reports, logs or keeps text. The provider key variables (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY…) are secret without being listed."},
	"command":            {doc: "argv for `backendId: command`, e.g. `[bash, agents/judge.sh]`."},
	"model":              {doc: "The model name passed to the CLI."},
	"maxTurns":           {doc: "The most turns one session may take."},
	"maxCostUsd":         {doc: "The agent's spend limit over the run in US dollars, enforced by the model gateway before each model call."},
	"maxModelCalls":      {doc: "The most model calls the agent may make over the run, counted by the model gateway. Unset: 200 when the flow sets no other spend limit for the agent; `0`: no limit."},
	"allowedTools":       {doc: "Tools the CLI may use without asking."},
	"permissionMode":     {doc: "Claude Code's `--permission-mode`. Unset: `acceptEdits` for a worker in its sandbox, `dontAsk` (read only) for every other role.", enum: []string{"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto", "manual"}},
	"codexSandbox":       {doc: "Codex CLI's `--sandbox`. Unset: `workspace-write` for a worker in its sandbox, `read-only` for every other role.", enum: []string{"read-only", "workspace-write", "danger-full-access"}},
	"geminiApprovalMode": {doc: "Gemini CLI's `--approval-mode`. Unset: `auto_edit` for a worker in its sandbox, `default` (read only) for every other role.", enum: []string{"default", "auto_edit", "yolo", "plan"}},
	"network":            {doc: "`none`: the agent may not open or accept TCP connections (command agents; enforced by the kernel when agents are confined). Leave it out to keep the network.", enum: []string{"none"}},
	"unixSockets":        {doc: "Socket files a confined agent may connect to, absolute or workspace-relative, e.g. `[/var/run/docker.sock]`. Without it a confined agent can make no Unix socket; any grant opens every pathname Unix socket to it (the kernel's filter cannot tell paths apart)."},
	"shared":             {doc: "Dependency folders (`node_modules`, `.venv`, `vendor`, `target`) linked into the agent's sandbox read-only instead of copied; never part of a proposal."},
	"setup":              {doc: "A command run once in the agent's new sandbox, confined like the agent, e.g. `[npm, run, build]`; its output is in the run's log."},
	"sessionLoop": {doc: "Run the agent as repeated fresh-context sessions (cli-agent-session-loop.md).", fields: fields(map[string]*field{
		"maxIterations": {doc: "The most sessions."},
		"delayMs":       {doc: "Pause between sessions, in milliseconds."},
	})},
})}

var terminationConds = fields(map[string]*field{
	"type":      {doc: "The condition: `max_rounds` (rounds), `timeout_ms` (ms), `judge_decision`, `consensus_threshold` (threshold), `quality_gate` (metric, op, value).", enum: []string{"max_rounds", "timeout_ms", "judge_decision", "consensus_threshold", "quality_gate"}},
	"rounds":    {doc: "For `max_rounds`: the most rounds."},
	"ms":        {doc: "For `timeout_ms`: the time limit in milliseconds."},
	"threshold": {doc: "For `consensus_threshold`: the share of agreeing votes (0–1)."},
	"metric":    {doc: "For `quality_gate`: the metric checked, e.g. `tests_passed`."},
	"op":        {doc: "For `quality_gate`: `>=` or `<=`.", enum: []string{">=", "<="}},
	"value":     {doc: "For `quality_gate`: the value compared against."},
})

func init() {
	term := &field{doc: "When the interaction stops: one condition, or `any:`/`all:` lists of conditions. Every interaction needs one (no endless loops).", fields: map[string]*field{}}
	for k, v := range terminationConds {
		term.fields[k] = v
	}
	cond := &field{list: true, doc: "A list of termination conditions.", fields: terminationConds}
	term.fields["any"] = &field{list: true, doc: "Stop when any of these conditions holds.", fields: cond.fields}
	term.fields["all"] = &field{list: true, doc: "Stop when all of these conditions hold.", fields: cond.fields}
	schema.fields["interactions"].fields["edges"].fields["data"].fields["termination"] = term
}

// schema is the root of a flow file.
var schema = &field{doc: "A flow.", fields: fields(map[string]*field{
	"version":     {doc: "The flow format version, e.g. `\"1.0\"`."},
	"name":        {doc: "The flow's display name."},
	"description": {doc: "What the flow does."},
	"commonRules": {doc: "Rules every agent follows.", fields: fields(map[string]*field{
		"ruleChainRefs": {doc: "Rule files, e.g. `PROJECT:./AGENTS.md`, `CODEX_GLOBAL:~/.codex/AGENTS.md`."},
		"rules":         {doc: "Plain rules, one per item."},
	})},
	"policy": {doc: "Flow-wide run policy.", fields: fields(map[string]*field{
		"autoApply":           {doc: "Apply a worker's proposal without review when its interaction completed with its quality gate passed and the proposal applies cleanly. Off by default. The agentcanvas.autoApply setting (run --auto-apply) can only restrict it: the stricter wins.", enum: []string{"true", "false"}},
		"dependencyTimeoutMs": {doc: "How long an agent's dependency request waits for its value, in milliseconds (default one hour). Then a required dependency fails the agent and an optional one goes on with its default. `run --dependency-timeout` overrides it."},
	})},
	"agents": {list: true, doc: "The LLM-backed nodes.", fields: fields(map[string]*field{
		"id":           {doc: "The agent's id, unique among agents and system nodes; edges name it in `source`/`target`."},
		"name":         {doc: "Display name."},
		"role":         {doc: "The agent's role, e.g. `worker`, `judge`, `critic`, `planner`."},
		"description":  {doc: "What the agent is for."},
		"instructions": {doc: "The agent's prompt."},
		"rules":        {doc: "Rules for this agent only."},
		"skills":       {doc: "Skills the agent may use."},
		"mcp":          {doc: "MCP servers the agent may use."},
		"files":        {doc: "Workspace files or folders copied into the agent's sandbox; `\".\"` is the whole repository, as a git worktree holds it."},
		"runtime":      runtimeField,
	})},
	"systemNodes": {list: true, doc: "Nodes the engine provides: judges, blackboards, routers, brokers…", fields: fields(map[string]*field{
		"id":      {doc: "The node's id, unique among agents and system nodes."},
		"type":    {doc: "What the node is.", enum: flow.SystemNodeTypes},
		"name":    {doc: "Display name."},
		"runtime": runtimeField,
		"params":  {doc: "Type-specific settings."},
	})},
	"interactions": {list: true, doc: "Uses of patterns: sets of edges between nodes.", fields: fields(map[string]*field{
		"id":          {doc: "The interaction's id."},
		"patternId":   {doc: "The pattern this interaction follows: a canonical id such as `debate_judge`, or its alias `P05`.", refs: "pattern"},
		"name":        {doc: "Display name."},
		"description": {doc: "What the interaction is for."},
		"dependsOn":   {doc: "Interactions that must finish first.", refs: "interaction"},
		"edges": {list: true, doc: "The interaction's edges.", fields: fields(map[string]*field{
			"id":     {doc: "The edge's id (derived as `<interaction>-e<n>` when absent)."},
			"source": {doc: "The node the edge starts from (an agent or system node id).", refs: "node"},
			"target": {doc: "The node the edge goes to (an agent or system node id).", refs: "node"},
			"data": {doc: "The interaction axes of this edge.", fields: fields(map[string]*field{
				"intent":       {doc: "The purpose.", enum: []string{"solve", "verify", "negotiate", "explore", "simulate", "align"}},
				"topology":     {doc: "The structure.", enum: []string{"p2p", "manager_worker", "pipeline", "blackboard", "market_auction", "debate_judge", "broker", "router_targeted", "broadcast"}},
				"messageForm":  {doc: "The message form.", enum: []string{"nl_text", "structured_json", "acl_performative", "multimodal"}},
				"sync":         {doc: "The synchronisation.", enum: []string{"turn_based", "req_res", "async", "streaming"}},
				"verification": {doc: "How results are checked: `critic_loop`, `cross_check_vote`, `tool_based`, `sandbox_constraints`, `audit_log`."},
				"params": {doc: "Pattern parameters.", fields: fields(map[string]*field{
					"timeout_ms":         {doc: "A time limit in milliseconds (also satisfies the timeout rule)."},
					"rate_limit_per_min": {doc: "Messages per minute (broker, router)."},
					"retention":          {doc: "How long a blackboard keeps entries: `{keep_last_n: 200}` or `{keep_last_days: 7}`."},
				})},
				"observability": {doc: "Logging for this edge.", fields: fields(map[string]*field{
					"logs":        {doc: "Log messages (default true).", enum: []string{"true", "false"}},
					"traces":      {doc: "Record traces (default false).", enum: []string{"true", "false"}},
					"retain_days": {doc: "Days to keep logs."},
				})},
				"sources": {list: true, doc: "Papers or specs the interaction follows.", fields: fields(map[string]*field{
					"kind": {doc: "`paper` or `spec`.", enum: []string{"paper", "spec"}},
					"ref":  {doc: "The reference."},
					"note": {doc: "A note."},
				})},
			})},
		})},
	})},
	"layout": {doc: "Canvas positions, kept by the canvas.", fields: fields(map[string]*field{
		"nodes": {doc: "Node positions by id: `{x, y}`."},
		"edges": {doc: "Edge routing by id."},
	})},
})}

// lookup walks the schema along a model path ("/agents/0/runtime/backendId"); numeric
// segments step into list items.
func lookup(path string) *field {
	f := schema
	if path == "" {
		return f
	}
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		// An index steps into a list: of mappings (list) or of scalars (no fields).
		if (f.list || f.fields == nil) && (isIndex(seg) || seg == "*") {
			continue
		}
		if f.fields == nil {
			return nil
		}
		next, ok := f.fields[strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")]
		if !ok {
			return nil
		}
		f = next
	}
	return f
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
