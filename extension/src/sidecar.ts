// The sidecar process and the language client around it (the rust-analyzer ctx.ts habit): one
// object that starts, stops and restarts `agentcanvas serve`, and that every command goes through.
// A command that needs the sidecar while it is down gets NotRunningError, which withSidecar turns
// into one message with a Restart action instead of an exception in the extension host.
import * as vscode from 'vscode';
import * as os from 'node:os';
import * as fs from 'node:fs/promises';
import { execFile } from 'node:child_process';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type CloseHandlerResult,
  type ErrorHandler,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { findSidecar, SidecarNotFoundError, type Host, type Sidecar as SidecarBinary } from './bootstrap';
import { CrashCap } from './crashCap';
import type { Log } from './log';
import { Notification, readStatus } from './protocol';
import type { StatusItem } from './status';
import { noLinks } from './views/markdownText';

export const NOT_RUNNING = 'AgentCanvas sidecar is not running';

/**
 * The language client, minus its own error pop-ups: it forces a notification when a restart or
 * an initialize fails, which during a crash loop is one pop-up per attempt. Everything is still
 * logged; SidecarClient decides what the user is told, once.
 */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }
}

export class NotRunningError extends Error {
  constructor() {
    super(NOT_RUNNING);
    this.name = 'NotRunningError';
  }
}

/** Flow files the language client syncs and the sidecar diagnoses (docs/design.md). */
export const flowDocumentSelector = [
  { scheme: 'file', pattern: '**/.agentcanvas/flows/*.yaml' },
  { scheme: 'file', pattern: '**/flows/*.yaml' },
];

/**
 * The agentcanvas.* settings the sidecar honours, sent as initializationOptions (docs/protocol.md,
 * "Settings"); the defaults are package.json's.
 */
export function sidecarSettings(cfg: { get<T>(key: string, defaultValue: T): T }): { allowedFolders: string[]; blockedFolders: string[]; autoApply: string; confinement: string; gateway: string; gatewayPricing: object } {
  return {
    allowedFolders: cfg.get<string[]>('allowedFolders', []),
    blockedFolders: cfg.get<string[]>('blockedFolders', []),
    autoApply: cfg.get<string>('autoApply', 'off'),
    confinement: cfg.get<string>('confinement', 'auto'),
    gateway: cfg.get<string>('gateway', 'auto'),
    gatewayPricing: cfg.get<object>('gatewayPricing', {}),
  };
}

type NotificationHandler = (params: unknown) => void;

export class SidecarClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private binary: SidecarBinary | undefined;
  private readonly crashCap = new CrashCap(5, 3 * 60_000);
  private stopping = false;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  /** The client whose crash was already counted (a crash during initialize is seen twice). */
  private crashCounted: LanguageClient | undefined;
  /** Delay before the n-th automatic restart in the window: a little backoff, no busy loop. */
  restartDelayMs = (n: number): number => 250 * n;
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private readonly handlerDisposables: vscode.Disposable[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<boolean>();
  /** Fires true when the sidecar becomes ready, false when it goes down. */
  readonly onDidChangeRunning = this.stateEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: Log,
    private readonly status: StatusItem,
  ) {
    this.onNotification(Notification.status, (p) => this.status.setHealth(readStatus(p)));
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  get version(): string | undefined {
    return this.binary?.version;
  }

  /** The sidecar executable in use (for one-off commands such as doctor). */
  get binaryPath(): string | undefined {
    return this.binary?.path;
  }

  /** The language client's diagnostics collection (flow problems), when running. */
  get diagnostics(): vscode.DiagnosticCollection | undefined {
    return this.client?.diagnostics;
  }

  /**
   * Registers a handler for a sidecar notification; it survives restarts. Several handlers may
   * listen to one method (the Runs view and the canvas both follow runEvent): the language client
   * keeps one handler per method, so SidecarClient registers one dispatcher per method.
   */
  onNotification(method: string, handler: NotificationHandler): vscode.Disposable {
    let set = this.handlers.get(method);
    if (!set) {
      set = new Set();
      this.handlers.set(method, set);
      if (this.client) this.handlerDisposables.push(this.client.onNotification(method, (p: unknown) => this.dispatch(method, p)));
    }
    set.add(handler);
    return new vscode.Disposable(() => set.delete(handler));
  }

  private dispatch(method: string, params: unknown): void {
    for (const h of [...(this.handlers.get(method) ?? [])]) {
      try {
        h(params);
      } catch (e) {
        this.log.error(`handling ${method}`, e); // one broken listener must not starve the others
      }
    }
  }

  async request<R = unknown>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    if (!this.client || !this.running) throw new NotRunningError();
    return token ? this.client.sendRequest<R>(method, params, token) : this.client.sendRequest<R>(method, params);
  }

  async start(): Promise<void> {
    if (this.client) return;
    this.status.setState('starting');
    try {
      this.binary = await findSidecar(this.host());
    } catch (e) {
      this.status.setState('failed');
      await this.setRunningContext(false);
      if (e instanceof SidecarNotFoundError) {
        this.log.error(e.message);
        for (const t of e.tried) this.log.info(`  tried ${t}`);
      } else {
        this.log.error('finding the sidecar failed', e);
      }
      void this.notifyDown(e instanceof Error ? e.message : String(e));
      return;
    }
    this.log.info(`starting ${this.binary.path} serve (agentcanvas ${this.binary.version}, from ${this.binary.source})`);

    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command: this.binary.path,
      args: ['serve'],
      options: { cwd: folder ?? os.homedir(), env: { ...process.env } },
    };
    const cfg = vscode.workspace.getConfiguration('agentcanvas');
    const clientOptions: LanguageClientOptions = {
      documentSelector: flowDocumentSelector,
      outputChannel: this.log.redactingChannel(),
      traceOutputChannel: this.log.redactingChannel(),
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      errorHandler: this.errorHandler(),
      // false: no retry and no pop-up from the client; the close or the failed start counts as a crash
      initializationFailedHandler: (e) => {
        this.log.error('the sidecar failed to initialize', e);
        return false;
      },
      initializationOptions: sidecarSettings(cfg),
      // The client sends workspace/didChangeConfiguration with the whole agentcanvas section
      // right after start and on every change: the sidecar honours the new settings at once.
      // settings only: the sidecar watches flows and proposals on disk itself
      synchronize: { configurationSection: 'agentcanvas' },
    };
    const client = new QuietLanguageClient('agentcanvas', 'AgentCanvas', serverOptions, clientOptions);
    this.client = client;
    this.stopping = false;
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.status.setState('running');
        void this.setRunningContext(true);
        this.stateEmitter.fire(true);
      } else if (e.newState === State.Stopped) {
        this.status.setState(this.stopping ? 'stopped' : 'failed');
        void this.setRunningContext(false);
        this.stateEmitter.fire(false);
      } else if (e.newState === State.Starting) {
        this.status.setState('starting');
      }
    });
    for (const m of this.handlers.keys()) this.handlerDisposables.push(client.onNotification(m, (p: unknown) => this.dispatch(m, p)));
    try {
      await client.start();
      this.log.info('sidecar ready');
    } catch (e) {
      this.crashed(client, `the sidecar failed to start: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  async stop(): Promise<void> {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const c = this.client;
    this.client = undefined;
    for (const d of this.handlerDisposables.splice(0)) d.dispose();
    if (!c) return;
    this.stopping = true;
    try {
      if (c.state !== State.Stopped && c.state !== State.StartFailed) await c.stop(5000);
    } catch (e) {
      this.log.warn(`stopping the sidecar: ${e instanceof Error ? e.message : String(e)}`);
    }
    try {
      await c.dispose(2000);
    } catch {
      // already stopped
    }
    this.status.setState('stopped');
    await this.setRunningContext(false);
  }

  /** A user-requested restart: also resets the crash budget. */
  async restart(): Promise<void> {
    this.log.info('restarting the sidecar');
    this.crashCap.reset();
    await this.stop();
    await this.start();
  }

  private errorHandler(): ErrorHandler {
    return {
      error: (error: Error, _msg, count): ErrorHandlerResult => {
        this.log.error(`sidecar connection error (${count ?? 1})`, error);
        // A few broken messages are survivable; a stream that keeps failing is not.
        return { action: (count ?? 1) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true };
      },
      closed: (): CloseHandlerResult => {
        // The client never restarts itself: restarts are ours, counted against the cap.
        if (!this.stopping && this.client) this.crashed(this.client, 'the sidecar exited unexpectedly');
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    };
  }

  /**
   * A crash (an exit, or a start that failed). Below the cap: log it and restart after a short
   * delay, silently. At the cap: stay down and say so once.
   */
  private crashed(client: LanguageClient, reason: string): void {
    if (this.stopping || this.crashCounted === client || client !== this.client) return;
    this.crashCounted = client;
    if (this.crashCap.recordCrash()) {
      const n = this.crashCap.recent;
      this.log.warn(`${reason}; restarting (${n} crash(es) in the last 3 minutes)`);
      this.status.setState('starting');
      clearTimeout(this.restartTimer);
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        void this.stop().then(() => this.start());
      }, this.restartDelayMs(n));
      return;
    }
    const msg = `The AgentCanvas sidecar crashed ${this.crashCap.recent} times in the last 3 minutes and will not be restarted automatically.`;
    this.log.error(`${reason}. ${msg}`);
    this.status.setState('failed');
    void this.setRunningContext(false);
    void this.notifyDown(msg);
  }

  /** One notification, with the two things a user can do about it. */
  private async notifyDown(message: string): Promise<void> {
    const pick = await vscode.window.showErrorMessage(message, 'Restart', 'Show Log');
    if (pick === 'Restart') await vscode.commands.executeCommand('agentcanvas.restartSidecar');
    else if (pick === 'Show Log') this.log.show();
  }

  private async setRunningContext(v: boolean): Promise<void> {
    await vscode.commands.executeCommand('setContext', 'agentcanvas.sidecarRunning', v);
  }

  private host(): Host {
    const setting = vscode.workspace.getConfiguration('agentcanvas').get<string>('sidecarPath');
    return {
      platform: process.platform,
      arch: process.arch,
      extensionPath: this.context.extensionPath,
      setting,
      env: process.env,
      homeDir: os.homedir(),
      workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      isFile: async (p) => {
        try {
          return (await fs.stat(p)).isFile();
        } catch {
          return false;
        }
      },
      runVersion: (p) =>
        new Promise((resolve, reject) => {
          execFile(p, ['version'], { timeout: 10_000, windowsHide: true }, (err, stdout, stderr) => {
            if (err) reject(new Error(stderr.trim() || err.message));
            else resolve(stdout);
          });
        }),
    };
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
  }
}

/**
 * Runs fn against the sidecar; when it is down, says so once with Restart and Show Log actions
 * instead of throwing. Other errors are shown as a message and logged.
 */
export async function withSidecar<T>(sidecar: SidecarClient, log: Log, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof NotRunningError) {
      const pick = await vscode.window.showWarningMessage(NOT_RUNNING, 'Restart', 'Show Log');
      if (pick === 'Restart') await sidecar.restart();
      else if (pick === 'Show Log') log.show();
      return undefined;
    }
    if (e instanceof vscode.CancellationError) return undefined;
    const msg = describeError(e);
    log.error(msg);
    void vscode.window.showErrorMessage(`AgentCanvas: ${msg}`);
    return undefined;
  }
}

/** JSON-RPC errors carry a code; "method not found" means this sidecar build lacks the feature. */
export function describeError(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  const message = e instanceof Error ? e.message : String(e);
  if (code === -32601 || code === -32010) return noLinks(`this sidecar build does not support that yet (${message})`);
  return noLinks(message); // shown in notifications: it may quote an agent's words or a file's name
}
