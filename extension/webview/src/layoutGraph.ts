// Tidy: the graph ELK lays out, and the positions read back. Pure; the ELK call itself runs
// in a Web Worker (layout.ts), never on the main thread.
import type { Point } from "../../src/canvas/protocol";

export interface ElkInput {
  id: string;
  layoutOptions: Record<string, string>;
  children: Array<{ id: string; width: number; height: number }>;
  edges: Array<{ id: string; sources: string[]; targets: string[] }>;
}

export const LAYOUT_OPTIONS: Record<string, string> = {
  "elk.algorithm": "layered",
  "elk.direction": "RIGHT",
  "elk.spacing.nodeNode": "48",
  "elk.layered.spacing.nodeNodeBetweenLayers": "200",
  "elk.spacing.componentComponent": "80",
  "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
  // Stable output for the same input: the same flow tidies to the same positions.
  "elk.randomSeed": "1",
};

export function elkGraph(
  nodes: Array<{ id: string; width: number; height: number }>,
  edges: Array<{ id: string; source: string; target: string }>,
): ElkInput {
  const ids = new Set(nodes.map((n) => n.id));
  return {
    id: "root",
    layoutOptions: LAYOUT_OPTIONS,
    children: nodes.map((n) => ({ id: n.id, width: Math.max(1, n.width), height: Math.max(1, n.height) })),
    edges: edges
      .filter((e) => ids.has(e.source) && ids.has(e.target) && e.source !== e.target)
      .map((e) => ({ id: e.id, sources: [e.source], targets: [e.target] })),
  };
}

export function positionsOf(out: { children?: Array<{ id: string; x?: number; y?: number }> }): Record<string, Point> {
  const pos: Record<string, Point> = {};
  for (const c of out.children ?? []) pos[c.id] = { x: Math.round(c.x ?? 0), y: Math.round(c.y ?? 0) };
  return pos;
}
