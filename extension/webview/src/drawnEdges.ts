// Every edge's drawn shape and label place, kept outside React's props: the canvas computes them
// for all edges at once (labels keep clear of each other), and each edge component subscribes to
// its own entry, so moving one node re-renders the edges whose drawing changed, not all of them.
import type { EdgeGeometry } from "./edgeGeometry";
import type { PlacedLabel } from "./labelPlacement";

/**
 * An edge as drawn: its curve, where its label goes, and the label's (possibly shortened) text;
 * no label while the canvas draws none (a big flow zoomed out, see LABEL_MIN_ZOOM).
 */
export interface DrawnEdge {
  geometry: EdgeGeometry;
  label?: PlacedLabel;
  text?: string;
}

const sameRoute = (a?: EdgeGeometry["route"], b?: EdgeGeometry["route"]) => a === b || (!!a && !!b && a.length === b.length && a.every((p, i) => p.x === b[i].x && p.y === b[i].y));

const sameGeometry = (a: EdgeGeometry, b: EdgeGeometry) =>
  sameRoute(a.route, b.route) &&
  a.sourceSide === b.sourceSide && a.targetSide === b.targetSide && [a.p0, a.p1, a.p2, a.p3].every((p, i) => p.x === [b.p0, b.p1, b.p2, b.p3][i].x && p.y === [b.p0, b.p1, b.p2, b.p3][i].y);

const sameLabel = (a: PlacedLabel | undefined, b: PlacedLabel | undefined) =>
  a === b || (!!a && !!b && a.x === b.x && a.y === b.y && a.form === b.form && a.free === b.free);

const same = (a: DrawnEdge, b: DrawnEdge) => a.text === b.text && sameLabel(a.label, b.label) && sameGeometry(a.geometry, b.geometry);

export class DrawnEdges {
  private map: ReadonlyMap<string, DrawnEdge> = new Map();
  private listeners = new Set<() => void>();

  get = (id: string): DrawnEdge | undefined => this.map.get(id);

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** set replaces the drawing; entries that did not change keep their identity (no re-render). */
  set(next: Map<string, DrawnEdge>): void {
    for (const [id, d] of next) {
      const old = this.map.get(id);
      if (old && same(old, d)) next.set(id, old);
    }
    this.map = next;
    for (const l of this.listeners) l();
  }
}
