// New Flow, Open Canvas, Validate Flow, Insert Pattern.
import * as vscode from 'vscode';
import { emptyFlowYaml, resolveFlow, validateFlowName } from '../flows';
import { Method, readDiagnostics, readPatterns, readTextEdits, type LspTextEdit, type PatternInfo } from '../protocol';
import { NotRunningError, withSidecar, type SidecarClient } from '../sidecar';
import type { Log } from '../log';

/** The canvas's view type (extension/src/canvas/provider.ts): the default editor of every flow file. */
export const CANVAS_VIEW_TYPE = 'agentcanvas.canvas';

/**
 * openCanvas shows a flow on the canvas in one tab: the canvas already open for it comes to the
 * front (in its own group), and a text editor of it is replaced in its place by the canvas, as
 * "Reopen Editor With…" does (kept when it has unsaved changes: closing it would ask to save).
 */
export async function openCanvas(uri: vscode.Uri): Promise<void> {
  const same = (input: unknown) => (input as { uri?: vscode.Uri } | undefined)?.uri?.toString() === uri.toString();
  const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs.map((tab) => ({ group, tab })));
  const canvas = tabs.find(({ tab }) => tab.input instanceof vscode.TabInputCustom && tab.input.viewType === CANVAS_VIEW_TYPE && same(tab.input));
  if (canvas) {
    await vscode.commands.executeCommand('vscode.openWith', uri, CANVAS_VIEW_TYPE, { viewColumn: canvas.group.viewColumn, preserveFocus: false });
    return;
  }
  const text = tabs.find(({ tab }) => tab.input instanceof vscode.TabInputText && same(tab.input));
  await vscode.commands.executeCommand('vscode.openWith', uri, CANVAS_VIEW_TYPE, text ? { viewColumn: text.group.viewColumn, preserveFocus: false } : undefined);
  if (text && !text.tab.isDirty) await vscode.window.tabGroups.close(text.tab, true);
}

export function registerFlowCommands(sidecar: SidecarClient, log: Log): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('agentcanvas.newFlow', () => newFlow(sidecar, log)),
    vscode.commands.registerCommand('agentcanvas.openCanvas', async (arg?: unknown) => {
      const uri = await resolveFlow(arg, 'Pick a flow to open on the canvas');
      if (uri) await openCanvas(uri);
    }),
    vscode.commands.registerCommand('agentcanvas.validateFlow', (arg?: unknown) => withSidecar(sidecar, log, () => validateFlow(sidecar, arg))),
    vscode.commands.registerCommand('agentcanvas.insertPattern', (arg?: unknown) => withSidecar(sidecar, log, () => insertPattern(sidecar, arg))),
  ];
}

async function pickPattern(sidecar: SidecarClient, placeHolder: string, withEmpty: boolean): Promise<PatternInfo | 'empty' | undefined> {
  let patterns: PatternInfo[] = [];
  if (sidecar.running) patterns = readPatterns(await sidecar.request(Method.listPatterns, {}));
  else if (!withEmpty) patterns = readPatterns(await sidecar.request(Method.listPatterns, {})); // throws NotRunningError
  type Item = vscode.QuickPickItem & { value: PatternInfo | 'empty' };
  const items: Item[] = [];
  if (withEmpty) items.push({ label: '$(new-file) Empty flow', description: 'no agents yet', value: 'empty' });
  if (withEmpty && patterns.length > 0) items.push({ label: 'Patterns', kind: vscode.QuickPickItemKind.Separator, value: 'empty' });
  for (const p of patterns) items.push({ label: `${p.id} ${p.name}`, description: p.patternId, detail: p.roles?.length ? `roles: ${p.roles.join(', ')}` : undefined, value: p });
  const picked = await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true, matchOnDetail: true });
  return picked?.value;
}

async function newFlow(sidecar: SidecarClient, log: Log): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    void vscode.window.showWarningMessage('AgentCanvas: open a folder first; flows live in its .agentcanvas/flows/.');
    return;
  }
  const name = await vscode.window.showInputBox({ title: 'AgentCanvas: New Flow', prompt: 'Flow name', placeHolder: 'my-flow', validateInput: validateFlowName });
  if (!name) return;
  const target = vscode.Uri.joinPath(folder.uri, '.agentcanvas', 'flows', `${name}.yaml`);
  try {
    await vscode.workspace.fs.stat(target);
    void vscode.window.showErrorMessage(`AgentCanvas: ${vscode.workspace.asRelativePath(target)} already exists.`);
    return;
  } catch {
    // free
  }
  const choice = await withSidecar(sidecar, log, () => pickPattern(sidecar, 'Start from an empty flow or a pattern', true));
  if (!choice) return;
  await vscode.workspace.fs.writeFile(target, Buffer.from(emptyFlowYaml(name), 'utf8'));
  if (choice !== 'empty') {
    // The sidecar expands the pattern into the new file (editFlow insertPattern): one source of
    // ids, positions and default terminations for the canvas and for this command.
    const ok = await withSidecar(sidecar, log, () => applyFlowOps(sidecar, target, [{ op: 'insertPattern', patternId: choice.patternId }]));
    if (ok) await (await vscode.workspace.openTextDocument(target)).save();
  }
  log.info(`created ${target.fsPath}`);
  await vscode.commands.executeCommand('vscode.openWith', target, CANVAS_VIEW_TYPE).then(undefined, async () => {
    await vscode.window.showTextDocument(target); // the canvas is not installed in this build
  });
}

export function toVsRange(r: LspTextEdit['range']): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

async function validateFlow(sidecar: SidecarClient, arg?: unknown): Promise<void> {
  if (!sidecar.running) throw new NotRunningError(); // before asking which flow
  const uri = await resolveFlow(arg, 'Pick a flow to validate');
  if (!uri) return;
  const doc = await vscode.workspace.openTextDocument(uri); // also syncs it to the sidecar (didOpen)
  const res = await sidecar.request<unknown>(Method.validateFlow, { uri: uri.toString(), text: doc.getText() });
  const diags = readDiagnostics(res);
  // Same collection the sidecar publishes into: the next publishDiagnostics replaces these, so
  // the Problems panel never shows a flow's problems twice.
  sidecar.diagnostics?.set(
    uri,
    diags.map((d) => {
      const v = new vscode.Diagnostic(toVsRange(d.range), d.message, d.severity - 1);
      v.code = d.code;
      v.source = d.source;
      return v;
    }),
  );
  const errors = diags.filter((d) => d.severity === 1).length;
  const warnings = diags.filter((d) => d.severity === 2).length;
  const rel = vscode.workspace.asRelativePath(uri);
  if (errors + warnings === 0) {
    void vscode.window.showInformationMessage(`AgentCanvas: ${rel} is valid.`);
    return;
  }
  await vscode.commands.executeCommand('workbench.actions.view.problems');
  void vscode.window.showWarningMessage(`AgentCanvas: ${rel}: ${errors} error(s), ${warnings} warning(s). See the Problems panel.`);
}

async function insertPattern(sidecar: SidecarClient, arg?: unknown): Promise<void> {
  if (!sidecar.running) throw new NotRunningError();
  const uri = await resolveFlow(arg, 'Pick the flow to insert a pattern into');
  if (!uri) return;
  const picked = await pickPattern(sidecar, 'Pick a pattern to insert', false);
  if (!picked || picked === 'empty') return;
  await applyFlowOps(sidecar, uri, [{ op: 'insertPattern', patternId: picked.patternId }]);
}

/** Sends edit operations for a flow and applies the sidecar's text edits to its document. */
export async function applyFlowOps(sidecar: SidecarClient, uri: vscode.Uri, ops: Array<Record<string, unknown>>): Promise<boolean> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const res = await sidecar.request<unknown>(Method.editFlow, { uri: uri.toString(), text: doc.getText(), ops });
  const edits = readTextEdits(res);
  if (edits.length === 0) return true;
  const we = new vscode.WorkspaceEdit();
  for (const e of edits) we.replace(uri, toVsRange(e.range), e.newText);
  if (!(await vscode.workspace.applyEdit(we))) throw new Error(`could not apply the edit to ${vscode.workspace.asRelativePath(uri)} (it changed meanwhile?)`);
  return true;
}
