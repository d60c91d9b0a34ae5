import assert from "node:assert/strict";
import { test } from "node:test";
import { entryColumn, openingView, type Pane } from "../../src/view";

const pane: Pane = { width: 1000, height: 600, pad: { top: 50, right: 40, bottom: 30, left: 40 } };
const box = (x: number, y: number) => ({ x, y, width: 180, height: 72 });

test("a flow that fits at a readable zoom opens whole, centred, never above 100%", () => {
  const v = openingView([box(0, 0), box(400, 0), box(400, 200)], pane, 0.92);
  assert.equal(v.zoom, 1);
  // centred in the room left by the padding
  assert.equal(v.x + (0 + 580 / 2) * v.zoom, 40 + 920 / 2);
  assert.equal(v.y + (0 + 272 / 2) * v.zoom, 50 + 520 / 2);
});

test("a flow larger than the view opens at the floor on its entry: the leftmost column at the left, centred across", () => {
  const nodes = [box(0, 100), box(0, 300), ...Array.from({ length: 10 }, (_, i) => box(400 + i * 300, i * 150))];
  const v = openingView(nodes, pane, 0.92);
  assert.equal(v.zoom, 0.92);
  assert.equal(v.x, 40); // x0 = 0 at the left padding
  const mid = (100 + 372) / 2;
  assert.ok(Math.abs(v.y + mid * 0.92 - (50 + 520 / 2)) < 1e-9, "the entry column centred across");
});

test("the entry is the leftmost column (the first layer of every part), not the topmost node", () => {
  const col = entryColumn([box(500, 0), box(0, 50), box(0, 250), box(60, 2000), box(250, 0)]);
  assert.deepEqual(col.map((r) => r.y).sort((a, b) => a - b), [50, 250, 2000]);
});
