// Browser tests of drawing edges and of the minimap, on the built bundle with a mocked host:
// each drives the canvas as a person would and asserts the operations sent and the DOM.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import type { FlowModel, FlowOp, PatternInfo } from "../../../src/canvas/protocol";
import { planConnect } from "../../src/connect";
import { clearSent, docsImage, edits, fixture, hostPost, noProblems, openCanvas, screenshot, showFlow, THEMES, useBrowser, waitForOps } from "./harness";

const connect = fixture("connect.json");
const patterns = fixture<PatternInfo[]>("patterns.json");
const flow = connect.flow!;

const browser = useBrowser();

async function open(o: { width?: number; theme?: keyof typeof THEMES } = {}): Promise<Page> {
  const page = await openCanvas(browser(), { width: o.width ?? 1400, theme: o.theme });
  await showFlow(page, connect, patterns);
  await frames(page); // the first fit: every node in view
  return page;
}

async function frames(page: Page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

const node = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
const handle = (page: Page, id: string, type: "source" | "target") => node(page, id).locator(`.react-flow__handle.${type}`);

async function center(page: Page, sel: ReturnType<typeof node>) {
  const b = (await sel.boundingBox())!;
  return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
}

/**
 * edgeEnd is where an edge's end can be grabbed to reconnect it: React Flow's anchor lies just
 * outside the handle it ends on (left of a target handle, right of a source handle).
 */
async function edgeEnd(page: Page, id: string, type: "source" | "target") {
  const b = (await handle(page, id, type).boundingBox())!;
  return { x: type === "target" ? b.x - 8 : b.x + b.width + 8, y: b.y + b.height / 2 };
}

/** dragTo drags with the mouse from one point to another in small steps, as a hand does. */
async function dragTo(page: Page, from: { x: number; y: number }, to: { x: number; y: number }) {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  for (let i = 1; i <= 12; i++) {
    await page.mouse.move(from.x + ((to.x - from.x) * i) / 12, from.y + ((to.y - from.y) * i) / 12);
    await page.waitForTimeout(16);
  }
  await page.mouse.up();
}

/** connectByDrag drags from source's right handle to target (its handle, or its body). */
async function connectByDrag(page: Page, source: string, target: string, onto: "handle" | "body" = "handle") {
  const to = onto === "handle" ? await center(page, handle(page, target, "target")) : await center(page, node(page, target));
  await dragTo(page, await center(page, handle(page, source, "source")), to);
}

/** notice is the warning banner's text, once it shows. */
async function notice(page: Page): Promise<string> {
  const banner = page.locator(".ac-banner-warning");
  await banner.waitFor();
  return (await banner.textContent())!.replace(/×$/, "");
}

/** withNewInteraction is the model the host would send back after an addInteraction. */
function withNewInteraction(op: Extract<FlowOp, { op: "addInteraction" }>): FlowModel {
  const next: FlowModel = structuredClone(flow);
  const n = next.interactions!.length;
  const id = `i${n + 1}`;
  next.interactions!.push({
    id,
    patternId: op.interaction.patternId,
    path: `/interactions/${n}`,
    edges: op.interaction.edges.map((e, i) => ({ id: `${id}-e${i + 1}`, source: e.source, target: e.target, data: e.data ?? {}, path: `/interactions/${n}/edges/${i}` })),
  });
  return next;
}

describe("drawing edges", { concurrency: false }, () => {
  test("a drag between two unconnected nodes asks for a pattern and creates the interaction", async () => {
    const page = await open();
    await clearSent(page);
    await connectByDrag(page, "writer", "reviewer");
    const picker = page.getByRole("dialog", { name: "New interaction writer → reviewer" });
    await picker.waitFor();
    // Focus is in the search box; the list shows the 20 patterns, then narrows.
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-label")), "Search patterns for the new interaction");
    assert.equal(await picker.getByRole("option").count(), 20);
    await page.keyboard.type("judge");
    const shown = await picker.getByRole("option").evaluateAll((os) => os.map((o) => (o as HTMLElement).dataset.pattern));
    assert.ok(shown.includes("debate_judge") && shown.length < 20, shown.join());
    await docsImage(page, "canvas-connect");
    // The arrow keys move the active option; Enter picks it.
    const first = shown[0];
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowUp");
    assert.equal(await picker.locator('[role="option"][aria-selected="true"]').getAttribute("data-pattern"), first);
    await picker.locator('[role="option"][data-pattern="debate_judge"]').click();
    await picker.waitFor({ state: "detached" });
    const ops = await waitForOps(page, 1);
    const dj = patterns.find((p) => p.patternId === "debate_judge")!;
    assert.deepEqual(ops, [
      {
        op: "addInteraction",
        interaction: {
          patternId: "debate_judge",
          edges: [{ source: "writer", target: "reviewer", data: { termination: dj.defaultTermination, params: dj.defaultParams } }],
        },
      },
    ]);
    // The model comes back with the new interaction: its edge is drawn and selected.
    await hostPost(page, { type: "flow", version: 2, flow: withNewInteraction(ops[0] as Extract<FlowOp, { op: "addInteraction" }>), diagnostics: [] });
    await page.getByTestId("edge-label-i3-e1").waitFor();
    assert.equal(await page.getByTestId("edge-label-i3-e1").locator(".ac-edge-text").textContent(), "debate_judge (3r)");
    await page.waitForFunction(() => document.querySelector('[data-testid="inspector"] h2')?.textContent === "Edge i3-e1");
    assert.match((await page.locator('.react-flow__edge[data-id="i3-e1"]').getAttribute("class"))!, /selected/);
    await screenshot(page, "connect-new-interaction");
    await noProblems(page);
    await page.close();
  });

  test("a drag from a node in one interaction adds the edge to it, dropped on the node's body", async () => {
    const page = await open();
    await clearSent(page);
    await connectByDrag(page, "lead", "w2", "body");
    // What the webview sends is what connect.ts plans (its content is unit-tested): i1's addEdge.
    const plan = planConnect(flow, patterns, "lead", "w2");
    assert.equal(plan.kind === "ops" && plan.ops[0].op === "addEdge" && plan.ops[0].interactionId, "i1");
    assert.deepEqual(await waitForOps(page, 1), plan.kind === "ops" ? plan.ops : []);
    assert.equal(await page.getByRole("dialog").count(), 0);
    // With an edge of i1 selected, a drag between two other nodes joins i1 too.
    await page.getByTestId("edge-label-i1-e1").click();
    await clearSent(page);
    await connectByDrag(page, "writer", "reviewer");
    const [op] = await waitForOps(page, 1);
    assert.equal(op.op === "addEdge" && `${op.interactionId} ${op.edge.source}→${op.edge.target}`, "i1 writer→reviewer");
    await noProblems(page);
    await page.close();
  });

  test("a self-loop and a duplicate are refused with a visible message, and nothing is sent", async () => {
    const page = await open();
    await clearSent(page);
    await connectByDrag(page, "lead", "lead");
    assert.equal(await notice(page), "An edge joins two different nodes; lead cannot be connected to itself.");
    assert.equal(await page.locator('.ac-banner-warning[role="alert"]').count(), 1);
    await screenshot(page, "connect-self-loop");
    await page.getByRole("button", { name: "Dismiss" }).click();
    await connectByDrag(page, "lead", "w1", "body");
    assert.equal(await notice(page), "Interaction i1 (manager_worker) already has an edge lead → w1.");
    assert.deepEqual(await edits(page), []);
    assert.equal(await page.getByRole("dialog").count(), 0);
    await noProblems(page);
    await page.close();
  });

  test("Escape cancels the picker: no op, focus back on the canvas", async () => {
    const page = await open();
    await clearSent(page);
    // user's only interaction is a full role_play_pair, so w2 needs a new interaction.
    await connectByDrag(page, "user", "w2");
    const picker = page.getByRole("dialog", { name: "New interaction user → w2" });
    await picker.waitFor();
    // The active pattern's summary shows; Tab stays inside the dialog (search box, Cancel).
    assert.equal(await picker.locator(".ac-picker-summary").textContent(), patterns[0].summary);
    const inDialog = () => page.evaluate(() => !!document.activeElement?.closest('[role="dialog"]'));
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Cancel");
    await page.keyboard.press("Tab");
    assert.equal(await inDialog(), true);
    await page.keyboard.press("Shift+Tab");
    assert.equal(await inDialog(), true);
    await page.keyboard.press("Escape");
    await picker.waitFor({ state: "detached" });
    assert.deepEqual(await edits(page), []);
    // focus goes back in the frame after the picker closes: wait for it, not for a time
    await page.waitForFunction(() => !!document.activeElement?.closest(".react-flow"));
    await page.close();
  });

  test("dragging an edge's end onto another node reconnects it", async () => {
    const page = await open();
    await clearSent(page);
    // The target end of lead → w1, onto w2's handle.
    const end = await edgeEnd(page, "w1", "target");
    await dragTo(page, end, await center(page, handle(page, "w2", "target")));
    assert.deepEqual(await waitForOps(page, 1), [{ op: "set", path: "/interactions/0/edges/0/target", value: "w2" }]);
    assert.equal(await page.getByRole("dialog").count(), 0);
    // Its source end onto writer's body.
    await clearSent(page);
    await dragTo(page, await edgeEnd(page, "lead", "source"), await center(page, node(page, "writer")));
    assert.deepEqual(await waitForOps(page, 1), [{ op: "set", path: "/interactions/0/edges/0/source", value: "writer" }]);
    // Onto the node at its other end: a self-loop, refused.
    await clearSent(page);
    await dragTo(page, end, await center(page, node(page, "lead")));
    assert.equal(await notice(page), "An edge joins two different nodes; lead cannot be connected to itself.");
    assert.deepEqual(await edits(page), []);
    await noProblems(page);
    await page.close();
  });

  test("keyboard: the inspector connects the selected node, and reconnects an edge", async () => {
    const page = await open();
    const inspector = page.getByTestId("inspector");
    // Tab to writer (nodes in file order: lead, w1, w2, writer).
    for (let i = 0; i < 4; i++) await page.keyboard.press("Tab");
    assert.equal(await inspector.locator("h2").textContent(), "Agent writer");
    await clearSent(page);
    await inspector.getByLabel("Connect to…").selectOption("reviewer");
    await inspector.getByRole("button", { name: "Connect writer to reviewer" }).focus();
    await page.keyboard.press("Enter");
    const picker = page.getByRole("dialog", { name: "New interaction writer → reviewer" });
    await picker.waitFor();
    await page.keyboard.type("vote");
    await page.keyboard.press("Enter");
    await picker.waitFor({ state: "detached" });
    const [op] = await waitForOps(page, 1);
    assert.equal(op.op === "addInteraction" && op.interaction.patternId, "majority_vote");
    // Focus went back to the Connect button.
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-label")), "Connect writer to reviewer");

    // lead: its interaction, or a new one when asked.
    await node(page, "lead").click();
    await clearSent(page);
    await inspector.getByLabel("Connect to…").selectOption("w2");
    await inspector.getByLabel("Into").selectOption("new");
    await inspector.getByRole("button", { name: "Connect lead to w2" }).click();
    await page.getByRole("dialog", { name: "New interaction lead → w2" }).waitFor();
    // The picker offers i1 too.
    await page.getByRole("button", { name: "Add the edge to interaction i1 (manager_worker)" }).click();
    const [add] = await waitForOps(page, 1);
    assert.equal(add.op === "addEdge" && add.interactionId, "i1");

    // An edge's ends are selects: changing one reconnects it.
    await page.getByTestId("edge-label-i1-e1").click();
    await clearSent(page);
    await inspector.getByLabel("To", { exact: true }).selectOption("judge");
    assert.deepEqual(await waitForOps(page, 1), [{ op: "set", path: "/interactions/0/edges/0/target", value: "judge" }]);
    await clearSent(page);
    await inspector.getByLabel("From", { exact: true }).selectOption("w1");
    assert.equal(await notice(page), "An edge joins two different nodes; w1 cannot be connected to itself.");
    assert.deepEqual(await edits(page), []);
    await screenshot(page, "connect-inspector");
    await noProblems(page);
    await page.close();
  });
});

describe("minimap", { concurrency: false }, () => {
  test("on in a wide editor, off in a narrow one; the button and M toggle it, and the choice is kept", async () => {
    const narrow = await open({ width: 800 });
    assert.equal(await narrow.locator(".react-flow__minimap").count(), 0);
    const button = narrow.getByRole("button", { name: /^Minimap/ });
    assert.equal(await button.getAttribute("aria-pressed"), "false");
    await button.click();
    await narrow.locator(".react-flow__minimap").waitFor();
    assert.equal(await button.getAttribute("aria-pressed"), "true");
    await screenshot(narrow, "minimap-narrow");
    await narrow.reload();
    await showFlow(narrow, connect, patterns);
    await narrow.locator(".react-flow__minimap").waitFor(); // remembered
    await narrow.close();

    const page = await open();
    const map = page.locator(".react-flow__minimap");
    await map.waitFor();
    assert.equal(await map.locator("title").textContent(), "Minimap of the flow");
    assert.equal(await map.locator(".react-flow__minimap-node").count(), flow.agents!.length + flow.systemNodes!.length);
    assert.equal(await map.locator(".react-flow__minimap-node.ac-mini-system").count(), 1);
    await page.keyboard.press("m");
    await map.waitFor({ state: "detached" });
    await page.keyboard.press("m");
    await map.waitFor();
    await noProblems(page);
    await page.close();
  });

  for (const theme of Object.keys(THEMES)) {
    test(`theme ${theme}: the minimap's colours come from the VS Code variables`, async () => {
      const page = await open({ theme });
      const vars = THEMES[theme].vars;
      const rgb = (hex: string) => {
        const n = parseInt(hex.slice(1, 7), 16);
        return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
      };
      await page.locator(".react-flow__minimap").waitFor();
      const got = await page.evaluate(() => {
        const style = (sel: string) => getComputedStyle(document.querySelector(sel)!);
        return {
          background: style(".react-flow__minimap").backgroundColor,
          agent: style('.react-flow__minimap-node:not(.ac-mini-system)').fill,
          system: style(".react-flow__minimap-node.ac-mini-system").fill,
          mask: style(".react-flow__minimap-mask").stroke,
        };
      });
      assert.deepEqual(got, {
        background: rgb(vars["minimap-background"]),
        agent: rgb(vars["editorLineNumber-foreground"]),
        system: rgb(vars["charts-purple"]),
        mask: rgb(vars.focusBorder),
      });
      await screenshot(page, `minimap-${theme}`);
      await page.close();
    });
  }
});
