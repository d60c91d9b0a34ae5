// How an edge is drawn between two node boxes: it leaves the side of its source that faces the
// target and enters the side of the target that faces the source (so an edge to a node on the
// left leaves from the left: it never loops behind its own source), as a cubic Bézier curve.
// Edges between the same two nodes (either way) fan out, each bent to its own side, so each has
// its own line and room for its label. Pure: unit-tested, and used by the label placement.

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type Side = "left" | "right" | "top" | "bottom";

export interface Pt {
  x: number;
  y: number;
}

export interface EdgeGeometry {
  sourceSide: Side;
  targetSide: Side;
  /** the curve: start, two control points, end (the arrow's tip, on the target's side) */
  p0: Pt;
  p1: Pt;
  p2: Pt;
  p3: Pt;
  /** set when the curve would pass under a node: the orthogonal route drawn instead (routing.ts), p0 to p3 */
  route?: Pt[];
}

// A target must be this far past the source's side for the edge to use that side.
const SIDE_CLEARANCE = 24;
/** How far apart parallel edges fan, at their middle. */
export const FAN = 40;
export const ARROW_LENGTH = 10;
const ARROW_HALF_WIDTH = 5;

const OUTWARD: Record<Side, Pt> = { left: { x: -1, y: 0 }, right: { x: 1, y: 0 }, top: { x: 0, y: -1 }, bottom: { x: 0, y: 1 } };

function sidePoint(r: Rect, side: Side, along: number): Pt {
  const cx = r.x + r.width / 2;
  const cy = r.y + r.height / 2;
  // an attachment point moves along its side for fanned edges, never past the corners
  const clampX = (d: number) => Math.max(-r.width / 2 + 8, Math.min(r.width / 2 - 8, d));
  const clampY = (d: number) => Math.max(-r.height / 2 + 8, Math.min(r.height / 2 - 8, d));
  switch (side) {
    case "left":
      return { x: r.x, y: cy + clampY(along) };
    case "right":
      return { x: r.x + r.width, y: cy + clampY(along) };
    case "top":
      return { x: cx + clampX(along), y: r.y };
    case "bottom":
      return { x: cx + clampX(along), y: r.y + r.height };
  }
}

/** sides picks the sides an edge uses: left and right when the boxes stand apart, else top and bottom. */
export function sides(source: Rect, target: Rect): [Side, Side] {
  if (target.x >= source.x + source.width + SIDE_CLEARANCE) return ["right", "left"];
  if (target.x + target.width <= source.x - SIDE_CLEARANCE) return ["left", "right"];
  return target.y + target.height / 2 >= source.y + source.height / 2 ? ["bottom", "top"] : ["top", "bottom"];
}

/**
 * edgeGeometry draws the edge from source to target. index and count place it among the edges
 * between the same two nodes; reversed says it runs against the pair's canonical direction
 * (the edges of a pair fan in one frame, whichever way each was drawn).
 */
export function edgeGeometry(source: Rect, target: Rect, index = 0, count = 1, reversed = false): EdgeGeometry {
  const [sourceSide, targetSide] = sides(source, target);
  // the fan offset, centred on 0, in the pair's canonical frame
  const k = (index - (count - 1) / 2) * (reversed ? -1 : 1);
  const horizontal = sourceSide === "left" || sourceSide === "right";
  // along the sides, perpendicular to the way the edge runs; flipped with the edge's direction
  const sign = horizontal ? (sourceSide === "right" ? 1 : -1) : sourceSide === "bottom" ? -1 : 1;
  const attach = k * 14 * sign;
  const p0 = sidePoint(source, sourceSide, attach);
  const p3 = sidePoint(target, targetSide, attach);
  const a = OUTWARD[sourceSide];
  const b = OUTWARD[targetSide];
  const span = horizontal ? Math.abs(p3.x - p0.x) : Math.abs(p3.y - p0.y);
  const reach = Math.max(40, span / 2);
  // the bend: both control points moved sideways by the fan offset (a cubic's middle moves by 3/4 of it)
  const bend = ((k * FAN) / 0.75) * sign;
  const side = horizontal ? { x: 0, y: bend } : { x: bend, y: 0 };
  const p1 = { x: p0.x + a.x * reach + side.x, y: p0.y + a.y * reach + side.y };
  const p2 = { x: p3.x + b.x * reach + side.x, y: p3.y + b.y * reach + side.y };
  return { sourceSide, targetSide, p0, p1, p2, p3 };
}

/** pointAt is the edge's point at t (0 at the source, 1 at the target): on its route, by length. */
export function pointAt(g: EdgeGeometry, t: number): Pt {
  if (g.route) return alongRoute(g.route, t);
  const u = 1 - t;
  const a = u * u * u;
  const b = 3 * u * u * t;
  const c = 3 * u * t * t;
  const d = t * t * t;
  return { x: a * g.p0.x + b * g.p1.x + c * g.p2.x + d * g.p3.x, y: a * g.p0.y + b * g.p1.y + c * g.p2.y + d * g.p3.y };
}

function alongRoute(r: Pt[], t: number): Pt {
  const lengths = r.slice(1).map((p, i) => Math.hypot(p.x - r[i].x, p.y - r[i].y));
  let d = lengths.reduce((a, b) => a + b, 0) * Math.max(0, Math.min(1, t));
  for (let i = 0; i < lengths.length; i++) {
    if (d <= lengths[i] || i === lengths.length - 1) {
      const k = lengths[i] ? Math.min(1, d / lengths[i]) : 0;
      return { x: r[i].x + (r[i + 1].x - r[i].x) * k, y: r[i].y + (r[i + 1].y - r[i].y) * k };
    }
    d -= lengths[i];
  }
  return r[r.length - 1];
}

const f = (n: number) => Math.round(n * 10) / 10;

/** How round a route's corners are. */
const CORNER = 8;

/** routePath draws a route's corners rounded. */
function routePath(r: Pt[]): string {
  let d = `M${f(r[0].x)},${f(r[0].y)}`;
  for (let i = 1; i < r.length - 1; i++) {
    const [a, b, c] = [r[i - 1], r[i], r[i + 1]];
    const k1 = Math.min(CORNER, Math.hypot(b.x - a.x, b.y - a.y) / 2);
    const k2 = Math.min(CORNER, Math.hypot(c.x - b.x, c.y - b.y) / 2);
    const u = unit(a, b);
    const v = unit(b, c);
    d += ` L${f(b.x - u.x * k1)},${f(b.y - u.y * k1)} Q${f(b.x)},${f(b.y)} ${f(b.x + v.x * k2)},${f(b.y + v.y * k2)}`;
  }
  const last = r[r.length - 1];
  return `${d} L${f(last.x)},${f(last.y)}`;
}

function unit(a: Pt, b: Pt): Pt {
  const l = Math.hypot(b.x - a.x, b.y - a.y) || 1;
  return { x: (b.x - a.x) / l, y: (b.y - a.y) / l };
}

/** edgePath is the SVG path of the edge: its route, or its curve. */
export function edgePath(g: EdgeGeometry): string {
  if (g.route) return routePath(g.route);
  return `M${f(g.p0.x)},${f(g.p0.y)} C${f(g.p1.x)},${f(g.p1.y)} ${f(g.p2.x)},${f(g.p2.y)} ${f(g.p3.x)},${f(g.p3.y)}`;
}

/** arrowPath is the filled arrowhead at the target, along the curve's last direction. */
export function arrowPath(g: EdgeGeometry): string {
  const from = g.route ? g.route[g.route.length - 2] : g.p2;
  let dx = g.p3.x - from.x;
  let dy = g.p3.y - from.y;
  const len = Math.hypot(dx, dy) || 1;
  dx /= len;
  dy /= len;
  const bx = g.p3.x - dx * ARROW_LENGTH;
  const by = g.p3.y - dy * ARROW_LENGTH;
  return `M${f(g.p3.x)},${f(g.p3.y)} L${f(bx - dy * ARROW_HALF_WIDTH)},${f(by + dx * ARROW_HALF_WIDTH)} L${f(bx + dy * ARROW_HALF_WIDTH)},${f(by - dx * ARROW_HALF_WIDTH)} Z`;
}
