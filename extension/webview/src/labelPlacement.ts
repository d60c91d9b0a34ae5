// Where each edge label goes: on its own curve, at the first of a few spots (the middle first,
// then out toward the ends, then to either side of the line) where its box overlaps no node and
// no label placed before it. A label with no room at its full width tries its shorter forms
// (the canvas shortens the text with an ellipsis); one that finds no free spot at all takes the
// one that overlaps least, and says so (free: false). Pure; a grid index keeps it near-linear.
import { pointAt, type EdgeGeometry, type Pt, type Rect } from "./edgeGeometry";

export interface LabelRequest {
  id: string;
  /** the widths of the label's forms, full first, then ever shorter */
  widths: number[];
  height: number;
  geometry: EdgeGeometry;
}

export interface PlacedLabel {
  /** the label's centre */
  x: number;
  y: number;
  /** which of its widths it got (0: the full label) */
  form: number;
  free: boolean;
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

/** candidates are the spots a label may take on its curve, best first. */
function candidates(g: EdgeGeometry, width: number, height: number): Pt[] {
  const out: Pt[] = ALONG.map((t) => pointAt(g, t));
  // then beside the line, at the middle spots: across the way the edge runs, further each time
  const horizontal = g.sourceSide === "left" || g.sourceSide === "right";
  for (const step of [1, 2, 3])
    for (const t of ALONG.slice(0, 5)) {
      const p = pointAt(g, t);
      for (const s of [1, -1]) {
        const d = s * step * (horizontal ? height / 2 + 6 : width / 2 + 6);
        out.push(horizontal ? { x: p.x, y: p.y + d } : { x: p.x + d, y: p.y });
      }
    }
  return out;
}

// Past this many labels, a label with no room tries its full and its shortest form only: a
// huge tangle is not read label by label, and must not make every frame slow.
const THOROUGH = 300;

/** placeLabels places the labels in order (earlier ones get the better spots), clear of the nodes. */
export function placeLabels(labels: LabelRequest[], nodes: Rect[]): Map<string, PlacedLabel> {
  const obstacles = new Grid();
  for (const n of nodes) obstacles.add(inflate(n, NODE_CLEARANCE));
  const out = new Map<string, PlacedLabel>();
  const thorough = labels.length <= THOROUGH;
  for (const l of labels) {
    let found: PlacedLabel | undefined;
    // the first free spot: the full label first, then its shorter forms
    search: for (let form = 0; form < l.widths.length; form++) {
      if (!thorough && form > 0 && form < l.widths.length - 1) continue;
      for (const p of candidates(l.geometry, l.widths[form], l.height))
        if (obstacles.overlap(boxAt(p, l.widths[form], l.height), true) === 0) {
          found = { x: p.x, y: p.y, form, free: true };
          break search;
        }
    }
    if (!found) {
      // no free spot anywhere: the least crowded one, at the shortest form
      const form = l.widths.length - 1;
      let cost = Infinity;
      for (const p of candidates(l.geometry, l.widths[form], l.height)) {
        const c = obstacles.overlap(boxAt(p, l.widths[form], l.height));
        if (c < cost) {
          cost = c;
          found = { x: p.x, y: p.y, form, free: false };
        }
      }
    }
    out.set(l.id, found!);
    obstacles.add(inflate(boxAt(found!, l.widths[found!.form], l.height), LABEL_CLEARANCE));
  }
  return out;
}
