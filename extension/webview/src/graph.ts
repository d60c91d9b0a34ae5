// The flow model as React Flow nodes and edges. Pure: the model in, the graph out, so the
// mapping is unit-tested without a browser.
import type { Edge, Node } from "@xyflow/react";
import type { Agent, Diagnostic, FlowModel, Point, Severity, SystemNode } from "../../src/canvas/protocol";
import { indexDiagnostics, worstSeverity, type DiagnosticIndex } from "./diagnostics";
import { edgeLabel } from "./labels";

export interface AgentNodeData extends Record<string, unknown> {
  kind: "agent";
  id: string;
  path: string;
  name: string;
  role: string;
  backend: string;
  agent: Agent;
  diagnostics: Diagnostic[];
  severity?: Severity;
}

export interface SystemNodeData extends Record<string, unknown> {
  kind: "system";
  id: string;
  path: string;
  name: string;
  sysType: string;
  llm: boolean; // LLM-backed (has a runtime)
  node: SystemNode;
  diagnostics: Diagnostic[];
  severity?: Severity;
}

export type CanvasNodeData = AgentNodeData | SystemNodeData;
export type CanvasNode = Node<AgentNodeData, "agent"> | Node<SystemNodeData, "system">;

export interface InteractionEdgeData extends Record<string, unknown> {
  id: string;
  path: string;
  interactionId: string;
  interactionPath: string;
  patternId: string;
  label: string;
  diagnostics: Diagnostic[];
  severity?: Severity;
  /** index of this edge among the edges between the same two nodes, to fan labels apart */
  parallel: number;
}
export type CanvasEdge = Edge<InteractionEdgeData, "interaction">;

export interface Graph {
  nodes: CanvasNode[];
  edges: CanvasEdge[];
  diagnostics: DiagnosticIndex;
}

export const NODE_WIDTH = 180;
export const NODE_HEIGHT = 72;
const GAP_X = 80;
const GAP_Y = 60;

/** backendBadge is the short name of an agent's backend, "auto" when none is set. */
export function backendBadge(a: Agent): string {
  return a.runtime?.backendId || "auto";
}

/**
 * defaultPosition places the i-th node that has no saved position on a grid below the
 * laid-out ones, so a flow without a layout section is still readable before Tidy.
 */
export function defaultPosition(i: number, count: number, top: number): Point {
  const cols = Math.max(1, Math.ceil(Math.sqrt(count)));
  return {
    x: (i % cols) * (NODE_WIDTH + GAP_X),
    y: top + Math.floor(i / cols) * (NODE_HEIGHT + GAP_Y),
  };
}

export function toGraph(flow: FlowModel, diags: Diagnostic[] | null): Graph {
  const di = indexDiagnostics(flow, diags);
  const saved = flow.layout?.nodes ?? {};
  const nodes: CanvasNode[] = [];
  const ids = new Set<string>();

  const agents = flow.agents ?? [];
  const systems = flow.systemNodes ?? [];
  const unplaced = [...agents, ...systems].filter((n) => !saved[n.id]).length;
  let maxY = -Infinity;
  for (const p of Object.values(saved)) maxY = Math.max(maxY, p.y);
  const top = Number.isFinite(maxY) ? maxY + NODE_HEIGHT + GAP_Y : 0;
  let placed = 0;
  const position = (id: string): Point => {
    const p = saved[id];
    if (p && Number.isFinite(p.x) && Number.isFinite(p.y)) return { x: p.x, y: p.y };
    return defaultPosition(placed++, unplaced, top);
  };

  for (const a of agents) {
    if (ids.has(a.id)) continue; // a duplicate id is the validator's to report
    ids.add(a.id);
    const ds = di.nodes.get(a.id) ?? [];
    nodes.push({
      id: a.id,
      type: "agent",
      position: position(a.id),
      ariaLabel: `Agent ${a.name || a.id}, role ${a.role || "none"}, backend ${backendBadge(a)}`,
      data: {
        kind: "agent",
        id: a.id,
        path: a.path,
        name: a.name || a.id,
        role: a.role || "",
        backend: backendBadge(a),
        agent: a,
        diagnostics: ds,
        severity: worstSeverity(ds),
      },
    });
  }
  for (const s of systems) {
    if (ids.has(s.id)) continue;
    ids.add(s.id);
    const ds = di.nodes.get(s.id) ?? [];
    nodes.push({
      id: s.id,
      type: "system",
      position: position(s.id),
      ariaLabel: `System node ${s.name || s.id}, type ${s.type}`,
      data: {
        kind: "system",
        id: s.id,
        path: s.path,
        name: s.name || s.id,
        sysType: s.type,
        llm: !!s.runtime,
        node: s,
        diagnostics: ds,
        severity: worstSeverity(ds),
      },
    });
  }

  const edges: CanvasEdge[] = [];
  const edgeIds = new Set<string>();
  const pairs = new Map<string, number>();
  for (const it of flow.interactions ?? []) {
    for (const e of it.edges ?? []) {
      if (!ids.has(e.source) || !ids.has(e.target) || edgeIds.has(e.id)) continue;
      edgeIds.add(e.id);
      const pair = e.source < e.target ? `${e.source}\u0000${e.target}` : `${e.target}\u0000${e.source}`;
      const parallel = pairs.get(pair) ?? 0;
      pairs.set(pair, parallel + 1);
      const ds = di.edges.get(e.id) ?? [];
      const label = edgeLabel(it.patternId, e.data);
      edges.push({
        id: e.id,
        type: "interaction",
        source: e.source,
        target: e.target,
        ariaLabel: `Interaction ${it.id}: ${label}, from ${e.source} to ${e.target}`,
        data: {
          id: e.id,
          path: e.path,
          interactionId: it.id,
          interactionPath: it.path,
          patternId: it.patternId,
          label,
          diagnostics: ds,
          severity: worstSeverity(ds),
          parallel,
        },
      });
    }
  }
  return { nodes, edges, diagnostics: di };
}

/** findElement finds the model element of a node or edge id, for the inspector. */
export function findElement(flow: FlowModel | null, sel: { kind: "node" | "edge"; id: string } | null) {
  if (!flow || !sel) return undefined;
  if (sel.kind === "node") {
    const a = (flow.agents ?? []).find((x) => x.id === sel.id);
    if (a) return { kind: "agent" as const, agent: a };
    const s = (flow.systemNodes ?? []).find((x) => x.id === sel.id);
    if (s) return { kind: "system" as const, node: s };
    return undefined;
  }
  for (const it of flow.interactions ?? []) {
    const e = (it.edges ?? []).find((x) => x.id === sel.id);
    if (e) return { kind: "edge" as const, edge: e, interaction: it };
  }
  return undefined;
}
