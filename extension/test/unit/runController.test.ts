// Run Flow / Stop Run: what is sent to the sidecar, and the progress notification's lifecycle.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { mock, settings, Uri } from './vscode-mock';
import { clients } from './languageclient-stub';
import { SidecarClient } from '../../src/sidecar';
import { Log } from '../../src/log';
import { StatusItem } from '../../src/status';
import { RunController } from '../../src/commands/runCommands';
import { RunsTree } from '../../src/views/runsTree';
import { RunsModel } from '../../src/views/runsModel';
import { PendingQueue } from '../../src/hitl/pending';

/** What the tests' output channel was told, as "info: …" and "warn: …" lines. */
const logged: string[] = [];
const channel = () => ({
  name: 'AgentCanvas',
  info: (m: string) => logged.push(`info: ${m}`),
  warn: (m: string) => logged.push(`warn: ${m}`),
  error() {}, append() {}, appendLine() {}, replace() {}, clear() {}, show() {}, hide() {}, dispose() {},
});

beforeEach(() => {
  logged.length = 0;
  mock.reset();
  settings.clear();
  clients.length = 0;
});

/** Waits for cond (a condition, never a time), giving up after 10 s. */
async function until(cond: () => boolean): Promise<void> {
  for (const end = Date.now() + 10_000; !cond() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
}

async function setup(storedEnv?: (names: string[]) => Promise<Record<string, string>>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ac-run-'));
  const bin = path.join(dir, 'agentcanvas');
  writeFileSync(bin, '#!/bin/sh\necho "agentcanvas 1.0.0"\n');
  chmodSync(bin, 0o755);
  settings.set('agentcanvas.sidecarPath', bin);
  settings.set('agentcanvas.defaultBackend', 'dry-run');
  const log = new Log(channel() as never);
  const status = new StatusItem();
  const sc = new SidecarClient({ extensionPath: '/x' } as never, log, status);
  await sc.start();
  const client = clients[0];
  client.answers.set('agentcanvas/startRun', () => ({ runId: 'r1', flow: 'team', state: 'running' }));
  client.answers.set('agentcanvas/listRuns', () => [{ runId: 'r1', flow: 'team', state: 'running' }]);
  client.answers.set('agentcanvas/stopRun', () => null);
  const tree = new RunsTree(new RunsModel());
  const pending = new PendingQueue({ ask: async () => undefined, send: async () => undefined, onSecretProvided: async () => {}, error: () => {} });
  const rc = new RunController(sc, log, tree, pending, status, storedEnv);
  return { rc, client, tree, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const flow = Uri.file('/ws/flows/team.yaml');

test('Run Flow: the default backend is offered first; startRun gets the uri and dryRun; the progress ends with the run', async () => {
  const { rc, client, cleanup } = await setup();
  try {
    let offered: unknown[] = [];
    mock.quickPickAnswer = (items) => {
      offered = items.map((i) => i.label);
      return items[0];
    };
    const run = (rc as unknown as { runFlow(u: unknown): Promise<void> }).runFlow(flow);
    await until(() => mock.progress.length > 0); // a real run first runs the sidecar's doctor, a process
    assert.equal(offered[0], 'dry-run');
    assert.deepEqual(client.requests.find((r) => r.method === 'agentcanvas/startRun')?.params, { uri: 'file:///ws/flows/team.yaml', backend: 'dry-run', dryRun: true });
    rc.onRunEvent({ runId: 'r1', event: 'step', interactionId: 'i1', from: 'a' }); // says nothing to a person
    rc.onRunEvent({ runId: 'r1', event: 'agent_started', interactionId: 'i1', agent: 'a', round: 0, backend: 'dry-run' });
    rc.onRunEvent({ runId: 'other', event: 'run_finished' }); // another run does not end this progress
    rc.onRunEvent({ runId: 'r1', event: 'run_finished', reason: 'all interactions terminated' });
    await run;
    assert.deepEqual(mock.progress[0].reports, [{ message: 'i1: a is working (round 1, dry-run)' }]);
    assert.match(mock.messages.at(-1)?.message ?? '', /team\.yaml finished \(all interactions terminated\)/);
  } finally {
    cleanup();
  }
});

test('cancelling the progress notification stops the run', async () => {
  const { rc, client, cleanup } = await setup();
  try {
    mock.quickPickAnswer = (items) => items[0];
    const run = (rc as unknown as { runFlow(u: unknown): Promise<void> }).runFlow(flow);
    await until(() => mock.progress.length > 0); // a real run first runs the sidecar's doctor, a process
    mock.progress[0].cancel();
    await run;
    for (let i = 0; i < 20 && !client.requests.some((r) => r.method === 'agentcanvas/stopRun'); i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(client.requests.find((r) => r.method === 'agentcanvas/stopRun')?.params, { runId: 'r1' });
  } finally {
    cleanup();
  }
});

test('Stop Run from the Runs view names the run', async () => {
  const { rc, client, cleanup } = await setup();
  try {
    await (rc as unknown as { stopRun(a: unknown): Promise<void> }).stopRun({ kind: 'run', run: { runId: 'r7' } });
    assert.deepEqual(client.requests.at(-1), { method: 'agentcanvas/stopRun', params: { runId: 'r7' } });
  } finally {
    cleanup();
  }
});

test('Runs view refresh: listRuns fills the model; "not available" is shown, not thrown', async () => {
  const { rc, client, tree, cleanup } = await setup();
  try {
    await rc.refresh();
    assert.equal(tree.model.get('r1')?.status, 'running');
    client.answers.delete('agentcanvas/listRuns');
    await rc.refresh();
    assert.match(tree.message ?? '', /Runs are not available: this sidecar build does not support that yet/);
  } finally {
    cleanup();
  }
});

test('stored values for the env names the flow lists go with startRun', async () => {
  const asked: string[][] = [];
  const { rc, client, cleanup } = await setup(async (names): Promise<Record<string, string>> => {
    asked.push(names);
    return names.includes('OPENAI_API_KEY') ? { OPENAI_API_KEY: 'sk-stored-0123456789' } : {};
  });
  try {
    client.answers.set('agentcanvas/loadFlow', () => ({
      flow: { agents: [{ id: 'a', runtime: { env: ['OPENAI_API_KEY', 'DATABASE_URL'] } }, { id: 'b', runtime: { env: ['OPENAI_API_KEY'] } }, { id: 'c' }] },
    }));
    mock.quickPickAnswer = (items) => items.find((i) => i.label === 'codex');
    const run = (rc as unknown as { runFlow(u: unknown): Promise<void> }).runFlow(flow);
    await until(() => mock.progress.length > 0); // a real run first runs the sidecar's doctor, a process
    assert.deepEqual(asked, [['DATABASE_URL', 'OPENAI_API_KEY']]);
    assert.deepEqual(client.requests.find((r) => r.method === 'agentcanvas/startRun')?.params, {
      uri: 'file:///ws/flows/team.yaml',
      backend: 'codex',
      dryRun: false,
      env: { OPENAI_API_KEY: 'sk-stored-0123456789' },
    });
    rc.onRunEvent({ runId: 'r1', event: 'run_finished', status: 'completed' });
    await run;
    assert.equal(mock.messages.at(-1)?.level, 'info');
    assert.match(mock.messages.at(-1)?.message ?? '', /team\.yaml completed/);
  } finally {
    cleanup();
  }
});

test('Invoke Skill: the request, the open workspace files (active one ticked, .agentcanvas left out) and a backend other than command go to startRun as a skill', async () => {
  const { rc, client, cleanup } = await setup();
  const { workspace, window } = await import('./vscode-mock');
  workspace.workspaceFolders = [{ uri: Uri.file('/ws'), name: 'ws' }];
  try {
    client.answers.set('agentcanvas/startRun', () => ({ runId: 'r9', flow: 'skill-tidy', status: 'running' }));
    window.activeTextEditor = { document: { uri: Uri.file('/ws/src/a.ts') } };
    window.tabGroups.all = [{ tabs: [{ input: { uri: Uri.file('/ws/src/b.ts') } }, { input: { uri: Uri.file('/ws/.agentcanvas/flows/x.yaml') } }, { input: { uri: Uri.file('/elsewhere/c.ts') } }, { input: {} }] }];
    mock.inputBoxAnswer = '  sort them  ';
    let files: unknown[] = [];
    let backends: unknown[] = [];
    mock.quickPickAnswer = (items) => {
      if ('backend' in items[0]) {
        backends = items.map((i) => i.label);
        return items[0];
      }
      files = items.map((i) => [i.label, i.picked]);
      return items.filter((i) => i.picked);
    };
    const run = rc.invokeSkill({ folder: 'tidy' });
    await until(() => mock.progress.length > 0); // a real run first runs the sidecar's doctor, a process
    assert.deepEqual(files, [['src/a.ts', true], ['src/b.ts', false]]);
    assert.deepEqual(backends, ['dry-run', 'auto', 'claude', 'codex', 'gemini']);
    assert.deepEqual(client.requests.find((r) => r.method === 'agentcanvas/startRun')?.params, { skill: { name: 'tidy', arguments: 'sort them', files: ['src/a.ts'] }, backend: 'dry-run', dryRun: true });
    rc.onRunEvent({ runId: 'r9', event: 'run_finished', status: 'completed' });
    await run;
    assert.match(mock.messages.at(-1)?.message ?? '', /skill-tidy completed/);
  } finally {
    workspace.workspaceFolders = undefined;
    cleanup();
  }
});

test('Invoke Skill: dismissing the request box starts nothing', async () => {
  const { rc, client, cleanup } = await setup();
  try {
    await rc.invokeSkill({ folder: 'tidy' });
    assert.equal(client.requests.filter((r) => r.method === 'agentcanvas/startRun').length, 0);
  } finally {
    cleanup();
  }
});

test('the output channel says how every run ended, and its warnings', async () => {
  const { rc, cleanup } = await setup();
  try {
    rc.onRunEvent({ runId: 'r1', flow: 'team', event: 'warning', agent: 'coder', message: 'runtime.env of coder names X, which is not set: the agent runs without it' });
    rc.onRunEvent({ runId: 'r1', flow: 'team', event: 'run_finished', status: 'completed', proposals: ['p.json'], spend: { costUsd: 0.5, tokens: 1000, costKnown: true } });
    rc.onRunEvent({ runId: 'r2', flow: 'team', event: 'run_finished', status: 'stopped', reason: 'stopped' });
    assert.deepEqual(logged.filter((l) => /run r[12]/.test(l)), [
      'warn: run r1: warning (coder): runtime.env of coder names X, which is not set: the agent runs without it',
      'info: run r1 of team completed: 1 proposal, $0.50, 1,000 tokens',
      'warn: run r2 of team stopped (stopped)',
    ]);
  } finally {
    cleanup();
  }
});
