// changes.patch parsing and hunk selection, with real git as the oracle: patches come from
// `git diff --no-index` (what `proposal create` runs) and selected patches must `git apply`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parsePatch, selectAll, selectedPatch, isWholeSelection, PatchParseError } from '../../src/patch';

const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';
const original = lines(60, (i) => `line ${i}`);
// Three edits far enough apart to make three hunks: replace line 5, insert two after 30, delete 55.
const edited = original
  .replace('line 5\n', 'line five\n')
  .replace('line 30\n', 'line 30\ninserted a\ninserted b\n')
  .replace('line 55\n', '');

/** A workspace with src/a.txt, and a sandbox whose work/ has the agent's edits, diffed like proposal create. */
function fixture(): { ws: string; patch: string; cleanup: () => void } {
  const ws = mkdtempSync(path.join(tmpdir(), 'ac-patch-'));
  const input = path.join(ws, 'sb', 'input');
  const work = path.join(ws, 'sb', 'work');
  for (const d of [path.join(ws, 'src'), path.join(input, 'src'), path.join(work, 'src')]) mkdirSync(d, { recursive: true });
  writeFileSync(path.join(ws, 'src', 'a.txt'), original);
  writeFileSync(path.join(input, 'src', 'a.txt'), original);
  writeFileSync(path.join(work, 'src', 'a.txt'), edited);
  writeFileSync(path.join(ws, 'src', 'gone.txt'), 'bye\n');
  writeFileSync(path.join(input, 'src', 'gone.txt'), 'bye\n');
  writeFileSync(path.join(work, 'src', 'new.txt'), 'hello\nworld\n');
  execFileSync('git', ['init', '-q'], { cwd: ws });
  const r = spawnSync('git', ['diff', '--no-index', '--no-color', 'sb/input', 'sb/work'], { cwd: ws, encoding: 'utf8' });
  const patch = r.stdout.replace(/a\/sb\/input\//g, 'a/').replace(/b\/sb\/work\//g, 'b/');
  rmSync(path.join(ws, 'sb'), { recursive: true });
  return { ws, patch, cleanup: () => rmSync(ws, { recursive: true, force: true }) };
}

function gitApply(ws: string, patch: string): void {
  const f = path.join(ws, '..', path.basename(ws) + '.patch');
  writeFileSync(f, patch);
  try {
    execFileSync('git', ['apply', '--check', f], { cwd: ws, stdio: 'pipe' });
    execFileSync('git', ['apply', f], { cwd: ws, stdio: 'pipe' });
  } finally {
    rmSync(f, { force: true });
  }
}

test('files, statuses, hunks and +/- counts of a git patch', () => {
  const { patch, cleanup } = fixture();
  try {
    const files = parsePatch(patch);
    const byPath = Object.fromEntries(files.map((f) => [f.path, f]));
    assert.deepEqual(Object.keys(byPath).sort(), ['src/a.txt', 'src/gone.txt', 'src/new.txt']);
    assert.equal(byPath['src/a.txt'].status, 'modified');
    assert.equal(byPath['src/a.txt'].hunks.length, 3);
    assert.deepEqual([byPath['src/a.txt'].added, byPath['src/a.txt'].removed], [3, 2]);
    assert.equal(byPath['src/gone.txt'].status, 'deleted');
    assert.deepEqual([byPath['src/gone.txt'].added, byPath['src/gone.txt'].removed], [0, 1]);
    assert.equal(byPath['src/new.txt'].status, 'added');
    assert.deepEqual([byPath['src/new.txt'].added, byPath['src/new.txt'].removed], [2, 0]);
  } finally {
    cleanup();
  }
});

test('everything selected reproduces a patch git applies to the same result as the original', () => {
  const { ws, patch, cleanup } = fixture();
  try {
    const files = parsePatch(patch);
    const sel = selectAll(files);
    assert.ok(isWholeSelection(files, sel));
    gitApply(ws, selectedPatch(files, sel));
    assert.equal(readFileSync(path.join(ws, 'src', 'a.txt'), 'utf8'), edited);
    assert.equal(readFileSync(path.join(ws, 'src', 'new.txt'), 'utf8'), 'hello\nworld\n');
    assert.throws(() => readFileSync(path.join(ws, 'src', 'gone.txt')));
  } finally {
    cleanup();
  }
});

// Every subset of the three hunks of a.txt: the renumbered patch applies exactly (git apply
// refuses nothing) and the file has exactly the kept edits.
for (let mask = 0; mask < 8; mask++) {
  const keep = [0, 1, 2].map((i) => (mask & (1 << i)) !== 0);
  test(`hunks of a.txt kept: ${keep.map((k) => (k ? 'y' : 'n')).join('')}`, () => {
    const { ws, patch, cleanup } = fixture();
    try {
      const files = parsePatch(patch);
      const sel = new Map([['src/a.txt', keep]]);
      const out = selectedPatch(files, sel);
      let expected = original;
      if (keep[0]) expected = expected.replace('line 5\n', 'line five\n');
      if (keep[1]) expected = expected.replace('line 30\n', 'line 30\ninserted a\ninserted b\n');
      if (keep[2]) expected = expected.replace('line 55\n', '');
      if (mask === 0) assert.equal(out, '');
      else gitApply(ws, out);
      assert.equal(readFileSync(path.join(ws, 'src', 'a.txt'), 'utf8'), expected);
      // files not in the selection are untouched
      assert.equal(readFileSync(path.join(ws, 'src', 'gone.txt'), 'utf8'), 'bye\n');
    } finally {
      cleanup();
    }
  });
}

test('a new file is taken whole or not at all', () => {
  const patch = 'diff --git a/n.txt b/n.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n';
  const files = parsePatch(patch);
  assert.equal(selectedPatch(files, new Map([['n.txt', [true]]])), patch);
  assert.equal(selectedPatch(files, new Map([['n.txt', [false]]])), '');
});

test('binary files and no-newline markers', () => {
  const patch = [
    'diff --git a/img.png b/img.png',
    'index 1111111..2222222 100644',
    'Binary files a/img.png and b/img.png differ',
    'diff --git a/t.txt b/t.txt',
    'index 3333333..4444444 100644',
    '--- a/t.txt',
    '+++ b/t.txt',
    '@@ -1 +1 @@',
    '-old',
    '\\ No newline at end of file',
    '+new',
    '\\ No newline at end of file',
    '',
  ].join('\n');
  const files = parsePatch(patch);
  assert.equal(files[0].binary, true);
  assert.equal(files[0].hunks.length, 0);
  assert.deepEqual([files[1].added, files[1].removed], [1, 1]);
  assert.equal(selectedPatch(files, selectAll(files)), patch);
});

test('malformed patches are refused with the line', () => {
  assert.throws(() => parsePatch('hello\n'), (e: unknown) => e instanceof PatchParseError && /changes.patch:1: text before/.test(e.message));
  assert.throws(() => parsePatch('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n'), /changes.patch:7: hunk is shorter/);
  assert.throws(() => parsePatch('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n'), /hunk is longer|unexpected line after a hunk/);
});

test('names git quotes or leaves with spaces read as the names they are, and a selection of them still applies', () => {
  const ws = mkdtempSync(path.join(tmpdir(), 'ac-patch-names-'));
  try {
    const names = ['my file.txt', 'café.md', '設計.md', 'a "quoted" name.txt', 'tab\there.txt', 'back\\slash.txt'];
    execFileSync('git', ['init', '-q'], { cwd: ws });
    for (const n of names) writeFileSync(path.join(ws, n), 'one\n');
    execFileSync('git', ['add', '.'], { cwd: ws });
    execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'x'], { cwd: ws });
    for (const n of names) writeFileSync(path.join(ws, n), 'two\n');
    writeFileSync(path.join(ws, 'new één.txt'), 'new\n');
    execFileSync('git', ['add', '-N', 'new één.txt'], { cwd: ws });
    const patch = execFileSync('git', ['diff', '--no-color'], { cwd: ws, encoding: 'utf8' });
    const files = parsePatch(patch);
    assert.deepEqual(files.map((f) => f.path).sort(), [...names, 'new één.txt'].sort());
    assert.ok(files.every((f) => f.oldPath === f.path));
    assert.equal(files.find((f) => f.path === 'new één.txt')!.status, 'added');
    execFileSync('git', ['checkout', '--', ...names], { cwd: ws });
    rmSync(path.join(ws, 'new één.txt'));
    execFileSync('git', ['rm', '-q', '--cached', 'new één.txt'], { cwd: ws });
    gitApply(ws, selectedPatch(files, selectAll(files)));
    for (const n of names) assert.equal(readFileSync(path.join(ws, n), 'utf8'), 'two\n', n);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
