// Drawing edges: what a new connection (a drag between handles, the inspector's Connect, a
// reconnected edge end) becomes in the document. Pure, so every rule is unit-tested: the canvas
// only decides which edit operations to send (addEdge, addInteraction, set); the sidecar writes
// the YAML.
import type { EdgeData, FlowModel, FlowOp, Interaction, PatternInfo, Termination } from "../../src/canvas/protocol";
import { cleanTermination } from "./ops";

/** What the validator falls back to for a pattern it does not know; a drawn edge is never left without one. */
const FALLBACK_TERMINATION: Termination = { type: "max_rounds", rounds: 3 };

export type ConnectPlan =
  /** refused, with the message to show */
  | { kind: "refused"; message: string }
  /** the edit to send */
  | { kind: "ops"; ops: FlowOp[]; label: string }
  /** no interaction to add the edge to: ask for the new interaction's pattern */
  | { kind: "pick"; source: string; target: string; candidates: Interaction[]; note?: string };

export function findPattern(patterns: PatternInfo[], id: string): PatternInfo | undefined {
  const lower = id.toLowerCase();
  return patterns.find((p) => p.patternId === id || p.id.toLowerCase() === lower);
}

/**
 * isPairPattern: the pattern's roles make exactly two nodes (role_play_pair,
 * bilateral_negotiation, protocol_bridge). The engine runs such an interaction between its first
 * two participants, so a third one would be drawn but never take part.
 */
export function isPairPattern(p: PatternInfo | undefined): boolean {
  if (!p || !Array.isArray(p.roles)) return false;
  let n = 0;
  for (const r of p.roles) {
    if (typeof r === "string") return false;
    n += r.count ?? 1;
  }
  return n === 2;
}

/** participants are the nodes an interaction's edges join, the edge exceptEdge left out. */
export function participants(it: Interaction, exceptEdge?: string): Set<string> {
  const out = new Set<string>();
  for (const e of it.edges ?? []) {
    if (e.id === exceptEdge) continue;
    out.add(e.source);
    out.add(e.target);
  }
  return out;
}

function nodeIds(flow: FlowModel): Set<string> {
  return new Set([...(flow.agents ?? []).map((a) => a.id), ...(flow.systemNodes ?? []).map((s) => s.id)]);
}

/** endpointRefusal: why source → target cannot be an edge at all (a self-loop, an unknown node). */
export function endpointRefusal(flow: FlowModel, source: string, target: string): string | undefined {
  if (source === target) return `An edge joins two different nodes; ${source} cannot be connected to itself.`;
  const ids = nodeIds(flow);
  for (const id of [source, target]) if (!ids.has(id)) return `There is no node ${id} in this flow.`;
  return undefined;
}

/** duplicateRefusal: why interaction it cannot take source → target again (exceptEdge: the edge being reconnected). */
export function duplicateRefusal(it: Interaction, source: string, target: string, exceptEdge?: string): string | undefined {
  if ((it.edges ?? []).some((e) => e.id !== exceptEdge && e.source === source && e.target === target)) {
    return `Interaction ${it.id} (${it.patternId}) already has an edge ${source} → ${target}.`;
  }
  return undefined;
}

/** pairRefusal: why interaction it, of a two-party pattern, cannot take an edge that brings in a third node. */
export function pairRefusal(it: Interaction, p: PatternInfo | undefined, source: string, target: string, exceptEdge?: string): string | undefined {
  if (!isPairPattern(p)) return undefined;
  const two = participants(it, exceptEdge);
  const parts = new Set([...two, source, target]);
  if (parts.size <= 2) return undefined;
  return `Interaction ${it.id} is a ${it.patternId}, which is between two nodes only (${[...two].join(" and ")}).`;
}

/** edgeRefusal: why interaction it cannot take the edge source → target. */
export function edgeRefusal(it: Interaction, p: PatternInfo | undefined, source: string, target: string, exceptEdge?: string): string | undefined {
  return duplicateRefusal(it, source, target, exceptEdge) ?? pairRefusal(it, p, source, target, exceptEdge);
}

/**
 * accepting: the interactions source takes part in whose pattern accepts another edge to
 * target (every pattern does, except a two-party one that would get a third node).
 */
export function accepting(flow: FlowModel, patterns: PatternInfo[], source: string, target: string): Interaction[] {
  return (flow.interactions ?? []).filter(
    (it) => participants(it).has(source) && !pairRefusal(it, findPattern(patterns, it.patternId), source, target),
  );
}

function cloneJSON<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/**
 * edgeData is what a new edge carries so that the flow stays valid: in an existing interaction,
 * the termination and params of its first edge that has a termination (the engine takes the
 * interaction's stop rule from there; params.messages is that edge's own and is not copied);
 * otherwise the pattern's default termination and default params (a timeout, a rate limit or a
 * retention where the topology needs one: docs/patterns.md).
 */
export function edgeData(it: Interaction | undefined, p: PatternInfo | undefined): EdgeData {
  const model = (it?.edges ?? []).find((e) => e.data?.termination)?.data;
  const data: EdgeData = {};
  const t = model?.termination ?? p?.defaultTermination;
  data.termination = cleanTermination(t && Object.keys(t).length > 0 ? t : FALLBACK_TERMINATION);
  const params = cloneJSON(model ? (model.params ?? {}) : (p?.defaultParams ?? {}));
  if (model) delete params.messages;
  if (Object.keys(params).length > 0) data.params = params;
  return data;
}

/** addEdgeOp adds source → target to an existing interaction. */
export function addEdgeOp(it: Interaction, p: PatternInfo | undefined, source: string, target: string): FlowOp {
  return { op: "addEdge", interactionId: it.id, edge: { source, target, data: edgeData(it, p) } };
}

/** newInteractionOp makes a new interaction of pattern p with the one edge source → target (the sidecar gives it a fresh id). */
export function newInteractionOp(p: PatternInfo, source: string, target: string): FlowOp {
  return { op: "addInteraction", interaction: { patternId: p.patternId, edges: [{ source, target, data: edgeData(undefined, p) }] } };
}

/**
 * planConnect decides what a new connection source → target does. into names the interaction
 * the user chose (a selected edge's, or the inspector's choice) or "new" (ask for a pattern).
 * Without it, the edge goes to the one interaction source takes part in whose pattern accepts
 * it; with none or several, the user picks a pattern (or one of those interactions). Adding
 * an edge an interaction already has is refused.
 */
export function planConnect(flow: FlowModel, patterns: PatternInfo[], source: string, target: string, into?: string): ConnectPlan {
  const bad = endpointRefusal(flow, source, target);
  if (bad) return { kind: "refused", message: bad };
  const label = `Connect ${source} → ${target}`;
  const options = accepting(flow, patterns, source, target);
  const add = (it: Interaction): ConnectPlan => {
    const dup = duplicateRefusal(it, source, target);
    if (dup) return { kind: "refused", message: dup };
    return { kind: "ops", ops: [addEdgeOp(it, findPattern(patterns, it.patternId), source, target)], label };
  };
  const offered = options.filter((it) => !duplicateRefusal(it, source, target));
  if (into === "new") return { kind: "pick", source, target, candidates: offered };
  if (into) {
    const it = (flow.interactions ?? []).find((x) => x.id === into);
    if (!it) return { kind: "refused", message: `There is no interaction ${into} in this flow.` };
    const full = pairRefusal(it, findPattern(patterns, it.patternId), source, target);
    // A full pair still lets the user start a new interaction for this edge.
    if (full) return { kind: "pick", source, target, candidates: offered, note: `${full} Choose a pattern for a new interaction.` };
    return add(it);
  }
  if (options.length === 1) return add(options[0]);
  return { kind: "pick", source, target, candidates: offered };
}

/**
 * planPick is the edit for the pattern chosen in the picker, checked again against the model
 * as it is now (the document may have changed while the picker was open).
 */
export function planPick(flow: FlowModel, p: PatternInfo, source: string, target: string): ConnectPlan {
  const bad = endpointRefusal(flow, source, target);
  if (bad) return { kind: "refused", message: bad };
  return { kind: "ops", ops: [newInteractionOp(p, source, target)], label: `Connect ${source} → ${target} (${p.patternId})` };
}

/**
 * planReconnect moves one or both ends of an edge (React Flow's onReconnect, the inspector's
 * From/To): set ops on the edge's source and target, or why not.
 */
export function planReconnect(
  flow: FlowModel,
  patterns: PatternInfo[],
  edgeId: string,
  source: string,
  target: string,
): { kind: "refused"; message: string } | { kind: "ops"; ops: FlowOp[]; label: string } | { kind: "none" } {
  for (const it of flow.interactions ?? []) {
    const e = (it.edges ?? []).find((x) => x.id === edgeId);
    if (!e) continue;
    if (e.source === source && e.target === target) return { kind: "none" };
    const why = endpointRefusal(flow, source, target) ?? edgeRefusal(it, findPattern(patterns, it.patternId), source, target, edgeId);
    if (why) return { kind: "refused", message: why };
    const ops: FlowOp[] = [];
    if (e.source !== source) ops.push({ op: "set", path: `${e.path}/source`, value: source });
    if (e.target !== target) ops.push({ op: "set", path: `${e.path}/target`, value: target });
    return { kind: "ops", ops, label: `Reconnect ${edgeId}` };
  }
  return { kind: "refused", message: `There is no edge ${edgeId} in this flow.` };
}
