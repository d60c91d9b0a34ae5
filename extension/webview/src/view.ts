// Where the view opens, and where Fit goes. The canvas's own controls (the toolbar, the legend,
// the minimap) float over it, so the view is planned in the room they leave: the largest
// rectangles of the canvas clear of them. A flow that fits there at a readable size opens whole;
// a larger one opens at the readable zoom on its story's start — the interaction that runs first
// (the first in the file that waits for no other), whole — placed so that no card or label is
// under a control, the rest a pan or the minimap away. A picture shrunk until its text is 6 px
// high is not a picture of anything. Fit, when asked, shows everything, however small.
// Pure: unit-tested.
import type { Rect } from "./edgeGeometry";

/** The canvas's size on screen and the boxes of the controls that float over it (in its coordinates). */
export interface Pane {
  width: number;
  height: number;
  covers: Rect[];
}

export interface View {
  x: number;
  y: number;
  zoom: number;
}

/**
 * Room kept between the content and the canvas's edges or a control: React Flow pans the view
 * when a drag (a connection, a node) comes within 40 px of the canvas's edge, so a card nearer
 * than that would slide away from the pointer aiming at it.
 */
export const MARGIN = 40;

/**
 * freeRects are the largest rectangles of the pane that meet no control (each kept MARGIN away
 * from the controls and the pane's edges), largest first.
 */
export function freeRects(pane: Pane): Rect[] {
  const covers = pane.covers.map((c) => ({ x: c.x - MARGIN, y: c.y - MARGIN, width: c.width + 2 * MARGIN, height: c.height + 2 * MARGIN }));
  const inside = (v: number, end: number) => Math.min(end - MARGIN, Math.max(MARGIN, v));
  const xs = uniq([MARGIN, pane.width - MARGIN, ...covers.flatMap((c) => [c.x, c.x + c.width])].map((x) => inside(x, pane.width)));
  const ys = uniq([MARGIN, pane.height - MARGIN, ...covers.flatMap((c) => [c.y, c.y + c.height])].map((y) => inside(y, pane.height)));
  const found: Rect[] = [];
  for (let a = 0; a < xs.length; a++)
    for (let b = a + 1; b < xs.length; b++)
      for (let c = 0; c < ys.length; c++)
        for (let d = c + 1; d < ys.length; d++) {
          const r = { x: xs[a], y: ys[c], width: xs[b] - xs[a], height: ys[d] - ys[c] };
          if (!covers.some((k) => meets(k, r))) found.push(r);
        }
  const maximal = found.filter((r) => !found.some((o) => o !== r && contains(o, r)));
  const out = maximal.length ? maximal : [{ x: 0, y: 0, width: Math.max(1, pane.width), height: Math.max(1, pane.height) }];
  return out.sort((p, q) => q.width * q.height - p.width * p.height);
}

/**
 * fitAll is the view that shows every box whole in the largest room the controls leave, centred,
 * at most at maxZoom, however small that makes it (Fit, when the person asks for everything).
 */
export function fitAll(content: Rect[], pane: Pane, maxZoom = 1): View {
  if (content.length === 0) return { x: 0, y: 0, zoom: Math.min(1, maxZoom) };
  const b = bounds(content);
  const [room, zoom] = bestRoom(b, freeRects(pane), maxZoom);
  return centred(b, room, zoom);
}

/**
 * openingView is the view a flow opens at: everything, when that is readable (zoom ≥ floor);
 * else the floor's zoom with the story (its boxes) wholly in a free room, and among the ways to
 * place it, the one with the fewest boxes under a control, then the most boxes wholly in view.
 */
export function openingView(content: Rect[], story: Rect[], pane: Pane, floor: number, maxZoom = 1): View {
  if (content.length === 0) return { x: 0, y: 0, zoom: Math.max(floor, Math.min(1, maxZoom)) };
  const b = bounds(content);
  const rooms = freeRects(pane);
  const [room, fit] = bestRoom(b, rooms, Math.max(floor, maxZoom));
  if (fit >= floor) return centred(b, room, fit);
  const zoom = floor;
  const s = bounds(story.length ? story : entryColumn(content));
  let best: { view: View; score: number[] } | undefined;
  for (const r of rooms)
    for (const x of anchors(b.x, b.x + b.width, s.x, s.x + s.width, r.x, r.x + r.width, zoom))
      for (const y of anchors(b.y, b.y + b.height, s.y, s.y + s.height, r.y, r.y + r.height, zoom)) {
        const view = { x, y, zoom };
        const score = [within(s, view, r) ? 1 : 0, -under(content, view, pane), inView(content, view, pane)];
        if (!best || better(score, best.score)) best = { view, score };
      }
  return best!.view;
}

/**
 * anchors are the offsets along one axis worth trying: the content's start or end, or the story's
 * start, middle or end, at the room's start or end, each moved as little as needed to keep the
 * story in the room (its start first, when it is larger than the room).
 */
function anchors(c0: number, c1: number, s0: number, s1: number, r0: number, r1: number, zoom: number): number[] {
  const keep = (t: number) => {
    if (s1 * zoom + t > r1) t = r1 - s1 * zoom;
    if (s0 * zoom + t < r0) t = r0 - s0 * zoom;
    return t;
  };
  const raw = [r0 - c0 * zoom, r1 - c1 * zoom, r0 - s0 * zoom, r1 - s1 * zoom, (r0 + r1) / 2 - ((s0 + s1) / 2) * zoom];
  return uniq(raw.map(keep));
}

/** under counts the boxes that, in this view, are at least partly under a control. */
function under(content: Rect[], v: View, pane: Pane): number {
  return content.filter((c) => pane.covers.some((k) => meets(k, onScreen(c, v)))).length;
}

/** inView counts the boxes wholly on the canvas in this view. */
function inView(content: Rect[], v: View, pane: Pane): number {
  return content.filter((c) => contains({ x: 0, y: 0, width: pane.width, height: pane.height }, onScreen(c, v))).length;
}

const within = (s: Rect, v: View, r: Rect) => contains({ x: r.x - 0.5, y: r.y - 0.5, width: r.width + 1, height: r.height + 1 }, onScreen(s, v));

function better(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

/** bestRoom is the room the box fits largest in, and that zoom (at most maxZoom). */
function bestRoom(b: Rect, rooms: Rect[], maxZoom: number): [Rect, number] {
  let best: [Rect, number] = [rooms[0], 0];
  for (const r of rooms) {
    const z = Math.min(r.width / (b.width || 1), r.height / (b.height || 1), maxZoom);
    if (z > best[1]) best = [r, z];
  }
  return best;
}

function centred(b: Rect, r: Rect, zoom: number): View {
  return { zoom, x: r.x + (r.width - b.width * zoom) / 2 - b.x * zoom, y: r.y + (r.height - b.height * zoom) / 2 - b.y * zoom };
}

/**
 * entryColumn is the flow's first layer as the layout draws it: the boxes that start within half
 * a card of the leftmost one (each part of a flow is laid out in layers from the left, and the
 * parts are packed in rows, so their first layers line up at the left). The story when there is
 * no interaction to start from.
 */
export function entryColumn(nodes: Rect[]): Rect[] {
  const first = nodes.reduce((a, b) => (b.x < a.x ? b : a));
  return nodes.filter((n) => n.x < first.x + first.width / 2);
}

export type Side = "top" | "right" | "bottom" | "left";

/** beyond counts the boxes wholly beyond each side of the view (the pane, in flow coordinates). */
export function beyond(boxes: Rect[], view: Rect): Record<Side, number> {
  const out: Record<Side, number> = { top: 0, right: 0, bottom: 0, left: 0 };
  for (const b of boxes) {
    if (b.y + b.height <= view.y) out.top++;
    else if (b.y >= view.y + view.height) out.bottom++;
    if (b.x + b.width <= view.x) out.left++;
    else if (b.x >= view.x + view.width) out.right++;
  }
  return out;
}

export function bounds(rs: Rect[]): Rect {
  const x0 = Math.min(...rs.map((n) => n.x));
  const y0 = Math.min(...rs.map((n) => n.y));
  const x1 = Math.max(...rs.map((n) => n.x + n.width));
  const y1 = Math.max(...rs.map((n) => n.y + n.height));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

const onScreen = (c: Rect, v: View): Rect => ({ x: c.x * v.zoom + v.x, y: c.y * v.zoom + v.y, width: c.width * v.zoom, height: c.height * v.zoom });
const meets = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const contains = (o: Rect, r: Rect) => r.x >= o.x && r.y >= o.y && r.x + r.width <= o.x + o.width && r.y + r.height <= o.y + o.height;
const uniq = (v: number[]) => [...new Set(v)].sort((p, q) => p - q);
