// The pattern picker: which pattern a new interaction uses when a connection has no
// interaction to join. A small dialog over the canvas: the 20 patterns, searchable, arrow keys
// and Enter or a click to pick, Escape to cancel. It can also offer the interactions the edge
// could join instead.
import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { Interaction, PatternInfo } from "../../src/canvas/protocol";
import { matchPattern } from "./Palette";

export interface PickerRequest {
  source: string;
  target: string;
  candidates: Interaction[];
  note?: string;
}

export function PatternPicker(props: {
  request: PickerRequest;
  patterns: PatternInfo[];
  onPick: (p: PatternInfo) => void;
  onJoin: (interactionId: string) => void;
  onCancel: () => void;
}) {
  const { request: r } = props;
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const listId = useId();
  const titleId = useId();
  const shown = useMemo(() => props.patterns.filter((p) => matchPattern(p, query)), [props.patterns, query]);
  const current = shown[Math.min(active, shown.length - 1)];
  useEffect(() => input.current?.focus(), []);
  useEffect(() => setActive(0), [query]);
  useEffect(() => {
    if (current) document.getElementById(`${listId}-${current.id}`)?.scrollIntoView({ block: "nearest" });
  }, [current, listId]);

  return (
    <div className="ac-modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && props.onCancel()}>
      <div
        className="ac-picker"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        data-testid="pattern-picker"
        onKeyDown={(e) => {
          // Escape anywhere in the dialog cancels; the canvas never sees the key.
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            props.onCancel();
          } else if (e.key === "Tab") {
            // Tab stays in the dialog (it is modal).
            const all = [...e.currentTarget.querySelectorAll<HTMLElement>("input, button")];
            const i = all.indexOf(document.activeElement as HTMLElement);
            const next = all[(i + (e.shiftKey ? -1 : 1) + all.length) % all.length];
            if (next) {
              e.preventDefault();
              e.stopPropagation();
              next.focus();
            }
          }
        }}
      >
        <h2 id={titleId}>
          New interaction {r.source} → {r.target}
        </h2>
        {r.note ? <p className="ac-hint">{r.note}</p> : null}
        {r.candidates.length > 0 ? (
          <div className="ac-picker-join" role="group" aria-label="Or add the edge to an interaction">
            <span className="ac-hint">Add to:</span>
            {r.candidates.map((it) => (
              <button key={it.id} type="button" className="ac-small" onClick={() => props.onJoin(it.id)} aria-label={`Add the edge to interaction ${it.id} (${it.patternId})`}>
                {it.id} ({it.patternId})
              </button>
            ))}
          </div>
        ) : null}
        <input
          ref={input}
          type="search"
          className="ac-search"
          placeholder="Pattern of the new interaction"
          aria-label="Search patterns for the new interaction"
          role="combobox"
          aria-expanded="true"
          aria-controls={listId}
          aria-activedescendant={current ? `${listId}-${current.id}` : undefined}
          value={query}
          onChange={(e) => setQuery(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "ArrowDown" || e.key === "ArrowUp") {
              e.preventDefault();
              if (shown.length) setActive((a) => (Math.min(a, shown.length - 1) + (e.key === "ArrowDown" ? 1 : -1) + shown.length) % shown.length);
            } else if (e.key === "Enter" && current) {
              e.preventDefault();
              props.onPick(current);
            }
          }}
        />
        {props.patterns.length === 0 ? <p className="ac-hint">Loading patterns…</p> : null}
        <ul className="ac-pattern-list ac-picker-list" role="listbox" id={listId} aria-label="Patterns">
          {shown.map((p) => (
            <li
              key={p.id}
              id={`${listId}-${p.id}`}
              role="option"
              aria-selected={p === current}
              className={`ac-pattern${p === current ? " chosen" : ""}`}
              data-pattern={p.patternId}
              title={p.summary}
              onMouseDown={(e) => e.preventDefault() /* keep focus in the search box */}
              onClick={() => props.onPick(p)}
            >
              <span className="ac-pattern-id">{p.id}</span>
              <span className="ac-pattern-name">{p.name}</span>
              <span className="ac-pattern-topology">{p.patternId}</span>
            </li>
          ))}
        </ul>
        {shown.length === 0 && props.patterns.length > 0 ? <p className="ac-hint">No pattern matches “{query}”.</p> : null}
        {current?.summary ? (
          <p className="ac-hint ac-picker-summary" aria-live="polite">
            {current.summary}
          </p>
        ) : null}
        <div className="ac-picker-actions">
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </div>
    </div>
  );
}
