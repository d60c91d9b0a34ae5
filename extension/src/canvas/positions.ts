// Position conversions for the host. The sidecar's model spans count columns in Unicode code
// points (1-based); VS Code counts UTF-16 code units (0-based).

/** utf16Character is the 0-based UTF-16 character of a 1-based code-point column in lineText. */
export function utf16Character(lineText: string, column: number): number {
  let ch = 0;
  let cps = 1;
  for (const c of lineText) {
    if (cps >= column) break;
    ch += c.length;
    cps++;
  }
  return ch;
}

/** nearestSpan finds the span of path or of its nearest ancestor that has one. */
export function nearestSpan<T>(spans: Record<string, T> | null | undefined, path: string): T | undefined {
  if (!spans) return undefined;
  for (let p = path; ; p = p.slice(0, Math.max(0, p.lastIndexOf("/")))) {
    if (spans[p] !== undefined) return spans[p];
    if (p === "") return undefined;
  }
}

/** debounce calls fn once, ms after the last call. */
export function debounce(fn: () => void, ms: number): { (): void; cancel(): void } {
  let t: ReturnType<typeof setTimeout> | undefined;
  const f = () => {
    if (t) clearTimeout(t);
    t = setTimeout(() => {
      t = undefined;
      fn();
    }, ms);
  };
  f.cancel = () => t && clearTimeout(t);
  return f;
}
