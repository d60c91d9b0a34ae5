// Where each edge label goes: on the edges it names, at the first of a few spots where its box
// overlaps no node and no label placed before it: a fan's label near the node its edges share
// (out along them, then beside them), a lone edge's about its middle (then out toward the ends,
// then to either side of the line). A label with no room at its full width tries its shorter forms
// (the canvas shortens the text with an ellipsis); one that finds no free spot at all takes the
// one that overlaps least, and says so (free: false). Pure; a grid index keeps it near-linear.
import { pointAt, type EdgeGeometry, type Pt, type Rect } from "./edgeGeometry";

export interface LabelRequest {
  id: string;
  /** the widths of the label's forms, full first, then ever narrower */
  widths: number[];
  /** the forms' heights (one for all, or one per form) */
  height: number | number[];
  geometry: EdgeGeometry;
  /** the edges the label names (its own, and those that share it); none: only its geometry's */
  edges?: string[];
  /** the shapes of the edges it names, when more than its own: a fan's */
  geometries?: EdgeGeometry[];
  /**
   * a fan's label: the box of the node it stands by, which end of each of its edges that node is
   * (none for an edge that does not touch it), and the boxes of the fan's other nodes; it stays
   * nearer the first than any of those
   */
  by?: { node: Rect; ends: Array<"source" | "target" | undefined>; others: Rect[] };
}

/** An edge's line, for keeping each label nearer its own edge than any other. */
export interface EdgeLine {
  id: string;
  points: Pt[];
}

export interface PlacedLabel {
  /** the label's centre */
  x: number;
  y: number;
  /** which of its widths it got (0: the full label) */
  form: number;
  free: boolean;
  /** its box's size */
  width: number;
  height: number;
}

/** Space kept between a label and a node, and between two labels. */
export const NODE_CLEARANCE = 4;
export const LABEL_CLEARANCE = 2;

const ALONG = [0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.18, 0.82, 0.12, 0.88];
const CELL = 128;

/** A uniform grid of boxes, to ask what a box overlaps without looking at every other box. */
class Grid {
  private cells = new Map<number, number[]>(); // cell → indexes into rects
  private rects: Rect[] = [];
  private stamp: number[] = []; // the query that last saw each rect (no Set per query)
  private query = 0;

  add(r: Rect) {
    const n = this.rects.length;
    this.rects.push(r);
    this.stamp.push(0);
    const [i0, i1, j0, j1] = span(r);
    for (let i = i0; i <= i1; i++)
      for (let j = j0; j <= j1; j++) {
        const k = i * 100_003 + j;
        const c = this.cells.get(k);
        if (c) c.push(n);
        else this.cells.set(k, [n]);
      }
  }

  /** overlap is the area r shares with what the grid holds (0: free); with first, it stops at the first overlap. */
  overlap(r: Rect, first = false): number {
    let area = 0;
    const q = ++this.query;
    const [i0, i1, j0, j1] = span(r);
    for (let i = i0; i <= i1; i++)
      for (let j = j0; j <= j1; j++) {
        const cell = this.cells.get(i * 100_003 + j);
        if (!cell) continue;
        for (const n of cell) {
          if (this.stamp[n] === q) continue;
          this.stamp[n] = q;
          const o = this.rects[n];
          const w = Math.min(r.x + r.width, o.x + o.width) - Math.max(r.x, o.x);
          if (w <= 0) continue;
          const h = Math.min(r.y + r.height, o.y + o.height) - Math.max(r.y, o.y);
          if (h <= 0) continue;
          area += w * h;
          if (first) return area;
        }
      }
    return area;
  }
}

/** span is the range of grid cells a box covers. */
function span(r: Rect): [number, number, number, number] {
  return [Math.floor(r.x / CELL), Math.floor((r.x + r.width) / CELL), Math.floor(r.y / CELL), Math.floor((r.y + r.height) / CELL)];
}

const inflate = (r: Rect, d: number): Rect => ({ x: r.x - d, y: r.y - d, width: r.width + 2 * d, height: r.height + 2 * d });
const boxAt = (p: Pt, w: number, h: number): Rect => ({ x: p.x - w / 2, y: p.y - h / 2, width: w, height: h });

/** How much of an edge a label on it must leave in sight, in px. */
const EDGE_IN_SIGHT = 48;

/** How far out along a fan's edges its label may go, in px from the shared node's side, beyond its own half size. */
const NEAR = [14, 30, 48, 70, 96, 130];

/**
 * candidates are the spots a label may take, best first: on its edges, then beside them. A lone
 * edge's label starts at the middle; an edge too short to show past its label on the line gets
 * the spots beside it first, so the label never hides its own edge. A fan's label starts next to
 * the node its edges share and moves out along each of them.
 */
function candidates(l: LabelRequest, width: number, height: number, tier: number): Pt[] {
  if (l.by) return tier === 0 ? nearNode(l.geometries ?? [l.geometry], l.by.ends, width, height) : alongMiddle(l.geometry, width, height);
  return tier === 0 ? alongMiddle(l.geometry, width, height) : [];
}

/** nearNode: the spots near a fan's node along each of its edges that touch it, the nearest first, then beside them. */
function nearNode(all: EdgeGeometry[], ends: Array<"source" | "target" | undefined>, width: number, height: number): Pt[] {
  const on: Pt[] = [];
  const beside: Pt[] = [];
  // the longest edges first: they have room for a label near the node without sitting on the short hop beside it
  const byLength = all
    .map((g, i) => ({ g, at: ends[i], line: polylineOf(g) }))
    .filter((x): x is { g: EdgeGeometry; at: "source" | "target"; line: Pt[] } => !!x.at)
    .sort((a, b) => lengthOf(b.line) - lengthOf(a.line));
  // a label's text runs across: on edges that leave the node across when it has any (a label on a
  // hop down to the next card would hang past the cards' sides), beside the others
  const across = (x: { g: EdgeGeometry; at: "source" | "target" }) => ["left", "right"].includes(x.at === "source" ? x.g.sourceSide : x.g.targetSide);
  const anyAcross = byLength.some(across);
  for (const d of NEAR)
    for (const x of byLength) {
      const { g, at, line } = x;
      const horizontal = across(x);
      const p = atDistance(line, at, d + (horizontal ? width / 2 : height / 2));
      if (!p) continue;
      // on a hop too short to show past the label, beside it only: a label never hides its own edge
      const run = horizontal ? Math.abs(g.p3.x - g.p0.x) : Math.abs(g.p3.y - g.p0.y);
      if ((horizontal || !anyAcross) && (g.route || run - (horizontal ? width : height) >= EDGE_IN_SIGHT)) on.push(p);
      for (const s of [1, -1]) beside.push(horizontal ? { x: p.x, y: p.y + s * (height / 2 + 6) } : { x: p.x + s * (width / 2 + 6), y: p.y });
    }
  return [...on, ...beside];
}

/** polylineOf is an edge's line as points: its route, or its curve sampled. */
function polylineOf(g: EdgeGeometry): Pt[] {
  return g.route ?? Array.from({ length: 33 }, (_, i) => pointAt(g, i / 32));
}

const lengthOf = (line: Pt[]) => line.slice(1).reduce((s, p, i) => s + Math.hypot(p.x - line[i].x, p.y - line[i].y), 0);

/** atDistance is the point d px along a line from its start (or from its end); none past its middle. */
function atDistance(line: Pt[], from: "source" | "target", d: number): Pt | undefined {
  const pts = from === "source" ? line : [...line].reverse();
  if (d > lengthOf(pts) * 0.6) return undefined;
  for (let i = 1; i < pts.length; i++) {
    const len = Math.hypot(pts[i].x - pts[i - 1].x, pts[i].y - pts[i - 1].y);
    if (d <= len) return { x: pts[i - 1].x + ((pts[i].x - pts[i - 1].x) * d) / len, y: pts[i - 1].y + ((pts[i].y - pts[i - 1].y) * d) / len };
    d -= len;
  }
  return undefined;
}

function alongMiddle(g: EdgeGeometry, width: number, height: number): Pt[] {
  const on: Pt[] = ALONG.map((t) => pointAt(g, t));
  // beside the line, at the middle spots: across the way the edge runs, further each time
  const horizontal = g.sourceSide === "left" || g.sourceSide === "right";
  const beside: Pt[] = [];
  for (const step of [1, 2, 3])
    for (const t of ALONG.slice(0, 5)) {
      const p = pointAt(g, t);
      for (const s of [1, -1]) {
        const d = s * step * (horizontal ? height / 2 + 6 : width / 2 + 6);
        beside.push(horizontal ? { x: p.x, y: p.y + d } : { x: p.x + d, y: p.y });
      }
    }
  const run = horizontal ? Math.abs(g.p3.x - g.p0.x) : Math.abs(g.p3.y - g.p0.y);
  const covered = horizontal ? width : height;
  return run - covered < EDGE_IN_SIGHT && !g.route ? [...beside, ...on] : [...on, ...beside];
}

/** The edges' lines as segments in a grid: which edge is nearest a point. */
class LineIndex {
  private cells = new Map<number, Array<[Pt, Pt, string]>>();
  private static CELL = 96;
  constructor(lines: EdgeLine[]) {
    for (const l of lines)
      for (let i = 1; i < l.points.length; i++) {
        const a = l.points[i - 1];
        const b = l.points[i];
        for (const k of LineIndex.keys(Math.min(a.x, b.x), Math.min(a.y, b.y), Math.max(a.x, b.x), Math.max(a.y, b.y))) {
          const c = this.cells.get(k);
          if (c) c.push([a, b, l.id]);
          else this.cells.set(k, [[a, b, l.id]]);
        }
      }
  }
  private static keys(x0: number, y0: number, x1: number, y1: number): number[] {
    const C = LineIndex.CELL;
    const out: number[] = [];
    for (let i = Math.floor(x0 / C); i <= Math.floor(x1 / C); i++) for (let j = Math.floor(y0 / C); j <= Math.floor(y1 / C); j++) out.push(i * 100_003 + j);
    return out;
  }
  /** nearerOther reports whether an edge not in own passes as near p as own's nearest (or nearer). */
  nearerOther(p: Pt, own: Set<string>): boolean {
    let mine = Infinity;
    let other = Infinity;
    // the cells around p, then a wider square when the own edge is not among them
    for (const r of [LineIndex.CELL, 4 * LineIndex.CELL]) {
      for (const k of LineIndex.keys(p.x - r, p.y - r, p.x + r, p.y + r))
        for (const [a, b, id] of this.cells.get(k) ?? []) {
          const d = segmentDistance(p, a, b);
          if (own.has(id)) mine = Math.min(mine, d);
          else other = Math.min(other, d);
        }
      if (mine <= r) break;
    }
    return other <= mine + 2;
  }
}

/** byItsNode says whether a fan's label at p is nearer the node its edges share than any of their other ends. */
function byItsNode(p: Pt, by: LabelRequest["by"]): boolean {
  if (!by) return true;
  const mine = boxDistance(p, by.node);
  return by.others.every((o) => boxDistance(p, o) > mine);
}

function boxDistance(p: Pt, r: Rect): number {
  const dx = Math.max(r.x - p.x, 0, p.x - (r.x + r.width));
  const dy = Math.max(r.y - p.y, 0, p.y - (r.y + r.height));
  return Math.hypot(dx, dy);
}

function segmentDistance(p: Pt, a: Pt, b: Pt): number {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = dx * dx + dy * dy;
  const t = len ? Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / len)) : 0;
  return Math.hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

// Past this many labels, a label with no room tries its full and its shortest form only: a
// huge tangle is not read label by label, and must not make every frame slow.
const THOROUGH = 300;

/**
 * placeLabels places the labels in order (earlier ones get the better spots), clear of the nodes;
 * with lines, each label's centre nearer the edges it names than any other edge (a label is read
 * as the nearest line's).
 */
export function placeLabels(labels: LabelRequest[], nodes: Rect[], lines?: EdgeLine[]): Map<string, PlacedLabel> {
  const nearest = lines && labels.length <= THOROUGH ? new LineIndex(lines) : undefined;
  const obstacles = new Grid();
  for (const n of nodes) obstacles.add(inflate(n, NODE_CLEARANCE));
  const out = new Map<string, PlacedLabel>();
  const thorough = labels.length <= THOROUGH;
  for (const l of labels) {
    let found: PlacedLabel | undefined;
    const height = (form: number) => (Array.isArray(l.height) ? l.height[form] : l.height);
    // the first free spot: the full label first, then its other forms
    const own = new Set(l.edges ?? [l.id]);
    // by the shared node in any of its forms before anywhere else on its edges (a fan's label)
    search: for (const tier of l.by ? [0, 1] : [0])
      for (let form = 0; form < l.widths.length; form++) {
        if (!thorough && form > 0 && form < l.widths.length - 1) continue;
        const [w, h] = [l.widths[form], height(form)];
        for (const p of candidates(l, w, h, tier))
          if (obstacles.overlap(boxAt(p, w, h), true) === 0 && !nearest?.nearerOther(p, own) && (tier > 0 || byItsNode(p, l.by))) {
            found = { x: p.x, y: p.y, form, free: true, width: w, height: h };
            break search;
          }
      }
    if (!found) {
      // no free spot anywhere: the least crowded one, at the last form
      const form = l.widths.length - 1;
      const [w, h] = [l.widths[form], height(form)];
      let cost = Infinity;
      for (const p of [...candidates(l, w, h, 0), ...candidates(l, w, h, 1)]) {
        const c = obstacles.overlap(boxAt(p, w, h));
        if (c < cost) {
          cost = c;
          found = { x: p.x, y: p.y, form, free: false, width: w, height: h };
        }
      }
    }
    out.set(l.id, found!);
    obstacles.add(inflate(boxAt(found!, found!.width, found!.height), LABEL_CLEARANCE));
  }
  return out;
}
