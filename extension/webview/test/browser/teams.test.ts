// Browser tests of the canvas for real teams: flows of several patterns drawn by hand from the
// docs (not the examples), read from the DOM and the drawn geometry as a person sees them at
// first sight in a 1280×800 editor: true backend badges, text never below a readable size,
// room for the canvas, twenty interactions told apart, edges clear of nodes, each label on its
// own edge, dependsOn drawn, and pattern shapes.
// DOCS_IMAGES=1 also writes the README tour's pictures of these flows to docs/images/.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import type { LoadFlowResult, PatternInfo } from "../../../src/canvas/protocol";
import { settled } from "../shared/readability.mjs";
import { clearSent, docsImage, fixture, noProblems, openCanvas, screenshot, showFlow, THEMES, useBrowser, waitForOps } from "./harness";
import { drawn, edgeEnds, fans, labelProblems, looks, underNodes } from "./measure";

const fourPatterns = fixture("four-patterns.json");
const debateChain = fixture("debate-chain.json");
const brokerSmall = fixture("broker-small.json");
const everyPattern = fixture("every-pattern.json");
const patterns = fixture<PatternInfo[]>("patterns.json");

const browser = useBrowser();

async function open(r: LoadFlowResult, o: { theme?: keyof typeof THEMES; width?: number; height?: number; state?: unknown } = {}): Promise<Page> {
  const page = await openCanvas(browser(), { width: 1280, height: 800, ...o });
  await showFlow(page, r, patterns);
  await page.locator(".react-flow__edge").first().waitFor();
  await page.evaluate(settled);
  return page;
}

/** The badges each node card shows, by node id. */
async function badges(page: Page): Promise<Record<string, string[]>> {
  return page.evaluate(() => {
    const out: Record<string, string[]> = {};
    for (const n of document.querySelectorAll<HTMLElement>(".react-flow__node")) out[n.dataset.id!] = [...n.querySelectorAll(".ac-node-meta .ac-badge")].map((b) => b.textContent!.trim());
    return out;
  });
}

/** The smallest text a person must read (metrics.ts, READABLE_PX); a hair of rounding allowed. */
const READABLE = 10.95;

interface TextSizes {
  zoom: number;
  /** every text in view on a card or a label: its size on screen, in px */
  texts: Array<{ text: string; px: number }>;
  nodesInView: string[];
  nodes: string[];
}

/** textSizes reads, in the page, the size on screen of every card and label text in view. */
async function textSizes(page: Page): Promise<TextSizes> {
  return page.evaluate(() => {
    const zoom = new DOMMatrix(getComputedStyle(document.querySelector(".react-flow__viewport")!).transform).a;
    const pane = document.querySelector(".react-flow")!.getBoundingClientRect();
    const inView = (r: DOMRect) => r.right > pane.left && r.left < pane.right && r.bottom > pane.top && r.top < pane.bottom;
    const whollyInView = (r: DOMRect) => r.left >= pane.left - 1 && r.right <= pane.right + 1 && r.top >= pane.top - 1 && r.bottom <= pane.bottom + 1;
    const texts = [...document.querySelectorAll<HTMLElement>(".react-flow__node .ac-node-name, .react-flow__node .ac-role, .react-flow__node .ac-badge, .ac-edge-text")]
      .filter((e) => inView(e.getBoundingClientRect()))
      .map((e) => ({ text: e.textContent ?? "", px: parseFloat(getComputedStyle(e).fontSize) * zoom }));
    const nodes = [...document.querySelectorAll<HTMLElement>(".react-flow__node")];
    return { zoom, texts, nodes: nodes.map((n) => n.dataset.id!), nodesInView: nodes.filter((n) => whollyInView(n.getBoundingClientRect())).map((n) => n.dataset.id!) };
  });
}

function assertReadable(t: TextSizes, what: string) {
  assert.ok(t.texts.length > 0, `${what}: some text in view`);
  const small = t.texts.filter((x) => x.px < READABLE);
  assert.deepEqual(small, [], `${what}: text smaller than ${READABLE} px at zoom ${t.zoom.toFixed(2)}`);
}

describe("the canvas for real teams", { concurrency: false }, () => {
  test("badges: each node's backend as resolved (a command judge is `command`), system nodes keep their type", async () => {
    const page = await open(fourPatterns);
    const b = await badges(page);
    assert.deepEqual(b.referee, ["JUDGE", "command"]);
    assert.deepEqual(b.board, ["BLACKBOARD"], "a blackboard is run by the engine: no backend");
    assert.deepEqual(b.tester, ["command"]);
    assert.deepEqual(b.alice, ["claude"]);
    assert.deepEqual(b.ks_math, ["auto"], "no backendId: the engine picks one (auto)");
    assert.ok(!Object.values(b).flat().includes("LLM"), JSON.stringify(b));
    await docsImage(page, "canvas-four-patterns");
    const aria = await page.locator('.react-flow__node[data-id="referee"]').getAttribute("aria-label");
    assert.match(aria!, /type judge, backend command/);
    await noProblems(page);
    await page.close();
  });

  for (const [name, flow] of [["a three-node broker flow", brokerSmall], ["a debate drawn debater → debater → judge", debateChain]] as const) {
    test(`readable at first sight: ${name} opens whole, not shrunk below the readable size`, async () => {
      const page = await open(flow);
      const t = await textSizes(page);
      assertReadable(t, name);
      assert.deepEqual(t.nodesInView.sort(), t.nodes.sort(), "every node in view");
      await page.close();
    });
  }

  test("readable at first sight: a flow larger than the view opens at the readable zoom on its first interaction, the minimap for the rest; Fit shows everything", async () => {
    const page = await open(everyPattern);
    const first = await textSizes(page);
    assertReadable(first, "the 20-pattern flow");
    assert.ok(first.nodesInView.length < first.nodes.length, "larger than the view");
    // the first interaction (i1: the manager and its two workers), in view
    for (const id of ["mgr", "w1", "w2"]) assert.ok(first.nodesInView.includes(id), `${id} is in view`);
    assert.equal(await page.locator(".react-flow__minimap").count(), 1, "the minimap shows the rest");
    // Fit shows every node, however small
    await page.keyboard.press("0");
    await page.evaluate(settled);
    const all = await textSizes(page);
    assert.deepEqual(all.nodesInView.sort(), all.nodes.sort(), "Fit shows every node");
    await noProblems(page);
    await page.close();
  });

  test("room to draw: below 1400 px the palette and inspector are icons, the canvas gets two thirds or more, open or not; the choice is remembered", async () => {
    const page = await open(fourPatterns);
    const share = () => page.evaluate(() => document.querySelector(".ac-canvas")!.getBoundingClientRect().width / window.innerWidth);
    assert.equal(await page.getByTestId("palette").count(), 0);
    assert.equal(await page.getByTestId("inspector").count(), 0);
    assert.ok((await share()) > 0.9, `collapsed: the canvas gets ${await share()}`);
    await page.getByRole("button", { name: "Show the patterns" }).click();
    await page.getByRole("button", { name: "Show the inspector" }).click();
    await page.getByTestId("palette").waitFor();
    await page.getByTestId("inspector").waitFor();
    assert.ok((await share()) >= 2 / 3, `both open: the canvas gets ${await share()}`);
    // collapsing one is remembered across a reload of the webview (VS Code's webview state)
    await page.getByRole("button", { name: "Hide the patterns" }).click();
    await page.reload();
    await showFlow(page, fourPatterns, patterns);
    await page.getByTestId("inspector").waitFor();
    assert.equal(await page.getByTestId("palette").count(), 0);
    assert.equal(await page.getByTestId("palette-rail").count(), 1);
    await noProblems(page);
    await page.close();
  });

  for (const theme of Object.keys(THEMES) as Array<keyof typeof THEMES>) {
    test(`${theme}: twenty interactions stay apart: twelve colours, then dash patterns; the legend lists every one whole and highlights an interaction on hover`, async () => {
      const page = await open(everyPattern, { theme });
      const ids = everyPattern.flow!.interactions!.map((i) => i.id);
      // every edge, with a problem or not, exactly as its legend swatch: colour, dashes, width
      const styles = await looks(page);
      assert.deepEqual(Object.keys(styles.legend), ids, "every interaction in the legend, in file order");
      const colours = ids.slice(0, 12).map((id) => styles.legend[id].colour);
      assert.equal(new Set(colours).size, 12, `twelve distinct colours: ${colours.join(" ")}`);
      const seen = ids.map((id) => `${styles.legend[id].colour} ${styles.legend[id].dash}`);
      assert.equal(new Set(seen).size, ids.length, `no two interactions look the same: ${seen.join(" | ")}`);
      for (const id of ids) for (const { id: edge, ...look } of styles.edges[id] ?? []) assert.deepEqual(look, styles.legend[id], `${edge} looks like ${id}'s legend entry`);
      // no legend entry cut: at the top and scrolled to the end, each is wholly in the list or wholly out of it
      const cut = await page.evaluate(async () => {
        const ul = document.querySelector<HTMLElement>(".ac-legend ul")!;
        const canvas = document.querySelector(".ac-canvas")!.getBoundingClientRect();
        const out: string[] = [];
        const check = (where: string) => {
          const box = ul.getBoundingClientRect();
          if (box.top < canvas.top || box.bottom > canvas.bottom || box.left < canvas.left || box.right > canvas.right) out.push(`${where}: the legend is cut by the canvas`);
          for (const li of ul.querySelectorAll("li")) {
            const r = li.getBoundingClientRect();
            const inside = r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5;
            const outside = r.bottom <= box.top + 0.5 || r.top >= box.bottom - 0.5;
            if (!inside && !outside) out.push(`${where}: ${li.textContent} is cut`);
          }
        };
        check("at the top");
        ul.scrollTop = ul.scrollHeight;
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        check("at the end");
        return out;
      });
      assert.deepEqual(cut, []);
      // hovering an entry makes its edges stand out and the others step back
      await page.evaluate(() => (document.querySelector(".ac-legend ul")!.scrollTop = 0));
      await page.getByTestId("legend").getByRole("button", { name: /^i5/ }).hover();
      await page.waitForFunction(() => document.querySelector(".ac-canvas.ac-highlighting") !== null);
      const hl = await page.evaluate(() =>
        [...document.querySelectorAll<SVGPathElement>(".react-flow__edge-path.ac-edge")].map((p) => ({
          id: p.closest(".react-flow__edge")!.getAttribute("data-id")!,
          width: parseFloat(getComputedStyle(p).strokeWidth),
          opacity: parseFloat(getComputedStyle(p).opacity),
        })),
      );
      for (const e of hl) {
        if (e.id.startsWith("i5-")) assert.ok(e.width > 3 && e.opacity === 1, JSON.stringify(e));
        else assert.ok(e.opacity < 0.5, JSON.stringify(e));
      }
      await screenshot(page, `teams-legend-hover-${theme}`);
      await page.mouse.move(5, 5);
      await page.waitForFunction(() => document.querySelector(".ac-canvas.ac-highlighting") === null);
      await noProblems(page);
      await page.close();
    });
  }

  for (const [name, flow, size] of [
    ["four patterns", fourPatterns, { width: 1280, height: 800 }],
    ["a debate drawn debater → debater → judge", debateChain, { width: 2400, height: 1400 }],
    ["all twenty patterns", everyPattern, { width: 1280, height: 800 }],
  ] as const) {
    test(`edges never pass under a node: ${name}`, async () => {
      const page = await open(flow, size);
      const d = await drawn(page);
      assert.equal(d.edges.length, edgeEnds(flow).size);
      assert.deepEqual(underNodes(d, flow), []);
      await noProblems(page);
      await page.close();
    });
  }

  for (const [name, flow, size] of [
    ["four patterns", fourPatterns, { width: 1280, height: 800 }],
    ["a debate drawn debater → debater → judge", debateChain, { width: 2400, height: 1400 }],
  ] as const) {
    test(`one label per fan, naming its interaction, nearer its own edges than any other: ${name}`, async () => {
      const page = await open(flow, size);
      const d = await drawn(page);
      const ends = edgeEnds(flow);
      assert.deepEqual(d.labels.map((l) => l.id).sort(), [...fans(flow).keys()].sort(), "one label per fan");
      for (const l of d.labels) assert.equal(l.text.split(/\s+/)[0], ends.get(l.id)!.interaction, `label ${l.id} names its interaction`);
      assert.deepEqual(labelProblems(d, flow), []);
      await noProblems(page);
      await page.close();
    });
  }

  test("dependsOn drawn as dashed connectors between legend entries, and edited from the inspector", async () => {
    const page = await open(fourPatterns);
    const connectors = () =>
      page.evaluate(() =>
        [...document.querySelectorAll<SVGGElement>(".ac-legend .ac-dep")].map((g) => {
          const path = g.querySelector("path")!;
          const m = path.getScreenCTM()!;
          const at = (d: number) => new DOMPoint(path.getPointAtLength(d).x, path.getPointAtLength(d).y).matrixTransform(m);
          const mid = (id: string) => {
            const r = document.querySelector(`.ac-legend li[data-id="${id}"]`)!.getBoundingClientRect();
            return r.top + r.height / 2;
          };
          const from = g.dataset.from!;
          const to = g.dataset.to!;
          return { from, to, starts: Math.abs(at(0).y - mid(from)) < 2, ends: Math.abs(at(path.getTotalLength()).y - mid(to)) < 2, dash: getComputedStyle(path).strokeDasharray };
        }),
      );
    const drawnDeps = await connectors();
    assert.deepEqual(drawnDeps.map((d) => `${d.from}>${d.to}`).sort(), ["auction>build", "build>notes", "debate>auction", "debate>notes"]);
    for (const d of drawnDeps) assert.ok(d.starts && d.ends && d.dash !== "none", JSON.stringify(d));
    // edited from the inspector: an edge of notes selected, its interaction's Depends on set
    await page.getByRole("button", { name: "Show the inspector" }).click();
    await page.getByTestId("legend").getByRole("button", { name: /^notes/ }).click();
    await page.getByTestId("edge-label-notes-e1").click();
    const field = page.getByTestId("inspector").getByLabel("Depends on");
    assert.equal(await field.inputValue(), "debate, build");
    await clearSent(page);
    await field.fill("auction");
    await field.press("Enter");
    const [op] = await waitForOps(page, 1);
    assert.deepEqual(op, { op: "set", path: "/interactions/3/dependsOn", value: ["auction"] });
    // the sidecar's answer comes back as the new model: the connectors follow it
    const next = structuredClone(fourPatterns);
    next.flow!.interactions![3].dependsOn = ["auction"];
    await showFlow(page, next, undefined, 2);
    await page.waitForFunction(() => document.querySelectorAll(".ac-legend .ac-dep").length === 3);
    assert.deepEqual((await connectors()).map((d) => `${d.from}>${d.to}`).sort(), ["auction>build", "auction>notes", "debate>auction"]);
    await screenshot(page, "teams-depends-on");
    await noProblems(page);
    await page.close();
  });

  test("layout by pattern shape: debaters side by side facing their judge (however drawn), a pipeline as a line", async () => {
    for (const flow of [debateChain, fourPatterns]) {
      const page = await open(flow, { width: 2400, height: 1400 });
      const d = await drawn(page);
      const at = (id: string) => d.nodes.find((n) => n.id === id)!;
      assert.ok(Math.abs(at("alice").x - at("bob").x) < 1, `debaters in one column: ${JSON.stringify([at("alice"), at("bob")])}`);
      assert.ok(at("alice").x + at("alice").width < at("referee").x && at("bob").x + at("bob").width < at("referee").x, "the judge after them");
      const mid = (id: string) => at(id).y + at(id).height / 2;
      assert.ok(mid("referee") > Math.min(mid("alice"), mid("bob")) && mid("referee") < Math.max(mid("alice"), mid("bob")), "the judge faces both");
      await page.close();
    }
    const page = await open(everyPattern, { width: 2400, height: 1400 });
    const d = await drawn(page);
    const ys = ["planner", "coder", "tester"].map((id) => Math.round(d.nodes.find((n) => n.id === id)!.y));
    assert.equal(new Set(ys).size, 1, `the chat-chain pipeline in one line: ${ys}`);
    await docsImage(page, "canvas-all-patterns");
    await page.close();
  });
});
