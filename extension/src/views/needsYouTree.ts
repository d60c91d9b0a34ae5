// "Needs You": one list of everything waiting for the person, across runs — questions and
// dependency requests of agents, proposals to review, conflicts to resolve, comments not yet
// sent to their worker, revisions being made — each opening where it is answered. Its count is
// the status bar item's bell.
import * as vscode from 'vscode';
import type { PendingRequest } from '../protocol';
import { conversationOf, openComments, unresolvedConflicts, type Proposal } from './proposalsModel';

export type NeedKind = 'question' | 'dependency' | 'review' | 'conflict' | 'comments' | 'revising';

export interface Need {
  kind: NeedKind;
  label: string;
  detail: string;
  /** The command that opens where it is answered, with its argument; none for what only waits. */
  command?: { id: string; arg?: unknown };
}

/** Pure: what needs the person, in the order they are likely to act on it. */
export function needsOf(pending: readonly PendingRequest[], proposals: readonly Proposal[]): Need[] {
  const out: Need[] = [];
  for (const p of pending) {
    const who = p.agentId ?? 'an agent';
    if (p.kind === 'question') out.push({ kind: 'question', label: `${who} asks: ${p.question.question}`, detail: `run ${p.runId}`, command: { id: 'agentcanvas.answerPending', arg: p } });
    else out.push({ kind: 'dependency', label: `${who} needs ${p.dependency.type} ${p.dependency.name}`, detail: `run ${p.runId}`, command: { id: 'agentcanvas.answerPending', arg: p } });
  }
  for (const p of proposals) {
    if (p.status !== 'pending' || p.error) continue;
    const node = { kind: 'proposal', proposal: p };
    const conv = conversationOf(p);
    const conflicts = unresolvedConflicts(p).length;
    const unsent = openComments(p).filter((c) => c.sentIn === 0).length;
    if (conv?.revising) {
      out.push({ kind: 'revising', label: `${p.agentId} is revising its proposal`, detail: `run ${conv.revising.runId}` });
      continue;
    }
    if (conflicts > 0) out.push({ kind: 'conflict', label: `${p.agentId}: ${conflicts} conflict(s) to resolve`, detail: `run ${p.runId}`, command: { id: 'agentcanvas.proposal.resolveConflict' } });
    if (unsent > 0) out.push({ kind: 'comments', label: `${p.agentId}: ${unsent} comment(s) not sent yet`, detail: 'Request Changes sends them to the worker', command: { id: 'agentcanvas.requestChanges', arg: node } });
    else if (conflicts === 0) {
      const rev = conv && conv.revision > 1 ? `, revision ${conv.revision}` : '';
      const what = [runTime(p.runId), firstFile(p), rev.slice(2)].filter(Boolean).join(', ');
      out.push({ kind: 'review', label: `${p.agentId}: proposal to review (${what})`, detail: `run ${p.runId} · ${p.files.length} file(s)`, command: { id: 'agentcanvas.reviewProposal', arg: node } });
    }
  }
  return distinct(out);
}

/** When a run started, from its id (run_YYYYMMDD-HHMMSS_…, UTC), as local hours and minutes. */
export function runTime(runId: string, now = new Date()): string {
  const m = /^run_(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})_/.exec(runId);
  if (!m) return '';
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
  const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  return d.toDateString() === now.toDateString() ? hm : `${d.toLocaleDateString('en', { day: 'numeric', month: 'short' })} ${hm}`;
}

function firstFile(p: Proposal): string {
  if (p.files.length === 0) return '';
  return p.files.length === 1 ? p.files[0].path : `${p.files[0].path} and ${p.files.length - 1} more`;
}

/** Rows that would read alike (two runs of one worker in the same minute) get their run's own tag. */
function distinct(needs: Need[]): Need[] {
  const count = new Map<string, number>();
  for (const n of needs) count.set(n.label, (count.get(n.label) ?? 0) + 1);
  return needs.map((n) => {
    if ((count.get(n.label) ?? 0) < 2) return n;
    const tag = /_([0-9a-f]+)$/.exec(n.detail.split(' · ')[0])?.[1] ?? n.detail;
    return { ...n, label: `${n.label} [${tag}]` };
  });
}

/** One entry of the status bar item's menu: what to do about needs of some kinds. */
export interface NeedsMenuItem {
  label: string;
  count: number;
  /** The first need it stands for: its command opens where it is answered. */
  first: Need;
}

const MENU_WORDS: [NeedKind[], string, string][] = [
  [['question', 'dependency'], 'Answer 1 waiting request', 'Answer {n} waiting requests'],
  [['review'], 'Review 1 proposal', 'Review {n} proposals'],
  [['conflict'], 'Resolve the conflicts of 1 proposal', 'Resolve the conflicts of {n} proposals'],
  [['comments'], 'Send the comments of 1 proposal', 'Send the comments of {n} proposals'],
];

/**
 * Pure: the status bar menu's entries for what needs the person. Their counts add up to
 * actionable(needs), the bell's number, so the menu says what the bell counts.
 */
export function needsMenu(needs: readonly Need[]): NeedsMenuItem[] {
  const out: NeedsMenuItem[] = [];
  for (const [kinds, one, many] of MENU_WORDS) {
    const mine = needs.filter((n) => n.command && kinds.includes(n.kind));
    if (mine.length > 0) out.push({ label: mine.length === 1 ? one : many.replace('{n}', String(mine.length)), count: mine.length, first: mine[0] });
  }
  return out;
}

/** How many of them the person can act on (a revision being made only waits). */
export function actionable(needs: readonly Need[]): number {
  return needs.filter((n) => n.command).length;
}

const ICONS: Record<NeedKind, string> = {
  question: 'question',
  dependency: 'key',
  review: 'git-pull-request',
  conflict: 'git-merge',
  comments: 'comment-unresolved',
  revising: 'sync~spin',
};

export class NeedsYouTree implements vscode.TreeDataProvider<Need> {
  private readonly emitter = new vscode.EventEmitter<Need | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  needs: Need[] = [];

  set(needs: Need[]): void {
    this.needs = needs;
    this.emitter.fire(undefined);
  }

  getChildren(node?: Need): Need[] {
    return node ? [] : this.needs;
  }

  getTreeItem(n: Need): vscode.TreeItem {
    const it = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.None);
    it.description = n.detail;
    it.iconPath = new vscode.ThemeIcon(ICONS[n.kind]);
    it.contextValue = `need.${n.kind}`;
    if (n.command) it.command = { command: n.command.id, title: 'Open', arguments: n.command.arg === undefined ? [] : [n.command.arg] };
    return it;
  }
}
