// Skills: SKILL.md checks, zip export/import against the real zip/unzip tools, import plans.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { checkSkill, newSkillText, parseSkill, renameSkill } from '../../src/skills/skillFile';
import { readZip, writeZip, ZipError } from '../../src/skills/zip';
import { describePlan, filesToWrite, groupSkills, planImport } from '../../src/skills/importPlan';

test('SKILL.md front matter: flags default to user-invocable and model-invocable', () => {
  const m = parseSkill('---\nname: release-notes\ndescription: "Write release notes: from git log"\n---\n# body\n');
  assert.equal(m.name, 'release-notes');
  assert.equal(m.description, 'Write release notes: from git log');
  assert.equal(m.userInvocable, true);
  assert.equal(m.disableModelInvocation, false);
  const manual = parseSkill("---\nname: rotate-keys\ndescription: >\n  Rotates the API keys,\n  then restarts.\nuser-invocable: false\ndisable-model-invocation: true\n---\n");
  assert.equal(manual.description, 'Rotates the API keys, then restarts.');
  assert.equal(manual.userInvocable, false);
  assert.equal(manual.disableModelInvocation, true);
});

test('SKILL.md checks: name and description present, folder name equal to name', () => {
  assert.deepEqual(checkSkill(newSkillText('deploy', 'Deploys'), 'deploy'), []);
  assert.deepEqual(checkSkill('---\nname: deploy\ndescription: Deploys\n---\n', 'deploy-2'), [
    { line: 2, message: 'name "deploy" must equal the folder name "deploy-2".', severity: 'error' },
  ]);
  assert.deepEqual(checkSkill('---\nname: deploy\n---\n', 'deploy').map((p) => p.message), ['The front matter has no description (agents choose skills by it).']);
  assert.deepEqual(checkSkill('---\ndescription: x\n---\n', 'deploy').map((p) => p.message), ['The front matter has no name.']);
  assert.match(checkSkill('# no front matter\n', 'x')[0].message, /must start with front matter/);
  assert.match(checkSkill('---\nname: Bad Name\ndescription: d\n---\n', 'Bad Name')[0].message, /lowercase/);
  assert.equal(parseSkill(renameSkill(newSkillText('a', 'd'), 'a-2')).name, 'a-2');
});

test('zips written here are read by unzip; zips made by zip are read here', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ac-zip-'));
  try {
    const big = Buffer.from('x'.repeat(10_000) + 'é\n');
    const entries = [
      { name: 'deploy/SKILL.md', data: Buffer.from(newSkillText('deploy', 'Deploys')) },
      { name: 'deploy/scripts/run.sh', data: big },
      { name: 'deploy/empty.txt', data: Buffer.alloc(0) },
      { name: 'deploy/refs/naïve.md', data: Buffer.from('non-ASCII name') },
    ];
    writeFileSync(path.join(dir, 'out.zip'), await writeZip(entries));
    execFileSync('unzip', ['-q', '-t', 'out.zip'], { cwd: dir }); // integrity check: CRCs and sizes
    execFileSync('unzip', ['-q', 'out.zip', '-d', 'x'], { cwd: dir });
    assert.deepEqual(readFileSync(path.join(dir, 'x/deploy/scripts/run.sh')), big);
    assert.equal(readFileSync(path.join(dir, 'x/deploy/refs/naïve.md'), 'utf8'), 'non-ASCII name');
    assert.equal(statSync(path.join(dir, 'x/deploy/empty.txt')).size, 0);
    // and read back here: the same names and bytes
    const back = await readZip(readFileSync(path.join(dir, 'out.zip')));
    assert.deepEqual(back.map((e) => [e.name, e.data.toString('base64')]), entries.map((e) => [e.name, e.data.toString('base64')]));
    mkdirSync(path.join(dir, 'src/lint/refs'), { recursive: true });
    writeFileSync(path.join(dir, 'src/lint/SKILL.md'), newSkillText('lint', 'Lints'));
    writeFileSync(path.join(dir, 'src/lint/refs/rules.md'), 'rule '.repeat(500));
    execFileSync('zip', ['-qr', '../in.zip', 'lint'], { cwd: path.join(dir, 'src') }); // folder entries too
    const read = await readZip(readFileSync(path.join(dir, 'in.zip')));
    assert.deepEqual(read.map((e) => e.name).sort(), ['lint/SKILL.md', 'lint/refs/rules.md']);
    assert.equal(read.find((e) => e.name === 'lint/refs/rules.md')!.data.toString(), 'rule '.repeat(500));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * rename replaces an entry name, byte for byte (same length), in a zip's local and central
 * headers: how a hostile zip names an entry that no writer here would.
 */
function rename(zip: Buffer, from: string, to: string): Buffer {
  const a = Buffer.from(from);
  const b = Buffer.from(to);
  assert.equal(a.length, b.length);
  const out = Buffer.from(zip);
  let n = 0;
  for (let i = out.indexOf(a); i >= 0; i = out.indexOf(a, i + 1), n++) b.copy(out, i);
  assert.equal(n, 2, 'the name is in the local and the central header');
  return out;
}

const zipOf = (...names: string[]) => writeZip(names.map((name, i) => ({ name, data: Buffer.from(`entry ${i}`) })));

test('zip-slip: entries that would leave the target folder are refused, naming the entry', async () => {
  for (const [from, to] of [
    ['xx/outside.txt', '../outside.txt'],
    ['a/bb/cc/x.txt', 'a/../../x.txt'],
    ['_etc/passwd', '/etc/passwd'],
    ['C_/Windows/x', 'C:/Windows/x'],
    ['xx_evil.txt', '..\\evil.txt'],
  ]) {
    await assert.rejects(readZip(rename(await zipOf(from, 'ok/SKILL.md'), from, to)), (e: unknown) => e instanceof ZipError && e.message.includes('unsafe path') && e.message.includes(to.replace(/\\/g, '/').split('/').pop()!), to);
  }
  // and nothing here writes such a name
  await assert.rejects(async () => writeZip([{ name: '../x', data: Buffer.from('x') }]), /unsafe path/);
});

test('symbolic links in a zip are refused (zip -y stores them as links)', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ac-zip-'));
  try {
    mkdirSync(path.join(dir, 'skill'));
    writeFileSync(path.join(dir, 'skill/SKILL.md'), newSkillText('skill', 'A skill'));
    symlinkSync('/etc/passwd', path.join(dir, 'skill/passwd'));
    execFileSync('zip', ['-qry', 'links.zip', 'skill'], { cwd: dir });
    await assert.rejects(readZip(readFileSync(path.join(dir, 'links.zip'))), (e: unknown) => e instanceof ZipError && /skill\/passwd: symbolic links are not imported/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('zips with bad checksums, duplicate entries, too much data or no zip at all are refused', async () => {
  const ok = await writeZip([{ name: 'a/SKILL.md', data: Buffer.from('hello '.repeat(50)) }]);
  const corrupt = Buffer.from(ok);
  corrupt[30 + 'a/SKILL.md'.length + 4] ^= 0xff; // inside the deflated body (after the 30-byte local header and the name)
  await assert.rejects(readZip(corrupt), (e: unknown) => e instanceof ZipError && /checksum|invalid|incorrect|unreadable/.test(e.message));
  await assert.rejects(readZip(Buffer.from('not a zip at all, just text')), /not a zip/);
  await assert.rejects(readZip(rename(await zipOf('a/x.md', 'a/y.md'), 'a/y.md', 'a/x.md')), /a\/x\.md: the zip holds this file twice/);
  await assert.rejects(readZip(ok, 100), /expands to more than 100 bytes/);
});

test('import plans: new, keep both (renamed everywhere), replace, skip; shown before writing', () => {
  const files = [
    { name: 'deploy/SKILL.md', data: Buffer.from(newSkillText('deploy', 'Deploys')) },
    { name: 'deploy/run.sh', data: Buffer.from('echo') },
    { name: 'lint/SKILL.md', data: Buffer.from(newSkillText('lint', 'Lints')) },
    { name: 'notes.txt', data: Buffer.from('ignored') },
    { name: 'docs/readme.md', data: Buffer.from('not a skill: no SKILL.md') },
  ];
  const incoming = groupSkills(files, 'bundle');
  assert.deepEqual(incoming.map((s) => s.name), ['deploy', 'lint']);
  const keep = planImport(incoming, ['deploy', 'deploy-2', 'lint'], (n) => (n === 'deploy' ? 'keepBoth' : 'skip'));
  assert.deepEqual(describePlan(keep), ['add deploy as deploy-3 (keeping the existing one)', 'skip lint (already present)']);
  const written = filesToWrite(keep[0]);
  assert.equal(parseSkill(written.find((f) => f.name === 'SKILL.md')!.data.toString()).name, 'deploy-3');
  assert.deepEqual(filesToWrite(keep[1]), []);
  const replace = planImport(incoming, ['lint'], () => 'replace');
  assert.deepEqual(describePlan(replace), ['add deploy', 'replace lint']);
  // a folder that is itself a skill
  const single = groupSkills([{ name: 'SKILL.md', data: Buffer.from(newSkillText('solo', 'x')) }], 'whatever');
  assert.deepEqual(single.map((s) => s.name), ['solo']);
  assert.throws(() => planImport([{ name: 'Bad Name', files: [] }], [], () => 'skip'), /lowercase/);
});
