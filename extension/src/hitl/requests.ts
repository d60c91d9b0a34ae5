// Pure mapping from a pending USER_QUESTION / DEPENDENCY_REQUEST to what the user is shown and
// to the JSON-RPC call that answers it. No vscode import: unit-tested directly.
import type { DependencyFields, DependencyType, PendingRequest, QuestionFields } from '../protocol';
import { Method } from '../protocol';

export type PromptKind = 'secret' | 'text' | 'url' | 'file' | 'permission' | 'package';

/** How each dependency type is asked for (spec: dependency-request-handling.md). */
export function promptKind(type: DependencyType): PromptKind {
  switch (type) {
    case 'api_key':
      return 'secret';
    case 'env_variable':
      return 'secret'; // values of environment variables are often credentials: typed masked, kept in SecretStorage
    case 'service':
      return 'url';
    case 'file':
      return 'file';
    case 'permission':
      return 'permission';
    case 'package':
      return 'package';
  }
}

export interface QuestionChoice {
  label: string;
  description?: string;
  /** The answer sent for this choice; undefined for the "type an answer" and "skip" items. */
  answer?: string;
  action?: 'freeText' | 'skip';
}

/**
 * The QuickPick items for a question: its options in order, the default marked and active; a
 * free-text item; and "skip" when the question is not required. A question without options is
 * asked in an InputBox instead (useInputBox).
 */
export function questionChoices(q: QuestionFields): { items: QuestionChoice[]; activeIndex: number; useInputBox: boolean } {
  const options = q.options ?? [];
  if (options.length === 0) return { items: [], activeIndex: -1, useInputBox: true };
  const items: QuestionChoice[] = options.map((o) => ({ label: o, answer: o, description: o === q.default ? '(default)' : undefined }));
  // An agent's error is answered by one of its three choices only (retry, skip, stop).
  if (q.category !== 'error') items.push({ label: '$(edit) Other answer…', action: 'freeText' });
  if (q.required === false) items.push({ label: '$(debug-step-over) Skip this question', action: 'skip' });
  const d = options.indexOf(q.default ?? '');
  return { items, activeIndex: d >= 0 ? d : 0, useInputBox: false };
}

/** "4:05 left", "58s left", or "expired"; undefined without a deadline. */
export function countdown(deadline: number | undefined, now: number): string | undefined {
  if (deadline === undefined) return undefined;
  const s = Math.floor((deadline - now) / 1000);
  if (s <= 0) return 'expired';
  if (s < 60) return `${s}s left`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')} left` : `${m}:${String(sec).padStart(2, '0')} left`;
}

export function promptTitle(p: PendingRequest, now: number): string {
  const who = p.agentId ? `${p.agentId} asks` : 'An agent asks';
  const what = p.kind === 'question' ? (p.question.category ? `${p.question.category} question` : 'a question') : `${p.dependency.type} ${p.dependency.name}`;
  const left = countdown(p.deadline, now);
  return `AgentCanvas: ${who}: ${what}${left ? ` (${left})` : ''}`;
}

/** Why the sidecar would refuse a value for a dependency type, or undefined when it would take it. */
export type ValueCheck = (type: DependencyType, value: string) => Promise<string | undefined>;

/**
 * The value check the prompts use: the sidecar's own (agentcanvas/checkDependencyValue), the rules
 * it applies when the value is given, so the editor has no rules of its own. When the sidecar
 * cannot be asked, nothing is refused here: provideDependency still checks the value.
 */
export function sidecarValueCheck(request: (method: string, params: unknown) => Promise<unknown>): ValueCheck {
  return async (type, value) => {
    try {
      const res = (await request(Method.checkDependencyValue, { type, value })) as { valid?: boolean; error?: string } | undefined;
      return res && res.valid === false ? (res.error ?? 'The sidecar refuses this value.') : undefined;
    } catch {
      return undefined;
    }
  };
}

/** The key under which a dependency's value is kept in SecretStorage (name only, per type). */
export function secretKey(d: DependencyFields): string {
  return `agentcanvas.dependency.${d.type}.${d.name}`;
}

export type Answer =
  | { kind: 'answer'; text: string }
  | { kind: 'provide'; value: string }
  | { kind: 'reject'; reason: string };

/** The JSON-RPC request that carries an answer back to the sidecar. */
export function answerRequest(p: PendingRequest, a: Answer): { method: string; params: Record<string, unknown> } {
  const ids = { runId: p.runId, requestId: p.requestId };
  if (p.kind === 'question') {
    const q = { runId: p.runId, questionId: p.requestId };
    if (a.kind === 'answer') return { method: Method.answerQuestion, params: { ...q, answer: a.text } };
    // A skipped (optional) question is answered with nothing; the agent gets an empty answer.
    if (a.kind === 'reject') return { method: Method.answerQuestion, params: { ...q, answer: '', skipped: true, reason: a.reason } };
    throw new Error('a question is answered, not provided');
  }
  if (a.kind === 'provide') return { method: Method.provideDependency, params: { ...ids, value: a.value } };
  if (a.kind === 'reject') return { method: Method.rejectDependency, params: { ...ids, reason: a.reason } };
  throw new Error('a dependency is provided or rejected, not answered');
}

/** Identity of a pending request across notifications and listRuns. */
export function pendingKey(p: { runId: string; requestId: string }): string {
  return `${p.runId}/${p.requestId}`;
}
