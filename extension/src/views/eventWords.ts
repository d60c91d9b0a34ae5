// Run events in words for people: the progress notification of a run and the output channel
// say "fixer is working (round 1, claude)", not "fix · fixer · agent_started". The same
// sentences as the terminal's run view (sidecar/termview), shorter.
import type { RunEvent } from '../protocol';

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && v !== '' && !Number.isNaN(Number(v)) ? Number(v) : undefined);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const firstLine = (s: string, max = 120): string => {
  const l = s.split('\n').find((x) => x.trim() !== '')?.trim() ?? '';
  return l.length > max ? `${l.slice(0, max - 1)}…` : l;
};
const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** What stops the run, as run_started says it: the flow's policy.budget, or the default limit. */
function limitWords(ev: RunEvent): string {
  const b = obj(ev.budget);
  const usd = num(b.usd);
  const tokens = num(b.tokens);
  const parts = [usd ? `$${usd.toFixed(2)}` : '', tokens ? `${tokens.toLocaleString('en-US')} tokens` : ''].filter((x) => x !== '');
  if (parts.length > 0) return `; stops at ${parts.join(' or ')} spent (policy.budget)`;
  const d = str(obj(ev.defaultLimit).message);
  return d ? `; limit: ${firstLine(d)}` : '';
}

/** Who an event is about: its agent, else who sent it. */
function who(ev: RunEvent): string {
  return ev.agentId ?? (str(ev.agent) || str(ev.from));
}

/**
 * The event as a sentence for the run's progress notification, with its interaction first
 * ("fix: fixer proposes 1 file: src/slug.js"); undefined for events that say nothing to a
 * person (bus traffic, spend ticks), which leave the last sentence in place.
 */
export function progressWords(ev: RunEvent): string | undefined {
  const words = eventWords(ev);
  if (words === undefined) return undefined;
  return ev.interactionId ? `${ev.interactionId}: ${words}` : words;
}

function eventWords(ev: RunEvent): string | undefined {
  const w = who(ev);
  switch (ev.event) {
    case 'run_started':
    case 'run_resumed': {
      const n = num(ev.interactions) ?? 0;
      return `${ev.event === 'run_resumed' ? 'resumed' : 'started'}: ${plural(n, 'interaction', 'interactions')}${ev.dryRun === true ? ', dry run (no model is called)' : ''}${limitWords(ev)}`;
    }
    case 'interaction_started':
      return `started (${str(ev.patternId)}${list(ev.nodes).length ? `: ${list(ev.nodes).map(str).join(', ')}` : ''})`;
    case 'agent_started':
      return `${w} is working (round ${(num(ev.round) ?? 0) + 1}, ${str(ev.backend) || 'agent'})`;
    case 'agent_finished': {
      const st = str(ev.status);
      if (st === 'completed') return `${w} finished its turn`;
      if (st === 'stopped') return `${w} was stopped`;
      return `${w}'s turn ${st || 'failed'}${str(ev.error) ? `: ${firstLine(str(ev.error))}` : ''}`;
    }
    case 'message':
      return str(ev.type) === 'handoff' ? `${str(ev.from)} hands off to ${list(ev.to).map(str).join(', ') || str(ev.to)}` : undefined;
    case 'question_asked':
      return `${w} asks you: ${firstLine(str(obj(ev.fields).question))}`;
    case 'dependency_requested':
      return `${w} needs ${str(obj(ev.fields).type) || 'a value'} ${str(obj(ev.fields).name)} from you`;
    case 'phase_completed':
      return `${w} completed phase ${str(obj(ev.fields).N)} and waits for your approval`;
    case 'question_answered':
    case 'dependency_resolved':
    case 'phase_resolved':
      return `${w} got the answer`;
    case 'proposal_created': {
      const files = list(ev.changedFiles).map((f) => str(obj(f).path));
      const names = files.length > 3 ? [...files.slice(0, 3), `and ${files.length - 3} more`] : files;
      return `${w} proposes ${plural(files.length, 'file', 'files')}${names.length ? `: ${names.join(', ')}` : ''}`;
    }
    case 'proposal_applied':
      return `${w}'s proposal was applied`;
    case 'proposal_conflict':
      return `${w}'s proposal collides with ${str(ev.otherAgentId)}'s in ${str(ev.path)}`;
    case 'access_denied':
      return `${w} was refused access to ${str(ev.path) || 'a file'}`;
    case 'warning':
      return `warning${w ? ` (${w})` : ''}: ${firstLine(str(ev.message))}`;
    case 'error':
      return `error${w ? ` (${w})` : ''}: ${firstLine(str(ev.message) || str(obj(obj(ev.block).fields).message) || 'an invalid block')}`;
    case 'spend_limit_reached':
    case 'budget_reached':
      return `spend limit reached${str(ev.message) ? `: ${firstLine(str(ev.message))}` : ''}`;
    case 'terminated': {
      const rounds = num(ev.rounds);
      return `ended (${str(ev.reason) || str(ev.status)}${rounds !== undefined ? ` after ${plural(rounds, 'round', 'rounds')}` : ''})`;
    }
    case 'run_interrupted':
      return `interrupted: ${str(ev.reason)}`;
    case 'run_finished':
      return runEndWords(ev, '');
  }
  return undefined;
}

/**
 * How a run ended, for the output channel: "run R of FLOW completed: 1 proposal, $0.05"; the
 * reason when it did not complete.
 */
export function runEndWords(ev: RunEvent, flow: string): string {
  const status = str(ev.status) || ev.event.replace(/^run_/, '');
  const reason = str(ev.reason);
  const parts: string[] = [];
  const proposals = list(ev.proposals).length;
  if (proposals > 0) parts.push(plural(proposals, 'proposal', 'proposals'));
  const spend = obj(ev.spend);
  const usd = num(spend.costUsd);
  if (usd !== undefined && usd > 0) parts.push(`$${usd.toFixed(2)}${spend.costKnown === false ? ' or more' : ''}`);
  const tokens = num(spend.tokens);
  if (tokens !== undefined && tokens > 0) parts.push(`${tokens.toLocaleString('en')} tokens`);
  const head = `run ${ev.runId}${flow ? ` of ${flow}` : ''} ${status}${reason ? ` (${reason})` : ''}`;
  return parts.length ? `${head}: ${parts.join(', ')}` : head;
}

/** The events that end a run. */
export const RUN_END_EVENTS = new Set(['run_finished', 'run_failed', 'run_stopped', 'run_interrupted']);
