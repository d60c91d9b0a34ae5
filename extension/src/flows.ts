// Finding and naming flow files. A flow file is <ws>/.agentcanvas/flows/*.yaml or <ws>/flows/*.yaml.
import * as vscode from 'vscode';

export const FLOW_GLOB = '{.agentcanvas/flows,flows}/*.yaml';
const FLOW_PATH_RE = /(^|[\\/])(\.agentcanvas[\\/])?flows[\\/][^\\/]+\.yaml$/;

export function isFlowPath(p: string): boolean {
  return FLOW_PATH_RE.test(p);
}

/** A flow name usable as a file name: letters, digits, - and _, starting with a letter or digit. */
export function validateFlowName(name: string): string | undefined {
  if (name === '') return 'Give the flow a name.';
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(name)) return 'Use letters, digits, - and _ (it becomes the file name).';
  if (name.length > 80) return 'Keep the name under 80 characters.';
  return undefined;
}

/** The YAML of an empty flow (docs/design.md). */
export function emptyFlowYaml(name: string): string {
  return [
    'version: 0.2',
    `name: ${name}`,
    '',
    'agents: []',
    '',
    'interactions: []',
    '',
    'layout:',
    '  nodes: {}',
    '  edges: {}',
    '',
  ].join('\n');
}

/** The flow a command acts on: its argument, the active editor, or a pick. */
export async function resolveFlow(arg?: unknown, placeHolder = 'Pick a flow'): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg;
  const maybe = (arg as { resourceUri?: unknown })?.resourceUri;
  if (maybe instanceof vscode.Uri) return maybe;
  const active = activeFlowUri();
  if (active) return active;
  const files = await vscode.workspace.findFiles(FLOW_GLOB, '**/node_modules/**', 500);
  if (files.length === 0) {
    const pick = await vscode.window.showInformationMessage('There are no flows in this workspace yet.', 'New Flow');
    if (pick === 'New Flow') await vscode.commands.executeCommand('agentcanvas.newFlow');
    return undefined;
  }
  if (files.length === 1) return files[0];
  const picked = await vscode.window.showQuickPick(
    files
      .sort((a, b) => a.fsPath.localeCompare(b.fsPath))
      .map((u) => ({ label: vscode.workspace.asRelativePath(u), uri: u })),
    { placeHolder, matchOnDescription: true },
  );
  return picked?.uri;
}

export function activeFlowUri(): vscode.Uri | undefined {
  const ed = vscode.window.activeTextEditor;
  if (ed && ed.document.uri.scheme === 'file' && isFlowPath(ed.document.uri.fsPath)) return ed.document.uri;
  // the canvas is a custom editor: its tab carries the uri
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  const input = tab?.input as { uri?: unknown; viewType?: string } | undefined;
  if (input && input.uri instanceof vscode.Uri && isFlowPath(input.uri.fsPath)) return input.uri;
  return undefined;
}
