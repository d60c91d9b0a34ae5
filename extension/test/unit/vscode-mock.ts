// A small stand-in for the `vscode` module, enough for the logic under test. Tests script the
// window.* prompts through `mock` (what the user "answers") and read back what was shown.
import { readFileSync } from 'node:fs';

export class Disposable {
  constructor(private readonly fn: () => void = () => {}) {}
  dispose(): void {
    this.fn();
  }
}

export class EventEmitter<T> {
  private listeners: Array<(e: T) => void> = [];
  event = (l: (e: T) => void) => {
    this.listeners.push(l);
    return new Disposable(() => (this.listeners = this.listeners.filter((x) => x !== l)));
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static from(c: { scheme: string; path: string }): Uri {
    return new Uri(c.scheme, c.path);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.path.replace(/\/+$/, ''), ...parts].join('/'));
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}
export class ThemeColor {
  constructor(readonly id: string) {}
}
export class MarkdownString {
  constructor(public value = '') {}
  appendMarkdown(s: string): this {
    this.value += s;
    return this;
  }
  appendText(s: string): this {
    this.value += s.replace(/[\\`*_{}[\]()#+\-.!]/g, '\\$&');
    return this;
  }
  appendCodeblock(code: string, language = ''): this {
    this.value += '\n```' + language + '\n' + code + '\n```\n';
    return this;
  }
}
export class Range {
  constructor(
    readonly startLine: number,
    readonly startCharacter: number,
    readonly endLine: number,
    readonly endCharacter: number,
  ) {}
  get start(): { line: number; character: number } {
    return { line: this.startLine, character: this.startCharacter };
  }
}
export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}
export enum TreeItemCheckboxState {
  Unchecked = 0,
  Checked = 1,
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}
export class TreeItem {
  id?: string;
  description?: string;
  iconPath?: ThemeIcon;
  contextValue?: string;
  tooltip?: unknown;
  command?: { command: string; title: string; arguments?: unknown[] };
  checkboxState?: TreeItemCheckboxState;
  resourceUri?: Uri;
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}
export class CancellationError extends Error {}

/** A tab's input: a text editor's, or a custom editor's (window.tabGroups). */
export class TabInputText {
  constructor(readonly uri: Uri) {}
}
export class TabInputCustom {
  constructor(
    readonly uri: Uri,
    readonly viewType: string,
  ) {}
}

/** A scripted QuickPick / InputBox: the test decides what the user does through `mock`. */
class FakeInput {
  title?: string;
  placeholder?: string;
  prompt?: string;
  value = '';
  password = false;
  ignoreFocusOut = false;
  items: Array<Record<string, unknown>> = [];
  activeItems: Array<Record<string, unknown>> = [];
  selectedItems: Array<Record<string, unknown>> = [];
  buttons: unknown[] = [];
  validationMessage?: string;
  readonly accept = new EventEmitter<void>();
  readonly hideE = new EventEmitter<void>();
  readonly button = new EventEmitter<unknown>();
  readonly changeValue = new EventEmitter<string>();
  onDidAccept = this.accept.event;
  onDidHide = this.hideE.event;
  onDidTriggerButton = this.button.event;
  onDidChangeValue = this.changeValue.event;
  constructor(readonly type: 'quickPick' | 'inputBox') {}
  show(): void {
    mock.shown.push(this);
    queueMicrotask(() => mock.onShow(this));
  }
  hide(): void {
    this.hideE.fire();
  }
  dispose(): void {}
}
export type { FakeInput };

export const mock = {
  shown: [] as FakeInput[],
  /** What the "user" does when an input appears; default: dismiss it. */
  onShow: (i: FakeInput) => i.hide(),
  messages: [] as Array<{ level: string; message: string; options?: unknown; items: string[] }>,
  /** Button the "user" clicks in the next message, by level. */
  messageAnswer: undefined as string | undefined,
  quickPickAnswer: undefined as ((items: Array<Record<string, unknown>>) => unknown) | undefined,
  openDialogAnswer: undefined as Uri[] | undefined,
  /** What the "user" types in the next showInputBox; undefined dismisses it. */
  inputBoxAnswer: undefined as string | undefined,
  commands: [] as Array<{ command: string; args: unknown[] }>,
  /** Commands registered (commands.registerCommand), by id: a test runs one as VS Code would. */
  registered: new Map<string, (...args: unknown[]) => unknown>(),
  /** Documents shown (window.showTextDocument), as { uri, text }. */
  shownDocs: [] as Array<{ uri: string; text: string }>,
  progress: [] as Array<{ opts: unknown; reports: unknown[]; cancel: () => void }>,
  reset(): void {
    this.progress = [];
    this.shown = [];
    this.onShow = (i) => i.hide();
    this.messages = [];
    this.messageAnswer = undefined;
    this.quickPickAnswer = undefined;
    this.openDialogAnswer = undefined;
    this.inputBoxAnswer = undefined;
    this.commands = [];
    this.registered.clear();
    this.shownDocs = [];
    contentProviders.clear();
    window.activeTextEditor = undefined;
    window.tabGroups.all = [];
    window.tabGroups.closed = [];
  },
};

function message(level: string) {
  return async (msg: string, ...rest: unknown[]) => {
    const options = rest[0] && typeof rest[0] === 'object' ? rest[0] : undefined;
    const items = rest.filter((x): x is string => typeof x === 'string');
    mock.messages.push({ level, message: msg, options, items });
    return mock.messageAnswer;
  };
}

export const window = {
  createQuickPick: () => new FakeInput('quickPick'),
  createInputBox: () => new FakeInput('inputBox'),
  showQuickPick: async (items: Array<Record<string, unknown>>) => mock.quickPickAnswer?.(items),
  showInformationMessage: message('info'),
  showWarningMessage: message('warning'),
  showErrorMessage: message('error'),
  showOpenDialog: async () => mock.openDialogAnswer,
  showInputBox: async () => mock.inputBoxAnswer,
  activeTextEditor: undefined as undefined | { document: { uri: Uri } },
  tabGroups: {
    all: [] as Array<{ viewColumn?: number; tabs: Array<{ input: unknown; isDirty?: boolean }> }>,
    /** Tabs closed (tabGroups.close), in order. */
    closed: [] as unknown[],
    close: async (tab: unknown) => {
      window.tabGroups.closed.push(tab);
      return true;
    },
  },
  /** Runs the task with a token the test can cancel through mock.progressCancel. */
  withProgress: async <T>(opts: unknown, task: (p: { report(v: unknown): void }, t: unknown) => Promise<T>) => {
    const src = new CancellationTokenSource();
    mock.progress.push({ opts, reports: [], cancel: () => src.cancel() });
    const entry = mock.progress[mock.progress.length - 1];
    return task({ report: (v) => entry.reports.push(v) }, src.token);
  },
  createStatusBarItem: () => ({ show() {}, dispose() {} }),
  showTextDocument: async (doc: { uri: Uri; getText(): string }) => {
    mock.shownDocs.push({ uri: doc.uri.toString(), text: doc.getText() });
    return { document: doc };
  },
};

export const commands = {
  executeCommand: async (command: string, ...args: unknown[]) => {
    mock.commands.push({ command, args });
    return undefined;
  },
  registerCommand: (command: string, fn: (...args: unknown[]) => unknown) => {
    mock.registered.set(command, fn);
    return new Disposable(() => mock.registered.delete(command));
  },
};

/** Text document content providers by scheme (workspace.registerTextDocumentContentProvider). */
const contentProviders = new Map<string, { provideTextDocumentContent(uri: Uri): string | Promise<string> }>();

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export class CancellationTokenSource {
  private readonly e = new EventEmitter<void>();
  token = { isCancellationRequested: false, onCancellationRequested: this.e.event };
  cancel(): void {
    this.token.isCancellationRequested = true;
    this.e.fire();
  }
}

/** Settings the code under test reads, by full key ("agentcanvas.sidecarPath"). */
export const settings = new Map<string, unknown>();

export const workspace = {
  workspaceFolders: undefined as undefined | Array<{ uri: Uri; name: string }>,
  textDocuments: [] as unknown[],
  getConfiguration: (section?: string) => ({
    get: <T>(k: string, d?: T) => (settings.has(section ? `${section}.${k}` : k) ? (settings.get(section ? `${section}.${k}` : k) as T) : d),
  }),
  asRelativePath: (u: Uri | string) => (typeof u === 'string' ? u : u.fsPath).replace(/^\/ws\//, ''),
  createFileSystemWatcher: () => ({ dispose() {}, onDidCreate: () => ({ dispose() {} }), onDidChange: () => ({ dispose() {} }), onDidDelete: () => ({ dispose() {} }) }),
  registerTextDocumentContentProvider: (scheme: string, p: { provideTextDocumentContent(uri: Uri): string | Promise<string> }) => {
    contentProviders.set(scheme, p);
    return new Disposable(() => contentProviders.delete(scheme));
  },
  /** A document of a registered scheme, read through its provider (the only kind the mock opens). */
  openTextDocument: async (uri: Uri) => {
    const p = contentProviders.get(uri.scheme);
    if (!p) throw new Error(`no content provider for ${uri.scheme}`);
    const text = await p.provideTextDocumentContent(uri);
    return { uri, getText: () => text };
  },
  /** workspace.fs over the real file system (file URIs' paths). */
  fs: {
    readFile: async (uri: Uri) => new Uint8Array(readFileSync(uri.fsPath)),
  },
};

// The Comments API: a controller that keeps the threads it made.
export enum CommentMode {
  Editing = 0,
  Preview = 1,
}
export enum CommentThreadState {
  Unresolved = 0,
  Resolved = 1,
}
export enum CommentThreadCollapsibleState {
  Collapsed = 0,
  Expanded = 1,
}
export interface MockThread {
  uri: Uri;
  range: Range;
  comments: unknown[];
  label?: string;
  canReply?: boolean;
  contextValue?: string;
  state?: CommentThreadState;
  collapsibleState?: CommentThreadCollapsibleState;
  disposed: boolean;
  dispose(): void;
}
export const comments = {
  createCommentController: (id: string, label: string) => {
    const threads: MockThread[] = [];
    return {
      id,
      label,
      threads,
      options: undefined as unknown,
      commentingRangeProvider: undefined as unknown,
      createCommentThread: (uri: Uri, range: Range, cs: unknown[]) => {
        const t: MockThread = { uri, range, comments: cs, disposed: false, dispose: () => (t.disposed = true) };
        threads.push(t);
        return t;
      },
      dispose() {},
    };
  },
};
