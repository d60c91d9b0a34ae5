// The Runs view's model: runs → interactions → agents, from listRuns and kept current by run
// events. Pure (no vscode), so its updates are unit-tested.
import type { AgentState, InteractionState, PendingRequest, RunEvent, RunState } from '../protocol';

const RUN_STATUS: Record<string, string> = {
  run_started: 'running',
  run_waiting: 'waiting',
  run_resumed: 'running',
  run_finished: 'finished',
  run_failed: 'failed',
  run_stopped: 'stopped',
};

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
    this.runs = new Map(runs.map((r) => [r.runId, r]));
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
      if (rs !== 'running' && rs !== 'waiting' && rs !== 'completed' && rs !== 'finished') {
        run.pending = [];
        for (const i of run.interactions) for (const a of i.agents) if (a.status === 'running' || a.status === 'waiting') a.status = rs;
      }
    }
    const inter = typeof ev.interactionId === 'string' ? this.interaction(run, ev.interactionId, ev) : undefined;
    if (inter) {
      if (ev.event === 'terminated') {
        inter.status = 'terminated';
        if (typeof ev.reason === 'string') inter.terminationReason = ev.reason;
      } else if (ev.event === 'step' || ev.event === 'configured' || ev.event === 'interaction_started') {
        if (inter.status === 'unknown' || inter.status === 'pending') inter.status = 'running';
        if (typeof ev.step === 'number') inter.round = ev.step;
      }
    }
    const agentId = typeof ev.agentId === 'string' ? ev.agentId : typeof ev.agent === 'string' ? ev.agent : undefined;
    if (agentId) {
      const agent = this.agent(run, inter, agentId);
      if (typeof ev.status === 'string') agent.status = ev.status;
      else if (ev.event === 'agent_started') agent.status = 'running';
      else if (ev.event === 'agent_finished') agent.status = 'finished';
      else if (ev.event === 'agent_failed') agent.status = 'failed';
      else if (['question', 'user_question', 'question_asked', 'dependency_request', 'dependency_requested', 'phase_completed'].includes(ev.event)) agent.status = 'waiting';
      else if (['question_answered', 'dependency_provided', 'dependency_resolved', 'phase_resolved'].includes(ev.event)) agent.status = 'running';
      if (typeof ev.role === 'string') agent.role = ev.role;
      const why = typeof ev.reason === 'string' ? ev.reason : typeof ev.error === 'string' ? ev.error : undefined;
      if (why && (ev.event === 'agent_finished' || ev.event === 'agent_failed' || ev.event === 'agent_stopped')) agent.terminationReason = why;
    }
    return unknown;
  }

  setPending(all: PendingRequest[]): void {
    for (const r of this.runs.values()) r.pending = all.filter((p) => p.runId === r.runId);
  }

  private interaction(run: RunState, id: string, ev: RunEvent): InteractionState {
    let i = run.interactions.find((x) => x.id === id);
    if (!i) {
      i = { id, patternId: typeof ev.patternId === 'string' ? ev.patternId : undefined, status: 'running', agents: [] };
      run.interactions.push(i);
    }
    return i;
  }

  private agent(run: RunState, inter: InteractionState | undefined, id: string): AgentState {
    for (const i of run.interactions) {
      const a = i.agents.find((x) => x.id === id);
      if (a) return a;
    }
    const a: AgentState = { id, status: 'running' };
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
    default:
      return 'circle-outline';
  }
}
