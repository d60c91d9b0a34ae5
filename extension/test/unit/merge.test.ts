// The Proposals view's side of conflicts, merges and provenance: the sidecar's review read into
// the model, the conflict badge and the other worker's name, merge hunks picked and conflicts
// resolved into applyProposal's selection, and the hover text of a line an agent wrote.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readLineOrigins, readReview } from '../../src/protocol';
import { applyReview, mergeStates, problemsOf, scanProposals, selectionParams, selectionSummary, setAccepted, setResolution, unresolvedConflicts } from '../../src/views/proposalsModel';
import { ordinal, proposalTreeItem, ProposalsTree } from '../../src/views/proposalsTree';
import { originMarkdown } from '../../src/views/lineOrigins';

/** Two files changed by one proposal, as `proposal create` lays it out. */
function workspace(): { ws: string; cleanup: () => void } {
  const ws = mkdtempSync(path.join(tmpdir(), 'ac-merge-'));
  const agentDir = path.join(ws, '.agentcanvas', 'sandboxes', 'r1', 'worker_2');
  for (const d of ['input', 'work', 'proposal']) mkdirSync(path.join(agentDir, d), { recursive: true });
  const base = Array.from({ length: 30 }, (_, i) => `l${i + 1}`).join('\n') + '\n';
  writeFileSync(path.join(agentDir, 'input', 'a.ts'), base);
  writeFileSync(path.join(agentDir, 'input', 'b.ts'), base);
  writeFileSync(path.join(agentDir, 'work', 'a.ts'), base.replace('l3\n', 'w2 three\n').replace('l20\n', 'w2 twenty\n'));
  writeFileSync(path.join(agentDir, 'work', 'b.ts'), base.replace('l2\n', 'B2\n').replace('l25\n', 'B25\n'));
  const d = spawnSync('git', ['diff', '--no-index', '--no-color', 'input', 'work'], { cwd: agentDir, encoding: 'utf8' });
  writeFileSync(path.join(agentDir, 'proposal', 'changes.patch'), d.stdout.replace(/a\/input\//g, 'a/').replace(/b\/work\//g, 'b/'));
  writeFileSync(path.join(agentDir, 'proposal', 'proposal.json'), JSON.stringify({ version: '1', runId: 'r1', agentId: 'worker_2', paths: {} }));
  return { ws, cleanup: () => rmSync(ws, { recursive: true, force: true }) };
}

/** getProposal's answer after worker_1 changed line 3 of a.ts and was applied. */
const review = {
  applicable: false,
  problems: [{ path: 'a.ts', reason: "hunk 1 of the merge: conflicts with the workspace's line 3 (resolve it: mine, theirs, both, markers, or text of your own)" }],
  warnings: [],
  collisions: [{ path: 'b.ts', kind: 'lines', lines: { start: 2, count: 1 }, otherRunId: 'r1', otherAgentId: 'worker_3', otherLines: { start: 2, count: 1 }, hunk: 1, message: 'Line 2 overlaps line 2 changed by worker_3 (run r1)' }],
  files: [
    {
      path: 'a.ts',
      hunks: [{ index: 1 }, { index: 2 }],
      merge: {
        workspace: 'abc',
        state: 'conflicts',
        conflicts: 1,
        hunks: [
          { index: 1, conflict: true, start: 3, count: 1, ours: 'w1 three\n', theirs: 'w2 three\n', base: 'l3\n', from: ['worker_1 (run r1)'] },
          { index: 2, conflict: false, start: 20, count: 1, ours: 'l20\n', theirs: 'w2 twenty\n', base: 'l20\n' },
        ],
      },
    },
    { path: 'b.ts', hunks: [{ index: 1, collisions: [{ path: 'b.ts', otherRunId: 'r1', otherAgentId: 'worker_3', hunk: 1, message: 'm' }] }, { index: 2 }] },
  ],
};

test('the review is read: collisions per hunk, merges with both sides', () => {
  const r = readReview(review);
  assert.equal(r.applicable, false);
  assert.equal(r.collisions[0].otherAgentId, 'worker_3');
  assert.equal(r.hunkCollisions.get('b.ts')?.[0][0].otherAgentId, 'worker_3');
  assert.deepEqual(r.hunkCollisions.get('b.ts')?.[1], []);
  const m = r.merges.get('a.ts');
  assert.equal(m?.state, 'conflicts');
  assert.deepEqual(m?.hunks[0].from, ['worker_1 (run r1)']);
  assert.equal(m?.hunks[1].conflict, false);
  assert.equal(r.merges.has('b.ts'), false);
  assert.deepEqual(readReview(null).collisions, []);
});

test('merge hunks and resolutions become applyProposal parameters; resolutions survive a refresh of the same workspace file', async () => {
  const { ws, cleanup } = workspace();
  try {
    const [p] = await scanProposals(ws);
    applyReview(p, readReview(review));
    // Clean hunks picked, the conflict not: applied alone, it is left as the workspace has it.
    assert.deepEqual(unresolvedConflicts(p).map((c) => [c.file, c.hunk.index]), [['a.ts', 1]]);
    assert.deepEqual(selectionParams(p), { files: ['b.ts'], hunks: [], merge: [{ file: 'a.ts', index: 2 }], resolve: [], against: { 'a.ts': 'abc' } });
    assert.deepEqual(selectionSummary(p), { files: 2, hunks: 3, totalHunks: 4 });
    // Ticking an unresolved conflict does nothing; resolving it picks it.
    setAccepted(p, 'a.ts', true, 0);
    assert.deepEqual(selectionParams(p).merge, [{ file: 'a.ts', index: 2 }]);
    const conflict = p.review!.merges.get('a.ts')!.hunks[0];
    setResolution(p, 'a.ts', conflict, { take: 'edit', text: 'both threes\n' });
    assert.deepEqual(unresolvedConflicts(p), []);
    const params = selectionParams(p);
    assert.deepEqual(params.merge, [{ file: 'a.ts', index: 1 }, { file: 'a.ts', index: 2 }]);
    assert.deepEqual(params.resolve, [{ file: 'a.ts', index: 1, take: 'edit', text: 'both threes\n' }]);
    // A patch hunk of an unmoved file unticked: it goes by patch hunk numbers.
    setAccepted(p, 'b.ts', false, 1);
    assert.deepEqual(selectionParams(p).hunks, [{ file: 'b.ts', index: 1 }]);
    // The same workspace file on refresh: the choices stay; another version: they start over.
    const [again] = await scanProposals(ws, [p]);
    applyReview(again, readReview(review), p);
    assert.deepEqual(selectionParams(again).resolve, [{ file: 'a.ts', index: 1, take: 'edit', text: 'both threes\n' }]);
    const moved = structuredClone(review);
    moved.files[0].merge!.workspace = 'def';
    const [third] = await scanProposals(ws, [again]);
    applyReview(third, readReview(moved), again);
    assert.deepEqual(selectionParams(third).resolve, []);
    assert.deepEqual(selectionParams(third).against, { 'a.ts': 'def' });
    // Unresolving unpicks it.
    setResolution(again, 'a.ts', conflict, undefined);
    assert.deepEqual(selectionParams(again).merge, [{ file: 'a.ts', index: 2 }]);
  } finally {
    cleanup();
  }
});

test('the view shows the conflict badge with the other worker, the suggested order, and merge hunks to resolve', async () => {
  const { ws, cleanup } = workspace();
  try {
    const [p] = await scanProposals(ws);
    mergeStates([p], [{ agentDir: '.agentcanvas/sandboxes/r1/worker_2', state: 'pending', order: 2, conflicts: [{ runId: 'r1', agentId: 'worker_3', files: ['b.ts'] }] }], ws);
    assert.equal(p.order, 2);
    // Before the review arrives, listProposals' conflicts already name the other worker.
    let item = proposalTreeItem({ kind: 'proposal', proposal: p });
    assert.match(String(item.description), /^⚠ conflicts with worker_3 · r1 · 2 file\(s\) \+4 −4 · pending · apply 2nd$/);
    assert.equal((item.iconPath as { id?: string } | undefined)?.id, 'git-compare');
    applyReview(p, readReview(review));
    item = proposalTreeItem({ kind: 'proposal', proposal: p });
    assert.match(String(item.description), /^⚠ conflicts with worker_3 · r1 · .* · pending · 1 to resolve · apply 2nd/);
    const tree = new ProposalsTree();
    tree.proposals = [p];
    const [node] = tree.getChildren();
    const children = tree.getChildren(node);
    assert.deepEqual(children.map((n) => n.kind), ['warning', 'file', 'file']);
    assert.match(String(proposalTreeItem(children[0]).label), /^Conflicts with worker_3 \(run r1\) in b\.ts/);
    const [a, b] = children.slice(1);
    assert.match(String(proposalTreeItem(a).description), /changed in the workspace since: merged · 1 clean · 1 conflict\(s\), 1 to resolve/);
    const hunks = tree.getChildren(a);
    assert.deepEqual(hunks.map((n) => n.kind), ['mergeHunk', 'mergeHunk']);
    const conflict = proposalTreeItem(hunks[0]);
    assert.equal(conflict.label, '⚠ conflict: line 3');
    assert.equal(conflict.contextValue, 'proposal.conflict');
    assert.equal(conflict.checkboxState, undefined, 'an unresolved conflict cannot be ticked');
    assert.match(String(conflict.description), /the workspace \(from worker_1 \(run r1\)\) changed these lines too/);
    assert.equal(proposalTreeItem(hunks[1]).contextValue, 'proposal.mergeHunk');
    // b.ts is not moved: its patch hunks, the first colliding with worker_3.
    const bh = tree.getChildren(b);
    assert.match(String(proposalTreeItem(bh[0]).description), /⚠ collides with worker_3$/);
    assert.doesNotMatch(String(proposalTreeItem(bh[1]).description), /collides/);
    // No collisions: the proposal says so.
    mergeStates([p], [{ agentDir: '.agentcanvas/sandboxes/r1/worker_2', state: 'pending', order: 1, conflicts: [] }], ws);
    p.review = undefined;
    assert.match(String(proposalTreeItem({ kind: 'proposal', proposal: p }).description), /no conflicts · apply 1st/);
    // Applied: Revert Proposal is offered.
    mergeStates([p], [{ agentDir: '.agentcanvas/sandboxes/r1/worker_2', state: 'applied' }], ws);
    assert.equal(proposalTreeItem({ kind: 'proposal', proposal: p }).contextValue, 'proposal.applied');
  } finally {
    cleanup();
  }
});

test('ordinals', () => {
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal), ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '101st']);
});

test("a refusal's problems come from the error's data, whatever its message", () => {
  const e = Object.assign(new Error('agentcanvas/applyProposal: patch refused: a.ts: x; y (the workspace is unchanged)'), {
    data: { problems: [{ path: 'a.ts', reason: 'hunk 1 of the merge: conflicts; resolve it' }] },
  });
  assert.deepEqual(problemsOf(e), [{ path: 'a.ts', reason: 'hunk 1 of the merge: conflicts; resolve it' }]);
  assert.deepEqual(problemsOf(new Error('agentcanvas/applyProposal: patch refused: a.ts: gone (the workspace is unchanged)')), [{ path: 'a.ts', reason: 'gone' }]);
});

test('the hover of a line an agent wrote names the agent, run, interaction, round, backend, prompt and spend', () => {
  const [o] = readLineOrigins({
    origins: [
      {
        start: 3, count: 2, entry: '20261122T020500.000Z-5e6f7a8b', at: '2026-11-22T02:05:00.000Z', runId: 'r1', agentId: 'worker_2', notes: 'fix *parse*',
        origin: { flow: 'team', interactionId: 'i1', round: 2, backend: 'claude', prompt: 'Validate the input', inputTokens: 5120, outputTokens: 830, costUsd: 0.042, costKnown: true },
        merged: true,
      },
      { start: 'x' },
    ],
  });
  const md = originMarkdown(o);
  assert.match(md, /^\*\*AgentCanvas\*\* · Lines 3–4 came from agent \*\*worker_2\*\* \(run `r1`\)/);
  assert.match(md, /flow `team`, interaction `i1`, round 2, backend `claude`/);
  assert.match(md, /Asked: Validate the input/);
  assert.match(md, /Goal: fix \\\*parse\\\*/);
  assert.match(md, /5,120 tokens in, 830 out, \$0\.0420/);
  assert.match(md, /\(merged with the workspace\) · ledger entry `20261122T020500\.000Z-5e6f7a8b`/);
  assert.equal(readLineOrigins({ origins: [{ start: 'x' }] }).length, 0);
});
