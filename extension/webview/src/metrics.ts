// The label font and the canvas's smallest text, measured in the page: the theme's font,
// whatever it is. The drawing sizes labels from them (drawing.ts), the first view its zoom floor.
import { ESTIMATED_METRICS, type LabelMetrics } from "./drawing";

/**
 * The smallest text a person should have to read, in px on screen: VS Code's own smallest UI
 * text (the status bar's, the tabs' descriptions) is 11 to 12 px. The first view never zooms out
 * further than this lets the canvas's smallest text be.
 */
export const READABLE_PX = 11;

/** readableZoom is the zoom at which the canvas's smallest text is READABLE_PX on screen. */
export function readableZoom(m: LabelMetrics): number {
  return Math.min(1.5, READABLE_PX / m.smallText);
}

/**
 * The smallest text the canvas draws, in px at 100%: every kind of small text a card, a label or
 * a problem marker has, measured in a hidden probe (their sizes are the stylesheet's, relative to
 * the theme's font size).
 */
const SMALL_TEXT_PROBE =
  '<div class="ac-node-meta"><span class="ac-role">r</span><span class="ac-badge">b</span></div>' +
  '<div class="ac-node-head"><span class="ac-badge ac-problems">1</span></div>' +
  '<div class="ac-run-line"><span class="ac-run-state">s</span><span class="ac-badge">m</span></div><div class="ac-run-spend">s</div>' +
  '<div class="ac-node-diags"><div class="ac-diag">d</div></div>';
const LABEL_PROBE = '<div class="ac-edge-line"><span class="ac-edge-ix">i</span><span class="ac-edge-text">t</span><span class="ac-badge ac-problems">1</span></div><div class="ac-edge-counters">c</div>';

/** smallText is the smallest font size, in px, of the canvas's text (cards, labels, markers). */
function smallText(host: HTMLElement): number {
  const card = document.createElement("div");
  card.className = "ac-node ac-probe";
  card.innerHTML = SMALL_TEXT_PROBE;
  const label = document.createElement("div");
  label.className = "ac-edge-label ac-probe";
  label.innerHTML = LABEL_PROBE;
  const marker = document.createElement("button");
  marker.className = "ac-marker ac-probe";
  marker.textContent = "1";
  host.append(card, label, marker);
  const sizes = [...card.querySelectorAll("span, div"), ...label.querySelectorAll("span, div"), marker]
    .filter((e) => e.childElementCount === 0)
    .map((e) => parseFloat(getComputedStyle(e).fontSize));
  card.remove();
  label.remove();
  marker.remove();
  return Math.min(...sizes.filter((x) => x > 0), Infinity);
}

/** measureLabels measures a hidden label in the page: the font is the theme's, whatever it is. */
export function measureLabels(host: HTMLElement | null): LabelMetrics {
  if (!host) return ESTIMATED_METRICS;
  const probe = document.createElement("div");
  probe.className = "ac-edge-label ac-probe";
  const line = (n: number) => `<div class="ac-edge-line"><span class="ac-edge-text">${"0".repeat(n)}</span></div>`;
  host.append(probe);
  probe.innerHTML = line(10);
  const w10 = probe.getBoundingClientRect().width;
  const h1 = probe.getBoundingClientRect().height;
  probe.innerHTML = line(30) + line(1);
  const w30 = probe.getBoundingClientRect().width;
  const h2 = probe.getBoundingClientRect().height;
  probe.remove();
  const char = (w30 - w10) / 20;
  if (!(char > 0) || !(h1 > 0) || !(h2 > h1)) return ESTIMATED_METRICS;
  const small = smallText(host);
  return { char, chrome: w10 - 10 * char, line: h1, lineStep: h2 - h1, smallText: Number.isFinite(small) ? small : ESTIMATED_METRICS.smallText };
}

