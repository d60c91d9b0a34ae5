// What a person sees of a canvas, read from the DOM: every node's box and every edge label's,
// and what is wrong with the labels. Runs in the page (page.evaluate / frame.evaluate), so it is
// self-contained. Used by the browser tests and by the end-to-end test in code-server.
//
// A label is readable when it overlaps no node and no other label, lies inside the canvas,
// nothing covers it (what the page has at its corners and middle is the label itself), and its
// text is whole: wrapped between words on its lines, never cut, never shortened with an ellipsis.

/** @returns {{ nodes: Array<{id: string, x: number, y: number, width: number, height: number}>, labels: Array<{id: string, text: string, title: string, x: number, y: number, width: number, height: number}>, problems: string[] }} */
export function readability() {
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.left, y: r.top, width: r.width, height: r.height };
  };
  const overlap = (a, b) => a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;
  const pane = box(document.querySelector(".react-flow"));
  const nodes = [...document.querySelectorAll(".react-flow__node")].map((n) => ({ id: n.dataset.id, ...box(n) }));
  const elements = [...document.querySelectorAll(".ac-edge-label:not(.ac-probe)")];
  const labels = elements.map((l) => ({
    id: (l.dataset.testid || "").replace(/^edge-label-/, ""),
    text: [...l.querySelectorAll(".ac-edge-text")].map((t) => t.textContent).join(" "),
    title: l.title || "",
    ...box(l),
  }));
  const problems = [];
  labels.forEach((l, i) => {
    const el = elements[i];
    for (const n of nodes) if (overlap(l, n)) problems.push(`label ${l.id} overlaps node ${n.id}`);
    for (const m of labels.slice(i + 1)) if (overlap(l, m)) problems.push(`labels ${l.id} and ${m.id} overlap`);
    if (l.x < pane.x || l.y < pane.y || l.x + l.width > pane.x + pane.width || l.y + l.height > pane.y + pane.height) {
      problems.push(`label ${l.id} is cut by the canvas's edge`);
    } else {
      const inset = Math.min(4, l.width / 4, l.height / 4); // small when the view is zoomed out
      const spots = [
        [l.x + inset, l.y + inset],
        [l.x + l.width - inset, l.y + inset],
        [l.x + inset, l.y + l.height - inset],
        [l.x + l.width - inset, l.y + l.height - inset],
        [l.x + l.width / 2, l.y + l.height / 2],
      ];
      for (const [x, y] of spots) {
        const at = document.elementFromPoint(x, y);
        if (!at || !el.contains(at)) {
          problems.push(`label ${l.id} is covered at (${Math.round(x)}, ${Math.round(y)}) by ${at ? `${at.tagName.toLowerCase()}.${String(at.className?.baseVal ?? at.className).split(" ").join(".")}` : "nothing"}`);
          break;
        }
      }
    }
    if (!el.querySelector(".ac-edge-text")) problems.push(`label ${l.id} has no text`);
    for (const line of el.querySelectorAll(".ac-edge-line")) if (line.scrollWidth > line.clientWidth + 1) problems.push(`label ${l.id}'s line is cut: ${JSON.stringify(line.textContent)}`);
    if (el.textContent.includes("…")) problems.push(`label ${l.id} is shortened: ${JSON.stringify(el.textContent)}`);
  });
  return { nodes, labels, problems };
}

/**
 * settled resolves once the nodes, the labels and the view stop moving (measuring nodes and
 * placing labels take a few frames after a model arrives). Runs in the page; waits for a
 * condition, never for a time.
 */
export async function settled() {
  const frame = () => new Promise((r) => requestAnimationFrame(() => r(undefined)));
  // the first view comes once the nodes are measured: a canvas with a flow waits for it
  for (let i = 0; i < 500 && document.querySelector(".react-flow__node") && !document.querySelector('.ac-canvas[data-opened="true"]'); i++) await frame();
  const shot = () =>
    JSON.stringify([...document.querySelectorAll(".ac-edge-label, .react-flow__node, .react-flow__viewport")].map((e) => [e.getBoundingClientRect().toJSON(), getComputedStyle(e).transform]));
  let last = "";
  for (let i = 0; i < 500; i++) {
    await frame();
    await frame();
    const now = shot();
    if (now === last) return;
    last = now;
  }
  throw new Error("the canvas kept moving");
}
