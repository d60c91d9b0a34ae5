// The requests waiting for the user. They come from agentcanvas/runEvent notifications and, after
// a window reload, from listRuns (the sidecar keeps them; the extension keeps nothing). One prompt
// is open at a time, so ten agents asking at once do not open ten dialogs.
import * as vscode from 'vscode';
import { readPending, REQUEST_EVENTS, type PendingRequest, type RunEvent } from '../protocol';
import { pendingKey, answerRequest, secretKey, type Answer } from './requests';

/** Events that ask the user something. */
const OPENING_EVENTS = new Set<string>(REQUEST_EVENTS);

/** Events after which a request is no longer pending, whoever answered it. */
const CLOSING_EVENTS = new Set([
  'question_answered',
  'dependency_provided',
  'dependency_rejected',
  'dependency_resolved',
  'phase_resolved',
  'recovery_resolved',
  'request_expired',
  'request_cancelled',
  'run_finished',
  'run_failed',
  'run_stopped',
]);

export interface PendingSink {
  ask(p: PendingRequest): Promise<Answer | undefined>;
  send(method: string, params: unknown): Promise<unknown>;
  onSecretProvided(p: PendingRequest, value: string): Promise<void>;
  error(message: string): void;
}

export class PendingQueue {
  private readonly items = new Map<string, PendingRequest>();
  private prompting: string | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly sink: PendingSink) {}

  list(): PendingRequest[] {
    return [...this.items.values()];
  }
  get size(): number {
    return this.items.size;
  }

  /** Replaces everything the sidecar knows about (after activation or a restart). */
  replaceAll(reqs: PendingRequest[]): void {
    this.items.clear();
    for (const r of reqs) this.items.set(pendingKey(r), r);
    this.changed.fire();
  }

  add(r: PendingRequest): void {
    this.items.set(pendingKey(r), r);
    this.changed.fire();
  }

  remove(runId: string, requestId: string): void {
    if (this.items.delete(pendingKey({ runId, requestId }))) this.changed.fire();
  }

  /** Updates the queue from a run event; true when a new request arrived. */
  onRunEvent(ev: RunEvent): boolean {
    if (OPENING_EVENTS.has(ev.event)) {
      const p = readPending(ev, ev.runId);
      if (p) {
        this.add(p);
        return true;
      }
      return false;
    }
    if (CLOSING_EVENTS.has(ev.event)) {
      const data = (ev.data ?? {}) as Record<string, unknown>;
      const id = [ev.requestId, ev.questionId, ev.id, data.requestId, data.questionId, data.id].find((x): x is string => typeof x === 'string');
      if (id) this.remove(ev.runId, id);
      else if (ev.event.startsWith('run_')) for (const p of this.list()) if (p.runId === ev.runId) this.remove(p.runId, p.requestId);
    }
    return false;
  }

  /**
   * Prompts for the next request (or the given one) unless a prompt is already open. Dismissing a
   * prompt stops the round: the rest stay pending until the user asks for them.
   */
  async promptNext(which?: PendingRequest): Promise<void> {
    if (this.prompting) return;
    let p = which ?? this.list()[0];
    while (p) {
      const key = pendingKey(p);
      this.prompting = key;
      let answer: Answer | undefined;
      try {
        answer = await this.sink.ask(p);
      } finally {
        this.prompting = undefined;
      }
      if (!answer || !this.items.has(key)) return; // dismissed, or answered elsewhere meanwhile
      const { method, params } = answerRequest(p, answer);
      try {
        await this.sink.send(method, params);
        if (answer.kind === 'provide' && p.kind === 'dependency') await this.sink.onSecretProvided(p, answer.value);
        this.remove(p.runId, p.requestId);
      } catch (e) {
        this.sink.error(`answering ${p.kind === 'question' ? 'the question' : p.dependency.name} failed: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      p = this.list()[0];
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export { secretKey };
