// The canvas webview's HTML, with a strict Content-Security-Policy. Pure (no vscode import) so
// the browser tests load the very same page the extension serves.
//
// The policy:
//   default-src 'none'                 nothing that is not listed below
//   script-src 'nonce-…'               only our bundle (the nonce changes with every page)
//   style-src ${cspSource}             only our stylesheet; no 'unsafe-inline': React and React Flow
//                                      set element styles (node transforms, edge label positions)
//                                      through the CSSOM (element.style), which CSP does not govern,
//                                      and neither injects <style> elements or style="" markup
//                                      (the browser tests assert no violation is reported)
//   img-src ${cspSource} data:         icons are inline SVG; data: for any embedded image
//   font-src ${cspSource}              the workbench's codicon font, if ever used
//   connect-src ${cspSource}           the layout worker's script is fetched from our own resources…
//   worker-src blob:                   …and started from a blob: URL (a webview page may not start a
//                                      Worker from its resource origin directly)
// Nothing remote is ever loaded.

export interface CanvasHtmlOptions {
  cspSource: string; // webview.cspSource
  nonce: string;
  scriptUri: string; // asWebviewUri(out/webview/canvas.js)
  styleUri: string; // asWebviewUri(out/webview/canvas.css)
  workerUri: string; // asWebviewUri(out/webview/layout-worker.js)
  title?: string;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    `connect-src ${cspSource}`,
    "worker-src blob:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function canvasHtml(o: CanvasHtmlOptions): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(contentSecurityPolicy(o.cspSource, o.nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${escapeAttr(o.styleUri)}">
<title>${escapeAttr(o.title ?? "AgentCanvas")}</title>
</head>
<body>
<div id="root" data-layout-worker="${escapeAttr(o.workerUri)}"></div>
<script nonce="${escapeAttr(o.nonce)}" src="${escapeAttr(o.scriptUri)}"></script>
</body>
</html>
`;
}

/** newNonce is 32 random characters for script-src. */
export function newNonce(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  // Web Crypto is global in VS Code's extension host (Node ≥ 19) and in browsers; typed here so
  // this compiles with or without the DOM lib.
  const bytes = new Uint8Array(32);
  (globalThis as unknown as { crypto: { getRandomValues(a: Uint8Array): Uint8Array } }).crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => chars[b % chars.length]).join("");
}
