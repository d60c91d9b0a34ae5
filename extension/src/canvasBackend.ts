// The canvas's CanvasBackend (extension/src/canvas/backend.ts, canvas branch) implemented with the
// language client. The types here are structural copies so this file builds without the canvas;
// at merge, activate() calls CanvasEditorProvider.register(context, createCanvasBackend(...)).
//
// The sidecar's loadFlow answers LSP ranges (0-based lines, UTF-16 characters) beside the model;
// the canvas model wants spans as the Go loader makes them (1-based line, 1-based code-point
// column, byte offset). toSrcRange converts against the same text the sidecar analysed.
import type * as vscode from 'vscode';
import { Method, asArray, asObject, readTextEdits, type LspPosition, type LspRange, type LspTextEdit, type PatternInfo, type RunEvent } from './protocol';
import type { SidecarClient } from './sidecar';
import { readAgentTotal, type AgentSpend } from './canvas/spend';
import type { RunSpend } from './canvas/protocol';

export interface SrcPos {
  line: number;
  column: number;
  offset: number;
}
export interface SrcRange {
  start: SrcPos;
  end: SrcPos;
}
export interface CanvasDiagnostic {
  file: string;
  range: SrcRange;
  severity: 'error' | 'warning' | 'info';
  code: string;
  message: string;
  path?: string;
}
export interface CanvasLoadFlowResult {
  flow: (Record<string, unknown> & { spans: Record<string, SrcRange> | null }) | null;
  diagnostics: CanvasDiagnostic[];
}

/** Maps LSP positions to the loader's positions for one text. */
export class TextPositions {
  private readonly lineStarts: number[] = [0]; // UTF-16 index of each line start

  constructor(private readonly text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  toSrcPos(p: LspPosition): SrcPos {
    const line = Math.min(Math.max(p.line, 0), this.lineStarts.length - 1);
    const lineStart = this.lineStarts[line];
    const lineEnd = line + 1 < this.lineStarts.length ? this.lineStarts[line + 1] - 1 : this.text.length;
    const upto = Math.min(lineStart + Math.max(p.character, 0), lineEnd);
    const before = this.text.slice(lineStart, upto);
    const column = [...before].length + 1;
    const offset = Buffer.byteLength(this.text.slice(0, upto), 'utf8');
    return { line: line + 1, column, offset };
  }

  toSrcRange(r: LspRange): SrcRange {
    return { start: this.toSrcPos(r.start), end: this.toSrcPos(r.end) };
  }
}

const SEVERITY: Record<number, CanvasDiagnostic['severity']> = { 1: 'error', 2: 'warning', 3: 'info', 4: 'info' };

/** Converts agentcanvas/loadFlow's answer into the canvas's LoadFlowResult. */
export function toCanvasLoadResult(raw: unknown, text: string, file: string): CanvasLoadFlowResult {
  const o = asObject(raw);
  const pos = new TextPositions(text);
  const spans: Record<string, SrcRange> = {};
  for (const [k, v] of Object.entries(asObject(o.spans))) spans[k] = pos.toSrcRange(v as LspRange);
  const flow = o.flow && typeof o.flow === 'object' ? { ...(o.flow as Record<string, unknown>), spans } : null;
  const diagnostics = asArray(o.diagnostics).map((d): CanvasDiagnostic => {
    const x = asObject(d);
    return {
      file,
      range: pos.toSrcRange(x.range as LspRange),
      severity: SEVERITY[Number(x.severity)] ?? 'error',
      code: typeof x.code === 'string' ? x.code : '',
      message: String(x.message ?? ''),
      path: typeof asObject(x.data).path === 'string' ? (asObject(x.data).path as string) : undefined,
    };
  });
  return { flow, diagnostics };
}

export interface CanvasBackendImpl {
  loadFlow(uri: string, text: string): Promise<CanvasLoadFlowResult>;
  editFlow(uri: string, version: number, text: string, ops: Array<Record<string, unknown>>): Promise<LspTextEdit[]>;
  /** The sidecar's patterns as it sends them (roles as objects, docs, default terminations). */
  listPatterns(): Promise<PatternInfo[]>;
  lastRunSpend(flowName: string): Promise<RunSpend | undefined>;
  onRunEvent(listener: (e: RunEvent) => void): vscode.Disposable;
}

/** lastRunSpend finds the newest run of flowName in listRuns (newest first) and reads its agentSpend. */
export function lastRunSpend(raw: unknown, flowName: string): RunSpend | undefined {
  const list = Array.isArray(raw) ? raw : asArray(asObject(raw).runs);
  const run = list.map(asObject).find((r) => r.flow === flowName && typeof r.runId === 'string');
  if (!run) return undefined;
  const agents: Record<string, AgentSpend> = {};
  for (const [id, v] of Object.entries(asObject(run.agentSpend))) {
    const s = readAgentTotal(v);
    if (s) agents[id] = s;
  }
  return { runId: String(run.runId), agents };
}

/**
 * The backend for the canvas. The document is synced to the sidecar by the language client, so
 * loadFlow and editFlow name it by uri; editFlow passes the document version so that an edit
 * computed for an older text is refused (the canvas then reloads) rather than misapplied.
 */
export function createCanvasBackend(sidecar: SidecarClient, onRunEvent: (l: (e: RunEvent) => void) => vscode.Disposable): CanvasBackendImpl {
  const fileOf = (uri: string) => decodeURIComponent(uri.replace(/^file:\/\//, ''));
  return {
    async loadFlow(uri, text) {
      return toCanvasLoadResult(await sidecar.request(Method.loadFlow, { uri }), text, fileOf(uri));
    },
    async editFlow(uri, version, _text, ops) {
      return readTextEdits(await sidecar.request(Method.editFlow, { uri, version, ops }));
    },
    async listPatterns() {
      // passed through whole: the canvas shows role details and docs that readPatterns drops
      const raw = await sidecar.request(Method.listPatterns, {});
      const list = Array.isArray(raw) ? raw : asArray(asObject(raw).patterns);
      return list.filter((p) => typeof asObject(p).id === 'string' && typeof asObject(p).patternId === 'string') as PatternInfo[];
    },
    async lastRunSpend(flowName) {
      return lastRunSpend(await sidecar.request(Method.listRuns, {}), flowName);
    },
    onRunEvent,
  };
}
