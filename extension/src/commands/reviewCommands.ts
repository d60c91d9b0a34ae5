// Review that talks back: comments on a proposal's lines go to the worker that made it
// (Request Changes), which revises its proposal in its own sandbox; the interdiff shows what
// the revision changed; hunks can be marked reviewed, and the mark stays while a hunk does.
import * as vscode from 'vscode';
import { asObject, Method, readInterdiff, type RunEvent } from '../protocol';
import { describeError, withSidecar, type SidecarClient } from '../sidecar';
import type { Log } from '../log';
import { fileReviewed, hunkMark, openComments, type Proposal } from '../views/proposalsModel';
import type { ProposalNode, ProposalsTree } from '../views/proposalsTree';
import { ReviewComments, ReviewNote } from '../views/reviewComments';
import { interdiffTitle, REVISION_SCHEME, RevisionDocuments } from '../views/reviewTruth';

export class ReviewController implements vscode.Disposable {
  readonly comments = new ReviewComments();
  /** The two sides of each interdiff shown: read-only documents, one URI per revision and file. */
  readonly revisions = new RevisionDocuments();

  constructor(
    private readonly sidecar: SidecarClient,
    private readonly log: Log,
    private readonly tree: ProposalsTree,
    private readonly refresh: () => Promise<void>,
  ) {}

  register(): vscode.Disposable[] {
    const guarded = <A extends unknown[]>(f: (...a: A) => Promise<void>) => (...a: A) => withSidecar(this.sidecar, this.log, () => f(...a));
    return [
      this,
      vscode.workspace.registerTextDocumentContentProvider(REVISION_SCHEME, this.revisions),
      vscode.commands.registerCommand('agentcanvas.review.addComment', guarded((r: vscode.CommentReply) => this.add(r, 'comment'))),
      vscode.commands.registerCommand('agentcanvas.review.rejectHunk', guarded((r: vscode.CommentReply) => this.add(r, 'reject'))),
      vscode.commands.registerCommand('agentcanvas.review.commentLine', () => {
        if (!this.comments.commentAt(vscode.window.activeTextEditor)) {
          void vscode.window.showInformationMessage('AgentCanvas: put the cursor on a line of a pending proposal\'s changed file (the right side of its diff), then comment.');
        }
      }),
      vscode.commands.registerCommand('agentcanvas.review.deleteComment', guarded((n: ReviewNote) => this.delete(n))),
      vscode.commands.registerCommand('agentcanvas.requestChanges', guarded((node?: ProposalNode) => this.requestChanges(node))),
      vscode.commands.registerCommand('agentcanvas.proposal.showInterdiff', guarded((node?: ProposalNode) => this.showInterdiff(node))),
      vscode.commands.registerCommand('agentcanvas.proposal.toggleReviewed', guarded((node?: ProposalNode) => this.toggleReviewed(node))),
    ];
  }

  /** Keeps the editor's comment threads in step with the Proposals view. */
  sync(): void {
    this.comments.sync(this.tree.proposals);
  }

  /** A revision run ended: say what it did, with the way to see it. */
  onRunEvent(ev: RunEvent): void {
    if (ev.event !== 'proposal_revised') return;
    const f = ev;
    const agent = String(f.agent ?? 'the worker');
    const answered = typeof f.answered === 'number' ? f.answered : 0;
    void this.refresh();
    if (f.changed === true) {
      void vscode.window
        .showInformationMessage(`AgentCanvas: ${agent} revised its proposal: revision ${String(f.revision)}, ${answered} comment(s) answered.`, 'Show Changes')
        .then((pick) => {
          const p = this.tree.proposals.find((x) => x.runId === ev.runId && x.agentId === agent);
          if (pick && p) void this.showInterdiff({ kind: 'proposal', proposal: p });
        });
    } else {
      void vscode.window.showWarningMessage(`AgentCanvas: ${agent} changed nothing in answer to the comments (${answered} answered); its proposal stays at revision ${String(f.revision)}. The revision run's log says why.`);
    }
  }

  private async add(reply: vscode.CommentReply, kind: 'comment' | 'reject'): Promise<void> {
    const at = this.comments.placeOf(reply.thread);
    let text = reply.text.trim();
    if (kind === 'comment' && /^reject:/i.test(text)) {
      kind = 'reject';
      text = text.replace(/^reject:\s*/i, '');
    }
    if (!at) {
      void vscode.window.showWarningMessage('AgentCanvas: comments go on the changed files of a pending proposal (the right side of its diff).');
      return;
    }
    if (text === '') return;
    await this.sidecar.request(Method.addReviewComment, { runId: at.proposal.runId, agentId: at.proposal.agentId, path: at.file, line: at.line, kind, text });
    reply.thread.dispose(); // the draft: the kept comment comes back as its own thread
    this.log.info(`${kind} on ${at.proposal.runId}/${at.proposal.agentId} ${at.file}:${at.line}`);
    await this.refresh();
  }

  private async delete(n: ReviewNote): Promise<void> {
    if (!(n instanceof ReviewNote) || n.contextValue !== 'open') return;
    await this.sidecar.request(Method.deleteReviewComment, { runId: n.proposal.runId, agentId: n.proposal.agentId, id: n.comment.id });
    await this.refresh();
  }

  private async pick(node: ProposalNode | undefined, placeHolder: string, ok: (p: Proposal) => boolean): Promise<Proposal | undefined> {
    if (node && 'proposal' in node) return node.proposal;
    await this.refresh();
    const open = this.tree.proposals.filter(ok);
    if (open.length <= 1) return open[0];
    return (await vscode.window.showQuickPick(open.map((p) => ({ label: p.agentId, description: p.runId, p })), { placeHolder }))?.p;
  }

  private async requestChanges(node?: ProposalNode): Promise<void> {
    const p = await this.pick(node, 'Request changes to which proposal?', (x) => x.status === 'pending' && openComments(x).length > 0);
    if (!p) {
      void vscode.window.showInformationMessage('AgentCanvas: no proposal has an open comment. Open a proposal\'s diff and comment on a line (the + in the gutter), then request changes.');
      return;
    }
    const open = openComments(p);
    if (open.length === 0) {
      void vscode.window.showInformationMessage(`AgentCanvas: ${p.agentId}'s proposal has no open comment. Comment on its lines in the diff first.`);
      return;
    }
    const go = await vscode.window.showInformationMessage(
      `Send ${open.length} comment(s) to ${p.agentId}?`,
      { modal: true, detail: `${p.agentId} gets a new turn in its own sandbox, with your comments as its task, under its flow's confinement and limits. What it changes becomes the next revision of this proposal.\n\n${open.map((c) => `${c.path}${c.line ? `:${c.line}` : ''}: ${c.text}`).join('\n')}` },
      'Request Changes',
    );
    if (go !== 'Request Changes') return;
    try {
      const id = String(asObject(await this.sidecar.request(Method.requestChanges, { runId: p.runId, agentId: p.agentId })).runId ?? '');
      this.log.info(`requested changes to ${p.runId}/${p.agentId}: revision run ${id}`);
      void vscode.window.showInformationMessage(`AgentCanvas: ${p.agentId} is revising its proposal (run ${id}). The Runs view shows it; you are told when the revision is ready.`);
    } catch (e) {
      void vscode.window.showErrorMessage(`AgentCanvas: could not request changes: ${describeError(e)}`);
    }
    await this.refresh();
  }

  private async showInterdiff(node?: ProposalNode): Promise<void> {
    const p = await this.pick(node, 'Show the changes since which revision?', (x) => (x.review?.conversation?.revision ?? 1) > 1);
    if (!p) {
      void vscode.window.showInformationMessage('AgentCanvas: no proposal has been revised yet.');
      return;
    }
    const id = readInterdiff(await this.sidecar.request(Method.getInterdiff, { runId: p.runId, agentId: p.agentId }));
    const files = this.revisions.put(p, id);
    if (files.length === 0) {
      void vscode.window.showInformationMessage(`AgentCanvas: revision ${id.to} of ${p.agentId}'s proposal leaves every file as revision ${id.from} did.`);
      return;
    }
    // VS Code's diff editor on two read-only documents: nothing to save, the same tab each time.
    if (files.length === 1) {
      await vscode.commands.executeCommand('vscode.diff', files[0].left, files[0].right, interdiffTitle(p, id, files[0].path), { preview: true });
      return;
    }
    await vscode.commands.executeCommand(
      'vscode.changes',
      interdiffTitle(p, id),
      files.map((f) => [vscode.Uri.from({ scheme: REVISION_SCHEME, path: `/${p.runId}/${p.agentId}/${f.path}` }), f.left, f.right]),
    );
  }

  private async toggleReviewed(node?: ProposalNode): Promise<void> {
    if (!node || (node.kind !== 'file' && node.kind !== 'hunk')) return;
    const p = node.proposal;
    const marks = node.kind === 'hunk' ? [hunkMark(p, node.file.path, node.index)] : (p.review?.hunkMarks.get(node.file.path) ?? []);
    const keys = marks.filter((m) => m && m.key !== '').map((m) => m!.key);
    if (keys.length === 0) return;
    const reviewed = node.kind === 'hunk' ? !marks[0]?.reviewed : !fileReviewed(p, node.file.path);
    await this.sidecar.request(Method.markHunksReviewed, { runId: p.runId, agentId: p.agentId, keys, reviewed });
    await this.refresh();
  }

  dispose(): void {
    this.comments.dispose();
    this.revisions.dispose();
  }
}
