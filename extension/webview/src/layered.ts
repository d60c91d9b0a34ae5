// A layered ("Sugiyama") layout of one graph, drawn left to right, in the four classic phases:
// 1. orient every edge by role rank (roles.ts) and break the remaining cycles (a DFS reverses its
//    back edges), so the graph is acyclic and leads come before the nodes they direct;
// 2. layer it: longest path from the sources, then each source pulled next to its first successor;
// 3. order each layer to cut crossings: long edges get a chain of dummy nodes, then barycenter
//    sweeps (and, on small graphs, adjacent swaps) keep the order with the fewest crossings;
// 4. place: layers side by side, each gap as wide as the widest label it must hold; within a
//    layer, nodes pulled toward the median of their neighbours with the order and the spacing
//    kept (an isotonic regression, solved exactly by pool-adjacent-violators).
// Pure and linear-ish in nodes + dummies: 500 nodes and 1,000 edges take tens of milliseconds.
import type { Point } from "../../src/canvas/protocol";
import { idRecord } from "./records";

export interface LayoutNode {
  id: string;
  width: number;
  height: number;
  /** layout rank from roles.ts: lower ranks come first */
  rank: number;
}

export interface LayoutEdge {
  source: string;
  target: string;
  /** the width of the edge's label: the gap it is drawn in is at least this wide */
  label: number;
  /**
   * between peers (a debate's debaters, a blackboard's contributors): laid out side by side, in one
   * layer, whichever way it was drawn, rather than one after the other
   */
  lateral?: boolean;
}

export interface LayeredOptions {
  /** space between two nodes of one layer */
  nodeGap: number;
  /** the least space between two layers */
  layerGap: number;
  /** space kept on each side of a label within its gap */
  labelMargin: number;
}

export interface LayeredResult {
  /** top-left corners, the smallest x and y being 0 */
  positions: Record<string, Point>;
  width: number;
  height: number;
}

export const DEFAULT_LAYERED: LayeredOptions = { nodeGap: 48, layerGap: 120, labelMargin: 28 };

// Long edges run through dummy nodes: thin, so they take little room, but kept apart from nodes.
const DUMMY_HEIGHT = 16;
const DUMMY_GAP = 10;
// Ordering effort: sweeps on small graphs (with adjacent swaps), fewer on large ones.
const SMALL = 400;
// Dummy nodes allowed for long edges: this many, or twice the nodes.
const DUMMY_BUDGET = 2000;

/** layered lays out one graph. Edges whose ends are not among nodes, and self-loops, are ignored. */
export function layered(nodes: LayoutNode[], edges: LayoutEdge[], o: LayeredOptions = DEFAULT_LAYERED, progress?: (f: number) => void): LayeredResult {
  const n = nodes.length;
  if (n === 0) return { positions: {}, width: 0, height: 0 };
  const index = new Map(nodes.map((x, i) => [x.id, i]));
  const rank = nodes.map((x) => x.rank);

  // 1. Orientation by rank, one edge per pair (a pair drawn both ways is laid out as one).
  const pairLabel = new Map<number, number>(); // key u*n+v (u→v as laid out) → widest label
  const out: number[][] = nodes.map(() => []);
  const lateral: Array<[number, number]> = [];
  for (const e of edges) {
    let u = index.get(e.source);
    let v = index.get(e.target);
    if (u === undefined || v === undefined || u === v) continue;
    if (e.lateral) {
      lateral.push([u, v]);
      continue;
    }
    if (rank[u] > rank[v]) [u, v] = [v, u];
    const back = v * n + u;
    if (pairLabel.has(back)) {
      pairLabel.set(back, Math.max(pairLabel.get(back)!, e.label));
      continue;
    }
    const key = u * n + v;
    if (!pairLabel.has(key)) out[u].push(v);
    pairLabel.set(key, Math.max(pairLabel.get(key) ?? 0, e.label));
  }
  const byRank = (a: number, b: number) => rank[a] - rank[b] || a - b;
  for (const l of out) l.sort(byRank);
  const order = nodes.map((_, i) => i).sort(byRank);

  // Cycles: a DFS from the sources first (then everything else), in rank order; an edge to a
  // node still on the stack closes a cycle and is reversed. The reverse postorder is topological.
  const indeg = new Array<number>(n).fill(0);
  for (const l of out) for (const v of l) indeg[v]++;
  const state = new Uint8Array(n); // 0 new, 1 on the stack, 2 done
  const post: number[] = [];
  const reversed = new Set<number>(); // u*n+v of edges laid out as v→u
  const dfs = (root: number) => {
    const stack: Array<[number, number]> = [[root, 0]];
    state[root] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1];
      const [u, i] = top;
      if (i < out[u].length) {
        top[1]++;
        const v = out[u][i];
        if (state[v] === 0) {
          state[v] = 1;
          stack.push([v, 0]);
        } else if (state[v] === 1) reversed.add(u * n + v);
      } else {
        state[u] = 2;
        post.push(u);
        stack.pop();
      }
    }
  };
  for (const u of order) if (indeg[u] === 0 && state[u] === 0) dfs(u);
  for (const u of order) if (state[u] === 0) dfs(u);
  const succ: number[][] = nodes.map(() => []);
  const pred: number[][] = nodes.map(() => []);
  const labelOf = new Map<number, number>();
  for (let u = 0; u < n; u++)
    for (const v of out[u]) {
      const [a, b] = reversed.has(u * n + v) ? [v, u] : [u, v];
      succ[a].push(b);
      pred[b].push(a);
      labelOf.set(a * n + b, pairLabel.get(u * n + v)!);
    }
  const topo = post.reverse();
  progress?.(0.1);

  // 2. Layers: longest path from the sources; then sources move right, next to their successors.
  const layer = new Array<number>(n).fill(0);
  for (const u of topo) for (const v of succ[u]) layer[v] = Math.max(layer[v], layer[u] + 1);
  for (let k = topo.length - 1; k >= 0; k--) {
    const u = topo[k];
    if (pred[u].length === 0 && succ[u].length > 0) layer[u] = Math.min(...succ[u].map((v) => layer[v])) - 1;
  }
  // a node tied to the rest only by lateral edges stands in its peer's layer
  for (let pass = 0; pass < 2; pass++)
    for (const [u, v] of lateral) {
      const alone = (x: number) => succ[x].length === 0 && pred[x].length === 0;
      if (alone(u) && !alone(v)) layer[u] = layer[v];
      else if (alone(v) && !alone(u)) layer[v] = layer[u];
    }
  const layerCount = Math.max(...layer) + 1;

  // 3. Long edges get a chain of dummy nodes, one a layer, so that they are ordered (and given
  // room) like any other edge. On a huge tangle that would be tens of thousands of dummies: past
  // a budget, long edges join their ends directly and only neighbouring layers count crossings.
  const height = nodes.map((x) => Math.max(1, x.height));
  const width = nodes.map((x) => Math.max(1, x.width));
  const up: number[][] = nodes.map(() => []); // neighbours in the layers before
  const down: number[][] = nodes.map(() => []); // neighbours in the layers after
  const owner: number[] = nodes.map((_, i) => i); // a dummy's edge source, for stable ties
  const gapLabel = new Array<number>(Math.max(0, layerCount - 1)).fill(0);
  const link = (a: number, b: number) => {
    down[a].push(b);
    up[b].push(a);
  };
  let dummies = 0;
  for (let u = 0; u < n; u++) for (const v of succ[u]) dummies += layer[v] - layer[u] - 1;
  const chains = dummies <= Math.max(DUMMY_BUDGET, 2 * n);
  for (let u = 0; u < n; u++)
    for (const v of succ[u]) {
      const span = layer[v] - layer[u];
      const mid = layer[u] + Math.floor((span - 1) / 2); // the gap the label goes in
      gapLabel[mid] = Math.max(gapLabel[mid], labelOf.get(u * n + v) ?? 0);
      let prev = u;
      for (let l = layer[u] + 1; chains && l < layer[v]; l++) {
        const d = layer.length;
        layer.push(l);
        height.push(DUMMY_HEIGHT);
        width.push(0);
        up.push([]);
        down.push([]);
        owner.push(u);
        link(prev, d);
        prev = d;
      }
      link(prev, v);
    }
  const total = layer.length;
  const dummy = (v: number) => v >= n;
  const layers: number[][] = Array.from({ length: layerCount }, () => []);
  for (let v = 0; v < total; v++) layers[layer[v]].push(v);
  // Where each node is in its layer: its index, and the same as a fraction (layers differ in size).
  const at = new Int32Array(total);
  const rel = new Float64Array(total);
  const bary = new Float64Array(total);
  const setPositions = (l: number[]) =>
    l.forEach((v, i) => {
      at[v] = i;
      rel[v] = (i + 0.5) / l.length;
    });

  // Initial order: the first layer by rank and file order, each next one by its barycenters.
  layers[0].sort(byRank);
  setPositions(layers[0]);
  for (let i = 1; i < layerCount; i++) {
    layers[i].sort((a, b) => owner[a] - owner[b] || a - b);
    setPositions(layers[i]);
    sortByBarycenter(layers[i], up, rel, owner, bary);
    setPositions(layers[i]);
  }
  const small = total <= SMALL;
  const sweeps = small ? 24 : 8;
  let best = layers.map((l) => l.slice());
  let bestCrossings = crossings(layers, down, layer, at);
  for (let s = 0; s < sweeps && bestCrossings > 0; s++) {
    const downward = s % 2 === 1;
    if (downward) for (let i = 1; i < layerCount; i++) sortByBarycenter(layers[i], up, rel, owner, bary), setPositions(layers[i]);
    else for (let i = layerCount - 2; i >= 0; i--) sortByBarycenter(layers[i], down, rel, owner, bary), setPositions(layers[i]);
    if (small) transpose(layers, up, down, rel);
    const c = crossings(layers, down, layer, at);
    if (c < bestCrossings) {
      bestCrossings = c;
      best = layers.map((l) => l.slice());
    }
    progress?.(0.1 + (0.7 * (s + 1)) / sweeps);
  }
  for (let i = 0; i < layerCount; i++) {
    layers[i] = best[i];
    setPositions(layers[i]);
  }

  // 4. Coordinates. Across layers: each layer as wide as its widest node, each gap as wide as
  // its widest label needs. Within a layer (the centre of each node on the y axis): stacked, then
  // pulled toward the median of its neighbours, alternately those before and after.
  const layerWidth = layers.map((l) => Math.max(0, ...l.map((v) => width[v])));
  const layerX: number[] = [];
  let x = 0;
  for (let i = 0; i < layerCount; i++) {
    layerX.push(x);
    x += layerWidth[i] + (i < layerCount - 1 ? Math.max(o.layerGap, gapLabel[i] + 2 * o.labelMargin) : 0);
  }
  const centre = new Float64Array(total);
  const sep = (a: number, b: number) => (height[a] + height[b]) / 2 + (dummy(a) || dummy(b) ? DUMMY_GAP : o.nodeGap);
  for (const l of layers) {
    let y = 0;
    l.forEach((v, i) => {
      if (i > 0) y += sep(l[i - 1], v);
      centre[v] = y;
    });
    const shift = y / 2;
    for (const v of l) centre[v] -= shift;
  }
  const ys: number[] = [];
  const place = (l: number[], nbrs: Array<number[][]>) => {
    const want = l.map((v) => {
      ys.length = 0;
      for (const nb of nbrs) for (const w of nb[v]) ys.push(centre[w]);
      return ys.length ? median(ys) : centre[v];
    });
    const placed = isotonic(want, l.map((v, i) => (i === 0 ? 0 : sep(l[i - 1], v))));
    l.forEach((v, i) => (centre[v] = placed[i]));
  };
  for (let it = 0; it < 4; it++) {
    for (let i = 1; i < layerCount; i++) place(layers[i], [up]);
    for (let i = layerCount - 2; i >= 0; i--) place(layers[i], [down]);
  }
  for (let i = 0; i < layerCount; i++) place(layers[i], [up, down]);
  progress?.(0.95);

  const positions = idRecord<Point>();
  let minY = Infinity;
  let maxY = -Infinity;
  for (let v = 0; v < total; v++) {
    minY = Math.min(minY, centre[v] - height[v] / 2);
    maxY = Math.max(maxY, centre[v] + height[v] / 2);
  }
  for (let v = 0; v < n; v++) {
    const l = layer[v];
    positions[nodes[v].id] = { x: Math.round(layerX[l] + (layerWidth[l] - width[v]) / 2), y: Math.round(centre[v] - height[v] / 2 - minY) };
  }
  progress?.(1);
  return { positions, width: Math.round(x), height: Math.round(maxY - minY) };
}

/** sortByBarycenter orders a layer by the mean position of each node's neighbours in nbrs (stable). */
function sortByBarycenter(l: number[], nbrs: number[][], rel: Float64Array, owner: number[], bary: Float64Array) {
  for (const v of l) {
    const ns = nbrs[v];
    if (ns.length === 0) bary[v] = rel[v];
    else {
      let sum = 0;
      for (const w of ns) sum += rel[w];
      bary[v] = sum / ns.length;
    }
  }
  l.sort((a, b) => bary[a] - bary[b] || rel[a] - rel[b] || owner[a] - owner[b]);
}

/** crossings counts the crossings of the edges between neighbouring layers. */
function crossings(layers: number[][], down: number[][], layer: number[], at: Int32Array): number {
  let c = 0;
  let tree = new Int32Array(0);
  const ends: number[] = [];
  for (let i = 0; i + 1 < layers.length; i++) {
    const size = layers[i + 1].length;
    if (tree.length < size + 1) tree = new Int32Array(size + 1);
    else tree.fill(0, 0, size + 1);
    // The edges, sorted by their upper end, cross once per inversion of their lower ends:
    // counted with a Fenwick tree (Barth, Jünger and Mutzel), O(E log V).
    ends.length = 0;
    for (const u of layers[i]) {
      const start = ends.length;
      for (const w of down[u]) if (layer[w] === i + 1) ends.push(at[w]);
      if (ends.length - start > 1) {
        const part = ends.slice(start).sort((a, b) => a - b);
        for (let k = 0; k < part.length; k++) ends[start + k] = part[k];
      }
    }
    for (let seen = 0; seen < ends.length; seen++) {
      const w = ends[seen];
      let le = 0; // the edges before this one whose lower end is at or left of w do not cross it
      for (let k = w + 1; k > 0; k -= k & -k) le += tree[k];
      c += seen - le;
      for (let k = w + 1; k <= size; k += k & -k) tree[k]++;
    }
  }
  return c;
}

/** transpose swaps neighbours within each layer while that removes crossings (small graphs). */
function transpose(layers: number[][], up: number[][], down: number[][], rel: Float64Array) {
  const pairCrossings = (a: number, b: number) => {
    // crossings between a's and b's edges when a is above b, on both sides
    let c = 0;
    for (const nb of [up, down]) for (const x of nb[a]) for (const y of nb[b]) if (rel[x] > rel[y]) c++;
    return c;
  };
  for (let round = 0, improved = true; improved && round < 8; round++) {
    improved = false;
    for (const l of layers)
      for (let i = 0; i + 1 < l.length; i++) {
        const a = l[i];
        const b = l[i + 1];
        if (pairCrossings(b, a) < pairCrossings(a, b)) {
          l[i] = b;
          l[i + 1] = a;
          rel[a] = (i + 1.5) / l.length;
          rel[b] = (i + 0.5) / l.length;
          improved = true;
        }
      }
  }
}

function median(xs: number[]): number {
  if (xs.length === 1) return xs[0];
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * isotonic places points as close as possible (least squares) to want, in the same order, each
 * at least gap[i] after the one before: with s the running sum of gaps, y = s + z where z is the
 * non-decreasing fit of want - s, which pool-adjacent-violators finds exactly.
 */
export function isotonic(want: number[], gap: number[]): number[] {
  const s: number[] = [];
  let acc = 0;
  for (let i = 0; i < want.length; i++) s.push((acc += i === 0 ? 0 : gap[i]));
  const blocks: Array<{ sum: number; count: number }> = [];
  for (let i = 0; i < want.length; i++) {
    blocks.push({ sum: want[i] - s[i], count: 1 });
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1];
      const a = blocks[blocks.length - 2];
      if (a.sum / a.count <= b.sum / b.count) break;
      a.sum += b.sum;
      a.count += b.count;
      blocks.pop();
    }
  }
  const out: number[] = [];
  for (const b of blocks) for (let k = 0; k < b.count; k++) out.push(s[out.length] + b.sum / b.count);
  return out;
}
