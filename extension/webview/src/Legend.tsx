// The legend: each interaction's colour (and line style, past twelve), pattern and number of
// edges, in file order. Hovering an entry makes that interaction's edges stand out; choosing it
// selects them (so the next edge drawn joins it, and the inspector shows it). A long legend
// scrolls, a whole entry at a time: its height is a whole number of entries, so none is cut.
import { useLayoutEffect, useRef, useState } from "react";
import type { Interaction } from "../../src/canvas/protocol";
import { interactionClass } from "./elements";

/** The most of the canvas's height the legend's list takes. */
const LEGEND_SHARE = 0.3;

export function Legend(props: { interactions: Interaction[]; selected?: string; onSelect: (interactionId: string) => void; onHover: (interactionId: string | undefined) => void }) {
  const list = useRef<HTMLUListElement>(null);
  const [maxHeight, setMaxHeight] = useState<number>();
  const count = props.interactions.length;
  useLayoutEffect(() => {
    const ul = list.current;
    const canvas = ul?.closest(".ac-canvas");
    const row = ul?.querySelector("li")?.getBoundingClientRect().height;
    if (!ul || !canvas || !row) return;
    const fit = () => setMaxHeight(Math.max(1, Math.floor((canvas.getBoundingClientRect().height * LEGEND_SHARE) / row)) * row);
    fit();
    const ro = new ResizeObserver(fit);
    ro.observe(canvas);
    return () => ro.disconnect();
  }, [count]);
  if (count === 0) return null;
  return (
    <nav className="ac-legend" aria-label="Interactions" data-testid="legend" onMouseLeave={() => props.onHover(undefined)}>
      <ul ref={list} style={maxHeight ? { maxHeight } : undefined}>
        {props.interactions.map((it, i) => (
          <li key={it.id}>
            <button
              type="button"
              className={`ac-legend-item ${interactionClass(i)}${props.selected === it.id ? " selected" : ""}`}
              aria-pressed={props.selected === it.id}
              onClick={() => props.onSelect(it.id)}
              onMouseEnter={() => props.onHover(it.id)}
              onFocus={() => props.onHover(it.id)}
              onBlur={() => props.onHover(undefined)}
              title={`Select the edges of ${it.id}${it.dependsOn?.length ? ` (runs after ${it.dependsOn.join(", ")})` : ""}`}
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
