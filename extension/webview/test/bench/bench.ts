// Benchmark (not a test): the canvas with a 500-agent, 1,000-edge flow in headless Chromium.
// Prints the first render time (with saved positions, and without: laid out on open), frame
// times while panning, and Tidy's time (the layout in its worker, then until it is drawn).
//   npm run bench:webview            (builds first)
// Numbers depend on the machine; no assertion is made on them.
import type { Page } from "playwright-core";
import type { FlowModel } from "../../../src/canvas/protocol";
import { bigFlow } from "../shared/bigFlow";
import { clearSent, hostPost, launch, openCanvas, waitForSent } from "../browser/harness";

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

/**
 * firstRender posts the flow as the host would and times it until the flow is drawn fitted in
 * view: zoomed out (the benchmark's flow does not fit at 100%), every node in the DOM measured
 * (React Flow hides a node until it is), and the edges drawn; then one more frame, to paint.
 */
async function firstRender(page: Page, f: FlowModel) {
  return page.evaluate(async (flow) => {
    const t0 = performance.now();
    window.postMessage({ type: "flow", version: 1, flow, diagnostics: [] }, "*");
    const count = (sel: string) => document.querySelectorAll(sel).length;
    for (;;) {
      await new Promise((r) => requestAnimationFrame(r));
      const vp = document.querySelector(".react-flow__viewport") as HTMLElement | null;
      const zoom = vp ? new DOMMatrix(getComputedStyle(vp).transform).a : 1;
      const nodes = [...document.querySelectorAll<HTMLElement>(".react-flow__node")];
      if (zoom < 1 && nodes.length > 0 && nodes.every((n) => n.style.visibility !== "hidden") && count(".react-flow__edge") > 0) {
        await new Promise((r) => requestAnimationFrame(r));
        return { ms: performance.now() - t0, zoom, nodes: nodes.length, edges: count(".react-flow__edge"), labels: count(".ac-edge-label:not(.ac-probe)") };
      }
    }
  }, f);
}

/**
 * tidy clicks Tidy and times, in the page, from the click (the input event's time) to the
 * setLayout op posted to the host and, when the nodes move (the first time), to the first frame
 * that draws them where the layout put them; with the stages Tidy marks (ac:tidy:*): the graph
 * handed to the worker (with its start the first time), the layout's reply, the op sent.
 */
/** wholeFlow zooms out below the readable zoom, as a person would, then Fit shows the whole flow. */
async function wholeFlow(page: Page) {
  for (let i = 0; i < 6; i++) await page.keyboard.press("-");
  await page.keyboard.press("0");
}

async function tidy(page: Page, label: string, moves: boolean) {
  await clearSent(page);
  await page.evaluate(() => {
    const w = window as unknown as { __sent: unknown[]; __tidy: Record<string, number> };
    const t: Record<string, number> = (w.__tidy = {});
    performance.clearMarks();
    const push = w.__sent.push.bind(w.__sent);
    w.__sent.push = (...m: unknown[]) => ((t.posted ??= performance.now()), push(...m));
    const node = document.querySelector(".react-flow__node")!;
    const before = getComputedStyle(node).transform;
    document.addEventListener(
      "click",
      (e) => {
        t.click = e.timeStamp;
        const poll = () => (getComputedStyle(node).transform !== before ? (t.drawn = performance.now()) : requestAnimationFrame(poll));
        requestAnimationFrame(poll);
      },
      { capture: true, once: true },
    );
  });
  await page.getByRole("button", { name: "Tidy" }).click();
  await waitForSent(page, (m) => m.type === "edit" && m.ops[0]?.op === "setLayout", 120_000);
  if (moves) await page.waitForFunction(() => (window as unknown as { __tidy: { drawn?: number } }).__tidy.drawn !== undefined, undefined, { timeout: 120_000 });
  const t = await page.evaluate(() => {
    const w = window as unknown as { __tidy: { click: number; posted: number; drawn: number } };
    const mark = (n: string) => performance.getEntriesByName(`ac:tidy:${n}`)[0]?.startTime ?? NaN;
    return { ...w.__tidy, start: mark("start"), handed: mark("posted"), reply: mark("reply"), sent: mark("sent") };
  });
  const ms = (a: number, b: number) => (Number.isFinite(b - a) ? `${Math.round(b - a)}` : "?");
  const drawn = moves ? `, ${ms(t.click, t.drawn)} ms click → drawn` : "";
  console.log(
    `tidy ${label}: ${ms(t.click, t.posted)} ms click → setLayout op posted${drawn}` +
      ` (click handled after ${ms(t.click, t.start)}, graph in the worker after ${ms(t.start, t.handed)}, layout ${ms(t.handed, t.reply)}, op after ${ms(t.reply, t.sent)})`,
  );
}

const browser = await launch();
try {
  const page = await openCanvas(browser, { width: 1600, height: 1000 });
  const flow = bigFlow();
  console.log(`flow: ${flow.agents!.length} agents, ${flow.interactions!.reduce((n, i) => n + i.edges!.length, 0)} edges in ${flow.interactions!.length} interactions`);
  // First render: from the host's message to the first frame with the fitted graph painted.
  const first = await firstRender(page, flow);
  console.log(`first render: ${first.ms.toFixed(0)} ms (at zoom ${first.zoom.toFixed(2)}: ${first.nodes} nodes, ${first.edges} edges, ${first.labels} labels in the DOM)`);
  await page.waitForTimeout(500);
  await wholeFlow(page);
  await page.waitForTimeout(300);
  await panFrames(page, "fit (whole flow in view)");
  await page.keyboard.press("1");
  await page.waitForTimeout(300);
  await panFrames(page, "100%");
  // The same without the minimap (on by default at this width; it redraws every node as the view moves).
  await page.keyboard.press("m");
  await wholeFlow(page);
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
  console.log(`first render without saved positions (laid out on open): ${unplaced.ms.toFixed(0)} ms (at zoom ${unplaced.zoom.toFixed(2)}: ${unplaced.nodes} nodes, ${unplaced.edges} edges, ${unplaced.labels} labels in the DOM)`);
  await fresh.close();
} finally {
  await browser.close();
}
