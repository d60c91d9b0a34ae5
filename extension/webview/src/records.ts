// Records keyed by ids from the flow: "constructor", "toString" and "__proto__" are valid ids, so
// such a record has no prototype, and an id is only ever itself (never Object's own name, and an
// assignment to "__proto__" makes a key rather than a new prototype).

/** idRecord is an empty record without a prototype, or a copy of from as one. */
export function idRecord<T>(from?: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, from);
}
