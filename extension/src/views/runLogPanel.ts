// The Run Log view: a webview over one JSONL log file, a timeline with filters (event type, agent,
// interaction, run, text) and the run's metrics. The page gets the parsed events once; filtering
// happens in the page. Nonce CSP, no remote content.
import * as vscode from 'vscode';
import * as crypto from 'node:crypto';
import { metrics, parseJsonl } from './runLogModel';

export class RunLogPanel {
  private static current: RunLogPanel | undefined;
  private watcher: vscode.FileSystemWatcher | undefined;

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private file: vscode.Uri,
    private runId: string | undefined,
  ) {
    panel.onDidDispose(() => {
      this.watcher?.dispose();
      RunLogPanel.current = undefined;
    });
  }

  static async show(file: vscode.Uri, runId?: string): Promise<void> {
    if (RunLogPanel.current) {
      RunLogPanel.current.file = file;
      RunLogPanel.current.runId = runId;
      RunLogPanel.current.panel.reveal();
    } else {
      const panel = vscode.window.createWebviewPanel('agentcanvas.runLog', 'AgentCanvas Run Log', vscode.ViewColumn.Active, {
        enableScripts: true,
        localResourceRoots: [],
      });
      RunLogPanel.current = new RunLogPanel(panel, file, runId);
    }
    await RunLogPanel.current.load();
  }

  private async load(): Promise<void> {
    this.watcher?.dispose();
    this.watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.joinPath(this.file, '..'), '*.jsonl'));
    this.watcher.onDidChange((u) => u.toString() === this.file.toString() && void this.load());
    let text = '';
    try {
      text = Buffer.from(await vscode.workspace.fs.readFile(this.file)).toString('utf8');
    } catch (e) {
      text = '';
      void vscode.window.showErrorMessage(`AgentCanvas: cannot read ${this.file.fsPath}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const parsed = parseJsonl(text);
    this.panel.title = `Run Log: ${vscode.workspace.asRelativePath(this.file)}`;
    this.panel.webview.html = renderHtml(vscode.workspace.asRelativePath(this.file), parsed, metrics(parsed.events), this.runId);
  }
}

function escapeJsonForScript(v: unknown): string {
  return JSON.stringify(v).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function renderHtml(title: string, parsed: ReturnType<typeof parseJsonl>, m: ReturnType<typeof metrics>, runId?: string): string {
  const nonce = crypto.randomBytes(16).toString('base64');
  const data = escapeJsonForScript({ events: parsed.events.map((e) => ({ ...e, raw: e.raw })), errors: parsed.errors, metrics: m, runId: runId ?? '' });
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">
body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);font-size:var(--vscode-font-size);padding:0 12px}
.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:8px 0;position:sticky;top:0;background:var(--vscode-editor-background);padding:6px 0}
select,input{background:var(--vscode-input-background);color:var(--vscode-input-foreground);border:1px solid var(--vscode-input-border,transparent)}
.metrics{display:flex;flex-wrap:wrap;gap:16px;margin:8px 0}.metrics div{padding:4px 8px;border:1px solid var(--vscode-panel-border)}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:2px 6px;border-bottom:1px solid var(--vscode-panel-border);vertical-align:top}
td.ev{font-weight:bold}tr.terminated td.ev{color:var(--vscode-charts-green)}tr.error td.ev,tr.failed td.ev{color:var(--vscode-errorForeground)}
code{font-family:var(--vscode-editor-font-family);white-space:pre-wrap;word-break:break-all}.err{color:var(--vscode-errorForeground)}
</style></head><body>
<h2 id="title"></h2>
<div class="metrics" id="metrics"></div>
<div class="filters">
 <label>run <select id="f-run"><option value="">all</option></select></label>
 <label>event <select id="f-event"><option value="">all</option></select></label>
 <label>agent <select id="f-agent"><option value="">all</option></select></label>
 <label>interaction <select id="f-inter"><option value="">all</option></select></label>
 <input id="f-text" placeholder="search" aria-label="search">
 <span id="count"></span>
</div>
<div id="errors" class="err"></div>
<table><thead><tr><th>time</th><th>event</th><th>interaction</th><th>from → to</th><th>details</th></tr></thead><tbody id="rows"></tbody></table>
<script nonce="${nonce}">
const DATA = ${data};
const $ = (id) => document.getElementById(id);
$('title').textContent = ${escapeJsonForScript(title)};
function fill(sel, values){ for (const v of values){ const o=document.createElement('option'); o.value=v; o.textContent=v; sel.appendChild(o);} }
const m = DATA.metrics;
fill($('f-run'), m.runs); fill($('f-event'), Object.keys(m.byEvent).sort()); fill($('f-agent'), m.agents); fill($('f-inter'), m.interactions);
$('f-run').value = DATA.runId;
const mt = [['events', m.events], ['steps', m.steps], ['duration', m.durationMs === undefined ? '—' : (m.durationMs/1000).toFixed(1)+' s'],
  ['terminations', m.terminations.map(t => (t.interactionId||'?')+': '+t.reason).join(', ') || '—'],
  ['proposals', 'created '+m.proposals.created+', applied '+m.proposals.applied+', rejected '+m.proposals.rejected],
  ['messages by agent', Object.entries(m.messagesByAgent).map(([a,n]) => a+' '+n).join(', ') || '—']];
for (const [k,v] of mt){ const d=document.createElement('div'); d.textContent = k+': '+v; $('metrics').appendChild(d); }
if (DATA.errors.length) $('errors').textContent = DATA.errors.length+' unreadable line(s): '+DATA.errors.slice(0,5).map(e => 'line '+e.line+': '+e.message).join('; ');
function fmt(ts){ if (typeof ts === 'number' && ts > 1e11) return new Date(ts).toLocaleTimeString(); if (typeof ts === 'string' && !isNaN(Date.parse(ts))) return new Date(ts).toLocaleTimeString(); return ts === undefined ? '' : String(ts); }
function render(){
  const run=$('f-run').value, ev=$('f-event').value, ag=$('f-agent').value, it=$('f-inter').value, tx=$('f-text').value.toLowerCase();
  const rows = DATA.events.filter(e => (!run||e.runId===run)&&(!ev||e.event===ev)&&(!ag||e.agentId===ag||e.from===ag||e.to===ag)&&(!it||e.interactionId===it)&&(!tx||JSON.stringify(e.raw).toLowerCase().includes(tx)));
  const body=$('rows'); body.textContent='';
  for (const e of rows){
    const tr=document.createElement('tr'); tr.className=e.event;
    const rest = Object.assign({}, e.raw); for (const k of ['ts','flow','runId','interactionId','edgeId','event','from','to']) delete rest[k];
    for (const [c,v] of [['',fmt(e.ts)],['ev',e.event],['',e.interactionId||''],['',e.from||e.to ? (e.from||'')+' → '+(e.to||'') : (e.agentId||'')],['',Object.keys(rest).length?JSON.stringify(rest):'']]){
      const td=document.createElement('td'); if (c) td.className=c; if (c===''&&v&&v.startsWith&&v.startsWith('{')){const code=document.createElement('code'); code.textContent=v; td.appendChild(code);} else td.textContent=v; tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  $('count').textContent = rows.length+' of '+DATA.events.length+' events';
}
for (const id of ['f-run','f-event','f-agent','f-inter']) $(id).addEventListener('change', render);
$('f-text').addEventListener('input', render);
render();
</script></body></html>`;
}
