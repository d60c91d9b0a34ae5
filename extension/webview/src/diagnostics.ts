// Diagnostics drawn on the canvas: each goes to the node or edge whose model path is the
// longest prefix of the diagnostic's path; one on an interaction goes to all of its edges; the
// rest (file-level, syntax) are listed in the banner.
import type { Diagnostic, FlowModel, Severity } from "../../src/canvas/protocol";

export interface DiagnosticIndex {
  nodes: Map<string, Diagnostic[]>; // by node id
  edges: Map<string, Diagnostic[]>; // by edge id
  flow: Diagnostic[]; // not on any element
}

/** isPathPrefix reports whether prefix is p or an ancestor of p as a JSON pointer. */
export function isPathPrefix(prefix: string, p: string): boolean {
  return p === prefix || (p.startsWith(prefix) && p.charAt(prefix.length) === "/");
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, "/").replace(/~0/g, "~");
}

// diags may be null: Go marshals an empty slice as null.
export function indexDiagnostics(flow: FlowModel | null, diags: Diagnostic[] | null): DiagnosticIndex {
  const idx: DiagnosticIndex = { nodes: new Map(), edges: new Map(), flow: [] };
  const push = (m: Map<string, Diagnostic[]>, k: string, d: Diagnostic) => {
    const l = m.get(k);
    if (l) l.push(d);
    else m.set(k, [d]);
  };
  // Element paths, by owner.
  const owners: Array<{ path: string; node?: string; edges?: string[] }> = [];
  const nodeIds = new Set<string>();
  for (const a of flow?.agents ?? []) {
    owners.push({ path: a.path, node: a.id });
    nodeIds.add(a.id);
  }
  for (const s of flow?.systemNodes ?? []) {
    owners.push({ path: s.path, node: s.id });
    nodeIds.add(s.id);
  }
  for (const it of flow?.interactions ?? []) {
    const edges = it.edges ?? [];
    owners.push({ path: it.path, edges: edges.map((e) => e.id) });
    for (const e of edges) owners.push({ path: e.path, edges: [e.id] });
  }
  for (const d of diags ?? []) {
    const p = d.path ?? "";
    let best: (typeof owners)[number] | undefined;
    if (p) {
      for (const o of owners) {
        if (o.path && isPathPrefix(o.path, p) && (!best || o.path.length > best.path.length)) best = o;
      }
    }
    if (!best && p.startsWith("/layout/nodes/")) {
      const id = unescapePointer(p.slice("/layout/nodes/".length).split("/")[0]);
      if (nodeIds.has(id)) best = { path: p, node: id };
    }
    if (!best || (best.edges && best.edges.length === 0)) {
      idx.flow.push(d);
    } else if (best.node !== undefined) {
      push(idx.nodes, best.node, d);
    } else {
      for (const e of best.edges ?? []) push(idx.edges, e, d);
    }
  }
  return idx;
}

const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1 };

/** worstSeverity is the most severe of ds, or undefined for none. */
export function worstSeverity(ds: Diagnostic[] | undefined): Severity | undefined {
  let w: Severity | undefined;
  for (const d of ds ?? []) if (!w || RANK[d.severity] > RANK[w]) w = d.severity;
  return w;
}

/** syntaxError is the diagnostic that means the text is not a readable flow, if any. */
export function syntaxError(flow: FlowModel | null, diags: Diagnostic[] | null): Diagnostic | undefined {
  diags = diags ?? [];
  const d = diags.find((x) => x.code === "yaml-syntax" && x.severity === "error");
  if (d) return d;
  if (!flow) {
    return (
      diags.find((x) => x.severity === "error") ?? {
        file: "",
        range: { start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 1, offset: 0 } },
        severity: "error",
        code: "yaml-syntax",
        message: "the flow could not be read",
      }
    );
  }
  return undefined;
}
