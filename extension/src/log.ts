// The "AgentCanvas" output channel. Secret values the user typed this session are registered
// here and replaced by *** in every line, whatever code path tries to log them.
import * as vscode from 'vscode';

export class Log implements vscode.Disposable {
  private readonly secrets = new Set<string>();

  constructor(readonly channel: vscode.LogOutputChannel) {}

  /** Never log this value (and never a substring long enough to matter). */
  addSecret(value: string): void {
    if (value.length >= 4) this.secrets.add(value);
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('***');
    return out;
  }

  info(msg: string): void {
    this.channel.info(this.redact(msg));
  }
  warn(msg: string): void {
    this.channel.warn(this.redact(msg));
  }
  error(msg: string, err?: unknown): void {
    const detail = err === undefined ? '' : `: ${err instanceof Error ? err.message : String(err)}`;
    this.channel.error(this.redact(msg + detail));
  }
  show(): void {
    this.channel.show(true);
  }

  /**
   * An OutputChannel for the language client (the sidecar's stderr and, when the user turns on
   * agentcanvas.trace.server, every JSON-RPC message) that redacts secrets: a provideDependency
   * request carries the value the user typed.
   */
  redactingChannel(): vscode.LogOutputChannel {
    const ch = this.channel;
    const r = (v: string) => this.redact(v);
    const err = (e: string | Error) => (e instanceof Error ? new Error(r(e.message)) : r(e));
    return {
      name: ch.name,
      get logLevel() {
        return ch.logLevel;
      },
      onDidChangeLogLevel: ch.onDidChangeLogLevel,
      trace: (m: string, ...a: unknown[]) => ch.trace(r(m), ...a.map((x) => r(String(x)))),
      debug: (m: string, ...a: unknown[]) => ch.debug(r(m), ...a.map((x) => r(String(x)))),
      info: (m: string, ...a: unknown[]) => ch.info(r(m), ...a.map((x) => r(String(x)))),
      warn: (m: string, ...a: unknown[]) => ch.warn(r(m), ...a.map((x) => r(String(x)))),
      error: (e: string | Error, ...a: unknown[]) => ch.error(err(e), ...a.map((x) => r(String(x)))),
      append: (v: string) => ch.append(r(v)),
      appendLine: (v: string) => ch.appendLine(r(v)),
      replace: (v: string) => ch.replace(r(v)),
      clear: () => ch.clear(),
      show: (a?: unknown, b?: boolean) => ch.show(typeof a === 'boolean' ? a : b),
      hide: () => ch.hide(),
      dispose: () => undefined, // the Log owns the channel
    } as vscode.LogOutputChannel;
  }

  dispose(): void {
    this.channel.dispose();
  }
}
