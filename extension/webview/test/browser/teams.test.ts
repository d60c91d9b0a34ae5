// Browser tests of the canvas for real teams: flows of several patterns drawn by hand from the
// docs (not the examples), read from the DOM and the drawn geometry as a person sees them at
// first sight in a 1280×800 editor: true backend badges, text never below a readable size,
// room for the canvas, twenty interactions told apart, edges clear of nodes, each label on its
// own edge, dependsOn drawn, and pattern shapes.
// DOCS_IMAGES=1 also writes the README tour's pictures of these flows to docs/images/.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import type { LoadFlowResult, PatternInfo } from "../../../src/canvas/protocol";
import { settled } from "../shared/readability.mjs";
import { clearSent, docsImage, fixture, launch, openCanvas, pageProblems, screenshot, showFlow, THEMES, waitForOps } from "./harness";

const fourPatterns = fixture("four-patterns.json");
const debateChain = fixture("debate-chain.json");
const brokerSmall = fixture("broker-small.json");
const everyPattern = fixture("every-pattern.json");
const patterns = fixture<PatternInfo[]>("patterns.json");

let browser: Browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

async function open(r: LoadFlowResult, o: { theme?: keyof typeof THEMES; width?: number; height?: number; state?: unknown } = {}): Promise<Page> {
  const page = await openCanvas(browser, { width: 1280, height: 800, ...o });
  await showFlow(page, r, patterns);
  await page.locator(".react-flow__edge").first().waitFor();
  await page.evaluate(settled);
  return page;
}

async function noProblems(page: Page) {
  assert.deepEqual(await pageProblems(page), { csp: [], remote: [], errors: [] });
}

/** The badges each node card shows, by node id. */
async function badges(page: Page): Promise<Record<string, string[]>> {
  return page.evaluate(() => {
    const out: Record<string, string[]> = {};
    for (const n of document.querySelectorAll<HTMLElement>(".react-flow__node")) out[n.dataset.id!] = [...n.querySelectorAll(".ac-node-meta .ac-badge")].map((b) => b.textContent!.trim());
    return out;
  });
}

/** The smallest text a person must read (App.tsx, READABLE_PX); a hair of rounding allowed. */
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

interface Drawn {
  nodes: Array<{ id: string; x: number; y: number; width: number; height: number }>;
  edges: Array<{ id: string; points: Array<{ x: number; y: number }> }>;
  labels: Array<{ id: string; x: number; y: number; width: number; height: number }>;
}

/** drawn reads the picture in screen pixels: node boxes, each edge's line sampled every 3 px, label boxes. */
async function drawn(page: Page): Promise<Drawn> {
  return page.evaluate(() => {
    const box = (e: Element) => {
      const r = e.getBoundingClientRect();
      return { x: r.left, y: r.top, width: r.width, height: r.height };
    };
    const nodes = [...document.querySelectorAll<HTMLElement>(".react-flow__node")].map((n) => ({ id: n.dataset.id!, ...box(n) }));
    const edges = [...document.querySelectorAll<SVGPathElement>(".react-flow__edge-path.ac-edge")].map((p) => {
      const m = p.getScreenCTM()!;
      const len = p.getTotalLength();
      const points = [];
      for (let d = 0; d <= len; d += 3) {
        const q = p.getPointAtLength(d);
        const s = new DOMPoint(q.x, q.y).matrixTransform(m);
        points.push({ x: s.x, y: s.y });
      }
      return { id: p.closest(".react-flow__edge")!.getAttribute("data-id")!, points };
    });
    const labels = [...document.querySelectorAll<HTMLElement>(".ac-edge-label:not(.ac-probe)")].map((l) => ({ id: l.dataset.testid!.replace(/^edge-label-/, ""), ...box(l) }));
    return { nodes, edges, labels };
  });
}

/** edgeEnds maps each edge id of a flow to its two nodes. */
function edgeEnds(r: LoadFlowResult): Map<string, { source: string; target: string; interaction: string }> {
  return new Map(r.flow!.interactions!.flatMap((it) => (it.edges ?? []).map((e) => [e.id, { source: e.source, target: e.target, interaction: it.id }] as const)));
}

/** underNodes lists every edge that passes under a node other than its two ends (2 px of slack). */
function underNodes(d: Drawn, r: LoadFlowResult): string[] {
  const ends = edgeEnds(r);
  const out: string[] = [];
  for (const e of d.edges) {
    const { source, target } = ends.get(e.id)!;
    for (const n of d.nodes) {
      if (n.id === source || n.id === target) continue;
      const hit = e.points.find((p) => p.x > n.x + 2 && p.x < n.x + n.width - 2 && p.y > n.y + 2 && p.y < n.y + n.height - 2);
      if (hit) out.push(`${e.id} (${source} → ${target}) passes under ${n.id} at (${Math.round(hit.x)}, ${Math.round(hit.y)})`);
    }
  }
  return out;
}

/** labelsOwnership lists every label nearer another edge than its own, and every edge its labels or nodes hide. */
function labelsOwnership(d: Drawn, r: LoadFlowResult, shared: Map<string, string[]>): string[] {
  const out: string[] = [];
  const dist = (p: { x: number; y: number }, pts: Array<{ x: number; y: number }>) => Math.min(...pts.map((q) => Math.hypot(p.x - q.x, p.y - q.y)));
  for (const l of d.labels) {
    const c = { x: l.x + l.width / 2, y: l.y + l.height / 2 };
    const own = shared.get(l.id) ?? [l.id];
    const mine = Math.min(...d.edges.filter((e) => own.includes(e.id)).map((e) => dist(c, e.points)));
    for (const e of d.edges) {
      if (own.includes(e.id)) continue;
      const other = dist(c, e.points);
      if (other <= mine) out.push(`label ${l.id} is ${Math.round(other)} px from ${e.id}, ${Math.round(mine)} px from its own edge`);
    }
  }
  const hidden = (p: { x: number; y: number }) => [...d.labels, ...d.nodes].some((b) => p.x > b.x && p.x < b.x + b.width && p.y > b.y && p.y < b.y + b.height);
  for (const e of d.edges) {
    const seen = e.points.filter((p) => !hidden(p)).length * 3;
    if (seen < 30) out.push(`edge ${e.id} shows only ${seen} px (${edgeEnds(r).get(e.id)!.source} → ${edgeEnds(r).get(e.id)!.target})`);
  }
  return out;
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

  test("readable at first sight: a flow larger than the view opens at the readable zoom on its entry, the minimap for the rest; Fit keeps the floor unless the person zooms out", async () => {
    const page = await open(everyPattern);
    const first = await textSizes(page);
    assertReadable(first, "the 20-pattern flow");
    assert.ok(first.nodesInView.length < first.nodes.length, "larger than the view");
    // the entry: the leftmost nodes, in view
    const leftmost = await page.evaluate(() => {
      const ns = [...document.querySelectorAll<HTMLElement>(".react-flow__node")].map((n) => ({ id: n.dataset.id!, r: n.getBoundingClientRect() }));
      const top = ns.reduce((a, b) => (b.r.top < a.r.top || (b.r.top === a.r.top && b.r.left < a.r.left) ? b : a));
      return top.id;
    });
    assert.ok(first.nodesInView.includes(leftmost), `the entry ${leftmost} is in view`);
    assert.equal(await page.locator(".react-flow__minimap").count(), 1, "the minimap shows the rest");
    // Fit keeps the floor
    await page.keyboard.press("0");
    await page.evaluate(settled);
    assertReadable(await textSizes(page), "after Fit");
    // zoomed out by the person, Fit shows the whole flow
    for (let i = 0; i < 3; i++) await page.keyboard.press("-");
    await page.keyboard.press("0");
    await page.evaluate(settled);
    const all = await textSizes(page);
    assert.deepEqual(all.nodesInView.sort(), all.nodes.sort(), "zoomed out, Fit shows every node");
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
      const styles = await page.evaluate(() => {
        const legend: Record<string, { colour: string; dash: string }> = {};
        for (const b of document.querySelectorAll(".ac-legend-item")) {
          const line = getComputedStyle(b.querySelector(".ac-legend-swatch line")!);
          legend[b.querySelector(".ac-legend-id")!.textContent!] = { colour: line.stroke, dash: line.strokeDasharray };
        }
        const edges: Record<string, Array<{ colour: string; dash: string }>> = {};
        // (an edge with a problem is dashed as a problem: it says so, whatever its interaction)
        for (const p of document.querySelectorAll<SVGPathElement>(".react-flow__edge-path.ac-edge:not(.has-error):not(.has-warning)")) {
          const id = p.closest(".react-flow__edge")!.getAttribute("data-id")!.replace(/-e\d+$/, "");
          const st = getComputedStyle(p);
          (edges[id] ??= []).push({ colour: st.stroke, dash: st.strokeDasharray });
        }
        return { legend, edges };
      });
      assert.deepEqual(Object.keys(styles.legend), ids, "every interaction in the legend, in file order");
      const colours = ids.slice(0, 12).map((id) => styles.legend[id].colour);
      assert.equal(new Set(colours).size, 12, `twelve distinct colours: ${colours.join(" ")}`);
      const looks = ids.map((id) => `${styles.legend[id].colour} ${styles.legend[id].dash}`);
      assert.equal(new Set(looks).size, ids.length, `no two interactions look the same: ${looks.join(" | ")}`);
      for (const id of ids) for (const e of styles.edges[id] ?? []) assert.deepEqual(e, styles.legend[id], `${id}'s edges look like its legend entry`);
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
    test(`every label on its own edge, naming its interaction; one label for an interaction's edges between two nodes: ${name}`, async () => {
      const page = await open(flow, size);
      const d = await drawn(page);
      const ends = edgeEnds(flow);
      // the labels' owners: an interaction's edges between the same two nodes share the first one's label
      const shared = new Map<string, string[]>();
      const first = new Map<string, string>();
      for (const [id, e] of ends) {
        const key = `${e.interaction} ${[e.source, e.target].sort().join(" ")}`;
        const owner = first.get(key) ?? id;
        first.set(key, owner);
        shared.set(owner, [...(shared.get(owner) ?? []), id]);
      }
      assert.deepEqual(d.labels.map((l) => l.id).sort(), [...shared.keys()].sort(), "one label per interaction and pair of nodes");
      const names = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll<HTMLElement>(".ac-edge-label")].map((l) => [l.dataset.testid!.replace(/^edge-label-/, ""), l.querySelector(".ac-edge-ix")!.textContent])));
      for (const id of shared.keys()) assert.equal(names[id], ends.get(id)!.interaction, `label ${id} names its interaction`);
      assert.deepEqual(labelsOwnership(d, flow, shared), []);
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
