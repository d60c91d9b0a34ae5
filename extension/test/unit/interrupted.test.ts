// Interrupted runs (a window reload stopped the sidecar and its runs): how the Runs view shows
// them, which are offered for resuming after the reload, the one notification, and what Resume
// Run and Close Run send.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { mock, settings, workspace, Uri, type ThemeIcon } from './vscode-mock';
import { clients } from './languageclient-stub';
import { SidecarClient } from '../../src/sidecar';
import { Log } from '../../src/log';
import { StatusItem } from '../../src/status';
import { RunController } from '../../src/commands/runCommands';
import { RunsTree, runTreeItem } from '../../src/views/runsTree';
import { RunsModel, interruptedToOffer } from '../../src/views/runsModel';
import { PendingQueue } from '../../src/hitl/pending';
import { readRuns } from '../../src/protocol';

const channel = () => ({ name: 'AgentCanvas', info() {}, warn() {}, error() {}, append() {}, appendLine() {}, replace() {}, clear() {}, show() {}, hide() {}, dispose() {} });

const NOW = Date.parse('2026-11-22T03:00:00Z');

/** listRuns as the sidecar answers after a reload (engine.RunInfo). */
const listed = [
  {
    runId: 'run_waiting_old', flow: 'ask', flowFile: '/ws/flows/ask.yaml', status: 'interrupted', started: '2026-11-20T10:00:00Z', updated: '2026-11-20T10:00:05Z',
    interactions: [{ id: 'choose', patternId: 'manager_worker', status: 'running' }],
    pending: [{ runId: 'run_waiting_old', agentId: 'asker', id: 'q_1', kind: 'question', fields: { question: 'Which database?', options: ['PostgreSQL', 'SQLite'] } }],
  },
  { runId: 'run_recent', flow: 'team', flowFile: 'flows/team.yaml', status: 'interrupted', dryRun: true, started: '2026-11-22T02:40:00Z', updated: '2026-11-22T02:41:00Z', interactions: [], pending: [] },
  { runId: 'run_stale', flow: 'team', flowFile: '/ws/flows/team.yaml', status: 'interrupted', started: '2026-11-22T01:00:00Z', interactions: [], pending: [] },
  { runId: 'run_done', flow: 'team', flowFile: '/ws/flows/team.yaml', status: 'completed', started: '2026-11-22T02:50:00Z', interactions: [], pending: [] },
  {
    runId: 'run_live', flow: 'ask', flowFile: '/ws/flows/ask.yaml', status: 'waiting', started: '2026-11-22T02:55:00Z', interactions: [],
    pending: [{ runId: 'run_live', agentId: 'asker', id: 'q_9', kind: 'question', fields: { question: 'Live question?' } }],
  },
];

beforeEach(() => {
  mock.reset();
  settings.clear();
  clients.length = 0;
  workspace.workspaceFolders = [{ uri: Uri.file('/ws'), name: 'ws' }];
});

async function setup() {
  const dir = mkdtempSync(path.join(tmpdir(), 'ac-interrupted-'));
  const bin = path.join(dir, 'agentcanvas');
  writeFileSync(bin, '#!/bin/sh\necho "agentcanvas 1.0.0"\n');
  chmodSync(bin, 0o755);
  settings.set('agentcanvas.sidecarPath', bin);
  const log = new Log(channel() as never);
  const status = new StatusItem();
  const sc = new SidecarClient({ extensionPath: '/x' } as never, log, status);
  await sc.start();
  const client = clients[0];
  client.answers.set('agentcanvas/listRuns', () => listed);
  client.answers.set('agentcanvas/loadFlow', () => ({ flow: { agents: [] } }));
  client.answers.set('agentcanvas/startRun', (p) => ({ runId: (p as { resumeRunId: string }).resumeRunId, status: 'running' }));
  client.answers.set('agentcanvas/stopRun', () => null);
  const tree = new RunsTree(new RunsModel());
  const asked: string[] = [];
  const pending = new PendingQueue({
    ask: async (p) => {
      asked.push(p.requestId);
      return undefined;
    },
    send: async () => undefined,
    onSecretProvided: async () => {},
    error: () => {},
  });
  const rc = new RunController(sc, log, tree, pending, status);
  return { rc, client, tree, pending, asked, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const startRuns = (client: (typeof clients)[number]) => client.requests.filter((r) => r.method === 'agentcanvas/startRun').map((r) => r.params);

test('an interrupted run is its own kind of item: icon, "interrupted", contextValue run.interrupted, a tooltip with the checkpoint time and what was pending', () => {
  const runs = readRuns(listed);
  const tree = new RunsTree(new RunsModel());
  tree.model.replace(runs);
  const old = runs[0];
  const it = runTreeItem({ kind: 'run', run: old });
  assert.equal(it.contextValue, 'run.interrupted');
  assert.equal((it.iconPath as unknown as ThemeIcon).id, 'debug-disconnect');
  assert.match(String(it.description), /^interrupted · was waiting on 1 request\(s\) · run_waiting_old$/);
  assert.match(String(it.tooltip), /last checkpoint: 2026-11-20T10:00:05Z/);
  assert.match(String(it.tooltip), /was waiting for you:\n {2}• asker: Which database\?/);
  // what it was waiting on is shown, but is not an answerable request
  const children = tree.getChildren({ kind: 'run', run: old });
  const p = children.find((c) => c.kind === 'pending');
  assert.ok(p);
  const pi = runTreeItem(p);
  assert.equal(pi.contextValue, 'pending.interrupted');
  assert.equal(pi.command, undefined);
  // what was under way when the engine died is not shown as running
  const inter = children.find((c) => c.kind === 'interaction');
  assert.ok(inter);
  assert.match(String(runTreeItem(inter).description), /^interrupted/);
  assert.equal((runTreeItem(inter).iconPath as unknown as ThemeIcon).id, 'debug-disconnect');
  // a run that was not waiting says so; live and finished runs keep their contextValues
  assert.match(String(runTreeItem({ kind: 'run', run: runs[1] }).tooltip), /was not waiting for you/);
  assert.equal(runTreeItem({ kind: 'run', run: runs[3] }).contextValue, 'run.done');
  assert.equal(runTreeItem({ kind: 'run', run: runs[4] }).contextValue, 'run.active');
});

test('offered after a reload: interrupted runs that were waiting for the user, and those started in the last hour', () => {
  assert.deepEqual(
    interruptedToOffer(readRuns(listed), NOW).map((r) => r.runId),
    ['run_waiting_old', 'run_recent'],
  );
  assert.deepEqual(interruptedToOffer(readRuns(listed.slice(2)), NOW), []);
});

test('after a reload only live runs\' requests are prompted; an interrupted run keeps its checkpoint\'s pending in the view', async () => {
  const { rc, tree, pending, asked, cleanup } = await setup();
  try {
    await rc.refresh();
    assert.deepEqual(pending.list().map((p) => p.requestId), ['q_9']);
    for (let i = 0; i < 20 && asked.length === 0; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(asked, ['q_9']);
    assert.deepEqual(tree.model.get('run_waiting_old')?.pending.map((p) => p.requestId), ['q_1']);
    assert.deepEqual(tree.model.get('run_live')?.pending.map((p) => p.requestId), ['q_9']);
  } finally {
    cleanup();
  }
});

test('one notification for all of them; Resume resumes exactly the offered runs with their flow file and resumeRunId', async () => {
  const { rc, client, cleanup } = await setup();
  try {
    await rc.refresh();
    mock.messageAnswer = 'Resume';
    const offer = rc.offerResume(NOW);
    for (let i = 0; i < 50 && mock.progress.length < 2; i++) await new Promise((r) => setImmediate(r));
    const shown = mock.messages.filter((m) => /interrupted/.test(m.message));
    assert.equal(shown.length, 1);
    assert.equal(shown[0].message, 'AgentCanvas: 2 run(s) were interrupted by the window reload');
    assert.deepEqual(shown[0].items, ['Resume', 'Show Runs', 'Dismiss']);
    // newest first, as the Runs view lists them
    assert.deepEqual(startRuns(client), [
      { uri: 'file:///ws/flows/team.yaml', resumeRunId: 'run_recent', dryRun: true }, // a workspace-relative flowFile; the run's dry-run kept
      { uri: 'file:///ws/flows/ask.yaml', resumeRunId: 'run_waiting_old' },
    ]);
    assert.deepEqual(mock.progress.map((p) => (p.opts as { title: string }).title), ['AgentCanvas: resuming team.yaml', 'AgentCanvas: resuming ask.yaml']);
    // the progress follows each run to its end, like Run Flow
    rc.onRunEvent({ runId: 'run_waiting_old', event: 'run_resumed' });
    rc.onRunEvent({ runId: 'run_waiting_old', event: 'run_finished', status: 'completed' });
    rc.onRunEvent({ runId: 'run_recent', event: 'run_finished', status: 'completed' });
    await offer;
  } finally {
    cleanup();
  }
});

test('Dismiss resumes nothing; Show Runs focuses the Runs view; nothing to offer shows nothing', async () => {
  const { rc, client, cleanup } = await setup();
  try {
    await rc.refresh();
    mock.messageAnswer = 'Dismiss';
    await rc.offerResume(NOW);
    mock.messageAnswer = 'Show Runs';
    await rc.offerResume(NOW);
    assert.deepEqual(startRuns(client), []);
    assert.deepEqual(mock.commands.map((c) => c.command).filter((c) => c !== 'setContext'), ['agentcanvas.runs.focus']);
    mock.reset();
    await rc.offerResume(Date.parse('2026-11-25T00:00:00Z')); // no interrupted run is recent
    assert.equal(mock.messages.length, 1, 'the run that was waiting is still offered');
    mock.reset();
    client.answers.set('agentcanvas/listRuns', () => listed.slice(2));
    await rc.refresh();
    await rc.offerResume(Date.parse('2026-11-25T00:00:00Z'));
    assert.deepEqual(mock.messages, []);
  } finally {
    cleanup();
  }
});

test('Resume Run and Close Run from the Runs view item; a run that is not interrupted is refused', async () => {
  const { rc, client, tree, cleanup } = await setup();
  try {
    await rc.refresh();
    const ctl = rc as unknown as { resumeRun(a: unknown): Promise<void>; closeRun(a: unknown): Promise<void> };
    await ctl.closeRun({ kind: 'run', run: tree.model.get('run_stale') });
    assert.deepEqual(client.requests.filter((r) => r.method === 'agentcanvas/stopRun').map((r) => r.params), [{ runId: 'run_stale' }]);
    await ctl.resumeRun({ kind: 'run', run: tree.model.get('run_done') });
    assert.deepEqual(startRuns(client), []);
    assert.match(mock.messages.at(-1)?.message ?? '', /run_done is completed, not interrupted/);
    // from the palette with several interrupted runs: the user picks one
    mock.quickPickAnswer = (items) => items.find((i) => (i.description as string).startsWith('run_stale'));
    const resumed = ctl.resumeRun(undefined);
    for (let i = 0; i < 50 && mock.progress.length === 0; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(startRuns(client), [{ uri: 'file:///ws/flows/team.yaml', resumeRunId: 'run_stale' }]);
    rc.onRunEvent({ runId: 'run_stale', event: 'run_finished', status: 'completed' });
    await resumed;
  } finally {
    cleanup();
  }
});

test('a resumed run is live again: its events update it, and an event with an empty interaction or agent adds no row', () => {
  const model = new RunsModel();
  model.replace(readRuns(listed));
  model.apply({ runId: 'run_waiting_old', event: 'run_resumed', interactionId: '' });
  model.apply({ runId: 'run_waiting_old', event: 'step', interactionId: 'choose', agent: '' });
  model.setPending([]);
  const run = model.get('run_waiting_old');
  assert.equal(run?.status, 'running');
  assert.deepEqual(run?.pending, []); // the checkpoint's stale request is gone once the run is live
  assert.deepEqual(run?.interactions.map((i) => [i.id, i.status, i.agents.length]), [['choose', 'running', 0]]);
});
