// The canvas custom editor's host side, against a fake vscode API (fake-vscode.ts) and a fake
// backend: the document is the model; ops go through editFlow and come back as document edits.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as vscode from "vscode";
import type { CanvasBackend, LspTextEdit } from "../../../src/canvas/backend";
import { CanvasEditorProvider } from "../../../src/canvas/provider";
import type { FlowOp, HostMessage, LoadFlowResult, RunEvent } from "../../../src/canvas/protocol";
import { readFileSync } from "node:fs";
import { calls, FakeDocument, FakePanel, registered, workspace } from "./fake-vscode";

const settle = (ms = 250) => new Promise((r) => setTimeout(r, ms));

interface Harness {
  doc: FakeDocument;
  panel: FakePanel;
  backend: CanvasBackend & { loads: string[]; editCalls: Array<{ version: number; text: string; ops: FlowOp[] }>; runEvent: (e: RunEvent) => void; spendAsked: string[] };
  posted: () => HostMessage[];
}

function setup(text: string, editFlow: (text: string, ops: FlowOp[], h: Harness) => Promise<LspTextEdit[]>): Harness {
  const doc = new FakeDocument(vscode.Uri.file("/ws/.agentcanvas/flows/team.yaml") as never, text);
  workspace.documents = [doc];
  const panel = new FakePanel();
  let runListener: (e: RunEvent) => void = () => undefined;
  const h = {} as Harness;
  const backend: Harness["backend"] = {
    loads: [],
    editCalls: [],
    spendAsked: [],
    runEvent: (e) => runListener(e),
    async loadFlow(_uri: string, t: string): Promise<LoadFlowResult> {
      backend.loads.push(t);
      return { flow: { file: "team.yaml", name: "team", agents: [], systemNodes: [], interactions: [], layout: { nodes: {}, edges: {} }, spans: {}, title: t }, diagnostics: [] };
    },
    async editFlow(_uri, version, t, ops) {
      backend.editCalls.push({ version, text: t, ops });
      return editFlow(t, ops, h);
    },
    async lastRunSpend(flowName: string) {
      backend.spendAsked.push(flowName);
      return { runId: "r1", agents: { coder: { tokens: 1500, costUsd: 0.03, costKnown: true, unreported: false, metered: true, reports: 2 } } };
    },
    async listPatterns() {
      return [{ id: "P05", patternId: "debate_judge", name: "Debate + Judge", topology: "debate_judge", roles: [] }];
    },
    onRunEvent(l) {
      runListener = l;
      return { dispose: () => (runListener = () => undefined) };
    },
  };
  Object.assign(h, { doc, panel, backend, posted: () => panel.posted as HostMessage[] });
  const provider = new CanvasEditorProvider(vscode.Uri.file("/ext") as never, backend);
  provider.resolveCustomTextEditor(doc as never, panel as never);
  return h;
}

// An edit that appends text at the end of line 0 (as the sidecar would answer with a TextEdit).
const appendLine0 = (suffix: string) => async (t: string): Promise<LspTextEdit[]> => {
  const first = t.split("\n")[0];
  return [{ range: { start: { line: 0, character: first.length }, end: { line: 0, character: first.length } }, newText: suffix }];
};

test("the webview page: scripts enabled, resources only from out/webview, URIs through asWebviewUri", () => {
  const h = setup("version: 0.2\n", appendLine0(""));
  assert.equal(h.panel.webview.options.enableScripts, true);
  assert.deepEqual(h.panel.webview.options.localResourceRoots!.map((u) => u.fsPath), ["/ext/out/webview"]);
  assert.match(h.panel.webview.html, /<script nonce="[A-Za-z0-9]{32}" src="https:\/\/\/ext\/out\/webview\/canvas\.js">/);
  assert.match(h.panel.webview.html, /style-src https:\/\/file\+\.vscode-resource\.vscode-cdn\.net;/);
});

test("ready: the host sends the patterns, the document's flow and its newest run's per-agent spend", async () => {
  const h = setup("version: 0.2\n", appendLine0(""));
  h.panel.received.fire({ type: "ready" });
  await settle(20);
  const types = h.posted().map((m) => m.type).sort();
  assert.deepEqual(types, ["flow", "patterns", "runSpend"]);
  assert.deepEqual(h.backend.spendAsked, ["team"], "the runs of this flow (team.yaml)");
  const spend = h.posted().find((m) => m.type === "runSpend") as Extract<HostMessage, { type: "runSpend" }>;
  assert.equal(spend.runId, "r1");
  assert.equal(spend.agents.coder.tokens, 1500);
  const flow = h.posted().find((m) => m.type === "flow") as Extract<HostMessage, { type: "flow" }>;
  assert.equal(flow.version, 1);
  assert.deepEqual(h.backend.loads, ["version: 0.2\n"]);
});

test("ops become the sidecar's text edits, applied to the document; the canvas then gets the new flow", async () => {
  const h = setup("version: 0.2\nagents: []\n", appendLine0(" # edited"));
  h.panel.received.fire({ type: "edit", ops: [{ op: "set", path: "/agents/0/name", value: "A" }] });
  await settle();
  assert.equal(h.doc.getText(), "version: 0.2 # edited\nagents: []\n");
  assert.equal(h.backend.editCalls.length, 1);
  assert.deepEqual(h.backend.editCalls[0], { version: 1, text: "version: 0.2\nagents: []\n", ops: [{ op: "set", path: "/agents/0/name", value: "A" }] });
  const flows = h.posted().filter((m) => m.type === "flow") as Array<Extract<HostMessage, { type: "flow" }>>;
  assert.equal(flows.length, 1, "one debounced reload after the edit");
  assert.equal(flows[0].version, 2);
  assert.equal(h.backend.loads.at(-1), "version: 0.2 # edited\nagents: []\n");
});

test("edits are applied one after another, each against the text the previous one left", async () => {
  const h = setup("v\n", appendLine0("+"));
  h.panel.received.fire({ type: "edit", ops: [{ op: "removeNode", id: "a" }] });
  h.panel.received.fire({ type: "edit", ops: [{ op: "removeNode", id: "b" }] });
  await settle();
  assert.equal(h.doc.getText(), "v++\n");
  assert.deepEqual(h.backend.editCalls.map((c) => [c.version, c.text]), [[1, "v\n"], [2, "v+\n"]]);
});

test("if the document changes while the sidecar answers, the edits are asked for again", async () => {
  let first = true;
  const h = setup("abc\n", async (t, _ops, hh) => {
    if (first) {
      first = false;
      // The user types meanwhile.
      hh.doc.edit([{ range: new vscode.Range(0, 0, 0, 0) as never, newText: "X" }]);
    }
    return appendLine0("!")(t);
  });
  h.panel.received.fire({ type: "edit", ops: [{ op: "moveNode", id: "a", position: { x: 1, y: 2 } }] });
  await settle();
  assert.equal(h.backend.editCalls.length, 2);
  assert.equal(h.backend.editCalls[1].text, "Xabc\n");
  assert.equal(h.doc.getText(), "Xabc!\n");
});

test("an op the sidecar refuses leaves the document alone and tells the canvas why", async () => {
  const h = setup("abc\n", async () => {
    throw new Error("op 0 (set): /agents/9: no such agent");
  });
  h.panel.received.fire({ type: "edit", ops: [{ op: "set", path: "/agents/9/name", value: "x" }] });
  await settle(30);
  assert.equal(h.doc.getText(), "abc\n");
  const failed = h.posted().find((m) => m.type === "editFailed") as Extract<HostMessage, { type: "editFailed" }>;
  assert.match(failed.message, /op 0 \(set\): \/agents\/9: no such agent/);
});

test("typing in the YAML updates the canvas once, after a pause", async () => {
  const h = setup("a\n", appendLine0(""));
  for (const c of "bcd") h.doc.edit([{ range: new vscode.Range(0, 1, 0, 1) as never, newText: c }]);
  await settle();
  const flows = h.posted().filter((m) => m.type === "flow") as Array<Extract<HostMessage, { type: "flow" }>>;
  assert.equal(flows.length, 1);
  assert.equal(flows[0].version, 4);
});

test("reveal selects the span, converting code-point columns to UTF-16", async () => {
  const h = setup("agents:\n  - id: a😀b\n    name: x\n", appendLine0(""));
  h.panel.received.fire({ type: "reveal", path: "/agents/0/id", range: { start: { line: 2, column: 9, offset: 0 }, end: { line: 2, column: 12, offset: 0 } } });
  await settle(20);
  const sel = calls.shown.at(-1)!.options.selection;
  assert.deepEqual([sel.start.line, sel.start.character, sel.end.line, sel.end.character], [1, 8, 1, 12]);
});

test("undo and redo run the workbench's commands; run events of this flow only are forwarded", async () => {
  const h = setup("a\n", appendLine0(""));
  calls.commands.length = 0;
  h.panel.received.fire({ type: "undo" });
  h.panel.received.fire({ type: "redo" });
  assert.deepEqual(calls.commands, [["undo"], ["redo"]]);
  h.backend.runEvent({ ts: 1, flow: "other", event: "step" });
  h.backend.runEvent({ ts: 2, flow: "team", event: "step", edgeId: "i1-e1" });
  const evs = h.posted().filter((m) => m.type === "runEvent") as Array<Extract<HostMessage, { type: "runEvent" }>>;
  assert.deepEqual(evs.map((e) => e.event.ts), [2]);
  h.panel.disposed.fire();
  h.backend.runEvent({ ts: 3, flow: "team", event: "step" });
  assert.equal(h.posted().filter((m) => m.type === "runEvent").length, 1);
});

test("the overlay's Last turn runs Show Transcript for that run and agent; a message without both strings runs nothing", () => {
  const h = setup("a\n", appendLine0(""));
  calls.commands.length = 0;
  h.panel.received.fire({ type: "showTranscript", runId: "run_7", agentId: "coder" });
  assert.deepEqual(calls.commands, [["agentcanvas.showTranscript", { runId: "run_7", agent: "coder" }]]);
  h.panel.received.fire({ type: "showTranscript", runId: "run_7" });
  h.panel.received.fire({ type: "showTranscript", runId: 7, agentId: { id: "coder" } });
  assert.equal(calls.commands.length, 1);
});

test("the provider is registered for every view type package.json contributes", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../../../package.json", import.meta.url), "utf8"));
  const contributed = (pkg.contributes.customEditors as Array<{ viewType: string }>).map((c) => c.viewType);
  assert.equal(new Set(contributed).size, contributed.length, "a view type contributed twice is dropped by VS Code");
  const sub = CanvasEditorProvider.register({ extensionUri: vscode.Uri.file("/ext") } as never, {} as never);
  assert.deepEqual([...registered].sort(), [...contributed].sort());
  sub.dispose();
  assert.deepEqual(registered, []);
});
