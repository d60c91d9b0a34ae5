// What the first view, Fit and the markers at the edges are computed from, read from the canvas:
// the cards' boxes (measured once drawn), the labels' and markers' boxes, the story's boxes (the
// interaction a run starts with), and the pane with the controls over it (view.ts plans with them).
import type { FlowModel } from "../../src/canvas/protocol";
import type { DrawnEdge } from "./drawing";
import type { Rect } from "./edgeGeometry";
import { entryInteraction, estimatedHeight, NODE_WIDTH, type CanvasEdge, type CanvasNode } from "./graph";
import type { Pane } from "./view";

/** nodeRect is a node's box on the canvas: measured once drawn, estimated before. */
export function nodeRect(n: CanvasNode): Rect {
  return {
    x: n.position.x,
    y: n.position.y,
    width: n.measured?.width ?? NODE_WIDTH,
    height: n.measured?.height ?? estimatedHeight(n.data.diagnostics.length),
  };
}

/** labelRects are the drawn labels' and markers' boxes on the canvas. */
export function labelRects(drawn: ReadonlyMap<string, DrawnEdge>): Rect[] {
  const out: Rect[] = [];
  for (const d of drawn.values())
    for (const p of [d.label?.place, d.marker]) if (p) out.push({ x: p.x - p.width / 2, y: p.y - p.height / 2, width: p.width, height: p.height });
  return out;
}

/**
 * storyRects are the boxes of the interaction a run starts with (graph.ts: entryInteraction): its
 * nodes, its labels and its problem markers. The opening view shows them whole.
 */
export function storyRects(flow: FlowModel | null, nodes: CanvasNode[], edges: CanvasEdge[], drawn: ReadonlyMap<string, DrawnEdge>): Rect[] {
  const entry = entryInteraction(flow);
  const mine = edges.filter((e) => e.data?.interactionId === entry);
  const ends = new Set(mine.flatMap((e) => [e.source, e.target]));
  const labels = new Map<string, DrawnEdge>();
  for (const e of mine) {
    const d = drawn.get(e.id);
    if (d) labels.set(e.id, d);
  }
  return [...nodes.filter((n) => ends.has(n.id)).map(nodeRect), ...labelRects(labels)];
}

/** pane is the canvas on screen and the controls that float over it, in its own coordinates. */
export function pane(root: HTMLElement | null): Pane | undefined {
  const flow = root?.querySelector(".react-flow")?.getBoundingClientRect();
  if (!flow) return undefined;
  const covers: Rect[] = [];
  for (const sel of [".ac-toolbar", ".ac-legend", ".react-flow__minimap"])
    for (const el of root!.querySelectorAll(sel)) {
      // the part of it over the flow (the toolbar and the side column stand beside it)
      const r = el.getBoundingClientRect();
      const [x0, y0] = [Math.max(r.left, flow.left), Math.max(r.top, flow.top)];
      const [x1, y1] = [Math.min(r.right, flow.right), Math.min(r.bottom, flow.bottom)];
      if (x1 > x0 && y1 > y0) covers.push({ x: x0 - flow.left, y: y0 - flow.top, width: x1 - x0, height: y1 - y0 });
    }
  return { width: flow.width, height: flow.height, covers };
}

