// The canvas custom editor: a CustomTextEditorProvider for flow YAML. The TextDocument is the
// model (as in VS Code's custom-editor sample): the webview shows the sidecar's reading of the
// document's text, and every canvas change goes webview → edit ops → sidecar editFlow → TextEdits
// → WorkspaceEdit on the document. So undo, redo, save, dirty state and hot exit are the text
// editor's, and text typed in the YAML editor shows on the canvas as it is typed.
import * as path from "node:path";
import * as vscode from "vscode";
import type { CanvasBackend, LspTextEdit } from "./backend";
import { canvasHtml, newNonce } from "./html";
import { debounce, nearestSpan, utf16Character } from "./positions";
import type { FlowOp, HostMessage, SrcRange, WebviewMessage } from "./protocol";

/**
 * The canvas's view type: the default editor of every flow file, `.agentcanvas/flows/*.yaml` and
 * `flows/*.yaml` (package.json's customEditors), as the guide says; "Reopen Editor With… → Text
 * Editor" shows the YAML.
 */
export const CANVAS_VIEW_TYPE = "agentcanvas.canvas";
const RELOAD_DEBOUNCE_MS = 150;

export class CanvasEditorProvider implements vscode.CustomTextEditorProvider {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly backend: CanvasBackend,
    private readonly log?: vscode.OutputChannel,
  ) {}

  /** register registers the provider for the canvas's view type. */
  static register(context: vscode.ExtensionContext, backend: CanvasBackend, log?: vscode.OutputChannel): vscode.Disposable {
    const provider = new CanvasEditorProvider(context.extensionUri, backend, log);
    const options = {
      // The webview restores its viewport and selection itself (getState), so it need not be
      // kept alive while hidden.
      webviewOptions: { retainContextWhenHidden: false },
      supportsMultipleEditorsPerDocument: true,
    };
    return vscode.window.registerCustomEditorProvider(CANVAS_VIEW_TYPE, provider, options);
  }

  resolveCustomTextEditor(document: vscode.TextDocument, panel: vscode.WebviewPanel): void {
    const webview = panel.webview;
    const root = vscode.Uri.joinPath(this.extensionUri, "out", "webview");
    webview.options = { enableScripts: true, localResourceRoots: [root] };
    webview.html = canvasHtml({
      cspSource: webview.cspSource,
      nonce: newNonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(root, "canvas.js")).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(root, "canvas.css")).toString(),
      workerUri: webview.asWebviewUri(vscode.Uri.joinPath(root, "layout-worker.js")).toString(),
      title: path.basename(document.uri.fsPath),
    });
    const session = new CanvasSession(document, panel, this.backend, this.log);
    panel.onDidDispose(() => session.dispose());
  }
}

/** One open canvas: keeps the webview in step with its document. */
class CanvasSession {
  private readonly subs: vscode.Disposable[] = [];
  private readonly reload = debounce(() => void this.sendFlow(), RELOAD_DEBOUNCE_MS);
  private loadSeq = 0;
  private edits: Promise<void> = Promise.resolve();
  private disposed = false;

  constructor(
    private readonly document: vscode.TextDocument,
    private readonly panel: vscode.WebviewPanel,
    private readonly backend: CanvasBackend,
    private readonly log?: vscode.OutputChannel,
  ) {
    this.subs.push(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.toString() === document.uri.toString() && e.contentChanges.length > 0) this.reload();
      }),
      panel.webview.onDidReceiveMessage((m: WebviewMessage) => this.onMessage(m)),
      backend.onRunEvent((e) => {
        // Events name their flow by file name without .yaml; show only this flow's.
        if (!e.flow || e.flow === this.flowName()) this.post({ type: "runEvent", event: e });
      }),
    );
  }

  /** The flow's name as runs give it: its file's name without .yaml. */
  private flowName(): string {
    return path.basename(this.document.uri.fsPath).replace(/\.ya?ml$/i, "");
  }

  dispose(): void {
    this.disposed = true;
    this.reload.cancel();
    for (const s of this.subs) s.dispose();
  }

  private post(m: HostMessage): void {
    if (!this.disposed) void this.panel.webview.postMessage(m);
  }

  private onMessage(m: WebviewMessage): void {
    switch (m.type) {
      case "ready":
        void this.sendFlow();
        this.backend.listPatterns().then(
          (patterns) => this.post({ type: "patterns", patterns }),
          (e) => this.log?.appendLine(`canvas: listPatterns: ${errorText(e)}`),
        );
        // what the flow's newest run spent per agent, for its cards after a window reload
        this.backend.lastRunSpend(this.flowName()).then(
          (s) => s && this.post({ type: "runSpend", ...s }),
          (e) => this.log?.appendLine(`canvas: listRuns: ${errorText(e)}`),
        );
        break;
      case "edit":
        this.edits = this.edits.then(() => this.applyOps(m.ops));
        break;
      case "reveal":
        void this.reveal(m.path, m.range);
        break;
      case "undo":
      case "redo":
        // The workbench's undo/redo act on the active custom text editor's document.
        void vscode.commands.executeCommand(m.type);
        break;
      case "error":
        this.log?.appendLine(`canvas: ${m.message}`);
        break;
      case "showTranscript":
        // The same command as the Runs view's agents; ids that are not strings are not asked for.
        if (typeof m.runId === "string" && typeof m.agentId === "string") {
          void vscode.commands.executeCommand("agentcanvas.showTranscript", { runId: m.runId, agent: m.agentId });
        } else this.log?.appendLine("canvas: showTranscript without a run and an agent");
        break;
      case "forkRun":
        // Fork from Here, at the turn of this agent the person picks (commands/forkCommands.ts).
        if (typeof m.runId === "string" && typeof m.agentId === "string") {
          void vscode.commands.executeCommand("agentcanvas.forkRun", { runId: m.runId, agentId: m.agentId });
        } else this.log?.appendLine("canvas: forkRun without a run and an agent");
        break;
    }
  }

  private async sendFlow(): Promise<void> {
    const seq = ++this.loadSeq;
    const version = this.document.version;
    try {
      const r = await this.backend.loadFlow(this.document.uri.toString(), this.document.getText());
      if (seq !== this.loadSeq) return; // a newer load is on its way
      this.post({ type: "flow", version, flow: r.flow, diagnostics: r.diagnostics ?? [] });
    } catch (e) {
      this.log?.appendLine(`canvas: loadFlow: ${errorText(e)}`);
      this.post({ type: "editFailed", message: `Could not read the flow: ${errorText(e)}` });
    }
  }

  // Ops → TextEdits against the text as it is now → one WorkspaceEdit. If the document changed
  // while the sidecar was answering, the edits are for old text: ask again.
  private async applyOps(ops: FlowOp[]): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const version = this.document.version;
      let edits: LspTextEdit[];
      try {
        edits = await this.backend.editFlow(this.document.uri.toString(), version, this.document.getText(), ops);
      } catch (e) {
        this.post({ type: "editFailed", message: `The change was not made: ${errorText(e)}` });
        void this.sendFlow(); // put back what the document says
        return;
      }
      if (this.document.version !== version) continue;
      if (edits.length === 0) return;
      const we = new vscode.WorkspaceEdit();
      for (const e of edits) {
        we.replace(this.document.uri, new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.newText);
      }
      if (await vscode.workspace.applyEdit(we)) return;
      if (this.document.version === version) break;
    }
    this.post({ type: "editFailed", message: "The change was not made: the document kept changing; try again." });
    void this.sendFlow();
  }

  private async reveal(modelPath: string, range?: SrcRange): Promise<void> {
    let r = range;
    if (!r) {
      const loaded = await this.backend.loadFlow(this.document.uri.toString(), this.document.getText()).catch(() => undefined);
      r = nearestSpan(loaded?.flow?.spans, modelPath);
    }
    const pos = (p: { line: number; column: number }) => {
      const line = Math.min(Math.max(0, p.line - 1), Math.max(0, this.document.lineCount - 1));
      return new vscode.Position(line, utf16Character(this.document.lineAt(line).text, p.column));
    };
    const sel = r ? new vscode.Range(pos(r.start), pos(r.end)) : new vscode.Range(0, 0, 0, 0);
    const editor = await vscode.window.showTextDocument(this.document, { viewColumn: vscode.ViewColumn.Beside, selection: sel, preserveFocus: false });
    editor.revealRange(sel, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
