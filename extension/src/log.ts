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
  dispose(): void {
    this.channel.dispose();
  }
}
