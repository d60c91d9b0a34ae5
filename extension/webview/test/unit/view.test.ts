import assert from "node:assert/strict";
import { test } from "node:test";
import type { Rect } from "../../src/edgeGeometry";
import { beyond, entryColumn, fitAll, freeRects, MARGIN, openingView, type Pane, type View } from "../../src/view";

// A 1000×600 canvas with the toolbar at the top left, the legend at the bottom left, the minimap at the bottom right.
const toolbar = { x: 8, y: 8, width: 220, height: 32 };
const legend = { x: 8, y: 440, width: 260, height: 152 };
const minimap = { x: 785, y: 435, width: 200, height: 150 };
const pane: Pane = { width: 1000, height: 600, covers: [toolbar, legend, minimap] };
const box = (x: number, y: number): Rect => ({ x, y, width: 180, height: 72 });
const onScreen = (r: Rect, v: View): Rect => ({ x: r.x * v.zoom + v.x, y: r.y * v.zoom + v.y, width: r.width * v.zoom, height: r.height * v.zoom });
const meets = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const inside = (r: Rect, o: Rect) => r.x >= o.x - 1e-6 && r.y >= o.y - 1e-6 && r.x + r.width <= o.x + o.width + 1e-6 && r.y + r.height <= o.y + o.height + 1e-6;
const canvas = { x: 0, y: 0, width: pane.width, height: pane.height };

test("the free rooms are the largest rectangles clear of the controls, kept a margin from them", () => {
  const rooms = freeRects(pane);
  for (const r of rooms) for (const c of pane.covers) assert.ok(!meets(r, { x: c.x - MARGIN + 1, y: c.y - MARGIN + 1, width: c.width + 2 * MARGIN - 2, height: c.height + 2 * MARGIN - 2 }), `${JSON.stringify(r)} meets ${JSON.stringify(c)}`);
  // the band between the toolbar and the legend and minimap, across the whole width
  assert.ok(rooms.some((r) => r.x === MARGIN && r.width === pane.width - 2 * MARGIN && r.y === toolbar.y + toolbar.height + MARGIN));
  // and the room beside the toolbar, down to the top of the minimap
  assert.ok(rooms.some((r) => r.x === toolbar.x + toolbar.width + MARGIN && r.y === MARGIN));
  // none inside another
  for (const a of rooms) for (const b of rooms) assert.ok(a === b || !inside(a, b));
  assert.deepEqual(freeRects({ width: 500, height: 300, covers: [] }), [{ x: MARGIN, y: MARGIN, width: 500 - 2 * MARGIN, height: 300 - 2 * MARGIN }]);
});

test("a flow that fits at a readable zoom opens whole, in a room clear of the controls, never above 100%", () => {
  const nodes = [box(0, 0), box(400, 0), box(400, 200)];
  const v = openingView(nodes, nodes.slice(0, 2), pane, 0.92);
  assert.equal(v.zoom, 1);
  for (const n of nodes) {
    assert.ok(inside(onScreen(n, v), canvas), "in view");
    for (const c of pane.covers) assert.ok(!meets(onScreen(n, v), c), `${JSON.stringify(n)} under ${JSON.stringify(c)}`);
  }
});

test("a flow larger than the view opens at the floor, its story whole, nothing under a control when there is a way, as much in view as can be", () => {
  // a first interaction in the middle of a tall flow three cards wide: rows of three cards, 30 rows
  const nodes = Array.from({ length: 90 }, (_, i) => box((i % 3) * 300, Math.floor(i / 3) * 140));
  const story = [nodes[30], nodes[31], nodes[34]];
  const withToolbar: Pane = { width: 1000, height: 600, covers: [toolbar] };
  const v = openingView(nodes, story, withToolbar, 0.92);
  assert.equal(v.zoom, 0.92);
  for (const s of story) assert.ok(inside(onScreen(s, v), canvas), `the story's ${JSON.stringify(s)} is in view`);
  // the cards above the story go beside the toolbar, not under it
  assert.deepEqual(nodes.filter((n) => meets(onScreen(n, v), toolbar)), [], "no card under the toolbar");
  assert.ok(nodes.filter((n) => inside(onScreen(n, v), canvas)).length >= 9, "rows around the story in view");
  // the first interaction in the file at the top: the flow from its start
  const top = openingView(nodes, [nodes[0], nodes[1]], pane, 0.92);
  assert.ok(inside(onScreen(nodes[0], top), canvas) && inside(onScreen(nodes[1], top), canvas));
  assert.deepEqual(nodes.filter((n) => meets(onScreen(n, top), toolbar)), []);
  // a story larger than any room: its start (top left) in view
  const wide = Array.from({ length: 12 }, (_, i) => box(i * 300, 0));
  const w = openingView(wide, wide, pane, 0.92);
  assert.ok(inside(onScreen(wide[0], w), canvas));
});

test("Fit shows everything, however small, in the room the controls leave", () => {
  const nodes = Array.from({ length: 90 }, (_, i) => box((i % 3) * 300, Math.floor(i / 3) * 140));
  const v = fitAll(nodes, pane);
  assert.ok(v.zoom < 0.2, `${v.zoom}`);
  for (const n of nodes) {
    assert.ok(inside(onScreen(n, v), canvas));
    for (const c of pane.covers) assert.ok(!meets(onScreen(n, v), c));
  }
  assert.equal(fitAll([box(0, 0)], pane).zoom, 1, "never above 100%");
});

test("without an interaction to start from, the story is the entry: the leftmost column, not the topmost node", () => {
  const col = entryColumn([box(500, 0), box(0, 50), box(0, 250), box(60, 2000), box(250, 0)]);
  assert.deepEqual(col.map((r) => r.y).sort((a, b) => a - b), [50, 250, 2000]);
});

test("the cards beyond each side of the view, for the markers at the flow's edges when the minimap is hidden", () => {
  const view = { x: 0, y: 0, width: 1000, height: 600 };
  const counts = beyond([box(-300, 0), box(1100, 100), box(1100, 900), box(400, 700), box(400, -200), box(10, 10)], view);
  assert.deepEqual(counts, { top: 1, right: 2, bottom: 2, left: 1 });
});
