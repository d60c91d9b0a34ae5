// The canvas's contracts, shared by the extension host (extension/src/canvas) and the webview
// (extension/webview). Pure types and constants: no vscode import, so both bundles can use it.
//
// FlowModel mirrors the JSON of the sidecar's flow.Flow (sidecar/flow/model.go); FlowOp mirrors
// the edit operations of docs/flow-edits.md. The webview never writes YAML: it sends FlowOps, the
// host turns them into TextEdits through the sidecar and applies them to the TextDocument.

import type { AgentSpend } from "./spend";

export interface SrcPos {
  line: number; // 1-based
  column: number; // 1-based, in Unicode code points
  offset: number; // byte offset
}
export interface SrcRange {
  start: SrcPos;
  end: SrcPos;
}

export interface Runtime {
  kind?: string;
  backendId?: string; // auto, claude, codex, gemini, command, dry-run
  cwdMode?: string;
  env?: string[];
  command?: string[];
  model?: string;
  maxTurns?: number;
  allowedTools?: string[];
  permissionMode?: string;
  codexSandbox?: string;
  geminiApprovalMode?: string;
  sessionLoop?: { maxIterations?: number; delayMs?: number };
}

export interface Agent {
  id: string;
  name?: string;
  role?: string;
  description?: string;
  instructions?: string;
  rules?: string[];
  skills?: string[];
  mcp?: string[];
  files?: string[];
  runtime?: Runtime;
  path: string; // model path, e.g. "/agents/0"
}

export const SYSTEM_NODE_TYPES = [
  "judge",
  "blackboard",
  "router",
  "broker",
  "manager",
  "aggregator",
  "curator",
  "bridge",
] as const;
export type SystemNodeType = (typeof SYSTEM_NODE_TYPES)[number];

export interface SystemNode {
  id: string;
  type: string;
  name?: string;
  runtime?: Runtime;
  params?: Record<string, unknown>;
  path: string;
}

export interface Termination {
  type?: string; // max_rounds, timeout_ms, judge_decision, consensus_threshold, quality_gate, max_cost_usd, max_tokens
  rounds?: number;
  ms?: number;
  usd?: number; // max_cost_usd
  tokens?: number; // max_tokens
  threshold?: number;
  metric?: string;
  op?: string; // ">=" | "<="
  value?: number;
  any?: Termination[];
  all?: Termination[];
  path?: string;
}

export interface Observability {
  logs?: boolean;
  traces?: boolean;
  retain_days?: number;
}

export interface EdgeData {
  intent?: string;
  topology?: string;
  messageForm?: string;
  sync?: string;
  termination?: Termination;
  verification?: string[];
  params?: Record<string, unknown>;
  observability?: Observability;
  sources?: Array<{ kind: string; ref: string; note?: string }>;
}

export interface FlowEdge {
  id: string; // as written, or derived as "<interaction>-e<n>"
  source: string;
  target: string;
  data: EdgeData;
  path: string;
}

export interface Interaction {
  id: string;
  patternId: string;
  name?: string;
  description?: string;
  dependsOn?: string[];
  edges: FlowEdge[] | null;
  path: string;
}

export interface Point {
  x: number;
  y: number;
}

export interface FlowModel {
  file: string;
  name: string;
  version?: string;
  title?: string;
  description?: string;
  commonRules?: { ruleChainRefs?: string[]; rules?: string[] };
  policy?: { autoApply: boolean };
  agents: Agent[] | null;
  systemNodes: SystemNode[] | null;
  interactions: Interaction[] | null;
  layout: { nodes: Record<string, Point> | null; edges: Record<string, unknown> | null };
  spans: Record<string, SrcRange> | null;
}

export type Severity = "error" | "warning" | "info";

export interface Diagnostic {
  file: string;
  range: SrcRange;
  severity: Severity;
  code: string;
  message: string;
  path?: string;
  fix?: unknown;
}

/** What agentcanvas/loadFlow answers. flow is null when the text could not be read at all. */
export interface LoadFlowResult {
  flow: FlowModel | null;
  diagnostics: Diagnostic[];
}

/** A role a pattern fills (the sidecar's pattern.Role). */
export interface PatternRole {
  role: string;
  name?: string;
  kind?: string; // "agent" or "system"
  count?: number;
  minCount?: number;
  description?: string;
}

/** One of the 20 patterns, as agentcanvas/listPatterns answers. */
export interface PatternInfo {
  id: string; // "P05"
  patternId: string; // "debate_judge"
  name: string;
  topology: string;
  roles: Array<string | PatternRole> | string;
  defaultTermination?: Termination;
  /** the params a new edge of this pattern starts with (timeout_ms, rate_limit_per_min, retention…) */
  defaultParams?: Record<string, unknown>;
  summary?: string;
  doc?: string; // markdown
}

/** An edge as addEdge and addInteraction write it (no id: the loader derives `<interaction>-e<n>`). */
export interface NewEdge {
  id?: string;
  source: string;
  target: string;
  data?: EdgeData;
}

// Edit operations (docs/flow-edits.md). Applied in order, all or none.
export type FlowOp =
  | { op: "addAgent"; agent: Partial<Agent>; position?: Point }
  | { op: "addSystemNode"; node: Partial<SystemNode>; position?: Point }
  | { op: "removeNode"; id: string }
  | { op: "moveNode"; id: string; position: Point }
  | { op: "setLayout"; positions: Record<string, Point> }
  | { op: "addInteraction"; interaction: Omit<Partial<Interaction>, "edges" | "path"> & { patternId: string; edges: NewEdge[] } }
  | { op: "removeInteraction"; id: string }
  | { op: "addEdge"; interactionId: string; edge: NewEdge }
  | { op: "removeEdge"; edgeId: string }
  | { op: "set"; path: string; value: unknown }
  | { op: "rename"; id: string; newId: string }
  | { op: "insertPattern"; patternId: string; position?: Point };

/** A run event as the sidecar's agentcanvas/runEvent notification carries it (docs/design.md). */
export interface RunEvent {
  ts: number | string; // epoch milliseconds, or an RFC 3339 time
  runId?: string;
  flow?: string;
  interactionId?: string;
  edgeId?: string;
  agentId?: string;
  event: string;
  step?: number;
  round?: number;
  from?: string;
  to?: string;
  reason?: string;
  data?: Record<string, unknown>;
  [k: string]: unknown;
}

/** Each agent's spend in a run, as its last checkpoint kept it (listRuns' agentSpend). */
export interface RunSpend {
  runId: string;
  agents: Record<string, AgentSpend>;
}

// Messages from the host to the webview.
export type HostMessage =
  | {
      type: "flow";
      /** the TextDocument version the model was loaded from */
      version: number;
      flow: FlowModel | null;
      diagnostics: Diagnostic[];
    }
  | { type: "patterns"; patterns: PatternInfo[] }
  | { type: "runEvent"; event: RunEvent }
  | ({ type: "runSpend" } & RunSpend)
  | { type: "editFailed"; message: string };

// Messages from the webview to the host.
export type WebviewMessage =
  | { type: "ready" }
  | { type: "edit"; ops: FlowOp[]; label?: string }
  | { type: "reveal"; path: string; range?: SrcRange }
  | { type: "undo" }
  | { type: "redo" }
  | { type: "error"; message: string }
  /** the run overlay's "Last turn": open agentId's transcript of runId (Show Transcript) */
  | { type: "showTranscript"; runId: string; agentId: string }
  /** the run overlay's "Fork from a turn": pick one of agentId's turns of runId to fork from */
  | { type: "forkRun"; runId: string; agentId: string };
