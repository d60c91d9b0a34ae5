import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandPath, findSidecar, parseVersion, SidecarNotFoundError, type Host } from '../../src/bootstrap';

/** A host whose file system is a set of paths, each with the stdout its `version` prints. */
function host(files: Record<string, string | Error>, over: Partial<Host> = {}): Host & { ran: string[] } {
  const ran: string[] = [];
  return {
    platform: 'linux',
    arch: 'x64',
    extensionPath: '/ext',
    setting: undefined,
    env: { PATH: '/usr/local/bin:/usr/bin' },
    homeDir: '/home/u',
    workspaceFolder: '/ws',
    isFile: async (p) => p in files,
    runVersion: async (p) => {
      ran.push(p);
      const v = files[p];
      if (v instanceof Error) throw v;
      return v;
    },
    ran,
    ...over,
  };
}

const ok = (v: string) => `agentcanvas ${v} linux/amd64 go1.26.5\n`;

test('the setting wins over env, bundled and PATH', async () => {
  const h = host(
    { '/opt/ac': ok('1.0.0'), '/env/ac': ok('2'), '/ext/bin/linux-x64/agentcanvas': ok('3'), '/usr/bin/agentcanvas': ok('4') },
    { setting: '/opt/ac', env: { AGENTCANVAS_SIDECAR: '/env/ac', PATH: '/usr/bin' } },
  );
  assert.deepEqual(await findSidecar(h), { path: '/opt/ac', source: 'setting', version: '1.0.0' });
  assert.deepEqual(h.ran, ['/opt/ac']);
});

test('env comes second, then bundled, then PATH', async () => {
  const all = { '/env/ac': ok('2'), '/ext/bin/linux-x64/agentcanvas': ok('3'), '/usr/bin/agentcanvas': ok('4') };
  assert.equal((await findSidecar(host(all, { env: { AGENTCANVAS_SIDECAR: '/env/ac', PATH: '/usr/bin' } }))).source, 'env');
  assert.equal((await findSidecar(host(all, { env: { PATH: '/usr/bin' } }))).source, 'bundled');
  const onlyPath = host({ '/usr/bin/agentcanvas': ok('4') }, { env: { PATH: '/nope:/usr/bin' } });
  assert.deepEqual(await findSidecar(onlyPath), { path: '/usr/bin/agentcanvas', source: 'path', version: '4' });
});

test('the bundled binary is per platform and arch, with .exe on Windows', async () => {
  const h = host({ 'C:\\ext\\bin\\win32-x64\\agentcanvas.exe': ok('5') }, { platform: 'win32', extensionPath: 'C:\\ext', env: { Path: '' } });
  assert.deepEqual(await findSidecar(h), { path: 'C:\\ext\\bin\\win32-x64\\agentcanvas.exe', source: 'bundled', version: '5' });
  const arm = host({ '/ext/bin/darwin-arm64/agentcanvas': ok('6') }, { platform: 'darwin', arch: 'arm64' });
  assert.equal((await findSidecar(arm)).version, '6');
});

test('a broken explicit setting is an error naming it, not a silent fallback', async () => {
  const h = host({ '/usr/bin/agentcanvas': ok('4') }, { setting: '/missing/ac', env: { PATH: '/usr/bin' } });
  await assert.rejects(findSidecar(h), (e: unknown) => e instanceof SidecarNotFoundError && /agentcanvas\.sidecarPath.*\/missing\/ac.*does not exist/.test(e.message));
  const crashing = host({ '/env/ac': new Error('exec format error'), '/usr/bin/agentcanvas': ok('4') }, { env: { AGENTCANVAS_SIDECAR: '/env/ac', PATH: '/usr/bin' } });
  await assert.rejects(findSidecar(crashing), /AGENTCANVAS_SIDECAR names \/env\/ac, which failed to run `version`: exec format error/);
});

test('a bundled binary that fails its version check falls through to PATH', async () => {
  const h = host({ '/ext/bin/linux-x64/agentcanvas': new Error('killed'), '/usr/bin/agentcanvas': ok('4') });
  const s = await findSidecar(h);
  assert.equal(s.source, 'path');
  assert.deepEqual(h.ran, ['/ext/bin/linux-x64/agentcanvas', '/usr/bin/agentcanvas']);
});

test('a PATH entry that is some other program named agentcanvas is skipped', async () => {
  const h = host({ '/usr/local/bin/agentcanvas': 'usage: something else\n', '/usr/bin/agentcanvas': ok('4') });
  assert.equal((await findSidecar(h)).path, '/usr/bin/agentcanvas');
});

test('nothing found: the error lists every place tried', async () => {
  const h = host({});
  await assert.rejects(findSidecar(h), (e: unknown) => {
    assert.ok(e instanceof SidecarNotFoundError);
    assert.deepEqual(e.tried, [
      'bundled: /ext/bin/linux-x64/agentcanvas (not found)',
      'path: /usr/local/bin/agentcanvas (not found)',
      'path: /usr/bin/agentcanvas (not found)',
    ]);
    return true;
  });
});

test('paths: ~, ${workspaceFolder} and relative settings', () => {
  const h = { homeDir: '/home/u', workspaceFolder: '/ws', platform: 'linux' as const };
  assert.equal(expandPath('~/bin/agentcanvas', h), '/home/u/bin/agentcanvas');
  assert.equal(expandPath('${workspaceFolder}/bin/agentcanvas', h), '/ws/bin/agentcanvas');
  assert.equal(expandPath('bin/agentcanvas', h), '/ws/bin/agentcanvas');
  assert.equal(expandPath('/abs/agentcanvas', h), '/abs/agentcanvas');
});

test('version lines', () => {
  assert.equal(parseVersion('agentcanvas 0.1.0-dev linux/amd64 go1.26.5\n'), '0.1.0-dev');
  assert.equal(parseVersion('\nagentcanvas v1.2.3\n'), 'v1.2.3');
  assert.equal(parseVersion('Python 3.11'), undefined);
  assert.equal(parseVersion(''), undefined);
});
