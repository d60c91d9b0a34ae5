// The run overlay: runEvent notifications folded into what the canvas highlights — which
// agents and edges are active and in which state (running, waiting for the user, failed, done),
// per interaction the round it is in (as the engine counts it: rounds.ts), the time left and
// the messages in the last minute, and what the run's agents reported spending so far. Pure (the
// clock is passed in) so it is unit-tested.
import type { FlowModel, RunEvent } from "../../src/canvas/protocol";
import { engineRound } from "../../src/canvas/rounds";
import { addAgentSpend, newerAgentSpend, readSpend, type AgentSpend, type Spend } from "../../src/canvas/spend";
import { conditions } from "./labels";
import { idRecord } from "./records";

/** What an agent (or an edge's interaction) is doing in the run the overlay shows. */
export type RunState = "running" | "waiting" | "failed" | "done";

export interface EdgeRun {
  active: boolean;
  state?: RunState;
  messages: number[]; // timestamps of messages, last minute only
}

/** An interaction's progress: what its labels' run line says. */
export interface InteractionRun {
  state?: RunState;
  /** the round it is in, as the engine counts it (engineRound); none before its first turn */
  round?: number;
  maxRounds?: number;
  /** its timeout, and the epoch ms it fires at */
  timeout?: number;
  deadline?: number;
  /** when it ended (or the run did): its clock stops */
  ended?: number;
  /** timestamps of its messages, on all its edges */
  messages: number[];
}

export interface NodeRun {
  active: boolean;
  messages: number;
  /** Proposals of other workers this node's proposal collides with (proposal_conflict): "worker_2 (a.ts)". */
  conflicts?: string[];
  state?: RunState;
  /** turns it has finished (completed or failed) in this run: its transcript has them */
  turns?: number;
  /** what it spent so far: each metered call as it ends, or its finished turns' reports */
  spend?: AgentSpend;
}

export interface RunOverlay {
  runId?: string;
  running: boolean;
  nodes: Record<string, NodeRun>;
  edges: Record<string, EdgeRun>;
  interactions: Record<string, InteractionRun>;
  /** the run's spend so far (spend events), kept after the run ends until the next starts */
  spend?: Spend;
}

export const emptyOverlay: RunOverlay = { running: false, nodes: idRecord(), edges: idRecord(), interactions: idRecord() };

export function eventTime(e: RunEvent): number {
  if (typeof e.ts === "number") return e.ts;
  const t = Date.parse(String(e.ts));
  return Number.isFinite(t) ? t : 0;
}

// Edges an event concerns: its edgeId, or every edge of its interaction.
function edgesOf(flow: FlowModel | null, e: RunEvent): string[] {
  if (e.edgeId) return [e.edgeId];
  if (!e.interactionId || !flow) return [];
  const it = (flow.interactions ?? []).find((i) => i.id === e.interactionId);
  return (it?.edges ?? []).map((x) => x.id);
}

/** bounds are an interaction's most rounds and its timeout, from its edges' terminations and params. */
function bounds(flow: FlowModel | null, interactionId: string): { maxRounds?: number; timeout?: number } {
  const it = (flow?.interactions ?? []).find((i) => i.id === interactionId);
  const out: { maxRounds?: number; timeout?: number } = {};
  for (const e of it?.edges ?? []) {
    const conds = conditions(e.data?.termination);
    out.maxRounds ??= conds.find((c) => c.type === "max_rounds")?.rounds;
    const ms = conds.find((c) => c.type === "timeout_ms")?.ms ?? e.data?.params?.timeout_ms;
    if (typeof ms === "number") out.timeout ??= ms;
  }
  return out;
}

const ENDED = new Set(["terminated", "interaction_finished", "interaction_failed", "edge_finished"]);
const INTERACTION_ENDED = new Set(["terminated", "interaction_finished", "interaction_failed"]);
const RUN_ENDED = new Set(["run_finished", "run_failed", "run_stopped", "finished", "stopped"]);
// A person is asked something by an agent (docs/runs.md, Events), and answers.
const ASKED = new Set(["question_asked", "dependency_requested", "phase_completed"]);
const ANSWERED = new Set(["question_answered", "dependency_resolved", "phase_resolved"]);

/** failed says whether an event reports a failure: its status, or an event named so. */
function failed(e: RunEvent): boolean {
  return e.status === "failed" || e.event.endsWith("_failed") || e.failed === true;
}

/** agentOf is the agent an event is about: the engine's "agent" field (agentId in older events). */
function agentOf(e: RunEvent): string | undefined {
  const a = e.agent ?? e.agentId;
  return typeof a === "string" && a !== "" ? a : undefined;
}

/**
 * restoreAgentSpend gives the cards what each agent of runId spent as the run's last checkpoint
 * kept it (after a window reload). Events of another run shown already win; of one agent's two
 * totals the newer is kept (never their sum), so events before or after it count once.
 */
export function restoreAgentSpend(o: RunOverlay, runId: string, agents: Record<string, AgentSpend>): RunOverlay {
  if (o.runId !== undefined && o.runId !== runId) return o;
  const nodes = idRecord(o.nodes);
  for (const [id, spend] of Object.entries(agents)) {
    const cur = nodes[id] ?? { active: false, messages: 0 };
    nodes[id] = { ...cur, spend: newerAgentSpend(spend, cur.spend) };
  }
  return { ...o, runId, nodes };
}

/** applyRunEvent folds one event into the overlay. */
export function applyRunEvent(o: RunOverlay, e: RunEvent, flow: FlowModel | null): RunOverlay {
  const t = eventTime(e);
  let next: RunOverlay = o;
  if (e.runId && e.runId !== o.runId) next = { runId: e.runId, running: true, nodes: idRecord(), edges: idRecord(), interactions: idRecord() };
  else next = { ...o, running: true, nodes: idRecord(o.nodes), edges: idRecord(o.edges), interactions: idRecord(o.interactions) };

  const edge = (id: string): EdgeRun => {
    const cur = next.edges[id] ?? { active: false, messages: [] };
    const copy = { ...cur, messages: cur.messages.slice() };
    next.edges[id] = copy;
    return copy;
  };
  const node = (id: string, active: boolean, message = false, state?: RunState) => {
    const cur = next.nodes[id] ?? { active: false, messages: 0 };
    next.nodes[id] = { ...cur, active, messages: cur.messages + (message ? 1 : 0), state: state ?? (active ? "running" : cur.state) };
  };

  if (e.event === "spend") next.spend = readSpend(e.run ?? e.data?.run) ?? next.spend;
  if (RUN_ENDED.has(e.event)) {
    next.running = false;
    // Whoever was still at work when the run ended shares its outcome.
    const end: RunState = failed(e) || e.status === "stopped" ? "failed" : "done";
    const settle = <T extends { active: boolean; state?: RunState }>(r: T): T => ({ ...r, active: false, state: r.state === "running" || r.state === "waiting" ? end : r.state });
    for (const k of Object.keys(next.nodes)) next.nodes[k] = settle(next.nodes[k]);
    for (const k of Object.keys(next.edges)) next.edges[k] = settle(next.edges[k]);
    for (const [k, ir] of Object.entries(next.interactions)) next.interactions[k] = { ...ir, state: ir.state === "running" ? end : ir.state, ended: ir.ended ?? t };
    return next;
  }
  if (e.interactionId) interactionEvent(next, e, flow, t);
  if (e.event === "proposal_conflict") markConflict(next, e);
  const agent = agentOf(e);
  if (agent && e.event === "spend") {
    const cur = next.nodes[agent] ?? { active: false, messages: 0 };
    next.nodes[agent] = { ...cur, spend: addAgentSpend(cur.spend, { ...e.data, ...e }) };
  }
  if (agent) {
    if (e.event === "agent_started") node(agent, true);
    else if (e.event === "agent_finished" || e.event === "agent_failed") {
      node(agent, false, false, failed(e) ? "failed" : "done");
      next.nodes[agent] = { ...next.nodes[agent], turns: (next.nodes[agent].turns ?? 0) + 1 };
    }
    else if (ASKED.has(e.event)) node(agent, true, false, "waiting");
    else if (ANSWERED.has(e.event) && next.nodes[agent]?.state === "waiting") node(agent, true, false, "running");
  }

  for (const id of edgesOf(flow, e)) {
    const er = edge(id);
    if (e.event === "configured" || e.event === "interaction_started") {
      er.active = true;
      er.state = "running";
    } else if (e.event === "step" || e.event === "message") {
      er.active = true;
      er.state = "running";
      er.messages.push(t);
    } else if (ENDED.has(e.event)) {
      er.active = false;
      er.state = failed(e) ? "failed" : "done";
    }
  }
  if (e.event === "step" || e.event === "message") {
    if (e.from) node(e.from, true, true);
    if (e.to) node(e.to, true);
  }
  return next;
}

/**
 * interactionEvent folds an event into its interaction's progress: its bounds when it starts, the
 * round the engine says it is in, and its end, which stops its clock.
 */
function interactionEvent(o: RunOverlay, e: RunEvent, flow: FlowModel | null, t: number): void {
  const id = e.interactionId!;
  const cur = o.interactions[id];
  const ir: InteractionRun = { ...cur, messages: cur?.messages ?? [] };
  o.interactions[id] = ir;
  if (e.event === "step" || e.event === "message") ir.messages = [...ir.messages.filter((m) => m > t - 60_000), t];
  if (e.event === "configured" || e.event === "interaction_started") {
    const b = bounds(flow, id);
    ir.state = "running";
    ir.maxRounds = b.maxRounds;
    ir.timeout = b.timeout;
    if (b.timeout !== undefined && ir.deadline === undefined) ir.deadline = t + b.timeout;
  }
  const round = engineRound(e);
  if (round !== undefined) ir.round = e.event === "terminated" ? round : Math.max(ir.round ?? 0, round);
  if (INTERACTION_ENDED.has(e.event)) {
    ir.state = failed(e) ? "failed" : "done";
    ir.ended ??= t;
  }
}

/**
 * markConflict marks both agents of a proposal_conflict: this run's agent, and the other when it
 * is of this run too (another run's agent is only named).
 */
function markConflict(o: RunOverlay, e: RunEvent): void {
  const me = typeof e.agentId === "string" ? e.agentId : typeof e.agent === "string" ? e.agent : "";
  const other = typeof e.otherAgentId === "string" ? e.otherAgentId : "";
  const file = typeof e.path === "string" ? e.path : "";
  if (!me || !other) return;
  const sameRun = e.otherRunId === undefined || e.otherRunId === e.runId;
  const add = (id: string, what: string) => {
    const cur = o.nodes[id] ?? { active: false, messages: 0 };
    const list = cur.conflicts ?? [];
    o.nodes[id] = { ...cur, conflicts: list.includes(what) ? list : [...list, what] };
  };
  add(me, `${other}${sameRun ? "" : ` (run ${String(e.otherRunId)})`}${file ? ` · ${file}` : ""}`);
  if (sameRun) add(other, `${me}${file ? ` · ${file}` : ""}`);
}

/**
 * messagesPerMinute counts an edge's messages in the minute before now. Events stamped a little
 * after now (the sidecar's clock, or a tick not yet taken) count as in the last minute.
 */
export function messagesPerMinute(er: EdgeRun, now: number): number {
  return er.messages.filter((t) => t > now - 60_000).length;
}

/** clock writes a time left as a clock reads it, "9:58" or "1:02:03", so its width holds still. */
export function clock(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const two = (n: number) => String(n).padStart(2, "0");
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}:${two(m)}:${two(s % 60)}` : `${m}:${two(s % 60)}`;
}

/**
 * runLine is an interaction's line in the overlay, on its first label: the round it is in, the
 * time left and its messages in the last minute while it runs ("round 1/3 · 9:58 left · 2/min");
 * the round it ended in and how, once it has ended ("round 3/3 · done").
 */
export function runLine(o: RunOverlay, interactionId: string, now: number): string | undefined {
  const ir = o.interactions[interactionId];
  if (!ir) return undefined;
  const round = `round ${ir.round ?? 0}${ir.maxRounds !== undefined ? `/${ir.maxRounds}` : ""}`;
  if (ir.ended !== undefined || (ir.state && ir.state !== "running")) return `${round} · ${ir.state === "failed" ? "failed" : "done"}`;
  const parts = [round];
  // never more than the timeout: an event stamped in the future does not stretch the clock
  if (ir.deadline !== undefined) parts.push(`${clock(Math.min(ir.deadline - now, ir.timeout ?? Infinity))} left`);
  parts.push(`${ir.messages.filter((t) => t > now - 60_000).length}/min`);
  return parts.join(" · ");
}

/**
 * runLineChars is the most characters an interaction's run line takes while it runs: its label
 * is sized for it once, so the label never grows as the numbers change.
 */
export function runLineChars(o: RunOverlay, interactionId: string): number {
  const ir = o.interactions[interactionId];
  // a round past the bound (the engine says so when it happens) is room kept too
  const max = String(Math.max(ir?.maxRounds ?? 99, ir?.round ?? 0));
  const round = `round ${max}${ir?.maxRounds !== undefined ? `/${max}` : ""}`.length;
  const time = ir?.timeout !== undefined ? ` · ${clock(ir.timeout)} left`.length : 0;
  return Math.max(round + time + " · 999/min".length, `round ${max}/${max} · failed`.length);
}
