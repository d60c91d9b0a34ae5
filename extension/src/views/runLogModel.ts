// The run log: .agentcanvas/logs/<flow>/<date>.jsonl (docs/design.md), one event a line. Pure parsing,
// filtering and metrics for the Run Log view.

export interface LogEvent {
  line: number;
  ts: number | string | undefined;
  flow?: string;
  runId?: string;
  interactionId?: string;
  edgeId?: string;
  event: string;
  from?: string;
  to?: string;
  agentId?: string;
  raw: Record<string, unknown>;
}

export interface ParsedLog {
  events: LogEvent[];
  /** Lines that are not JSON objects with an "event": reported, never fatal. */
  errors: Array<{ line: number; message: string }>;
}

export function parseJsonl(text: string): ParsedLog {
  const events: LogEvent[] = [];
  const errors: ParsedLog['errors'] = [];
  text.split('\n').forEach((l, i) => {
    const line = i + 1;
    if (l.trim() === '') return;
    let o: unknown;
    try {
      o = JSON.parse(l);
    } catch (e) {
      errors.push({ line, message: e instanceof Error ? e.message : String(e) });
      return;
    }
    if (o === null || typeof o !== 'object' || Array.isArray(o) || typeof (o as { event?: unknown }).event !== 'string') {
      errors.push({ line, message: 'not an event object (needs a string "event")' });
      return;
    }
    const r = o as Record<string, unknown>;
    const s = (k: string) => (typeof r[k] === 'string' ? (r[k] as string) : undefined);
    events.push({
      line,
      ts: typeof r.ts === 'number' || typeof r.ts === 'string' ? (r.ts as number | string) : undefined,
      flow: s('flow'),
      runId: s('runId'),
      interactionId: s('interactionId'),
      edgeId: s('edgeId'),
      event: r.event as string,
      from: s('from'),
      to: s('to'),
      agentId: s('agentId') ?? s('agent'),
      raw: r,
    });
  });
  return { events, errors };
}

export interface LogFilter {
  runId?: string;
  events?: string[];
  agent?: string;
  interactionId?: string;
  text?: string;
}

export function filterEvents(events: LogEvent[], f: LogFilter): LogEvent[] {
  const text = f.text?.toLowerCase();
  return events.filter(
    (e) =>
      (!f.runId || e.runId === f.runId) &&
      (!f.events || f.events.length === 0 || f.events.includes(e.event)) &&
      (!f.agent || e.agentId === f.agent || e.from === f.agent || e.to === f.agent) &&
      (!f.interactionId || e.interactionId === f.interactionId) &&
      (!text || JSON.stringify(e.raw).toLowerCase().includes(text)),
  );
}

export interface RunMetrics {
  events: number;
  byEvent: Record<string, number>;
  steps: number;
  /** Messages sent per agent (the "from" of step events). */
  messagesByAgent: Record<string, number>;
  terminations: Array<{ interactionId?: string; reason: string }>;
  proposals: { created: number; applied: number; rejected: number };
  /** ms between the first and last event, when timestamps are numbers or ISO strings. */
  durationMs?: number;
  runs: string[];
  agents: string[];
  interactions: string[];
}

function tsMs(ts: number | string | undefined): number | undefined {
  if (typeof ts === 'number') return ts;
  if (typeof ts === 'string') {
    const t = Date.parse(ts);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

export function metrics(events: LogEvent[]): RunMetrics {
  const m: RunMetrics = {
    events: events.length,
    byEvent: {},
    steps: 0,
    messagesByAgent: {},
    terminations: [],
    proposals: { created: 0, applied: 0, rejected: 0 },
    runs: [],
    agents: [],
    interactions: [],
  };
  const runs = new Set<string>();
  const agents = new Set<string>();
  const inters = new Set<string>();
  let first: number | undefined;
  let last: number | undefined;
  for (const e of events) {
    m.byEvent[e.event] = (m.byEvent[e.event] ?? 0) + 1;
    if (e.event === 'step') {
      m.steps++;
      if (e.from) m.messagesByAgent[e.from] = (m.messagesByAgent[e.from] ?? 0) + 1;
    }
    if (e.event === 'terminated') m.terminations.push({ interactionId: e.interactionId, reason: typeof e.raw.reason === 'string' ? e.raw.reason : 'unknown' });
    if (e.event === 'proposal_created') m.proposals.created++;
    if (e.event === 'proposal_applied') m.proposals.applied++;
    if (e.event === 'proposal_rejected') m.proposals.rejected++;
    if (e.runId) runs.add(e.runId);
    for (const a of [e.agentId, e.from, e.to]) if (a) agents.add(a);
    if (e.interactionId) inters.add(e.interactionId);
    const t = tsMs(e.ts);
    if (t !== undefined) {
      first = first === undefined ? t : Math.min(first, t);
      last = last === undefined ? t : Math.max(last, t);
    }
  }
  if (first !== undefined && last !== undefined) m.durationMs = last - first;
  m.runs = [...runs].sort();
  m.agents = [...agents].sort();
  m.interactions = [...inters].sort();
  return m;
}
