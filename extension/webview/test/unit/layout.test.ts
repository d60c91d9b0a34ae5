// The layout (roles, layers, packing), edge shapes and label placement: pure, so checked here on
// the fixtures' real models and on made-up graphs, for the properties a person sees.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Point } from "../../../src/canvas/protocol";
import { indexDiagnostics } from "../../src/diagnostics";
import { edgeGeometry, pointAt, sides, type Rect } from "../../src/edgeGeometry";
import { layoutInput, NODE_HEIGHT, NODE_WIDTH } from "../../src/graph";
import { isotonic, layered } from "../../src/layered";
import { LABEL_CLEARANCE, NODE_CLEARANCE, placeLabels } from "../../src/labelPlacement";
import { labelForms, labelWidth, lineChars, MAX_WORD_CHARS } from "../../src/labels";
import { components, layoutFlow, placeUnplaced, type FlowLayoutInput } from "../../src/layoutGraph";
import { RANK, roleIcon, roleRank } from "../../src/roles";
import { allPatterns, debateChain, firstSight, fourPatterns, team20 } from "./fixtures";

const box = (p: Point, n: { width: number; height: number }): Rect => ({ x: p.x, y: p.y, width: n.width, height: n.height });
const overlap = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

function assertNoOverlap(input: FlowLayoutInput, pos: Record<string, Point>) {
  const boxes = input.nodes.map((n) => [n.id, box(pos[n.id], n)] as const);
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) assert.ok(!overlap(boxes[i][1], boxes[j][1]), `${boxes[i][0]} and ${boxes[j][0]} overlap`);
}

const flowInput = (r: typeof allPatterns) => layoutInput(r.flow!, indexDiagnostics(r.flow, r.diagnostics));

test("roles: leads first, workers after, judges and gatherers last; read word by word", () => {
  for (const r of ["orchestrator", "manager", "sub_manager", "Router", "broker", "requester", "planner"]) assert.equal(roleRank(r), RANK.lead, r);
  for (const r of ["worker", "qa-worker", "bidder", "subscriber"]) assert.equal(roleRank(r), RANK.follower, r);
  for (const r of ["judge", "aggregator", "curator"]) assert.equal(roleRank(r), RANK.last, r);
  for (const r of ["debater", "critic", "", "teamManagerX"]) assert.equal(roleRank(r), r === "teamManagerX" ? RANK.lead : RANK.other, r);
  assert.equal(roleIcon("judge"), "law");
  assert.equal(roleIcon("sub_manager"), "organization");
  assert.equal(roleIcon("something-new"), "hubot");
});

test("the issue's three-agent flow: the orchestrator first, its workers in one column after it", () => {
  const input = flowInput(firstSight);
  const pos = layoutFlow(input);
  assert.deepEqual(Object.keys(pos).sort(), ["coder", "planner", "reviewer"]);
  assert.ok(pos.planner.x + NODE_WIDTH < pos.coder.x, "planner before coder");
  assert.equal(pos.coder.x, pos.reviewer.x);
  // the orchestrator sits between its workers, not level with one of them
  const mid = (id: string) => pos[id].y + NODE_HEIGHT / 2;
  assert.ok(mid("coder") < mid("planner") && mid("planner") < mid("reviewer"));
  // the gap between the layers holds the widest label with room to spare
  assert.ok(pos.coder.x - (pos.planner.x + NODE_WIDTH) >= labelWidth("manager_worker (3r)") + 40);
  assertNoOverlap(input, pos);
  // the same input, the same picture
  assert.deepEqual(layoutFlow(input), pos);
});

test("every edge from a lower rank to a higher one runs forward; the fixtures lay out without overlap", () => {
  for (const r of [allPatterns, team20, firstSight]) {
    const input = flowInput(r);
    const pos = layoutFlow(input);
    assertNoOverlap(input, pos);
    const role = new Map(input.nodes.map((n) => [n.id, n.role]));
    for (const e of input.edges) {
      const [a, b] = [roleRank(role.get(e.source)!), roleRank(role.get(e.target)!)];
      if (a === b) continue;
      const [first, then] = a < b ? [e.source, e.target] : [e.target, e.source];
      assert.ok(pos[first].x < pos[then].x, `${first} (${role.get(first)}) before ${then} (${role.get(then)})`);
    }
  }
  const pos = layoutFlow(flowInput(team20));
  assert.ok(pos.lead.x < pos.fe_lead.x && pos.fe_lead.x < pos.fe1.x, "orchestrator, sub-managers, workers");
  assert.ok(pos.arch_a.x < pos.judge.x && pos.arch_b.x < pos.judge.x, "debaters before their judge");
});

test("cycles among equal ranks are broken; edges drawn both ways are laid out once", () => {
  const n = (id: string) => ({ id, width: 180, height: 72, role: "peer" });
  const input: FlowLayoutInput = {
    nodes: [n("a"), n("b"), n("c"), n("d")],
    edges: [
      { source: "a", target: "b", label: "x (1r)" },
      { source: "b", target: "c", label: "x (1r)" },
      { source: "c", target: "a", label: "x (1r)" },
      { source: "c", target: "d", label: "x (1r)" },
      { source: "d", target: "c", label: "x (1r)" },
      { source: "d", target: "d", label: "self" },
    ],
  };
  const pos = layoutFlow(input);
  assertNoOverlap(input, pos);
  const forward = input.edges.filter((e) => e.source !== e.target && pos[e.source].x < pos[e.target].x).length;
  assert.equal(forward, 3, "of a→b→c→a one edge runs back, and of c⇄d one");
  assert.ok(pos.a.x < pos.b.x && pos.b.x < pos.c.x);
});

test("parts are packed in file order; isolated nodes too", () => {
  const n = (id: string, role = "worker") => ({ id, width: 180, height: 72, role });
  const input: FlowLayoutInput = {
    nodes: [n("m1", "manager"), n("w1"), n("lonely"), n("m2", "manager"), n("w2")],
    edges: [
      { source: "w1", target: "m1", label: "manager_worker (2r)" },
      { source: "m2", target: "w2", label: "manager_worker (2r)" },
    ],
  };
  assert.deepEqual(
    components(input).map((c) => c.nodes.map((x) => x.id)),
    [["m1", "w1"], ["lonely"], ["m2", "w2"]],
  );
  const pos = layoutFlow(input);
  assertNoOverlap(input, pos);
  assert.ok(pos.m1.x < pos.w1.x, "the manager leads, whichever way its edge was drawn");
  const progress: number[] = [];
  layoutFlow(input, (f) => progress.push(f));
  assert.ok(progress.length > 0 && progress.every((f, i) => f >= 0 && f <= 1 && (i === 0 || f >= progress[i - 1])), `progress ${progress}`);
  assert.equal(progress.at(-1), 1);
});

test("new nodes without positions go below the saved ones, which stay where they are", () => {
  const input = flowInput(firstSight);
  const saved = { planner: { x: 500, y: 40 } };
  const pos = placeUnplaced(input, saved);
  assert.deepEqual(Object.keys(pos).sort(), ["coder", "reviewer"]);
  for (const id of ["coder", "reviewer"]) assert.ok(pos[id].y >= 40 + NODE_HEIGHT, `${id} below the saved planner`);
  assert.equal(Math.min(pos.coder.x, pos.reviewer.x), 500, "left-aligned with the saved nodes");
  assert.deepEqual(placeUnplaced(input, { planner: { x: 0, y: 0 }, coder: { x: 1, y: 1 }, reviewer: { x: 2, y: 2 } }), {});
});

test("500 agents and 1,000 edges lay out; no two nodes overlap", () => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const nodes = Array.from({ length: 500 }, (_, i) => ({ id: `a${i}`, width: 180, height: 72, role: i % 10 === 0 ? "manager" : "worker" }));
  const edges = Array.from({ length: 1000 }, () => ({ source: `a${Math.floor(rnd() * 500)}`, target: `a${Math.floor(rnd() * 500)}`, label: "manager_worker (3r)" }));
  const input = { nodes, edges };
  const pos = layoutFlow(input);
  assert.equal(Object.keys(pos).length, 500);
  assertNoOverlap(input, pos);
});

test("isotonic placement: as near as allowed, in order, spaced", () => {
  assert.deepEqual(isotonic([0, 10, 20], [0, 5, 5]), [0, 10, 20]); // already fine
  assert.deepEqual(isotonic([0, 0], [0, 10]), [-5, 5]); // pushed apart evenly
  assert.deepEqual(isotonic([10, 0], [0, 4]), [3, 7]); // out of order: met in the middle
  const one = layered([{ id: "x", width: 10, height: 10, rank: 1 }], []);
  assert.deepEqual({ ...one, positions: { ...one.positions } }, { positions: { x: { x: 0, y: 0 } }, width: 10, height: 10 });
});

test("a label wraps between its words, never cutting one: its id, its pattern, its key parameter", () => {
  const forms = labelForms("i17", "fact_check_verifier (citations_count>=3)");
  const words = (f: (typeof forms)[number]) => f.lines.flat().map((w) => w.text).join(" ");
  // one line, then two and three lines of whole words, then without the pattern (the tooltip has it)
  assert.deepEqual(forms.map((f) => f.lines.length), [1, 2, 3, 1, 2]);
  assert.deepEqual(forms[1].lines.map((l) => l.map((w) => w.text).join(" ")), ["i17 fact_check_verifier", "(citations_count>=3)"], "broken where the wider line is narrowest");
  assert.equal(words(forms[0]), "i17 fact_check_verifier (citations_count>=3)");
  for (const f of forms.filter((x) => x.whole)) assert.equal(words(f), "i17 fact_check_verifier (citations_count>=3)");
  for (const f of forms.filter((x) => !x.whole)) assert.equal(words(f), "i17 (citations_count>=3)");
  assert.ok(forms.every((f) => f.lines.flat().every((w) => !w.text.includes("…"))), "no ellipsis");
  assert.equal(lineChars(forms[0].lines), "i17 fact_check_verifier (citations_count>=3)".length);
  // the id is always there, whole, in bold
  assert.ok(forms.every((f) => f.lines[0][0].ix && f.lines[0][0].text === "i17"));
  const long = labelForms("a_very_long_interaction_id", "p2p (no termination)");
  assert.ok(long.every((f) => f.lines[0][0].text === "a_very_long_interaction_id"));
  assert.equal(labelWidth("critic_refiner_curator (no termination)"), 28 * 7 + 16);
});

test("a word longer than a line (a 128-character id, a long custom metric) is broken across lines, all of it shown", () => {
  const id = `i${"x".repeat(126)}`; // neither ends on a whole piece: a break after a full piece is inside a word
  const param = `(custom:${"m".repeat(300)}>=3)`;
  const forms = labelForms(id, `sop_assembly_line ${param}`);
  for (const f of forms) {
    assert.ok(lineChars(f.lines) <= 2 * MAX_WORD_CHARS + 1, `a line of ${lineChars(f.lines)} characters`);
    // read back without the breaks, every word is there, in order
    const text = f.lines.map((l) => l.map((w) => w.text).join(" ")).join("\n");
    const joined = text.replace(new RegExp(`(\\S{${MAX_WORD_CHARS}})\\n`, "g"), "$1").replace(/\n/g, " ");
    assert.equal(joined, f.whole ? `${id} sop_assembly_line ${param}` : `${id} ${param}`);
  }
  // the id's pieces are all the id's (bold), none of the rest
  assert.ok(forms[0].lines.flat().filter((w) => w.ix).map((w) => w.text).join("") === id);
  // a label of ordinary words is untouched
  assert.deepEqual(labelForms("i5", "debate_judge (3r)")[0].lines, [[{ text: "i5", ix: true }, { text: "debate_judge (3r)" }]]);
});

test("edges use the sides that face each other: never behind their own source", () => {
  const a: Rect = { x: 0, y: 0, width: 180, height: 72 };
  const right: Rect = { x: 400, y: 300, width: 180, height: 72 };
  const below: Rect = { x: 20, y: 300, width: 180, height: 72 };
  assert.deepEqual(sides(a, right), ["right", "left"]);
  assert.deepEqual(sides(right, a), ["left", "right"]);
  assert.deepEqual(sides(a, below), ["bottom", "top"]);
  assert.deepEqual(sides(below, a), ["top", "bottom"]);
  // the curve leaves toward its target: its first stretch is between the two boxes
  for (const [s, t] of [[a, right], [right, a], [a, below], [below, a]] as const) {
    const g = edgeGeometry(s, t);
    const p = pointAt(g, 0.1);
    const inside = (r: Rect, q: Point) => q.x > r.x && q.x < r.x + r.width && q.y > r.y && q.y < r.y + r.height;
    assert.ok(!inside(s, p), `${g.sourceSide}: the curve starts outside its source`);
    const toward = Math.hypot(t.x - p.x, t.y - p.y) < Math.hypot(t.x - g.p0.x, t.y - g.p0.y);
    assert.ok(toward, `${g.sourceSide}: the curve heads for the target`);
  }
});

test("parallel edges fan apart, the same way whichever way each was drawn", () => {
  const a: Rect = { x: 0, y: 0, width: 180, height: 72 };
  const b: Rect = { x: 400, y: 0, width: 180, height: 72 };
  const there = edgeGeometry(a, b, 0, 2, false);
  const back = edgeGeometry(b, a, 1, 2, true);
  const m1 = pointAt(there, 0.5);
  const m2 = pointAt(back, 0.5);
  assert.ok(Math.abs(m1.y - m2.y) >= 36, `middles ${m1.y} and ${m2.y} are apart`);
  // three edges one way: three distinct middles
  const ys = [0, 1, 2].map((i) => pointAt(edgeGeometry(a, b, i, 3), 0.5).y).sort((x, y) => x - y);
  assert.ok(ys[1] - ys[0] >= 30 && ys[2] - ys[1] >= 30, `${ys}`);
  assert.equal(pointAt(edgeGeometry(a, b, 0, 1), 0.5).y, 36, "a lone edge runs straight");
});

test("labels are placed clear of every node and of each other", () => {
  const input = flowInput(team20);
  const pos = layoutFlow(input);
  const rects = new Map(input.nodes.map((n) => [n.id, box(pos[n.id], n)]));
  const seen = new Map<string, number>();
  const pair = (s: string, t: string) => (s < t ? `${s}|${t}` : `${t}|${s}`);
  const count = new Map<string, number>();
  for (const e of input.edges) count.set(pair(e.source, e.target), (count.get(pair(e.source, e.target)) ?? 0) + 1);
  const requests = input.edges.map((e, i) => {
    const k = pair(e.source, e.target);
    const index = seen.get(k) ?? 0;
    seen.set(k, index + 1);
    return { id: `e${i}`, widths: [labelWidth(e.label)], height: 20, geometry: edgeGeometry(rects.get(e.source)!, rects.get(e.target)!, index, count.get(k)!, e.source > e.target) };
  });
  const placed = placeLabels(requests, [...rects.values()]);
  const boxes = requests.map((r) => ({ id: r.id, ...placed.get(r.id)!, r: { x: placed.get(r.id)!.x - r.widths[0] / 2, y: placed.get(r.id)!.y - r.height / 2, width: r.widths[0], height: r.height } }));
  for (const b of boxes) {
    assert.ok(b.free, `${b.id} found a free spot`);
    for (const [id, n] of rects) assert.ok(!overlap(b.r, n), `label ${b.id} overlaps node ${id}`);
  }
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) assert.ok(!overlap(boxes[i].r, boxes[j].r), `labels ${boxes[i].id} and ${boxes[j].id} overlap`);
  assert.ok(NODE_CLEARANCE > 0 && LABEL_CLEARANCE > 0);
  // crowded: under a node that covers everything there is no free spot, and the label says so
  const everything = { x: -1e5, y: -1e5, width: 2e5, height: 2e5 };
  const squeezed = placeLabels([{ id: "x", widths: [100, 50], height: 20, geometry: edgeGeometry(rects.get("lead")!, rects.get("qa")!) }], [everything]);
  assert.deepEqual([squeezed.get("x")!.free, squeezed.get("x")!.form], [false, 1]);
});

test("a label with no room at its full width takes a shorter form that fits", () => {
  // two nodes 120 px apart: the full label (150 px) cannot sit between them, a short form can
  const a: Rect = { x: 0, y: 0, width: 180, height: 72 };
  const b: Rect = { x: 300, y: 0, width: 180, height: 72 };
  const tall = [a, b, { x: 150, y: -200, width: 180, height: 190 }, { x: 150, y: 82, width: 180, height: 190 }];
  const placed = placeLabels([{ id: "x", widths: [150, 100, 60], height: 20, geometry: edgeGeometry(a, b) }], tall).get("x")!;
  assert.equal(placed.free, true);
  assert.equal(placed.form, 1);
  const left = placed.x - 50;
  assert.ok(left >= a.x + a.width + NODE_CLEARANCE && placed.x + 50 <= b.x - NODE_CLEARANCE, `${placed.x}`);
});

test("a label is placed nearer its own edge than any other: not where another edge crosses it", () => {
  const a = { x: 0, y: 0, width: 180, height: 72 };
  const b = { x: 700, y: 0, width: 180, height: 72 };
  const g = edgeGeometry(a, b);
  const mid = { x: (g.p0.x + g.p3.x) / 2, y: g.p0.y };
  const crossing = [{ x: mid.x, y: -300 }, { x: mid.x, y: 300 }];
  const alone = placeLabels([{ id: "ab", widths: [100], height: 20, geometry: g }], [a, b]).get("ab")!;
  assert.ok(Math.abs(alone.x - mid.x) < 1, "alone, the middle");
  const crossed = placeLabels([{ id: "ab", widths: [100], height: 20, geometry: g }], [a, b], [{ id: "ab", points: [g.p0, g.p3] }, { id: "other", points: crossing }]).get("ab")!;
  assert.ok(Math.abs(crossed.x - mid.x) > 10, `moved off the crossing: ${JSON.stringify(crossed)}`);
});

test("a label never hides its own short edge: beside the line, not on it", () => {
  const a = { x: 0, y: 0, width: 180, height: 72 };
  const b = { x: 300, y: 0, width: 180, height: 72 };
  const g = edgeGeometry(a, b);
  const placed = placeLabels([{ id: "ab", widths: [110], height: 20, geometry: g }], [a, b]).get("ab")!;
  assert.ok(Math.abs(placed.y - g.p0.y) >= 10, `beside the line: ${JSON.stringify(placed)} on a line at y=${g.p0.y}`);
});

test("layout by pattern shape: debaters drawn debater → debater → judge stand side by side, in one layer, facing the judge", () => {
  for (const r of [debateChain, fourPatterns]) {
    const input = layoutInput(r.flow!, indexDiagnostics(r.flow!, []));
    assert.ok(input.edges.some((e) => e.source === "alice" && e.target === "bob" && e.lateral), "the debater → debater edge is across");
    const p = layoutFlow(input);
    assert.equal(p.alice.x, p.bob.x, "one layer");
    assert.notEqual(p.alice.y, p.bob.y);
    assert.ok(p.alice.x + NODE_WIDTH < p.referee.x && p.bob.x + NODE_WIDTH < p.referee.x, "before their judge");
  }
  // a pipeline of peers stays a line: same roles in a pipeline pattern are steps, not peers
  assert.ok(layoutInput(allPatterns.flow!, indexDiagnostics(allPatterns.flow!, [])).edges.filter((e) => e.lateral).every((e) => e.source.startsWith("voter") || e.source.startsWith("ks") || e.source.startsWith("debater")));
});

test("layout by pattern shape: a blackboard stands among its contributors, on both sides of it", () => {
  const ks = ["ks1", "ks2", "ks3", "ks4"];
  const flow = {
    ...fourPatterns.flow!,
    agents: ks.map((id, i) => ({ id, role: "knowledge_source", path: `/agents/${i}` })),
    systemNodes: [{ id: "board", type: "blackboard", path: "/systemNodes/0" }],
    interactions: [{ id: "b", patternId: "blackboard", path: "/interactions/0", edges: ks.map((id, i) => ({ id: `b-e${i + 1}`, source: id, target: "board", data: { termination: { type: "max_rounds", rounds: 4 } }, path: `/interactions/0/edges/${i}` })) }],
  };
  const p = layoutFlow(layoutInput(flow, indexDiagnostics(flow, [])));
  const left = ks.filter((id) => p[id].x < p.board.x);
  const right = ks.filter((id) => p[id].x > p.board.x);
  assert.deepEqual([left.length, right.length], [2, 2], JSON.stringify(p));
});
