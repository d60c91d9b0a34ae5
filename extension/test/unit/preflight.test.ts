import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { doctorText, problemLines, runDoctor } from '../../src/commands/preflight';

test('preflight: doctor\'s report is read even on exit 1, problems come with their fix; the flow or the picked backend is checked', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'preflight-'));
  const bin = path.join(dir, 'agentcanvas');
  const report = { ready: false, checks: [{ name: 'git', status: 'ok', detail: 'git 2.39' }, { name: 'claude', status: 'fail', detail: 'not found on PATH', fix: 'npm install -g @anthropic-ai/claude-code@2.1.330', backend: 'claude' }] };
  writeFileSync(bin, `#!/bin/sh\necho "$@" > "${dir}/args"\ncat <<'J'\n${JSON.stringify(report)}\nJ\nexit 1\n`, { mode: 0o755 });
  const r = await runDoctor(bin, '/ws/flows/x.yaml', 'auto');
  assert.equal(r?.ready, false);
  assert.equal(readFileSync(path.join(dir, 'args'), 'utf8').trim(), 'doctor --json /ws/flows/x.yaml');
  assert.deepEqual(problemLines(r!), ['claude: not found on PATH — fix: npm install -g @anthropic-ai/claude-code@2.1.330']);
  await runDoctor(bin, '/ws/flows/x.yaml', 'codex');
  assert.equal(readFileSync(path.join(dir, 'args'), 'utf8').trim(), 'doctor --json --backend codex');
  writeFileSync(bin, '#!/bin/sh\necho not json\n', { mode: 0o755 });
  assert.equal(await runDoctor(bin, 'x', undefined), undefined, 'a check that cannot run does not block the run');
});

test('Check Agent CLIs: the doctor report as it prints it, or why it could not run', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'doctor-'));
  const bin = path.join(dir, 'agentcanvas');
  writeFileSync(bin, '#!/bin/sh\n[ "$1" = doctor ] && echo "✗ claude  not found on PATH" && echo "  fix: npm install -g @anthropic-ai/claude-code@2.1.330"\nexit 1\n', { mode: 0o755 });
  assert.match(await doctorText(bin), /fix: npm install -g @anthropic-ai\/claude-code@2\.1\.330/);
  assert.match(await doctorText(path.join(dir, 'missing')), /could not run/);
});
