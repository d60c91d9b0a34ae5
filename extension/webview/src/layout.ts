// Tidy: the flow laid out (layoutGraph.ts) in a Web Worker. The worker script
// (out/webview/layout-worker.js) is fetched from the webview's resource origin and started from a
// blob: URL, because a webview page may not start a Worker from another origin directly; the CSP
// allows exactly that (connect-src for the fetch, worker-src blob:).
import type { Point } from "../../src/canvas/protocol";
import type { FlowLayoutInput } from "./layoutGraph";
import type { LayoutReply, LayoutRequest } from "./layoutWorker";

let worker: Promise<Worker> | undefined;
let nextId = 1;

function workerUrl(): string {
  const u = document.getElementById("root")?.dataset.layoutWorker;
  if (!u) throw new Error("the layout worker's address is missing from the page");
  return u;
}

function getWorker(): Promise<Worker> {
  if (!worker) {
    worker = (async () => {
      const res = await fetch(workerUrl());
      if (!res.ok) throw new Error(`cannot load the layout worker: HTTP ${res.status}`);
      const blob = URL.createObjectURL(new Blob([await res.text()], { type: "text/javascript" }));
      return new Worker(blob);
    })();
    worker.catch(() => (worker = undefined));
  }
  return worker;
}

/** tidyLayout lays the flow out in the worker; progress gets the fraction done (0…1). */
export async function tidyLayout(input: FlowLayoutInput, progress?: (fraction: number) => void): Promise<Record<string, Point>> {
  const w = await getWorker();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const onMessage = (e: MessageEvent<LayoutReply>) => {
      const m = e.data;
      if (m.id !== id) return;
      if (m.type === "progress") {
        progress?.(m.fraction);
        return;
      }
      w.removeEventListener("message", onMessage);
      w.removeEventListener("error", onError);
      if (m.type === "done") resolve(m.positions);
      else reject(new Error(m.message));
    };
    const onError = (e: ErrorEvent) => {
      w.removeEventListener("message", onMessage);
      w.removeEventListener("error", onError);
      reject(new Error(e.message || "the layout worker failed"));
    };
    w.addEventListener("message", onMessage);
    w.addEventListener("error", onError);
    w.postMessage({ id, input } satisfies LayoutRequest);
    performance.mark("ac:tidy:posted");
  });
}
