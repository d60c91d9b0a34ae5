// The prompts a user sees for USER_QUESTION and DEPENDENCY_REQUEST, against the scripted vscode mock.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mock, Uri, type FakeInput } from './vscode-mock';
import { askUser } from '../../src/hitl/prompts';
import type { PendingDependency, PendingQuestion } from '../../src/protocol';

const secrets = (stored: Record<string, string> = {}) =>
  ({ get: async (k: string) => stored[k], store: async () => {}, delete: async () => {}, onDidChange: () => ({ dispose() {} }) }) as never;

const question: PendingQuestion = {
  kind: 'question',
  runId: 'r1',
  requestId: 'q1',
  agentId: 'planner',
  deadline: Date.now() + 300_000,
  question: { category: 'choice', question: 'Which database?', options: ['PostgreSQL', 'MySQL', 'SQLite'], default: 'SQLite', required: true },
};
const dep = (type: PendingDependency['dependency']['type'], name: string): PendingDependency => ({
  kind: 'dependency',
  runId: 'r1',
  requestId: 'd1',
  agentId: 'coder',
  dependency: { type, name, description: `needs ${name}`, required: true },
});

// The sidecar's answers to agentcanvas/checkDependencyValue, as its rules give them.
const checked: Array<[string, string]> = [];
const check = async (type: string, value: string): Promise<string | undefined> => {
  checked.push([type, value]);
  if (type === 'api_key' && !/^[A-Za-z0-9_-]+$/.test(value)) return 'Invalid API key format';
  if (type === 'api_key' && value.length < 8) return 'API key too short';
  return undefined;
};
const tick = () => new Promise((r) => setImmediate(r));

beforeEach(() => {
  mock.reset();
  checked.length = 0;
});

test('a question is a QuickPick: options, the default active, a countdown title; picking answers', async () => {
  mock.onShow = (i: FakeInput) => {
    i.selectedItems = [i.items[1]];
    i.accept.fire();
  };
  const a = await askUser(question, { secrets: secrets(), check });
  assert.deepEqual(a, { kind: 'answer', text: 'MySQL' });
  const qp = mock.shown[0];
  assert.equal(qp.type, 'quickPick');
  assert.equal(qp.placeholder, 'Which database?');
  assert.deepEqual(qp.items.map((i) => i.label), ['PostgreSQL', 'MySQL', 'SQLite', '$(edit) Other answer…']);
  assert.equal(qp.activeItems[0].label, 'SQLite');
  assert.match(qp.title ?? '', /^AgentCanvas: planner asks: choice question \((4:5\d|5:00) left\)$/);
});

test('escape leaves the question unanswered', async () => {
  const a = await askUser(question, { secrets: secrets(), check });
  assert.equal(a, undefined);
});

test('"Other answer…" and a question without options take free text', async () => {
  let n = 0;
  mock.onShow = (i: FakeInput) => {
    if (i.type === 'quickPick') {
      i.selectedItems = [i.items[3]];
      i.accept.fire();
    } else {
      n++;
      i.value = 'CockroachDB';
      i.accept.fire();
    }
  };
  assert.deepEqual(await askUser(question, { secrets: secrets(), check }), { kind: 'answer', text: 'CockroachDB' });
  assert.equal(n, 1);
  const free: PendingQuestion = { ...question, question: { question: 'Project name?', required: true } };
  assert.deepEqual(await askUser(free, { secrets: secrets(), check }), { kind: 'answer', text: 'CockroachDB' });
});

test('an API key is asked in a password box, checked by the sidecar when accepted, and can be rejected', async () => {
  mock.onShow = async (i: FakeInput) => {
    assert.equal(i.password, true);
    i.value = 'short';
    i.accept.fire(); // refused by the sidecar's check: the box stays
    await tick();
    assert.match(i.validationMessage ?? '', /too short/);
    i.value = 'sk-proj.abc:defgh12'; // the editor's own rule took this; the sidecar's does not
    i.accept.fire();
    await tick();
    assert.match(i.validationMessage ?? '', /Invalid API key format/);
    i.value = 'sk-abcdefghijklmnop';
    i.accept.fire();
  };
  assert.deepEqual(await askUser(dep('api_key', 'OPENAI_API_KEY'), { secrets: secrets(), check }), { kind: 'provide', value: 'sk-abcdefghijklmnop' });
  assert.deepEqual(checked, [['api_key', 'short'], ['api_key', 'sk-proj.abc:defgh12'], ['api_key', 'sk-abcdefghijklmnop']], 'every value went to the sidecar, only when accepted');
  mock.onShow = (i: FakeInput) => i.button.fire(i.buttons[0]);
  assert.deepEqual(await askUser(dep('env_variable', 'DATABASE_URL'), { secrets: secrets(), check }), { kind: 'reject', reason: 'rejected by the user' });
});

test('a stored value is offered again', async () => {
  const stored = { 'agentcanvas.dependency.api_key.OPENAI_API_KEY': 'sk-stored-value-123' };
  let offered: unknown[] = [];
  mock.quickPickAnswer = (items) => {
    offered = items.map((i) => i.label);
    return items[0];
  };
  assert.deepEqual(await askUser(dep('api_key', 'OPENAI_API_KEY'), { secrets: secrets(stored), check }), { kind: 'provide', value: 'sk-stored-value-123' });
  assert.deepEqual(offered, ['$(key) Use the stored value of OPENAI_API_KEY', '$(edit) Enter a new value…', '$(close) Reject']);
});

test('permission is a modal with Allow and Deny', async () => {
  mock.messageAnswer = 'Allow';
  assert.deepEqual(await askUser(dep('permission', 'file_system_write'), { secrets: secrets(), check }), { kind: 'provide', value: 'true' });
  assert.deepEqual(mock.messages[0].items, ['Allow', 'Deny']);
  assert.equal((mock.messages[0].options as { modal?: boolean }).modal, true);
  mock.messageAnswer = 'Deny';
  assert.deepEqual(await askUser(dep('permission', 'file_system_write'), { secrets: secrets(), check }), { kind: 'reject', reason: 'permission denied by the user' });
  mock.messageAnswer = undefined;
  assert.equal(await askUser(dep('permission', 'file_system_write'), { secrets: secrets(), check }), undefined, 'closing the modal answers nothing');
});

test('a package is a confirmation; a file comes from an open dialog, workspace-relative', async () => {
  mock.messageAnswer = 'Install';
  assert.deepEqual(await askUser(dep('package', '@supabase/supabase-js'), { secrets: secrets(), check }), { kind: 'provide', value: '@supabase/supabase-js' });
  mock.messageAnswer = 'Choose File…';
  mock.openDialogAnswer = [Uri.file('/ws/assets/logo.png')];
  assert.deepEqual(await askUser(dep('file', 'logo.png'), { secrets: secrets(), workspaceRoot: '/ws', check }), { kind: 'provide', value: 'assets/logo.png' });
  mock.openDialogAnswer = [Uri.file('/elsewhere/logo.png')];
  assert.deepEqual(await askUser(dep('file', 'logo.png'), { secrets: secrets(), workspaceRoot: '/ws', check }), { kind: 'provide', value: '/elsewhere/logo.png' });
});
