import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { canvasHtml, contentSecurityPolicy, newNonce } from "../../../src/canvas/html";
import { debounce, nearestSpan, utf16Character } from "../../../src/canvas/positions";

test("the page's CSP allows only our nonce'd script and our resources; nothing remote, no inline styles", () => {
  const src = "https://file+.vscode-resource.vscode-cdn.net";
  const nonce = newNonce();
  assert.match(nonce, /^[A-Za-z0-9]{32}$/);
  assert.notEqual(nonce, newNonce());
  const csp = contentSecurityPolicy(src, nonce);
  const dirs = Object.fromEntries(csp.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1)]));
  assert.deepEqual(dirs["default-src"], ["'none'"]);
  assert.deepEqual(dirs["script-src"], [`'nonce-${nonce}'`]);
  assert.deepEqual(dirs["style-src"], [src]);
  assert.deepEqual(dirs["worker-src"], ["blob:"]);
  assert.ok(!csp.includes("unsafe"), csp);
  const html = canvasHtml({ cspSource: src, nonce, scriptUri: `${src}/canvas.js`, styleUri: `${src}/canvas.css`, workerUri: `${src}/layout-worker.js` });
  assert.match(html, new RegExp(`<script nonce="${nonce}" src="${src.replace(/[.+]/g, "\\$&")}/canvas.js"></script>`));
  assert.match(html, /data-layout-worker="https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/layout-worker\.js"/);
  // Every URL in the page is under cspSource.
  for (const m of html.matchAll(/(?:src|href)="([^"]+)"/g)) assert.ok(m[1].startsWith(src), m[1]);
});

test("code-point columns become UTF-16 characters", () => {
  assert.equal(utf16Character("name: Coder", 7), 6);
  assert.equal(utf16Character("a: 😀x", 4), 3); // before the emoji
  assert.equal(utf16Character("a: 😀x", 5), 5); // the emoji is one code point but two UTF-16 units
  assert.equal(utf16Character("ü", 9), 1); // clamped to the line
});

test("reveal falls back to the nearest enclosing span", () => {
  const spans = { "": 0, "/agents": 1, "/agents/0": 2 };
  assert.equal(nearestSpan(spans, "/agents/0/name"), 2);
  assert.equal(nearestSpan(spans, "/interactions/3"), 0);
  assert.equal(nearestSpan({ "/agents": 1 }, "/x"), undefined);
  assert.equal(nearestSpan(null, "/x"), undefined);
});

test("debounce runs once after the last call", async () => {
  let n = 0;
  const d = debounce(() => n++, 5);
  d();
  d();
  d();
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(n, 1);
  d();
  d.cancel();
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(n, 1);
});

test("the stylesheet takes its colours from VS Code's theme variables only", () => {
  const css = readFileSync(new URL("../../../../extension/webview/src/canvas.css", import.meta.url), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
  // our own custom properties (--ac-*) hold colours too: they are checked like any colour
  const colourProps = /^(?:color|background(?:-color)?|border(?:-\w+)*|outline(?:-color)?|fill|stroke|box-shadow|--xy-[\w-]+|--ac-[\w-]+)$/;
  let checked = 0;
  for (const m of css.matchAll(/([\w-]+)\s*:\s*([^;{}]+);/g)) {
    const [, prop, value] = m;
    if (!colourProps.test(prop)) continue;
    checked++;
    const vars = [...value.matchAll(/var\((--[\w-]+)/g)].map((v) => v[1]);
    for (const v of vars) assert.ok(v.startsWith("--vscode-") || v.startsWith("--xy-") || v.startsWith("--ac-"), `${prop}: ${value} uses ${v}`);
    const literal = value.replace(/var\([^()]*(?:\([^()]*\))?[^()]*\)/g, "");
    assert.doesNotMatch(literal, /#[0-9a-f]{3,8}\b|rgba?\(|hsla?\(|\b(?:white|black|red|blue|green|gr[ae]y|yellow|orange|purple)\b/i, `${prop}: ${value}`);
  }
  assert.ok(checked > 50, `checked ${checked} declarations`);
});
