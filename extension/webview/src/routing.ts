// Edges around nodes: an edge whose curve would pass under a node that is not one of its ends is
// drawn instead as an orthogonal route around the node boxes (the shortest path with the fewest
// bends on the grid that the boxes' sides make, as orthogonal connector routers do), leaving and
// entering its ends' sides as the curve would. Pure: unit-tested, used by App.tsx's drawing.
import { pointAt, type EdgeGeometry, type Pt, type Rect, type Side } from "./edgeGeometry";

/** How far a route keeps from a node's box. */
export const ROUTE_CLEARANCE = 12;
/** The short straight piece an edge leaves and enters a node with before it turns. */
const STUB = 20;
/** A bend costs as much as this many pixels of length: routes with fewer bends win. */
const BEND = 60;
/** Past this many boxes in a route's neighbourhood the grid gets large: the curve is kept. */
const MAX_OBSTACLES = 32;

/** The grid's headings: 0 +x, 1 -x, 2 +y, 3 -y (a heading ^ 1 is its reverse). */
const HEADING: Record<Side, number> = { right: 0, left: 1, bottom: 2, top: 3 };
const OUT: Record<Side, Pt> = { left: { x: -1, y: 0 }, right: { x: 1, y: 0 }, top: { x: 0, y: -1 }, bottom: { x: 0, y: 1 } };

/** A uniform grid of node boxes, to find the boxes near a line without looking at all of them. */
export class NodeIndex {
  private cells = new Map<number, number[]>();
  private static CELL = 256;
  constructor(readonly boxes: Array<Rect & { id: string }>) {
    boxes.forEach((b, n) => {
      for (const k of NodeIndex.keys(b)) {
        const c = this.cells.get(k);
        if (c) c.push(n);
        else this.cells.set(k, [n]);
      }
    });
  }
  private static keys(r: Rect): number[] {
    const C = NodeIndex.CELL;
    const out: number[] = [];
    for (let i = Math.floor(r.x / C); i <= Math.floor((r.x + r.width) / C); i++) for (let j = Math.floor(r.y / C); j <= Math.floor((r.y + r.height) / C); j++) out.push(i * 100_003 + j);
    return out;
  }
  /** near lists the boxes that meet r. */
  near(r: Rect): Array<Rect & { id: string }> {
    const seen = new Set<number>();
    for (const k of NodeIndex.keys(r)) for (const n of this.cells.get(k) ?? []) seen.add(n);
    return [...seen].map((n) => this.boxes[n]).filter((b) => meets(b, r));
  }
}

const meets = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const inside = (p: Pt, r: Rect) => p.x > r.x && p.x < r.x + r.width && p.y > r.y && p.y < r.y + r.height;
const inflate = (r: Rect, d: number): Rect => ({ x: r.x - d, y: r.y - d, width: r.width + 2 * d, height: r.height + 2 * d });

/** segmentHits reports whether the segment a–b passes through the inside of r. */
export function segmentHits(a: Pt, b: Pt, r: Rect): boolean {
  // Liang–Barsky clipping against the open box
  let t0 = 0;
  let t1 = 1;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const edges: Array<[number, number]> = [
    [-dx, a.x - r.x],
    [dx, r.x + r.width - a.x],
    [-dy, a.y - r.y],
    [dy, r.y + r.height - a.y],
  ];
  for (const [p, q] of edges) {
    if (p === 0) {
      if (q <= 0) return false;
    } else {
      const t = q / p;
      if (p < 0) t0 = Math.max(t0, t);
      else t1 = Math.min(t1, t);
    }
  }
  return t1 - t0 > 1e-6;
}

/** polyline is the edge as drawn, as a list of points (its route, or its curve sampled). */
export function polyline(g: EdgeGeometry, samples = 24): Pt[] {
  if (g.route) return g.route;
  return Array.from({ length: samples + 1 }, (_, i) => pointAt(g, i / samples));
}

/** blockers are the boxes other than its ends' that the drawn edge passes under. */
export function blockers(g: EdgeGeometry, index: NodeIndex, ends: string[]): Array<Rect & { id: string }> {
  const pts = polyline(g);
  const xs = pts.map((p) => p.x);
  const ys = pts.map((p) => p.y);
  const box = { x: Math.min(...xs), y: Math.min(...ys), width: Math.max(...xs) - Math.min(...xs) + 1, height: Math.max(...ys) - Math.min(...ys) + 1 };
  const out: Array<Rect & { id: string }> = [];
  for (const n of index.near(box)) {
    if (ends.includes(n.id)) continue;
    const r = inflate(n, -1);
    for (let i = 1; i < pts.length; i++)
      if (segmentHits(pts[i - 1], pts[i], r)) {
        out.push(n);
        break;
      }
  }
  return out;
}

/**
 * route finds an orthogonal path from the edge's start to its end around every box in index
 * (its own ends included, past their stubs), or undefined when there is none nearby (the caller
 * keeps the curve). offset moves the route's inner segments sideways, to separate routes that
 * would share a channel.
 */
export function route(g: EdgeGeometry, index: NodeIndex, offset = 0): Pt[] | undefined {
  const a = { x: r1(g.p0.x + OUT[g.sourceSide].x * STUB), y: r1(g.p0.y + OUT[g.sourceSide].y * STUB) };
  const b = { x: r1(g.p3.x + OUT[g.targetSide].x * STUB), y: r1(g.p3.y + OUT[g.targetSide].y * STUB) };
  for (const margin of [160, 480]) {
    const region = { x: Math.min(a.x, b.x) - margin, y: Math.min(a.y, b.y) - margin, width: Math.abs(a.x - b.x) + 2 * margin, height: Math.abs(a.y - b.y) + 2 * margin };
    const near = index.near(region);
    if (near.length > MAX_OBSTACLES) return undefined;
    const boxes = near.map((n) => inflate(n, ROUTE_CLEARANCE - 1));
    const path = gridPath(a, b, boxes, region, offset, HEADING[g.sourceSide], HEADING[g.targetSide] ^ 1);
    if (path) return simplify([g.p0, ...path, g.p3]);
  }
  return undefined;
}

/** gridPath is the cheapest orthogonal path from a to b on the grid the boxes' sides make. */
function gridPath(a: Pt, b: Pt, boxes: Rect[], region: Rect, offset: number, leave: number, arrive: number): Pt[] | undefined {
  const xs = uniq([a.x, b.x, region.x, region.x + region.width, ...boxes.flatMap((r) => [r.x - 1 + offset, r.x + r.width + 1 + offset]), (a.x + b.x) / 2 + offset]);
  const ys = uniq([a.y, b.y, region.y, region.y + region.height, ...boxes.flatMap((r) => [r.y - 1 + offset, r.y + r.height + 1 + offset]), (a.y + b.y) / 2 + offset]);
  const W = xs.length;
  const H = ys.length;
  const free = (x: number, y: number) => !boxes.some((r) => inside({ x, y }, r));
  // the grid points inside a box, box by box (each box's sides are grid lines next to it, so a
  // piece between two free neighbours never crosses a box: only the ends' pieces are checked)
  const ok = new Uint8Array(W * H).fill(1);
  for (const r of boxes) {
    const i0 = firstAbove(xs, r.x);
    const j0 = firstAbove(ys, r.y);
    for (let j = j0; j < H && ys[j] < r.y + r.height; j++) for (let i = i0; i < W && xs[i] < r.x + r.width; i++) ok[j * W + i] = 0;
  }
  const start = ys.indexOf(a.y) * W + xs.indexOf(a.x);
  const goal = ys.indexOf(b.y) * W + xs.indexOf(b.x);
  ok[start] = 1;
  ok[goal] = 1;
  // Dijkstra over (point, heading): the heading makes a bend cost BEND
  const N = W * H * 4;
  const dist = new Float64Array(N).fill(Infinity);
  const prev = new Int32Array(N).fill(-1);
  const heap = new MinHeap();
  const DX = [1, -1, 0, 0];
  const DY = [0, 0, 1, -1];
  dist[start * 4 + leave] = 0;
  heap.push(start * 4 + leave, 0);
  while (heap.size) {
    const [s, cost] = heap.pop();
    if (cost > dist[s]) continue;
    const p = s >> 2;
    const d = s & 3;
    if (p === goal) return unwind(s, prev, xs, ys, W);
    const i = p % W;
    const j = (p - i) / W;
    for (let nd = 0; nd < 4; nd++) {
      if ((d ^ nd) === 1 && d >> 1 === nd >> 1) continue; // no turning back
      const ni = i + DX[nd];
      const nj = j + DY[nd];
      if (ni < 0 || nj < 0 || ni >= W || nj >= H) continue;
      const q = nj * W + ni;
      if (!ok[q] || ((p === start || q === goal) && !free((xs[i] + xs[ni]) / 2, (ys[j] + ys[nj]) / 2))) continue;
      const c = cost + Math.abs(xs[ni] - xs[i]) + Math.abs(ys[nj] - ys[j]) + (nd === d ? 0 : BEND) + (q === goal && nd !== arrive ? BEND : 0);
      const t = q * 4 + nd;
      if (c < dist[t]) {
        dist[t] = c;
        prev[t] = s;
        heap.push(t, c);
      }
    }
  }
  return undefined;
}

function unwind(s: number, prev: Int32Array, xs: number[], ys: number[], W: number): Pt[] {
  const out: Pt[] = [];
  for (let k = s; k >= 0; k = prev[k]) {
    const p = k >> 2;
    out.push({ x: xs[p % W], y: ys[Math.floor(p / W)] });
  }
  return out.reverse();
}

/** firstAbove is the index of the first value in sorted v greater than x. */
function firstAbove(v: number[], x: number): number {
  let lo = 0;
  let hi = v.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (v[mid] > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

const r1 = (v: number) => Math.round(v * 10) / 10;
const uniq = (v: number[]) => [...new Set(v.map((x) => Math.round(x * 10) / 10))].sort((p, q) => p - q);

/** simplify drops repeated points and the middle of three points in a line. */
function simplify(pts: Pt[]): Pt[] {
  const out: Pt[] = [];
  for (const p of pts) {
    const last = out[out.length - 1];
    if (last && Math.abs(last.x - p.x) < 0.01 && Math.abs(last.y - p.y) < 0.01) continue;
    const before = out[out.length - 2];
    if (before && last && ((before.x === last.x && last.x === p.x) || (before.y === last.y && last.y === p.y))) out.pop();
    out.push(p);
  }
  return out;
}

/** A binary heap of (item, priority), smallest first. */
class MinHeap {
  private items: number[] = [];
  private prio: number[] = [];
  get size() {
    return this.items.length;
  }
  push(item: number, p: number) {
    this.items.push(item);
    this.prio.push(p);
    let i = this.items.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (this.prio[up] <= this.prio[i]) break;
      this.swap(i, up);
      i = up;
    }
  }
  pop(): [number, number] {
    const top: [number, number] = [this.items[0], this.prio[0]];
    const item = this.items.pop()!;
    const p = this.prio.pop()!;
    if (this.items.length) {
      this.items[0] = item;
      this.prio[0] = p;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.items.length && this.prio[l] < this.prio[m]) m = l;
        if (r < this.items.length && this.prio[r] < this.prio[m]) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }
  private swap(i: number, j: number) {
    [this.items[i], this.items[j]] = [this.items[j], this.items[i]];
    [this.prio[i], this.prio[j]] = [this.prio[j], this.prio[i]];
  }
}
