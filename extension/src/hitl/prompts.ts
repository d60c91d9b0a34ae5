// Asking the user: one prompt per pending request, by kind. A prompt dismissed with Escape leaves
// the request pending (it can be answered later from the status item or the Runs view); only an
// explicit Reject answers it negatively. The sidecar's deadline is shown as a live countdown in
// QuickPick and InputBox titles, and as a fixed time in modal dialogs (which cannot update).
import * as vscode from 'vscode';
import * as path from 'node:path';
import type { PendingDependency, PendingQuestion, PendingRequest } from '../protocol';
import { countdown, promptKind, promptTitle, questionChoices, secretKey, type Answer, type QuestionChoice, type ValueCheck } from './requests';

export interface PromptDeps {
  secrets: vscode.SecretStorage;
  /** The sidecar's check of a dependency value (sidecarValueCheck). */
  check: ValueCheck;
  now?: () => number;
  workspaceRoot?: string;
}

/** Resolves to the answer, or undefined when the user dismissed the prompt without answering. */
export async function askUser(p: PendingRequest, deps: PromptDeps): Promise<Answer | undefined> {
  return p.kind === 'question' ? askQuestion(p, deps) : askDependency(p, deps);
}

type Pick = vscode.QuickPickItem & { choice: QuestionChoice };

async function askQuestion(p: PendingQuestion, deps: PromptDeps): Promise<Answer | undefined> {
  const now = deps.now ?? Date.now;
  const { items, activeIndex, useInputBox } = questionChoices(p.question);
  if (useInputBox) {
    const text = await inputWithCountdown(p, now, {
      prompt: p.question.question,
      placeHolder: p.question.default ?? 'Type your answer',
      value: p.question.default,
      password: false,
      validate: (v) => (v.trim() === '' && p.question.required !== false ? 'An answer is required.' : undefined),
    });
    if (text === undefined) return undefined;
    return text.trim() === '' ? { kind: 'reject', reason: 'skipped by the user' } : { kind: 'answer', text };
  }
  const qp = vscode.window.createQuickPick<Pick>();
  qp.placeholder = p.question.question;
  qp.ignoreFocusOut = true;
  qp.items = items.map((c) => ({ label: c.label, description: c.description, choice: c }));
  qp.activeItems = [qp.items[activeIndex]];
  const picked = await runWithCountdown<QuestionChoice>(qp, p, now, (resolve) => {
    qp.onDidAccept(() => resolve(qp.selectedItems[0]?.choice));
  });
  if (!picked) return undefined;
  if (picked.action === 'skip') return { kind: 'reject', reason: 'skipped by the user' };
  if (picked.action === 'freeText') {
    const text = await inputWithCountdown(p, now, { prompt: p.question.question, password: false, validate: (v) => (v.trim() === '' ? 'Type an answer.' : undefined) });
    return text === undefined ? undefined : { kind: 'answer', text };
  }
  return { kind: 'answer', text: picked.answer ?? '' };
}

async function askDependency(p: PendingDependency, deps: PromptDeps): Promise<Answer | undefined> {
  const d = p.dependency;
  const now = deps.now ?? Date.now;
  const about = [d.description, d.required === false ? '(optional)' : undefined].filter(Boolean).join(' ');
  const until = p.deadline ? ` Answer by ${new Date(p.deadline).toLocaleTimeString()} (${countdown(p.deadline, now())}).` : '';
  switch (promptKind(d.type)) {
    case 'secret': {
      const stored = await deps.secrets.get(secretKey(d));
      if (stored !== undefined) {
        const pick = await vscode.window.showQuickPick(
          [
            { label: `$(key) Use the stored value of ${d.name}`, id: 'stored' },
            { label: '$(edit) Enter a new value…', id: 'new' },
            { label: '$(close) Reject', id: 'reject' },
          ],
          { title: promptTitle(p, now()), placeHolder: about || d.name, ignoreFocusOut: true },
        );
        if (!pick) return undefined;
        if (pick.id === 'stored') return { kind: 'provide', value: stored };
        if (pick.id === 'reject') return { kind: 'reject', reason: 'rejected by the user' };
      }
      return secretOrReject(p, now, about, deps.check);
    }
    case 'url': {
      const v = await inputWithCountdown(p, now, { prompt: `${d.name}: ${about}`, value: d.default, password: false, validate: (x) => deps.check(d.type, x) });
      return v === undefined ? undefined : { kind: 'provide', value: v };
    }
    case 'file': {
      const pick = await vscode.window.showInformationMessage(
        `${promptTitle(p, now())}: ${about || d.name}`,
        { modal: true, detail: `The agent needs the file "${d.name}".${until}` },
        'Choose File…',
        'Reject',
      );
      if (pick === 'Reject') return { kind: 'reject', reason: 'rejected by the user' };
      if (pick !== 'Choose File…') return undefined;
      const uris = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: `Provide ${d.name}`, title: promptTitle(p, now()) });
      if (!uris || uris.length === 0) return undefined;
      const f = uris[0].fsPath;
      const rel = deps.workspaceRoot ? path.relative(deps.workspaceRoot, f) : f;
      const value = deps.workspaceRoot && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : f;
      return { kind: 'provide', value };
    }
    case 'permission': {
      const pick = await vscode.window.showWarningMessage(
        `${promptTitle(p, now())}`,
        { modal: true, detail: `${about || d.name}\n\nPermission: ${d.name}.${until}` },
        'Allow',
        'Deny',
      );
      if (pick === 'Allow') return { kind: 'provide', value: 'true' };
      if (pick === 'Deny') return { kind: 'reject', reason: 'permission denied by the user' };
      return undefined;
    }
    case 'package': {
      const pick = await vscode.window.showInformationMessage(
        `${promptTitle(p, now())}`,
        { modal: true, detail: `Install the package "${d.name}"? ${about}${until}` },
        'Install',
        'Reject',
      );
      if (pick === 'Install') return { kind: 'provide', value: d.name };
      if (pick === 'Reject') return { kind: 'reject', reason: 'package rejected by the user' };
      return undefined;
    }
  }
  return undefined;
}

async function secretOrReject(p: PendingDependency, now: () => number, about: string, check: ValueCheck): Promise<Answer | undefined> {
  const d = p.dependency;
  const ib = vscode.window.createInputBox();
  ib.password = true;
  ib.prompt = `${d.name}: ${about} It is kept in VS Code's secret storage and offered again next time.`;
  ib.placeholder = d.name;
  ib.ignoreFocusOut = true;
  const reject: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('close'), tooltip: 'Reject this request' };
  ib.buttons = [reject];
  // Checked by the sidecar when accepted, not as it is typed: a secret's prefixes never travel.
  ib.onDidChangeValue(() => (ib.validationMessage = undefined));
  const result = await runWithCountdown<Answer | undefined>(ib, p, now, (resolve) => {
    ib.onDidTriggerButton((b) => b === reject && resolve({ kind: 'reject', reason: 'rejected by the user' }));
    ib.onDidAccept(() => {
      const value = ib.value;
      void check(d.type, value).then((msg) => {
        if (msg) ib.validationMessage = msg;
        else resolve({ kind: 'provide', value });
      });
    });
  });
  return result;
}

interface InputOptions {
  prompt: string;
  placeHolder?: string;
  value?: string;
  password: boolean;
  validate: (v: string) => string | undefined | Promise<string | undefined>;
}

async function inputWithCountdown(p: PendingRequest, now: () => number, o: InputOptions): Promise<string | undefined> {
  const ib = vscode.window.createInputBox();
  ib.prompt = o.prompt;
  ib.placeholder = o.placeHolder;
  ib.value = o.value ?? '';
  ib.password = o.password;
  ib.ignoreFocusOut = true;
  return runWithCountdown<string | undefined>(ib, p, now, (resolve) => {
    ib.onDidAccept(() => {
      const value = ib.value;
      void Promise.resolve(o.validate(value)).then((msg) => {
        if (msg) ib.validationMessage = msg;
        else resolve(value);
      });
    });
  });
}

/** Shows a QuickPick/InputBox whose title counts down to the deadline; hides it when done. */
function runWithCountdown<T>(
  input: vscode.QuickPick<Pick> | vscode.InputBox,
  p: PendingRequest,
  now: () => number,
  wire: (resolve: (v: T | undefined) => void) => void,
): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve) => {
    let done = false;
    const finish = (v: T | undefined) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      input.hide();
      input.dispose();
      resolve(v);
    };
    input.title = promptTitle(p, now());
    const timer = p.deadline ? setInterval(() => (input.title = promptTitle(p, now())), 1000) : undefined;
    wire(finish);
    input.onDidHide(() => finish(undefined));
    input.show();
  });
}
