package validate

import (
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/pattern"
)

// The closed value sets of the flow format (spec §4.1/§4.2, DESIGN.md). The JSON Schema in
// schema/flow.schema.json carries the same lists; a test keeps the two in step.
var (
	Intents          = []string{"solve", "verify", "negotiate", "explore", "simulate", "align"}
	Topologies       = []string{"p2p", "manager_worker", "pipeline", "blackboard", "market_auction", "debate_judge", "broker", "router_targeted", "broadcast"}
	MessageForms     = []string{"nl_text", "structured_json", "acl_performative", "multimodal"}
	SyncModes        = []string{"turn_based", "req_res", "async", "streaming"}
	TerminationTypes = pattern.TerminationTypes
	Verifications    = []string{"critic_loop", "cross_check_vote", "tool_based", "sandbox_constraints", "audit_log"}
	RuntimeKinds     = []string{"cli"}
	BackendIDs       = []string{"auto", "claude", "codex", "gemini", "command", "dry-run"}
	CwdModes         = []string{"workspace", "agentHome"}
	// NetworkModes are runtime.network's values; without one the agent keeps its network.
	NetworkModes = []string{"none", "open"}
	// PermissionModes are Claude Code's --permission-mode values (2.1.330 lists acceptEdits,
	// auto, bypassPermissions, manual, dontAsk and plan, and still takes default).
	PermissionModes = []string{"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto", "manual"}
	// CodexSandboxes are Codex CLI's --sandbox values.
	CodexSandboxes = []string{"read-only", "workspace-write", "danger-full-access"}
	// GeminiApprovalModes are Gemini CLI's --approval-mode values.
	GeminiApprovalModes = []string{"default", "auto_edit", "yolo", "plan"}
	SystemNodeTypes     = flow.SystemNodeTypes
	SourceKinds         = []string{"paper", "spec"}
	QualityGateOps      = []string{">=", "<="}
	// QualityGateMetrics are the metrics the run engine measures. A project-specific metric is
	// written "custom:<name>" and is not checked.
	// From task_done on they are the pattern library's own gates (patterns/Pnn-*.json).
	QualityGateMetrics = []string{"tests_passed", "build_passed", "lint_errors", "score", "coverage", "review_approved",
		"citations_count", "tool_check_pass", "task_done", "phase_concluded", "artifact_valid", "open_errors", "solution_posted", "deal_closed"}
)

// Enums names every enum by the model field it constrains, for the schema test and docs.
var Enums = map[string][]string{
	"intent":                     Intents,
	"topology":                   Topologies,
	"messageForm":                MessageForms,
	"sync":                       SyncModes,
	"termination.type":           TerminationTypes,
	"termination.op":             QualityGateOps,
	"verification":               Verifications,
	"runtime.kind":               RuntimeKinds,
	"runtime.backendId":          BackendIDs,
	"runtime.cwdMode":            CwdModes,
	"runtime.network":            NetworkModes,
	"runtime.permissionMode":     PermissionModes,
	"runtime.codexSandbox":       CodexSandboxes,
	"runtime.geminiApprovalMode": GeminiApprovalModes,
	"systemNode.type":            SystemNodeTypes,
	"source.kind":                SourceKinds,
}
