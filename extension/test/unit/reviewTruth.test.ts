import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { mock, workspace } from './vscode-mock';
import * as vscode from 'vscode';
import { readReview, readInterdiff } from '../../src/protocol';
import { selectAll } from '../../src/patch';
import type { Proposal } from '../../src/views/proposalsModel';
import { ProposalsTree } from '../../src/views/proposalsTree';
import { ProposalController } from '../../src/commands/proposalCommands';
import { ReviewController } from '../../src/commands/reviewCommands';
import { heldFromError, PROPOSAL_SCHEME, REVISION_SCHEME, truthLines, truthMarks } from '../../src/views/reviewTruth';
import { Log } from '../../src/log';

/** getProposal's answer for a proposal whose tests failed and which adds editor tasks. */
const getProposal = {
  applicable: true,
  files: [{ path: 'src/a.ts', hunks: [{ index: 1, key: 'k1' }] }, { path: '.vscode/tasks.json', hunks: [{ index: 1, key: 'k2' }] }],
  held: [{ path: '.vscode/tasks.json', kind: 'control', reason: 'editor configuration: tasks can run when the folder is opened', shown: '.vscode/tasks.json' }],
  tests: { results: [{ kind: 'test', command: ['npm', 'test'], exitCode: 1, passed: false, failing: ['not ok 2 - adds'], current: true }] },
  patchDigest: 'sha256:abc',
};

function hunk() {
  return { header: '@@ -1 +1 @@', oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ['-a', '+b'], added: 1, removed: 1 };
}

function proposal(): Proposal {
  const agentDir = path.join('/ws', '.agentcanvas', 'sandboxes', 'r1', 'coder');
  const files = ['src/a.ts', '.vscode/tasks.json'].map((p) => ({ path: p, oldPath: p, status: 'modified', binary: false, added: 1, removed: 1, hunks: [hunk()], header: [] }));
  const p = {
    runId: 'r1', agentId: 'coder', agentDir, proposalJson: path.join(agentDir, 'proposal', 'proposal.json'),
    inputDir: path.join(agentDir, 'input'), workDir: path.join(agentDir, 'work'), status: 'pending',
    files, selection: new Map(), mergeSelection: new Map(), resolutions: new Map(),
    review: readReview(getProposal),
  } as unknown as Proposal;
  p.selection = selectAll(p.files);
  return p;
}

test('getProposal\'s held files, tests and digest are read; bad shapes read as empty', () => {
  const r = readReview(getProposal);
  assert.deepEqual(r.held.map((h) => h.path), ['.vscode/tasks.json']);
  assert.equal(r.tests[0].exitCode, 1);
  assert.deepEqual(r.tests[0].failing, ['not ok 2 - adds']);
  assert.equal(r.patchDigest, 'sha256:abc');
  const empty = readReview({ held: 'x', tests: { results: [null] } });
  assert.deepEqual(empty.held, []);
  assert.equal(empty.tests[0].passed, false);
  assert.deepEqual(heldFromError({ data: { held: [{ path: 'a', shown: 'a', reason: 'r' }] } }).map((h) => h.path), ['a']);
  assert.deepEqual(readInterdiff({ from: 1, to: 2, files: ['a'], patch: 'p', sides: [{ path: 'a', old: 'x', new: 'y', oldExists: true, newExists: true }] }).sides[0].new, 'y');
});

test('the Proposals view says first that the tests failed and what is held, and marks the held file', () => {
  const p = proposal();
  assert.deepEqual(truthMarks(p), ['✗ tests failed', '⚠ changes how things run (1)']);
  const tree = new ProposalsTree();
  tree.proposals = [p];
  const [node] = tree.getChildren();
  const item = tree.getTreeItem(node);
  assert.match(String(item.description), /^✗ tests failed · ⚠ changes how things run \(1\) · /);
  assert.equal((item.iconPath as vscode.ThemeIcon).id, 'shield');
  const kids = tree.getChildren(node);
  const warnings = kids.filter((k) => k.kind === 'warning').map((k) => tree.getTreeItem(k).label);
  assert.deepEqual(warnings, truthLines(p));
  assert.match(String(warnings[0]), /^Tests failed: npm test exited 1 — not ok 2 - adds$/);
  const held = kids.find((k) => k.kind === 'file' && k.file.path === '.vscode/tasks.json')!;
  const hi = tree.getTreeItem(held);
  assert.match(String(hi.description), /^⚠ changes how things run · /);
  assert.match(String(hi.tooltip), /confirm it by name/);
  const plain = tree.getTreeItem(kids.find((k) => k.kind === 'file' && k.file.path === 'src/a.ts')!);
  assert.doesNotMatch(String(plain.description), /changes how things run/);
});

/** A fake sidecar that records the requests and answers them. */
function fakeSidecar(answer: (method: string, params: Record<string, unknown>) => unknown) {
  const requests: Array<{ method: string; params: Record<string, unknown> }> = [];
  return {
    requests,
    client: {
      running: true,
      request: async (method: string, params: Record<string, unknown>) => {
        requests.push({ method, params });
        return answer(method, params);
      },
    },
  };
}

const log = new Log({ info() {}, warn() {}, error() {}, appendLine() {} } as never);

test('Apply: failed tests are said first; each held file is confirmed by name (unticked ones left out); the reviewed digest goes along', async () => {
  mock.reset();
  workspace.workspaceFolders = undefined;
  const p = proposal();
  const tree = new ProposalsTree();
  tree.proposals = [p];
  const sc = fakeSidecar(() => ({ applied: true, files: [] }));
  const pc = new ProposalController(sc.client as never, log, tree);
  const apply = (pc as unknown as { apply(n: unknown): Promise<void> }).apply.bind(pc);

  // Refusing at the tests' warning applies nothing.
  mock.messageAnswer = undefined;
  await apply({ kind: 'proposal', proposal: p });
  assert.match(mock.messages[0].message, /coder's last tests failed: npm test exited 1/);
  assert.equal(sc.requests.length, 0);

  // Going ahead, the person leaves the held file unticked: it is left out, and nothing is confirmed.
  mock.messageAnswer = 'Apply Anyway';
  let offered: Array<Record<string, unknown>> = [];
  mock.quickPickAnswer = (items) => {
    offered = items;
    return [];
  };
  await apply({ kind: 'proposal', proposal: p });
  assert.deepEqual(offered.map((i) => i.label), ['.vscode/tasks.json']);
  assert.equal(offered[0].picked, false, 'nothing is confirmed for the person');
  const applied = sc.requests.filter((r) => r.method === 'agentcanvas/applyProposal' && !r.params.check);
  assert.equal(applied.length, 1);
  assert.deepEqual(applied[0].params.confirm, []);
  assert.equal(applied[0].params.reviewed, 'sha256:abc');
  assert.deepEqual(applied[0].params.files, ['src/a.ts']);

  // Ticked, it is confirmed by name.
  const q = proposal();
  tree.proposals = [q];
  sc.requests.length = 0;
  mock.quickPickAnswer = (items) => items;
  await apply({ kind: 'proposal', proposal: q });
  const again = sc.requests.find((r) => r.method === 'agentcanvas/applyProposal' && !r.params.check)!;
  assert.deepEqual(again.params.confirm, ['.vscode/tasks.json']);
});

test('Show Changes Since the Last Revision opens a read-only diff of two virtual documents, the same ones each time', async () => {
  mock.reset();
  const p = proposal();
  const tree = new ProposalsTree();
  tree.proposals = [p];
  const sc = fakeSidecar(() => ({ from: 1, to: 2, files: ['src/a.ts'], patch: '…', sides: [{ path: 'src/a.ts', old: 'hello\n', new: 'hello, world\n', oldExists: true, newExists: true }] }));
  const rc = new ReviewController(sc.client as never, log, tree, async () => {});
  rc.register();
  const show = (rc as unknown as { showInterdiff(n: unknown): Promise<void> }).showInterdiff.bind(rc);
  await show({ kind: 'proposal', proposal: p });
  await show({ kind: 'proposal', proposal: p });
  const diffs = mock.commands.filter((c) => c.command === 'vscode.diff');
  assert.equal(diffs.length, 2);
  const [left, right, title] = diffs[0].args as [vscode.Uri, vscode.Uri, string];
  assert.equal(left.scheme, REVISION_SCHEME);
  assert.equal(right.scheme, REVISION_SCHEME);
  assert.equal(left.toString(), (diffs[1].args[0] as vscode.Uri).toString(), 'the second click opens the same documents');
  assert.equal(title, "src/a.ts: coder's proposal, revision 1 ↔ 2");
  assert.equal((await workspace.openTextDocument(left as never)).getText(), 'hello\n');
  assert.equal((await workspace.openTextDocument(right as never)).getText(), 'hello, world\n');
  assert.equal(mock.shownDocs.length, 0, 'no Untitled buffer');
  rc.dispose();
});

test('Open Diff shows each file as the patch makes it (getProposalSides), never the worker\'s work/ file; a restored document is fetched again', async () => {
  mock.reset();
  const p = proposal();
  const tree = new ProposalsTree();
  tree.proposals = [p];
  const sides = { patch: 'sha256:abc', sides: [{ path: 'src/a.ts', old: 'safe()\n', new: 'safe()\nbackdoor()\n', oldExists: true, newExists: true }, { path: '.vscode/tasks.json', old: '{}\n', new: '{"x":1}\n', oldExists: true, newExists: true }] };
  const sc = fakeSidecar(() => sides);
  const pc = new ProposalController(sc.client as never, log, tree);
  pc.register();
  const open = (pc as unknown as { openDiff(n: unknown): Promise<void> }).openDiff.bind(pc);
  await open({ kind: 'file', proposal: p, file: p.files[0] });
  assert.deepEqual(sc.requests.map((r) => [r.method, r.params]), [['agentcanvas/getProposalSides', { runId: 'r1', agentId: 'coder', path: 'src/a.ts' }]]);
  const [diff] = mock.commands.filter((c) => c.command === 'vscode.diff');
  const [left, right, title] = diff.args as [vscode.Uri, vscode.Uri, string];
  assert.equal(left.scheme, PROPOSAL_SCHEME, 'not input/ on disk');
  assert.equal(right.scheme, PROPOSAL_SCHEME, 'not work/ on disk');
  assert.equal(title, "src/a.ts (coder's proposal)");
  assert.equal((await workspace.openTextDocument(left as never)).getText(), 'safe()\n');
  assert.equal((await workspace.openTextDocument(right as never)).getText(), 'safe()\nbackdoor()\n');

  // After a window reload, VS Code asks for the restored documents before any Open Diff.
  const fresh = new ProposalController(sc.client as never, log, tree);
  sc.requests.length = 0;
  assert.equal(await fresh.sides.provideTextDocumentContent(right), 'safe()\nbackdoor()\n');
  assert.deepEqual(sc.requests.map((r) => r.params.path), ['src/a.ts']);
  pc.sides.dispose();
  fresh.sides.dispose();
});

test('a hunk\'s tooltip shows the worker\'s lines as text: a line of ``` does not close the block, so its image and link are not rendered', () => {
  const p = proposal();
  p.files[0].hunks[0].lines = ['+```', '+![](https://evil.example/t.png)', '+[✅ tests pass](https://evil.example)', '+````'];
  p.files[0].hunks.push({ ...hunk(), section: '' }); // a file of one hunk has no hunk rows
  const tree = new ProposalsTree();
  tree.proposals = [p];
  const [node] = tree.getChildren();
  const file = tree.getChildren(node).find((k) => k.kind === 'file' && k.file.path === 'src/a.ts')!;
  const hunkNode = tree.getChildren(file).find((k) => k.kind === 'hunk')!;
  const md = (tree.getTreeItem(hunkNode).tooltip as vscode.MarkdownString).value;
  const fence = md.match(/^`+/)![0];
  assert.ok(fence.length > 4, `fence ${fence} is longer than the worker's`);
  const lines = md.split('\n');
  assert.equal(lines.filter((l) => l.startsWith(fence)).length, 2, 'only the block\'s own fences');
  assert.equal(lines[lines.length - 1], fence);
});

test('a refusal that names a worker\'s file offers no link: a name written as [words](command:…) stays text in the notification', async () => {
  mock.reset();
  const p = proposal();
  const tree = new ProposalsTree();
  tree.proposals = [p];
  const name = '[Open the review](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22id%5Cn%22%7D)';
  const sc = fakeSidecar(() => ({ applied: false, dryRun: true, files: [], problems: [{ path: name, reason: 'conflicts with the workspace' }] }));
  const pc = new ProposalController(sc.client as never, log, tree);
  const explain = (pc as unknown as { explainConflicts(p: Proposal, r: unknown): Promise<void> }).explainConflicts.bind(pc);
  await explain(p, { applied: false, files: [], conflicts: [{ path: name, reason: 'conflicts with the workspace' }] });
  const shown = mock.messages.map((m) => m.message).join('\n');
  assert.match(shown, /Open the review/);
  // VS Code's own reading of links in a notification's message.
  assert.doesNotMatch(shown, /(^|[^\]])\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)\)/i);
});
