// Every edge's drawn shape and label place, kept outside React's props: the canvas computes them
// for all edges at once (labels keep clear of each other), and each edge component subscribes to
// its own entry, so moving one node re-renders the edges whose drawing changed, not all of them.
import type { DrawnEdge, DrawnLabel } from "./drawing";
import type { EdgeGeometry } from "./edgeGeometry";
import type { PlacedLabel } from "./labelPlacement";

export type { DrawnEdge };

const sameRoute = (a?: EdgeGeometry["route"], b?: EdgeGeometry["route"]) => a === b || (!!a && !!b && a.length === b.length && a.every((p, i) => p.x === b[i].x && p.y === b[i].y));

const sameGeometry = (a: EdgeGeometry, b: EdgeGeometry) =>
  sameRoute(a.route, b.route) &&
  a.sourceSide === b.sourceSide && a.targetSide === b.targetSide && [a.p0, a.p1, a.p2, a.p3].every((p, i) => p.x === [b.p0, b.p1, b.p2, b.p3][i].x && p.y === [b.p0, b.p1, b.p2, b.p3][i].y);

const samePlace = (a: PlacedLabel | undefined, b: PlacedLabel | undefined) =>
  a === b || (!!a && !!b && a.x === b.x && a.y === b.y && a.form === b.form && a.free === b.free && a.width === b.width && a.height === b.height);

const sameLabel = (a: DrawnLabel | undefined, b: DrawnLabel | undefined) =>
  a === b || (!!a && !!b && samePlace(a.place, b.place) && JSON.stringify(a.form) === JSON.stringify(b.form) && a.problems === b.problems && a.severity === b.severity);

const same = (a: DrawnEdge, b: DrawnEdge) => sameLabel(a.label, b.label) && samePlace(a.marker, b.marker) && sameGeometry(a.geometry, b.geometry);

export class DrawnEdges {
  private map: ReadonlyMap<string, DrawnEdge> = new Map();
  private listeners = new Set<() => void>();

  get = (id: string): DrawnEdge | undefined => this.map.get(id);

  /** all is every edge's drawing, as last set. */
  all = (): ReadonlyMap<string, DrawnEdge> => this.map;

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
