// The run overlay: runEvent notifications folded into what the canvas highlights — which
// agents and edges are active and in which state (running, waiting for the user, failed, done),
// per edge the rounds used, the time left and the messages in the last minute, and what the
// run's agents reported spending so far. Pure (the clock is passed in) so it is unit-tested.
import type { FlowModel, RunEvent } from "../../src/canvas/protocol";
import { addAgentSpend, newerAgentSpend, readSpend, type AgentSpend, type Spend } from "../../src/canvas/spend";
import { conditions, formatDuration } from "./labels";

/** What an agent (or an edge's interaction) is doing in the run the overlay shows. */
export type RunState = "running" | "waiting" | "failed" | "done";

export interface EdgeRun {
  active: boolean;
  state?: RunState;
  rounds: number; // rounds (steps) used so far
  maxRounds?: number;
  deadline?: number; // epoch ms when the timeout fires
  messages: number[]; // timestamps of messages, last minute only
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
  /** the run's spend so far (spend events), kept after the run ends until the next starts */
  spend?: Spend;
}

export const emptyOverlay: RunOverlay = { running: false, nodes: {}, edges: {} };

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

function termination(flow: FlowModel | null, edgeId: string) {
  for (const it of flow?.interactions ?? []) for (const e of it.edges ?? []) if (e.id === edgeId) return e.data;
  return undefined;
}

const ENDED = new Set(["terminated", "interaction_finished", "interaction_failed", "edge_finished"]);
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
  const nodes = { ...o.nodes };
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
  if (e.runId && e.runId !== o.runId) next = { runId: e.runId, running: true, nodes: {}, edges: {} };
  else next = { ...o, running: true, nodes: { ...o.nodes }, edges: { ...o.edges } };

  const edge = (id: string): EdgeRun => {
    const cur = next.edges[id] ?? { active: false, rounds: 0, messages: [] };
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
    return next;
  }
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
      const conds = conditions(termination(flow, id)?.termination);
      const rounds = conds.find((c) => c.type === "max_rounds")?.rounds;
      const ms = conds.find((c) => c.type === "timeout_ms")?.ms ?? (termination(flow, id)?.params?.timeout_ms as number | undefined);
      if (rounds !== undefined) er.maxRounds = rounds;
      if (typeof ms === "number") er.deadline = t + ms;
    } else if (e.event === "step" || e.event === "message") {
      er.active = true;
      er.state = "running";
      const r = typeof e.round === "number" ? e.round : typeof e.step === "number" ? e.step : er.rounds + 1;
      er.rounds = Math.max(er.rounds, r);
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

/** edgeCounters is the overlay text on an edge: "2/3r · 4m left · 5/min". */
export function edgeCounters(er: EdgeRun | undefined, now: number): string | undefined {
  if (!er) return undefined;
  const parts = [er.maxRounds !== undefined ? `${er.rounds}/${er.maxRounds}r` : `${er.rounds}r`];
  if (er.deadline !== undefined) {
    const left = Math.max(0, er.deadline - now);
    parts.push(`${formatDuration(Math.ceil(left / 1000) * 1000)} left`);
  }
  parts.push(`${messagesPerMinute(er, now)}/min`);
  return parts.join(" · ");
}
