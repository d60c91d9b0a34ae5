// What the canvas needs from the sidecar. The extension implements it with the language
// client (agentcanvas/loadFlow, editFlow, listPatterns, the runEvent notification); tests
// implement it with fakes. The canvas knows nothing else of JSON-RPC.
import type { FlowOp, LoadFlowResult, PatternInfo, RunEvent, RunSpend } from "./protocol";

/** An LSP TextEdit as the sidecar answers editFlow: 0-based lines, UTF-16 characters. */
export interface LspTextEdit {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}

export interface Disposable {
  dispose(): void;
}

export interface CanvasBackend {
  /** agentcanvas/loadFlow: the model of this text (the document's current text, saved or not). */
  loadFlow(uri: string, text: string): Promise<LoadFlowResult>;
  /**
   * agentcanvas/editFlow: the text edits that carry out ops on exactly this text (at this document
   * version). Rejects with a message naming the operation and field when an op cannot apply.
   */
  editFlow(uri: string, version: number, text: string, ops: FlowOp[]): Promise<LspTextEdit[]>;
  /** agentcanvas/listPatterns: the 20 patterns, with their docs. */
  listPatterns(): Promise<PatternInfo[]>;
  /**
   * agentcanvas/listRuns: each agent's spend in the newest run of the flow named flowName, as
   * its last checkpoint kept it (what the cards show again after a window reload); undefined
   * when the flow has no run.
   */
  lastRunSpend(flowName: string): Promise<RunSpend | undefined>;
  /** agentcanvas/runEvent notifications, as they arrive. */
  onRunEvent(listener: (e: RunEvent) => void): Disposable;
}
