// An agent's transcript: the turns the sidecar keeps in .agentcanvas/runs/<run>/turns.jsonl
// (what the agent was sent, with secrets redacted; its reply, stderr, exit, duration, spend),
// rendered as a Markdown document the Runs view opens in an editor.
import { fenced } from './markdownText';

/** One turn, as the sidecar writes it (sidecar/transcript). */
export interface Turn {
  seq: number;
  interactionId: string;
  agent: string;
  from: string;
  round: number;
  backend: string;
  started: string;
  durationMs: number;
  status: string;
  reason?: string;
  exitCode: number;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  prompt: string;
  reply: string;
  stderr?: string[];
  truncated?: string[];
}

/** The path of a run's transcript, relative to the workspace folder. */
export function transcriptPath(runId: string): string[] {
  return ['.agentcanvas', 'runs', runId, 'turns.jsonl'];
}

/** The turns of a transcript file; a line cut by a crash ends the list. */
export function parseTurns(text: string): Turn[] {
  const out: Turn[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const t = JSON.parse(line) as Turn;
      if (typeof t.agent === 'string' && typeof t.seq === 'number') out.push(t);
    } catch {
      break;
    }
  }
  return out;
}

function header(t: Turn): string {
  const parts = [`interaction ${t.interactionId}`, `round ${t.round}`, `from ${t.from}`, t.backend, t.status];
  if (t.status !== 'completed' || t.exitCode !== 0) parts.push(`exit ${t.exitCode}`);
  parts.push(t.durationMs < 1000 ? `${t.durationMs} ms` : `${(t.durationMs / 1000).toFixed(1)} s`);
  if (t.inputTokens || t.outputTokens) parts.push(`${t.inputTokens ?? 0} in / ${t.outputTokens ?? 0} out tokens`);
  if (t.costUsd !== undefined) parts.push(`$${t.costUsd.toFixed(4)}`);
  return parts.join(' · ');
}

/** The Markdown document of agent's turns in run runId (its last turn last). */
export function renderTranscript(runId: string, agent: string, turns: Turn[]): string {
  const mine = turns.filter((t) => t.agent === agent);
  const lines = [`# ${agent} — run ${runId}`, ''];
  if (mine.length === 0) {
    lines.push(`No turn of ${agent} is recorded in this run (it did not run, or the run is older than transcripts).`);
    return lines.join('\n') + '\n';
  }
  lines.push(`${mine.length} turn(s). Secrets the run was given are shown as [redacted:NAME].`, '');
  for (const t of mine) {
    lines.push(`## Turn ${t.seq} (started ${t.started})`, '', header(t), '');
    if (t.reason) lines.push(`**Reason:** ${t.reason}`, '');
    lines.push('### Prompt', '', t.prompt ? fenced(t.prompt) : '(not sent)', '');
    lines.push('### Reply', '', t.reply ? fenced(t.reply) : '(empty)', '');
    lines.push('### Stderr', '', t.stderr?.length ? fenced(t.stderr.join('\n')) : '(none)', '');
    if (t.truncated?.length) lines.push(`_Cut to fit the transcript's bounds: ${t.truncated.join(', ')}._`, '');
  }
  return lines.join('\n');
}
