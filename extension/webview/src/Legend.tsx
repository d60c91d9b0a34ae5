// The legend: each interaction's colour (and line style, past twelve), pattern and number of
// edges, in file order, beside the flow above the minimap. Hovering an entry makes that
// interaction's edges stand out; choosing it selects them (so the next edge drawn joins it, and
// the inspector shows it). A long legend scrolls, a whole entry at a time: its height is a whole
// number of entries (in the room the minimap leaves), so none is cut.
import { useLayoutEffect, useRef, useState } from "react";
import type { Interaction } from "../../src/canvas/protocol";
import { interactionClass } from "./elements";

/** The gutter at the legend's left where dependsOn connectors run, and the room between lanes. */
const GUTTER = 18;
const LANE = 4;

/** A dependsOn connector: from the entry of the interaction that runs first to the one that waits for it. */
interface Dependency {
  from: string;
  to: string;
}

/** dependencies are the flow's dependsOn pairs whose both ends are listed. */
export function dependencies(interactions: Interaction[]): Dependency[] {
  const ids = new Set(interactions.map((i) => i.id));
  return interactions.flatMap((it) => (it.dependsOn ?? []).filter((d) => ids.has(d) && d !== it.id).map((d) => ({ from: d, to: it.id })));
}

/**
 * Connectors draws each dependsOn as a dashed arc in the legend's gutter, from the entry that
 * runs first to the entry that waits for it (the arrowhead), in the list's own coordinates so it
 * scrolls with the entries.
 */
function Connectors({ deps, rows, height }: { deps: Dependency[]; rows: Map<string, number>; height: number }) {
  return (
    <svg className="ac-legend-deps" width={GUTTER} height={height} aria-hidden="true">
      {deps.map((d, i) => {
        const y0 = rows.get(d.from);
        const y1 = rows.get(d.to);
        if (y0 === undefined || y1 === undefined) return null;
        const x = GUTTER - 2;
        const bend = 2 + (i % 3) * LANE; // lanes, so arcs over the same rows stay apart
        return (
          <g key={`${d.from}>${d.to}`} className="ac-dep" data-from={d.from} data-to={d.to}>
            <path d={`M${x},${y0} C${bend},${y0} ${bend},${y1} ${x},${y1}`} />
            <path className="ac-dep-arrow" d={`M${x},${y1} l-5,-3 v6 z`} />
          </g>
        );
      })}
    </svg>
  );
}

export function Legend(props: { interactions: Interaction[]; selected?: string; onSelect: (interactionId: string) => void; onHover: (interactionId: string | undefined) => void }) {
  const list = useRef<HTMLUListElement>(null);
  const [maxHeight, setMaxHeight] = useState<number>();
  const [rows, setRows] = useState<{ at: Map<string, number>; height: number }>({ at: new Map(), height: 0 });
  const count = props.interactions.length;
  const deps = dependencies(props.interactions);
  const depKey = deps.map((d) => `${d.from}>${d.to}`).join(",");
  // where each entry's middle is in the list, for the connectors
  useLayoutEffect(() => {
    const ul = list.current;
    if (!ul || !depKey) return;
    const at = new Map<string, number>();
    ul.querySelectorAll<HTMLElement>("li[data-id]").forEach((li) => at.set(li.dataset.id!, li.offsetTop + li.offsetHeight / 2));
    setRows({ at, height: ul.scrollHeight });
  }, [depKey, props.interactions]);
  useLayoutEffect(() => {
    const ul = list.current;
    const side = ul?.closest<HTMLElement>(".ac-side");
    const row = ul?.querySelector("li")?.getBoundingClientRect().height;
    if (!ul || !side || !row) return;
    // the column's height, less its padding, the gap and whatever else stands in it (the minimap)
    const fit = () => {
      const css = getComputedStyle(side);
      const others = [...side.children].filter((c) => !c.contains(ul)).reduce((h, c) => h + c.getBoundingClientRect().height + parseFloat(css.rowGap || "0"), 0);
      const room = side.clientHeight - parseFloat(css.paddingTop) - parseFloat(css.paddingBottom) - others;
      setMaxHeight(Math.max(1, Math.floor(room / row)) * row);
    };
    fit();
    const ro = new ResizeObserver(fit);
    ro.observe(side);
    return () => ro.disconnect();
  }, [count]);
  if (count === 0) return null;
  return (
    <nav className="ac-legend" aria-label="Interactions" data-testid="legend" onMouseLeave={() => props.onHover(undefined)}>
      <ul ref={list} style={maxHeight ? { maxHeight } : undefined} className={deps.length ? "ac-has-deps" : undefined}>
        {deps.length ? <Connectors deps={deps} rows={rows.at} height={rows.height} /> : null}
        {props.interactions.map((it, i) => (
          <li key={it.id} data-id={it.id}>
            <button
              type="button"
              className={`ac-legend-item ${interactionClass(i)}${props.selected === it.id ? " selected" : ""}`}
              aria-pressed={props.selected === it.id}
              onClick={() => props.onSelect(it.id)}
              onMouseEnter={() => props.onHover(it.id)}
              onFocus={() => props.onHover(it.id)}
              onBlur={() => props.onHover(undefined)}
              title={`Select the edges of ${it.id} (${it.patternId})${it.dependsOn?.length ? `, which runs after ${it.dependsOn.join(", ")}` : ""}`}
            >
              <svg className="ac-legend-swatch" width="22" height="8" viewBox="0 0 22 8" aria-hidden="true">
                <line x1="1" y1="4" x2="21" y2="4" />
              </svg>
              <span className="ac-legend-id">{it.id}</span>
              <span className="ac-legend-pattern">{it.patternId}</span>
              <span className="ac-legend-count">{(it.edges ?? []).length}</span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
