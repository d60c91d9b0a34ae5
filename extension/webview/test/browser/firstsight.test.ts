// Browser tests of the canvas at first sight: a flow without positions opens laid out by roles,
// its labels readable (checked from the DOM, as the e2e test does in code-server), the toolbar in
// codicons and the theme's colours, each interaction in its colour with a legend, and the run
// overlay's states readable in light, dark and high-contrast themes.
// DOCS_IMAGES=1 also writes the README's screenshots to docs/images/ (see docsImage).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import type { FlowOp, LoadFlowResult, PatternInfo } from "../../../src/canvas/protocol";
import { LABEL_MIN_ZOOM } from "../../src/labels";
import { bigFlow } from "../shared/bigFlow";
import { readability, settled as settledInPage, type Readability } from "../shared/readability.mjs";
import { fans } from "./measure";
import { clearSent, docsImage, edits, fixture, hostPost, noProblems, openCanvas, showFlow, THEMES, useBrowser, viewport, waitForOps } from "./harness";

const firstSight = fixture("first-sight.json");
const team20 = fixture("team-20.json");
const all = fixture("all-patterns.json");
const patterns = fixture<PatternInfo[]>("patterns.json");

const browser = useBrowser();

/** settled waits until the labels and nodes stop moving (measuring and placing take a few frames). */
async function settled(page: Page): Promise<void> {
  await page.evaluate(settledInPage);
}

async function open(r: LoadFlowResult, o: { theme?: keyof typeof THEMES; width?: number; height?: number } = {}): Promise<Page> {
  const page = await openCanvas(browser(), { width: 1280, height: 800, ...o });
  await showFlow(page, r, patterns);
  await page.locator(".ac-edge-label").nth(labelCount(r) - 1).waitFor();
  await settled(page);
  return page;
}

/** zoomOutPast presses - until the zoom is below zoom, as a person zooming out would. */
async function zoomOutPast(page: Page, zoom: number): Promise<void> {
  while ((await viewport(page)).zoom >= zoom) await page.keyboard.press("-");
}

/** labelCount is how many labels a flow's edges have: one per fan (measure.ts). */
function labelCount(r: LoadFlowResult): number {
  return fans(r).size;
}

async function read(page: Page): Promise<Readability> {
  return page.evaluate(readability);
}

/**
 * inView keeps the problems of the labels a person sees: a flow larger than the view opens at the
 * readable zoom on its entry, so labels further on are out of view (cut by the canvas's edge) or
 * under the toolbar, the legend or the minimap, which float over the canvas.
 */
const inView = (r: Readability) => r.problems.filter((p) => !p.includes("cut by the canvas's edge") && !/covered at .* by \S*(ac-legend|ac-tool|codicon|minimap)/.test(p));

const byId = (r: Readability, id: string) => r.nodes.find((n) => n.id === id)!;

describe("the canvas at first sight", { concurrency: false }, () => {
  for (const theme of ["dark", "light"] as const) {
    test(`${theme}: a three-agent flow without positions opens laid out by roles, every label readable`, async () => {
      const page = await open(firstSight, { theme });
      const r = await read(page);
      assert.deepEqual(r.problems, []);
      assert.equal(r.labels.length, 2);
      const [planner, coder, reviewer] = ["planner", "coder", "reviewer"].map((id) => byId(r, id));
      // the orchestrator first (left), its workers after it, one above the other
      assert.ok(planner.x + planner.width < coder.x && planner.x + planner.width < reviewer.x, JSON.stringify(r.nodes));
      assert.equal(Math.round(coder.x), Math.round(reviewer.x));
      // every label whole: the issue saw "ger_worker"
      assert.deepEqual(r.labels.map((l) => l.text).sort(), ["manager_worker (2r)", "manager_worker (3r)"]);
      // edges leave the planner's right side and enter the workers' left sides
      const ends = await page.evaluate(() =>
        [...document.querySelectorAll<SVGPathElement>(".react-flow__edge-path")].map((p) => {
          const len = p.getTotalLength();
          const m = p.getScreenCTM()!;
          const at = (d: number) => new DOMPoint(p.getPointAtLength(d).x, p.getPointAtLength(d).y).matrixTransform(m);
          return { start: at(0), end: at(len) };
        }),
      );
      for (const e of ends) {
        assert.ok(Math.abs(e.start.x - (planner.x + planner.width)) < 2, `starts on the planner's right side: ${JSON.stringify(e)}`);
        assert.ok(Math.abs(e.end.x - coder.x) < 2, `ends on a worker's left side: ${JSON.stringify(e)}`);
      }
      // opening edits nothing: the positions are the layout's until the person moves something
      assert.deepEqual(await edits(page), []);
      await docsImage(page, `canvas-first-sight-${theme}`);
      await noProblems(page);
      await page.close();
    });

    test(`${theme}: a 20-agent flow opens laid out, parallel edges fanned, every label readable`, async () => {
      const page = await open(team20, { theme, width: 1400, height: 900 });
      const r = await read(page);
      assert.deepEqual(inView(r), []);
      assert.equal(r.labels.length, labelCount(team20));
      const x = (id: string) => byId(r, id).x;
      assert.ok(x("lead") < x("fe_lead") && x("fe_lead") < x("fe1") && x("be_lead") < x("be3"), "orchestrator, sub-managers, workers");
      assert.ok(x("arch_a") < x("judge") && x("arch_b") < x("judge"), "debaters before their judge");
      // the two edges of one interaction between fe_lead and be_lead share one label
      const contract = r.labels.filter((l) => l.id.startsWith("contract-"));
      assert.equal(contract.length, 1);
      await docsImage(page, `canvas-team-${theme}`);
      await noProblems(page);
      await page.close();
    });
  }

  test("the 20-pattern flow (saved and new positions mixed): readable at first sight and at 100%; a long label wraps between its words, never cut", async () => {
    const page = await open(all, { width: 1400, height: 900 });
    assert.deepEqual(inView(await read(page)), []);
    const label = page.getByTestId("edge-label-i17-e1");
    const words = (await label.locator(".ac-edge-ix, .ac-edge-text").allTextContents()).join(" ").split(/\s+/);
    assert.deepEqual(words.filter((w) => !["i17", "fact_check_verifier", "(citations_count>=3)"].includes(w)), [], `no word cut: ${words}`);
    assert.doesNotMatch((await label.textContent())!, /…/);
    assert.equal((await label.getAttribute("title"))!.split("\n")[0], "i17: fact_check_verifier (citations_count>=3)");
    // at 100% (the view around the first nodes): the labels in view are readable too
    await page.keyboard.press("1");
    await settled(page);
    const r = await read(page);
    assert.deepEqual(inView(r), []);
    await noProblems(page);
    await page.close();
  });

  test("a big flow zoomed out draws its edges without labels (too small to read); zoomed in, the labels in view are readable", async () => {
    const flow = bigFlow(false, 200, 400);
    const page = await openCanvas(browser(), { width: 1400, height: 900 });
    await showFlow(page, { flow, diagnostics: [] }, patterns);
    await page.locator(".react-flow__edge").first().waitFor();
    await settled(page);
    // it opens at the readable zoom on its entry, labels drawn; zoomed out by the person, none
    assert.ok((await viewport(page)).zoom > LABEL_MIN_ZOOM);
    await page.locator(".ac-edge-label").first().waitFor();
    await zoomOutPast(page, LABEL_MIN_ZOOM);
    await page.keyboard.press("0");
    await settled(page);
    const fitted = (await viewport(page)).zoom;
    assert.ok(fitted < LABEL_MIN_ZOOM, `fitted at zoom ${fitted}`);
    assert.ok((await page.locator(".react-flow__edge").count()) > 0);
    assert.equal(await page.locator(".ac-edge-label").count(), 0);
    // at 100% (the view around the first nodes) the labels are drawn, clear of the nodes and of each other
    await page.keyboard.press("1");
    await page.locator(".ac-edge-label").first().waitFor();
    await settled(page);
    const r = await read(page);
    assert.ok(r.labels.length > 0);
    assert.deepEqual(r.problems.filter((p) => !p.includes("cut by the canvas's edge")), []);
    // only the edges in view are drawn, each with its label
    const drawnEdges = await page.locator(".react-flow__edge").count();
    assert.ok(drawnEdges < 400, `${drawnEdges} edges drawn`);
    assert.equal(await page.locator(".ac-edge-label").count(), drawnEdges);
    // and back out: gone again
    await zoomOutPast(page, LABEL_MIN_ZOOM);
    await page.locator(".ac-edge-label").first().waitFor({ state: "detached" });
    await noProblems(page);
    await page.close();
  });

  test("the first move writes every position the layout chose, so nothing else shifts", async () => {
    const page = await open(firstSight);
    const before = await read(page);
    const box = (await page.locator('.react-flow__node[data-id="coder"]').boundingBox())!;
    await clearSent(page);
    await page.mouse.move(box.x + 30, box.y + 10);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) await page.mouse.move(box.x + 30 + i * 6, box.y + 10 + i * 4);
    await page.mouse.up();
    const [op] = (await waitForOps(page, 1)) as Array<Extract<FlowOp, { op: "setLayout" }>>;
    assert.equal(op.op, "setLayout");
    assert.deepEqual(Object.keys(op.positions).sort(), ["coder", "planner", "reviewer"]);
    // planner and reviewer where they are drawn (the same on screen, in flow units at zoom 1)
    const vp = await page.evaluate(() => new DOMMatrix(getComputedStyle(document.querySelector(".react-flow__viewport")!).transform));
    for (const id of ["planner", "reviewer"]) {
      const n = byId(before, id);
      const pane = (await page.locator(".react-flow").boundingBox())!;
      assert.deepEqual(op.positions[id], { x: Math.round((n.x - pane.x - vp.e) / vp.a), y: Math.round((n.y - pane.y - vp.f) / vp.a) }, id);
    }
    await page.close();
  });

  test("each interaction's edges in one colour, listed in the legend; a legend entry selects its edges", async () => {
    const page = await open(team20, { width: 1400, height: 900 });
    const colours = await page.evaluate(() => {
      const out: Record<string, string[]> = {};
      for (const p of document.querySelectorAll<SVGPathElement>(".react-flow__edge-path.ac-edge")) {
        const id = p.closest(".react-flow__edge")!.getAttribute("data-id")!;
        const ix = id.replace(/-e\d+$/, "");
        (out[ix] ??= []).push(getComputedStyle(p).stroke);
      }
      const legend: Record<string, string> = {};
      for (const b of document.querySelectorAll(".ac-legend-item")) legend[b.querySelector(".ac-legend-id")!.textContent!] = getComputedStyle(b.querySelector(".ac-legend-swatch line")!).stroke;
      return { edges: out, legend };
    });
    const ids = team20.flow!.interactions!.map((i) => i.id);
    assert.deepEqual(Object.keys(colours.legend), ids);
    for (const id of ids) {
      assert.equal(new Set(colours.edges[id]).size, 1, `${id}'s edges share one colour`);
      assert.equal(colours.edges[id][0], colours.legend[id], `${id}'s legend entry has its colour`);
    }
    // neighbours in the file differ
    for (let i = 1; i < ids.length; i++) assert.notEqual(colours.legend[ids[i]], colours.legend[ids[i - 1]]);
    await page.getByTestId("legend").getByRole("button", { name: /^contract/ }).click();
    await page.waitForFunction(() => document.querySelectorAll(".react-flow__edge.selected").length === 2);
    assert.equal(await page.getByTestId("inspector").locator("h2").textContent(), "2 selected");
    assert.equal(await page.getByTestId("legend").getByRole("button", { name: /^contract/ }).getAttribute("aria-pressed"), "true");
    // the Legend toggle hides it, and says so
    const toggle = page.getByRole("button", { name: "Legend" });
    assert.equal(await toggle.getAttribute("aria-pressed"), "true");
    await toggle.click();
    await page.getByTestId("legend").waitFor({ state: "detached" });
    assert.equal(await toggle.getAttribute("aria-pressed"), "false");
    await page.close();
  });

  test("Tidy lays the flow out in a Web Worker, says how far it has got, and sends one setLayout", async () => {
    const page = await open(team20, { width: 1400, height: 900 });
    // Each fraction the toolbar shows while Tidy runs, recorded as it appears (not sampled).
    await page.evaluate(() => {
      const w = window as unknown as { __busy: string[] };
      w.__busy = [];
      new MutationObserver(() => {
        const b = document.querySelector('[data-testid="busy"]');
        if (b) w.__busy.push(b.textContent ?? "");
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await clearSent(page);
    await page.getByRole("button", { name: "Tidy" }).click();
    const [op] = await waitForOps(page, 1);
    assert.equal(op.op, "setLayout");
    assert.equal(Object.keys((op as Extract<FlowOp, { op: "setLayout" }>).positions).length, team20.flow!.agents!.length + team20.flow!.systemNodes!.length);
    await page.getByTestId("busy").waitFor({ state: "detached" });
    const seen = await page.evaluate(() => (window as unknown as { __busy: string[] }).__busy);
    assert.ok(seen.length > 0 && seen.every((t) => /^Tidying… \d+%$/.test(t)), `progress shown: ${JSON.stringify(seen)}`);
    assert.ok(page.workers().length >= 1, "the layout ran in a worker");
    await settled(page);
    assert.deepEqual(inView(await read(page)), []);
    await noProblems(page);
    await page.close();
  });

  for (const theme of Object.keys(THEMES)) {
    test(`theme ${theme}: the toolbar in codicons and the theme's button and toggle colours`, async () => {
      const page = await open(firstSight, { theme });
      const vars = THEMES[theme].vars;
      const got = await page.evaluate(async () => {
        await document.fonts.ready;
        const tidy = [...document.querySelectorAll<HTMLElement>(".ac-tool")].find((b) => b.textContent === "Tidy")!;
        const toggle = document.querySelector<HTMLElement>('.ac-toggle[aria-label="Legend"]')!;
        const icon = tidy.querySelector(".codicon")!;
        return {
          font: document.fonts.check("16px codicon"),
          iconFamily: getComputedStyle(icon).fontFamily,
          glyph: getComputedStyle(icon, "::before").content,
          tidyBg: getComputedStyle(tidy).backgroundColor,
          tidyFg: getComputedStyle(tidy).color,
          toggleBg: getComputedStyle(toggle).backgroundColor,
          toggleBorder: getComputedStyle(toggle).borderTopColor,
          pressed: toggle.getAttribute("aria-pressed"),
        };
      });
      assert.equal(got.font, true, "the codicon font is loaded (from the webview's own origin)");
      assert.equal(got.iconFamily, "codicon");
      assert.notEqual(got.glyph, "none");
      assert.equal(got.tidyBg, rgb(vars["button-background"]));
      assert.equal(got.tidyFg, rgb(vars["button-foreground"]));
      assert.equal(got.pressed, "true");
      assert.equal(got.toggleBg, rgb(vars["inputOption-activeBackground"]));
      assert.equal(got.toggleBorder, rgb(vars["inputOption-activeBorder"]));
      await noProblems(page);
      await page.close();
    });

    test(`theme ${theme}: the run overlay's states (running, waiting for the user, failed, done) are readable`, async () => {
      const page = await open(team20, { theme, width: 1400, height: 900 });
      const ev = (e: Record<string, unknown>) => hostPost(page, { type: "runEvent", event: { runId: "r1", ts: Date.now(), ...e } as never });
      await ev({ event: "agent_started", agent: "fe1" }); // running
      await ev({ event: "agent_started", agent: "fe2" });
      await ev({ event: "question_asked", agent: "fe2", id: "q_1" }); // waiting for the user
      await ev({ event: "agent_started", agent: "fe3" });
      await ev({ event: "agent_finished", agent: "fe3", status: "failed", error: "exit status 1" }); // failed
      await ev({ event: "agent_started", agent: "be1" });
      await ev({ event: "agent_finished", agent: "be1", status: "completed" }); // done
      const states = { fe1: "running", fe2: "waiting for you", fe3: "failed", be1: "done" };
      for (const [id, text] of Object.entries(states)) await page.getByTestId(`run-${id}`).getByText(text).waitFor();
      await settled(page);
      const measured = await page.evaluate((ids) => {
        const out: Record<string, { text: string; bg: string; icon: string; border: string; canvas: string }> = {};
        const canvas = getComputedStyle(document.querySelector(".react-flow")!).backgroundColor;
        for (const id of ids) {
          const card = document.querySelector(`.react-flow__node[data-id="${id}"] .ac-node`)!;
          const state = card.querySelector(".ac-run-state")!;
          out[id] = {
            text: getComputedStyle(state).color,
            bg: getComputedStyle(card).backgroundColor,
            icon: getComputedStyle(state.querySelector(".codicon")!).color,
            border: getComputedStyle(card).borderTopColor,
            canvas,
          };
        }
        return out;
      }, Object.keys(states));
      for (const [id, m] of Object.entries(measured)) {
        // WCAG: text 4.5:1 on its background; the state's colour (icon, border) 3:1 as a graphic
        assert.ok(contrast(m.text, m.bg) >= 4.5, `${theme} ${id}: text ${m.text} on ${m.bg} is ${contrast(m.text, m.bg).toFixed(2)}:1`);
        assert.ok(contrast(m.icon, m.bg) >= 3, `${theme} ${id}: icon ${m.icon} on ${m.bg} is ${contrast(m.icon, m.bg).toFixed(2)}:1`);
        assert.ok(contrast(m.border, m.canvas) >= 3, `${theme} ${id}: border ${m.border} on the canvas ${m.canvas} is ${contrast(m.border, m.canvas).toFixed(2)}:1`);
      }
      // the four states look different from each other
      assert.equal(new Set(Object.values(measured).map((m) => m.icon)).size, 4);
      // the picture: the four cards brought to the middle of the view, as a person pans to them (Space+drag)
      const move = await page.evaluate((ids) => {
        const rs = ids.map((id) => document.querySelector(`.react-flow__node[data-id="${id}"]`)!.getBoundingClientRect());
        const p = document.querySelector(".react-flow")!.getBoundingClientRect();
        const mid = { x: (Math.min(...rs.map((r) => r.left)) + Math.max(...rs.map((r) => r.right))) / 2, y: (Math.min(...rs.map((r) => r.top)) + Math.max(...rs.map((r) => r.bottom))) / 2 };
        return { x: p.left + p.width / 2, y: p.top + p.height / 2, dx: p.left + p.width / 2 - mid.x, dy: p.top + p.height / 2 - mid.y };
      }, Object.keys(states));
      await page.mouse.move(move.x, move.y);
      await page.keyboard.down("Space");
      await page.mouse.down();
      for (let i = 1; i <= 10; i++) await page.mouse.move(move.x + (move.dx * i) / 10, move.y + (move.dy * i) / 10);
      await page.mouse.up();
      await page.keyboard.up("Space");
      await settled(page);
      await docsImage(page, `canvas-run-states-${theme}`);
      await noProblems(page);
      await page.close();
    });
  }
});

const rgb = (hex: string) => {
  const n = parseInt(hex.slice(1, 7), 16);
  const a = hex.length > 7 ? parseInt(hex.slice(7, 9), 16) / 255 : 1;
  const [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  return a === 1 ? `rgb(${r}, ${g}, ${b})` : a === 0 ? `rgba(${r}, ${g}, ${b}, 0)` : `rgba(${r}, ${g}, ${b}, ${Math.round(a * 1000) / 1000})`;
};

/** contrast is the WCAG contrast ratio of two computed colours (rgb() or rgba(), alpha ignored). */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = c.match(/[\d.]+/g)!.slice(0, 3).map((v) => {
      const s = Number(v) / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}
