// Browser tests of the built webview bundle (run `npm run build:webview` first; `npm run
// test:webview` does). Each test drives the canvas as a person would and asserts both the
// operations the webview sent to the (mocked) host and the DOM.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import type { FlowModel, FlowOp, LoadFlowResult, PatternInfo } from "../../../src/canvas/protocol";
import { join } from "node:path";
import {
  ARTEFACTS,
  clearSent,
  docsImage,
  edits,
  fixture,
  hostPost,
  noProblems,
  openCanvas,
  screenshot,
  sent,
  showFlow,
  THEMES,
  useBrowser,
  viewport,
  waitForOps,
  waitForSent,
} from "./harness";
import { fans } from "./measure";
import { settled } from "../shared/readability.mjs";

const all = fixture("all-patterns.json");
const problems = fixture("problems.json");
const broken = fixture("broken.json");
const patterns = fixture<PatternInfo[]>("patterns.json");
const flow = all.flow!;
const nodeCount = flow.agents!.length + flow.systemNodes!.length;
const edgeCount = flow.interactions!.reduce((n, i) => n + (i.edges ?? []).length, 0);

const browser = useBrowser();

async function open(theme?: keyof typeof THEMES): Promise<Page> {
  const page = await openCanvas(browser(), { theme });
  await showFlow(page, all, patterns);
  await page.evaluate(settled); // the first view set: what a test clicks stays where it is
  return page;
}

const node = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
// the nodes the layout placed (no saved position): the first move writes them too
const autoPlaced = [...flow.agents!, ...flow.systemNodes!].map((n) => n.id).filter((id) => !flow.layout.nodes?.[id]);

/** movedTo is where a move op puts each node: a moveNode's one, a setLayout's many. */
function movedTo(op: FlowOp): Record<string, { x: number; y: number }> {
  if (op.op === "moveNode") return { [op.id]: op.position };
  if (op.op === "setLayout") return op.positions;
  throw new Error(`not a move: ${JSON.stringify(op)}`);
}
const agentPath = (id: string) => flow.agents!.find((a) => a.id === id)!.path;

// A drag as a hand makes it: small moves a frame apart (d3-zoom ignores a burst of moves).
async function drag(page: Page, x: number, y: number, dx: number, dy: number) {
  for (let i = 1; i <= 10; i++) {
    await page.mouse.move(x + (dx * i) / 10, y + (dy * i) / 10);
    await page.waitForTimeout(16);
  }
}

/** press presses a key and waits two frames, for React Flow to render what it did. */
async function press(page: Page, key: string) {
  await page.keyboard.press(key);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

describe("canvas webview", { concurrency: false }, () => {
  test("renders a flow that uses all 20 patterns, with icons, badges and labels", async () => {
    const page = await open();
    const fanned = fans(all);
    await page.locator(".ac-edge-label").nth(fanned.size - 1).waitFor();
    assert.equal(await page.locator(".react-flow__node").count(), nodeCount);
    assert.equal(await page.locator(".react-flow__edge").count(), edgeCount, "every edge drawn");
    // one label per fan, each `id pattern (key parameter)`, wrapped between words, never cut
    assert.equal(await page.locator(".ac-edge-label").count(), fanned.size);
    const labels = await page.locator(".ac-edge-label").evaluateAll((ls) => ls.map((l) => ({ text: l.textContent!, title: (l as HTMLElement).title })));
    for (const l of labels) assert.doesNotMatch(l.text, /…/);
    for (const it of flow.interactions!) assert.ok(labels.some((l) => l.title.startsWith(`${it.id}: ${it.patternId} (`)), `a label for ${it.id}`);
    assert.equal((await page.getByTestId("edge-label-i5-e1").locator(".ac-edge-text").allTextContents()).join(" "), "debate_judge (3r)");
    assert.equal((await page.getByTestId("edge-label-i7-e1").locator(".ac-edge-text").allTextContents()).join(" "), "majority_vote (≥0.6)");
    // Agents: role icon, name, role, backend badge, files.
    const coder = node(page, "coder");
    assert.equal(await coder.locator(".ac-role-icon.codicon-code").count(), 1);
    assert.equal(await coder.locator(".ac-node-name").textContent(), "Coder");
    assert.equal(await coder.locator(".ac-role").textContent(), "coder");
    assert.equal(await coder.locator(".ac-backend").textContent(), "codex");
    assert.equal(await coder.getAttribute("aria-label"), "Agent Coder, role coder, backend codex");
    // System nodes: their own icon and a type badge, for all eight types.
    for (const t of ["judge", "blackboard", "router", "broker", "manager", "aggregator", "curator", "bridge"]) {
      const sys = page.locator(`.ac-sys-${t}`).first();
      assert.equal(await sys.locator(`svg.ac-icon-${t}`).count(), 1, t);
      assert.equal(await sys.locator(".ac-systype").textContent(), t.toUpperCase());
    }
    // The palette lists the 20 patterns.
    assert.equal(await page.locator(".ac-pattern").count(), 20);
    await screenshot(page, "all-patterns");
    await noProblems(page);
    await page.close();
  });

  test("the palette searches patterns, shows the doc, and inserts one as an insertPattern op", async () => {
    const page = await open();
    await page.getByPlaceholder("Search patterns").fill("red team");
    const found = await page.locator(".ac-pattern-id").allTextContents();
    assert.ok(found.includes("P16") && found.length < 20, found.join());
    await page.getByPlaceholder("Search patterns").fill("no such pattern anywhere");
    await page.getByText("No pattern matches").waitFor();
    await page.getByPlaceholder("Search patterns").fill("judge");
    assert.ok((await page.locator(".ac-pattern").count()) >= 2);
    await page.locator('.ac-pattern[data-pattern="debate_judge"]').click();
    await page.locator(".ac-pattern-doc h3").first().waitFor();
    assert.match((await page.locator(".ac-pattern-doc").textContent()) ?? "", /Debate \+ Judge/);
    assert.ok((await page.locator(".ac-pattern-doc table td").count()) > 0, "the roles table is rendered");
    await page.evaluate(settled);
    await docsImage(page, "canvas-palette");
    await clearSent(page);
    await page.getByRole("button", { name: "Insert debate_judge" }).click();
    const [op] = await waitForOps(page, 1);
    assert.equal(op.op, "insertPattern");
    assert.equal(op.op === "insertPattern" && op.patternId, "debate_judge");
    assert.ok(op.op === "insertPattern" && Number.isInteger(op.position!.x) && Number.isInteger(op.position!.y));
    // The host answers with the new model: the subgraph appears.
    const next: FlowModel = structuredClone(flow);
    next.agents!.push({ id: "a40", name: "Debater A2", role: "debater", path: `/agents/${next.agents!.length}` });
    next.systemNodes!.push({ id: "judge2", type: "judge", name: "Judge 2", path: `/systemNodes/${next.systemNodes!.length}` });
    next.interactions!.push({
      id: "i21",
      patternId: "debate_judge",
      path: "/interactions/20",
      edges: [{ id: "i21-e1", source: "a40", target: "judge2", data: { termination: { type: "max_rounds", rounds: 3 } }, path: "/interactions/20/edges/0" }],
    });
    next.layout.nodes = { ...next.layout.nodes, a40: op.op === "insertPattern" ? op.position! : { x: 0, y: 0 } };
    await hostPost(page, { type: "flow", version: 2, flow: next, diagnostics: [] });
    await node(page, "judge2").waitFor();
    assert.equal(await page.locator(".react-flow__node").count(), nodeCount + 2);
    assert.equal(await page.getByTestId("edge-label-i21-e1").locator(".ac-edge-text").textContent(), "debate_judge (3r)");
    await screenshot(page, "insert-pattern");
    // Dragging a pattern from the palette onto the canvas inserts it where it is dropped.
    await clearSent(page);
    await page.locator('.ac-pattern[data-pattern="debate_judge"]').dragTo(page.locator(".react-flow__pane"), { targetPosition: { x: 200, y: 150 } });
    const [dropped] = await waitForOps(page, 1);
    assert.equal(dropped.op === "insertPattern" && dropped.patternId, "debate_judge");
    const pane = (await page.locator(".react-flow__pane").boundingBox())!;
    const vp = await viewport(page);
    const expect = { x: Math.round((pane.x + 200 - pane.x - vp.x) / vp.zoom), y: Math.round((pane.y + 150 - pane.y - vp.y) / vp.zoom) };
    const got = dropped.op === "insertPattern" ? dropped.position! : { x: NaN, y: NaN };
    assert.ok(Math.abs(got.x - expect.x) <= 2 && Math.abs(got.y - expect.y) <= 2, `dropped at ${JSON.stringify(got)}, expected about ${JSON.stringify(expect)}`);
    await noProblems(page);
    await page.close();
  });

  test("the inspector matches the selection and sends set ops", async () => {
    const page = await open();
    const inspector = page.getByTestId("inspector");
    // the flow opens on its first interaction: Fit brings coder, judge and i5 into view (clicking a
    // node beside the pane, under the inspector, went to the inspector on a busy machine)
    await press(page, "0");
    await page.evaluate(settled);
    await node(page, "coder").click();
    assert.equal(await inspector.locator("h2").textContent(), "Agent coder");
    const name = inspector.getByLabel("Name");
    assert.equal(await name.inputValue(), "Coder");
    await clearSent(page);
    await name.fill("Coder X");
    await name.press("Enter");
    await inspector.getByLabel("Backend").selectOption("gemini");
    await inspector.getByLabel("Files").fill("src/a.ts, src/b.ts");
    await inspector.getByLabel("Files").press("Enter");
    let ops = await waitForOps(page, 3);
    assert.deepEqual(ops, [
      { op: "set", path: `${agentPath("coder")}/name`, value: "Coder X" },
      { op: "set", path: `${agentPath("coder")}/runtime/backendId`, value: "gemini" },
      { op: "set", path: `${agentPath("coder")}/files`, value: ["src/a.ts", "src/b.ts"] },
    ]);
    // The model comes back changed: the node and the inspector show it, the selection stays.
    const next: FlowModel = structuredClone(flow);
    next.agents!.find((a) => a.id === "coder")!.name = "Coder X";
    await hostPost(page, { type: "flow", version: 2, flow: next, diagnostics: [] });
    await page.waitForFunction(() => document.querySelector('.react-flow__node[data-id="coder"] .ac-node-name')?.textContent === "Coder X");
    assert.equal(await inspector.getByLabel("Name").inputValue(), "Coder X");
    assert.equal(await inspector.locator("h2").textContent(), "Agent coder");

    // Renaming goes through the rename op (the sidecar renames every reference).
    await clearSent(page);
    await inspector.getByLabel("Id", { exact: true }).fill("coder2");
    await inspector.getByLabel("Id", { exact: true }).press("Enter");
    assert.deepEqual(await waitForOps(page, 1), [{ op: "rename", id: "coder", newId: "coder2" }]);

    // A system node.
    await node(page, "judge").click();
    assert.equal(await inspector.locator("h2").textContent(), "judge judge");
    assert.equal(await inspector.getByLabel("Type").inputValue(), "judge");

    // An edge: the six axes, the termination editor, params.
    await clearSent(page);
    await page.getByTestId("edge-label-i5-e1").click();
    assert.equal(await inspector.locator("h2").textContent(), "Edge i5-e1");
    assert.equal(await inspector.getByLabel("Pattern").inputValue(), "debate_judge");
    assert.equal(await inspector.getByLabel("Topology").inputValue(), "debate_judge");
    assert.equal(await inspector.getByLabel("Stops when").inputValue(), "any");
    assert.equal(await inspector.locator("fieldset.ac-condition").count(), 2);
    const ep = "/interactions/4/edges/0/data";
    await inspector.getByLabel("Rounds").fill("4");
    await inspector.getByLabel("Rounds").press("Enter");
    await inspector.getByLabel("Sync").selectOption("turn_based");
    await inspector.getByLabel("Intent").selectOption("verify");
    // A checkbox shows the model: it changes only when the new model comes back.
    await inspector.getByLabel("audit_log").click();
    await inspector.getByLabel("Params", { exact: true }).fill('{"timeout_ms": 300000}');
    await inspector.getByLabel("Params", { exact: true }).blur();
    ops = await waitForOps(page, 5);
    assert.deepEqual(ops, [
      { op: "set", path: `${ep}/termination`, value: { any: [{ type: "max_rounds", rounds: 4 }, { type: "judge_decision" }] } },
      { op: "set", path: `${ep}/sync`, value: "turn_based" },
      { op: "set", path: `${ep}/intent`, value: "verify" },
      { op: "set", path: `${ep}/verification`, value: ["audit_log"] },
      { op: "set", path: `${ep}/params`, value: { timeout_ms: 300000 } },
    ]);
    // One condition instead of any:, then a quality gate.
    await clearSent(page);
    await inspector.getByLabel("Stops when").selectOption("single");
    ops = await waitForOps(page, 1);
    assert.deepEqual(ops, [{ op: "set", path: `${ep}/termination`, value: { type: "max_rounds", rounds: 3 } }]);
    // Bad params JSON: an error in the inspector, no op.
    await clearSent(page);
    await inspector.getByLabel("Params", { exact: true }).fill("{oops");
    await inspector.getByLabel("Params", { exact: true }).blur();
    await inspector.getByRole("alert").waitFor();
    assert.deepEqual(await edits(page), []);
    await screenshot(page, "inspector-edge");
    await noProblems(page);
    await page.close();
  });

  test("diagnostics are drawn on the offending nodes and edges, with their messages", async () => {
    const page = await openCanvas(browser());
    await showFlow(page, problems, patterns);
    await page.getByTestId("edge-label-i1-e1").waitFor();
    assert.match((await node(page, "a1").locator(".ac-node").getAttribute("class"))!, /has-warning/);
    assert.match((await node(page, "a1").locator(".ac-node-diags").textContent())!, /unknown field "colour"/);
    assert.match((await node(page, "a2").locator(".ac-node").getAttribute("class"))!, /has-error/);
    assert.match((await node(page, "a2").locator(".ac-node-diags").textContent())!, /maxTurns must be a whole number/);
    assert.doesNotMatch((await node(page, "j").locator(".ac-node").getAttribute("class"))!, /has-/);
    assert.match((await page.getByTestId("edge-label-i1-e1").getAttribute("class"))!, /has-error/);
    assert.match((await page.getByTestId("edge-label-i1-e1").getAttribute("title"))!, /rounds must be a whole number/);
    assert.match((await page.getByTestId("edge-label-i1-e2").getAttribute("class"))!, /has-warning/);
    assert.match((await page.getByTestId("flow-problems").textContent())!, /1 problem in the file.*unknownTop/);
    // Selected: the inspector lists them, and each reveals its place in the YAML.
    await node(page, "a2").click();
    await clearSent(page);
    await page.getByTestId("inspector").getByRole("button", { name: /maxTurns must be a whole number/ }).click();
    const m = await waitForSent(page, (x) => x.type === "reveal");
    assert.deepEqual(m, { type: "reveal", path: "/agents/1/runtime/maxTurns", range: problems.flow!.spans!["/agents/1/runtime/maxTurns"] });
    await clearSent(page);
    await page.getByRole("button", { name: "Reveal in YAML" }).click();
    assert.deepEqual(await waitForSent(page, (x) => x.type === "reveal"), { type: "reveal", path: "/agents/1", range: problems.flow!.spans!["/agents/1"] });
    await screenshot(page, "diagnostics");
    await noProblems(page);
    await page.close();
  });

  test("invalid YAML keeps the last good graph and shows the error", async () => {
    const page = await open();
    await hostPost(page, { type: "flow", version: 2, flow: broken.flow, diagnostics: broken.diagnostics });
    const banner = page.getByTestId("syntax-banner");
    await banner.waitFor();
    assert.match((await banner.textContent())!, /showing the last good graph.*Line 2: YAML syntax error/);
    assert.equal(await page.locator(".react-flow__node").count(), nodeCount);
    await screenshot(page, "invalid-yaml");
    await hostPost(page, { type: "flow", version: 3, flow: all.flow, diagnostics: all.diagnostics });
    await banner.waitFor({ state: "detached" });
    await page.close();
  });

  test("tidy lays the graph out in a Web Worker and sends one setLayout", async () => {
    const page = await open();
    await clearSent(page);
    await page.getByRole("button", { name: "Tidy" }).click();
    const ops = await waitForOps(page, 1);
    assert.equal(ops.length, 1);
    const op = ops[0] as Extract<FlowOp, { op: "setLayout" }>;
    assert.equal(op.op, "setLayout");
    const ids = Object.keys(op.positions).sort();
    assert.deepEqual(ids, [...flow.agents!.map((a) => a.id), ...flow.systemNodes!.map((s) => s.id)].sort());
    assert.ok(page.workers().length >= 1, "the layout ran in a worker");
    // The laid-out boxes do not overlap, and the canvas shows them where the op says.
    const boxes = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>(".react-flow__node")].map((n) => ({ id: n.dataset.id!, w: n.offsetWidth, h: n.offsetHeight })),
    );
    const size = new Map(boxes.map((b) => [b.id, b]));
    for (let i = 0; i < ids.length; i++)
      for (let j = i + 1; j < ids.length; j++) {
        const a = op.positions[ids[i]];
        const b = op.positions[ids[j]];
        const sa = size.get(ids[i])!;
        const sb = size.get(ids[j])!;
        const apart = a.x + sa.w <= b.x || b.x + sb.w <= a.x || a.y + sa.h <= b.y || b.y + sb.h <= a.y;
        assert.ok(apart, `${ids[i]} and ${ids[j]} overlap`);
      }
    const t = await node(page, "judge").evaluate((n) => new DOMMatrix(getComputedStyle(n).transform));
    assert.deepEqual({ x: Math.round(t.e), y: Math.round(t.f) }, op.positions.judge);
    await page.waitForTimeout(100);
    await screenshot(page, "tidy");
    await noProblems(page);
    await page.close();
  });

  test("keyboard: Tab, +/-, 0, 1, Shift+S, arrows, Delete, undo and redo", async () => {
    const page = await open();
    const inspector = page.getByTestId("inspector");
    await page.locator(".react-flow__pane").click({ position: { x: 5, y: 300 } });
    // Tab cycles the selection through the nodes (then the edges); Shift+Tab goes back.
    const first = flow.agents![0].id;
    const second = flow.agents![1].id;
    await page.keyboard.press("Tab");
    assert.equal(await inspector.locator("h2").textContent(), `Agent ${first}`);
    await page.keyboard.press("Tab");
    assert.equal(await inspector.locator("h2").textContent(), `Agent ${second}`);
    await page.waitForFunction((id) => document.activeElement?.getAttribute("data-id") === id, second);
    await page.keyboard.press("Shift+Tab");
    assert.equal(await inspector.locator("h2").textContent(), `Agent ${first}`);
    assert.match((await page.getByTestId("announce").textContent())!, new RegExp(`^Agent ${flow.agents![0].name}, role`));
    // The focused node shows a focus ring.
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    assert.equal(outline, "solid");

    // Zoom: 1 is 100%, + and - step, 0 fits the whole flow.
    await press(page, "1");
    assert.equal((await viewport(page)).zoom, 1);
    await press(page, "+");
    const zin = (await viewport(page)).zoom;
    assert.ok(zin > 1, `zoomed in to ${zin}`);
    await press(page, "-");
    await press(page, "-");
    assert.ok((await viewport(page)).zoom < 1);
    await press(page, "0");
    const pane = (await page.locator(".react-flow").boundingBox())!;
    for (const b of await page.locator(".react-flow__node").evaluateAll((ns) => ns.map((n) => n.getBoundingClientRect().toJSON()))) {
      assert.ok(b.left >= pane.x - 1 && b.right <= pane.x + pane.width + 1 && b.top >= pane.y - 1 && b.bottom <= pane.y + pane.height + 1, "0 fits every node in view");
    }

    // Arrow keys nudge the selection; the moves settle into one op. Most of this flow's nodes
    // have no saved position yet: the first move writes theirs too (one setLayout).
    await press(page, "1");
    await clearSent(page);
    const start = flow.layout.nodes![first];
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("Shift+ArrowDown");
    let ops = await waitForOps(page, 1);
    assert.equal(ops.length, 1);
    assert.deepEqual(Object.keys(movedTo(ops[0])).sort(), [first, ...autoPlaced].sort());
    const moved = { position: movedTo(ops[0])[first] };
    assert.deepEqual(moved.position, { x: start.x + 2, y: start.y + 10 });

    // Shift+S toggles snapping; nudges then go to the next grid line.
    await page.keyboard.press("Shift+S");
    assert.equal(await page.getByRole("button", { name: "Snap to grid" }).getAttribute("aria-pressed"), "true");
    await clearSent(page);
    await page.keyboard.press("ArrowLeft");
    ops = await waitForOps(page, 1);
    const snapped = movedTo(ops[0])[first];
    assert.equal(snapped.x % 16, 0);
    assert.equal(snapped.x < moved.position.x, true);
    await page.keyboard.press("Shift+S");
    assert.equal(await page.getByRole("button", { name: "Snap to grid" }).getAttribute("aria-pressed"), "false");

    // Delete removes the selection.
    await clearSent(page);
    await page.keyboard.press("Delete");
    ops = await waitForOps(page, 1);
    assert.deepEqual(ops, [{ op: "removeNode", id: first }]);
    await clearSent(page);
    await press(page, "0"); // the whole flow in view: the label clicked next is in it
    await page.getByTestId("edge-label-i3-e1").click(); // the chain's one label: its first edge
    await page.keyboard.press("Backspace");
    assert.deepEqual(await waitForOps(page, 1), [{ op: "removeEdge", edgeId: "i3-e1" }]);

    // Undo and redo go to the document (the host runs the workbench's undo/redo).
    await clearSent(page);
    await page.keyboard.press("Control+z");
    await page.keyboard.press("Control+Shift+z");
    await page.keyboard.press("Control+y");
    await waitForSent(page, (m) => m.type === "redo" && true);
    assert.deepEqual((await sent(page)).map((m) => m.type), ["undo", "redo", "redo"]);

    // Typing in the inspector is not taken for shortcuts.
    await node(page, "coder").click();
    await clearSent(page);
    await inspector.getByLabel("Role").fill("co-der+1");
    assert.deepEqual(await edits(page), []);
    await page.close();
  });

  test("Space+drag pans the canvas, even over a node, and moves nothing", async () => {
    const page = await open();
    // zoomed out below the readable zoom, Fit shows every node in view, none under a panel
    for (let i = 0; i < 3; i++) await page.keyboard.press("-");
    await page.keyboard.press("0");
    await page.waitForTimeout(50);
    const before = await viewport(page);
    const box = (await node(page, "judge").boundingBox())!;
    await clearSent(page);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.keyboard.down("Space");
    await page.mouse.down();
    await drag(page, box.x + box.width / 2, box.y + box.height / 2, 60, 40);
    await page.mouse.up();
    await page.keyboard.up("Space");
    const after = await viewport(page);
    assert.equal(Math.round(after.x - before.x), 60);
    assert.equal(Math.round(after.y - before.y), 40);
    await page.waitForTimeout(50);
    assert.deepEqual(await edits(page), []);
    // A plain drag of a node moves it: one moveNode.
    const b2 = (await node(page, "coder").boundingBox())!;
    await page.mouse.move(b2.x + 20, b2.y + 10);
    await page.mouse.down();
    await drag(page, b2.x + 20, b2.y + 10, 100, 50);
    await page.mouse.up();
    const ops = await waitForOps(page, 1);
    assert.equal(ops.length, 1);
    assert.ok(movedTo(ops[0]).coder, "coder moved");
    await page.close();
  });

  test("viewport and selection come back after a reload", async () => {
    const page = await open();
    await node(page, "w1").click(); // in view: the flow opens on its first interaction
    await page.keyboard.press("1");
    await page.keyboard.press("-");
    await page.waitForTimeout(50);
    const vp = await viewport(page);
    await page.reload();
    await waitForSent(page, (m) => m.type === "ready");
    await showFlow(page, all, patterns);
    assert.equal(await page.getByTestId("inspector").locator("h2").textContent(), "Agent w1");
    assert.match((await node(page, "w1").getAttribute("class"))!, /selected/);
    const again = await viewport(page);
    assert.equal(again.zoom.toFixed(3), vp.zoom.toFixed(3));
    assert.equal(Math.round(again.x), Math.round(vp.x));
    await page.close();
  });

  test("run events highlight active agents and edges: a halo under the line, the round the engine counts on the interaction's label", async () => {
    const page = await open();
    const t0 = Date.now();
    const ev = (e: Record<string, unknown>) => hostPost(page, { type: "runEvent", event: { runId: "r1", ...e } as never });
    await ev({ ts: t0, interactionId: "i5", event: "configured" });
    await ev({ ts: t0 + 10, interactionId: "i5", edgeId: "i5-e1", event: "agent_started", agent: "debater_a", round: 0 });
    await ev({ ts: t0 + 20, interactionId: "i5", edgeId: "i5-e1", event: "step", step: 1, round: 0, from: "debater_a", to: "judge" });
    await ev({ ts: t0 + 30, interactionId: "i5", edgeId: "i5-e1", event: "step", step: 2, round: 0, from: "debater_a", to: "judge" });
    const label = page.getByTestId("edge-label-i5-e1");
    await page.waitForFunction(() => document.querySelector('[data-testid="edge-label-i5-e1"] .ac-edge-counters') !== null);
    assert.match((await label.locator(".ac-edge-counters").textContent())!, /^round 1\/3 · (10:00|9:5\d) left · 2\/min$/);
    assert.match((await node(page, "debater_a").locator(".ac-node").getAttribute("class"))!, /run-active/);
    assert.match((await label.getAttribute("class"))!, /run-active/);
    // the line keeps its interaction's look; the run is a halo under it
    const halo = page.locator('.react-flow__edge[data-id="i5-e1"] .ac-edge-halo');
    assert.match((await halo.getAttribute("class"))!, /run-running run-active/);
    const look = await page.locator('.react-flow__edge[data-id="i5-e1"] .react-flow__edge-path').evaluate((p) => getComputedStyle(p).strokeDasharray);
    assert.equal(look, "none");
    await screenshot(page, "run-overlay");
    await ev({ ts: t0 + 40, event: "run_finished" });
    await page.waitForFunction(() => !document.querySelector('.react-flow__node[data-id="debater_a"] .ac-node')!.classList.contains("run-active"));
    assert.equal(await label.locator(".ac-edge-counters").textContent(), "round 1/3 · done");
    await page.close();
  });

  test("a proposal_conflict marks both agents with a conflict badge naming the other worker", async () => {
    const page = await open();
    const ev = (e: Record<string, unknown>) => hostPost(page, { type: "runEvent", event: { runId: "r1", ts: Date.now(), ...e } as never });
    await ev({ event: "agent_started", agentId: "coder" });
    await ev({ event: "proposal_conflict", agentId: "tester", otherAgentId: "coder", otherRunId: "r1", path: "src/a.ts" });
    const badge = (id: string) => node(page, id).getByTestId("conflict-badge");
    await badge("coder").waitFor();
    assert.equal(await badge("coder").getAttribute("title"), "its proposal conflicts with tester · src/a.ts");
    assert.equal(await badge("tester").getAttribute("title"), "its proposal conflicts with coder · src/a.ts");
    assert.equal(await badge("judge").count(), 0);
    await screenshot(page, "run-overlay-conflict");
    await page.close();
  });

  test("an agent's Last turn and Fork links appear once its first turn ends, and ask the host for its transcript of the run, or a fork of it", async () => {
    const page = await open();
    // client and assistant: cards in view as the flow opens, so a click lands where it aims
    const ev = (e: Record<string, unknown>) => hostPost(page, { type: "runEvent", event: { runId: "r7", ts: Date.now(), ...e } as never });
    const link = (id: string) => node(page, id).getByRole("button", { name: `Last turn of ${id}: open its transcript` });
    await ev({ event: "agent_started", agent: "client" });
    await node(page, "client").getByTestId("run-client").waitFor();
    assert.equal(await link("client").count(), 0, "no link while the first turn runs");
    await ev({ event: "agent_finished", agent: "client", status: "completed" });
    await link("client").waitFor();
    assert.equal(await link("assistant").count(), 0, "an agent that has not run has none");
    // a second turn under way keeps the link: the transcript has the turns finished so far
    await ev({ event: "agent_started", agent: "client" });
    await ev({ event: "agent_started", agent: "assistant" });
    await node(page, "assistant").getByTestId("run-assistant").waitFor();
    assert.equal(await link("client").count(), 1);
    assert.equal(await link("assistant").count(), 0);
    await clearSent(page);
    await link("client").click();
    assert.deepEqual(await waitForSent(page, (m) => m.type === "showTranscript"), { type: "showTranscript", runId: "r7", agentId: "client" });
    assert.equal((await sent(page)).filter((m) => m.type === "edit").length, 0, "the click moves nothing");
    // keyboard: Tab goes from the focused card to its link, Enter opens it; a failed turn links too
    await ev({ event: "agent_finished", agent: "assistant", status: "failed", error: "exit status 2" });
    await link("assistant").waitFor();
    await clearSent(page);
    await node(page, "assistant").click({ position: { x: 10, y: 10 } });
    await page.waitForFunction(() => document.activeElement?.getAttribute("data-id") === "assistant");
    await press(page, "Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-label")), "Last turn of assistant: open its transcript");
    await page.keyboard.press("Enter");
    assert.deepEqual(await waitForSent(page, (m) => m.type === "showTranscript"), { type: "showTranscript", runId: "r7", agentId: "assistant" });
    await press(page, "Shift+Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-id")), "assistant", "Shift+Tab: back to its card");
    await press(page, "Tab");
    await press(page, "Tab"); // from Last turn to Fork from a turn, whose Enter asks the host to fork
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-label")), "Fork from a turn of assistant: a new run from the end of that turn");
    await clearSent(page);
    await page.keyboard.press("Enter");
    assert.deepEqual(await waitForSent(page, (m) => m.type === "forkRun"), { type: "forkRun", runId: "r7", agentId: "assistant" });
    await press(page, "Shift+Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-label")), "Last turn of assistant: open its transcript", "Shift+Tab: back to Last turn");
    await press(page, "Tab");
    await press(page, "Tab");
    await page.waitForFunction(() => !!document.activeElement?.getAttribute("data-id") && document.activeElement.getAttribute("data-id") !== "assistant");
    await link("assistant").focus();
    const b = (await node(page, "client").boundingBox())!;
    await page.screenshot({ path: join(ARTEFACTS, "run-overlay-last-turn.png"), clip: { x: Math.max(0, b.x - 20), y: Math.max(0, b.y - 20), width: 560, height: b.height + 40 } });
    // a new run starts afresh: no link until its own first turn ends
    await hostPost(page, { type: "runEvent", event: { runId: "r8", ts: Date.now(), event: "agent_started", agent: "planner" } as never });
    await node(page, "planner").getByTestId("run-planner").waitFor();
    assert.equal(await link("client").count(), 0);
    await noProblems(page);
    await page.close();
  });

  test("an agent's card shows what it spent as metered calls arrive mid-turn, beside an unclipped state", async () => {
    const page = await open();
    const ev = (e: Record<string, unknown>) => hostPost(page, { type: "runEvent", event: { runId: "r9", ts: Date.now(), ...e } as never });
    const spend = (id: string) => node(page, id).getByTestId(`spend-${id}`);
    await ev({ event: "agent_started", agent: "client" });
    await node(page, "client").getByTestId("run-client").waitFor();
    assert.equal(await spend("client").count(), 0, "nothing before a spend event");
    await ev({ event: "spend", interactionId: "i1", agent: "client", midTurn: true, callTokens: 11_800, callCostUsd: 0.5 });
    await ev({ event: "spend", interactionId: "i1", agent: "client", midTurn: true, callTokens: 500, callCostUsd: 0.73 });
    await page.waitForFunction(() => document.querySelector('[data-testid="spend-client"]')?.textContent === "12.3k tokens · $1.23");
    assert.match((await node(page, "client").getByTestId("run-client").textContent())!, /running/, "still running: it is mid-turn");
    // neither line is cut off on the card
    const clipped = await page.evaluate(() =>
      ['.react-flow__node[data-id="client"] .ac-run-state', '[data-testid="spend-client"]'].map((q) => {
        const el = document.querySelector(q) as HTMLElement;
        return el.scrollWidth > el.clientWidth;
      }),
    );
    assert.deepEqual(clipped, [false, false]);
    // its finished turn's report repeats the metered calls: not counted again
    await ev({ event: "agent_finished", agent: "client", status: "completed" });
    await ev({ event: "spend", interactionId: "i1", agent: "client", gateway: true, tokens: 12_300, costUsd: 1.23 });
    await node(page, "client").getByRole("button", { name: "Last turn of client: open its transcript" }).waitFor();
    assert.equal(await spend("client").textContent(), "12.3k tokens · $1.23");
    await ev({ event: "spend", interactionId: "i1", agent: "assistant", unreported: true });
    await page.waitForFunction(() => document.querySelector('[data-testid="spend-assistant"]')?.textContent === "spend unknown");
    const b = (await node(page, "client").boundingBox())!;
    await page.screenshot({ path: join(ARTEFACTS, "run-overlay-agent-spend.png"), clip: { x: Math.max(0, b.x - 20), y: Math.max(0, b.y - 20), width: 560, height: b.height + 40 } });
    await noProblems(page);
    await page.close();
  });

  test("after a reload an agent's card shows what it spent from the run's checkpoint; the resumed run's events replace it", async () => {
    const page = await open();
    const spend = (id: string) => node(page, id).getByTestId(`spend-${id}`);
    await hostPost(page, { type: "runSpend", runId: "r10", agents: { client: { tokens: 12_300, costUsd: 1.23, costKnown: true, unreported: false, metered: true, reports: 2 } } });
    await page.waitForFunction(() => document.querySelector('[data-testid="spend-client"]')?.textContent === "12.3k tokens · $1.23");
    assert.equal(await spend("assistant").count(), 0, "an agent the checkpoint has nothing of");
    const ev = (e: Record<string, unknown>) => hostPost(page, { type: "runEvent", event: { runId: "r10", ts: Date.now(), ...e } as never });
    await ev({ event: "spend", interactionId: "i1", agent: "client", midTurn: true, callTokens: 700, callCostUsd: 0.07, agentTotal: { tokens: 13_000, costUsd: 1.3, costKnown: true, metered: true, reports: 3 } });
    await page.waitForFunction(() => document.querySelector('[data-testid="spend-client"]')?.textContent === "13k tokens · $1.30");
    await noProblems(page);
    await page.close();
  });

  for (const theme of Object.keys(THEMES)) {
    test(`theme ${theme}: colours come from the VS Code variables`, async () => {
      const page = await open(theme);
      // the flow opens on its first interaction, coder beside the pane: Fit first, so that the
      // click selects coder and does not land on the inspector (as the inspector test does)
      await press(page, "0");
      await page.evaluate(settled);
      await node(page, "coder").click();
      const vars = THEMES[theme].vars;
      const rgb = (hex: string) => {
        const n = parseInt(hex.slice(1, 7), 16);
        return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
      };
      const style = await page.evaluate(() => {
        const n = document.querySelector('.react-flow__node[data-id="judge"] .ac-node')!;
        const body = document.querySelector(".react-flow")!;
        const sel = document.querySelector('.react-flow__node[data-id="coder"] .ac-node')!;
        return {
          nodeBg: getComputedStyle(n).backgroundColor,
          canvasBg: getComputedStyle(body).backgroundColor,
          text: getComputedStyle(n).color,
          selectedBorder: getComputedStyle(sel).borderTopColor,
        };
      });
      assert.equal(style.nodeBg, rgb(vars["editorWidget-background"]));
      assert.equal(style.canvasBg, rgb(vars["editor-background"]));
      assert.equal(style.text, rgb(vars["editorWidget-foreground"]));
      assert.equal(style.selectedBorder, rgb(theme === "high-contrast" ? vars.contrastActiveBorder : vars.focusBorder));
      await screenshot(page, `theme-${theme}`);
      await page.close();
    });
  }
});

export type { LoadFlowResult };
