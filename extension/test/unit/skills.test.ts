// Skills: SKILL.md checks, zip export/import against the real zip/unzip tools, import plans.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { checkSkill, newSkillText, parseSkill, renameSkill } from '../../src/skills/skillFile';
import { crc32, readZip, writeZip, ZipError } from '../../src/skills/zip';
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

test('zips written here are read by unzip; zips made by zip are read here', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ac-zip-'));
  try {
    const big = Buffer.from('x'.repeat(10_000) + 'é\n');
    const entries = [
      { name: 'deploy/SKILL.md', data: Buffer.from(newSkillText('deploy', 'Deploys')) },
      { name: 'deploy/scripts/run.sh', data: big },
      { name: 'deploy/empty.txt', data: Buffer.alloc(0) },
    ];
    writeFileSync(path.join(dir, 'out.zip'), writeZip(entries));
    execFileSync('unzip', ['-q', '-t', 'out.zip'], { cwd: dir }); // integrity check: CRCs and sizes
    execFileSync('unzip', ['-q', 'out.zip', '-d', 'x'], { cwd: dir });
    assert.deepEqual(readFileSync(path.join(dir, 'x/deploy/scripts/run.sh')), big);
    mkdirSync(path.join(dir, 'src/lint/refs'), { recursive: true });
    writeFileSync(path.join(dir, 'src/lint/SKILL.md'), newSkillText('lint', 'Lints'));
    writeFileSync(path.join(dir, 'src/lint/refs/rules.md'), 'rule '.repeat(500));
    execFileSync('zip', ['-qr', '../in.zip', 'lint'], { cwd: path.join(dir, 'src') });
    const read = readZip(readFileSync(path.join(dir, 'in.zip')));
    assert.deepEqual(read.map((e) => e.name).sort(), ['lint/SKILL.md', 'lint/refs/rules.md']);
    assert.equal(read.find((e) => e.name === 'lint/refs/rules.md')!.data.toString(), 'rule '.repeat(500));
    assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('zips with escaping paths or bad checksums are refused', () => {
  const evil = writeZip([{ name: '../outside.txt', data: Buffer.from('x') }]);
  assert.throws(() => readZip(evil), (e: unknown) => e instanceof ZipError && /unsafe path/.test(e.message));
  assert.throws(() => readZip(writeZip([{ name: '/etc/passwd', data: Buffer.from('x') }])), /unsafe path/);
  const ok = writeZip([{ name: 'a/SKILL.md', data: Buffer.from('hello hello hello') }]);
  const corrupt = Buffer.from(ok);
  corrupt[30 + 'a/SKILL.md'.length + 2] ^= 0xff; // inside the stored body (after the 30-byte local header and the name)
  assert.throws(() => readZip(corrupt), /checksum|invalid|incorrect/);
  assert.throws(() => readZip(Buffer.from('not a zip at all, just text')), /not a zip/);
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
