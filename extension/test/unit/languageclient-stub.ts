// Stands in for vscode-languageclient/node in unit tests: records what the SidecarClient gives
// the LanguageClient (options, error handler) and lets tests drive its state and requests.
export enum State {
  Stopped = 1,
  Starting = 3,
  StartFailed = 4,
  Running = 2,
}
export enum ErrorAction {
  Continue = 1,
  Shutdown = 2,
}
export enum CloseAction {
  DoNotRestart = 1,
  Restart = 2,
}
export enum RevealOutputChannelOn {
  Debug = 0,
  Info = 1,
  Warn = 2,
  Error = 3,
  Never = 4,
}

type Listener = (e: { oldState: State; newState: State }) => void;

export const clients: LanguageClient[] = [];

export class LanguageClient {
  state = State.Stopped;
  readonly requests: Array<{ method: string; params: unknown }> = [];
  readonly notificationHandlers = new Map<string, (p: unknown) => void>();
  /** What the next sendRequest answers, by method. */
  answers = new Map<string, (params: unknown) => unknown>();
  private listeners: Listener[] = [];
  diagnostics = undefined;

  constructor(
    readonly id: string,
    readonly name: string,
    readonly serverOptions: { command: string; args: string[] },
    readonly clientOptions: { errorHandler: { error: Function; closed: Function }; documentSelector: unknown[]; initializationOptions?: unknown; synchronize?: { configurationSection?: string } },
  ) {
    clients.push(this);
  }
  onDidChangeState(l: Listener) {
    this.listeners.push(l);
    return { dispose() {} };
  }
  setState(s: State) {
    const old = this.state;
    this.state = s;
    for (const l of this.listeners) l({ oldState: old, newState: s });
  }
  onNotification(method: string, h: (p: unknown) => void) {
    this.notificationHandlers.set(method, h);
    return { dispose: () => this.notificationHandlers.delete(method) };
  }
  async start() {
    this.setState(State.Running);
  }
  async stop() {
    this.setState(State.Stopped);
  }
  async dispose() {}
  async sendRequest(method: string, params: unknown) {
    this.requests.push({ method, params });
    const a = this.answers.get(method);
    if (!a) throw Object.assign(new Error(`${method}: not available yet`), { code: -32010 });
    return a(params);
  }
}
