import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { conflictsFromMessage, headWarning, insideAgentDir, mergeStates, patchForSelection, scanProposals, selectionParams, selectionSummary, setAccepted } from '../../src/views/proposalsModel';
import { ProposalsTree } from '../../src/views/proposalsTree';

/** A workspace with one proposal laid out as `proposal create` writes it (docs/proposals.md). */
function workspace(): { ws: string; agentDir: string; cleanup: () => void } {
  const ws = mkdtempSync(path.join(tmpdir(), 'ac-prop-'));
  const agentDir = path.join(ws, '.agentcanvas', 'sandboxes', 'run_20261122_1', 'custom_coder-1');
  const input = path.join(agentDir, 'input', 'src');
  const work = path.join(agentDir, 'work', 'src');
  mkdirSync(input, { recursive: true });
  mkdirSync(work, { recursive: true });
  mkdirSync(path.join(agentDir, 'proposal'), { recursive: true });
  const base = Array.from({ length: 40 }, (_, i) => `l${i + 1}`).join('\n') + '\n';
  writeFileSync(path.join(input, 'a.ts'), base);
  writeFileSync(path.join(work, 'a.ts'), base.replace('l2\n', 'L2\n').replace('l35\n', 'L35\nextra\n'));
  writeFileSync(path.join(work, 'b.ts'), 'export const b = 1;\n');
  const d = spawnSync('git', ['diff', '--no-index', '--no-color', 'input', 'work'], { cwd: agentDir, encoding: 'utf8' });
  writeFileSync(path.join(agentDir, 'proposal', 'changes.patch'), d.stdout.replace(/a\/input\//g, 'a/').replace(/b\/work\//g, 'b/'));
  writeFileSync(
    path.join(agentDir, 'proposal', 'proposal.json'),
    JSON.stringify({
      version: '1',
      runId: 'run_20261122_1',
      agentId: 'custom:coder-1',
      createdAt: '2026-11-22T00:00:00.000Z',
      base: { gitHead: 'abc123abc123abc123' },
      paths: { inputDir: 'input', workDir: 'work', patchFile: 'proposal/changes.patch', summaryFile: 'proposal/summary.md' },
      changedFiles: [{ path: 'src/a.ts', status: 'modified' }, { path: 'src/b.ts', status: 'added' }],
      notes: 'two files',
    }),
  );
  // a sandbox without a proposal yet is not listed
  mkdirSync(path.join(ws, '.agentcanvas', 'sandboxes', 'run_20261122_1', 'judge', 'work'), { recursive: true });
  return { ws, agentDir, cleanup: () => rmSync(ws, { recursive: true, force: true }) };
}

test('proposals are read from the contract files with files, hunks and counts', async () => {
  const { ws, agentDir, cleanup } = workspace();
  try {
    const [p, ...rest] = await scanProposals(ws);
    assert.equal(rest.length, 0);
    assert.equal(p.error, undefined);
    assert.equal(p.agentId, 'custom:coder-1');
    assert.equal(p.runId, 'run_20261122_1');
    assert.equal(p.inputDir, path.join(agentDir, 'input'));
    assert.deepEqual(p.files.map((f) => [f.path, f.status, f.added, f.removed, f.hunks.length]), [
      ['src/a.ts', 'modified', 3, 2, 2],
      ['src/b.ts', 'added', 1, 0, 1],
    ]);
    assert.deepEqual(selectionSummary(p), { files: 2, hunks: 3, totalHunks: 3 });
    assert.deepEqual(selectionParams(p), {}, 'everything accepted: apply the whole proposal');
    assert.equal(patchForSelection(p), undefined);
  } finally {
    cleanup();
  }
});

test('per-file and per-hunk choices become applyProposal selections, and survive a refresh', async () => {
  const { ws, cleanup } = workspace();
  try {
    const [p] = await scanProposals(ws);
    setAccepted(p, 'src/a.ts', false, 1); // reject the second hunk of a.ts
    assert.deepEqual(selectionParams(p), { files: ['src/b.ts'], hunks: [{ file: 'src/a.ts', index: 1 }] });
    setAccepted(p, 'src/b.ts', false);
    assert.deepEqual(selectionParams(p), { files: [], hunks: [{ file: 'src/a.ts', index: 1 }] });
    assert.match(patchForSelection(p) ?? '', /^diff --git a\/src\/a\.ts b\/src\/a\.ts\n[\s\S]*\+L2\n/);
    assert.doesNotMatch(patchForSelection(p) ?? '', /L35|b\.ts/);
    const [again] = await scanProposals(ws, [p]);
    assert.deepEqual(selectionParams(again), { files: [], hunks: [{ file: 'src/a.ts', index: 1 }] });
  } finally {
    cleanup();
  }
});

test('the gitHead warning appears only when HEAD moved', async () => {
  const { ws, cleanup } = workspace();
  try {
    const [p] = await scanProposals(ws);
    assert.equal(headWarning(p, 'abc123abc123abc123'), undefined);
    assert.equal(headWarning(p, undefined), undefined);
    assert.match(headWarning(p, 'def456def456def456') ?? '', /made against commit abc123abc123, but the workspace is at def456def456/);
    const tree = new ProposalsTree();
    tree.proposals = [p];
    tree.currentHead = 'def456def456def456';
    const [node] = tree.getChildren();
    assert.deepEqual(tree.getChildren(node).map((n) => n.kind), ['warning', 'file', 'file']);
  } finally {
    cleanup();
  }
});

test('a proposal.json pointing outside its sandbox is shown with an error, not followed', async () => {
  const { ws, agentDir, cleanup } = workspace();
  try {
    writeFileSync(path.join(agentDir, 'proposal', 'proposal.json'), JSON.stringify({ runId: 'r', agentId: 'a', paths: { patchFile: '../../../../etc/passwd' } }));
    const [p] = await scanProposals(ws);
    assert.match(p.error ?? '', /paths must stay inside/);
    assert.equal(p.files.length, 0);
    assert.equal(insideAgentDir('/w/a', '/etc/passwd'), undefined);
    assert.equal(insideAgentDir('/w/a', 'proposal/changes.patch'), '/w/a/proposal/changes.patch');
  } finally {
    cleanup();
  }
});

test('an unreadable proposal.json is reported with its path', async () => {
  const { ws, agentDir, cleanup } = workspace();
  try {
    writeFileSync(path.join(agentDir, 'proposal', 'proposal.json'), '{ nope');
    const [p] = await scanProposals(ws);
    assert.match(p.error ?? '', /proposal\.json: /);
  } finally {
    cleanup();
  }
});

test("the sidecar's applied/rejected states are merged by sandbox folder", async () => {
  const { ws, cleanup } = workspace();
  try {
    const ps = await scanProposals(ws);
    mergeStates(ps, [{ runId: 'run_20261122_1', agentId: 'custom:coder-1', agentDir: '.agentcanvas/sandboxes/run_20261122_1/custom_coder-1', state: 'applied' }], ws);
    assert.equal(ps[0].status, 'applied');
    mergeStates(ps, { not: 'a list' }, ws);
    assert.equal(ps[0].status, 'applied');
  } finally {
    cleanup();
  }
});

test('conflicts are read from a refusal message', () => {
  assert.deepEqual(
    conflictsFromMessage('agentcanvas/applyProposal: patch refused: src/a.ts: hunk 2 does not match the workspace; src/b.ts: already exists; base HEAD moved (the workspace is unchanged)'),
    [
      { path: 'src/a.ts', reason: 'hunk 2 does not match the workspace' },
      { path: 'src/b.ts', reason: 'already exists' },
      { path: '', reason: 'base HEAD moved' },
    ],
  );
  assert.deepEqual(conflictsFromMessage('agentcanvas/applyProposal: nothing to apply'), []);
  // The folder settings' refusals, as the sidecar words them.
  assert.deepEqual(
    conflictsFromMessage('agentcanvas/applyProposal: patch refused: lib/x.ts: outside the allowed folders [src, docs] (agentcanvas.allowedFolders); build/o.js: in the blocked folder build (agentcanvas.blockedFolders) (the workspace is unchanged)'),
    [
      { path: 'lib/x.ts', reason: 'outside the allowed folders [src, docs] (agentcanvas.allowedFolders)' },
      { path: 'build/o.js', reason: 'in the blocked folder build (agentcanvas.blockedFolders)' },
    ],
  );
});
