// Forks in the Runs view and Fork from Here: what the tree shows, what the sidecar is asked.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { mock, settings } from './vscode-mock';
import { clients } from './languageclient-stub';
import { SidecarClient } from '../../src/sidecar';
import { Log } from '../../src/log';
import { StatusItem } from '../../src/status';
import { readRuns } from '../../src/protocol';
import { RunsModel } from '../../src/views/runsModel';
import { RunsTree, type RunNode } from '../../src/views/runsTree';
import { forkPlanDetail, parseForkChanges, readForkPlan } from '../../src/views/forks';
import { ForkController } from '../../src/commands/forkCommands';
import type { Turn } from '../../src/views/transcript';

beforeEach(() => {
  mock.reset();
  settings.clear();
  clients.length = 0;
});

const turn = (seq: number, agent: string, reply: string): Turn => ({ seq, interactionId: 'build', agent, from: 'engine', round: 1, backend: 'command', started: '', durationMs: 1, status: 'completed', exitCode: 0, prompt: '', reply });

/** Waits for cond (a condition, never a time), giving up after 10 s. */
async function until(cond: () => boolean): Promise<void> {
  for (const end = Date.now() + 10_000; !cond() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
}

test('runs tree: a fork is listed under the run it left, labelled with the turn; a run lists its turns', async () => {
  const m = new RunsModel();
  m.replace(
    readRuns([
      { runId: 'r2', flow: 'team', status: 'completed', forkOf: { runId: 'r1', turn: 3 }, interactions: [] },
      { runId: 'r1', flow: 'team', status: 'completed', interactions: [] },
      { runId: 'r3', flow: 'team', status: 'completed', forkOf: { runId: 'gone', turn: 1 }, interactions: [] },
    ]),
  );
  let read = 0;
  const t = new RunsTree(m, async (runId) => {
    read++;
    return runId === 'r1' ? [turn(1, 'lead', '1. Intent\n- Planned.\nASSIGN coder: x'), turn(2, 'coder', '')] : [];
  });
  const top = t.getChildren();
  assert.deepEqual(top.map((n) => (n.kind === 'run' ? n.run.runId : n.kind)), ['r3', 'r1'], "a fork whose parent is not listed stays at the top");
  const r1 = top[1];
  const kids = t.getChildren(r1);
  assert.deepEqual(kids.map((k) => k.kind), ['turns', 'run']);
  const fork = t.getTreeItem(kids[1]);
  assert.equal(fork.label, 'fork from turn 3');
  assert.match(String(fork.description), /^team · completed/);
  // The turns are read once, then listed; each offers Fork from Here.
  assert.equal((t.getChildren(kids[0])[0] as { text?: string }).text, 'Reading the turns…');
  await until(() => t.getChildren(kids[0])[0].kind === 'turn');
  const turns = t.getChildren(kids[0]) as Array<Extract<RunNode, { kind: 'turn' }>>;
  assert.equal(read, 1);
  assert.deepEqual(turns.map((n) => n.turn.seq), [1, 2]);
  const item = t.getTreeItem(turns[0]);
  assert.equal(item.label, '#1 lead');
  assert.equal(item.description, 'build · round 1 · Planned.');
  assert.equal(item.contextValue, 'turn');
});

test('runs model: run_started of a fork says where it left from', () => {
  const m = new RunsModel();
  m.apply({ runId: 'f1', flow: 'team', event: 'run_started', forkOf: { runId: 'r1', turn: 2 } });
  assert.deepEqual(m.get('f1')?.forkOf, { runId: 'r1', turn: 2 });
});

const planResult = {
  plan: {
    runId: 'f1',
    forkOf: { runId: 'r1', turn: 2 },
    turns: 5,
    flowFile: '/ws/flows/team.yaml',
    changes: ['coder: backend claude → gemini'],
    agents: [
      { id: 'coder', files: 'its sandbox comes back as turn 2 left it', session: 'a fresh context (its backend changed)', restored: true, resumed: false, limits: ['its claude session of turn 2 cannot be resumed by gemini: its next turn starts a fresh context'] },
      { id: 'lead', files: 'it works in the workspace', restored: false, resumed: false },
    ],
    limits: ['nothing outside the sandboxes is undone.'],
  },
};

test('fork plan: read from forkRun, shown per agent with what cannot be restored', () => {
  const plan = readForkPlan(planResult)!;
  assert.equal(plan.forkOf.turn, 2);
  assert.equal(
    forkPlanDetail(plan),
    [
      'Changed: coder: backend claude → gemini',
      'coder: its sandbox comes back as turn 2 left it; a fresh context (its backend changed).',
      '  ⚠ coder: its claude session of turn 2 cannot be resumed by gemini: its next turn starts a fresh context.',
      'lead: it works in the workspace.',
      '⚠ nothing outside the sandboxes is undone.',
    ].join('\n'),
  );
  assert.equal(readForkPlan({ plan: {} }), undefined);
  assert.deepEqual(parseForkChanges(' agent.coder.backend=gemini ;\n task=Be brief ;; '), ['agent.coder.backend=gemini', 'task=Be brief']);
});

async function controller() {
  const dir = mkdtempSync(path.join(tmpdir(), 'ac-fork-'));
  const bin = path.join(dir, 'agentcanvas');
  writeFileSync(bin, '#!/bin/sh\necho "agentcanvas 1.0.0"\n');
  chmodSync(bin, 0o755);
  settings.set('agentcanvas.sidecarPath', bin);
  const log = new Log({ name: 'AgentCanvas', info() {}, warn() {}, error() {}, append() {}, appendLine() {}, replace() {}, clear() {}, show() {}, hide() {}, dispose() {} } as never);
  const sc = new SidecarClient({ extensionPath: '/x' } as never, log, new StatusItem());
  await sc.start();
  const client = clients[0];
  client.answers.set('agentcanvas/forkRun', (p: unknown) => ((p as { planOnly?: boolean }).planOnly ? planResult : { ...planResult, run: { runId: 'f1' } }));
  let refreshed = 0;
  const fc = new ForkController(sc, log, new RunsModel(), async () => void refreshed++, async () => ({ TOKEN: 'secret' }), async () => [turn(1, 'lead', 'a'), turn(2, 'coder', 'b'), turn(4, 'coder', 'c')]);
  return { fc, client, refreshed: () => refreshed, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('Fork from Here on a turn: the plan first, then the fork, with the changes typed', async () => {
  const { fc, client, refreshed, cleanup } = await controller();
  try {
    mock.messageAnswer = 'Fork with Changes…';
    mock.inputBoxAnswer = 'agent.coder.backend=gemini; task=Be brief';
    const id = await fc.fork({ kind: 'turn', run: { runId: 'r1' }, turn: { seq: 2 } });
    assert.equal(id, 'f1');
    const calls = client.requests.filter((r) => r.method === 'agentcanvas/forkRun').map((r) => r.params);
    assert.deepEqual(calls, [
      { runId: 'r1', at: 2, planOnly: true },
      { runId: 'r1', at: 2, set: ['agent.coder.backend=gemini', 'task=Be brief'] },
    ]);
    const confirm = mock.messages[0];
    assert.match(confirm.message, /Fork run r1 from the end of turn 2 of 5\?/);
    assert.match(String((confirm.options as { detail?: string }).detail), /cannot be resumed by gemini/);
    assert.equal(refreshed(), 1);
  } finally {
    cleanup();
  }
});

test('Fork from the canvas overlay: the agent\'s turns to pick from, newest first; dismissing forks nothing', async () => {
  const { fc, client, cleanup } = await controller();
  try {
    let offered: unknown[] = [];
    mock.quickPickAnswer = (items) => {
      offered = items.map((i) => i.label);
      return items[0];
    };
    mock.messageAnswer = undefined; // the confirmation dismissed
    assert.equal(await fc.fork({ runId: 'r1', agentId: 'coder' }), undefined);
    assert.deepEqual(offered, ['#4 coder', '#2 coder']);
    const calls = client.requests.filter((r) => r.method === 'agentcanvas/forkRun').map((r) => r.params);
    assert.deepEqual(calls, [{ runId: 'r1', at: 4, planOnly: true }], 'only the plan was asked for');
  } finally {
    cleanup();
  }
});
