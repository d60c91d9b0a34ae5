import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerRequest, countdown, promptKind, promptTitle, questionChoices, secretKey, sidecarValueCheck } from '../../src/hitl/requests';
import type { PendingDependency, PendingQuestion } from '../../src/protocol';

const q: PendingQuestion = {
  kind: 'question',
  runId: 'r1',
  requestId: 'q1',
  agentId: 'planner',
  question: { category: 'business', question: 'Revenue model?', options: ['Subscription', 'Freemium', 'One-time'], default: 'Freemium', required: true },
};
const dep = (type: PendingDependency['dependency']['type'], name = 'X'): PendingDependency => ({ kind: 'dependency', runId: 'r1', requestId: 'd1', dependency: { type, name, required: true } });

test('a question with options: options in order, default marked and active, free text, no skip when required', () => {
  const c = questionChoices(q.question);
  assert.equal(c.useInputBox, false);
  assert.deepEqual(c.items.map((i) => i.label), ['Subscription', 'Freemium', 'One-time', '$(edit) Other answer…']);
  assert.equal(c.activeIndex, 1);
  assert.equal(c.items[1].description, '(default)');
  assert.equal(c.items[1].answer, 'Freemium');
});

test('an optional question can be skipped; a question without options is free text', () => {
  const c = questionChoices({ question: 'Anything else?', options: ['No'], required: false });
  assert.equal(c.items.at(-1)?.action, 'skip');
  assert.equal(c.activeIndex, 0);
  assert.deepEqual(questionChoices({ question: 'Name?' }), { items: [], activeIndex: -1, useInputBox: true });
});

test('each dependency type gets its prompt', () => {
  assert.deepEqual(
    (['api_key', 'env_variable', 'service', 'file', 'permission', 'package'] as const).map(promptKind),
    ['secret', 'secret', 'url', 'file', 'permission', 'package'],
  );
});

test('values are checked by the sidecar, whose refusal is shown as it says it', async () => {
  const calls: unknown[] = [];
  const check = sidecarValueCheck(async (method, params) => {
    calls.push([method, params]);
    return (params as { value: string }).value === 'sk-proj.abc:defgh12' ? { valid: false, error: 'Invalid API key format' } : { valid: true };
  });
  assert.equal(await check('api_key', 'sk-proj.abc:defgh12'), 'Invalid API key format');
  assert.equal(await check('api_key', 'sk-1234567890abcdef'), undefined);
  assert.deepEqual(calls[0], ['agentcanvas/checkDependencyValue', { type: 'api_key', value: 'sk-proj.abc:defgh12' }]);
  const down = sidecarValueCheck(async () => {
    throw new Error('not running');
  });
  assert.equal(await down('api_key', 'x'), undefined, 'without a sidecar nothing is refused here: provideDependency checks');
});

test('answers map to the sidecar requests', () => {
  assert.deepEqual(answerRequest(q, { kind: 'answer', text: 'Freemium' }), {
    method: 'agentcanvas/answerQuestion',
    params: { runId: 'r1', questionId: 'q1', answer: 'Freemium' },
  });
  assert.deepEqual(answerRequest(dep('api_key'), { kind: 'provide', value: 'sk-secret-value' }), {
    method: 'agentcanvas/provideDependency',
    params: { runId: 'r1', requestId: 'd1', value: 'sk-secret-value' },
  });
  assert.deepEqual(answerRequest(dep('permission'), { kind: 'reject', reason: 'permission denied by the user' }), {
    method: 'agentcanvas/rejectDependency',
    params: { runId: 'r1', requestId: 'd1', reason: 'permission denied by the user' },
  });
  assert.throws(() => answerRequest(q, { kind: 'provide', value: 'x' }));
});

test('countdown and titles', () => {
  assert.equal(countdown(undefined, 0), undefined);
  assert.equal(countdown(65_000, 0), '1:05 left');
  assert.equal(countdown(59_999, 0), '59s left');
  assert.equal(countdown(3_600_000 + 61_000, 0), '1:01:01 left');
  assert.equal(countdown(1000, 1000), 'expired');
  assert.equal(promptTitle({ ...q, deadline: 120_000 }, 0), 'AgentCanvas: planner asks: business question (2:00 left)');
  assert.equal(promptTitle(dep('api_key', 'OPENAI_API_KEY'), 0), 'AgentCanvas: An agent asks: api_key OPENAI_API_KEY');
  assert.equal(secretKey(dep('api_key', 'OPENAI_API_KEY').dependency), 'agentcanvas.dependency.api_key.OPENAI_API_KEY');
});
