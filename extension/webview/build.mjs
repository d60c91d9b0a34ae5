// Builds the canvas webview: out/webview/canvas.js + canvas.css (the React app, with the codicon
// font beside it) and out/webview/layout-worker.js (Tidy's layout, run off the main thread).
//   node extension/webview/build.mjs           the webview bundles
//   node extension/webview/build.mjs --tests   also the unit, browser and benchmark tests (out/test/webview)
//   node extension/webview/build.mjs --watch   rebuild the webview on change
import * as esbuild from "esbuild";
import { mkdir, readdir, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const out = join(root, "out/webview");
const args = new Set(process.argv.slice(2));

const webview = {
  entryPoints: { canvas: join(root, "extension/webview/src/main.tsx"), "layout-worker": join(root, "extension/webview/src/layoutWorker.ts") },
  outdir: out,
  bundle: true,
  format: "iife",
  platform: "browser",
  target: ["chrome120"],
  minify: !args.has("--watch"),
  sourcemap: args.has("--watch") ? "inline" : false,
  jsx: "automatic",
  define: { "process.env.NODE_ENV": args.has("--watch") ? '"development"' : '"production"' },
  logLevel: "warning",
  legalComments: "none",
  // @vscode/codicons' stylesheet points at its font: shipped beside canvas.css (font-src is the
  // webview's own origin; nothing is fetched from anywhere else).
  loader: { ".ttf": "file" },
  assetNames: "[name]",
};

await mkdir(out, { recursive: true });
await rm(join(out, "elk-worker.js"), { force: true }); // left by builds before the layout was ours

if (args.has("--watch")) {
  const ctx = await esbuild.context(webview);
  await ctx.watch();
  console.log("watching the webview sources");
} else {
  await esbuild.build(webview);
}

if (args.has("--tests")) {
  const testOut = join(root, "out/test/webview");
  await rm(testOut, { recursive: true, force: true });
  const entries = [];
  for (const dir of ["unit", "browser", "bench"]) {
    const src = join(root, "extension/webview/test", dir);
    for (const f of await readdir(src)) {
      // Test files and the benchmark; helpers are bundled into them.
      if (/\.test\.tsx?$/.test(f) || (dir === "bench" && /\.tsx?$/.test(f))) entries.push({ in: join(src, f), out: join(dir, f.replace(/\.tsx?$/, "")) });
    }
  }
  await esbuild.build({
    entryPoints: entries,
    outdir: testOut,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    format: "esm",
    platform: "node",
    target: ["node20"],
    jsx: "automatic",
    packages: "external",
    // The provider's unit test runs against a fake of the vscode API.
    alias: { vscode: join(root, "extension/webview/test/unit/fake-vscode.ts") },
    logLevel: "warning",
    sourcemap: "inline",
  });
}
