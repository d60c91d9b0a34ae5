// Tidy with elkjs in a Web Worker. The worker script (elkjs's own elk-worker, shipped as
// out/webview/elk-worker.js) is fetched from the webview's resource origin and started from a
// blob: URL, because a webview page may not start a Worker from another origin directly; the
// CSP allows exactly that (connect-src for the fetch, worker-src blob:).
import ELK from "elkjs/lib/elk-api";
import type { Point } from "../../src/canvas/protocol";
import { elkGraph, positionsOf } from "./layoutGraph";

let elk: Promise<InstanceType<typeof ELK>> | undefined;

function workerUrl(): string {
  const u = document.getElementById("root")?.dataset.elkWorker;
  if (!u) throw new Error("the layout worker's address is missing from the page");
  return u;
}

async function getElk(): Promise<InstanceType<typeof ELK>> {
  if (!elk) {
    elk = (async () => {
      const res = await fetch(workerUrl());
      if (!res.ok) throw new Error(`cannot load the layout worker: HTTP ${res.status}`);
      const blob = URL.createObjectURL(new Blob([await res.text()], { type: "text/javascript" }));
      return new ELK({ workerUrl: blob, workerFactory: (url?: string) => new Worker(url ?? blob) as never });
    })();
    elk.catch(() => (elk = undefined));
  }
  return elk;
}

export async function tidyLayout(
  nodes: Array<{ id: string; width: number; height: number }>,
  edges: Array<{ id: string; source: string; target: string }>,
): Promise<Record<string, Point>> {
  const e = await getElk();
  const out = await e.layout(elkGraph(nodes, edges) as never);
  return positionsOf(out as never);
}
