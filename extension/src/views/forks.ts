// Forks in the Runs view: a fork is listed under the run it left (with the turn), each run has
// its turns, and "Fork from Here" on a turn asks the sidecar what the fork would restore and
// what it cannot (agentcanvas/forkRun with planOnly) before it starts one. Pure (no vscode), so
// it is unit-tested.
import { asArray, asObject, readForkOrigin, type ForkOrigin, type RunState } from '../protocol';
import type { Turn } from './transcript';

/** What a fork restores for one agent, and what it cannot. */
export interface ForkAgentPlan {
  id: string;
  files: string;
  session?: string;
  restored: boolean;
  resumed: boolean;
  limits: string[];
}

/** agentcanvas/forkRun's plan. */
export interface ForkPlan {
  runId: string;
  forkOf: ForkOrigin;
  turns: number;
  flowFile: string;
  changes: string[];
  agents: ForkAgentPlan[];
  limits: string[];
  cleaned: string[];
}

const strings = (v: unknown): string[] => asArray(v).filter((x): x is string => typeof x === 'string');

/** Reads forkRun's result's plan; undefined when there is none. */
export function readForkPlan(raw: unknown): ForkPlan | undefined {
  const p = asObject(asObject(raw).plan);
  const forkOf = readForkOrigin(p.forkOf);
  if (typeof p.runId !== 'string' || !forkOf) return undefined;
  return {
    runId: p.runId,
    forkOf,
    turns: typeof p.turns === 'number' ? p.turns : 0,
    flowFile: typeof p.flowFile === 'string' ? p.flowFile : '',
    changes: strings(p.changes),
    agents: asArray(p.agents).map((raw) => {
      const a = asObject(raw);
      return {
        id: String(a.id ?? '?'),
        files: typeof a.files === 'string' ? a.files : '',
        session: typeof a.session === 'string' ? a.session : undefined,
        restored: a.restored === true,
        resumed: a.resumed === true,
        limits: strings(a.limits),
      };
    }),
    limits: strings(p.limits),
    cleaned: strings(p.cleaned),
  };
}

/** The started fork's run id in forkRun's result, if it started one. */
export function forkedRunId(raw: unknown): string | undefined {
  const id = asObject(asObject(raw).run).runId;
  return typeof id === 'string' ? id : undefined;
}

/** The confirmation's text: per agent what comes back, then what cannot be restored. */
export function forkPlanDetail(plan: ForkPlan): string {
  const lines: string[] = [];
  for (const c of plan.changes) lines.push(`Changed: ${c}`);
  for (const a of plan.agents) {
    lines.push(`${a.id}: ${a.files}${a.session ? `; ${a.session}` : ''}.`);
    for (const l of a.limits) lines.push(`  ⚠ ${a.id}: ${l}.`);
  }
  for (const l of plan.limits) lines.push(`⚠ ${l.replace(/\.$/, '')}.`);
  for (const c of plan.cleaned) lines.push(`(${c}.)`);
  return lines.join('\n');
}

/** The runs listed at the top: all but the forks whose parent is listed (they go under it). */
export function topLevelRuns(runs: RunState[]): RunState[] {
  const ids = new Set(runs.map((r) => r.runId));
  return runs.filter((r) => !r.forkOf || !ids.has(r.forkOf.runId));
}

/** The forks of a run, newest first (runs come newest first). */
export function forksOf(runs: RunState[], runId: string): RunState[] {
  return runs.filter((r) => r.forkOf?.runId === runId);
}

/** A turn's line in the Runs view: its number and agent; its interaction, round and reply. */
export function turnLabel(t: Turn): { label: string; description: string } {
  // the reply's first line with content, past the standard response's section headers ("1. Intent")
  const reply =
    t.reply
      .split('\n')
      .map((l) => l.trim().replace(/^[-*]\s+/, ''))
      .find((l) => l !== '' && !/^#*\s*\d\.\s+[A-Z][A-Za-z/ ]+$/.test(l)) ?? '';
  const status = t.status === 'completed' ? '' : ` · ${t.status}`;
  return { label: `#${t.seq} ${t.agent}`, description: `${t.interactionId} · round ${t.round}${status}${reply ? ` · ${reply.slice(0, 80)}` : ''}` };
}

/** The changes typed for a fork, "KEY=VALUE" separated by ";" or new lines; blanks dropped. */
export function parseForkChanges(text: string): string[] {
  return text
    .split(/[;\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
