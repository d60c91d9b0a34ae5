// The layout of a whole flow: each connected part laid out in layers by roles (layered.ts), the
// parts then packed in rows, in file order, about as wide as a screen is. Pure: Tidy runs it in
// a Web Worker (layout.ts), a first open calls it directly (graph.ts); the tests call it in Node.
import type { Point } from "../../src/canvas/protocol";
import { DEFAULT_LAYERED, layered, type LayoutEdge, type LayoutNode } from "./layered";
import { labelWidth } from "./labels";
import { roleRank } from "./roles";
import { idRecord } from "./records";

export interface FlowLayoutInput {
  nodes: Array<{ id: string; width: number; height: number; role: string }>;
  edges: Array<{ source: string; target: string; label: string; lateral?: boolean }>;
}

/** The space between two packed parts of a flow. */
export const PART_GAP = 96;
// Rows of parts are filled up to about this width : height.
const ASPECT = 16 / 9;

/** layoutFlow lays a flow out; progress goes from 0 to 1, part by part. */
export function layoutFlow(input: FlowLayoutInput, progress?: (f: number) => void): Record<string, Point> {
  const parts = components(input);
  const total = input.nodes.length || 1;
  let done = 0;
  const laid = parts.map((p) => {
    const r = layered(
      p.nodes.map((x): LayoutNode => ({ id: x.id, width: x.width, height: x.height, rank: roleRank(x.role) })),
      p.edges.map((e): LayoutEdge => ({ source: e.source, target: e.target, label: labelWidth(e.label), lateral: e.lateral })),
      DEFAULT_LAYERED,
      progress && ((f) => progress((done + f * p.nodes.length) / total)),
    );
    done += p.nodes.length;
    return r;
  });
  // Shelf packing: left to right, a new row when the row is full.
  const area = laid.reduce((s, r) => s + (r.width + PART_GAP) * (r.height + PART_GAP), 0);
  const rowWidth = Math.max(...laid.map((r) => r.width), Math.sqrt(area * ASPECT));
  const out = idRecord<Point>();
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  for (const r of laid) {
    if (x > 0 && x + r.width > rowWidth) {
      x = 0;
      y += rowHeight + PART_GAP;
      rowHeight = 0;
    }
    for (const [id, p] of Object.entries(r.positions)) out[id] = { x: p.x + x, y: p.y + y };
    x += r.width + PART_GAP;
    rowHeight = Math.max(rowHeight, r.height);
  }
  return out;
}

/** components splits a flow into its connected parts, each in file order, ordered by its first node. */
export function components(input: FlowLayoutInput): FlowLayoutInput[] {
  const index = new Map(input.nodes.map((n, i) => [n.id, i]));
  const parent = input.nodes.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (const e of input.edges) {
    const a = index.get(e.source);
    const b = index.get(e.target);
    if (a === undefined || b === undefined) continue;
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  const parts = new Map<number, FlowLayoutInput>();
  input.nodes.forEach((n, i) => {
    const r = find(i);
    if (!parts.has(r)) parts.set(r, { nodes: [], edges: [] });
    parts.get(r)!.nodes.push(n);
  });
  for (const e of input.edges) {
    const a = index.get(e.source);
    if (a !== undefined && index.has(e.target)) parts.get(find(a))!.edges.push(e);
  }
  return [...parts.values()];
}

/**
 * placeUnplaced positions the nodes that have no saved position: laid out among themselves, as a
 * block below the saved ones (left-aligned with them), so what was placed stays where it was.
 */
export function placeUnplaced(input: FlowLayoutInput, saved: Record<string, Point>): Record<string, Point> {
  const free = input.nodes.filter((n) => !saved[n.id]);
  if (free.length === 0) return {};
  const ids = new Set(free.map((n) => n.id));
  const laid = layoutFlow({ nodes: free, edges: input.edges.filter((e) => ids.has(e.source) && ids.has(e.target)) });
  const placed = input.nodes.filter((n) => saved[n.id]);
  if (placed.length === 0) return laid;
  const left = Math.min(...placed.map((n) => saved[n.id].x));
  const bottom = Math.max(...placed.map((n) => saved[n.id].y + n.height));
  const out = idRecord<Point>();
  for (const [id, p] of Object.entries(laid)) out[id] = { x: p.x + left, y: p.y + bottom + PART_GAP };
  return out;
}
