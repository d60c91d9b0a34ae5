import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readReview, readReviewConversation, readInterdiff } from '../../src/protocol';
import { commentState, fileReviewed, hunkMark, openComments, reviewSummary, type Proposal } from '../../src/views/proposalsModel';
import { ProposalsTree } from '../../src/views/proposalsTree';
import { proposalFileOf, ReviewComments } from '../../src/views/reviewComments';
import { PROPOSAL_SCHEME, proposedUri } from '../../src/views/reviewTruth';
import type { MockThread } from './vscode-mock';
import { actionable, needsOf, NeedsYouTree } from '../../src/views/needsYouTree';
import { renderStatus } from '../../src/status';

/** getProposal's answer for a proposal at revision 2 with one answered and one open comment. */
const getProposal = {
  applicable: true,
  files: [{ path: 'src/a.ts', hunks: [{ index: 1, key: 'k1', reviewed: true }, { index: 2, key: 'k2' }] }],
  review: {
    revision: 2,
    revisions: [
      { number: 1, createdAt: 't1', runId: 'r1' },
      { number: 2, createdAt: 't2', runId: 'r7', comments: ['c1'] },
    ],
    comments: [
      { id: 'c1', path: 'src/a.ts', line: 3, kind: 'comment', text: 'name it parseLine', createdAt: 't', revision: 1, sentIn: 2, answer: 'renamed it', answeredIn: 2 },
      { id: 'c2', path: 'src/a.ts', line: 9, kind: 'reject', text: 'keep the old check', createdAt: 't', revision: 2 },
    ],
    reviewed: ['k1'],
  },
};

function proposal(root: string): Proposal {
  const agentDir = path.join(root, '.agentcanvas', 'sandboxes', 'r1', 'coder');
  const file = { path: 'src/a.ts', oldPath: 'src/a.ts', status: 'modified', binary: false, added: 2, removed: 1, hunks: [], header: [] };
  return {
    runId: 'r1', agentId: 'coder', agentDir, proposalJson: path.join(agentDir, 'proposal', 'proposal.json'),
    inputDir: path.join(agentDir, 'input'), workDir: path.join(agentDir, 'work'), status: 'pending',
    files: [file as unknown as Proposal['files'][number]], selection: new Map(), mergeSelection: new Map(), resolutions: new Map(),
    review: readReview(getProposal),
  };
}

test('the review conversation is read from getProposal, with each hunk\'s key and mark', () => {
  const r = readReview(getProposal);
  assert.equal(r.conversation?.revision, 2);
  assert.equal(r.conversation?.comments[0].answer, 'renamed it');
  assert.equal(r.conversation?.comments[1].kind, 'reject');
  assert.equal(r.conversation?.comments[1].answeredIn, 0);
  assert.deepEqual(r.hunkMarks.get('src/a.ts'), [{ key: 'k1', reviewed: true }, { key: 'k2', reviewed: false }]);
  assert.equal(readReview({ files: [] }).conversation, undefined, 'a bare patch has no conversation');
  // Bad shapes read as empty, never throw.
  assert.deepEqual(readReviewConversation({ comments: 'x', revisions: [null] }).comments, []);
  assert.deepEqual(readInterdiff({ from: 1, to: 2, files: ['a', 3], patch: 'p' }), { from: 1, to: 2, files: ['a'], patch: 'p', sides: [] });
});

test('the proposal says its revision and its comments; the tree lists each comment with its answer', () => {
  const p = proposal('/ws');
  assert.equal(reviewSummary(p), 'revision 2 · 1 open comment · 1 answered');
  assert.deepEqual(openComments(p).map((c) => c.id), ['c2']);
  assert.equal(commentState(p.review!.conversation!.comments[0]), 'answered in revision 2');
  assert.equal(hunkMark(p, 'src/a.ts', 0)?.reviewed, true);
  assert.equal(fileReviewed(p, 'src/a.ts'), false, 'one of two hunks reviewed');
  const tree = new ProposalsTree();
  tree.proposals = [p];
  const [node] = tree.getChildren();
  assert.match(String(tree.getTreeItem(node).description), /^revision 2 · 1 open comment · 1 answered · /);
  const kids = tree.getChildren(node);
  const comments = kids.filter((k) => k.kind === 'comment');
  assert.equal(comments.length, 2);
  const first = tree.getTreeItem(comments[0]);
  assert.equal(first.label, 'name it parseLine');
  assert.equal(first.description, 'src/a.ts:3 · answered in revision 2 · coder: renamed it');
  assert.equal(first.contextValue, 'proposal.comment.sent');
  assert.equal(tree.getTreeItem(comments[1]).label, 'rejected: keep the old check');
  assert.deepEqual(tree.getParent(comments[1]), { kind: 'proposal', proposal: p });
});

test('comments show as threads on their lines of the proposed file (as the patch makes it), and only changed files of pending proposals take new ones', () => {
  const p = proposal('/ws');
  const rc = new ReviewComments();
  rc.sync([p]);
  const threads = (rc.controller as unknown as { threads: MockThread[] }).threads;
  assert.equal(threads.length, 2);
  assert.equal(threads[0].uri.toString(), proposedUri(p, 'src/a.ts').toString());
  assert.equal(threads[0].range.start.line, 2);
  assert.equal(threads[0].label, 'c1 · answered in revision 2');
  assert.equal(threads[0].comments.length, 2, 'the comment and the worker\'s answer');
  assert.equal(threads[0].state, vscode.CommentThreadState.Resolved);
  assert.equal(threads[1].state, vscode.CommentThreadState.Unresolved);
  assert.equal(threads[1].contextValue, 'open');

  assert.deepEqual(proposalFileOf([p], proposedUri(p, 'src/a.ts')), { proposal: p, file: 'src/a.ts' });
  assert.equal(proposalFileOf([p], proposedUri(p, 'src/other.ts')), undefined, 'a file the proposal does not change');
  assert.equal(proposalFileOf([p], vscode.Uri.file(path.join(p.workDir, 'src', 'a.ts'))), undefined, 'the work/ file: the worker may have changed it since');
  assert.equal(proposalFileOf([p], vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${p.runId}/${p.agentId}/made from/src/a.ts` })), undefined, 'the left side');
  assert.equal(proposalFileOf([{ ...p, status: 'applied' }], proposedUri(p, 'src/a.ts')), undefined, 'an applied proposal');
  const draft = { uri: proposedUri(p, 'src/a.ts'), range: new vscode.Range(6, 0, 6, 0) } as unknown as vscode.CommentThread;
  assert.deepEqual(rc.placeOf(draft), { proposal: p, file: 'src/a.ts', line: 7 });

  rc.sync([]);
  assert.ok(threads.every((t) => t.disposed), 'threads of proposals no longer shown are disposed');
});

test('Needs You lists questions, dependencies, proposals to review, conflicts and unsent comments, each with where it is answered', () => {
  const withUnsent = proposal('/ws'); // c2 is open and not sent
  const plain = { ...proposal('/ws2'), agentId: 'writer', review: readReview({ files: [] }) };
  const revising = proposal('/ws3');
  revising.agentId = 'fixer';
  revising.review!.conversation!.revising = { runId: 'r9', since: 't' };
  const applied = { ...proposal('/ws4'), status: 'applied' as const };
  const needs = needsOf(
    [
      { kind: 'question', runId: 'r1', requestId: 'q1', agentId: 'asker', question: { question: 'Which database?' } },
      { kind: 'dependency', runId: 'r1', requestId: 'd1', agentId: 'asker', dependency: { type: 'api_key', name: 'SERVICE_KEY' } },
    ],
    [withUnsent, plain, revising, applied],
  );
  assert.deepEqual(
    needs.map((n) => [n.kind, n.label, n.command?.id]),
    [
      ['question', 'asker asks: Which database?', 'agentcanvas.answerPending'],
      ['dependency', 'asker needs api_key SERVICE_KEY', 'agentcanvas.answerPending'],
      ['comments', 'coder: 1 comment(s) not sent yet', 'agentcanvas.requestChanges'],
      ['review', 'writer: proposal to review (src/a.ts)', 'agentcanvas.reviewProposal'],
      ['revising', 'fixer is revising its proposal', undefined],
    ],
  );
  assert.equal(actionable(needs), 4, 'a revision being made only waits');
  const tree = new NeedsYouTree();
  tree.set(needs);
  const it = tree.getTreeItem(needs[2]);
  assert.equal(it.command?.command, 'agentcanvas.requestChanges');
  assert.deepEqual(it.command?.arguments, [{ kind: 'proposal', proposal: withUnsent }]);
});

test('the status bar bell counts requests and the other things that need the person', () => {
  const v = renderStatus('running', { health: 'ok' }, 1, 3);
  assert.equal(v.text, '$(check) AgentCanvas $(bell) 4');
  assert.match(v.tooltip, /1 request\(s\) waiting for you\n3 proposal\(s\), conflict\(s\) or comment\(s\) waiting for you \(the Needs You view\)/);
  assert.equal(renderStatus('running', { health: 'ok' }, 0, 0).text, '$(check) AgentCanvas');
});
