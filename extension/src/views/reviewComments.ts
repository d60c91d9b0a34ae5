// Review comments in the editor (VS Code's Comments API): in the diff of a pending proposal, the
// right side of each changed file (as its patch makes it) takes comments on any line, kept by the sidecar with the
// proposal (.agentcanvas/…/proposal/review.json), so they survive a reload. Each comment shows as
// a thread with the worker's answer once a revision answered it.
import * as vscode from 'vscode';
import type { ReviewComment } from '../protocol';
import { commentState, conversationOf, type Proposal } from './proposalsModel';
import { proposedFile, proposedUri } from './reviewTruth';

export const REVIEW_CONTROLLER = 'agentcanvas.review';

/** A comment as the editor shows it; ids say which proposal comment it is. */
export class ReviewNote implements vscode.Comment {
  readonly mode = vscode.CommentMode.Preview;
  constructor(
    readonly body: string | vscode.MarkdownString,
    readonly author: vscode.CommentAuthorInformation,
    readonly proposal: Proposal,
    readonly comment: ReviewComment,
    readonly contextValue: string,
    readonly label?: string,
  ) {}
}

/**
 * Where a document is in a pending proposal: the proposal and the changed file's path. Only the
 * right side of a proposal's diff (the file as its patch makes it) takes comments: the lines a
 * comment names are the patch's, whatever the worker's work/ holds now.
 */
export function proposalFileOf(proposals: Proposal[], uri: vscode.Uri): { proposal: Proposal; file: string } | undefined {
  for (const p of proposals) {
    if (p.status !== 'pending' || p.error) continue;
    const file = proposedFile(p, uri);
    if (file !== undefined && p.files.some((f) => f.path === file && f.status !== 'deleted')) return { proposal: p, file };
  }
  return undefined;
}

export class ReviewComments implements vscode.Disposable {
  readonly controller = vscode.comments.createCommentController(REVIEW_CONTROLLER, 'AgentCanvas Review');
  private threads: vscode.CommentThread[] = [];
  private proposals: Proposal[] = [];

  constructor() {
    this.controller.options = {
      prompt: 'Comment for the worker…',
      placeHolder: 'What should change here? The worker gets it when you request changes. Start with "reject:" to reject this hunk.',
    };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (doc) => (proposalFileOf(this.proposals, doc.uri) ? [new vscode.Range(0, 0, Math.max(0, doc.lineCount - 1), 0)] : []),
    };
  }

  /** Shows every comment of the pending proposals as a thread on its line of the proposed file. */
  sync(proposals: Proposal[]): void {
    this.proposals = proposals;
    for (const t of this.threads) t.dispose();
    this.threads = [];
    for (const p of proposals) {
      if (p.status !== 'pending') continue;
      for (const c of conversationOf(p)?.comments ?? []) this.threads.push(this.thread(p, c));
    }
  }

  private thread(p: Proposal, c: ReviewComment): vscode.CommentThread {
    const uri = proposedUri(p, c.path);
    const line = Math.max(0, c.line - 1);
    const notes: vscode.Comment[] = [
      new ReviewNote(c.kind === 'reject' ? new vscode.MarkdownString().appendMarkdown('**Rejected:** ').appendText(c.text) : c.text, { name: 'You' }, p, c, c.sentIn > 0 ? 'sent' : 'open', `${c.id} · revision ${c.revision}`),
    ];
    if (c.answer) notes.push(new ReviewNote(c.answer, { name: p.agentId }, p, c, 'answer', `revision ${c.answeredIn}`));
    const t = this.controller.createCommentThread(uri, new vscode.Range(line, 0, line, 0), notes);
    t.label = `${c.id} · ${commentState(c)}`;
    t.canReply = false;
    t.contextValue = c.sentIn > 0 ? 'sent' : 'open';
    t.state = c.answeredIn > 0 ? vscode.CommentThreadState.Resolved : vscode.CommentThreadState.Unresolved;
    t.collapsibleState = c.answeredIn > 0 ? vscode.CommentThreadCollapsibleState.Collapsed : vscode.CommentThreadCollapsibleState.Expanded;
    return t;
  }

  /**
   * Opens an empty comment box on the cursor's line of a proposal's proposed file (the right
   * side of its diff): the keyboard's way to what the gutter's "+" does. False when the editor is
   * not on such a file.
   */
  commentAt(editor: vscode.TextEditor | undefined): boolean {
    if (!editor || !proposalFileOf(this.proposals, editor.document.uri)) return false;
    const line = editor.selection.active.line;
    const t = this.controller.createCommentThread(editor.document.uri, new vscode.Range(line, 0, line, 0), []);
    t.canReply = true;
    t.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    return true;
  }

  /** The proposal and place a new comment's thread is on. */
  placeOf(thread: vscode.CommentThread): { proposal: Proposal; file: string; line: number } | undefined {
    const at = proposalFileOf(this.proposals, thread.uri);
    if (!at) return undefined;
    return { ...at, line: thread.range ? thread.range.start.line + 1 : 0 };
  }

  dispose(): void {
    for (const t of this.threads) t.dispose();
    this.controller.dispose();
  }
}
