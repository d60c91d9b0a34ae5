// Browser-test harness: the BUILT webview (out/webview) in headless Debian Chromium, served from a
// made-up origin by request interception (no server, no network), inside the very page the
// extension serves (canvasHtml, with its CSP), with a mocked host: acquireVsCodeApi records what
// the webview posts, and the test posts what the host would.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { canvasHtml } from "../../../src/canvas/html";
import type { FlowOp, HostMessage, LoadFlowResult, PatternInfo, WebviewMessage } from "../../../src/canvas/protocol";

export const ROOT = resolve(process.cwd());
const OUT = join(ROOT, "out/webview");
export const ARTEFACTS = join(ROOT, "test-results/webview");
const ORIGIN = "https://canvas.test";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium) or set CHROMIUM_PATH`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

export function fixture<T = LoadFlowResult>(name: string): T {
  return JSON.parse(readFileSync(join(ROOT, "extension/webview/test/testdata", name), "utf8")) as T;
}

// A slice of VS Code's theme variables, as the workbench injects them into a webview.
export const THEMES: Record<string, { bodyClass: string; vars: Record<string, string> }> = {
  dark: {
    bodyClass: "vscode-dark",
    vars: {
      "editor-background": "#1f1f1f", foreground: "#cccccc", "editorWidget-background": "#202020", "editorWidget-border": "#454545",
      "editorWidget-foreground": "#cccccc", focusBorder: "#0078d4", "panel-border": "#2b2b2b", "descriptionForeground": "#9d9d9d",
      "editorLineNumber-foreground": "#6e7681", "editorError-foreground": "#f85149", "editorWarning-foreground": "#cca700",
      "editorInfo-foreground": "#3794ff", errorForeground: "#f85149", "badge-background": "#616161", "badge-foreground": "#f8f8f8",
      "button-background": "#0078d4", "button-foreground": "#ffffff", "button-hoverBackground": "#026ec1",
      "button-secondaryBackground": "#313131", "button-secondaryForeground": "#cccccc", "button-secondaryHoverBackground": "#3c3c3c",
      "input-background": "#313131", "input-foreground": "#cccccc", "input-border": "#3c3c3c", "sideBar-background": "#181818",
      "sideBar-foreground": "#cccccc", "list-hoverBackground": "#2a2d2e", "list-activeSelectionBackground": "#04395e",
      "list-activeSelectionForeground": "#ffffff", "textLink-foreground": "#4daafc", "charts-green": "#89d185", "charts-blue": "#59a4f9",
      "charts-red": "#f14c4c", "charts-yellow": "#cca700", "charts-orange": "#d18616", "charts-purple": "#b180d7",
      "activityBarBadge-background": "#0078d4", "activityBarBadge-foreground": "#ffffff", "widget-shadow": "#0000005c",
      "inputValidation-errorBackground": "#5a1d1d", "inputValidation-errorBorder": "#be1100", "textCodeBlock-background": "#2b2b2b",
      "inputValidation-warningBackground": "#352a05", "inputValidation-warningBorder": "#b89500",
      "minimap-background": "#1f1f1f", "minimapSlider-background": "#79797933", "scrollbarSlider-background": "#79797966",
      "quickInput-background": "#222222", "quickInput-foreground": "#cccccc",
      "terminal-ansiCyan": "#11a8cd", "terminal-ansiMagenta": "#bc3fbc", "terminal-ansiBrightBlue": "#3b8eea",
      "terminal-ansiRed": "#cd3131", "terminal-ansiGreen": "#0dbc79", "terminal-ansiYellow": "#e5e510", "terminal-ansiBlue": "#2472c8",
      "terminal-ansiBrightRed": "#f14c4c", "terminal-ansiBrightGreen": "#23d18b", "terminal-ansiBrightYellow": "#f5f543",
      "terminal-ansiBrightMagenta": "#d670d6", "terminal-ansiBrightCyan": "#29b8db",
      "list-warningForeground": "#cca700", "list-errorForeground": "#f88070", "icon-foreground": "#cccccc",
      "toolbar-hoverBackground": "#5a5d5e50", "toolbar-activeBackground": "#63666750", "inputOption-activeBackground": "#2489db82",
      "inputOption-activeBorder": "#2488db", "inputOption-activeForeground": "#ffffff", "inputOption-hoverBackground": "#5a5d5e80",
      "progressBar-background": "#0078d4", "button-border": "#ffffff12", "menu-separatorBackground": "#454545",
      "symbolIcon-classForeground": "#ee9d28", "list-inactiveSelectionBackground": "#37373d",
      "font-family": "system-ui, sans-serif", "font-size": "13px", "editor-font-family": "monospace",
    },
  },
  light: {
    bodyClass: "vscode-light",
    vars: {
      "editor-background": "#ffffff", foreground: "#3b3b3b", "editorWidget-background": "#f8f8f8", "editorWidget-border": "#c8c8c8",
      "editorWidget-foreground": "#3b3b3b", focusBorder: "#005fb8", "panel-border": "#e5e5e5", "descriptionForeground": "#717171",
      "editorLineNumber-foreground": "#6e7681", "editorError-foreground": "#e51400", "editorWarning-foreground": "#bf8803",
      "editorInfo-foreground": "#1a85ff", errorForeground: "#f85149", "badge-background": "#cccccc", "badge-foreground": "#3b3b3b",
      "button-background": "#005fb8", "button-foreground": "#ffffff", "button-hoverBackground": "#0258a8",
      "button-secondaryBackground": "#e5e5e5", "button-secondaryForeground": "#3b3b3b", "button-secondaryHoverBackground": "#cccccc",
      "input-background": "#ffffff", "input-foreground": "#3b3b3b", "input-border": "#cecece", "sideBar-background": "#f8f8f8",
      "sideBar-foreground": "#3b3b3b", "list-hoverBackground": "#f2f2f2", "list-activeSelectionBackground": "#e8e8e8",
      "list-activeSelectionForeground": "#000000", "textLink-foreground": "#005fb8", "charts-green": "#388a34", "charts-blue": "#0063d3",
      "charts-red": "#e51400", "charts-yellow": "#bf8803", "charts-orange": "#d18616", "charts-purple": "#652d90",
      "activityBarBadge-background": "#005fb8", "activityBarBadge-foreground": "#ffffff", "widget-shadow": "#00000029",
      "inputValidation-errorBackground": "#f2dede", "inputValidation-errorBorder": "#be1100", "textCodeBlock-background": "#f8f8f8",
      "inputValidation-warningBackground": "#f6f5d2", "inputValidation-warningBorder": "#b89500",
      "minimap-background": "#ffffff", "minimapSlider-background": "#64646433", "scrollbarSlider-background": "#64646466",
      "quickInput-background": "#f8f8f8", "quickInput-foreground": "#3b3b3b",
      "terminal-ansiCyan": "#0598bc", "terminal-ansiMagenta": "#bc05bc", "terminal-ansiBrightBlue": "#0451a5",
      "terminal-ansiRed": "#cd3131", "terminal-ansiGreen": "#107c10", "terminal-ansiYellow": "#949800", "terminal-ansiBlue": "#0451a5",
      "terminal-ansiBrightRed": "#cd3131", "terminal-ansiBrightGreen": "#14ce14", "terminal-ansiBrightYellow": "#b5ba00",
      "terminal-ansiBrightMagenta": "#bc05bc", "terminal-ansiBrightCyan": "#0598bc",
      "list-warningForeground": "#855f00", "list-errorForeground": "#b01011", "icon-foreground": "#3b3b3b",
      "toolbar-hoverBackground": "#b8b8b850", "toolbar-activeBackground": "#a6a6a650", "inputOption-activeBackground": "#bed6ed",
      "inputOption-activeBorder": "#005fb8", "inputOption-activeForeground": "#000000", "inputOption-hoverBackground": "#b8b8b850",
      "progressBar-background": "#005fb8", "button-border": "#0000001a", "menu-separatorBackground": "#d4d4d4",
      "symbolIcon-classForeground": "#d67e00", "list-inactiveSelectionBackground": "#e4e6f1",
      "font-family": "system-ui, sans-serif", "font-size": "13px", "editor-font-family": "monospace",
    },
  },
  "high-contrast": {
    bodyClass: "vscode-high-contrast",
    vars: {
      "editor-background": "#000000", foreground: "#ffffff", "editorWidget-background": "#0c141f", "editorWidget-border": "#6fc3df",
      "editorWidget-foreground": "#ffffff", focusBorder: "#f38518", "panel-border": "#6fc3df", "descriptionForeground": "#ffffff",
      contrastBorder: "#6fc3df", contrastActiveBorder: "#f38518",
      "editorLineNumber-foreground": "#ffffff", "editorError-foreground": "#ff3232", "editorWarning-foreground": "#ffd700",
      "editorInfo-foreground": "#3794ff", errorForeground: "#f48771", "badge-background": "#000000", "badge-foreground": "#ffffff",
      "button-background": "#000000", "button-foreground": "#ffffff", "button-border": "#6fc3df",
      "button-secondaryBackground": "#000000", "button-secondaryForeground": "#ffffff", "button-secondaryHoverBackground": "#000000",
      "input-background": "#000000", "input-foreground": "#ffffff", "input-border": "#6fc3df", "sideBar-background": "#000000",
      "sideBar-foreground": "#ffffff", "list-hoverBackground": "#000000", "list-activeSelectionBackground": "#000000",
      "list-activeSelectionForeground": "#ffffff", "textLink-foreground": "#21a6ff", "charts-green": "#89d185", "charts-blue": "#59a4f9",
      "charts-red": "#f14c4c", "charts-yellow": "#ffd700", "charts-orange": "#d18616", "charts-purple": "#b180d7",
      "activityBarBadge-background": "#000000", "activityBarBadge-foreground": "#ffffff", "widget-shadow": "#00000000",
      "inputValidation-errorBackground": "#000000", "inputValidation-errorBorder": "#f48771", "textCodeBlock-background": "#000000",
      "inputValidation-warningBackground": "#000000", "inputValidation-warningBorder": "#ffd700",
      "minimap-background": "#000000", "minimapSlider-background": "#6fc3df33", "scrollbarSlider-background": "#6fc3df99",
      "quickInput-background": "#000000", "quickInput-foreground": "#ffffff",
      // high-contrast themes leave list-warningForeground, list-errorForeground and the toolbar's
      // hover background unset: the canvas falls back to other variables
      "terminal-ansiCyan": "#00cdcd", "terminal-ansiMagenta": "#cd00cd", "terminal-ansiBrightBlue": "#5c5cff", "icon-foreground": "#ffffff",
      "terminal-ansiRed": "#cd0000", "terminal-ansiGreen": "#00cd00", "terminal-ansiYellow": "#cdcd00", "terminal-ansiBlue": "#0000ee",
      "terminal-ansiBrightRed": "#ff0000", "terminal-ansiBrightGreen": "#00ff00", "terminal-ansiBrightYellow": "#ffff00",
      "terminal-ansiBrightMagenta": "#ff00ff", "terminal-ansiBrightCyan": "#00ffff",
      "toolbar-hoverOutline": "#f38518", "inputOption-activeBackground": "#00000000", "inputOption-activeBorder": "#6fc3df",
      "inputOption-activeForeground": "#ffffff", "progressBar-background": "#6fc3df", "menu-separatorBackground": "#6fc3df",
      "symbolIcon-classForeground": "#ee9d28",
      "font-family": "system-ui, sans-serif", "font-size": "13px", "editor-font-family": "monospace",
    },
  },
};

export interface OpenOptions {
  theme?: keyof typeof THEMES;
  width?: number;
  height?: number;
}

/** openCanvas opens the built webview in a new page with a mocked host. */
export async function openCanvas(browser: Browser, o: OpenOptions = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: o.width ?? 1400, height: o.height ?? 900 } });
  const page = await context.newPage();
  const theme = THEMES[o.theme ?? "dark"];
  await page.route(`${ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === "/" || url.pathname === "/index.html") {
      const html = canvasHtml({
        cspSource: ORIGIN,
        nonce: "testnonce0123456789abcdefABCDEF0",
        scriptUri: `${ORIGIN}/canvas.js`,
        styleUri: `${ORIGIN}/canvas.css`,
        workerUri: `${ORIGIN}/layout-worker.js`,
      });
      return route.fulfill({ status: 200, contentType: "text/html", body: html });
    }
    const file = join(OUT, url.pathname.replace(/^\/+/, ""));
    const type = file.endsWith(".css") ? "text/css" : file.endsWith(".ttf") ? "font/ttf" : "text/javascript";
    try {
      return route.fulfill({ status: 200, contentType: type, body: readFileSync(file) });
    } catch {
      return route.fulfill({ status: 404, body: "not found" });
    }
  });
  // Anything else would be a remote load: fail it loudly.
  await page.route((url) => !url.href.startsWith(ORIGIN) && !url.href.startsWith("blob:") && !url.href.startsWith("data:"), (route) => {
    void page.evaluate((u) => (window as unknown as { __remote: string[] }).__remote.push(u), route.request().url()).catch(() => undefined);
    return route.abort();
  });
  await page.addInitScript(
    ({ bodyClass, vars }) => {
      const w = window as unknown as Record<string, unknown>;
      w.__sent = [];
      w.__csp = [];
      w.__remote = [];
      w.__errors = [];
      w.acquireVsCodeApi = () => ({
        postMessage: (m: unknown) => (w.__sent as unknown[]).push(JSON.parse(JSON.stringify(m))),
        getState: () => JSON.parse(sessionStorage.getItem("vscodeState") ?? "null") ?? undefined,
        setState: (s: unknown) => sessionStorage.setItem("vscodeState", JSON.stringify(s)),
      });
      document.addEventListener("securitypolicyviolation", (e) => (w.__csp as string[]).push(`${e.violatedDirective} ${e.blockedURI}`));
      window.addEventListener("error", (e) => {
        // Chromium reports resize notifications left for the next frame as an "error"; it is
        // not one (nothing is lost: the observers get them a frame later), and whether it
        // happens depends on timing.
        if (/^ResizeObserver loop completed with undelivered notifications/.test(String(e.message))) return;
        (w.__errors as string[]).push(String(e.message));
      });
      document.addEventListener("DOMContentLoaded", () => {
        for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(`--vscode-${k}`, v);
        document.body.classList.add(bodyClass);
      });
    },
    theme,
  );
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${ORIGIN}/index.html`);
  await waitForSent(page, (m) => m.type === "ready");
  return page;
}

export async function sent(page: Page): Promise<WebviewMessage[]> {
  return page.evaluate(() => (window as unknown as { __sent: WebviewMessage[] }).__sent);
}

export async function clearSent(page: Page): Promise<void> {
  await page.evaluate(() => ((window as unknown as { __sent: unknown[] }).__sent.length = 0));
}

/** waitForSent waits until the webview has posted a message matching pred, and returns it. */
export async function waitForSent(page: Page, pred: (m: WebviewMessage) => boolean, timeout = 10_000): Promise<WebviewMessage> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const m = (await sent(page)).find(pred);
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`the webview did not post the expected message; it posted ${JSON.stringify(await sent(page)).slice(0, 2000)}`);
    await page.waitForTimeout(25);
  }
}

/** edits returns every op the webview has sent, in order. */
export async function edits(page: Page): Promise<FlowOp[]> {
  return (await sent(page)).flatMap((m) => (m.type === "edit" ? m.ops : []));
}

export async function waitForOps(page: Page, n = 1): Promise<FlowOp[]> {
  await waitForSent(page, () => true);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ops = await edits(page);
    if (ops.length >= n) return ops;
    if (Date.now() > deadline) throw new Error(`expected ${n} ops, got ${JSON.stringify(ops)}`);
    await page.waitForTimeout(25);
  }
}

export async function hostPost(page: Page, m: HostMessage): Promise<void> {
  await page.evaluate((msg) => window.postMessage(msg, "*"), m);
}

export async function showFlow(page: Page, r: LoadFlowResult, patterns?: PatternInfo[], version = 1): Promise<void> {
  if (patterns) await hostPost(page, { type: "patterns", patterns });
  await hostPost(page, { type: "flow", version, flow: r.flow, diagnostics: r.diagnostics });
  if ((r.flow?.agents?.length ?? 0) > 0) await page.locator(".react-flow__node").first().waitFor();
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTEFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTEFACTS, `${name}.png`) });
}

/**
 * docsImage takes a screenshot as an artefact and, when DOCS_IMAGES is set, as the README's
 * docs/images/<name>.png: the tour's pictures come from the browser tests, e.g.
 *   npm run build:webview && node extension/webview/build.mjs --tests && DOCS_IMAGES=1 node --test --test-concurrency=1 out/test/webview/browser/
 */
export async function docsImage(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  if (!process.env.DOCS_IMAGES) return;
  const dir = join(ROOT, "docs/images");
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`) });
}

/** problems are CSP violations, remote requests and script errors the page recorded. */
export async function pageProblems(page: Page): Promise<{ csp: string[]; remote: string[]; errors: string[] }> {
  return page.evaluate(() => {
    const w = window as unknown as { __csp: string[]; __remote: string[]; __errors: string[] };
    return { csp: w.__csp, remote: w.__remote, errors: w.__errors };
  });
}

export async function viewport(page: Page): Promise<{ x: number; y: number; zoom: number }> {
  return page.evaluate(() => {
    const t = getComputedStyle(document.querySelector(".react-flow__viewport")!).transform;
    const m = new DOMMatrix(t);
    return { x: m.e, y: m.f, zoom: m.a };
  });
}

/** useBrowser launches the test file's one Chromium before its tests and closes it after them. */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error("no browser: useBrowser's before hook has not run");
    return browser;
  };
}

/** noProblems asserts the page recorded no CSP violation, remote request or script error. */
export async function noProblems(page: Page): Promise<void> {
  assert.deepEqual(await pageProblems(page), { csp: [], remote: [], errors: [] });
}
