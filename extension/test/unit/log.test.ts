import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Log } from '../../src/log';

function fakeChannel() {
  const lines: string[] = [];
  const ch = {
    name: 'AgentCanvas',
    info: (m: string) => lines.push(`info ${m}`),
    warn: (m: string) => lines.push(`warn ${m}`),
    error: (m: string | Error) => lines.push(`error ${m instanceof Error ? m.message : m}`),
    trace: (m: string) => lines.push(`trace ${m}`),
    append: (m: string) => lines.push(m),
    appendLine: (m: string) => lines.push(m),
    replace: (m: string) => lines.push(m),
    clear: () => {},
    show: () => {},
    hide: () => {},
    dispose: () => {},
  };
  return { ch, lines };
}

test('secret values never reach the output channel, whichever path logs them', () => {
  const { ch, lines } = fakeChannel();
  const log = new Log(ch as never);
  log.addSecret('sk-live-0123456789');
  log.addSecret('abc'); // too short to redact safely: ignored
  log.info('provided OPENAI_API_KEY=sk-live-0123456789');
  log.error('failed', new Error('bad key sk-live-0123456789'));
  const trace = log.redactingChannel();
  trace.appendLine('[Trace] Sending request agentcanvas/provideDependency. Params: {"value":"sk-live-0123456789"}');
  assert.deepEqual(lines, [
    'info provided OPENAI_API_KEY=***',
    'error failed: bad key ***',
    '[Trace] Sending request agentcanvas/provideDependency. Params: {"value":"***"}',
  ]);
  assert.ok(lines.every((l) => !l.includes('sk-live')));
});

test('the language client\'s log methods are redacted too', () => {
  const { ch, lines } = fakeChannel();
  const log = new Log(ch as never);
  log.addSecret('postgres://u:hunter2@db/x');
  const c = log.redactingChannel();
  c.trace('params {"value":"postgres://u:hunter2@db/x"}');
  c.error(new Error('rejected postgres://u:hunter2@db/x'));
  assert.deepEqual(lines, ['trace params {"value":"***"}', 'error rejected ***']);
});
