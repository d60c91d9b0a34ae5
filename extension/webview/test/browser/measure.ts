// What a person sees of the canvas, read from the page in screen pixels: node, label and marker
// boxes, each edge's line, the controls' boxes, the size of every text, the legend's swatches and
// the edges' drawn styles. Shared by the browser tests that judge the picture (opening.test.ts,
// teams.test.ts).
import type { Page } from "playwright-core";
import type { LoadFlowResult } from "../../../src/canvas/protocol";
import { edgeLabel } from "../../src/labels";

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
export type Pt = { x: number; y: number };

export interface Drawn {
  /** the flow's pane on screen (React Flow's element) */
  pane: Box;
  nodes: Array<Box & { id: string }>;
  edges: Array<{ id: string; points: Pt[]; routed: boolean }>;
  labels: Array<Box & { id: string; text: string; title: string }>;
  markers: Array<Box & { id: string }>;
  /** the canvas's own controls: the toolbar, the legend, the minimap */
  controls: Array<Box & { what: string }>;
}

/** drawn reads the picture: boxes, each edge's line sampled every 3 px, the controls. */
export async function drawn(page: Page): Promise<Drawn> {
  return page.evaluate(() => {
    const box = (e: Element) => {
      const r = e.getBoundingClientRect();
      return { x: r.left, y: r.top, width: r.width, height: r.height };
    };
    const nodes = [...document.querySelectorAll<HTMLElement>(".react-flow__node")].map((n) => ({ id: n.dataset.id!, ...box(n) }));
    const edges = [...document.querySelectorAll<SVGPathElement>(".react-flow__edge-path.ac-edge")].map((p) => {
      const m = p.getScreenCTM()!;
      const len = p.getTotalLength();
      const points = [];
      for (let d = 0; d <= len; d += 3) {
        const q = p.getPointAtLength(d);
        const s = new DOMPoint(q.x, q.y).matrixTransform(m);
        points.push({ x: s.x, y: s.y });
      }
      return { id: p.closest(".react-flow__edge")!.getAttribute("data-id")!, points, routed: p.classList.contains("ac-routed") };
    });
    const labels = [...document.querySelectorAll<HTMLElement>(".ac-edge-label:not(.ac-probe)")].map((l) => ({
      id: l.dataset.testid!.replace(/^edge-label-/, ""),
      text: [...l.querySelectorAll(".ac-edge-line")].map((x) => [...x.querySelectorAll(".ac-edge-ix, .ac-edge-text")].map((w) => w.textContent).join(" ")).join("\n"),
      title: l.title,
      ...box(l),
    }));
    const markers = [...document.querySelectorAll<HTMLElement>(".ac-marker:not(.ac-probe)")].map((m) => ({ id: m.dataset.testid!.replace(/^marker-/, ""), ...box(m) }));
    const controls = [
      ["toolbar", ".ac-toolbar"],
      ["legend", ".ac-legend"],
      ["minimap", ".react-flow__minimap"],
    ].flatMap(([what, sel]) => [...document.querySelectorAll(sel)].map((e) => ({ what, ...box(e) })));
    return { pane: box(document.querySelector(".react-flow")!), nodes, edges, labels, markers, controls };
  });
}

export const overlaps = (a: Box, b: Box) => a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;
export const within = (a: Box, o: Box) => a.x >= o.x - 0.5 && a.y >= o.y - 0.5 && a.x + a.width <= o.x + o.width + 0.5 && a.y + a.height <= o.y + o.height + 0.5;

/** clip is the part of a box inside another (the flow's pane clips what it draws), or none. */
export function clip(b: Box, o: Box): Box | undefined {
  const x = Math.max(b.x, o.x);
  const y = Math.max(b.y, o.y);
  const w = Math.min(b.x + b.width, o.x + o.width) - x;
  const h = Math.min(b.y + b.height, o.y + o.height) - y;
  return w > 0 && h > 0 ? { x, y, width: w, height: h } : undefined;
}

/** underControls lists every card, label or marker in view (its part the pane shows) that a control of the canvas covers. */
export function underControls(d: Drawn): string[] {
  const out: string[] = [];
  for (const [kind, boxes] of [
    ["card", d.nodes],
    ["label", d.labels],
    ["marker", d.markers],
  ] as const)
    for (const b of boxes) {
      const seen = clip(b, d.pane);
      for (const c of d.controls) if (seen && overlaps(seen, c)) out.push(`${kind} ${b.id} is under the ${c.what}`);
    }
  // and the controls stand beside the flow, not over it
  for (const c of d.controls) if (overlaps(c, d.pane)) out.push(`the ${c.what} is over the flow`);
  return out;
}

/** edgeEnds maps each edge id of a flow to its two nodes (placeholders as the canvas names them) and its interaction. */
export function edgeEnds(r: LoadFlowResult): Map<string, { source: string; target: string; interaction: string }> {
  const ids = new Set([...(r.flow!.agents ?? []), ...(r.flow!.systemNodes ?? [])].map((n) => n.id));
  const end = (id: string) => (ids.has(id) ? id : `missing:${id}`);
  return new Map(r.flow!.interactions!.flatMap((it) => (it.edges ?? []).map((e) => [e.id, { source: end(e.source), target: end(e.target), interaction: it.id }] as const)));
}

/** underNodes lists every edge that passes under a node other than its two ends (2 px of slack). */
export function underNodes(d: Drawn, r: LoadFlowResult): string[] {
  const ends = edgeEnds(r);
  const out: string[] = [];
  for (const e of d.edges) {
    const { source, target } = ends.get(e.id)!;
    for (const n of d.nodes) {
      if (n.id === source || n.id === target) continue;
      const hit = e.points.find((p) => p.x > n.x + 2 && p.x < n.x + n.width - 2 && p.y > n.y + 2 && p.y < n.y + n.height - 2);
      if (hit) out.push(`${e.id} (${source} → ${target}) passes under ${n.id} at (${Math.round(hit.x)}, ${Math.round(hit.y)})`);
    }
  }
  return out;
}

const dist = (p: Pt, pts: Pt[]) => Math.min(...pts.map((q) => Math.hypot(p.x - q.x, p.y - q.y)));

/**
 * fans are the labels a flow's edges should have, worked out here from the flow (not from the
 * canvas's own account): by each interaction's first edge of a group, the edges the label names
 * and the node it stands by. An interaction's edges among three nodes or fewer are one group, by
 * the node most of them touch (none for one edge or a pair); in a larger one, a node's edges out
 * share one by it, a pair both ways one, lone edges into one node one by it, and a lone edge its own.
 */
export function fans(r: LoadFlowResult): Map<string, { edges: string[]; node?: string }> {
  const ends = edgeEnds(r);
  const out = new Map<string, { edges: string[]; node?: string }>();
  for (const it of r.flow!.interactions!) {
    const all = (it.edges ?? []).map((e) => ({ id: e.id, ...ends.get(e.id)! }));
    // the groups of edges that share nodes
    const partOf = new Map<string, number>();
    const parts: Array<typeof all> = [];
    for (const e of all) {
      const hit = [...new Set([partOf.get(e.source), partOf.get(e.target)].filter((k): k is number => k !== undefined))];
      const k = hit.length ? Math.min(...hit) : parts.push([]) - 1;
      for (const h of hit) if (h !== k) (parts[k].push(...parts[h]), (parts[h] = []));
      parts[k].push(e);
      for (const x of parts[k]) partOf.set(x.source, k).set(x.target, k);
    }
    const label = new Map((it.edges ?? []).map((e) => [e.id, edgeLabel(it.patternId, e.data)]));
    for (const mine of parts.filter((p) => p.length)) {
      const nodes = [...new Set(mine.flatMap((e) => [e.source, e.target]))];
      if (nodes.length <= 3 && mine.every((e) => label.get(e.id) === label.get(mine[0].id))) {
        const touching = (n: string) => mine.filter((e) => e.source === n || e.target === n).length;
        const node = mine.length > 1 && nodes.length === 3 ? nodes.reduce((a, b) => (touching(b) > touching(a) ? b : a)) : undefined;
        out.set(mine[0].id, { edges: mine.map((e) => e.id), node });
        continue;
      }
      const bySource = new Map<string, string[]>();
      for (const e of mine) bySource.set(`${e.source} ${label.get(e.id)}`, [...(bySource.get(`${e.source} ${label.get(e.id)}`) ?? []), e.id]);
      const lone: typeof mine = [];
      for (const ids of bySource.values()) (ids.length > 1 ? out.set(ids[0], { edges: ids, node: ends.get(ids[0])!.source }) : lone.push(mine.find((e) => e.id === ids[0])!));
      const taken = new Set<string>();
      for (const e of lone) {
        const back = lone.find((x) => !taken.has(x.id) && !taken.has(e.id) && x.source === e.target && x.target === e.source && label.get(x.id) === label.get(e.id));
        if (back) {
          taken.add(e.id).add(back.id);
          out.set(e.id, { edges: [e.id, back.id] });
        }
      }
      const byTarget = new Map<string, string[]>();
      for (const e of lone) if (!taken.has(e.id)) byTarget.set(`${e.target} ${label.get(e.id)}`, [...(byTarget.get(`${e.target} ${label.get(e.id)}`) ?? []), e.id]);
      for (const ids of byTarget.values()) out.set(ids[0], { edges: ids, node: ids.length > 1 ? ends.get(ids[0])!.target : undefined });
    }
  }
  // a label is drawn by its group's first edge in file order
  const order = [...ends.keys()];
  return new Map([...out].map(([, g]) => [g.edges.slice().sort((a, b) => order.indexOf(a) - order.indexOf(b))[0], g]));
}

/**
 * labelProblems lists each label nearer another edge than its own, each fan's label that is not
 * by the node its edges share, and every edge its labels or nodes hide.
 */
export function labelProblems(d: Drawn, r: LoadFlowResult): string[] {
  const out: string[] = [];
  const groups = fans(r);
  const ends = edgeEnds(r);
  const centre = (b: Box) => ({ x: b.x + b.width / 2, y: b.y + b.height / 2 });
  for (const l of d.labels) {
    const g = groups.get(l.id);
    if (!g) {
      out.push(`label ${l.id} is not the label of a fan`);
      continue;
    }
    const c = centre(l);
    const mine = Math.min(...d.edges.filter((e) => g.edges.includes(e.id)).map((e) => dist(c, e.points)));
    for (const e of d.edges) {
      if (g.edges.includes(e.id)) continue;
      const other = dist(c, e.points);
      if (other <= mine) out.push(`label ${l.id} is ${Math.round(other)} px from ${e.id}, ${Math.round(mine)} px from its own edges`);
    }
    if (g.node) {
      // by the node it stands by: nearer it than any other node of the fan
      const others = [...new Set(g.edges.flatMap((id) => [ends.get(id)!.source, ends.get(id)!.target]))].filter((id) => id !== g.node);
      const near = (id: string) => dist(c, boxOutline(d.nodes.find((n) => n.id === id)!));
      for (const o of others) if (near(o) < near(g.node)) out.push(`label ${l.id} of ${g.node}'s fan is nearer ${o} (${Math.round(near(o))} px) than ${g.node} (${Math.round(near(g.node))} px)`);
    }
  }
  const hidden = (p: Pt) => [...d.labels, ...d.nodes, ...d.markers].some((b) => p.x > b.x && p.x < b.x + b.width && p.y > b.y && p.y < b.y + b.height);
  for (const e of d.edges) {
    const seen = e.points.filter((p) => !hidden(p)).length * 3;
    if (seen < 30) out.push(`edge ${e.id} shows only ${seen} px (${ends.get(e.id)!.source} → ${ends.get(e.id)!.target})`);
  }
  return out;
}

/** boxOutline samples a box's outline, for distances to it. */
function boxOutline(b: Box): Pt[] {
  const pts: Pt[] = [];
  for (let i = 0; i <= 10; i++) {
    pts.push({ x: b.x + (b.width * i) / 10, y: b.y }, { x: b.x + (b.width * i) / 10, y: b.y + b.height });
    pts.push({ x: b.x, y: b.y + (b.height * i) / 10 }, { x: b.x + b.width, y: b.y + (b.height * i) / 10 });
  }
  return pts;
}

export interface TextSizes {
  zoom: number;
  /** every text in view on the flow (cards, labels, markers) and beside it (toolbar, legend): its size on screen, in px */
  texts: Array<{ text: string; px: number; where: string }>;
}

/** textSizes reads, in the page, the size on screen of every text in view: each text node's element's font size, times the zoom on the flow. */
export async function textSizes(page: Page): Promise<TextSizes> {
  return page.evaluate(() => {
    const zoom = new DOMMatrix(getComputedStyle(document.querySelector(".react-flow__viewport")!).transform).a;
    const pane = document.querySelector(".react-flow")!.getBoundingClientRect();
    const texts: Array<{ text: string; px: number; where: string }> = [];
    const walk = document.createTreeWalker(document.querySelector(".ac-canvas")!, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const text = n.textContent!.trim();
      const el = n.parentElement!;
      if (!text || el.closest(".ac-probe, .ac-visually-hidden")) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const onFlow = !!el.closest(".react-flow__renderer, .ac-label-layer, .react-flow__edgelabel-renderer");
      if (onFlow && !(r.right > pane.left && r.left < pane.right && r.bottom > pane.top && r.top < pane.bottom)) continue;
      const px = parseFloat(getComputedStyle(el).fontSize) * (onFlow ? zoom : 1);
      texts.push({ text, px, where: onFlow ? "flow" : (el.closest(".ac-toolbar, .ac-legend, .ac-side")?.className.split(" ")[0] ?? "canvas") });
    }
    return { zoom, texts };
  });
}

/** The smallest text a person must read (metrics.ts, READABLE_PX); a hair of rounding allowed. */
export const READABLE = 10.95;

export interface Look {
  colour: string;
  dash: string;
  width: string;
}

/** looks reads each interaction's legend swatch and every one of its edges' drawn line: colour, dashes, width. */
export async function looks(page: Page): Promise<{ legend: Record<string, Look>; edges: Record<string, Array<Look & { id: string }>> }> {
  return page.evaluate(() => {
    const look = (e: Element) => {
      const st = getComputedStyle(e);
      return { colour: st.stroke, dash: st.strokeDasharray, width: st.strokeWidth };
    };
    const legend: Record<string, Look> = {};
    for (const b of document.querySelectorAll(".ac-legend-item")) legend[b.querySelector(".ac-legend-id")!.textContent!] = look(b.querySelector(".ac-legend-swatch line")!);
    const edges: Record<string, Array<Look & { id: string }>> = {};
    for (const p of document.querySelectorAll<SVGPathElement>(".react-flow__edge-path.ac-edge")) {
      const ix = p.getAttribute("data-interaction")!;
      (edges[ix] ??= []).push({ id: p.closest(".react-flow__edge")!.getAttribute("data-id")!, ...look(p) });
    }
    return { legend, edges };
  });
}
