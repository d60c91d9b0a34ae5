// Just enough of the vscode API for the canvas provider's unit test (bundled in place of
// "vscode" by build.mjs --tests). The document applies edits as VS Code does: by line and
// UTF-16 character, bumping the version and firing onDidChangeTextDocument.

type Listener<T> = (e: T) => void;
export class EventEmitter<T> {
  private ls: Listener<T>[] = [];
  event = (l: Listener<T>) => {
    this.ls.push(l);
    return { dispose: () => (this.ls = this.ls.filter((x) => x !== l)) };
  };
  fire(e: T) {
    for (const l of [...this.ls]) l(e);
  }
}

export class Uri {
  constructor(readonly fsPath: string, readonly scheme = "file") {}
  static file(p: string) {
    return new Uri(p);
  }
  static joinPath(u: Uri, ...parts: string[]) {
    return new Uri([u.fsPath, ...parts].join("/"));
  }
  toString() {
    return `${this.scheme}://${this.fsPath}`;
  }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: number | Position, b: number | Position, c?: number, d?: number) {
    if (typeof a === "number") {
      this.start = new Position(a, b as number);
      this.end = new Position(c!, d!);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
}

export class WorkspaceEdit {
  readonly edits: Array<{ uri: Uri; range: Range; newText: string }> = [];
  replace(uri: Uri, range: Range, newText: string) {
    this.edits.push({ uri, range, newText });
  }
}

export class FakeDocument {
  version = 1;
  constructor(readonly uri: Uri, public text: string) {}
  getText() {
    return this.text;
  }
  get lineCount() {
    return this.text.split("\n").length;
  }
  lineAt(line: number) {
    return { text: this.text.split("\n")[line] ?? "" };
  }
  offsetAt(p: Position) {
    const lines = this.text.split("\n");
    let off = 0;
    for (let i = 0; i < p.line && i < lines.length; i++) off += lines[i].length + 1;
    return off + p.character;
  }
  /** edit replaces ranges (applied from the end so offsets stay valid). */
  edit(edits: Array<{ range: Range; newText: string }>) {
    const sorted = [...edits].sort((x, y) => this.offsetAt(y.range.start) - this.offsetAt(x.range.start));
    for (const e of sorted) this.text = this.text.slice(0, this.offsetAt(e.range.start)) + e.newText + this.text.slice(this.offsetAt(e.range.end));
    this.version++;
    changes.fire({ document: this, contentChanges: edits });
  }
}

const changes = new EventEmitter<{ document: FakeDocument; contentChanges: unknown[] }>();
export const calls = { commands: [] as unknown[][], shown: [] as Array<{ doc: unknown; options: { selection: Range } }>, applied: 0 };

export const workspace = {
  onDidChangeTextDocument: changes.event,
  documents: [] as FakeDocument[],
  async applyEdit(we: WorkspaceEdit) {
    for (const d of workspace.documents) {
      const mine = we.edits.filter((e) => e.uri.toString() === d.uri.toString());
      if (mine.length) d.edit(mine);
    }
    calls.applied++;
    return true;
  },
};

export const commands = {
  async executeCommand(...args: unknown[]) {
    calls.commands.push(args);
  },
};

export const ViewColumn = { Beside: -2 };
export const TextEditorRevealType = { InCenterIfOutsideViewport: 2 };

export const registered: string[] = [];
export const window = {
  registerCustomEditorProvider: (viewType: string) => {
    registered.push(viewType);
    return { dispose: () => registered.splice(registered.indexOf(viewType), 1) };
  },
  async showTextDocument(doc: unknown, options: { selection: Range }) {
    calls.shown.push({ doc, options });
    return { revealRange() {} };
  },
};

export class FakePanel {
  readonly posted: unknown[] = [];
  readonly received = new EventEmitter<unknown>();
  readonly disposed = new EventEmitter<void>();
  readonly webview = {
    options: {} as { enableScripts?: boolean; localResourceRoots?: Uri[] },
    html: "",
    cspSource: "https://file+.vscode-resource.vscode-cdn.net",
    asWebviewUri: (u: Uri) => new Uri(u.fsPath, "https"),
    postMessage: async (m: unknown) => {
      this.posted.push(m);
      return true;
    },
    onDidReceiveMessage: this.received.event,
  };
  onDidDispose = this.disposed.event;
}
