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
import { fixture, launch, openCanvas, pageProblems, showFlow, THEMES } from "./harness";

const fourPatterns = fixture("four-patterns.json");
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
    const aria = await page.locator('.react-flow__node[data-id="referee"]').getAttribute("aria-label");
    assert.match(aria!, /type judge, backend command/);
    await noProblems(page);
    await page.close();
  });
});
