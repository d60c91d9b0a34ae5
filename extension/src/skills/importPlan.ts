// Importing skills: what will happen to each incoming skill, decided and shown before anything
// is written (docs/design.md: keep both, replace, skip). Pure; no vscode.
import { parseSkill, renameSkill, validateSkillName } from './skillFile';
import { safeEntryName, type ZipEntry } from './zip';

export type Resolution = 'keepBoth' | 'replace' | 'skip';

export interface IncomingSkill {
  /** The skill's folder name in the source (and its front-matter name, when valid). */
  name: string;
  files: ZipEntry[]; // paths relative to the skill folder
}

export interface PlanItem {
  incoming: IncomingSkill;
  conflict: boolean;
  resolution: Resolution | 'new';
  /** The folder it will be written to (differs from incoming.name for keepBoth). */
  target: string;
}

/**
 * Groups files (relative to the import root) into skills: each top-level folder holding a
 * SKILL.md is one skill; a root that is itself a skill (SKILL.md at the top) is one skill named
 * after its front matter or rootName. Files outside any skill are ignored.
 */
export function groupSkills(files: ZipEntry[], rootName: string): IncomingSkill[] {
  const rootSkill = files.find((f) => f.name === 'SKILL.md');
  if (rootSkill) {
    const name = parseSkill(rootSkill.data.toString('utf8')).name ?? rootName;
    return [{ name, files }];
  }
  const byFolder = new Map<string, ZipEntry[]>();
  for (const f of files) {
    const i = f.name.indexOf('/');
    if (i < 0) continue;
    const folder = f.name.slice(0, i);
    const rest = f.name.slice(i + 1);
    if (!byFolder.has(folder)) byFolder.set(folder, []);
    byFolder.get(folder)!.push({ name: rest, data: f.data });
  }
  return [...byFolder.entries()].filter(([, fs]) => fs.some((f) => f.name === 'SKILL.md')).map(([name, fs]) => ({ name, files: fs }));
}

export function freeName(name: string, taken: Set<string>): string {
  for (let i = 2; ; i++) {
    const n = `${name}-${i}`;
    if (!taken.has(n)) return n;
  }
}

/** The plan for the given incoming skills against the existing skill folders. */
export function planImport(incoming: IncomingSkill[], existing: string[], choose: (name: string) => Resolution): PlanItem[] {
  const taken = new Set(existing);
  const out: PlanItem[] = [];
  for (const inc of incoming) {
    if (validateSkillName(inc.name)) throw new Error(`skill "${inc.name}": ${validateSkillName(inc.name)}`);
    for (const f of inc.files) if (!safeEntryName(f.name)) throw new Error(`skill "${inc.name}": unsafe file name ${JSON.stringify(f.name)}`);
    if (!taken.has(inc.name)) {
      out.push({ incoming: inc, conflict: false, resolution: 'new', target: inc.name });
      taken.add(inc.name);
      continue;
    }
    const r = choose(inc.name);
    const target = r === 'keepBoth' ? freeName(inc.name, taken) : inc.name;
    taken.add(target);
    out.push({ incoming: inc, conflict: true, resolution: r, target });
  }
  return out;
}

/** One line per item, for the confirmation shown before writing. */
export function describePlan(plan: PlanItem[]): string[] {
  return plan.map((p) => {
    switch (p.resolution) {
      case 'new':
        return `add ${p.target}`;
      case 'replace':
        return `replace ${p.target}`;
      case 'skip':
        return `skip ${p.incoming.name} (already present)`;
      case 'keepBoth':
        return `add ${p.incoming.name} as ${p.target} (keeping the existing one)`;
    }
  });
}

/** The files to write for one plan item; keepBoth renames the skill in its SKILL.md too. */
export function filesToWrite(item: PlanItem): ZipEntry[] {
  if (item.resolution === 'skip') return [];
  return item.incoming.files.map((f) =>
    f.name === 'SKILL.md' && item.target !== item.incoming.name ? { name: f.name, data: Buffer.from(renameSkill(f.data.toString('utf8'), item.target), 'utf8') } : f,
  );
}
