// What a run's agents reported spending (docs/runs.md, "Spend limits"): the sidecar's `spend`
// runEvents and listRuns' `spend`. Shared by the Runs view and the canvas run overlay; pure.

export interface Spend {
  tokens: number;
  costUsd: number;
  /** every turn that reported usage also reported its cost */
  costKnown: boolean;
  /** agents with a turn that reported no usage at all: their spend is unknown */
  unreported: string[];
}

/** readSpend reads a spend object, or undefined for anything that is not one. */
export function readSpend(raw: unknown): Spend | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const tokens = typeof o.tokens === "number" && Number.isFinite(o.tokens) && o.tokens >= 0 ? o.tokens : undefined;
  const costUsd = typeof o.costUsd === "number" && Number.isFinite(o.costUsd) && o.costUsd >= 0 ? o.costUsd : 0;
  if (tokens === undefined) return undefined;
  const unreported = Array.isArray(o.unreported) ? o.unreported.filter((x): x is string => typeof x === "string") : [];
  return { tokens, costUsd, costKnown: o.costKnown === true, unreported };
}

/** formatTokens: 950, 12.3k, 1.2M. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${trim(n / 1000)}k`;
  return `${trim(n / 1_000_000)}M`;
}

function trim(x: number): string {
  return x >= 100 ? String(Math.round(x)) : x.toFixed(1).replace(/\.0$/, "");
}

/** formatUsd: $1.23, $0.04, $0.0042. */
export function formatUsd(x: number): string {
  if (x === 0) return "$0";
  return x >= 0.01 ? `$${x.toFixed(2)}` : `$${x.toFixed(4)}`;
}

/**
 * spendLabel is one short line: "12.3k tokens · $0.04", "12.3k tokens · cost unknown",
 * "≥ $0.04" when some cost is unknown, "usage unknown: judge" beside them for agents that
 * reported none (their number past two), and "spend unknown" when no agent reported anything.
 * Undefined before any agent has finished a turn.
 */
export function spendLabel(s: Spend | undefined): string | undefined {
  if (!s || (s.tokens === 0 && s.costUsd === 0 && s.unreported.length === 0)) return undefined;
  if (s.tokens === 0 && s.costUsd === 0) return "spend unknown";
  const parts = [`${formatTokens(s.tokens)} tokens`];
  if (s.costKnown) parts.push(formatUsd(s.costUsd));
  else parts.push(s.costUsd > 0 ? `≥ ${formatUsd(s.costUsd)}` : "cost unknown");
  const n = s.unreported.length;
  if (n > 0) parts.push(`usage unknown: ${n > 2 ? `${n} agents` : s.unreported.join(", ")}`);
  return parts.join(" · ");
}

/** What one agent of a run spent so far, folded from the run's `spend` events. */
export interface AgentSpend {
  tokens: number;
  costUsd: number;
  /** every report counted carried its cost */
  costKnown: boolean;
  /** a turn of it reported no usage at all */
  unreported: boolean;
  /**
   * The model gateway meters its calls (`midTurn` spend events). Its finished turns' spend
   * events repeat what the calls already counted, so they are not counted again.
   */
  metered: boolean;
  /**
   * How many charges the sidecar had counted in this total (its `agentTotal` on spend events,
   * listRuns' `agentSpend` after a reload). It only grows: of two totals the one with more is
   * newer. Absent for a total folded here from events that carry none.
   */
  reports?: number;
}

function num(x: unknown): number {
  return typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : 0;
}

/** readAgentTotal reads the sidecar's total of one agent (`agentTotal`, listRuns' `agentSpend` entries). */
export function readAgentTotal(raw: unknown): AgentSpend | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  if (typeof o.reports !== "number" || !Number.isInteger(o.reports) || o.reports < 0) return undefined;
  return { tokens: num(o.tokens), costUsd: num(o.costUsd), costKnown: o.costKnown === true, unreported: o.unreported === true, metered: o.metered === true, reports: o.reports };
}

/**
 * newerAgentSpend is the newer of two totals of one agent: the one with more reports; a total
 * without a count (folded from events) only when the other is missing.
 */
export function newerAgentSpend(a: AgentSpend | undefined, b: AgentSpend | undefined): AgentSpend | undefined {
  if (!a || !b) return a ?? b;
  if (a.reports === undefined) return b.reports === undefined ? a : b;
  return b.reports !== undefined && b.reports > a.reports ? b : a;
}

/**
 * addAgentSpend folds one `spend` event about the agent into what it spent: a metered call
 * (`midTurn: true`, its `callTokens` and `callCostUsd`), or a finished turn's report (`tokens`,
 * `costUsd`, `unreported`) of an agent the gateway does not meter. A metered agent's
 * finished-turn report is skipped: its calls are already counted (the terminal view's rule).
 * Returns cur itself when the event adds nothing.
 */
export function addAgentSpend(cur: AgentSpend | undefined, ev: Record<string, unknown>): AgentSpend | undefined {
  // the sidecar's own total after this report: taken, not added, so a total restored from
  // listRuns and the events that follow it never count a report twice
  const total = readAgentTotal(ev.agentTotal);
  if (total) return newerAgentSpend(total, cur);
  const base: AgentSpend = cur ?? { tokens: 0, costUsd: 0, costKnown: true, unreported: false, metered: false };
  if (ev.midTurn === true) {
    return { ...base, metered: true, tokens: base.tokens + num(ev.callTokens), costUsd: base.costUsd + num(ev.callCostUsd) };
  }
  if (base.metered) return cur;
  if (ev.unreported === true) return { ...base, unreported: true };
  const priced = typeof ev.costUsd === "number";
  return { ...base, tokens: base.tokens + num(ev.tokens), costUsd: base.costUsd + num(ev.costUsd), costKnown: base.costKnown && priced };
}

/**
 * agentSpendLabel is an agent's spend in one short line: "12.3k tokens · $0.04", "≥ $0.04" or
 * "cost unknown" when a report lacked its cost, "spend unknown" when it reported nothing.
 * Undefined before any spend event about it.
 */
export function agentSpendLabel(s: AgentSpend | undefined): string | undefined {
  if (!s) return undefined;
  if (s.tokens === 0 && s.costUsd === 0 && s.unreported) return "spend unknown";
  const cost = s.costKnown && !s.unreported ? formatUsd(s.costUsd) : s.costUsd > 0 ? `≥ ${formatUsd(s.costUsd)}` : "cost unknown";
  return `${formatTokens(s.tokens)} tokens · ${cost}`;
}
