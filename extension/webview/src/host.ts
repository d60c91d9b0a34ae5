// The webview's side of the host channel: acquireVsCodeApi once, typed messages, and the
// state VS Code keeps across reloads of the webview (viewport, selection, panels, snap).
import type { HostMessage, WebviewMessage } from "../../src/canvas/protocol";

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export interface SavedState {
  viewport?: { x: number; y: number; zoom: number };
  selection?: { nodes: string[]; edges: string[] };
  snap?: boolean;
  palette?: boolean;
  inspector?: boolean;
  minimap?: boolean;
  legend?: boolean;
}

const api: VsCodeApi =
  typeof acquireVsCodeApi === "function"
    ? acquireVsCodeApi()
    : { postMessage: () => undefined, getState: () => undefined, setState: () => undefined };

export function post(msg: WebviewMessage): void {
  api.postMessage(msg);
}

let saved: SavedState = (api.getState() as SavedState | undefined) ?? {};

export function loadState(): SavedState {
  return saved;
}

/** saveState merges part into the saved state. */
export function saveState(part: Partial<SavedState>): void {
  saved = { ...saved, ...part };
  api.setState(saved);
}

export function onHostMessage(fn: (m: HostMessage) => void): () => void {
  const h = (e: MessageEvent) => {
    const m = e.data as HostMessage | undefined;
    if (m && typeof m === "object" && typeof (m as { type?: unknown }).type === "string") fn(m);
  };
  window.addEventListener("message", h);
  return () => window.removeEventListener("message", h);
}
