// The legend: each interaction's colour, pattern and label, in file order. Choosing an entry
// selects that interaction's edges (so the next edge drawn joins it, and the inspector shows it).
import type { Interaction } from "../../src/canvas/protocol";
import { interactionClass } from "./elements";

export function Legend(props: { interactions: Interaction[]; selected?: string; onSelect: (interactionId: string) => void }) {
  if (props.interactions.length === 0) return null;
  return (
    <nav className="ac-legend" aria-label="Interactions" data-testid="legend">
      <ul>
        {props.interactions.map((it, i) => (
          <li key={it.id}>
            <button type="button" className={`ac-legend-item ${interactionClass(i)}${props.selected === it.id ? " selected" : ""}`} aria-pressed={props.selected === it.id} onClick={() => props.onSelect(it.id)} title={`Select the edges of ${it.id}`}>
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
