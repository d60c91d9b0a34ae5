// What a person must see before applying a proposal, in the editor: its failed tests, the
// files that change how things run (and names that look like others), each confirmed by name
// before it is applied; and the changes since the last revision, as a read-only diff.
import * as vscode from 'vscode';
import { readHolds, type Hold, type Interdiff, type InterdiffSide, type ProposalSides, type TestResult } from '../protocol';
import type { Proposal } from './proposalsModel';

/** The held files of a proposal (getProposal's held). */
export function heldOf(p: Proposal): Hold[] {
  return p.review?.held ?? [];
}

/** The hold on one file of a proposal, if any. */
export function heldFile(p: Proposal, file: string): Hold | undefined {
  return heldOf(p).find((h) => h.path === file);
}

/** The held files the current selection would apply. */
export function selectedHeld(p: Proposal): Hold[] {
  return heldOf(p).filter((h) => (p.selection.get(h.path) ?? []).some(Boolean) || (p.mergeSelection.get(h.path) ?? []).some(Boolean));
}

/** The first failed test or verify result, if any. */
export function failedTest(p: Proposal): TestResult | undefined {
  return p.review?.tests.find((t) => !t.passed);
}

/** A failed result in a few words: "npm test exited 1", "npm test could not run: …". */
export function testSummary(t: TestResult): string {
  return `${t.command.join(' ')} ${t.error ? `could not run: ${t.error}` : `exited ${t.exitCode}`}${t.current ? '' : ' (on an earlier version)'}`;
}

/** The marks a proposal's row starts with: failed tests first, then held files. */
export function truthMarks(p: Proposal): string[] {
  if (p.status !== 'pending') return [];
  const out: string[] = [];
  const t = failedTest(p);
  if (t) out.push(`✗ ${t.kind === 'verify' ? 'verifier' : 'tests'} failed`);
  const held = heldOf(p);
  if (held.length > 0) out.push(`⚠ changes how things run (${held.length})`);
  return out;
}

/** The warning rows under a proposal: each failed result with its failing lines, each held file. */
export function truthLines(p: Proposal): string[] {
  if (p.status !== 'pending') return [];
  const out: string[] = [];
  for (const t of p.review?.tests ?? []) {
    if (t.passed) continue;
    out.push(`${t.kind === 'verify' ? 'Verifier' : 'Tests'} failed: ${testSummary(t)}${t.failing.length > 0 ? ` — ${t.failing[0]}` : ''}`);
  }
  for (const h of heldOf(p)) out.push(`${h.kind === 'name' ? 'Name looks like another' : 'Changes how things run'}: ${h.shown} — ${h.reason}`);
  return out;
}

/** The held files in a refused apply's error data. */
export function heldFromError(e: unknown): Hold[] {
  return readHolds(((e as { data?: unknown } | undefined)?.data as { held?: unknown } | undefined)?.held);
}

/**
 * Asks the person to confirm each held file by name: a list with every held file unticked.
 * Returns the paths ticked, or undefined when cancelled.
 */
export async function confirmHeld(p: Proposal, held: Hold[]): Promise<string[] | undefined> {
  const items = held.map((h) => ({ label: h.shown, description: h.kind === 'name' ? 'its name looks like another' : 'changes how things run', detail: h.reason, picked: false, h }));
  const picked = await vscode.window.showQuickPick(items, {
    canPickMany: true,
    title: `${p.agentId}'s proposal changes how things run`,
    placeHolder: 'Tick each file you confirm, by its name; the files you leave unticked are left out of this apply',
    ignoreFocusOut: true,
  });
  return picked?.map((i) => i.h.path);
}

// ---- the two sides of a diff, read-only ---------------------------------------------------------

/** Read-only documents of a diff's two sides, kept by URI, served as the sidecar gave them. */
export class SideDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string | Promise<string> {
    return this.texts.get(uri.toString()) ?? '';
  }

  protected has(uri: vscode.Uri): boolean {
    return this.texts.has(uri.toString());
  }

  /** Keeps one file's two sides under left and right. */
  protected keep(s: InterdiffSide, left: vscode.Uri, right: vscode.Uri): { path: string; left: vscode.Uri; right: vscode.Uri } {
    for (const [uri, text, exists] of [
      [left, s.old, s.oldExists],
      [right, s.new, s.newExists],
    ] as const) {
      const body = s.binary ? '(binary file)\n' : exists ? text : '';
      if (this.texts.get(uri.toString()) !== body) {
        this.texts.set(uri.toString(), body);
        this.changed.fire(uri);
      }
    }
    return { path: s.path, left, right };
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The scheme of the two sides of an interdiff: documents of it are read-only. */
export const REVISION_SCHEME = 'agentcanvas-revision';

/** Serves the sides of interdiffs: one fixed URI per proposal, revision and file, so a second click shows the same documents. */
export class RevisionDocuments extends SideDocuments {
  /** Keeps an interdiff's sides; returns, per file, the two documents to compare. */
  put(p: Proposal, id: Interdiff): Array<{ path: string; left: vscode.Uri; right: vscode.Uri }> {
    return id.sides.map((s) => this.keep(s, revisionUri(p, id.from, s.path), revisionUri(p, id.to, s.path)));
  }
}

/**
 * The scheme of a proposal's diff: each file as the proposal was made from it and as its patch
 * makes it (getProposalSides), read-only. Never the worker's work/ file: the worker may change
 * it after the patch was made, and a link there shows the file it points at.
 */
export const PROPOSAL_SCHEME = 'agentcanvas-proposal';

/** A proposal's file as its patch makes it: the right side of its diff, where comments go. */
export function proposedUri(p: { runId: string; agentId: string }, file: string): vscode.Uri {
  return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${p.runId}/${p.agentId}/proposed/${file}` });
}

/** The file a proposal path's document is of, if it is the right side of p's diff. */
export function proposedFile(p: Proposal, uri: vscode.Uri): string | undefined {
  const prefix = `/${p.runId}/${p.agentId}/proposed/`;
  return uri.scheme === PROPOSAL_SCHEME && uri.path.startsWith(prefix) ? uri.path.slice(prefix.length) : undefined;
}

/**
 * Serves the sides of proposals' diffs: one fixed URI per proposal, side and file. A document
 * asked for before its proposal's sides were fetched (an editor a window reload restored) is
 * fetched then, so it never shows as empty.
 */
export class ProposalDocuments extends SideDocuments {
  constructor(private readonly fetch?: (runId: string, agentId: string, path: string) => Promise<ProposalSides>) {
    super();
  }

  /** Keeps a proposal's sides; returns, per file, the two documents to compare. */
  put(p: { runId: string; agentId: string }, ps: ProposalSides): Array<{ path: string; left: vscode.Uri; right: vscode.Uri }> {
    return ps.sides.map((s) => this.keep(s, vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${p.runId}/${p.agentId}/made from/${s.path}` }), proposedUri(p, s.path)));
  }

  override async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const [, runId, agentId, , ...file] = uri.path.split('/');
    if (!this.has(uri) && this.fetch && runId && agentId && file.length > 0) this.put({ runId, agentId }, await this.fetch(runId, agentId, file.join('/')));
    return super.provideTextDocumentContent(uri);
  }
}

/** The read-only document of a file as revision n of a proposal leaves it. */
export function revisionUri(p: Proposal, n: number, file: string): vscode.Uri {
  return vscode.Uri.from({ scheme: REVISION_SCHEME, path: `/${p.runId}/${p.agentId}/revision ${n}/${file}` });
}

/** The title of an interdiff's diff. */
export function interdiffTitle(p: Proposal, id: Interdiff, file?: string): string {
  return `${file ? `${file}: ` : ''}${p.agentId}'s proposal, revision ${id.from} ↔ ${id.to}`;
}
