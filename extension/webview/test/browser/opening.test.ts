// Browser tests of the canvas's first picture of flows drawn by hand that are not the examples: a
// release team of thirteen agents in four patterns (team-13.yaml) and a product team using all
// twenty patterns (twenty-patterns.yaml), at 1280×800 and 1920×1080, read from the DOM as a
// person sees them: nothing under the canvas's own controls, the interaction that runs first
// wholly in view, one label per fan, each interaction drawn as its legend shows it, colours told
// apart as drawn, no text under 11 px. Then the picture's other truths: an edge to an undefined
// agent drawn with its problem, routes around cards (and a word when routing gives up), and a
// run overlay that counts the engine's rounds and stops its clocks.
// DOCS_IMAGES=1 also writes the README's picture of the team (canvas-team.png).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { differenceCiede2000, parse, wcagContrast } from "culori";
import type { FlowModel, LoadFlowResult, PatternInfo, RunEvent } from "../../../src/canvas/protocol";
import { entryInteraction } from "../../src/graph";
import { settled } from "../shared/readability.mjs";
import { clearSent, docsImage, fixture, hostPost, noProblems, openCanvas, screenshot, showFlow, THEMES, useBrowser, waitForOps } from "./harness";
import { drawn, edgeEnds, fans, labelProblems, looks, overlaps, READABLE, textSizes, underControls, underNodes, within, type Drawn } from "./measure";

const team = fixture("team-13.json");
const twenty = fixture("twenty-patterns.json");
const unknown = fixture("unknown-agent.json");
const routed = fixture("routed.json");
const patterns = fixture<PatternInfo[]>("patterns.json");

const browser = useBrowser();

async function open(r: LoadFlowResult, o: { theme?: keyof typeof THEMES; width?: number; height?: number } = {}): Promise<Page> {
  const page = await openCanvas(browser(), { width: 1280, height: 800, ...o });
  await showFlow(page, r, patterns);
  await page.locator(".ac-edge-label").first().waitFor();
  await page.evaluate(settled);
  return page;
}

/** story is the interaction a run starts with: its nodes' and labels' ids. */
function story(r: LoadFlowResult): { nodes: string[]; edges: string[] } {
  const ends = edgeEnds(r);
  const id = entryInteraction(r.flow);
  const edges = [...ends].filter(([, e]) => e.interaction === id).map(([edgeId]) => edgeId);
  return { nodes: [...new Set(edges.flatMap((e) => [ends.get(e)!.source, ends.get(e)!.target]))], edges };
}

/** words are a label's words, whatever lines it was wrapped on. */
const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe("the canvas opens on the whole story", { concurrency: false }, () => {
  for (const [name, flow] of [
    ["the 13-agent team", team],
    ["the 20-pattern flow", twenty],
  ] as const)
    for (const size of [
      { width: 1280, height: 800 },
      { width: 1920, height: 1080 },
    ])
      test(`${name} at ${size.width}×${size.height}: nothing under the controls, the first interaction whole, one label per fan, legend = drawn, text ≥ 11 px`, async () => {
        const page = await open(flow, size);
        const d = await drawn(page);
        // nothing under the toolbar, the legend or the minimap: they stand beside the flow
        assert.ok(d.controls.some((c) => c.what === "legend") && d.controls.some((c) => c.what === "toolbar"), JSON.stringify(d.controls));
        assert.deepEqual(underControls(d), []);
        // the interaction that runs first, whole: its cards and its labels
        const s = story(flow);
        for (const id of s.nodes) assert.ok(within(d.nodes.find((n) => n.id === id)!, d.pane), `${id} (of ${entryInteraction(flow.flow)}) is wholly in view`);
        const storyLabels = d.labels.filter((l) => s.edges.includes(l.id));
        assert.ok(storyLabels.length > 0);
        for (const l of storyLabels) assert.ok(within(l, d.pane), `its label ${l.id} is wholly in view`);
        // one label per fan: exactly the fans' labels, each naming its interaction, by the node its edges share
        assert.deepEqual(d.labels.map((l) => l.id).sort(), [...fans(flow).keys()].sort());
        const ends = edgeEnds(flow);
        for (const l of d.labels) assert.equal(words(l.text)[0], ends.get(l.id)!.interaction, `label ${l.id} names its interaction`);
        assert.deepEqual(labelProblems(d, flow), []);
        // never cut mid-word: its words are the whole label's (the pattern left to the tooltip at most)
        for (const l of d.labels) {
          assert.doesNotMatch(l.text, /…/);
          const whole = words(l.title.split("\n")[0].replace(":", ""));
          for (const w of words(l.text)) assert.ok(whole.includes(w), `${l.id}: "${w}" is a whole word of ${JSON.stringify(whole)}`);
        }
        // each interaction's edges drawn exactly as its legend swatch
        const lk = await looks(page);
        assert.deepEqual(Object.keys(lk.legend), flow.flow!.interactions!.map((i) => i.id));
        for (const [ix, edges] of Object.entries(lk.edges)) for (const { id, ...look } of edges) assert.deepEqual(look, lk.legend[ix], `${id} looks like ${ix}'s legend entry`);
        assert.equal(Object.values(lk.edges).flat().length, ends.size, "every edge drawn");
        // every text in view at least 11 px, on the flow and beside it
        const t = await textSizes(page);
        assert.ok(t.texts.filter((x) => x.where === "flow").length > 20, "texts on the flow");
        assert.deepEqual(t.texts.filter((x) => x.px < READABLE), [], `text under ${READABLE} px at zoom ${t.zoom.toFixed(2)}`);
        if (flow === team && size.width === 1280) await docsImage(page, "canvas-release-team");
        else await screenshot(page, `opening-${flow === team ? "team" : "twenty"}-${size.width}`);
        // Fit shows everything, still clear of the controls
        await page.getByRole("button", { name: "Fit" }).click();
        await page.evaluate(settled);
        const all = await drawn(page);
        for (const n of all.nodes) assert.ok(within(n, all.pane), `after Fit, ${n.id} is in view`);
        assert.deepEqual(underControls(all), []);
        await noProblems(page);
        await page.close();
      });

  test("after Fit, Tidy shows the story again: the first interaction whole, nothing under the controls", async () => {
    const page = await open(team);
    const opened = (await textSizes(page)).zoom;
    await page.getByRole("button", { name: "Fit" }).click();
    await page.evaluate(settled);
    const fitted = await page.locator(".react-flow__viewport").evaluate((v) => getComputedStyle(v).transform);
    assert.ok((await textSizes(page)).zoom < opened, "Fit drew the whole team smaller than it opened");
    await clearSent(page);
    await page.getByRole("button", { name: "Tidy" }).click();
    assert.equal((await waitForOps(page, 1))[0].op, "setLayout");
    await page.waitForFunction((t) => getComputedStyle(document.querySelector(".react-flow__viewport")!).transform !== t, fitted);
    await page.evaluate(settled);
    const d = await drawn(page);
    const s = story(team);
    for (const id of s.nodes) assert.ok(within(d.nodes.find((n) => n.id === id)!, d.pane), `${id} is wholly in view after Tidy`);
    const storyLabels = d.labels.filter((l) => s.edges.includes(l.id));
    assert.ok(storyLabels.length > 0);
    for (const l of storyLabels) assert.ok(within(l, d.pane), `its label ${l.id} is wholly in view after Tidy`);
    assert.deepEqual(underControls(d), []);
    assert.deepEqual((await textSizes(page)).texts.filter((x) => x.px < READABLE), []);
    await noProblems(page);
    await page.close();
  });

  test("without the minimap, what is off-screen is counted at the flow's edges, clear of the cards; a click shows it", async () => {
    const page = await open(twenty);
    await page.keyboard.press("m");
    const markers = page.getByTestId("offscreen");
    await markers.waitFor();
    const d = await drawn(page);
    const beyond = { right: d.nodes.filter((n) => n.x >= d.pane.x + d.pane.width).length, below: d.nodes.filter((n) => n.y >= d.pane.y + d.pane.height).length };
    assert.ok(beyond.right > 0 && beyond.below > 0, JSON.stringify(beyond));
    const right = markers.getByRole("button", { name: /cards? to the right$/ });
    assert.equal(await right.getAttribute("aria-label"), `${beyond.right} card${beyond.right > 1 ? "s" : ""} to the right`);
    assert.equal(await markers.getByRole("button", { name: /cards? below$/ }).getAttribute("aria-label"), `${beyond.below} card${beyond.below > 1 ? "s" : ""} below`);
    // in the margin the view keeps: no card under a marker
    const boxes = await markers.locator("button").evaluateAll((bs) => bs.map((b) => b.getBoundingClientRect().toJSON()));
    for (const b of boxes) for (const n of d.nodes) assert.ok(!overlaps({ x: b.x, y: b.y, width: b.width, height: b.height }, n), `a marker over ${n.id}`);
    assert.deepEqual((await textSizes(page)).texts.filter((x) => x.px < READABLE), []);
    await screenshot(page, "opening-offscreen-markers");
    await right.click();
    await page.evaluate(settled);
    const after = await drawn(page);
    assert.ok(after.nodes.filter((n) => n.x >= after.pane.x + after.pane.width).length < beyond.right, "fewer cards to the right");
    await noProblems(page);
    await page.close();
  });

  for (const theme of Object.keys(THEMES) as Array<keyof typeof THEMES>)
    test(`${theme}: the twelve colours are told apart as drawn: CIEDE2000 between the edges' pixels, and 3:1 against the background`, async () => {
      const board = swatches();
      const page = await open(board, { theme, width: 1920, height: 1080 });
      const d = await drawn(page);
      assert.equal((await textSizes(page)).zoom, 1, "the board opens whole at 100%: lines at their drawn width");
      const colours = await drawnColours(page, d);
      const ids = board.flow!.interactions!.map((i) => i.id);
      const bg = parse(THEMES[theme].vars["editor-background"])!;
      const de = differenceCiede2000();
      const report: string[] = [];
      let least = Infinity;
      for (let i = 0; i < 12; i++) {
        const a = parse(colours[ids[i]])!;
        assert.ok(a, `${ids[i]} drawn`);
        const c = wcagContrast(a, bg);
        if (c < 3) report.push(`${ids[i]} ${colours[ids[i]]}: ${c.toFixed(2)}:1 against the background`);
        for (let j = 0; j < i; j++) {
          const e = de(a, parse(colours[ids[j]])!);
          least = Math.min(least, e);
          if (e < MIN_DISTINCT) report.push(`${ids[j]} ${colours[ids[j]]} and ${ids[i]} ${colours[ids[i]]}: ΔE00 ${e.toFixed(1)}`);
        }
      }
      console.log(`${theme}: the least CIEDE2000 between two of the twelve colours as drawn: ${least.toFixed(1)}`);
      assert.deepEqual(report, []);
      await noProblems(page);
      await page.close();
    });

  test("an edge to an agent the flow does not define is drawn, to a placeholder card, with its problem marker", async () => {
    const page = await open(unknown);
    const d = await drawn(page);
    assert.ok(d.nodes.some((n) => n.id === "missing:tester2"), "a placeholder for tester2");
    assert.ok(d.edges.some((e) => e.id === "build-e2"), "the edge is drawn");
    const marker = page.getByTestId("marker-build-e2");
    assert.match((await marker.getAttribute("title"))!, /names no agent or system node; did you mean "tester"/);
    const card = page.locator('.react-flow__node[data-id="missing:tester2"]');
    assert.equal(await card.locator(".ac-node-name").textContent(), "tester2");
    assert.match((await card.textContent())!, /not in the flow/);
    // the marker is on its own edge, readable, and picks the edge
    const m = d.markers.find((x) => x.id === "build-e2")!;
    const line = d.edges.find((e) => e.id === "build-e2")!;
    assert.ok(line.points.some((p) => p.x >= m.x && p.x <= m.x + m.width && p.y >= m.y && p.y <= m.y + m.height), "the marker sits on its edge");
    const t = await textSizes(page);
    assert.deepEqual(t.texts.filter((x) => x.px < READABLE), []);
    await marker.click();
    await page.waitForFunction(() => document.querySelector('.react-flow__edge[data-id="build-e2"]')?.classList.contains("selected"));
    // the line keeps its interaction's look: no dash for a problem
    const lk = await looks(page);
    assert.equal(lk.edges.build.find((e) => e.id === "build-e1")!.dash, "none");
    await screenshot(page, "opening-unknown-agent");
    await noProblems(page);
    await page.close();
  });

  test("a 127-character id and a 300-character custom metric: the label broken across lines, the story's cards in view, the legend's pattern and count in sight", async () => {
    const r = longWords();
    const page = await open(r);
    const d = await drawn(page);
    const ix = r.flow!.interactions![0];
    const label = d.labels.find((l) => l.id === `${ix.id}-e1`)!;
    assert.ok(label.width < d.pane.width / 2, `the label is ${Math.round(label.width)} px wide in a pane of ${Math.round(d.pane.width)}`);
    for (const id of ["a", "b"]) assert.ok(within(d.nodes.find((n) => n.id === id)!, d.pane), `${id} is wholly in view`);
    assert.ok(within(label, d.pane), "the label is wholly in view");
    for (const l of d.labels) for (const n of d.nodes) assert.ok(!overlaps(l, n), `${l.id.slice(0, 12)}… over ${n.id}`);
    // every character of it is drawn: the label's pieces, read back, are the whole label
    const drawnChars = label.text.replace(/\s/g, "");
    assert.equal(drawnChars, `${ix.id}sop_assembly_line(${METRIC}>=3)`);
    // the legend: the id ends in an ellipsis (whole in its tooltip); its pattern and count stay in its box
    const legend = d.controls.find((c) => c.what === "legend")!;
    const entry = page.locator(`.ac-legend li[data-id="${ix.id}"]`);
    for (const part of [".ac-legend-pattern", ".ac-legend-count"]) {
      const b = (await entry.locator(part).boundingBox())!;
      assert.ok(b.width > 0 && within(b, legend), `${part} in the legend's box`);
    }
    assert.match((await entry.locator("button").getAttribute("title"))!, new RegExp(ix.id));
    assert.deepEqual((await textSizes(page)).texts.filter((x) => x.px < READABLE), []);
    await noProblems(page);
    await page.close();
  });

  test("routing on a real flow: an edge whose curve would run under a card is routed around it, orthogonally", async () => {
    const page = await open(routed);
    const d = await drawn(page);
    const e = d.edges.find((x) => x.id === "hand_off-e1")!;
    assert.equal(e.routed, true, "the writer → editor edge is routed");
    assert.deepEqual(underNodes(d, routed), []);
    // orthogonal: away from its rounded corners, each step goes along x or along y
    const steps = e.points.slice(1).map((p, i) => [p.x - e.points[i].x, p.y - e.points[i].y]);
    const straight = steps.filter(([dx, dy]) => Math.abs(dx) < 0.05 || Math.abs(dy) < 0.05).length;
    assert.ok(straight / steps.length > 0.8, `${straight} of ${steps.length} steps axis-aligned`);
    // the pipeline's own edges stay curves: nothing is in their way
    assert.deepEqual(d.edges.filter((x) => x.routed).map((x) => x.id), ["hand_off-e1"]);
    assert.equal(await page.getByTestId("routing-limit").count(), 0);
    await screenshot(page, "opening-routed");
    await noProblems(page);
    await page.close();
  });

  test("where routing gives up (too many cards in the way), the person is told how many edges run under cards, and why", async () => {
    const page = await open(crowded());
    const d = await drawn(page);
    const under = underNodes(d, crowded());
    assert.ok(under.length > 0, "the long edge crosses the grid");
    const note = page.getByTestId("routing-limit");
    assert.equal(await note.textContent(), `${new Set(under.map((u) => u.split(" ")[0])).size} edge not routed`);
    assert.match((await note.getAttribute("title"))!, /drawn as a curve that may pass under cards: routing found no way around the cards near them/);
    await noProblems(page);
    await page.close();
  });

  test("the run overlay: the round the engine counts (not messages), a clock that stops with the run, a label that never grows over a card", async () => {
    const page = await open(team);
    const label = page.getByTestId("edge-label-design-e1");
    const at = Date.now();
    const ev = (dt: number, e: Partial<RunEvent>) => hostPost(page, { type: "runEvent", event: { ts: at + dt, runId: "run_9", flow: "release-team", ...e } as RunEvent });
    await ev(0, { event: "run_started" });
    await ev(1, { event: "interaction_started", interactionId: "design" });
    await ev(2, { event: "configured", interactionId: "design" });
    await ev(3, { event: "agent_started", interactionId: "design", edgeId: "design-e1", agent: "pro", round: 0 });
    for (let i = 0; i < 4; i++) await ev(4 + i, { event: "message", interactionId: "design", edgeId: "design-e1", from: "pro", to: "con" });
    await ev(10, { event: "step", interactionId: "design", edgeId: "design-e1", step: 1, round: 0, from: "pro", to: "con" });
    await label.locator(".ac-edge-counters").waitFor();
    await page.evaluate(settled);
    const first = await label.boundingBox();
    assert.match((await label.locator(".ac-edge-counters").textContent())!, /^round 1\/3 · (10:00|9:5\d) left · \d+\/min$/, "four messages and a step are the first round");
    const during = await drawn(page);
    const cardsUnder = (dd: Drawn) => dd.labels.flatMap((l) => dd.nodes.filter((n) => overlaps(l, n)).map((n) => `${l.id} over ${n.id}`));
    assert.deepEqual(cardsUnder(during), []);
    // the second round, then the end: the engine's count, and the clock gone
    await ev(20, { event: "agent_started", interactionId: "design", edgeId: "design-e2", agent: "con", round: 1 });
    await page.waitForFunction(() => /^round 2\/3/.test(document.querySelector('[data-testid="edge-label-design-e1"] .ac-edge-counters')?.textContent ?? ""));
    assert.deepEqual(await label.boundingBox(), first, "the label's box holds still as its numbers change");
    await ev(30, { event: "terminated", interactionId: "design", rounds: 2, reason: "judge_decision", status: "completed" });
    await ev(40, { event: "run_finished", status: "completed" });
    await page.waitForFunction(() => document.querySelector('[data-testid="edge-label-design-e1"] .ac-edge-counters')?.textContent === "round 2/3 · done");
    assert.deepEqual(cardsUnder(await drawn(page)), []);
    assert.deepEqual(await label.boundingBox(), first);
    await screenshot(page, "opening-run-overlay");
    await noProblems(page);
    await page.close();
  });
});

/**
 * The least CIEDE2000 two of the twelve interaction colours keep as drawn: a clear difference for
 * thin lines (the fixed palette before kept 9.7 in the dark theme, 6.1 in the light one).
 */
const MIN_DISTINCT = 14;

/**
 * drawnColours reads each interaction's colour as the page drew it: a screenshot decoded in the
 * page, sampled on each of its edges' lines away from every other line, label, card and marker;
 * the median of the samples that are not the background (a dashed line's gaps).
 */
async function drawnColours(page: Page, d: Drawn): Promise<Record<string, string>> {
  const png = (await page.screenshot()).toString("base64");
  const ends = new Map(d.edges.map((e) => [e.id, e]));
  const clear = (p: { x: number; y: number }, own: string) =>
    ![...d.nodes, ...d.labels, ...d.markers].some((b) => p.x > b.x - 3 && p.x < b.x + b.width + 3 && p.y > b.y - 3 && p.y < b.y + b.height + 3) &&
    !d.edges.some((e) => e.id !== own && e.points.some((q) => Math.hypot(q.x - p.x, q.y - p.y) < 8));
  const samples: Record<string, Array<{ x: number; y: number }>> = {};
  for (const [id, e] of ends) {
    const ix = id.replace(/-e\d+$/, "");
    for (const p of e.points) if (clear(p, id)) (samples[ix] ??= []).push({ x: Math.floor(p.x), y: Math.floor(p.y) }); // the pixel the line's centre is in
  }
  return page.evaluate(
    async ({ png, samples }) => {
      const img = new Image();
      img.src = `data:image/png;base64,${png}`;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width;
      c.height = img.height;
      const g = c.getContext("2d")!;
      g.drawImage(img, 0, 0);
      const bg = getComputedStyle(document.querySelector(".react-flow")!).backgroundColor.match(/\d+/g)!.map(Number);
      const out: Record<string, string> = {};
      for (const [ix, pts] of Object.entries(samples)) {
        const px = pts
          .map((p) => [...g.getImageData(p.x, p.y, 1, 1).data.slice(0, 3)])
          .filter((rgb) => Math.abs(rgb[0] - bg[0]) + Math.abs(rgb[1] - bg[1]) + Math.abs(rgb[2] - bg[2]) > 60);
        if (px.length === 0) continue;
        const mid = (k: number) => px.map((rgb) => rgb[k]).sort((a, b) => a - b)[Math.floor(px.length / 2)];
        out[ix] = `rgb(${mid(0)}, ${mid(1)}, ${mid(2)})`;
      }
      return out;
    },
    { png, samples },
  );
}

/**
 * swatches is a board of the twelve colours as the canvas draws them: twelve interactions, each
 * one long edge between two cards, one above the other (saved positions).
 */
function swatches(): LoadFlowResult {
  const agents = Array.from({ length: 24 }, (_, i) => ({ id: `a${i}`, name: `A${i}`, role: "worker", path: `/agents/${i}` }));
  const nodes: Record<string, { x: number; y: number }> = {};
  agents.forEach((a, i) => (nodes[a.id] = { x: (i % 2) * 700, y: Math.floor(i / 2) * 76 }));
  const interactions = Array.from({ length: 12 }, (_, k) => ({
    id: `ix${k}`,
    patternId: "role_play_pair",
    path: `/interactions/${k}`,
    edges: [{ id: `ix${k}-e1`, source: `a${2 * k}`, target: `a${2 * k + 1}`, data: { termination: { type: "max_rounds", rounds: 1 } }, path: `/interactions/${k}/edges/0` }],
  }));
  const flow: FlowModel = { file: "swatches.yaml", name: "swatches", agents, systemNodes: [], interactions, layout: { nodes, edges: {} }, spans: {} };
  return { flow, diagnostics: [] };
}

/**
 * crowded is a flow with saved positions: a grid of 49 cards close together, and an edge from
 * one corner to the other, across all of them: routing looks at the cards near an edge and gives
 * up past 32 (routing.ts: MAX_OBSTACLES).
 */
function crowded(): LoadFlowResult {
  const agents = Array.from({ length: 49 }, (_, i) => ({ id: `a${i}`, name: `A${i}`, role: "worker", path: `/agents/${i}` }));
  const nodes: Record<string, { x: number; y: number }> = {};
  agents.forEach((a, i) => (nodes[a.id] = { x: (i % 7) * 230, y: Math.floor(i / 7) * 110 }));
  const flow: FlowModel = {
    file: "crowded.yaml",
    name: "crowded",
    agents,
    systemNodes: [],
    interactions: [{ id: "across", patternId: "role_play_pair", path: "/interactions/0", edges: [{ id: "across-e1", source: "a0", target: "a48", data: { termination: { type: "max_rounds", rounds: 1 } }, path: "/interactions/0/edges/0" }] }],
    layout: { nodes, edges: {} },
    spans: {},
  };
  return { flow, diagnostics: [] };
}

const METRIC = `custom:${"m".repeat(300)}`;

/**
 * longWords is a flow with the longest words a label can hold: an interaction id of 127
 * characters (ids may have 128) and a custom quality-gate metric of 307, beside a short one.
 */
function longWords(): LoadFlowResult {
  const agents = ["a", "b", "c", "d"].map((id, i) => ({ id, name: id.toUpperCase(), role: "worker", path: `/agents/${i}` }));
  const long = `i${"x".repeat(126)}`;
  const edge = (ix: string, k: number, source: string, target: string, termination: Record<string, unknown>) => ({
    id: `${ix}-e1`,
    source,
    target,
    data: { termination },
    path: `/interactions/${k}/edges/0`,
  });
  const flow = {
    file: "long-words.yaml",
    name: "long-words",
    agents,
    systemNodes: [],
    interactions: [
      { id: long, patternId: "sop_assembly_line", path: "/interactions/0", edges: [edge(long, 0, "a", "b", { type: "quality_gate", metric: METRIC, op: ">=", value: 3 })] },
      { id: "short", patternId: "role_play_pair", path: "/interactions/1", edges: [edge("short", 1, "c", "d", { type: "max_rounds", rounds: 2 })] },
    ],
    layout: { nodes: {}, edges: {} },
    spans: {},
  } as FlowModel;
  return { flow, diagnostics: [] };
}
