import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readApplyResult, readDiagnostics, readPatterns, readPending, readRunEvent, readRuns, readStatus } from '../../src/protocol';
import { answerRequest, questionChoices } from '../../src/hitl/requests';

test('status: the server sends flow names; health falls back to warning when unknown', () => {
  assert.deepEqual(readStatus({ health: 'ok', message: 'ready', runningFlows: ['team.yaml'], version: '0.1.0' }), {
    health: 'ok',
    message: 'ready',
    runningFlows: [{ runId: '', flow: 'team.yaml' }],
    pendingRequests: undefined,
    version: '0.1.0',
  });
  const odd = readStatus({ health: 'sunny' });
  assert.equal(odd.health, 'warning');
  assert.match(odd.message ?? '', /unknown health "sunny"/);
  assert.equal(readStatus(null).health, 'warning');
});

test('pending question from a run event (payload in data) and from listRuns (flat)', () => {
  // as the sidecar sends it: the engine's question_asked, its payload in data
  const ev = {
    ts: 1795305600000,
    flow: 'ask',
    runId: 'r1',
    interactionId: 'i1',
    event: 'question_asked',
    data: { agent: 'coder', id: 'q_1', fields: { category: 'choice', question: 'Which database?', options: ['PostgreSQL', 'SQLite'], default: 'SQLite', required: true }, deadline: '2026-11-22T00:05:00Z' },
  };
  assert.deepEqual(readPending(ev), {
    kind: 'question',
    runId: 'r1',
    requestId: 'q_1',
    agentId: 'coder',
    flow: 'ask',
    deadline: Date.parse('2026-11-22T00:05:00Z'),
    question: { category: 'choice', question: 'Which database?', options: ['PostgreSQL', 'SQLite'], default: 'SQLite', required: true },
  });
  const flat = readPending({ kind: 'question', requestId: 'q_2', question: { question: 'Proceed?', required: 'false' } }, 'r2');
  assert.equal(flat?.runId, 'r2');
  assert.equal(flat?.kind === 'question' && flat.question.required, false);
});

test('pending dependency; malformed ones are dropped, never half-shown', () => {
  const d = readPending({ runId: 'r', event: 'dependency_requested', data: { agent: 'a', id: 'd1', fields: { type: 'api_key', name: 'OPENAI_API_KEY', description: 'for GPT', required: true } } });
  assert.equal(d?.kind, 'dependency');
  assert.deepEqual(d?.kind === 'dependency' && d.dependency, { type: 'api_key', name: 'OPENAI_API_KEY', description: 'for GPT', required: true, default: undefined });
  assert.equal(readPending({ runId: 'r', event: 'dependency_requested', data: { id: 'd2', fields: { type: 'telepathy', name: 'X' } } }), undefined);
  assert.equal(readPending({ runId: 'r', event: 'dependency_requested', data: { id: 'd3', fields: { type: 'file' } } }), undefined);
  assert.equal(readPending({ runId: 'r', event: 'question_asked', data: { id: 'q', fields: { question: '  ' } } }), undefined);
  assert.equal(readPending({ event: 'question_asked', data: { id: 'q', fields: { question: 'no run' } } }), undefined);
});

test('runs: RunInfo.state, nested interactions and pending', () => {
  const runs = readRuns([
    { runId: 'r1', flow: 'flows/a.yaml', state: 'waiting', startedAt: 't', interactions: [{ id: 'i1', patternId: 'debate_judge', status: 'running', agents: [{ id: 'a', status: 'waiting' }] }], pending: [{ kind: 'question', requestId: 'q', question: { question: 'ok?' } }] },
    { nope: true },
  ]);
  assert.equal(runs.length, 1);
  assert.equal(runs[0].status, 'waiting');
  assert.equal(runs[0].interactions[0].agents[0].status, 'waiting');
  assert.equal(runs[0].pending[0].runId, 'r1');
  assert.deepEqual(readRuns({ runs: [] }), []);
  // listRuns' spend, the run's and an ended interaction's
  const [spent] = readRuns([{ runId: 'r2', status: 'stopped', reason: 'budget', spend: { tokens: 4000, costUsd: 0.04, costKnown: true }, interactions: [{ id: 'i1', status: 'stopped', spend: { tokens: 4000, costUsd: 0.04, costKnown: true, unreported: ['j'] } }] }]);
  assert.deepEqual(spent.spend, { tokens: 4000, costUsd: 0.04, costKnown: true, unreported: [] });
  assert.deepEqual(spent.interactions[0].spend?.unreported, ['j']);
  assert.equal(runs[0].spend, undefined);
});

test('patterns, diagnostics and apply results, bare or wrapped', () => {
  assert.equal(readPatterns([{ id: 'P05', patternId: 'debate_judge', name: 'Debate + Judge' }])[0].name, 'Debate + Judge');
  assert.equal(readPatterns({ patterns: [{ id: 'P01', patternId: 'manager_worker' }] })[0].name, 'manager_worker');
  assert.deepEqual(readPatterns([{ id: 'P05', patternId: 'debate_judge', roles: [{ role: 'debater', name: 'Debater', kind: 'agent' }, { role: 'judge' }, 'observer'] }])[0].roles, ['Debater', 'judge', 'observer']);
  const diags = readDiagnostics({ diagnostics: [{ range: { start: { line: 7, character: 11 }, end: { line: 7, character: 21 } }, severity: 1, code: 'schema', message: 'files must be a list' }, { message: 'no range' }] });
  assert.equal(diags.length, 1);
  assert.equal(diags[0].code, 'schema');
  assert.deepEqual(readApplyResult({ applied: false, conflicts: [{ file: 'src/a.ts', message: 'hunk 2 does not match' }] }), {
    applied: false,
    files: [],
    conflicts: [{ path: 'src/a.ts', reason: 'hunk 2 does not match' }],
    message: undefined,
    warnings: [],
  });
  // a check that was not refused would apply (refusals are -32803 errors)
  assert.equal(readApplyResult({ applied: false, dryRun: true, files: [{ path: 'src/parser.ts', hunks: [1] }], warnings: [] }).applied, true);
  // the server's answer: files as objects
  assert.deepEqual(readApplyResult({ applied: true, dryRun: false, files: [{ path: 'src/b.ts', status: 'modified' }, { path: 'src/a.ts', hunks: [1] }], warnings: ['HEAD moved'] }).files, ['src/b.ts', 'src/a.ts']);
});

test("the run engine's shapes: question_asked/dependency_requested events and Request entries", () => {
  const ev = { runId: 'r1', event: 'question_asked', interactionId: 'i1', data: { agent: 'planner', id: 'q7', fields: { category: 'choice', question: 'Which DB?', options: ['PostgreSQL', 'SQLite'], default: 'SQLite', required: 'true' } } };
  const q = readPending(ev);
  assert.equal(q?.kind, 'question');
  assert.deepEqual([q?.requestId, q?.agentId], ['q7', 'planner']);
  assert.deepEqual(q?.kind === 'question' && q.question.options, ['PostgreSQL', 'SQLite']);
  // the JSONL form: fields flat beside the common ones
  const flat = readPending({ ts: 1, runId: 'r1', event: 'dependency_requested', agent: 'coder', id: 'd2', fields: { type: 'env_variable', name: 'DATABASE_URL', description: 'db', required: false } });
  assert.deepEqual(flat?.kind === 'dependency' && [flat.requestId, flat.agentId, flat.dependency.type, flat.dependency.required], ['d2', 'coder', 'env_variable', false]);
  // engine.Request in listRuns' pending (kind + fields + deadline)
  const [run] = readRuns([{ runId: 'r1', flow: 'team', state: 'waiting', pending: [{ runId: 'r1', agentId: 'coder', interactionId: 'i1', id: 'd3', kind: 'dependency', fields: { type: 'api_key', name: 'OPENAI_API_KEY', description: 'GPT' }, deadline: '2026-11-22T03:00:00Z' }] }]);
  assert.equal(run.pending[0].kind, 'dependency');
  assert.equal(run.pending[0].deadline, Date.parse('2026-11-22T03:00:00Z'));
  const phase = readPending({ runId: 'r1', event: 'phase_completed', data: { agent: 'a', id: 'p1', fields: { phase: 2 } } });
  assert.deepEqual(phase?.kind === 'question' && [phase.question.question, phase.question.options], ['Phase 2 complete. Continue?', ['Continue', 'Stop']]);
});

test('run events come flat, whether the fields were nested in data or not', () => {
  const ev = readRunEvent({ flow: 'ask', runId: 'r1', event: 'run_finished', ts: 't', data: { status: 'completed', reason: '', runId: 'spoofed' } });
  assert.equal(ev?.status, 'completed');
  assert.equal(ev?.runId, 'r1', 'the common fields win over data');
  assert.equal(readRunEvent({ event: 'x' }), undefined);
});

test("an agent's error that asks the person (notify_user) is a question of retry, skip or stop, answered as one", () => {
  const ev = {
    runId: 'r',
    event: 'recovery_asked',
    data: { agent: 'worker', id: 'err_1', fields: { type: 'recoverable', message: 'Rate limit exceeded', details: 'API rate limit hit', recovery: 'notify_user' } },
  };
  const p = readPending(ev);
  assert.ok(p && p.kind === 'question');
  assert.equal(p.requestId, 'err_1');
  assert.equal(p.question.question, 'worker reported an error: Rate limit exceeded (API rate limit hit). Retry, skip it, or stop the agent?');
  assert.deepEqual(
    questionChoices(p.question).items.map((i) => i.label),
    ['retry', 'skip', 'stop'],
    'no free answer: only the three choices',
  );
  assert.deepEqual(answerRequest(p, { kind: 'answer', text: 'skip' }), { method: 'agentcanvas/answerQuestion', params: { runId: 'r', questionId: 'err_1', answer: 'skip' } });
});

test('a phase approval shows what its verification found', () => {
  const verified = readPending({
    runId: 'r',
    event: 'phase_completed',
    data: { agent: 'planner', id: 'phase_1', fields: { N: 1, Phase: 'Planning', verification: { verifier: 'checker', passed: true, report: '.agentcanvas/runs/r/verification/planner-phase1-pass.md' } } },
  });
  assert.ok(verified && verified.kind === 'question');
  assert.equal(verified.question.question, 'Phase 1 complete. Verified by checker; report: .agentcanvas/runs/r/verification/planner-phase1-pass.md. Continue?');
  const unverified = readPending({ runId: 'r', event: 'phase_completed', data: { id: 'phase_2', fields: { N: 2, verification: 'none: no verifier is set (params.verifier or params.verify_command)' } } });
  assert.ok(unverified && unverified.kind === 'question');
  assert.match(unverified.question.question, /^Phase 2 complete\. Not verified \(no verifier is set/);
});
