// Unit tests: each extension/test/unit/*.test.ts is bundled by esbuild with `vscode` replaced by
// the mock in vscode-mock.ts (and the language client by languageclient-stub.ts), then all run
// under node's test runner.
import * as esbuild from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const dir = 'extension/test/unit';
const outdir = 'out/test/unit';
const files = readdirSync(dir).filter((f) => f.endsWith('.test.ts'));
rmSync(outdir, { recursive: true, force: true });
await esbuild.build({
  entryPoints: files.map((f) => path.join(dir, f)),
  bundle: true,
  outdir,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'inline',
  alias: { vscode: path.resolve(dir, 'vscode-mock.ts'), 'vscode-languageclient/node': path.resolve(dir, 'languageclient-stub.ts') },
  external: ['node:*'],
  logLevel: 'warning',
});
const args = ['--test', '--enable-source-maps', ...files.map((f) => path.join(outdir, f.replace(/\.ts$/, '.js')))];
const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(r.status ?? 1);
