// The drawing of every edge, computed for all of them at once: each edge's curve, or its route
// around the nodes (routing.ts); one label per fan (graph.ts: labelGroups), wrapped between words
// when a spot is narrow, placed clear of the nodes and of each other (labelPlacement.ts); and a
// problem marker on each edge whose problems its label does not carry. Pure: App.tsx calls it
// whenever what it depends on changes, the unit tests call it in Node.
import type { Severity } from "../../src/canvas/protocol";
import { edgeGeometry, type EdgeGeometry, type Rect } from "./edgeGeometry";
import type { CanvasEdge } from "./graph";
import { placeLabels, type LabelRequest, type PlacedLabel } from "./labelPlacement";
import { labelForms, lineChars, type LabelForm } from "./labels";
import { blockers, NodeIndex, polyline, route } from "./routing";

/** The size of an edge label's parts, measured from the page's own font (metrics.ts: measureLabels). */
export interface LabelMetrics {
  /** one character of the label font */
  char: number;
  /** padding and border, across */
  chrome: number;
  /** a one-line label, with padding and border */
  line: number;
  /** each further line */
  lineStep: number;
  /** the smallest text on the canvas (labels, markers, a card's small text), in px at 100% */
  smallText: number;
}
export const ESTIMATED_METRICS: LabelMetrics = { char: 7, chrome: 16, line: 20, lineStep: 15, smallText: 12 };

export interface DrawnLabel {
  place: PlacedLabel;
  form: LabelForm;
  /** the problems its edges all share, shown on the label rather than on each edge */
  problems?: number;
  severity?: Severity;
}

/**
 * An edge as drawn: its curve, its label (on the edge that draws its fan's label), and its problem
 * marker; no label or marker while the canvas draws none (a big flow zoomed out, LABEL_MIN_ZOOM).
 */
export interface DrawnEdge {
  geometry: EdgeGeometry;
  label?: DrawnLabel;
  marker?: PlacedLabel;
}

/** What routing did in one drawing, and why it left edges as curves, if it did. */
export interface RoutingReport {
  routed: number;
  /** edges drawn as curves under a node: routing found no way around the cards near them */
  curved: number;
  /** edges left as curves, not even checked, once routing stopped at a limit */
  unchecked?: number;
  /** the first reason edges were left as curves */
  why?: "routes" | "time" | "crowded";
}

/**
 * A tangle past this many routed edges, or past this much routing time in one drawing, keeps the
 * rest as curves: drawing (after a drag, after Tidy) must stay fast. Routes take turns at a few
 * offsets, so two routes that would share a channel run side by side.
 */
export const MAX_ROUTES = 300;
export const ROUTING_MS = 60;
/**
 * In a flow of at most SMALL_FLOW cards, the routes always tried before the time limit counts: a
 * small flow is drawn the same on a busy machine (a big tangle's tries cost more than the limit).
 */
const TRIES_BEFORE_TIME = 24;
const SMALL_FLOW = 150;
const ROUTE_OFFSETS = [0, 5, -5];

export interface DrawingInput {
  rects: Map<string, Rect>;
  edges: CanvasEdge[];
  metrics: LabelMetrics;
  /** whether labels (and problem markers) are drawn */
  labels: boolean;
  /** the characters a label keeps for its interaction's run line (0: no run line) */
  runChars?: (interactionId: string) => number;
  /** the clock routing's time budget is read from (performance.now in the page) */
  clock?: () => number;
}

export function drawEdges(input: DrawingInput): { edges: Map<string, DrawnEdge>; routing: RoutingReport } {
  const { rects, edges, metrics } = input;
  const clock = input.clock ?? (() => 0);
  const out = new Map<string, DrawnEdge>();
  const index = new NodeIndex([...rects].map(([id, r]) => ({ id, ...r })));
  const routing: RoutingReport = { routed: 0, curved: 0 };
  const budget = { tries: 0, forced: rects.size <= SMALL_FLOW ? TRIES_BEFORE_TIME : 0, deadline: clock() + ROUTING_MS, clock };
  for (const e of edges) {
    const s = rects.get(e.source);
    const t = rects.get(e.target);
    if (!s || !t || !e.data) continue;
    const curve = edgeGeometry(s, t, e.data.parallel, e.data.parallelCount, e.source > e.target);
    out.set(e.id, { geometry: aroundNodes(curve, index, [e.source, e.target], routing, budget) });
  }
  if (!input.labels) return { edges: out, routing };
  const byId = new Map(edges.map((e) => [e.id, e]));
  const requests: LabelRequest[] = [];
  const forms = new Map<string, { forms: LabelForm[]; problems?: number; severity?: Severity }>();
  for (const e of edges) {
    const d = e.data;
    if (!d || d.labelledBy !== e.id || !out.has(e.id)) continue;
    const named = (d.labelEdges ?? [e.id]).filter((id) => out.has(id));
    const shared = sharedProblems(named.map((id) => byId.get(id)!));
    const all = labelForms(d.interactionId, d.label);
    const run = d.runLine ? (input.runChars?.(d.interactionId) ?? 0) : 0;
    const badge = shared ? String(shared.count).length + 3 : 0;
    const width = (f: LabelForm) => Math.ceil(Math.max(lineChars(f.lines) + badge + 1, run) * metrics.char + metrics.chrome) + 2;
    const height = (f: LabelForm) => Math.ceil(metrics.line + (f.lines.length - 1 + (run ? 1 : 0)) * metrics.lineStep) + 2;
    forms.set(e.id, { forms: all, problems: shared?.count, severity: shared?.severity });
    requests.push({
      id: e.id,
      widths: all.map(width),
      height: all.map(height),
      geometry: out.get(e.id)!.geometry,
      edges: named,
      geometries: named.map((id) => out.get(id)!.geometry),
      by: d.labelNode ? fanEnds(named.map((id) => byId.get(id)!), d.labelNode, rects) : undefined,
    });
  }
  // the problem markers of edges whose label does not carry their problems, after the labels
  for (const e of edges) {
    const d = e.data;
    if (!d || d.diagnostics.length === 0 || !out.has(e.id) || forms.get(d.labelledBy)?.problems) continue;
    const chars = String(d.diagnostics.length).length + 2;
    requests.push({ id: markerId(e.id), widths: [Math.ceil(chars * metrics.char + MARKER_CHROME)], height: Math.ceil(metrics.line), geometry: out.get(e.id)!.geometry, edges: [e.id] });
  }
  const lines = [...out].map(([id, dr]) => ({ id, points: polyline(dr.geometry, 16) }));
  const places = placeLabels(requests, [...rects.values()], lines);
  for (const [id, f] of forms) {
    const place = places.get(id)!;
    out.set(id, { ...out.get(id)!, label: { place, form: f.forms[place.form], problems: f.problems, severity: f.severity } });
  }
  for (const e of edges) {
    const m = places.get(markerId(e.id));
    if (m) out.set(e.id, { ...out.get(e.id)!, marker: m });
  }
  return { edges: out, routing };
}

/** fanEnds are the box of the node a fan's label stands by, which end of each edge it is, and the fan's other nodes' boxes. */
function fanEnds(fan: CanvasEdge[], node: string, rects: Map<string, Rect>): LabelRequest["by"] {
  const box = rects.get(node);
  if (!box) return undefined;
  const ends = fan.map((e) => (e.source === node ? ("source" as const) : e.target === node ? ("target" as const) : undefined));
  const others = [...new Set(fan.flatMap((e) => [e.source, e.target]))].filter((id) => id !== node).map((id) => rects.get(id)).filter((r): r is Rect => !!r);
  return { node: box, ends, others };
}

/** Padding and border across a problem marker (canvas.css: .ac-marker). */
const MARKER_CHROME = 14;
const markerId = (edgeId: string) => `${edgeId}\u0000marker`;

/**
 * sharedProblems: when every edge a label names has the same problems, the label carries them
 * once (a fan whose interaction has a problem); else each edge shows its own marker.
 */
function sharedProblems(edges: CanvasEdge[]): { count: number; severity?: Severity } | undefined {
  const key = (e: CanvasEdge) => e.data!.diagnostics.map((d) => `${d.severity}\u0000${d.code}\u0000${d.message}`).join("\u0001");
  const first = key(edges[0]);
  if (!first || edges.some((e) => key(e) !== first)) return undefined;
  return { count: edges[0].data!.diagnostics.length, severity: edges[0].data!.severity };
}

/**
 * aroundNodes is the edge's curve, or, when the curve would pass under a node other than its
 * ends, a route around the nodes (routing.ts). Past a limit (routes made, or time, in a small
 * flow once its first tries are made) the rest keep their curves unchecked: looking for the nodes under every edge of
 * a tangle costs more than the routing the limit saves. What was left, and why, is counted.
 */
function aroundNodes(g: EdgeGeometry, index: NodeIndex, ends: string[], report: RoutingReport, budget: { tries: number; forced: number; deadline: number; clock: () => number }): EdgeGeometry {
  const limit = report.routed >= MAX_ROUTES ? "routes" : budget.tries >= budget.forced && budget.clock() > budget.deadline ? "time" : undefined;
  if (limit) {
    report.unchecked = (report.unchecked ?? 0) + 1;
    report.why ??= limit;
    return g;
  }
  if (blockers(g, index, ends).length === 0) return g;
  budget.tries++;
  const r = route(g, index, ROUTE_OFFSETS[report.routed % ROUTE_OFFSETS.length]);
  if (r) {
    report.routed++;
    return { ...g, route: r };
  }
  report.curved++;
  report.why ??= "crowded";
  return g;
}
