// The Skills view of .agentcanvas/skills/: create, export (folder or zip), import (folder or zip)
// with conflict handling decided before anything is written, SKILL.md checked on save, and the
// user-invocable skills offered in a command. disable-model-invocation is shown and kept: such a
// skill is only ever run by the user.
import * as vscode from 'vscode';
import * as path from 'node:path';
import * as fs from 'node:fs/promises';
import { checkSkill, newSkillText, parseSkill, validateSkillName, type SkillMeta } from './skillFile';
import { describePlan, filesToWrite, groupSkills, planImport, type Resolution } from './importPlan';
import { readZip, safeEntryName, writeZip, type ZipEntry } from './zip';
import { noLinks } from '../views/markdownText';

export interface Skill {
  folder: string; // folder name
  dir: vscode.Uri;
  meta: SkillMeta;
  problems: number;
}

function skillsRoot(): vscode.Uri | undefined {
  const f = vscode.workspace.workspaceFolders?.[0];
  return f ? vscode.Uri.joinPath(f.uri, '.agentcanvas', 'skills') : undefined;
}

export async function listSkills(): Promise<Skill[]> {
  const root = skillsRoot();
  if (!root) return [];
  let entries: [string, vscode.FileType][];
  try {
    entries = await vscode.workspace.fs.readDirectory(root);
  } catch {
    return [];
  }
  const out: Skill[] = [];
  for (const [name, type] of entries.sort((a, b) => a[0].localeCompare(b[0]))) {
    if (type !== vscode.FileType.Directory || name.startsWith('.')) continue;
    const dir = vscode.Uri.joinPath(root, name);
    let text = '';
    try {
      text = Buffer.from(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(dir, 'SKILL.md'))).toString('utf8');
    } catch {
      continue;
    }
    out.push({ folder: name, dir, meta: parseSkill(text), problems: checkSkill(text, name).length });
  }
  return out;
}

class SkillsTree implements vscode.TreeDataProvider<Skill> {
  private readonly emitter = new vscode.EventEmitter<Skill | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  refresh(): void {
    this.emitter.fire(undefined);
  }
  getChildren(s?: Skill): Promise<Skill[]> | Skill[] {
    return s ? [] : listSkills();
  }
  getTreeItem(s: Skill): vscode.TreeItem {
    const it = new vscode.TreeItem(s.meta.name ?? s.folder, vscode.TreeItemCollapsibleState.None);
    it.id = `skill:${s.folder}`;
    const flags = [s.meta.disableModelInvocation ? 'manual only' : undefined, s.meta.userInvocable ? undefined : 'hidden from menu'].filter(Boolean);
    it.description = [s.meta.description, flags.length ? `(${flags.join(', ')})` : undefined].filter(Boolean).join(' ');
    it.iconPath = new vscode.ThemeIcon(s.problems > 0 ? 'warning' : s.meta.disableModelInvocation ? 'lock' : 'book');
    it.tooltip = [
      s.meta.description ?? '(no description)',
      s.meta.disableModelInvocation ? 'disable-model-invocation: agents cannot run this skill on their own; only you can.' : 'Agents may use this skill.',
      s.meta.userInvocable ? 'Offered in "AgentCanvas: Invoke Skill".' : 'Not offered in the menu (user-invocable: false).',
      s.problems > 0 ? `${s.problems} problem(s) in SKILL.md` : undefined,
    ]
      .filter(Boolean)
      .join('\n');
    it.contextValue = 'skill';
    it.resourceUri = vscode.Uri.joinPath(s.dir, 'SKILL.md');
    it.command = { command: 'vscode.open', title: 'Open', arguments: [vscode.Uri.joinPath(s.dir, 'SKILL.md')] };
    return it;
  }
}

async function readTree(dir: string, base = ''): Promise<ZipEntry[]> {
  const out: ZipEntry[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const rel = base ? `${base}/${e.name}` : e.name;
    if (e.isSymbolicLink()) continue; // never follow links out of a skill
    if (e.isDirectory()) out.push(...(await readTree(path.join(dir, e.name), rel)));
    else if (e.isFile()) out.push({ name: rel, data: await fs.readFile(path.join(dir, e.name)) });
  }
  return out;
}

/**
 * Registers the Skills view and its commands. invoke runs a skill the person picked (Invoke
 * Skill): a run of one agent following its SKILL.md, through the sidecar.
 */
export function registerSkills(context: vscode.ExtensionContext, invoke: (s: Skill) => Promise<unknown>): void {
  const tree = new SkillsTree();
  const diagnostics = vscode.languages.createDiagnosticCollection('agentcanvas-skills');
  const check = (doc: vscode.TextDocument) => {
    if (!/[\\/]\.agentcanvas[\\/]skills[\\/][^\\/]+[\\/]SKILL\.md$/.test(doc.uri.fsPath)) return;
    const folder = path.basename(path.dirname(doc.uri.fsPath));
    diagnostics.set(
      doc.uri,
      checkSkill(doc.getText(), folder).map((p) => {
        const d = new vscode.Diagnostic(new vscode.Range(p.line - 1, 0, p.line - 1, 200), p.message, p.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning);
        d.source = 'agentcanvas';
        return d;
      }),
    );
    tree.refresh();
  };
  const watcher = vscode.workspace.createFileSystemWatcher('**/.agentcanvas/skills/**');
  context.subscriptions.push(
    diagnostics,
    watcher,
    watcher.onDidCreate(() => tree.refresh()),
    watcher.onDidDelete(() => tree.refresh()),
    vscode.window.createTreeView('agentcanvas.skills', { treeDataProvider: tree }),
    vscode.workspace.onDidSaveTextDocument(check),
    vscode.workspace.onDidOpenTextDocument(check),
    vscode.commands.registerCommand('agentcanvas.refreshSkills', () => tree.refresh()),
    vscode.commands.registerCommand('agentcanvas.createSkill', async () => {
      const root = skillsRoot();
      if (!root) return;
      const existing = new Set((await listSkills()).map((s) => s.folder));
      const name = await vscode.window.showInputBox({
        title: 'AgentCanvas: New Skill',
        prompt: 'Skill name (also its folder name)',
        validateInput: (v) => validateSkillName(v) ?? (existing.has(v) ? `A skill named ${v} already exists.` : undefined),
      });
      if (!name) return;
      const description = await vscode.window.showInputBox({ title: `New skill ${name}`, prompt: 'What it does and when to use it (agents choose skills by this)', validateInput: (v) => (v.trim() ? undefined : 'A description is required.') });
      if (!description) return;
      const manual = await vscode.window.showQuickPick(
        [
          { label: 'Agents and you can invoke it', manual: false },
          { label: 'Only you can invoke it', description: 'disable-model-invocation: for destructive or secret-handling skills', manual: true },
        ],
        { placeHolder: 'Who may invoke it?' },
      );
      if (!manual) return;
      const file = vscode.Uri.joinPath(root, name, 'SKILL.md');
      await vscode.workspace.fs.writeFile(file, Buffer.from(newSkillText(name, description, { disableModelInvocation: manual.manual }), 'utf8'));
      tree.refresh();
      await vscode.window.showTextDocument(file);
    }),
    vscode.commands.registerCommand('agentcanvas.exportSkill', async (s?: Skill) => {
      const skill = s ?? (await pickSkill('Export which skill?', false));
      if (!skill) return;
      const how = await vscode.window.showQuickPick([{ label: 'As a .zip file', zip: true }, { label: 'As a folder', zip: false }], { placeHolder: `Export ${skill.folder}` });
      if (!how) return;
      const files = await readTree(skill.dir.fsPath);
      if (how.zip) {
        const to = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.file(path.join(path.dirname(skill.dir.fsPath), `${skill.folder}.zip`)), filters: { Zip: ['zip'] } });
        if (!to) return;
        await vscode.workspace.fs.writeFile(to, await writeZip(files.map((f) => ({ name: `${skill.folder}/${f.name}`, data: f.data }))));
        void vscode.window.showInformationMessage(`AgentCanvas: exported ${skill.folder} to ${to.fsPath}.`);
      } else {
        const to = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Export here' });
        if (!to?.[0]) return;
        const dest = vscode.Uri.joinPath(to[0], skill.folder);
        try {
          await vscode.workspace.fs.stat(dest);
          void vscode.window.showErrorMessage(`AgentCanvas: ${dest.fsPath} already exists; nothing was written.`);
          return;
        } catch {
          // free
        }
        for (const f of files) await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(dest, ...f.name.split('/')), f.data);
        void vscode.window.showInformationMessage(`AgentCanvas: exported ${skill.folder} to ${dest.fsPath}.`);
      }
    }),
    vscode.commands.registerCommand('agentcanvas.importSkills', async () => {
      const root = skillsRoot();
      if (!root) return;
      const src = await vscode.window.showOpenDialog({ canSelectFiles: true, canSelectFolders: true, filters: { 'Skill zip or folder': ['zip'] }, openLabel: 'Import' });
      if (!src?.[0]) return;
      let files: ZipEntry[];
      const p = src[0].fsPath;
      try {
        files = (await fs.stat(p)).isDirectory() ? await readTree(p) : await readZip(await fs.readFile(p));
      } catch (e) {
        void vscode.window.showErrorMessage(`AgentCanvas: cannot import ${p}: ${noLinks(e instanceof Error ? e.message : String(e))}`);
        return;
      }
      const incoming = groupSkills(files, path.basename(p).replace(/\.zip$/i, ''));
      if (incoming.length === 0) {
        void vscode.window.showWarningMessage(`AgentCanvas: ${p} holds no skill (no SKILL.md).`);
        return;
      }
      const existing = (await listSkills()).map((s) => s.folder);
      // Ask for each conflict first; nothing is written until the whole plan is confirmed.
      const choices = new Map<string, Resolution>();
      for (const inc of incoming) {
        if (!existing.includes(inc.name)) continue;
        const pick = await vscode.window.showQuickPick(
          [
            { label: 'Keep both', description: 'import under a new name', r: 'keepBoth' as const },
            { label: 'Replace', description: 'the existing skill is deleted', r: 'replace' as const },
            { label: 'Skip', description: 'keep the existing skill', r: 'skip' as const },
          ],
          { placeHolder: `A skill named "${inc.name}" already exists` },
        );
        if (!pick) return;
        choices.set(inc.name, pick.r);
      }
      let plan;
      try {
        plan = planImport(incoming, existing, (n) => choices.get(n) ?? 'skip');
      } catch (e) {
        void vscode.window.showErrorMessage(`AgentCanvas: cannot import: ${noLinks(e instanceof Error ? e.message : String(e))}`);
        return;
      }
      const go = await vscode.window.showInformationMessage('Import skills?', { modal: true, detail: describePlan(plan).join('\n') }, 'Import');
      if (go !== 'Import') return;
      // Stage everything first, then move into place: a failure leaves the skills folder as it was.
      const staging = vscode.Uri.joinPath(root, `.importing-${Date.now()}`);
      try {
        for (const item of plan) for (const f of filesToWrite(item)) {
          const rel = safeEntryName(f.name);
          if (!rel) throw new Error(`unsafe file name ${f.name}`);
          await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(staging, item.target, ...rel.split('/')), f.data);
        }
        for (const item of plan) {
          if (item.resolution === 'skip') continue;
          const dest = vscode.Uri.joinPath(root, item.target);
          if (item.resolution === 'replace') await vscode.workspace.fs.delete(dest, { recursive: true, useTrash: true });
          await vscode.workspace.fs.rename(vscode.Uri.joinPath(staging, item.target), dest);
        }
      } finally {
        await vscode.workspace.fs.delete(staging, { recursive: true }).then(undefined, () => undefined);
      }
      tree.refresh();
      void vscode.window.showInformationMessage(`AgentCanvas: ${describePlan(plan).join('; ')}.`);
    }),
    vscode.commands.registerCommand('agentcanvas.invokeSkill', async (arg?: unknown) => {
      // From the Skills view the item is the skill (any skill: the menu only hides those that
      // are not user-invocable); from the palette, a pick of the user-invocable ones.
      const s = isSkill(arg) ? arg : await pickSkill('Invoke which skill?', true);
      if (s) await invoke(s);
    }),
  );
  for (const d of vscode.workspace.textDocuments) check(d);
}

function isSkill(x: unknown): x is Skill {
  return typeof x === 'object' && x !== null && typeof (x as Skill).folder === 'string' && (x as Skill).dir instanceof vscode.Uri;
}

async function pickSkill(placeHolder: string, userInvocableOnly: boolean): Promise<Skill | undefined> {
  const skills = (await listSkills()).filter((s) => !userInvocableOnly || s.meta.userInvocable);
  if (skills.length === 0) {
    void vscode.window.showInformationMessage(userInvocableOnly ? 'AgentCanvas: no user-invocable skills in .agentcanvas/skills/.' : 'AgentCanvas: no skills in .agentcanvas/skills/.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    skills.map((s) => ({ label: s.meta.name ?? s.folder, description: s.meta.disableModelInvocation ? 'manual only' : undefined, detail: s.meta.description, s })),
    { placeHolder, matchOnDetail: true },
  );
  return pick?.s;
}
