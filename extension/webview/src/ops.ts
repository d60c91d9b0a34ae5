// Edit operations the canvas sends (docs/flow-edits.md). Pure builders, unit-tested.
import type { FlowOp, Point, Termination } from "../../src/canvas/protocol";
import { idRecord } from "./records";

/** round keeps layout numbers short in the YAML. */
export function roundPoint(p: Point): Point {
  return { x: Math.round(p.x), y: Math.round(p.y) };
}

/** setOp sets a model path; an empty string or an empty list deletes the key (null). */
export function setOp(path: string, value: unknown): FlowOp {
  if (value === "" || value === undefined || (Array.isArray(value) && value.length === 0)) value = null;
  return { op: "set", path, value };
}

/** listFromText reads "a, b,c" (or one item a line) as a list of trimmed, non-empty items. */
export function listFromText(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** cleanTermination drops the model's bookkeeping (path) and empty fields, recursively. */
export function cleanTermination(t: Termination): Termination {
  const out: Termination = {};
  if (t.any) return { any: t.any.map(cleanTermination) };
  if (t.all) return { all: t.all.map(cleanTermination) };
  if (t.type) out.type = t.type;
  switch (t.type) {
    case "max_rounds":
      if (t.rounds !== undefined) out.rounds = t.rounds;
      break;
    case "timeout_ms":
      if (t.ms !== undefined) out.ms = t.ms;
      break;
    case "consensus_threshold":
      if (t.threshold !== undefined) out.threshold = t.threshold;
      break;
    case "quality_gate":
      if (t.metric !== undefined) out.metric = t.metric;
      if (t.op !== undefined) out.op = t.op;
      if (t.value !== undefined) out.value = t.value;
      break;
    case "max_cost_usd":
      if (t.usd !== undefined) out.usd = t.usd;
      break;
    case "max_tokens":
      if (t.tokens !== undefined) out.tokens = t.tokens;
      break;
  }
  return out;
}

/** defaultCondition is a new condition of a type, with a sensible parameter. */
export function defaultCondition(type: string): Termination {
  switch (type) {
    case "max_rounds":
      return { type, rounds: 3 };
    case "timeout_ms":
      return { type, ms: 600000 };
    case "consensus_threshold":
      return { type, threshold: 0.6 };
    case "quality_gate":
      return { type, metric: "tests_passed", op: ">=", value: 1 };
    case "max_cost_usd":
      return { type, usd: 5 };
    case "max_tokens":
      return { type, tokens: 1000000 };
    default:
      return { type };
  }
}

/**
 * deleteOps removes the selected nodes (with their edges, which the sidecar removes) and the
 * selected edges that do not hang off a removed node.
 */
export function deleteOps(
  nodeIds: string[],
  edges: Array<{ id: string; source: string; target: string }>,
): FlowOp[] {
  const gone = new Set(nodeIds);
  const ops: FlowOp[] = nodeIds.map((id) => ({ op: "removeNode", id }));
  for (const e of edges) {
    if (!gone.has(e.source) && !gone.has(e.target)) ops.push({ op: "removeEdge", edgeId: e.id });
  }
  return ops;
}

/** layoutOp is one setLayout op for many positions (tidy, nudging), rounded. */
export function layoutOp(positions: Record<string, Point>): FlowOp {
  const out = idRecord<Point>();
  for (const [id, p] of Object.entries(positions)) out[id] = roundPoint(p);
  return { op: "setLayout", positions: out };
}

/** moveOps is what a drag ends with: one moveNode for one node, one setLayout for several. */
export function moveOps(positions: Record<string, Point>): FlowOp[] {
  const ids = Object.keys(positions);
  if (ids.length === 0) return [];
  if (ids.length === 1) return [{ op: "moveNode", id: ids[0], position: roundPoint(positions[ids[0]]) }];
  return [layoutOp(positions)];
}

/** nudge moves points by (dx, dy), snapping to the grid when snap is on. */
export function nudge(positions: Record<string, Point>, dx: number, dy: number, grid?: number): Record<string, Point> {
  const out = idRecord<Point>();
  for (const [id, p] of Object.entries(positions)) {
    let x = p.x + dx;
    let y = p.y + dy;
    if (grid) {
      x = dx ? (dx > 0 ? Math.floor(p.x / grid) + 1 : Math.ceil(p.x / grid) - 1) * grid : p.x;
      y = dy ? (dy > 0 ? Math.floor(p.y / grid) + 1 : Math.ceil(p.y / grid) - 1) * grid : p.y;
    }
    out[id] = { x, y };
  }
  return out;
}

/** parseJSONObject reads a params editor's text; "" is an empty object. */
export function parseJSONObject(text: string): { ok: true; value: Record<string, unknown> | null } | { ok: false; error: string } {
  if (text.trim() === "") return { ok: true, value: null };
  try {
    const v = JSON.parse(text);
    if (v === null || typeof v !== "object" || Array.isArray(v)) return { ok: false, error: "params must be a JSON object" };
    return { ok: true, value: v as Record<string, unknown> };
  } catch (e) {
    return { ok: false, error: `not JSON: ${(e as Error).message}` };
  }
}
