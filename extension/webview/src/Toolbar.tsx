// The canvas toolbar, drawn as VS Code draws its own: codicons, the theme's button colours for
// actions, and option toggles (like the find widget's) for settings that stay on. Every control
// has a name a screen reader says and a tooltip with its key.
import { useSyncExternalStore, type ReactNode } from "react";
import { MAX_ROUTES, ROUTING_MS, type RoutingReport } from "./drawing";
import { Codicon } from "./elements";

/** Long work (Tidy): what it is and how far it has got (0…1, unknown when absent). */
export interface Busy {
  label: string;
  fraction?: number;
}

/** BusyState holds the long work going on; only the toolbar re-renders as it progresses. */
export class BusyState {
  private value: Busy | undefined;
  private listeners = new Set<() => void>();
  get = () => this.value;
  subscribe = (l: () => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  set(v: Busy | undefined) {
    this.value = v;
    for (const l of this.listeners) l();
  }
}

function Action(props: { icon: string; label: string; title: string; onClick: () => void; disabled?: boolean; primary?: boolean }) {
  return (
    <button type="button" className={`ac-tool${props.primary ? " ac-tool-primary" : ""}`} onClick={props.onClick} disabled={props.disabled} title={props.title}>
      <Codicon name={props.icon} />
      <span className="ac-tool-label">{props.label}</span>
    </button>
  );
}

function Toggle(props: { icon: string; label: string; title: string; pressed: boolean; onClick: () => void }) {
  return (
    <button type="button" className="ac-toggle" aria-label={props.label} aria-pressed={props.pressed} onClick={props.onClick} title={`${props.title} (${props.pressed ? "on" : "off"})`}>
      <Codicon name={props.icon} />
    </button>
  );
}

export interface ToolbarProps {
  busy: BusyState;
  snap: boolean;
  minimap: boolean;
  legend: boolean;
  onTidy: () => void;
  onFit: () => void;
  onSnap: () => void;
  onMinimap: () => void;
  onLegend: () => void;
  /** shown at the end while a run is on */
  run?: ReactNode;
}

export function Toolbar(p: ToolbarProps) {
  const busy = useSyncExternalStore(p.busy.subscribe, p.busy.get);
  return (
    <div className="ac-toolbar" role="toolbar" aria-label="Canvas tools">
      <Action icon="type-hierarchy-sub" label="Tidy" title="Lay the flow out by roles, in layers" onClick={p.onTidy} disabled={!!busy} primary />
      <Action icon="screen-full" label="Fit" title="Fit the flow in view (0)" onClick={p.onFit} />
      <span className="ac-tool-separator" role="separator" />
      <Toggle icon="magnet" label="Snap to grid" title="Snap to grid (Shift+S)" pressed={p.snap} onClick={p.onSnap} />
      <Toggle icon="map" label="Minimap" title="Minimap (M)" pressed={p.minimap} onClick={p.onMinimap} />
      <Toggle icon="symbol-color" label="Legend" title="Interaction colours" pressed={p.legend} onClick={p.onLegend} />
      {busy ? (
        <span className="ac-busy" role="status" data-testid="busy">
          <Codicon name="loading" className="codicon-modifier-spin" />
          {busy.label}
          {busy.fraction !== undefined ? ` ${Math.round(busy.fraction * 100)}%` : ""}
          <progress className="ac-progress" max={1} value={busy.fraction} aria-label={busy.label} />
        </span>
      ) : null}
      {p.run}
    </div>
  );
}

/** Why routing left edges as curves, for the person: what the limit is and what helps. */
const ROUTING_WHY: Record<NonNullable<RoutingReport["why"]>, string> = {
  routes: `routing stops after ${MAX_ROUTES} routed edges in one drawing, to keep drawing fast`,
  time: `routing stops after ${ROUTING_MS} ms in one drawing, to keep drawing fast`,
  crowded: "routing found no way around the cards near them (too many cards close together)",
};

/**
 * RoutingNote tells the person when edges are left as curves that may pass under cards (routing
 * stopped at a limit, or found no way), rather than leaving them to wonder why a line runs under
 * a card.
 */
export function RoutingNote({ routing }: { routing: RoutingReport }) {
  const n = routing.curved + (routing.unchecked ?? 0);
  if (n === 0 || !routing.why) return null;
  const them = n > 1 ? "them" : "it";
  const what = routing.unchecked
    ? `${routing.curved ? `${routing.curved} edge${routing.curved > 1 ? "s" : ""} pass${routing.curved > 1 ? "" : "es"} under cards and ` : ""}${routing.unchecked} edge${routing.unchecked > 1 ? "s were" : " was"} not checked`
    : `${n} edge${n > 1 ? "s are" : " is"} drawn as ${n > 1 ? "curves" : "a curve"} that may pass under cards`;
  return (
    <span className="ac-badge ac-routing-note" role="status" data-testid="routing-limit" title={`${what}: ${ROUTING_WHY[routing.why]}. Tidy, or moving cards apart, gives ${them} room.`}>
      <Codicon name="warning" />
      {n} edge{n > 1 ? "s" : ""} not routed
    </span>
  );
}
