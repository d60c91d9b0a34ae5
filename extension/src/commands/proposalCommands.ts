// Review, Apply and Reject Proposal; the Proposals view's diff, accept and reject actions.
import * as vscode from 'vscode';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { CodeRequestFailed, Method, readApplyResult, type ApplyResult } from '../protocol';
import { describeError, withSidecar, type SidecarClient } from '../sidecar';
import type { Log } from '../log';
import { conflictsFromMessage, headWarning, mergeStates, scanProposals, selectionParams, selectionSummary, setAccepted, type Proposal } from '../views/proposalsModel';
import type { ProposalNode, ProposalsTree } from '../views/proposalsTree';

/** Serves the left side of a diff for a file the agent added (there is no input/ file). */
export const EMPTY_SCHEME = 'agentcanvas-empty';

export class ProposalController {
  private view: vscode.TreeView<ProposalNode> | undefined;

  constructor(
    private readonly sidecar: SidecarClient,
    private readonly log: Log,
    private readonly tree: ProposalsTree,
  ) {}

  attach(view: vscode.TreeView<ProposalNode>): vscode.Disposable {
    this.view = view;
    return view.onDidChangeCheckboxState((e) => {
      for (const [node, state] of e.items) {
        const on = state === vscode.TreeItemCheckboxState.Checked;
        if (node.kind === 'file') setAccepted(node.proposal, node.file.path, on);
        if (node.kind === 'hunk') setAccepted(node.proposal, node.file.path, on, node.index);
      }
      this.tree.refresh();
    });
  }

  async refresh(): Promise<void> {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!root) return;
    this.tree.proposals = await scanProposals(root, this.tree.proposals);
    this.tree.currentHead = await gitHead(root);
    if (this.sidecar.running) {
      // applied/rejected is the sidecar's record; the files on disk do not say it
      try {
        mergeStates(this.tree.proposals, await this.sidecar.request(Method.listProposals, {}), root);
      } catch (e) {
        this.log.warn(`listProposals: ${describeError(e)}`);
      }
    }
    this.tree.refresh();
    const pending = this.tree.proposals.filter((p) => p.status === 'pending').length;
    if (this.view) this.view.badge = pending > 0 ? { value: pending, tooltip: `${pending} proposal(s) to review` } : undefined;
  }

  register(): vscode.Disposable[] {
    const sel = (accepted: boolean) => (node?: ProposalNode) => {
      if (node?.kind === 'file') setAccepted(node.proposal, node.file.path, accepted);
      else if (node?.kind === 'hunk') setAccepted(node.proposal, node.file.path, accepted, node.index);
      this.tree.refresh();
    };
    return [
      vscode.workspace.registerTextDocumentContentProvider(EMPTY_SCHEME, { provideTextDocumentContent: () => '' }),
      vscode.commands.registerCommand('agentcanvas.refreshProposals', () => this.refresh()),
      vscode.commands.registerCommand('agentcanvas.reviewProposal', (node?: ProposalNode) => this.review(node)),
      vscode.commands.registerCommand('agentcanvas.applyProposal', (node?: ProposalNode) => withSidecar(this.sidecar, this.log, () => this.apply(node))),
      vscode.commands.registerCommand('agentcanvas.rejectProposal', (node?: ProposalNode) => withSidecar(this.sidecar, this.log, () => this.reject(node))),
      vscode.commands.registerCommand('agentcanvas.proposal.openDiff', (node?: ProposalNode) => this.openDiff(node)),
      vscode.commands.registerCommand('agentcanvas.proposal.accept', sel(true)),
      vscode.commands.registerCommand('agentcanvas.proposal.reject', sel(false)),
    ];
  }

  private async pick(node: ProposalNode | undefined, placeHolder: string): Promise<Proposal | undefined> {
    if (node && 'proposal' in node) return node.proposal;
    await this.refresh();
    const open = this.tree.proposals.filter((p) => p.status === 'pending' && !p.error);
    if (open.length === 0) {
      void vscode.window.showInformationMessage('AgentCanvas: no proposal is waiting for review.');
      return undefined;
    }
    if (open.length === 1) return open[0];
    const picked = await vscode.window.showQuickPick(
      open.map((p) => ({
        label: p.agentId,
        description: `${p.runId} · ${p.files.length} file(s) +${p.files.reduce((n, f) => n + f.added, 0)} −${p.files.reduce((n, f) => n + f.removed, 0)}`,
        detail: p.notes,
        p,
      })),
      { placeHolder },
    );
    return picked?.p;
  }

  private async review(node?: ProposalNode): Promise<void> {
    const p = await this.pick(node, 'Review which proposal?');
    if (!p) return;
    await vscode.commands.executeCommand('agentcanvas.proposals.focus');
    if (this.view) await this.view.reveal({ kind: 'proposal', proposal: p }, { expand: true, focus: true }).then(undefined, () => undefined);
    const summary = vscode.Uri.file(path.join(p.agentDir, 'proposal', 'summary.md'));
    try {
      await vscode.workspace.fs.stat(summary);
      await vscode.commands.executeCommand('markdown.showPreview', summary);
    } catch {
      // no summary written
    }
    if (p.files[0]) await this.openDiff({ kind: 'file', proposal: p, file: p.files[0] });
  }

  private async openDiff(node?: ProposalNode): Promise<void> {
    if (!node || (node.kind !== 'file' && node.kind !== 'hunk')) return;
    const { proposal: p, file: f } = node;
    const left = f.status === 'added' ? vscode.Uri.from({ scheme: EMPTY_SCHEME, path: '/' + f.path }) : vscode.Uri.file(path.join(p.inputDir, f.oldPath));
    const right = f.status === 'deleted' ? vscode.Uri.from({ scheme: EMPTY_SCHEME, path: '/' + f.path }) : vscode.Uri.file(path.join(p.workDir, f.path));
    const opts: vscode.TextDocumentShowOptions = { preview: true };
    if (node.kind === 'hunk') opts.selection = new vscode.Range(Math.max(0, node.hunk.newStart - 1), 0, Math.max(0, node.hunk.newStart - 1), 0);
    await vscode.commands.executeCommand('vscode.diff', left, right, `${f.path} (${p.agentId}: input ↔ work)`, opts);
  }

  private async apply(node?: ProposalNode): Promise<void> {
    const p = await this.pick(node, 'Apply which proposal?');
    if (!p) return;
    const s = selectionSummary(p);
    if (s.hunks === 0) {
      void vscode.window.showWarningMessage('AgentCanvas: nothing is accepted in this proposal. Tick files or hunks in the Proposals view, or reject it.');
      return;
    }
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const warn = headWarning(p, root ? await gitHead(root) : undefined);
    const what = s.hunks === s.totalHunks ? `all ${p.files.length} file(s)` : `${s.hunks} of ${s.totalHunks} hunk(s) in ${s.files} file(s)`;
    if (warn) {
      const go = await vscode.window.showWarningMessage(`Apply ${what} from ${p.agentId}?`, { modal: true, detail: warn }, 'Apply Anyway');
      if (go !== 'Apply Anyway') return;
    }
    const base = { runId: p.runId, agentId: p.agentId, ...selectionParams(p) };
    // Check first (git apply --check semantics): a conflict is explained before anything is written.
    const check = await this.applyRequest({ ...base, check: true });
    if (!check.applied) {
      await this.explainConflicts(p, check);
      return;
    }
    const res = await this.applyRequest(base);
    if (!res.applied) {
      await this.explainConflicts(p, res);
      return;
    }
    this.log.info(`applied ${what} of ${p.proposalJson}`);
    void vscode.window.showInformationMessage(`AgentCanvas: applied ${what} from ${p.agentId}.`);
    await this.refresh();
  }

  /** applyProposal; a refusal (-32803, the message lists the problems) becomes applied: false. */
  private async applyRequest(params: Record<string, unknown>): Promise<ApplyResult> {
    try {
      return readApplyResult(await this.sidecar.request(Method.applyProposal, params));
    } catch (e) {
      if ((e as { code?: unknown })?.code !== CodeRequestFailed) throw e;
      const message = e instanceof Error ? e.message : String(e);
      return { applied: false, files: [], conflicts: conflictsFromMessage(message), message };
    }
  }

  private async explainConflicts(p: Proposal, r: ApplyResult): Promise<void> {
    const lines = r.conflicts.map((c) => (c.path ? `- \`${c.path}\`: ${c.reason}` : `- ${c.reason}`));
    this.log.warn(`applying ${p.proposalJson} was refused: ${r.message ?? ''} ${r.conflicts.map((c) => `${c.path}: ${c.reason}`).join('; ')}`);
    // A notification shows no detail: the first problem goes in the message itself, so a
    // refusal by a folder setting says which file and which setting without a click.
    const problems = r.conflicts.map((c) => (c.path ? `${c.path}: ${c.reason}` : c.reason));
    const first = problems.length > 0 ? ` ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}` : '';
    const pick = await vscode.window.showErrorMessage(
      `AgentCanvas: the proposal from ${p.agentId} does not apply; the workspace is unchanged.${first}`,
      { detail: problems.length > 0 ? problems.join('\n') : r.message },
      'Show Details',
    );
    if (pick === 'Show Details') {
      const md = [
        `# Proposal ${p.agentId} (run ${p.runId}) does not apply`,
        '',
        r.message ?? '',
        '',
        ...lines,
        '',
        'A hunk conflicts when the lines it changes are no longer what the agent saw in its input/ copy:',
        'the file changed in the workspace after the run started. Nothing was written.',
        'Reject the conflicting hunks in the Proposals view and apply the rest, or re-run the flow.',
        'A file outside `agentcanvas.allowedFolders`, or in `agentcanvas.blockedFolders`, is refused',
        'until the settings allow it: untick it, or change the setting.',
      ].join('\n');
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ language: 'markdown', content: md }));
    }
  }

  private async reject(node?: ProposalNode): Promise<void> {
    const p = await this.pick(node, 'Reject which proposal?');
    if (!p) return;
    const reason = await vscode.window.showInputBox({ title: `Reject the proposal from ${p.agentId}`, prompt: 'Why (optional; recorded in the run log)' });
    if (reason === undefined) return;
    await this.sidecar.request(Method.rejectProposal, { runId: p.runId, agentId: p.agentId, reason });
    this.log.info(`rejected ${p.proposalJson}`);
    await this.refresh();
  }
}

/** HEAD of the workspace's git repository, or undefined outside git. */
export function gitHead(cwd: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('git', ['rev-parse', 'HEAD'], { cwd, timeout: 5000, windowsHide: true }, (err, stdout) => resolve(err ? undefined : stdout.trim() || undefined));
  });
}
