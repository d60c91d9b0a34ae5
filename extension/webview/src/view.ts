// Where the view opens: the whole flow when it fits at a readable size, else at the readable
// zoom on the flow's entry (its first layer: the orchestrators, the managers), the rest a pan
// or the minimap away. A picture shrunk until its text is 6 px high is not a picture of anything.
// Pure: unit-tested.
import type { Rect } from "./edgeGeometry";

/** The canvas's size on screen and the room kept clear at each side (the toolbar, the legend). */
export interface Pane {
  width: number;
  height: number;
  pad: { top: number; right: number; bottom: number; left: number };
}

export interface View {
  x: number;
  y: number;
  zoom: number;
}

/**
 * openingView is the view a flow opens at (and Fit goes to): the whole flow centred, at most at
 * maxZoom; when that would take the zoom below floor, the floor, with the flow's entry at the
 * left: its leftmost column, centred across when it fits, from its top when it does not.
 */
export function openingView(nodes: Rect[], pane: Pane, floor: number, maxZoom = 1): View {
  if (nodes.length === 0) return { x: 0, y: 0, zoom: Math.max(floor, Math.min(1, maxZoom)) };
  const x0 = Math.min(...nodes.map((n) => n.x));
  const y0 = Math.min(...nodes.map((n) => n.y));
  const x1 = Math.max(...nodes.map((n) => n.x + n.width));
  const y1 = Math.max(...nodes.map((n) => n.y + n.height));
  const room = { width: Math.max(1, pane.width - pane.pad.left - pane.pad.right), height: Math.max(1, pane.height - pane.pad.top - pane.pad.bottom) };
  const fit = Math.min(room.width / (x1 - x0 || 1), room.height / (y1 - y0 || 1), maxZoom);
  if (fit >= floor) {
    return { zoom: fit, x: pane.pad.left + (room.width - (x1 - x0) * fit) / 2 - x0 * fit, y: pane.pad.top + (room.height - (y1 - y0) * fit) / 2 - y0 * fit };
  }
  const zoom = floor;
  const column = entryColumn(nodes);
  const top = Math.min(...column.map((n) => n.y));
  const bottom = Math.max(...column.map((n) => n.y + n.height));
  const y = (bottom - top) * zoom <= room.height ? pane.pad.top + (room.height - (bottom - top) * zoom) / 2 - top * zoom : pane.pad.top - top * zoom;
  // across, the flow from its left edge; a flow narrower than the view is centred across
  const x = (x1 - x0) * zoom <= room.width ? pane.pad.left + (room.width - (x1 - x0) * zoom) / 2 - x0 * zoom : pane.pad.left - x0 * zoom;
  return { x, y, zoom };
}

/**
 * entryColumn is the flow's first layer as the layout draws it: the nodes that start within half
 * a card of the leftmost one (each part of a flow is laid out in layers from the left, and the
 * parts are packed in rows, so their first layers line up at the left).
 */
export function entryColumn(nodes: Rect[]): Rect[] {
  const first = nodes.reduce((a, b) => (b.x < a.x ? b : a));
  return nodes.filter((n) => n.x < first.x + first.width / 2);
}
