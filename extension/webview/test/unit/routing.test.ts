import assert from "node:assert/strict";
import { test } from "node:test";
import { edgeGeometry, edgePath, pointAt } from "../../src/edgeGeometry";
import { blockers, NodeIndex, polyline, route, segmentHits } from "../../src/routing";

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
