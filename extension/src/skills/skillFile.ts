// SKILL.md: YAML front matter (name, description, user-invocable, disable-model-invocation) and
// a markdown body. Checked on save (docs/design.md): name and description present, folder name equal
// to name. Pure; no vscode.

export interface SkillMeta {
  name?: string;
  description?: string;
  /** Shown in the user's menu (docs/design.md: visibility only). Default true. */
  userInvocable: boolean;
  /** The hard gate: agents may not invoke the skill on their own. Default false. */
  disableModelInvocation: boolean;
  /** Line (1-based) of each key, for diagnostics. */
  lines: Record<string, number>;
  /** Line where the front matter ends (or 1 when there is none). */
  endLine: number;
  hasFrontMatter: boolean;
}

export interface SkillProblem {
  line: number; // 1-based
  message: string;
  severity: 'error' | 'warning';
}

function unquote(v: string): string {
  const t = v.trim();
  if ((t.startsWith('"') && t.endsWith('"') && t.length >= 2) || (t.startsWith("'") && t.endsWith("'") && t.length >= 2)) {
    return t.startsWith('"') ? (JSON.parse(t.replace(/\\'/g, "'")) as string) : t.slice(1, -1).replace(/''/g, "'");
  }
  return t.replace(/\s+#.*$/, '');
}

function bool(v: string | undefined, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  const t = v.toLowerCase();
  if (t === 'true' || t === 'yes') return true;
  if (t === 'false' || t === 'no') return false;
  return dflt;
}

export function parseSkill(text: string): SkillMeta {
  const lines = text.split(/\r?\n/);
  const meta: SkillMeta = { userInvocable: true, disableModelInvocation: false, lines: {}, endLine: 1, hasFrontMatter: false };
  if (lines[0]?.trim() !== '---') return meta;
  const raw: Record<string, string> = {};
  let i = 1;
  for (; i < lines.length; i++) {
    const l = lines[i];
    if (l.trim() === '---') {
      meta.hasFrontMatter = true;
      break;
    }
    const m = /^([A-Za-z][\w-]*)\s*:\s*(.*)$/.exec(l);
    if (m) {
      let value = m[2];
      // folded/literal block scalars: the indented lines that follow
      if (value === '>' || value === '|' || value === '>-' || value === '|-') {
        const parts: string[] = [];
        while (i + 1 < lines.length && /^\s+\S/.test(lines[i + 1])) parts.push(lines[++i].trim());
        value = parts.join(value.startsWith('>') ? ' ' : '\n');
      } else value = unquote(value);
      raw[m[1]] = value;
      meta.lines[m[1]] = i + 1 - (value.includes('\n') ? value.split('\n').length : 0);
    }
  }
  meta.endLine = meta.hasFrontMatter ? i + 1 : 1;
  if (!meta.hasFrontMatter) return { ...meta, lines: {} };
  meta.name = raw.name || undefined;
  meta.description = raw.description || undefined;
  meta.userInvocable = bool(raw['user-invocable'], true);
  meta.disableModelInvocation = bool(raw['disable-model-invocation'], false);
  return meta;
}

/** A skill name is a folder name: lowercase letters, digits and hyphens (as Claude Code skills). */
export function validateSkillName(name: string): string | undefined {
  if (name === '') return 'A skill needs a name.';
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) return 'Use lowercase letters, digits and hyphens; it is also the folder name.';
  if (name.length > 64) return 'Keep the name to 64 characters.';
  return undefined;
}

export function checkSkill(text: string, folderName: string): SkillProblem[] {
  const m = parseSkill(text);
  if (!m.hasFrontMatter) return [{ line: 1, message: 'SKILL.md must start with front matter (--- name: … description: … ---).', severity: 'error' }];
  const out: SkillProblem[] = [];
  if (!m.name) out.push({ line: 1, message: 'The front matter has no name.', severity: 'error' });
  else {
    const bad = validateSkillName(m.name);
    if (bad) out.push({ line: m.lines.name, message: `name "${m.name}": ${bad}`, severity: 'error' });
    if (m.name !== folderName) out.push({ line: m.lines.name, message: `name "${m.name}" must equal the folder name "${folderName}".`, severity: 'error' });
  }
  if (!m.description) out.push({ line: m.lines.description ?? 1, message: 'The front matter has no description (agents choose skills by it).', severity: 'error' });
  return out;
}

export function newSkillText(name: string, description: string, opts: { userInvocable?: boolean; disableModelInvocation?: boolean } = {}): string {
  return [
    '---',
    `name: ${name}`,
    `description: ${JSON.stringify(description)}`,
    `user-invocable: ${opts.userInvocable ?? true}`,
    `disable-model-invocation: ${opts.disableModelInvocation ?? false}`,
    '---',
    '',
    `# ${name}`,
    '',
    'Instructions for the agent: when to use this skill and the steps to follow.',
    '',
  ].join('\n');
}

/** The same SKILL.md with its name changed (for "keep both" on import). */
export function renameSkill(text: string, newName: string): string {
  const lines = text.split('\n');
  if (lines[0]?.trim() !== '---') return text;
  for (let i = 1; i < lines.length && lines[i].trim() !== '---'; i++) {
    if (/^name\s*:/.test(lines[i])) {
      lines[i] = `name: ${newName}`;
      return lines.join('\n');
    }
  }
  lines.splice(1, 0, `name: ${newName}`);
  return lines.join('\n');
}
