// What the editor says of runs, needs and proposals is words for people: progress lines, the
// output channel's end of a run, the status menu whose counts are the bell's, Needs You rows
// that can be told apart, rejected proposals folded away, stopped runs resumable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { progressWords, runEndWords } from '../../src/views/eventWords';
import { actionable, needsMenu, needsOf, runTime } from '../../src/views/needsYouTree';
import { rootNodes } from '../../src/views/proposalsTree';
import { canResume, RunsModel } from '../../src/views/runsModel';
import type { Proposal } from '../../src/views/proposalsModel';
import type { RunEvent } from '../../src/protocol';

const ev = (event: string, fields: Record<string, unknown> = {}): RunEvent => ({ runId: 'run_20261128-141953_4e4854', flow: 'fix-with-claude', event, interactionId: 'fix', ...fields });

test('progress lines are sentences, never an event name', () => {
  const lines: [RunEvent, string | undefined][] = [
    [ev('agent_started', { agent: 'fixer', round: 0, backend: 'claude' }), 'fix: fixer is working (round 1, claude)'],
    [ev('agent_finished', { agent: 'fixer', status: 'completed', turns: 1 }), 'fix: fixer finished its turn'],
    [ev('agent_finished', { agent: 'fixer', status: 'failed', error: 'claude exited with code 1\nmore' }), "fix: fixer's turn failed: claude exited with code 1"],
    [ev('proposal_created', { agent: 'fixer', changedFiles: [{ path: 'src/slug.js', status: 'modified' }] }), 'fix: fixer proposes 1 file: src/slug.js'],
    [ev('message', { type: 'handoff', from: 'fixer', to: ['lead'] }), 'fix: fixer hands off to lead'],
    [ev('question_asked', { agent: 'lead', fields: { question: 'Which port?' } }), 'fix: lead asks you: Which port?'],
    [ev('warning', { agent: 'fixer', message: 'runtime.env of fixer names X, which is not set' }), 'fix: warning (fixer): runtime.env of fixer names X, which is not set'],
    [ev('terminated', { reason: 'quality_gate', rounds: 1 }), 'fix: ended (quality_gate after 1 round)'],
    [ev('run_started', { interactionId: '', interactions: 1, budget: { usd: 5, tokens: 2000000 } }), 'started: 1 interaction; stops at $5.00 or 2,000,000 tokens spent (policy.budget)'],
    [ev('run_started', { interactionId: '', interactions: 1, defaultLimit: { message: 'fixer: at most 200 model calls each over the run (the default)' } }), 'started: 1 interaction; limit: fixer: at most 200 model calls each over the run (the default)'],
    [ev('message', { type: 'prompt' }), undefined],
    [ev('spend', { agent: 'fixer' }), undefined],
  ];
  for (const [e, want] of lines) {
    const got = progressWords(e);
    assert.equal(got, want, e.event);
    assert.ok(!got || !/\b[a-z]+_[a-z]+\b/.test(got.replace(/quality_gate/, '')), `an event name in ${got}`);
  }
});

test('how a run ended is one line for the output channel', () => {
  assert.equal(
    runEndWords(ev('run_finished', { status: 'completed', proposals: ['a/proposal.json'], spend: { costUsd: 0.0512, tokens: 31200, costKnown: true } }), 'flows/fix-with-claude.yaml'),
    'run run_20261128-141953_4e4854 of flows/fix-with-claude.yaml completed: 1 proposal, $0.05, 31,200 tokens',
  );
  assert.equal(runEndWords(ev('run_finished', { status: 'stopped', reason: 'stopped' }), 'f'), 'run run_20261128-141953_4e4854 of f stopped (stopped)');
});

function proposal(runId: string, agentId: string, status: Proposal['status'] = 'pending'): Proposal {
  const agentDir = path.join('/ws', '.agentcanvas', 'sandboxes', runId, agentId);
  const file = { path: 'src/slug.js', oldPath: 'src/slug.js', status: 'modified', binary: false, added: 1, removed: 1, hunks: [], header: [] };
  return {
    runId, agentId, agentDir, proposalJson: path.join(agentDir, 'proposal', 'proposal.json'), inputDir: path.join(agentDir, 'input'), workDir: path.join(agentDir, 'work'),
    status, files: [file as unknown as Proposal['files'][number]], selection: new Map(), mergeSelection: new Map(), resolutions: new Map(),
  };
}

test('Needs You rows of one worker in two runs read differently, and the status menu counts what the bell counts', () => {
  const needs = needsOf(
    [{ kind: 'question', runId: 'r1', requestId: 'q1', agentId: 'lead', question: { question: 'Go on?' } }],
    [proposal('run_20261128-141953_4e4854', 'fixer'), proposal('run_20261128-150102_aa11bb', 'fixer'), proposal('run_20261128-150102_cc22dd', 'fixer'), proposal('run_20261128-090000_ee33ff', 'old', 'rejected')],
  );
  const labels = needs.filter((n) => n.kind === 'review').map((n) => n.label);
  assert.equal(labels.length, 3);
  assert.equal(new Set(labels).size, 3, `rows read alike: ${labels.join(' | ')}`);
  assert.match(labels[0], new RegExp(`^fixer: proposal to review \\(${runTime('run_20261128-141953_4e4854')}, src/slug.js\\)$`));
  assert.match(labels[1], /\[aa11bb\]$/);
  const menu = needsMenu(needs);
  assert.deepEqual(menu.map((m) => m.label), ['Answer 1 waiting request', 'Review 3 proposals']);
  assert.equal(menu.reduce((n, m) => n + m.count, 0), actionable(needs), 'the menu says what the bell counts');
});

test('rejected and reverted proposals are folded into one collapsed row at the end', () => {
  const ps = [proposal('run_1', 'a', 'rejected'), proposal('run_2', 'b'), proposal('run_3', 'c', 'applied'), proposal('run_4', 'd', 'reverted')];
  const rows = rootNodes(ps);
  assert.deepEqual(rows.map((r) => (r.kind === 'proposal' ? r.proposal.agentId : r.kind)), ['b', 'c', 'closed']);
  const closed = rows[2];
  assert.ok(closed.kind === 'closed' && closed.proposals.map((p) => p.agentId).join() === 'a,d');
});

test('a run the person stopped can be resumed; one that completed or hit its budget cannot', () => {
  const m = new RunsModel();
  m.apply({ runId: 'r1', event: 'run_started' });
  m.apply({ runId: 'r1', event: 'run_finished', status: 'stopped', reason: 'stopped' });
  m.apply({ runId: 'r2', event: 'run_started' });
  m.apply({ runId: 'r2', event: 'run_finished', status: 'stopped', reason: 'budget' });
  m.apply({ runId: 'r3', event: 'run_started' });
  m.apply({ runId: 'r3', event: 'run_finished', status: 'completed' });
  assert.deepEqual(['r1', 'r2', 'r3'].map((id) => canResume(m.get(id)!)), [true, false, false]);
});
