// The flow model as React Flow nodes and edges. Pure: the model in, the graph out, so the
// mapping is unit-tested without a browser.
import type { Edge, Node } from "@xyflow/react";
import type { Agent, Diagnostic, FlowModel, Point, Severity, SystemNode } from "../../src/canvas/protocol";
import { indexDiagnostics, worstSeverity, type DiagnosticIndex } from "./diagnostics";
import { edgeLabel } from "./labels";
import { placeUnplaced, type FlowLayoutInput } from "./layoutGraph";
import { idRecord } from "./records";

export interface AgentNodeData extends Record<string, unknown> {
  kind: "agent";
  id: string;
  path: string;
  name: string;
  role: string;
  backend: string;
  agent: Agent;
  /** how many files its sandbox gets (agents[].files) */
  files: number;
  diagnostics: Diagnostic[];
  severity?: Severity;
  /** placed by the layout, not by a saved position: written to the flow on the first move */
  auto?: boolean;
}

export interface SystemNodeData extends Record<string, unknown> {
  kind: "system";
  id: string;
  path: string;
  name: string;
  sysType: string;
  /** the backend that runs it (runtime.backendId, "auto" when unset), none for an engine-run node */
  backend?: string;
  node: SystemNode;
  diagnostics: Diagnostic[];
  severity?: Severity;
  auto?: boolean;
}

/**
 * A node an edge names that the flow does not define (a misspelt agent id): drawn as a
 * placeholder, so the edge and its problem are seen where they are, not left out.
 */
export interface MissingNodeData extends Record<string, unknown> {
  kind: "missing";
  id: string;
  /** the id the edge names */
  name: string;
  diagnostics: Diagnostic[];
  severity?: Severity;
  auto: true;
}

export type CanvasNodeData = AgentNodeData | SystemNodeData | MissingNodeData;
export type CanvasNode = Node<AgentNodeData, "agent"> | Node<SystemNodeData, "system"> | Node<MissingNodeData, "missing">;

export interface InteractionEdgeData extends Record<string, unknown> {
  id: string;
  path: string;
  interactionId: string;
  interactionPath: string;
  patternId: string;
  label: string;
  diagnostics: Diagnostic[];
  severity?: Severity;
  /** the interaction's place in the file: its colour (canvas.css, ac-ix-N) */
  interactionIndex: number;
  /** this edge's place among the edges between the same two nodes (either way), and their number: they fan out */
  parallel: number;
  parallelCount: number;
  /** the interaction's id, its pattern and its key parameter as the label draws them */
  keyParam: string;
  /** the edge that draws the label this edge shares (labelGroups), itself when it draws one */
  labelledBy: string;
  /** on the edge that draws a label: the edges it names, and the node it stands by (none: about their middle) */
  labelEdges?: string[];
  labelNode?: string;
  /** on the edge that draws its interaction's first label: that label carries the run's line */
  runLine?: boolean;
}

export type CanvasEdge = Edge<InteractionEdgeData, "interaction">;

export interface Graph {
  nodes: CanvasNode[];
  edges: CanvasEdge[];
  diagnostics: DiagnosticIndex;
}

export const NODE_WIDTH = 180;
export const NODE_HEIGHT = 72;
// A node card grows by a line for each problem it lists (two at most, then "+N more").
const DIAG_LINE = 16;

/**
 * backendBadge is the backend a node runs on, as the engine resolves it: runtime.backendId, and
 * "auto" when it is unset (the engine picks an installed CLI). A system node without a runtime is
 * run by the engine itself (a blackboard, a broker): it has no backend.
 */
export function backendBadge(n: Agent | SystemNode): string | undefined {
  if (!n.runtime && "type" in n) return undefined;
  return n.runtime?.backendId || "auto";
}

/** The number of interaction colours in canvas.css (.ac-ix-0 … .ac-ix-11). */
export const INTERACTION_COLOURS = 12;
/** Line styles after the colours run out (.ac-dash-1: dashed, .ac-dash-2: dotted). */
export const INTERACTION_DASHES = 3;

/**
 * The patterns whose same-role nodes are peers: a debate's debaters face their judge side by side,
 * voters and samplers stand together before their aggregator, a blackboard's contributors before
 * the board. An edge drawn between two of them (debater → debater, as the exchange is described)
 * is laid out across, not as a step (layered.ts: lateral).
 */
export const PEER_PATTERNS = new Set(["debate_judge", "red_team_judge", "majority_vote", "self_consistency", "blackboard", "memory_sync", "router_targeted"]);

/** The patterns drawn as a hub with its contributors around it, and the node types that are hubs. */
const HUB_PATTERNS = new Set(["blackboard"]);
const HUBS = new Set(["blackboard"]);

/**
 * around lays a blackboard's contributors out on both sides of it: every other contributor's edge
 * to the hub is laid out from the hub (the layers put it after the hub), so the board stands among
 * its contributors rather than at the end of a column of them. Only the layout's direction changes.
 */
function around(edges: FlowLayoutInput["edges"], roles: Map<string, string>): FlowLayoutInput["edges"] {
  let k = 0;
  return edges.map((e) => (HUBS.has(roles.get(e.target) ?? "") && !HUBS.has(roles.get(e.source) ?? "") && k++ % 2 === 1 ? { ...e, source: e.target, target: e.source } : e));
}

/**
 * facing adds, for the layout only, an edge from each peer to the node its fellow peers lead to
 * (a debater drawn only to the other debater still faces the judge): peers stand side by side with
 * the node they share in front of them, whatever edges the person drew.
 */
function facing(edges: FlowLayoutInput["edges"], roles: Map<string, string>): FlowLayoutInput["edges"] {
  const peers = new Set(edges.filter((e) => e.lateral).flatMap((e) => [e.source, e.target]));
  if (peers.size === 0) return [];
  const has = new Set(edges.map((e) => `${e.source}\u0000${e.target}`));
  const out: FlowLayoutInput["edges"] = [];
  for (const e of edges) {
    if (e.lateral || !peers.has(e.source)) continue;
    for (const p of peers)
      if (p !== e.source && p !== e.target && roles.get(p) === roles.get(e.source) && !has.has(`${p}\u0000${e.target}`)) {
        has.add(`${p}\u0000${e.target}`);
        out.push({ source: p, target: e.target, label: e.label });
      }
  }
  return out;
}

/** estimatedHeight is a node card's height before the canvas has measured it. */
export function estimatedHeight(diagnostics: number): number {
  return NODE_HEIGHT + DIAG_LINE * Math.min(diagnostics, 3);
}

/** layoutInput is what the layout needs of a flow: each node's size and role, each edge's label. */
export function layoutInput(flow: FlowModel, diags: DiagnosticIndex, size?: (id: string) => { width: number; height: number } | undefined): FlowLayoutInput {
  const nodes: FlowLayoutInput["nodes"] = [];
  const seen = new Set<string>();
  const add = (id: string, role: string) => {
    if (seen.has(id)) return;
    seen.add(id);
    nodes.push({ id, role, ...(size?.(id) ?? { width: NODE_WIDTH, height: estimatedHeight(diags.nodes.get(id)?.length ?? 0) }) });
  };
  for (const a of flow.agents ?? []) add(a.id, a.role ?? "");
  for (const s of flow.systemNodes ?? []) add(s.id, s.type ?? "");
  const missing = missingNodes(flow);
  for (const id of missing.values()) add(id, "");
  const end = (id: string) => (seen.has(id) && !missing.has(id) ? id : (missing.get(id) ?? id));
  const edges: FlowLayoutInput["edges"] = [];
  const roles = new Map(nodes.map((n) => [n.id, n.role]));
  for (const it of flow.interactions ?? []) {
    const mine: FlowLayoutInput["edges"] = [];
    for (const e of it.edges ?? [])
      mine.push({ source: end(e.source), target: end(e.target), label: edgeLabel(it.patternId, e.data), lateral: PEER_PATTERNS.has(it.patternId) && roles.get(e.source) === roles.get(e.target) });
    edges.push(...(HUB_PATTERNS.has(it.patternId) ? around(mine, roles) : mine), ...facing(mine, roles));
  }
  return { nodes, edges };
}

/**
 * missingNodes maps each id an edge names that no agent or system node has to the id of its
 * placeholder node ("missing:" and the id, never a valid node id).
 */
export function missingNodes(flow: FlowModel): Map<string, string> {
  const defined = new Set([...(flow.agents ?? []), ...(flow.systemNodes ?? [])].map((n) => n.id));
  const out = new Map<string, string>();
  for (const it of flow.interactions ?? [])
    for (const e of it.edges ?? []) for (const id of [e.source, e.target]) if (!defined.has(id) && !out.has(id)) out.set(id, `missing:${id}`);
  return out;
}

/** isPlaceholder says whether a node id is a missing node's placeholder (it has no place in the file). */
export const isPlaceholder = (id: string) => id.startsWith("missing:");

export function toGraph(flow: FlowModel, diags: Diagnostic[] | null): Graph {
  const di = indexDiagnostics(flow, diags);
  const saved = idRecord<Point>();
  for (const [id, p] of Object.entries(flow.layout?.nodes ?? {})) if (p && Number.isFinite(p.x) && Number.isFinite(p.y)) saved[id] = { x: p.x, y: p.y };
  const nodes: CanvasNode[] = [];
  const ids = new Set<string>();

  const agents = flow.agents ?? [];
  const systems = flow.systemNodes ?? [];
  // Nodes without a saved position are laid out by roles, as a block below the saved ones.
  const laid = placeUnplaced(layoutInput(flow, di), saved);
  const position = (id: string): Point => saved[id] ?? laid[id] ?? { x: 0, y: 0 };

  for (const a of agents) {
    if (ids.has(a.id)) continue; // a duplicate id is the validator's to report
    ids.add(a.id);
    const ds = di.nodes.get(a.id) ?? [];
    nodes.push({
      id: a.id,
      type: "agent",
      position: position(a.id),
      ariaLabel: `Agent ${a.name || a.id}, role ${a.role || "none"}, backend ${backendBadge(a)!}`,
      data: {
        kind: "agent",
        id: a.id,
        path: a.path,
        name: a.name || a.id,
        role: a.role || "",
        backend: backendBadge(a)!,
        agent: a,
        files: a.files?.length ?? 0,
        diagnostics: ds,
        severity: worstSeverity(ds),
        auto: !saved[a.id] || undefined,
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
      ariaLabel: `System node ${s.name || s.id}, type ${s.type}${backendBadge(s) ? `, backend ${backendBadge(s)}` : ""}`,
      data: {
        kind: "system",
        id: s.id,
        path: s.path,
        name: s.name || s.id,
        sysType: s.type,
        backend: backendBadge(s),
        node: s,
        diagnostics: ds,
        severity: worstSeverity(ds),
        auto: !saved[s.id] || undefined,
      },
    });
  }

  const missing = missingNodes(flow);
  for (const [name, id] of missing) {
    const ds = [...di.edges].filter(([edgeId]) => edgeEnds(flow, edgeId).includes(name)).flatMap(([, d]) => d);
    nodes.push({
      id,
      type: "missing",
      position: position(id),
      draggable: false,
      connectable: false,
      ariaLabel: `Missing node ${name || "(no id)"}: no agent or system node has this id`,
      data: { kind: "missing", id, name, diagnostics: ds, severity: worstSeverity(ds) ?? "error", auto: true },
    });
  }
  const end = (id: string) => missing.get(id) ?? id;

  const edges: CanvasEdge[] = [];
  const edgeIds = new Set<string>();
  const pairs = new Map<string, number>();
  const pairOf = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);
  (flow.interactions ?? []).forEach((it, interactionIndex) => {
    for (const e of it.edges ?? []) {
      if (edgeIds.has(e.id)) continue;
      edgeIds.add(e.id);
      const [source, target] = [end(e.source), end(e.target)];
      const pair = pairOf(source, target);
      const parallel = pairs.get(pair) ?? 0;
      pairs.set(pair, parallel + 1);
      const ds = di.edges.get(e.id) ?? [];
      const label = edgeLabel(it.patternId, e.data);
      edges.push({
        id: e.id,
        type: "interaction",
        source,
        target,
        ariaLabel: `Interaction ${it.id}: ${label}, from ${e.source} to ${e.target}${ds.length ? `, ${ds.length} problem${ds.length > 1 ? "s" : ""}` : ""}`,
        data: {
          id: e.id,
          path: e.path,
          interactionId: it.id,
          interactionPath: it.path,
          interactionIndex,
          patternId: it.patternId,
          label,
          keyParam: label.slice(label.indexOf(" ") + 1),
          diagnostics: ds,
          severity: worstSeverity(ds),
          parallel,
          parallelCount: 0,
          labelledBy: e.id,
        },
      });
    }
  });
  for (const e of edges) e.data!.parallelCount = pairs.get(pairOf(e.source, e.target))!;
  labelGroups(edges);
  return { nodes, edges, diagnostics: di };
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const t of items) {
    const k = key(t);
    const g = out.get(k);
    if (g) g.push(t);
    else out.set(k, [t]);
  }
  return out;
}

/** edgeEnds are the ids an edge of the model names, or none when there is no such edge. */
function edgeEnds(flow: FlowModel, edgeId: string): string[] {
  for (const it of flow.interactions ?? []) for (const e of it.edges ?? []) if (e.id === edgeId) return [e.source, e.target];
  return [];
}

/**
 * labelGroups gives each interaction one label per fan: its edges that leave one node (with the
 * same label) share one label by that node; the edges of a fan in, each the only one leaving its
 * node, share one by the node they enter; a pair of edges both ways shares one between the two
 * nodes; a lone edge has its own, about its middle. An interaction's edges among three nodes or
 * fewer (a debate and its judge, a chain of three) with one label text are one fan: one label,
 * by the node most of them touch. The first edge of each group draws it.
 */
export function labelGroups(edges: CanvasEdge[]): void {
  const order = new Map(edges.map((e, i) => [e, i]));
  for (const mine of groupBy(edges, (e) => e.data!.interactionId).values()) {
    const groups: Array<{ edges: CanvasEdge[]; node?: string }> = [];
    for (const part of parts(mine)) groups.push(...(nodesOf(part).length <= 3 && part.every((e) => e.data!.label === part[0].data!.label) ? [small(part)] : fansOf(part)));
    for (const g of groups) {
      const first = g.edges.reduce((a, b) => (order.get(b)! < order.get(a)! ? b : a));
      for (const e of g.edges) e.data!.labelledBy = first.id;
      first.data!.labelEdges = g.edges.map((e) => e.id);
      first.data!.labelNode = g.node;
    }
    // the label of the interaction's first edge (its group's first, so it draws it) says how its
    // run goes, once for all its fans
    mine[0].data!.runLine = true;
  }
}

type Group = { edges: CanvasEdge[]; node?: string };

const nodesOf = (es: CanvasEdge[]) => [...new Set(es.flatMap((e) => [e.source, e.target]))];

/** parts splits an interaction's edges into the groups of edges that share nodes, in file order. */
function parts(es: CanvasEdge[]): CanvasEdge[][] {
  const part = new Map<string, number>();
  const out: CanvasEdge[][] = [];
  for (const e of es) {
    const a = part.get(e.source);
    const b = part.get(e.target);
    let k = a ?? b ?? out.push([]) - 1;
    if (a !== undefined && b !== undefined && a !== b) {
      // two parts joined by this edge: the later one moves into the earlier
      const [keep, drop] = [Math.min(a, b), Math.max(a, b)];
      out[keep].push(...out[drop]);
      for (const x of out[drop]) part.set(x.source, keep).set(x.target, keep);
      out[drop] = [];
      k = keep;
    }
    out[k].push(e);
    part.set(e.source, k).set(e.target, k);
  }
  return out.filter((p) => p.length > 0);
}

/** small is the one group of a few nodes' edges: by the node most of them touch, unless one edge or a pair. */
function small(es: CanvasEdge[]): Group {
  const ns = nodesOf(es);
  if (es.length === 1 || ns.length < 3) return { edges: es };
  const touching = (n: string) => es.filter((e) => e.source === n || e.target === n).length;
  return { edges: es, node: ns.reduce((a, b) => (touching(b) > touching(a) ? b : a)) };
}

/** fansOf groups a larger part's edges: fans out of a node, pairs both ways, fans into a node, lone edges. */
function fansOf(es: CanvasEdge[]): Group[] {
  const groups: Group[] = [];
  const lone: CanvasEdge[] = [];
  for (const g of groupBy(es, (e) => `${e.source}\u0000${e.data!.label}`).values()) (g.length > 1 ? groups.push({ edges: g, node: g[0].source }) : lone.push(g[0]));
  const taken = new Set<CanvasEdge>();
  for (const e of lone) {
    if (taken.has(e)) continue;
    const back = lone.find((x) => !taken.has(x) && x !== e && x.source === e.target && x.target === e.source && x.data!.label === e.data!.label);
    if (back) {
      taken.add(e).add(back);
      groups.push({ edges: [e, back] });
    }
  }
  const into = groupBy(
    lone.filter((e) => !taken.has(e)),
    (e) => `${e.target}\u0000${e.data!.label}`,
  );
  for (const g of into.values()) groups.push({ edges: g, node: g.length > 1 ? g[0].target : undefined });
  return groups;
}

/**
 * entryInteraction is the interaction a run starts with, where a flow's story begins: the first
 * in the file that waits for no other (the engine starts those at once), else the first.
 */
export function entryInteraction(flow: FlowModel | null): string | undefined {
  const its = flow?.interactions ?? [];
  return (its.find((it) => (it.dependsOn ?? []).length === 0) ?? its[0])?.id;
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
