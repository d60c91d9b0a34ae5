import assert from "node:assert/strict";
import { test } from "node:test";
import { edgeGeometry, edgePath, pointAt } from "../../src/edgeGeometry";
import { blockers, NodeIndex, polyline, route, segmentHits } from "../../src/routing";
import { drawEdges, MAX_ROUTES } from "../../src/drawing";
import type { CanvasEdge } from "../../src/graph";

const box = (id: string, x: number, y: number) => ({ id, x, y, width: 180, height: 72 });

test("segmentHits: through a box, beside it, along its side", () => {
  const r = { x: 0, y: 0, width: 100, height: 50 };
  assert.equal(segmentHits({ x: -10, y: 25 }, { x: 110, y: 25 }, r), true);
  assert.equal(segmentHits({ x: -10, y: 60 }, { x: 110, y: 60 }, r), false);
  assert.equal(segmentHits({ x: -10, y: 50 }, { x: 110, y: 50 }, r), false, "along the side is not through");
});

test("an edge whose curve passes under a third node is routed around every box, leaving and entering the facing sides", () => {
  const a = box("a", 0, 0);
  const b = box("b", 600, 0);
  const c = box("c", 300, -10); // right in the way
  const index = new NodeIndex([a, b, c]);
  const g = edgeGeometry(a, b);
  assert.deepEqual(blockers(g, index, ["a", "b"]).map((n) => n.id), ["c"]);
  const r = route(g, index)!;
  assert.ok(r, "a route");
  const routed = { ...g, route: r };
  assert.deepEqual(blockers(routed, index, ["a", "b"]), []);
  assert.deepEqual(r[0], g.p0);
  assert.deepEqual(r[r.length - 1], g.p3);
  // orthogonal: every piece horizontal or vertical
  for (let i = 1; i < r.length; i++) assert.ok(r[i].x === r[i - 1].x || r[i].y === r[i - 1].y, JSON.stringify(r));
  // drawn and measured along the route
  assert.match(edgePath(routed), /^M0?[\d.]+,[\d.]+ L/);
  assert.deepEqual(pointAt(routed, 0), g.p0);
  assert.deepEqual(pointAt(routed, 1), g.p3);
  assert.equal(polyline(routed), r);
});

test("an edge with a clear way keeps its curve", () => {
  const a = box("a", 0, 0);
  const b = box("b", 600, 0);
  const index = new NodeIndex([a, b, box("c", 300, 300)]);
  assert.deepEqual(blockers(edgeGeometry(a, b), index, ["a", "b"]), []);
});

test("two routes around the same node at different offsets run side by side, not on top of each other", () => {
  const a = box("a", 0, 0);
  const b = box("b", 600, 0);
  const c = box("c", 300, -10);
  const index = new NodeIndex([a, b, c]);
  // the same ends (two interactions' edges between a and b would coincide)
  const g = edgeGeometry(a, b);
  const r1 = route(g, index, 0)!;
  const r2 = route(g, index, 5)!;
  const inner = (r: Array<{ x: number; y: number }>) => r.slice(2, -2).map((p) => `${p.x},${p.y}`);
  assert.ok(inner(r1).length > 0 && inner(r1).every((p) => !inner(r2).includes(p)), `${JSON.stringify(r1)} vs ${JSON.stringify(r2)}`);
});

/** triples lays out n rows of three cards, each row's outer two joined by an edge that would run under the middle one. */
function triples(n: number) {
  const rects = new Map<string, { x: number; y: number; width: number; height: number }>();
  const edges: CanvasEdge[] = [];
  for (let i = 0; i < n; i++) {
    for (const [k, x] of [["a", 0], ["b", 300], ["c", 600]] as const) rects.set(`${k}${i}`, { x, y: i * 200, width: 180, height: 72 });
    const id = `t${i}-e1`;
    edges.push({ id, source: `a${i}`, target: `c${i}`, type: "interaction", data: { id, path: "", interactionId: `t${i}`, interactionPath: "", patternId: "p2p", label: "p2p (1r)", keyParam: "(1r)", diagnostics: [], interactionIndex: i, parallel: 0, parallelCount: 1, labelledBy: id } });
  }
  return { rects, edges };
}

test("drawing reports what routing did: every edge routed in a small flow, however long it takes; past the limits the rest as curves, and why", () => {
  const metrics = { char: 7, chrome: 16, line: 20, lineStep: 15, smallText: 12 };
  // thirty edges each in the way of a card, on a clock that says the time is up from the start
  let t = 0;
  const late = () => (t += 1000);
  const small = triples(20);
  const a = drawEdges({ ...small, metrics, labels: false, clock: late });
  assert.deepEqual(a.routing, { routed: 20, curved: 0 }, "a small flow is routed whole, even on a busy machine");
  const big = triples(30);
  const b = drawEdges({ ...big, metrics, labels: false, clock: late });
  assert.deepEqual(b.routing, { routed: 24, curved: 0, unchecked: 6, why: "time" }, "past the time, the rest are not even checked");
  assert.equal(b.edges.get("t29-e1")!.geometry.route, undefined, "the rest keep their curves");
  // with time to spare, all thirty
  assert.deepEqual(drawEdges({ ...big, metrics, labels: false, clock: () => 0 }).routing, { routed: 30, curved: 0 });
  // a crowd of cards around an edge: no way found, said so
  const rects = new Map<string, { x: number; y: number; width: number; height: number }>();
  for (let i = 0; i < 49; i++) rects.set(`g${i}`, { x: (i % 7) * 230, y: Math.floor(i / 7) * 110, width: 180, height: 60 });
  const across = { ...big.edges[0], id: "x-e1", source: "g0", target: "g48", data: { ...big.edges[0].data!, id: "x-e1", labelledBy: "x-e1" } };
  assert.deepEqual(drawEdges({ rects, edges: [across], metrics, labels: false }).routing, { routed: 0, curved: 1, why: "crowded" });
  assert.ok(MAX_ROUTES >= 100);
});
