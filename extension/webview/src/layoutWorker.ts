// The layout worker (out/webview/layout-worker.js): Tidy's layout off the main thread, so a big
// flow does not freeze the canvas, with its progress reported as it goes.
import { layoutFlow, type FlowLayoutInput } from "./layoutGraph";

export type LayoutRequest = { id: number; input: FlowLayoutInput };
export type LayoutReply =
  | { id: number; type: "progress"; fraction: number }
  | { id: number; type: "done"; positions: Record<string, { x: number; y: number }> }
  | { id: number; type: "failed"; message: string };

const scope = self as unknown as { onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null; postMessage(m: LayoutReply): void };

scope.onmessage = (e) => {
  const { id, input } = e.data;
  let last = 0;
  try {
    const positions = layoutFlow(input, (fraction) => {
      // a message per whole percent at most
      if (fraction - last >= 0.01) {
        last = fraction;
        scope.postMessage({ id, type: "progress", fraction });
      }
    });
    scope.postMessage({ id, type: "done", positions });
  } catch (err) {
    scope.postMessage({ id, type: "failed", message: err instanceof Error ? err.message : String(err) });
  }
};
