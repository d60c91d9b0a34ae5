// The Proposals view: per run and agent, the changed files with +/- counts and their hunks, each
// with a checkbox (accepted or not). Clicking a file opens the native diff of input/ against work/.
import * as vscode from 'vscode';
import { hunkLabel, type FilePatch, type Hunk } from '../patch';
import { headWarning, selectionSummary, type Proposal } from './proposalsModel';

export type ProposalNode =
  | { kind: 'proposal'; proposal: Proposal }
  | { kind: 'file'; proposal: Proposal; file: FilePatch }
  | { kind: 'hunk'; proposal: Proposal; file: FilePatch; hunk: Hunk; index: number }
  | { kind: 'warning'; proposal: Proposal; text: string }
  | { kind: 'message'; text: string };

export class ProposalsTree implements vscode.TreeDataProvider<ProposalNode> {
  private readonly emitter = new vscode.EventEmitter<ProposalNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  proposals: Proposal[] = [];
  currentHead: string | undefined;

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getChildren(node?: ProposalNode): ProposalNode[] {
    if (!node) {
      if (this.proposals.length === 0) return [{ kind: 'message', text: 'No proposals. Workers propose their edits here after a run.' }];
      return this.proposals.map((proposal) => ({ kind: 'proposal', proposal }));
    }
    if (node.kind === 'proposal') {
      const p = node.proposal;
      const out: ProposalNode[] = [];
      if (p.error) out.push({ kind: 'warning', proposal: p, text: p.error });
      const w = headWarning(p, this.currentHead);
      if (w) out.push({ kind: 'warning', proposal: p, text: w });
      for (const file of p.files) out.push({ kind: 'file', proposal: p, file });
      return out;
    }
    if (node.kind === 'file' && node.file.hunks.length > 1) {
      return node.file.hunks.map((hunk, index) => ({ kind: 'hunk', proposal: node.proposal, file: node.file, hunk, index }));
    }
    return [];
  }

  getTreeItem(node: ProposalNode): vscode.TreeItem {
    return proposalTreeItem(node);
  }

  getParent(node: ProposalNode): ProposalNode | undefined {
    if (node.kind === 'file' || node.kind === 'warning') return { kind: 'proposal', proposal: node.proposal };
    if (node.kind === 'hunk') return { kind: 'file', proposal: node.proposal, file: node.file };
    return undefined;
  }
}

function checkbox(on: boolean): vscode.TreeItemCheckboxState {
  return on ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked;
}

export function proposalTreeItem(node: ProposalNode): vscode.TreeItem {
  const C = vscode.TreeItemCollapsibleState;
  switch (node.kind) {
    case 'message':
      return new vscode.TreeItem(node.text, C.None);
    case 'warning': {
      const it = new vscode.TreeItem(node.text, C.None);
      it.iconPath = new vscode.ThemeIcon('warning');
      it.tooltip = node.text;
      return it;
    }
    case 'proposal': {
      const p = node.proposal;
      const it = new vscode.TreeItem(`${p.agentId}`, C.Expanded);
      it.id = `proposal:${p.agentDir}`;
      const s = selectionSummary(p);
      const added = p.files.reduce((n, f) => n + f.added, 0);
      const removed = p.files.reduce((n, f) => n + f.removed, 0);
      it.description = `${p.runId} · ${p.files.length} file(s) +${added} −${removed} · ${p.status}${s.hunks < s.totalHunks ? ` · ${s.hunks}/${s.totalHunks} hunks accepted` : ''}`;
      it.iconPath = new vscode.ThemeIcon(p.status === 'applied' ? 'pass' : p.status === 'rejected' ? 'close' : p.error ? 'warning' : 'git-pull-request');
      it.contextValue = p.status === 'pending' && !p.error ? 'proposal.pending' : 'proposal.closed';
      it.tooltip = [`run ${p.runId}`, `agent ${p.agentId}`, p.createdAt && `created ${p.createdAt}`, p.gitHead && `base ${p.gitHead}`, p.notes].filter(Boolean).join('\n');
      return it;
    }
    case 'file': {
      const f = node.file;
      const p = node.proposal;
      const flags = p.selection.get(f.path) ?? [];
      const it = new vscode.TreeItem(f.path, f.hunks.length > 1 ? C.Collapsed : C.None);
      it.id = `proposal:${p.agentDir}/f:${f.path}`;
      it.description = `${f.status}${f.binary ? ' (binary)' : ''} +${f.added} −${f.removed}${flags.some(Boolean) && !flags.every(Boolean) ? ` · ${flags.filter(Boolean).length}/${flags.length} hunks` : ''}`;
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
      it.description = `+${node.hunk.added} −${node.hunk.removed}`;
      it.checkboxState = node.proposal.status === 'pending' ? checkbox(flags[node.index] === true) : undefined;
      it.contextValue = 'proposal.hunk';
      it.tooltip = new vscode.MarkdownString('```diff\n' + node.hunk.lines.slice(0, 40).join('\n') + '\n```');
      it.command = { command: 'agentcanvas.proposal.openDiff', title: 'Open Diff', arguments: [node] };
      return it;
    }
  }
}
