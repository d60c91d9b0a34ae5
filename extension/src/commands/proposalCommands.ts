// Review, Apply and Reject Proposal; the Proposals view's diff, accept and reject actions.
import * as vscode from 'vscode';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { CodeRequestFailed, Method, readApplyResult, readProposalSides, readReview, type ApplyResult, type MergeHunk, type Take } from '../protocol';
import { describeError, withSidecar, type SidecarClient } from '../sidecar';
import type { Log } from '../log';
import {
  applyReview,
  headWarning,
  mergeStates,
  problemsOf,
  scanProposals,
  selectionParams,
  selectionSummary,
  setAccepted,
  setResolution,
  unresolvedConflicts,
  type Proposal,
  type Resolution,
} from '../views/proposalsModel';
import type { ProposalNode, ProposalsTree } from '../views/proposalsTree';
import { confirmHeld, failedTest, heldFromError, PROPOSAL_SCHEME, ProposalDocuments, selectedHeld, testSummary } from '../views/reviewTruth';
import { noLinks } from '../views/markdownText';

export class ProposalController {
  private view: vscode.TreeView<ProposalNode> | undefined;
  private readonly refreshed = new vscode.EventEmitter<void>();
  /** Fires after each refresh of the proposals (the review comments follow it). */
  readonly onDidRefresh = this.refreshed.event;
  /** The two sides of each proposal's diff, as its patch makes them: read-only documents. */
  readonly sides = new ProposalDocuments(async (runId, agentId, file) => readProposalSides(await this.sidecar.request(Method.getProposalSides, { runId, agentId, path: file })));

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
        if (node.kind === 'mergeHunk') setAccepted(node.proposal, node.file.path, on, node.hunk.index - 1);
      }
      this.tree.refresh();
    });
  }

  async refresh(): Promise<void> {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!root) return;
    const previous = this.tree.proposals;
    this.tree.proposals = await scanProposals(root, previous);
    this.tree.currentHead = await gitHead(root);
    if (this.sidecar.running) {
      // applied/rejected is the sidecar's record; the files on disk do not say it
      try {
        mergeStates(this.tree.proposals, await this.sidecar.request(Method.listProposals, {}), root);
      } catch (e) {
        this.log.warn(`listProposals: ${describeError(e)}`);
      }
      // The sidecar's review of each open proposal: collisions with the others, and the merge
      // of files the workspace changed since it was made.
      for (const p of this.tree.proposals) {
        if (p.status !== 'pending' || p.error) continue;
        try {
          applyReview(p, readReview(await this.sidecar.request(Method.getProposal, { runId: p.runId, agentId: p.agentId })), previous.find((x) => x.agentDir === p.agentDir));
        } catch (e) {
          this.log.warn(`getProposal ${p.runId}/${p.agentId}: ${describeError(e)}`);
        }
      }
    }
    this.tree.refresh();
    this.refreshed.fire();
    const pending = this.tree.proposals.filter((p) => p.status === 'pending').length;
    if (this.view) this.view.badge = pending > 0 ? { value: pending, tooltip: `${pending} proposal(s) to review` } : undefined;
  }

  register(): vscode.Disposable[] {
    const sel = (accepted: boolean) => (node?: ProposalNode) => {
      if (node?.kind === 'file') setAccepted(node.proposal, node.file.path, accepted);
      else if (node?.kind === 'hunk') setAccepted(node.proposal, node.file.path, accepted, node.index);
      else if (node?.kind === 'mergeHunk') setAccepted(node.proposal, node.file.path, accepted, node.hunk.index - 1);
      this.tree.refresh();
    };
    return [
      vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, this.sides),
      this.sides,
      vscode.commands.registerCommand('agentcanvas.refreshProposals', () => this.refresh()),
      vscode.commands.registerCommand('agentcanvas.reviewProposal', (node?: ProposalNode) => this.review(node)),
      vscode.commands.registerCommand('agentcanvas.applyProposal', (node?: ProposalNode) => withSidecar(this.sidecar, this.log, () => this.apply(node))),
      vscode.commands.registerCommand('agentcanvas.rejectProposal', (node?: ProposalNode) => withSidecar(this.sidecar, this.log, () => this.reject(node))),
      vscode.commands.registerCommand('agentcanvas.proposal.openDiff', (node?: ProposalNode) => this.openDiff(node)),
      vscode.commands.registerCommand('agentcanvas.proposal.accept', sel(true)),
      vscode.commands.registerCommand('agentcanvas.proposal.reject', sel(false)),
      vscode.commands.registerCommand('agentcanvas.proposal.resolveConflict', (node?: ProposalNode) => this.resolveConflict(node)),
      vscode.commands.registerCommand('agentcanvas.proposal.showMergeHunk', (node?: ProposalNode) => this.showMergeHunk(node)),
      vscode.commands.registerCommand('agentcanvas.revertProposal', (node?: ProposalNode) => withSidecar(this.sidecar, this.log, () => this.revert(node))),
    ];
  }

  /** Settles one conflict of a merge: mine, theirs, both, the person's own text, or markers. */
  private async resolveConflict(node?: ProposalNode): Promise<void> {
    let target = node?.kind === 'mergeHunk' && node.hunk.conflict ? { p: node.proposal, file: node.file.path, hunk: node.hunk } : undefined;
    if (!target) {
      await this.refresh();
      const open = this.tree.proposals.filter((p) => p.status === 'pending').flatMap((p) => unresolvedConflicts(p).map((c) => ({ p, ...c })));
      if (open.length === 0) {
        void vscode.window.showInformationMessage('AgentCanvas: no proposal has a conflict to resolve.');
        return;
      }
      const picked =
        open.length === 1
          ? open[0]
          : (
              await vscode.window.showQuickPick(
                open.map((c) => ({ label: `${c.p.agentId}: ${c.file}`, description: `line ${c.hunk.start}`, c })),
                { placeHolder: 'Resolve which conflict?' },
              )
            )?.c;
      if (!picked) return;
      target = picked;
    }
    const { p, file, hunk } = target;
    const resolved = p.resolutions.get(file)?.get(hunk.index);
    type Item = vscode.QuickPickItem & { take?: Take; unresolve?: boolean };
    const items: Item[] = [
      { label: 'Take Mine', description: 'keep the workspace\'s lines', detail: firstLines(hunk.ours), take: 'mine' },
      { label: 'Take Theirs', description: `${p.agentId}'s lines`, detail: firstLines(hunk.theirs), take: 'theirs' },
    ];
    if (!hunk.whole) {
      items.push(
        { label: 'Take Both', description: 'the workspace\'s lines, then the proposal\'s', take: 'both' },
        { label: 'Edit…', description: 'write the lines yourself, starting from both sides', take: 'edit' },
        { label: 'Insert Conflict Markers', description: 'write both sides between <<<<<<< and >>>>>>> into the file', take: 'markers' },
      );
    }
    if (resolved) items.push({ label: 'Unresolve', description: `now: ${resolved.take}`, unresolve: true });
    const where = hunk.whole ? 'the whole file' : `line ${hunk.start}`;
    const choice = await vscode.window.showQuickPick(items, { title: `Resolve the conflict in ${file} (${where}) with ${p.agentId}`, placeHolder: hunk.reason ?? 'How should this conflict be resolved?' });
    if (!choice) return;
    let r: Resolution | undefined;
    if (choice.unresolve) r = undefined;
    else if (choice.take === 'edit') {
      const text = await this.editResolution(p, file, hunk);
      if (text === undefined) return;
      r = { take: 'edit', text };
    } else r = { take: choice.take! };
    setResolution(p, file, hunk, r);
    this.log.info(`${p.runId}/${p.agentId} ${file} hunk ${hunk.index}: ${r ? r.take : 'unresolved'}`);
    this.tree.refresh();
  }

  /** Opens both sides in an editor for the person to write the lines; undefined when cancelled. */
  private async editResolution(p: Proposal, file: string, hunk: MergeHunk): Promise<string | undefined> {
    const content = `<<<<<<< workspace\n${withNewline(hunk.ours)}=======\n${withNewline(hunk.theirs)}>>>>>>> ${p.agentId} (run ${p.runId})\n`;
    const doc = await vscode.workspace.openTextDocument({ content });
    await vscode.window.showTextDocument(doc, { preview: false });
    const go = await vscode.window.showInformationMessage(
      `Write the lines for ${file} (line ${hunk.start}) in the editor, then choose Use This Text.`,
      'Use This Text',
      'Cancel',
    );
    const text = doc.getText();
    if (vscode.window.activeTextEditor?.document === doc) await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    if (go !== 'Use This Text') return undefined;
    if (/^(<{7}|={7}|>{7})( |$)/m.test(text)) {
      const keep = await vscode.window.showWarningMessage('The text still has conflict markers. Use it anyway?', { modal: true }, 'Use It');
      if (keep !== 'Use It') return undefined;
    }
    return text;
  }

  /** Shows where a merge hunk lands: the workspace file at its lines. */
  private async showMergeHunk(node?: ProposalNode): Promise<void> {
    if (node?.kind !== 'mergeHunk') return;
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!root) return;
    const line = Math.max(0, node.hunk.start - 1);
    const end = Math.max(line, line + node.hunk.count - 1);
    try {
      await vscode.window.showTextDocument(vscode.Uri.file(path.join(root, node.file.path)), { preview: true, selection: new vscode.Range(line, 0, end, 0) });
    } catch {
      // the file is gone from the workspace (a whole-file conflict): the tooltip shows both sides
    }
  }

  /** Takes an applied proposal's changes back out, checked first, all or nothing. */
  private async revert(node?: ProposalNode): Promise<void> {
    let p = node && 'proposal' in node ? node.proposal : undefined;
    if (!p) {
      await this.refresh();
      const applied = this.tree.proposals.filter((x) => x.status === 'applied');
      if (applied.length === 0) {
        void vscode.window.showInformationMessage('AgentCanvas: no applied proposal to revert.');
        return;
      }
      p = applied.length === 1 ? applied[0] : (await vscode.window.showQuickPick(applied.map((x) => ({ label: x.agentId, description: x.runId, x })), { placeHolder: 'Revert which proposal?' }))?.x;
      if (!p) return;
    }
    const go = await vscode.window.showWarningMessage(
      `Revert the proposal from ${p.agentId}?`,
      { modal: true, detail: 'Its changes are taken back out of the workspace; what was applied or edited after it stays. It is checked first: if its lines changed since, nothing is written.' },
      'Revert',
    );
    if (go !== 'Revert') return;
    const params = { runId: p.runId, agentId: p.agentId };
    for (const check of [true, false]) {
      try {
        await this.sidecar.request(Method.revertProposal, { ...params, check });
      } catch (e) {
        if ((e as { code?: unknown })?.code !== CodeRequestFailed) throw e;
        const message = e instanceof Error ? e.message : String(e);
        const problems = problemsOf(e).map((c) => noLinks(c.path ? `${c.path}: ${c.reason}` : c.reason));
        this.log.warn(`reverting ${p.proposalJson} was refused: ${message}`);
        void vscode.window.showErrorMessage(`AgentCanvas: the proposal from ${p.agentId} cannot be reverted; the workspace is unchanged. ${problems[0] ?? noLinks(message)}`, {
          detail: problems.join('\n'),
        });
        return;
      }
    }
    this.log.info(`reverted ${p.proposalJson}`);
    void vscode.window.showInformationMessage(`AgentCanvas: reverted the proposal from ${p.agentId}.`);
    await this.refresh();
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

  private async openDiff(node?: ProposalNode & { line?: number }): Promise<void> {
    if (!node || (node.kind !== 'file' && node.kind !== 'hunk')) return;
    const { proposal: p, file: f } = node;
    // The two sides as the patch makes them (what Apply writes), never work/ as it is now.
    const ps = await withSidecar(this.sidecar, this.log, async () => readProposalSides(await this.sidecar.request(Method.getProposalSides, { runId: p.runId, agentId: p.agentId, path: f.path })));
    if (!ps) return;
    if (p.review && ps.patch !== p.review.patchDigest) {
      void vscode.window.showWarningMessage(`AgentCanvas: ${p.agentId}'s proposal changed since the Proposals view read it; it is read again.`);
      await this.refresh();
    }
    const side = this.sides.put(p, ps).find((s) => s.path === f.path);
    if (!side) return;
    const { left, right } = side;
    const opts: vscode.TextDocumentShowOptions = { preview: true };
    if (node.kind === 'hunk') opts.selection = new vscode.Range(Math.max(0, node.hunk.newStart - 1), 0, Math.max(0, node.hunk.newStart - 1), 0);
    else if (node.line) opts.selection = new vscode.Range(node.line - 1, 0, node.line - 1, 0); // a comment's line
    await vscode.commands.executeCommand('vscode.diff', left, right, `${f.path} (${p.agentId}'s proposal)`, opts);
  }

  private async apply(node?: ProposalNode): Promise<void> {
    const p = await this.pick(node, 'Apply which proposal?');
    if (!p) return;
    const s = selectionSummary(p);
    if (s.hunks === 0) {
      void vscode.window.showWarningMessage('AgentCanvas: nothing is accepted in this proposal. Tick files or hunks in the Proposals view, or reject it.');
      return;
    }
    const open = unresolvedConflicts(p);
    if (open.length > 0) {
      const go = await vscode.window.showWarningMessage(
        `${open.length} conflict(s) of ${p.agentId}'s proposal with the workspace are not resolved.`,
        { modal: true, detail: `${open.map((c) => `${c.file}, line ${c.hunk.start}`).join('\n')}\n\nApplying the rest leaves those lines as the workspace has them. Resolve a conflict from its row in the Proposals view (Resolve Conflict…).` },
        'Apply the Rest',
      );
      if (go !== 'Apply the Rest') return;
    }
    const failed = failedTest(p);
    if (failed) {
      const go = await vscode.window.showWarningMessage(
        `${p.agentId}'s last ${failed.kind === 'verify' ? 'verification' : 'tests'} failed: ${testSummary(failed)}.`,
        { modal: true, detail: `${failed.failing.slice(0, 12).join('\n')}\n\nApply it all the same?` },
        'Apply Anyway',
      );
      if (go !== 'Apply Anyway') return;
    }
    const confirm = await this.confirmHeldFiles(p);
    if (confirm === undefined) return;
    const s2 = selectionSummary(p);
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const warn = headWarning(p, root ? await gitHead(root) : undefined);
    const what = s2.hunks === s2.totalHunks ? `all ${p.files.length} file(s)` : `${s2.hunks} of ${s2.totalHunks} hunk(s) in ${s2.files} file(s)`;
    if (warn) {
      const go = await vscode.window.showWarningMessage(`Apply ${what} from ${p.agentId}?`, { modal: true, detail: warn }, 'Apply Anyway');
      if (go !== 'Apply Anyway') return;
    }
    // What the person reviewed is what is applied: the sidecar refuses a patch changed since.
    const base = { runId: p.runId, agentId: p.agentId, ...selectionParams(p), confirm, reviewed: p.review?.patchDigest || undefined };
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

  /**
   * The held files the selection applies, each confirmed by name: the person ticks the ones to
   * apply, and the others are left out of the selection. [] when none is held; undefined when
   * the person cancelled or left nothing to apply.
   */
  private async confirmHeldFiles(p: Proposal): Promise<string[] | undefined> {
    const held = selectedHeld(p);
    if (held.length === 0) return [];
    const ok = await confirmHeld(p, held);
    if (ok === undefined) return undefined;
    for (const h of held) if (!ok.includes(h.path)) setAccepted(p, h.path, false);
    this.tree.refresh();
    if (selectionSummary(p).hunks === 0) {
      void vscode.window.showInformationMessage('AgentCanvas: nothing is left to apply: no held file was confirmed.');
      return undefined;
    }
    return ok;
  }

  /** applyProposal; a refusal (-32803, the message lists the problems) becomes applied: false. */
  private async applyRequest(params: Record<string, unknown>): Promise<ApplyResult> {
    try {
      return readApplyResult(await this.sidecar.request(Method.applyProposal, params));
    } catch (e) {
      if ((e as { code?: unknown })?.code !== CodeRequestFailed) throw e;
      const message = e instanceof Error ? e.message : String(e);
      const held = heldFromError(e).map((h) => ({ path: h.path, reason: `held: ${h.reason}; review the proposal again and confirm it by name` }));
      return { applied: false, files: [], conflicts: held.length > 0 ? held : problemsOf(e), message };
    }
  }

  private async explainConflicts(p: Proposal, r: ApplyResult): Promise<void> {
    const lines = r.conflicts.map((c) => (c.path ? `- \`${c.path}\`: ${c.reason}` : `- ${c.reason}`));
    this.log.warn(`applying ${p.proposalJson} was refused: ${r.message ?? ''} ${r.conflicts.map((c) => `${c.path}: ${c.reason}`).join('; ')}`);
    // A notification shows no detail: the first problem goes in the message itself, so a
    // refusal by a folder setting says which file and which setting without a click.
    const problems = r.conflicts.map((c) => noLinks(c.path ? `${c.path}: ${c.reason}` : c.reason)); // a worker's file names
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
        'the file changed in the workspace after the run started (another proposal was applied, or it was edited).',
        'Nothing was written. The Proposals view shows such a file merged with the workspace: its clean hunks',
        'stay applicable, and each conflict can be resolved on its own (Resolve Conflict…: mine, theirs, both, or your text).',
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

function withNewline(s: string): string {
  return s === '' || s.endsWith('\n') ? s : s + '\n';
}

/** The first lines of a side, for a quick pick's detail. */
function firstLines(s: string): string {
  const lines = s.split('\n').filter((l) => l !== '');
  if (lines.length === 0) return '(nothing)';
  return lines.slice(0, 2).join(' ⏎ ').slice(0, 120) + (lines.length > 2 ? ' …' : '');
}
