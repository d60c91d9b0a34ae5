// The pattern palette: the 20 patterns, searchable, each with its doc; Insert sends an
// insertPattern operation and the sidecar expands it into a subgraph.
import { useId, useMemo, useState } from "react";
import type { PatternInfo } from "../../src/canvas/protocol";
import { Markdown } from "./markdown";

/** The drag-and-drop type of a pattern dragged from the palette onto the canvas. */
export const PATTERN_MIME = "application/x-agentcanvas-pattern";

/** roleNames lists a pattern's roles for people: "Manager ×1, Worker ×2". */
export function roleNames(p: PatternInfo): string {
  if (typeof p.roles === "string") return p.roles;
  return (p.roles ?? []).map((r) => (typeof r === "string" ? r : `${r.name || r.role}${r.count ? ` ×${r.count}` : ""}`)).join(", ");
}

/** matchPattern reports whether every word of the query occurs in the pattern's text. */
export function matchPattern(p: PatternInfo, query: string): boolean {
  const hay = [p.id, p.patternId, p.name, p.topology, roleNames(p), p.doc ?? ""]
    .join(" ")
    .toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.includes(w));
}

export function Palette(props: { patterns: PatternInfo[]; onInsert: (p: PatternInfo) => void; onClose: () => void }) {
  const [query, setQuery] = useState("");
  const [chosen, setChosen] = useState<string>();
  const searchId = useId();
  const shown = useMemo(() => props.patterns.filter((p) => matchPattern(p, query)), [props.patterns, query]);
  const current = shown.find((p) => p.id === chosen) ?? undefined;
  return (
    <aside className="ac-panel ac-palette" aria-label="Patterns" data-testid="palette">
      <header className="ac-panel-head">
        <h2>Patterns</h2>
        <button type="button" className="ac-icon-button" onClick={props.onClose} aria-label="Hide the patterns">
          ×
        </button>
      </header>
      <div className="ac-panel-body">
        <label htmlFor={searchId} className="ac-visually-hidden">
          Search patterns
        </label>
        <input
          id={searchId}
          type="search"
          className="ac-search"
          placeholder="Search patterns"
          value={query}
          onChange={(e) => setQuery(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && shown.length > 0) setChosen((current ?? shown[0]).id);
          }}
        />
        {props.patterns.length === 0 ? <p className="ac-hint">Loading patterns…</p> : null}
        <ul className="ac-pattern-list" aria-label="Pattern list">
          {shown.map((p) => (
            <li key={p.id}>
              <button
                type="button"
                className={`ac-pattern${p.id === current?.id ? " chosen" : ""}`}
                aria-pressed={p.id === current?.id}
                data-pattern={p.patternId}
                onClick={() => setChosen(p.id === chosen ? undefined : p.id)}
                onDoubleClick={() => props.onInsert(p)}
                draggable
                onDragStart={(e) => {
                  e.dataTransfer.setData(PATTERN_MIME, p.patternId);
                  e.dataTransfer.effectAllowed = "copy";
                }}
                title="Click for its doc; double-click, or drag onto the canvas, to insert"
              >
                <span className="ac-pattern-id">{p.id}</span>
                <span className="ac-pattern-name">{p.name}</span>
                <span className="ac-pattern-topology">{p.patternId}</span>
              </button>
            </li>
          ))}
        </ul>
        {shown.length === 0 && props.patterns.length > 0 ? <p className="ac-hint">No pattern matches “{query}”.</p> : null}
        {current ? (
          <section className="ac-pattern-doc" aria-label={`${current.name} documentation`}>
            <button type="button" className="ac-primary" onClick={() => props.onInsert(current)}>
              Insert {current.patternId}
            </button>
            <div className="ac-pattern-facts">
              <div>
                <b>Topology</b> {current.topology}
              </div>
              <div>
                <b>Roles</b> {roleNames(current)}
              </div>
            </div>
            {current.doc ? <Markdown text={current.doc} /> : null}
          </section>
        ) : null}
      </div>
    </aside>
  );
}
