// Benchmark (not a test): the canvas with a 500-agent, 1,000-edge flow in headless Chromium.
// Prints the first render time (with saved positions, and without: laid out on open), frame
// times while panning, and Tidy's time (the layout in its worker, then until it is drawn).
//   npm run bench:webview            (builds first)
// Numbers depend on the machine; no assertion is made on them.
import type { Page } from "playwright-core";
import type { FlowModel, Interaction } from "../../../src/canvas/protocol";
import { clearSent, hostPost, launch, openCanvas, waitForSent } from "../browser/harness";

const AGENTS = Number(process.env.BENCH_AGENTS ?? 500);
const EDGES = Number(process.env.BENCH_EDGES ?? 1000);
const PATTERNS = ["manager_worker", "debate_judge", "chat_chain_pipeline", "majority_vote", "blackboard", "router_targeted"];

// A deterministic pseudo-random flow: agents on a grid, edges mostly between near neighbours.
function bigFlow(withLayout = true): FlowModel {
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const agents = Array.from({ length: AGENTS }, (_, i) => ({
    id: `a${i}`,
    name: `Agent ${i}`,
    role: i % 10 === 0 ? "manager" : "worker",
    runtime: { kind: "cli", backendId: ["claude", "codex", "gemini", "auto"][i % 4] },
    path: `/agents/${i}`,
  }));
  const cols = Math.ceil(Math.sqrt(AGENTS));
  const nodes: Record<string, { x: number; y: number }> = {};
  agents.forEach((a, i) => (nodes[a.id] = { x: (i % cols) * 260, y: Math.floor(i / cols) * 140 }));
  const interactions: Interaction[] = [];
  const perInteraction = 4;
  for (let e = 0; e < EDGES; e++) {
    const k = Math.floor(e / perInteraction);
    if (!interactions[k]) interactions[k] = { id: `i${k + 1}`, patternId: PATTERNS[k % PATTERNS.length], edges: [], path: `/interactions/${k}` };
    const s = Math.floor(rnd() * AGENTS);
    let t = s + 1 + Math.floor(rnd() * cols * 2);
    if (t >= AGENTS) t = Math.floor(rnd() * AGENTS);
    if (t === s) t = (s + 1) % AGENTS;
    const j = interactions[k].edges!.length;
    interactions[k].edges!.push({
      id: `i${k + 1}-e${j + 1}`,
      source: `a${s}`,
      target: `a${t}`,
      data: { termination: { type: "max_rounds", rounds: 1 + (e % 5) } },
      path: `/interactions/${k}/edges/${j}`,
    });
  }
  return { file: "big.yaml", name: "big", agents, systemNodes: [], interactions, layout: { nodes: withLayout ? nodes : {}, edges: {} }, spans: {} };
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { frames: s.length, mean: mean.toFixed(1), p50: q(0.5).toFixed(1), p95: q(0.95).toFixed(1), max: s[s.length - 1].toFixed(1), fps: (1000 / mean).toFixed(0) };
}

async function panFrames(page: Page, label: string) {
  const r = (await page.locator(".react-flow__pane").boundingBox())!;
  const x0 = r.x + r.width / 2;
  const y0 = r.y + r.height / 2;
  await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __last: number; __panning: boolean };
    w.__frames = [];
    w.__panning = true;
    w.__last = performance.now();
    const tick = (t: number) => {
      w.__frames.push(t - w.__last);
      w.__last = t;
      if (w.__panning) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  // Pan in a circle-ish path for 120 moves, one per ~16 ms, holding Space so drags over nodes pan too.
  await page.mouse.move(x0, y0);
  await page.keyboard.down("Space");
  await page.mouse.down();
  for (let i = 1; i <= 120; i++) {
    const a = (i / 120) * Math.PI * 2;
    await page.mouse.move(x0 + Math.sin(a) * 250, y0 + (1 - Math.cos(a)) * 120);
    await page.waitForTimeout(16);
  }
  await page.mouse.up();
  await page.keyboard.up("Space");
  const frames = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __panning: boolean };
    w.__panning = false;
    return w.__frames.slice(1);
  });
  const dom = await page.evaluate(() => ({ nodes: document.querySelectorAll(".react-flow__node").length, edges: document.querySelectorAll(".react-flow__edge").length }));
  console.log(`pan at ${label}: frame ms`, JSON.stringify(stats(frames)), `(rendered ${dom.nodes} nodes, ${dom.edges} edges)`);
}

/** firstRender posts the flow as the host would and times it until the fitted graph is painted. */
async function firstRender(page: Page, f: FlowModel) {
  return page.evaluate(async (flow) => {
    const t0 = performance.now();
    window.postMessage({ type: "flow", version: 1, flow, diagnostics: [] }, "*");
    for (;;) {
      await new Promise((r) => requestAnimationFrame(r));
      const n = document.querySelectorAll(".react-flow__node").length;
      const vp = document.querySelector(".react-flow__viewport") as HTMLElement | null;
      if (n > 0 && vp && getComputedStyle(vp).transform !== "none" && document.querySelectorAll(".react-flow__edge").length > 0) {
        await new Promise((r) => requestAnimationFrame(r));
        return { ms: performance.now() - t0, nodes: document.querySelectorAll(".react-flow__node").length, edges: document.querySelectorAll(".react-flow__edge").length };
      }
    }
  }, f);
}

/**
 * tidy clicks Tidy and times the layout (until its setLayout op is sent) and, when the nodes
 * move (the first time), until they are drawn where the layout put them.
 */
async function tidy(page: Page, label: string, moves: boolean) {
  await clearSent(page);
  const before = await page.locator(".react-flow__node").first().evaluate((n) => getComputedStyle(n).transform);
  const t0 = Date.now();
  await page.getByRole("button", { name: "Tidy" }).click();
  await waitForSent(page, (m) => m.type === "edit" && m.ops[0]?.op === "setLayout", 120_000);
  const layout = Date.now() - t0;
  let drawn = "";
  if (moves) {
    await page.waitForFunction((b) => getComputedStyle(document.querySelector(".react-flow__node")!).transform !== b, before, { timeout: 120_000, polling: "raf" });
    drawn = `, ${Date.now() - t0} ms until drawn`;
  }
  console.log(`tidy ${label}: ${layout} ms to lay out (in the worker, to the setLayout op)${drawn}`);
}

const browser = await launch();
try {
  const page = await openCanvas(browser, { width: 1600, height: 1000 });
  const flow = bigFlow();
  console.log(`flow: ${flow.agents!.length} agents, ${flow.interactions!.reduce((n, i) => n + i.edges!.length, 0)} edges in ${flow.interactions!.length} interactions`);
  // First render: from the host's message to the first frame with the fitted graph painted.
  const first = await firstRender(page, flow);
  console.log(`first render: ${first.ms.toFixed(0)} ms (${first.nodes} nodes, ${first.edges} edges in the DOM)`);
  await page.waitForTimeout(500);
  await page.keyboard.press("0");
  await page.waitForTimeout(300);
  await panFrames(page, "fit (whole flow in view)");
  await page.keyboard.press("1");
  await page.waitForTimeout(300);
  await panFrames(page, "100%");
  // The same without the minimap (on by default at this width; it redraws every node as the view moves).
  await page.keyboard.press("m");
  await page.keyboard.press("0");
  await page.waitForTimeout(300);
  await panFrames(page, "fit, minimap off");
  await page.keyboard.press("1");
  await page.waitForTimeout(300);
  await panFrames(page, "100%, minimap off");
  // Tidy: the first one starts the worker; the second finds it running.
  await tidy(page, "(first)", true);
  await tidy(page, "(again)", false);
  await hostPost(page, { type: "patterns", patterns: [] });
  await page.close();

  // A flow with no saved positions: laid out by roles as it opens.
  const fresh = await openCanvas(browser, { width: 1600, height: 1000 });
  const unplaced = await firstRender(fresh, bigFlow(false));
  console.log(`first render without saved positions (laid out on open): ${unplaced.ms.toFixed(0)} ms (${unplaced.nodes} nodes, ${unplaced.edges} edges in the DOM)`);
  await fresh.close();
} finally {
  await browser.close();
}
