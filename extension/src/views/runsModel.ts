// The Runs view's model: runs → interactions → agents, from listRuns and kept current by run
// events. Pure (no vscode), so its updates are unit-tested.
import { engineRound } from '../canvas/rounds';
import { addAgentSpend, newerAgentSpend, readSpend } from '../canvas/spend';
import { REQUEST_EVENTS, RESOLVED_EVENTS, readForkOrigin, type AgentState, type InteractionState, type PendingRequest, type RunEvent, type RunState } from '../protocol';

const RUN_STATUS: Record<string, string> = {
  run_started: 'running',
  run_waiting: 'waiting',
  run_resumed: 'running',
  run_finished: 'finished',
  run_failed: 'failed',
  run_stopped: 'stopped',
  run_interrupted: 'interrupted',
};

/** Statuses of something still under way; every other status is final. */
function live(status: string): boolean {
  return status === 'running' || status === 'waiting';
}

const ASKED = REQUEST_EVENTS;
const RESOLVED = RESOLVED_EVENTS;

/**
 * The status an agent event gives an agent now at cur, or undefined for none. A request's
 * events only move a running agent to waiting and back: the engine reports them from their own
 * goroutine, so one can arrive after the agent's turn ended (a request cancelled when the run
 * ended is "answered" with a failure after run_finished) and must not make it running again.
 */
function agentStatus(ev: RunEvent, cur: string): string | undefined {
  if (typeof ev.status === 'string') return ev.status;
  if (ev.event === 'agent_started') return 'running';
  if (ev.event === 'agent_finished') return 'finished';
  if (ev.event === 'agent_failed') return 'failed';
  if (ASKED.includes(ev.event)) return cur === 'running' ? 'waiting' : undefined;
  if (RESOLVED.includes(ev.event)) return cur === 'waiting' ? 'running' : undefined;
  return undefined;
}

export class RunsModel {
  private runs = new Map<string, RunState>();

  all(): RunState[] {
    // newest first; runIds sort by time when the sidecar makes them, startedAt when given
    return [...this.runs.values()].sort((a, b) => (b.startedAt ?? b.runId).localeCompare(a.startedAt ?? a.runId));
  }

  get(runId: string): RunState | undefined {
    return this.runs.get(runId);
  }

  replace(runs: RunState[]): void {
    for (const r of runs) this.keepAgents(r);
    for (const r of runs) {
      if (!isInterrupted(r)) continue;
      // its checkpoint says "running" for what was under way when the engine died: nothing is
      for (const i of r.interactions) {
        if (i.status === 'running' || i.status === 'waiting') i.status = 'interrupted';
        for (const a of i.agents) if (a.status === 'running' || a.status === 'waiting') a.status = 'interrupted';
      }
    }
    this.runs = new Map(runs.map((r) => [r.runId, r]));
  }

  /**
   * listRuns lists a run's agents only with their spend, as its last checkpoint kept it. On a
   * re-fetch (a new run starting) the agents the events told of stay, with the status the events
   * gave them and the newer of the two spend totals (never their sum).
   */
  private keepAgents(fresh: RunState): void {
    const old = this.runs.get(fresh.runId);
    if (!old) return;
    const listed = new Map(fresh.interactions.flatMap((i) => i.agents).map((a) => [a.id, a]));
    for (const oi of old.interactions) {
      const fi = fresh.interactions.find((i) => i.id === oi.id);
      for (const oa of oi.agents) {
        const fa = listed.get(oa.id);
        if (fa) Object.assign(fa, { ...oa, spend: newerAgentSpend(fa.spend, oa.spend) });
        else fi?.agents.push(oa);
      }
    }
  }

  /** Applies one event; returns true when the caller should re-fetch (an unknown run appeared). */
  apply(ev: RunEvent): boolean {
    // the server puts event details in "data"; top-level fields win
    ev = { ...((ev.data ?? {}) as Record<string, unknown>), ...ev } as RunEvent;
    let run = this.runs.get(ev.runId);
    let unknown = false;
    if (!run) {
      run = { runId: ev.runId, flow: ev.flow ?? '', status: 'running', interactions: [], pending: [] };
      this.runs.set(ev.runId, run);
      unknown = true;
    }
    // run_finished carries the outcome in status (finished, failed, stopped)
    const rs = ev.event === 'run_finished' && typeof ev.status === 'string' ? ev.status : RUN_STATUS[ev.event];
    if (rs) {
      run.status = rs;
      if (typeof ev.reason === 'string') run.terminationReason = ev.reason;
      // Stopped by the person (the engine's reason "stopped"): Resume Run goes on with it.
      run.resumable = rs === 'interrupted' || (rs === 'stopped' && ev.reason === 'stopped') ? true : undefined;
      if (!live(rs)) {
        // The run is over, however it ended: nothing in it runs or waits any more (an agent
        // whose last turn had no agent_finished would otherwise show running for good). An
        // interrupted run keeps its requests: they are asked again when it is resumed.
        if (rs !== 'interrupted') run.pending = [];
        for (const i of run.interactions) {
          if (live(i.status)) i.status = rs;
          for (const a of i.agents) if (live(a.status)) a.status = rs;
        }
      }
    }
    // an empty interactionId is an event about the whole run (run_resumed, warnings)
    const inter = typeof ev.interactionId === 'string' && ev.interactionId !== '' ? this.interaction(run, ev.interactionId, ev) : undefined;
    // spend so far: after every agent turn for the run and its interaction, and at the end
    if (ev.event === 'spend') {
      run.spend = readSpend(ev.run) ?? run.spend;
      if (inter) inter.spend = readSpend(ev.interaction) ?? inter.spend;
    }
    if (ev.event === 'run_finished') run.spend = readSpend(ev.spend) ?? run.spend;
    if (ev.event === 'run_started') run.forkOf = readForkOrigin(ev.forkOf) ?? run.forkOf;
    if (inter) {
      // the round as the engine counts it, the same number the canvas's overlay shows
      const round = engineRound(ev);
      if (round !== undefined) inter.round = ev.event === 'terminated' ? round : Math.max(inter.round ?? 0, round);
      if (ev.event === 'terminated') {
        inter.status = 'terminated';
        if (typeof ev.reason === 'string') inter.terminationReason = ev.reason;
        inter.spend = readSpend(ev.spend) ?? inter.spend;
      } else if (ev.event === 'step' || ev.event === 'configured' || ev.event === 'interaction_started') {
        if (live(run.status) && (inter.status === 'unknown' || inter.status === 'pending' || inter.status === 'interrupted')) inter.status = 'running';
      }
    }
    // an empty agent names no agent (events about the whole run or interaction)
    const agentId = [ev.agentId, ev.agent].find((x): x is string => typeof x === 'string' && x !== '');
    if (agentId) {
      const agent = this.agent(run, inter, agentId);
      const next = agentStatus(ev, agent.status);
      // After the run's end, a late event may still finish an agent but never revive one.
      if (next && (live(run.status) || !live(next))) agent.status = next;
      if (typeof ev.role === 'string') agent.role = ev.role;
      const why = typeof ev.reason === 'string' ? ev.reason : typeof ev.error === 'string' ? ev.error : undefined;
      if (why && (ev.event === 'agent_finished' || ev.event === 'agent_failed' || ev.event === 'agent_stopped')) agent.terminationReason = why;
      // per agent as it accrues: each metered call mid-turn, or a finished turn's report
      if (ev.event === 'spend') agent.spend = addAgentSpend(agent.spend, ev);
    }
    return unknown;
  }

  /** The requests live runs wait on. An interrupted run keeps its checkpoint's: nobody can answer them. */
  setPending(all: PendingRequest[]): void {
    for (const r of this.runs.values()) if (!isInterrupted(r)) r.pending = all.filter((p) => p.runId === r.runId);
  }

  private interaction(run: RunState, id: string, ev: RunEvent): InteractionState {
    let i = run.interactions.find((x) => x.id === id);
    if (!i) {
      i = { id, patternId: typeof ev.patternId === 'string' ? ev.patternId : undefined, status: live(run.status) ? 'running' : run.status, agents: [] };
      run.interactions.push(i);
    }
    return i;
  }

  private agent(run: RunState, inter: InteractionState | undefined, id: string): AgentState {
    for (const i of run.interactions) {
      const a = i.agents.find((x) => x.id === id);
      if (a) return a;
    }
    // first seen in a late event of a run that is over: it is not running
    const a: AgentState = { id, status: live(run.status) ? 'running' : run.status };
    let home = inter;
    if (!home) {
      home = run.interactions.find((x) => x.id === '(agents)');
      if (!home) {
        home = { id: '(agents)', status: run.status, agents: [] };
        run.interactions.push(home);
      }
    }
    home.agents.push(a);
    return a;
  }
}

/** A run whose engine died (the sidecar stopped: a window reload, a crash); it can be resumed or closed. */
export function isInterrupted(run: RunState): boolean {
  return run.status === 'interrupted';
}

/** Resume Run can go on with the run: its engine died, or the person stopped it. */
export function canResume(run: RunState): boolean {
  return isInterrupted(run) || run.resumable === true;
}

/** The requests runs can still take an answer to: an interrupted run's are history. */
export function answerable(runs: RunState[]): PendingRequest[] {
  return runs.filter((r) => !isInterrupted(r)).flatMap((r) => r.pending);
}

/** How recent an interrupted run must be to be offered for resuming when it waits on nobody. */
export const RECENT_MS = 60 * 60 * 1000;

/**
 * The interrupted runs worth offering to resume after a reload: those that were waiting for the
 * user, and any started in the last hour. Older ones stay in the Runs view, unannounced.
 */
export function interruptedToOffer(runs: RunState[], now: number): RunState[] {
  return runs.filter((r) => {
    if (!isInterrupted(r)) return false;
    if (r.pending.length > 0) return true;
    const started = r.startedAt ? Date.parse(r.startedAt) : NaN;
    return !Number.isNaN(started) && now - started <= RECENT_MS;
  });
}

/** One line for a request, as the Runs view shows it. */
export function pendingLabel(p: PendingRequest): string {
  return p.kind === 'question' ? p.question.question : `${p.dependency.type}: ${p.dependency.name}`;
}

/** An interrupted run's tooltip: when it stopped and what it was waiting on. */
export function interruptedTooltip(run: RunState): string {
  const lines = [`${run.flow || run.runId} — interrupted`, `run ${run.runId}`];
  if (run.startedAt) lines.push(`started: ${run.startedAt}`);
  lines.push(`last checkpoint: ${run.updatedAt ?? 'unknown'}`);
  if (run.pending.length > 0) {
    lines.push('was waiting for you:');
    for (const p of run.pending) lines.push(`  • ${p.agentId ? `${p.agentId}: ` : ''}${pendingLabel(p)}`);
  } else lines.push('was not waiting for you');
  lines.push('Resume Run runs its unfinished interactions again (its questions are asked again); Close Run marks it stopped.');
  return lines.join('\n');
}

/** The codicon for a status, shared by runs, interactions and agents. */
export function statusIcon(status: string): string {
  switch (status) {
    case 'running':
      return 'sync~spin';
    case 'waiting':
      return 'bell';
    case 'finished':
    case 'completed':
    case 'terminated':
      return 'pass';
    case 'failed':
      return 'error';
    case 'stopped':
      return 'debug-stop';
    case 'interrupted':
      return 'debug-disconnect';
    default:
      return 'circle-outline';
  }
}
