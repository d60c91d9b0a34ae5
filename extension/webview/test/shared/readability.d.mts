export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
export interface Readability {
  nodes: Array<Box & { id: string }>;
  labels: Array<Box & { id: string; text: string; title: string }>;
  /** what is wrong with the labels; empty when every one is readable */
  problems: string[];
}
/** readability runs in the page: pass it to page.evaluate. */
export function readability(): Readability;
/** settled runs in the page: resolves once nodes, labels and the view stop moving. */
export function settled(): Promise<void>;
