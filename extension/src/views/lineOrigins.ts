// Where a line came from: hovering a line an agent wrote shows which proposal wrote it (agent,
// run, interaction, round, backend, the prompt's intent, tokens and cost), from the apply ledger
// (agentcanvas/lineOrigins). The sidecar carries each line through later applies and through the
// document's unsaved edits; docs/proposals.md says what is approximate.
import * as vscode from 'vscode';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Method, readLineOrigins, type LineOrigin } from '../protocol';
import { describeError, type SidecarClient } from '../sidecar';
import type { Log } from '../log';
import { escapeMarkdown } from './markdownText';

export class LineOriginsHover implements vscode.HoverProvider {
  private readonly cache = new Map<string, { version: number; origins: Promise<LineOrigin[]> }>();

  constructor(
    private readonly sidecar: SidecarClient,
    private readonly log: Log,
  ) {}

  static register(sidecar: SidecarClient, log: Log): vscode.Disposable {
    const hover = new LineOriginsHover(sidecar, log);
    return vscode.Disposable.from(
      vscode.languages.registerHoverProvider({ scheme: 'file' }, hover),
      vscode.workspace.onDidCloseTextDocument((d) => hover.cache.delete(d.uri.toString())),
    );
  }

  async provideHover(doc: vscode.TextDocument, pos: vscode.Position): Promise<vscode.Hover | undefined> {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!root || doc.uri.scheme !== 'file' || !this.sidecar.running) return undefined;
    const rel = path.relative(root, doc.uri.fsPath);
    if (rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep)[0] === '.agentcanvas') return undefined;
    if (!fs.existsSync(path.join(root, '.agentcanvas', 'ledger', 'entries'))) return undefined; // nothing applied yet
    const o = (await this.origins(doc)).find((x) => pos.line >= x.start - 1 && pos.line < x.start - 1 + x.count);
    if (!o) return undefined;
    const last = Math.min(doc.lineCount - 1, o.start - 2 + o.count);
    const md = new vscode.MarkdownString(originMarkdown(o));
    return new vscode.Hover(md, new vscode.Range(o.start - 1, 0, last, doc.lineAt(last).text.length));
  }

  private origins(doc: vscode.TextDocument): Promise<LineOrigin[]> {
    const key = doc.uri.toString();
    const hit = this.cache.get(key);
    if (hit && hit.version === doc.version) return hit.origins;
    const origins = this.sidecar
      .request(Method.lineOrigins, { uri: key, text: doc.getText() })
      .then(readLineOrigins)
      .catch((e: unknown) => {
        this.log.warn(`lineOrigins ${doc.uri.fsPath}: ${describeError(e)}`);
        this.cache.delete(key);
        return [];
      });
    this.cache.set(key, { version: doc.version, origins });
    return origins;
  }
}

/** The hover's text for lines one apply wrote. */
export function originMarkdown(o: LineOrigin): string {
  const lines = o.count === 1 ? `Line ${o.start}` : `Lines ${o.start}–${o.start + o.count - 1}`;
  const out = [`**AgentCanvas** · ${lines} came from agent **${o.agentId || 'unknown'}** (run \`${o.runId || '?'}\`)`];
  const g = o.origin;
  const where = [g?.flow && `flow \`${g.flow}\``, g?.interactionId && `interaction \`${g.interactionId}\``, g?.round !== undefined && `round ${g.round}`, g?.backend && `backend \`${g.backend}\``]
    .filter(Boolean)
    .join(', ');
  if (where) out.push(where);
  if (g?.prompt) out.push(`Asked: ${escapeMarkdown(g.prompt)}`);
  if (o.notes) out.push(`Goal: ${escapeMarkdown(o.notes)}`);
  const spend: string[] = [];
  if (g?.inputTokens || g?.outputTokens) spend.push(`${(g.inputTokens ?? 0).toLocaleString('en')} tokens in, ${(g.outputTokens ?? 0).toLocaleString('en')} out`);
  if (g?.costKnown) spend.push(`$${(g.costUsd ?? 0).toFixed(4)}`);
  if (spend.length > 0) out.push(`The agent's spend in its run so far: ${spend.join(', ')}`);
  out.push(`Applied ${o.at}${o.merged ? ' (merged with the workspace)' : ''} · ledger entry \`${o.entry}\``);
  return out.join('\n\n');
}
