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
      const rev = conv && conv.revision > 1 ? ` (revision ${conv.revision})` : '';
      out.push({ kind: 'review', label: `${p.agentId}: proposal to review${rev}`, detail: `run ${p.runId} · ${p.files.length} file(s)`, command: { id: 'agentcanvas.reviewProposal', arg: node } });
    }
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
