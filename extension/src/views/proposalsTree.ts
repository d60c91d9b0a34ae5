// The Proposals view: per run and agent, the changed files with +/- counts and their hunks, each
// with a checkbox (accepted or not). Clicking a file opens the native diff of input/ against work/.
// Collisions with other workers' open proposals show on the proposal (a conflict badge and the
// other worker's name) and on each hunk; a file the workspace changed since the proposal was made
// shows its three-way merge instead: clean hunks to tick, conflicts to resolve one by one.
import * as vscode from 'vscode';
import { hunkLabel, type FilePatch, type Hunk } from '../patch';
import type { Collision, MergeHunk, ReviewComment } from '../protocol';
import { commentPlace, commentState, conversationOf, fileReviewed, headWarning, hunkMark, mergeOf, reviewSummary, selectionSummary, unresolvedConflicts, type Proposal } from './proposalsModel';
import { heldFile, truthLines, truthMarks } from './reviewTruth';
import { fenced } from './markdownText';

export type ProposalNode =
  | { kind: 'proposal'; proposal: Proposal }
  | { kind: 'file'; proposal: Proposal; file: FilePatch }
  | { kind: 'hunk'; proposal: Proposal; file: FilePatch; hunk: Hunk; index: number }
  | { kind: 'mergeHunk'; proposal: Proposal; file: FilePatch; hunk: MergeHunk }
  | { kind: 'warning'; proposal: Proposal; text: string; conflict?: boolean; alarm?: boolean }
  | { kind: 'comment'; proposal: Proposal; comment: ReviewComment }
  | { kind: 'closed'; proposals: Proposal[] }
  | { kind: 'message'; text: string };

/** Rejected and reverted proposals: nothing left to do with them, folded into one row. */
export const isClosed = (p: Proposal): boolean => p.status === 'rejected' || p.status === 'reverted';

/**
 * Pure: the view's top rows. Pending and applied proposals (an applied one may be reverted),
 * then the rejected and reverted ones folded into a last, collapsed row.
 */
export function rootNodes(proposals: readonly Proposal[]): ProposalNode[] {
  if (proposals.length === 0) return [{ kind: 'message', text: 'No proposals. Workers propose their edits here after a run.' }];
  const closed = proposals.filter(isClosed);
  const out: ProposalNode[] = proposals.filter((p) => !isClosed(p)).map((proposal) => ({ kind: 'proposal', proposal }));
  if (closed.length > 0) out.push({ kind: 'closed', proposals: closed });
  return out;
}

export class ProposalsTree implements vscode.TreeDataProvider<ProposalNode> {
  private readonly emitter = new vscode.EventEmitter<ProposalNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  proposals: Proposal[] = [];
  currentHead: string | undefined;

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getChildren(node?: ProposalNode): ProposalNode[] {
    if (!node) return rootNodes(this.proposals);
    if (node.kind === 'closed') return node.proposals.map((proposal) => ({ kind: 'proposal', proposal }));
    if (node.kind === 'proposal') {
      const p = node.proposal;
      const out: ProposalNode[] = [];
      if (p.error) out.push({ kind: 'warning', proposal: p, text: p.error });
      for (const text of truthLines(p)) out.push({ kind: 'warning', proposal: p, text, alarm: true });
      const w = headWarning(p, this.currentHead);
      if (w) out.push({ kind: 'warning', proposal: p, text: w });
      if (p.status === 'pending') for (const text of conflictLines(p)) out.push({ kind: 'warning', proposal: p, text, conflict: true });
      for (const file of p.files) out.push({ kind: 'file', proposal: p, file });
      for (const comment of conversationOf(p)?.comments ?? []) out.push({ kind: 'comment', proposal: p, comment });
      return out;
    }
    if (node.kind === 'file') {
      const m = node.proposal.status === 'pending' ? mergeOf(node.proposal, node.file.path) : undefined;
      if (m) return m.hunks.map((hunk) => ({ kind: 'mergeHunk', proposal: node.proposal, file: node.file, hunk }));
      if (node.file.hunks.length > 1) return node.file.hunks.map((hunk, index) => ({ kind: 'hunk', proposal: node.proposal, file: node.file, hunk, index }));
    }
    return [];
  }

  getTreeItem(node: ProposalNode): vscode.TreeItem {
    return proposalTreeItem(node);
  }

  getParent(node: ProposalNode): ProposalNode | undefined {
    if (node.kind === 'file' || node.kind === 'warning' || node.kind === 'comment') return { kind: 'proposal', proposal: node.proposal };
    if (node.kind === 'hunk' || node.kind === 'mergeHunk') return { kind: 'file', proposal: node.proposal, file: node.file };
    if (node.kind === 'proposal' && isClosed(node.proposal)) return { kind: 'closed', proposals: this.proposals.filter(isClosed) };
    return undefined;
  }
}

function checkbox(on: boolean): vscode.TreeItemCheckboxState {
  return on ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked;
}

/** The other workers a pending proposal collides with, by name ("worker_1", or "worker_1 (run r2)" for another run's). */
export function conflictNames(p: Proposal): string[] {
  const names: string[] = [];
  const add = (runId: string, agentId: string) => {
    const n = runId === p.runId ? agentId : `${agentId} (run ${runId})`;
    if (!names.includes(n)) names.push(n);
  };
  if (p.review) for (const c of p.review.collisions) add(c.otherRunId, c.otherAgentId);
  else for (const c of p.conflictsWith ?? []) add(c.runId, c.agentId);
  return names;
}

/** One line per collision with another open proposal, for the proposal's rows. */
function conflictLines(p: Proposal): string[] {
  return (p.review?.collisions ?? []).map((c) => `Conflicts with ${c.otherAgentId} (run ${c.otherRunId}) in ${c.path}: ${c.message}`);
}

function collisionNote(cs: Collision[] | undefined): string {
  if (!cs || cs.length === 0) return '';
  const names = [...new Set(cs.map((c) => c.otherAgentId))];
  return ` · ⚠ collides with ${names.join(', ')}`;
}

/** "1st", "2nd", "3rd", "4th"… */
export function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${s}`;
}

export function proposalTreeItem(node: ProposalNode): vscode.TreeItem {
  const C = vscode.TreeItemCollapsibleState;
  switch (node.kind) {
    case 'message':
      return new vscode.TreeItem(node.text, C.None);
    case 'closed': {
      const it = new vscode.TreeItem(`Rejected or reverted (${node.proposals.length})`, C.Collapsed);
      it.id = 'proposals:closed';
      it.iconPath = new vscode.ThemeIcon('archive');
      it.tooltip = 'Proposals rejected or reverted: nothing is left to do with them.';
      return it;
    }
    case 'warning': {
      const it = new vscode.TreeItem(node.text, C.None);
      it.iconPath = new vscode.ThemeIcon(node.conflict ? 'git-compare' : node.alarm ? 'error' : 'warning');
      it.tooltip = node.text;
      it.contextValue = node.conflict ? 'proposal.collision' : undefined;
      return it;
    }
    case 'proposal': {
      const p = node.proposal;
      const it = new vscode.TreeItem(`${p.agentId}`, isClosed(p) ? C.Collapsed : C.Expanded);
      it.id = `proposal:${p.agentDir}`;
      const s = selectionSummary(p);
      const added = p.files.reduce((n, f) => n + f.added, 0);
      const removed = p.files.reduce((n, f) => n + f.removed, 0);
      const parts = [`${p.runId} · ${p.files.length} file(s) +${added} −${removed} · ${p.status}`];
      const names = p.status === 'pending' ? conflictNames(p) : [];
      const unresolved = p.status === 'pending' ? unresolvedConflicts(p).length : 0;
      if (p.status === 'pending') {
        // First, so a narrow view still shows it.
        if (names.length > 0) parts.unshift(`⚠ conflicts with ${names.join(', ')}`);
        else if (p.review || p.conflictsWith) parts.push('no conflicts');
        if (unresolved > 0) parts.push(`${unresolved} to resolve`);
        else if (p.review && p.review.merges.size > 0) parts.push('merged with the workspace');
        if (p.order !== undefined) parts.push(`apply ${ordinal(p.order)}`);
      }
      if (s.hunks < s.totalHunks) parts.push(`${s.hunks}/${s.totalHunks} hunks accepted`);
      const talk = reviewSummary(p);
      if (talk) parts.unshift(talk);
      parts.unshift(...truthMarks(p)); // first of all: what must be seen before applying
      it.description = parts.join(' · ');
      const warn = names.length > 0 || unresolved > 0;
      it.iconPath = new vscode.ThemeIcon(
        p.status === 'applied'
          ? 'pass'
          : p.status === 'rejected'
            ? 'close'
            : p.status === 'reverted'
              ? 'discard'
              : p.error
                ? 'warning'
                : truthMarks(p).length > 0
                  ? 'shield'
                  : warn
                    ? 'git-compare'
                    : 'git-pull-request',
      );
      it.contextValue = p.status === 'pending' && !p.error ? 'proposal.pending' : p.status === 'applied' ? 'proposal.applied' : 'proposal.closed';
      it.tooltip = [
        `run ${p.runId}`,
        `agent ${p.agentId}`,
        p.createdAt && `created ${p.createdAt}`,
        p.gitHead && `base ${p.gitHead}`,
        p.notes,
        ...truthLines(p),
        names.length > 0 && `conflicts with ${names.join(', ')}`,
        p.order !== undefined && `suggested order: apply ${ordinal(p.order)} (the proposal that conflicts least first)`,
      ]
        .filter(Boolean)
        .join('\n');
      return it;
    }
    case 'file': {
      const f = node.file;
      const p = node.proposal;
      const m = p.status === 'pending' ? mergeOf(p, f.path) : undefined;
      if (m) {
        const it = new vscode.TreeItem(f.path, m.hunks.length > 0 ? (m.conflicts > 0 ? C.Expanded : C.Collapsed) : C.None);
        // Its own id per workspace version: the tree would otherwise keep the row as it was
        // folded before the merge (and conflicts must show at once).
        it.id = `proposal:${p.agentDir}/f:${f.path}/merge:${m.workspace}`;
        const open = unresolvedConflicts(p).filter((x) => x.file === f.path).length;
        it.description =
          m.state === 'applied'
            ? 'already in the workspace'
            : `changed in the workspace since: merged · ${m.hunks.length - m.conflicts} clean${m.conflicts > 0 ? ` · ${m.conflicts} conflict(s)${open > 0 ? `, ${open} to resolve` : ''}` : ''}`;
        const flags = p.mergeSelection.get(f.path) ?? [];
        it.resourceUri = vscode.Uri.file(f.path);
        it.checkboxState = m.hunks.length > 0 ? checkbox(flags.some(Boolean)) : undefined;
        it.contextValue = 'proposal.file';
        it.command = { command: 'agentcanvas.proposal.openDiff', title: 'Open Diff', arguments: [node] };
        return it;
      }
      const flags = p.selection.get(f.path) ?? [];
      const it = new vscode.TreeItem(f.path, f.hunks.length > 1 ? C.Collapsed : C.None);
      it.id = `proposal:${p.agentDir}/f:${f.path}`;
      const single = f.hunks.length <= 1 ? collisionNote(p.review?.hunkCollisions.get(f.path)?.flat()) : '';
      const held = p.status === 'pending' ? heldFile(p, f.path) : undefined;
      it.description = `${held ? `⚠ ${held.kind === 'name' ? 'name looks like another' : 'changes how things run'} · ` : ''}${f.status}${f.binary ? ' (binary)' : ''} +${f.added} −${f.removed}${flags.some(Boolean) && !flags.every(Boolean) ? ` · ${flags.filter(Boolean).length}/${flags.length} hunks` : ''}${p.status === 'pending' ? single : ''}${fileReviewed(p, f.path) ? ' · reviewed ✓' : ''}`;
      if (held) {
        it.label = held.shown; // a look-alike or invisible character is shown as its escape
        it.iconPath = new vscode.ThemeIcon('shield');
        it.tooltip = `${held.shown}: ${held.reason}. Applied only when you confirm it by name.`;
      }
      it.resourceUri = vscode.Uri.file(f.path);
      it.checkboxState = p.status === 'pending' ? checkbox(flags.some(Boolean)) : undefined;
      it.contextValue = 'proposal.file';
      it.command = { command: 'agentcanvas.proposal.openDiff', title: 'Open Diff', arguments: [node] };
      return it;
    }
    case 'hunk': {
      const flags = node.proposal.selection.get(node.file.path) ?? [];
      const it = new vscode.TreeItem(hunkLabel(node.hunk), C.None);
      it.id = `proposal:${node.proposal.agentDir}/f:${node.file.path}/h:${node.index}`;
      const cs = node.proposal.status === 'pending' ? node.proposal.review?.hunkCollisions.get(node.file.path)?.[node.index] : undefined;
      it.description = `+${node.hunk.added} −${node.hunk.removed}${collisionNote(cs)}${hunkMark(node.proposal, node.file.path, node.index)?.reviewed ? ' · reviewed ✓' : ''}`;
      it.checkboxState = node.proposal.status === 'pending' ? checkbox(flags[node.index] === true) : undefined;
      it.contextValue = 'proposal.hunk';
      const md = new vscode.MarkdownString(fenced(node.hunk.lines.slice(0, 40).join('\n'), 'diff')); // the worker's lines, as text
      for (const c of cs ?? []) md.appendMarkdown(`\n\n⚠ ${c.message}`);
      it.tooltip = md;
      it.command = { command: 'agentcanvas.proposal.openDiff', title: 'Open Diff', arguments: [node] };
      return it;
    }
    case 'comment': {
      const { proposal: p, comment: c } = node;
      const it = new vscode.TreeItem(`${c.kind === 'reject' ? 'rejected: ' : ''}${c.text.split('\n')[0].slice(0, 80)}`, C.None);
      it.id = `proposal:${p.agentDir}/c:${c.id}`;
      it.description = `${commentPlace(c)} · ${commentState(c)}${c.answer ? ` · ${p.agentId}: ${c.answer.slice(0, 60)}` : ''}`;
      it.iconPath = new vscode.ThemeIcon(c.answeredIn > 0 ? 'comment-discussion' : c.kind === 'reject' ? 'comment-unresolved' : 'comment');
      it.contextValue = c.sentIn > 0 ? 'proposal.comment.sent' : 'proposal.comment';
      const md = new vscode.MarkdownString().appendMarkdown(`**${c.id}** on \`${commentPlace(c)}\` (revision ${c.revision}): `).appendText(c.text);
      if (c.answer) md.appendMarkdown(`\n\n**${p.agentId}** (revision ${c.answeredIn}): `).appendText(c.answer);
      it.tooltip = md;
      const file = p.files.find((f) => f.path === c.path);
      if (file) it.command = { command: 'agentcanvas.proposal.openDiff', title: 'Open Diff', arguments: [{ kind: 'file', proposal: p, file, line: c.line }] };
      return it;
    }
    case 'mergeHunk': {
      const { proposal: p, file: f, hunk: h } = node;
      const r = p.resolutions.get(f.path)?.get(h.index);
      const flags = p.mergeSelection.get(f.path) ?? [];
      const where = h.count === 0 ? `before line ${h.start}` : h.count === 1 ? `line ${h.start}` : `lines ${h.start}–${h.start + h.count - 1}`;
      const first = (h.theirs.split('\n').find((l) => l.trim() !== '') ?? '').slice(0, 60);
      const it = new vscode.TreeItem(h.conflict ? `⚠ conflict: ${h.whole ? 'the whole file' : where}` : `${where}: ${first}`, C.None);
      it.id = `proposal:${p.agentDir}/f:${f.path}/merge:${mergeOf(p, f.path)?.workspace ?? ''}/m:${h.index}`;
      const from = h.from.length > 0 ? ` (from ${h.from.join(', ')})` : '';
      if (h.conflict) {
        it.description = r ? `resolved: ${r.take === 'edit' ? 'edited' : r.take}` : `the workspace${from} changed these lines too: resolve`;
        it.checkboxState = r ? checkbox(flags[h.index - 1] === true) : undefined;
        it.contextValue = 'proposal.conflict';
      } else {
        it.description = `clean · +${lineCount(h.theirs)} −${lineCount(h.ours)}`;
        it.checkboxState = checkbox(flags[h.index - 1] === true);
        it.contextValue = 'proposal.mergeHunk';
      }
      const md = new vscode.MarkdownString();
      if (h.reason) md.appendText(h.reason).appendMarkdown('\n\n');
      md.appendMarkdown(`**The workspace**${from}:\n\n${fenced(h.ours || '(nothing)')}\n`);
      md.appendMarkdown(`\n**${p.agentId}** (run ${p.runId}):\n\n${fenced(h.theirs || '(nothing)')}\n`);
      if (h.conflict && h.base) md.appendMarkdown(`\n**What both started from:**\n\n${fenced(h.base)}\n`);
      it.tooltip = md;
      it.command = { command: 'agentcanvas.proposal.showMergeHunk', title: 'Show in the Workspace File', arguments: [node] };
      return it;
    }
  }
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}
