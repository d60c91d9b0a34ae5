import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PendingQueue, type PendingSink } from '../../src/hitl/pending';
import type { Answer } from '../../src/hitl/requests';
import { readRunEvent, type PendingRequest, type RunEvent } from '../../src/protocol';

function sink(answers: Array<Answer | undefined>, opts: { fail?: boolean } = {}) {
  const asked: string[] = [];
  const sent: Array<{ method: string; params: unknown }> = [];
  const secrets: string[] = [];
  const errors: string[] = [];
  const s: PendingSink = {
    ask: async (p) => {
      asked.push(p.requestId);
      return answers.shift();
    },
    send: async (method, params) => {
      if (opts.fail) throw new Error('run r1 is not waiting');
      sent.push({ method, params });
    },
    onSecretProvided: async (_p, v) => void secrets.push(v),
    error: (m) => void errors.push(m),
  };
  return { s, asked, sent, secrets, errors };
}

// The engine's events, as readRunEvent hands them on (data's fields flat beside the common ones).
const qEvent = (id: string): RunEvent => readRunEvent({ runId: 'r1', event: 'question_asked', data: { agent: 'a', id, fields: { question: `q ${id}?`, options: ['yes', 'no'] } } })!;
const dEvent = (id: string): RunEvent => readRunEvent({ runId: 'r1', event: 'dependency_requested', data: { agent: 'a', id, fields: { type: 'api_key', name: 'KEY' } } })!;

test('requests from events are asked one at a time and answered in order', async () => {
  const k = sink([{ kind: 'answer', text: 'yes' }, { kind: 'provide', value: 'sk-123456789' }]);
  const q = new PendingQueue(k.s);
  assert.equal(q.onRunEvent(qEvent('q1')), true);
  assert.equal(q.onRunEvent(dEvent('d1')), true);
  assert.equal(q.onRunEvent({ runId: 'r1', event: 'step' }), false);
  const first = q.promptNext();
  const second = q.promptNext(); // a prompt is open: this one does nothing (no dialog storm)
  await Promise.all([first, second]);
  assert.deepEqual(k.asked, ['q1', 'd1']);
  assert.deepEqual(
    k.sent.map((x) => x.method),
    ['agentcanvas/answerQuestion', 'agentcanvas/provideDependency'],
  );
  assert.deepEqual(k.secrets, ['sk-123456789']);
  assert.equal(q.size, 0);
});

test('dismissing a prompt keeps the request pending and stops the round', async () => {
  const k = sink([undefined]);
  const q = new PendingQueue(k.s);
  q.onRunEvent(qEvent('q1'));
  q.onRunEvent(qEvent('q2'));
  await q.promptNext();
  assert.deepEqual(k.asked, ['q1']);
  assert.equal(q.size, 2);
  assert.equal(k.sent.length, 0);
});

test('a failed answer is reported and the request stays', async () => {
  const k = sink([{ kind: 'answer', text: 'yes' }], { fail: true });
  const q = new PendingQueue(k.s);
  q.onRunEvent(qEvent('q1'));
  await q.promptNext();
  assert.equal(q.size, 1);
  assert.match(k.errors[0], /answering the question failed: run r1 is not waiting/);
});

test('answered elsewhere, expired or run ended: the request leaves the queue', () => {
  const q = new PendingQueue(sink([]).s);
  q.onRunEvent(qEvent('q1'));
  q.onRunEvent(qEvent('q2'));
  q.onRunEvent(dEvent('d1'));
  q.onRunEvent({ runId: 'r1', event: 'question_answered', data: { questionId: 'q1' } });
  assert.deepEqual(q.list().map((p) => p.requestId), ['q2', 'd1']);
  q.onRunEvent({ runId: 'r1', event: 'run_stopped' });
  assert.equal(q.size, 0);
});

test('after a reload the queue is rebuilt from listRuns', () => {
  const q = new PendingQueue(sink([]).s);
  q.onRunEvent(qEvent('stale'));
  const fromSidecar: PendingRequest[] = [{ kind: 'question', runId: 'r9', requestId: 'q9', question: { question: 'still there?' } }];
  let changes = 0;
  q.onDidChange(() => changes++);
  q.replaceAll(fromSidecar);
  assert.deepEqual(q.list().map((p) => p.requestId), ['q9']);
  assert.equal(changes, 1);
});

test("the engine's events open and close requests", () => {
  const q = new PendingQueue(sink([]).s);
  q.onRunEvent({ runId: 'r1', event: 'dependency_requested', data: { agent: 'coder', id: 'd1', fields: { type: 'api_key', name: 'KEY' } } });
  q.onRunEvent({ runId: 'r1', event: 'question_asked', data: { agent: 'coder', id: 'q1', fields: { question: 'ok?' } } });
  assert.equal(q.size, 2);
  q.onRunEvent({ runId: 'r1', event: 'dependency_resolved', data: { agent: 'coder', id: 'd1', outcome: 'provided' } });
  assert.deepEqual(q.list().map((p) => p.requestId), ['q1']);
});
