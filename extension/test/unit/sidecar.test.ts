// SidecarClient against the language-client stub: the crash cap inside the real error handler,
// no pop-up storm, and "not running" instead of exceptions.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, chmodSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { mock, settings } from './vscode-mock';
import { clients, CloseAction, ErrorAction, State } from './languageclient-stub';
import { SidecarClient, withSidecar, NOT_RUNNING, flowDocumentSelector, sidecarSettings } from '../../src/sidecar';
import { Log } from '../../src/log';
import { StatusItem } from '../../src/status';

const channel = () => ({ name: 'AgentCanvas', info() {}, warn() {}, error() {}, append() {}, appendLine() {}, replace() {}, clear() {}, show() {}, hide() {}, dispose() {} });

function fakeSidecar(): { bin: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'ac-side-'));
  const bin = path.join(dir, 'agentcanvas');
  writeFileSync(bin, '#!/bin/sh\necho "agentcanvas 9.9.9 test"\n');
  chmodSync(bin, 0o755);
  return { bin, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

beforeEach(() => {
  mock.reset();
  settings.clear();
  clients.length = 0;
});

async function started(bin: string) {
  settings.set('agentcanvas.sidecarPath', bin);
  const log = new Log(channel() as never);
  const status = new StatusItem();
  const sc = new SidecarClient({ extensionPath: '/nonexistent' } as never, log, status);
  await sc.start();
  return { sc, log, status, client: clients[0] };
}

test('starts `<binary> serve` found by the setting, with the flow document selector', async () => {
  const { bin, cleanup } = fakeSidecar();
  try {
    const { sc, client } = await started(bin);
    assert.deepEqual([client.serverOptions.command, client.serverOptions.args], [bin, ['serve']]);
    assert.deepEqual(client.clientOptions.documentSelector, flowDocumentSelector);
    assert.equal(sc.running, true);
    assert.equal(sc.version, '9.9.9');
    assert.ok(mock.commands.some((c) => c.command === 'setContext' && c.args[0] === 'agentcanvas.sidecarRunning' && c.args[1] === true));
  } finally {
    cleanup();
  }
});

const tick = () => new Promise((r) => setTimeout(r, 5));

test('crashes restart silently up to the cap, then one notification and no restart', async () => {
  const { bin, cleanup } = fakeSidecar();
  try {
    const { sc } = await started(bin);
    sc.restartDelayMs = () => 0;
    for (let crash = 1; crash <= 5; crash++) {
      const current = clients.at(-1)!;
      const r = await current.clientOptions.errorHandler.closed();
      // the client never restarts itself and never pops up its own message
      assert.deepEqual(r, { action: CloseAction.DoNotRestart, handled: true });
      current.setState(State.Stopped);
      for (let i = 0; i < 100 && clients.length === crash; i++) await tick();
      if (crash < 5) {
        assert.equal(clients.length, crash + 1, `crash ${crash} is followed by a new client`);
        assert.equal(sc.running, true);
      }
    }
    await tick();
    assert.equal(clients.length, 5, 'no sixth client after the fifth crash');
    assert.equal(sc.running, false);
    assert.equal(mock.messages.length, 1);
    assert.match(mock.messages[0].message, /crashed 5 times in the last 3 minutes/);
    assert.deepEqual(mock.messages[0].items, ['Restart', 'Show Log']);
  } finally {
    cleanup();
  }
});

test('a crash during start is counted once, though the client reports it twice', async () => {
  const { bin, cleanup } = fakeSidecar();
  try {
    const { sc } = await started(bin);
    sc.restartDelayMs = () => 60_000; // the restart must not happen within the test
    const c = clients[0];
    await c.clientOptions.errorHandler.closed();
    await c.clientOptions.errorHandler.closed();
    assert.equal((sc as unknown as { crashCap: { recent: number } }).crashCap.recent, 1);
    await sc.stop();
  } finally {
    cleanup();
  }
});

test('a stop on purpose is not a crash; connection errors are tolerated a few times', async () => {
  const { bin, cleanup } = fakeSidecar();
  try {
    const { sc, client } = await started(bin);
    const handler = client.clientOptions.errorHandler;
    assert.deepEqual([1, 2, 3, 4].map((n) => handler.error(new Error('x'), undefined, n).action), [ErrorAction.Continue, ErrorAction.Continue, ErrorAction.Continue, ErrorAction.Shutdown]);
    await sc.stop();
    assert.equal((await handler.closed()).action, CloseAction.DoNotRestart);
    assert.equal(mock.messages.length, 0);
    assert.equal(client.state, State.Stopped);
  } finally {
    cleanup();
  }
});

test('a command while the sidecar is down says so with Restart, instead of throwing', async () => {
  const { bin, cleanup } = fakeSidecar();
  try {
    const { sc, log } = await started(bin);
    await sc.stop();
    mock.messageAnswer = undefined;
    const r = await withSidecar(sc, log, () => sc.request('agentcanvas/listRuns', {}));
    assert.equal(r, undefined);
    assert.deepEqual(mock.messages.map((m) => [m.level, m.message, m.items]), [['warning', NOT_RUNNING, ['Restart', 'Show Log']]]);
  } finally {
    cleanup();
  }
});

test('a missing binary leaves the client down with one explanation', async () => {
  settings.set('agentcanvas.sidecarPath', '/no/such/agentcanvas');
  const sc = new SidecarClient({ extensionPath: '/nonexistent' } as never, new Log(channel() as never), new StatusItem());
  await sc.start();
  await new Promise((r) => setImmediate(r));
  assert.equal(sc.running, false);
  assert.equal(clients.length, 0);
  assert.equal(mock.messages.length, 1);
  assert.match(mock.messages[0].message, /agentcanvas\.sidecarPath.*\/no\/such\/agentcanvas.*does not exist/);
});

test('several listeners of one notification all hear it, across a restart (the client keeps one handler per method)', async () => {
  const { bin, cleanup } = fakeSidecar();
  try {
    const { sc } = await started(bin);
    const heard: string[] = [];
    sc.onNotification('agentcanvas/runEvent', (p) => heard.push(`runs:${(p as { event: string }).event}`));
    const d = sc.onNotification('agentcanvas/runEvent', (p) => heard.push(`canvas:${(p as { event: string }).event}`));
    clients[0].notificationHandlers.get('agentcanvas/runEvent')!({ event: 'step' });
    d.dispose();
    await sc.restart();
    clients.at(-1)!.notificationHandlers.get('agentcanvas/runEvent')!({ event: 'run_finished' });
    clients.at(-1)!.notificationHandlers.get('agentcanvas/status')!({ health: 'ok', runningFlows: ['team'] });
    assert.deepEqual(heard, ['runs:step', 'canvas:step', 'runs:run_finished']);
  } finally {
    cleanup();
  }
});

test('sends the agentcanvas settings as initializationOptions and syncs the section after', async () => {
  const { bin, cleanup } = fakeSidecar();
  try {
    settings.set('agentcanvas.allowedFolders', ['src', 'docs']);
    settings.set('agentcanvas.blockedFolders', ['build']);
    settings.set('agentcanvas.autoApply', 'whenClean');
    settings.set('agentcanvas.confinement', 'required');
    settings.set('agentcanvas.gateway', 'off');
    settings.set('agentcanvas.gatewayPricing', { openai: { 'gpt-5': { input: 1, output: 8 } } });
    const { client } = await started(bin);
    assert.deepEqual(client.clientOptions.initializationOptions, { allowedFolders: ['src', 'docs'], blockedFolders: ['build'], autoApply: 'whenClean', confinement: 'required', gateway: 'off', gatewayPricing: { openai: { 'gpt-5': { input: 1, output: 8 } } } });
    assert.equal(client.clientOptions.synchronize?.configurationSection, 'agentcanvas');
  } finally {
    cleanup();
  }
});

test("the settings' defaults and autoApply's values are package.json's, and the sidecar's", () => {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
  const props = pkg.contributes.configuration.properties;
  const defaults = sidecarSettings({ get: <T>(_k: string, d: T) => d });
  assert.deepEqual(defaults, { allowedFolders: props['agentcanvas.allowedFolders'].default, blockedFolders: props['agentcanvas.blockedFolders'].default, autoApply: props['agentcanvas.autoApply'].default, confinement: props['agentcanvas.confinement'].default, gateway: props['agentcanvas.gateway'].default, gatewayPricing: props['agentcanvas.gatewayPricing'].default });
  // sidecar/engine's AutoApplyValues, strictest first; the editor's default is the strictest.
  assert.deepEqual(props['agentcanvas.autoApply'].enum, ['off', 'whenClean', 'flow']);
  assert.equal(defaults.autoApply, 'off');
  // sidecar/confine's Modes, the default first.
  assert.deepEqual(props['agentcanvas.confinement'].enum, ['auto', 'required', 'off']);
  assert.equal(defaults.confinement, 'auto');
  // sidecar/engine's GatewayModes, the default first.
  assert.deepEqual(props['agentcanvas.gateway'].enum, ['auto', 'logins', 'off']);
  assert.equal(defaults.gateway, 'auto');
});
