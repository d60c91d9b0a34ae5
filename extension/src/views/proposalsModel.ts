// The Proposals view's model, read straight from the contract files under
// .agentcanvas/sandboxes/<runId>/<agent>/proposal/{proposal.json,changes.patch} (docs/design.md), so
// review works on any proposal on disk, whichever process made it. Applying and rejecting go
// through the sidecar, which owns every write to the workspace.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { parsePatch, selectAll, selectedPatch, isWholeSelection, type FilePatch, type Selection } from '../patch';
import type { FileMerge, HunkMark, MergeHunk, ReviewComment, ReviewConversation, ReviewInfo, Take } from '../protocol';

/** How the person settled one conflict of a merge. */
export interface Resolution {
  take: Take;
  text?: string;
}

export interface Proposal {
  runId: string;
  agentId: string;
  /** The sandbox folder of this agent: <ws>/.agentcanvas/sandboxes/<runId>/<agent>. */
  agentDir: string;
  proposalJson: string;
  inputDir: string;
  workDir: string;
  createdAt?: string;
  gitHead?: string;
  notes?: string;
  status: 'pending' | 'applied' | 'rejected' | 'reverted';
  files: FilePatch[];
  /** Set when proposal.json or changes.patch cannot be read; the proposal is shown, not applicable. */
  error?: string;
  selection: Selection;
  /** The sidecar's review (getProposal): the check, collisions with other proposals, merges. */
  review?: ReviewInfo;
  /** listProposals: the other pending proposals it collides with, and the suggested order. */
  conflictsWith?: Array<{ runId: string; agentId: string; files: string[] }>;
  order?: number;
  /** In files the workspace changed since (review.merges): the merge hunks picked (index 0 = hunk 1). */
  mergeSelection: Map<string, boolean[]>;
  /** ... and each conflict settled, by hunk number (from 1). */
  resolutions: Map<string, Map<number, Resolution>>;
}

interface ProposalJson {
  runId?: unknown;
  agentId?: unknown;
  createdAt?: unknown;
  base?: { gitHead?: unknown };
  paths?: { inputDir?: unknown; workDir?: unknown; patchFile?: unknown };
  notes?: unknown;
  status?: unknown;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Resolves a path from proposal.json inside the agent folder; undefined when it would leave it. */
export function insideAgentDir(agentDir: string, rel: string): string | undefined {
  if (path.isAbsolute(rel)) return undefined;
  const abs = path.resolve(agentDir, rel);
  const back = path.relative(agentDir, abs);
  return back.startsWith('..') || path.isAbsolute(back) ? undefined : abs;
}

export async function readProposal(agentDir: string, previous?: Proposal): Promise<Proposal> {
  const proposalJson = path.join(agentDir, 'proposal', 'proposal.json');
  const base: Proposal = {
    runId: path.basename(path.dirname(agentDir)),
    agentId: path.basename(agentDir),
    agentDir,
    proposalJson,
    inputDir: path.join(agentDir, 'input'),
    workDir: path.join(agentDir, 'work'),
    status: 'pending',
    files: [],
    selection: new Map(),
    mergeSelection: new Map(),
    resolutions: new Map(),
  };
  let pj: ProposalJson;
  try {
    pj = JSON.parse(await fs.readFile(proposalJson, 'utf8')) as ProposalJson;
  } catch (e) {
    return { ...base, error: `${proposalJson}: ${e instanceof Error ? e.message : String(e)}` };
  }
  const p: Proposal = {
    ...base,
    runId: str(pj.runId) ?? base.runId,
    agentId: str(pj.agentId) ?? base.agentId,
    createdAt: str(pj.createdAt),
    gitHead: str(pj.base?.gitHead),
    notes: str(pj.notes),
    status: pj.status === 'applied' || pj.status === 'rejected' ? pj.status : 'pending',
  };
  const inputDir = insideAgentDir(agentDir, str(pj.paths?.inputDir) ?? 'input');
  const workDir = insideAgentDir(agentDir, str(pj.paths?.workDir) ?? 'work');
  const patchFile = insideAgentDir(agentDir, str(pj.paths?.patchFile) ?? 'proposal/changes.patch');
  if (!inputDir || !workDir || !patchFile) return { ...p, error: `${proposalJson}: paths must stay inside ${agentDir}` };
  p.inputDir = inputDir;
  p.workDir = workDir;
  try {
    p.files = parsePatch(await fs.readFile(patchFile, 'utf8'));
  } catch (e) {
    return { ...p, error: e instanceof Error ? e.message : String(e) };
  }
  // Keep the user's choices across a refresh when the patch did not change shape.
  const prev = previous?.selection;
  p.selection = selectAll(p.files);
  if (prev) for (const f of p.files) {
    const flags = prev.get(f.path);
    if (flags && flags.length === (f.hunks.length || 1)) p.selection.set(f.path, [...flags]);
    else if (!flags && previous?.files.some((x) => x.path === f.path)) p.selection.delete(f.path);
  }
  return p;
}

/** Every proposal under <ws>/.agentcanvas/sandboxes, newest run first. */
export async function scanProposals(workspaceRoot: string, previous: Proposal[] = []): Promise<Proposal[]> {
  const sandboxes = path.join(workspaceRoot, '.agentcanvas', 'sandboxes');
  const out: Proposal[] = [];
  let runs: string[];
  try {
    runs = (await fs.readdir(sandboxes, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return [];
  }
  for (const run of runs.sort().reverse()) {
    let agents: string[];
    try {
      agents = (await fs.readdir(path.join(sandboxes, run), { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
    } catch {
      continue;
    }
    for (const a of agents.sort()) {
      const agentDir = path.join(sandboxes, run, a);
      try {
        await fs.access(path.join(agentDir, 'proposal', 'proposal.json'));
      } catch {
        continue; // a sandbox whose agent has not proposed anything (yet)
      }
      out.push(await readProposal(agentDir, previous.find((x) => x.agentDir === agentDir)));
    }
  }
  return out;
}

/**
 * Takes the sidecar's review into the proposal. Merge picks and resolutions made against the
 * same version of a workspace file survive a refresh; against another version they start over
 * (clean hunks picked, conflicts unresolved), since the hunks are not the same any more.
 */
export function applyReview(p: Proposal, review: ReviewInfo, previous?: Proposal): void {
  p.review = review;
  p.mergeSelection = new Map();
  p.resolutions = new Map();
  for (const [file, m] of review.merges) {
    const before = previous?.review?.merges.get(file);
    const same = before !== undefined && before.workspace === m.workspace && before.hunks.length === m.hunks.length;
    const flags = previous?.mergeSelection.get(file);
    p.mergeSelection.set(file, same && flags ? [...flags] : m.hunks.map((h) => !h.conflict));
    const res = previous?.resolutions.get(file);
    if (same && res) p.resolutions.set(file, new Map(res));
  }
}

/** The merge of a file, when the workspace changed it since the proposal was made. */
export function mergeOf(p: Proposal, file: string): FileMerge | undefined {
  return p.review?.merges.get(file);
}

/** Picks or drops one merge hunk (index from 0); a conflict is picked only once resolved. */
export function setMergePicked(p: Proposal, file: string, index: number, on: boolean): void {
  const m = mergeOf(p, file);
  const h = m?.hunks[index];
  if (!m || !h) return;
  const flags = p.mergeSelection.get(file) ?? m.hunks.map((x) => !x.conflict);
  flags[index] = on && (!h.conflict || p.resolutions.get(file)?.has(h.index) === true);
  p.mergeSelection.set(file, flags);
}

/** Settles (or, with undefined, unsettles) a conflict; a settled conflict is picked. */
export function setResolution(p: Proposal, file: string, hunk: MergeHunk, r: Resolution | undefined): void {
  const m = mergeOf(p, file);
  if (!m) return;
  const res = p.resolutions.get(file) ?? new Map<number, Resolution>();
  if (r) res.set(hunk.index, r);
  else res.delete(hunk.index);
  p.resolutions.set(file, res);
  setMergePicked(p, file, hunk.index - 1, r !== undefined);
}

/** Conflicts not settled yet, in files whose merge has any picked hunk or is untouched. */
export function unresolvedConflicts(p: Proposal): Array<{ file: string; hunk: MergeHunk }> {
  const out: Array<{ file: string; hunk: MergeHunk }> = [];
  for (const [file, m] of p.review?.merges ?? []) {
    for (const h of m.hunks) if (h.conflict && !p.resolutions.get(file)?.has(h.index)) out.push({ file, hunk: h });
  }
  return out;
}

/** The patch the user's selection amounts to; undefined means "the whole proposal". */
export function patchForSelection(p: Proposal): string | undefined {
  return isWholeSelection(p.files, p.selection) ? undefined : selectedPatch(p.files, p.selection);
}

/**
 * applyProposal's selection: {} for everything; else whole files by path and single hunks by
 * index, numbered from 1 as getProposal numbers them (files whose hunks are all accepted go in
 * `files`).
 */
export function selectionParams(p: Proposal): {
  files?: string[];
  hunks?: Array<{ file: string; index: number }>;
  merge?: Array<{ file: string; index: number }>;
  resolve?: Array<{ file: string; index: number; take: Take; text?: string }>;
  against?: Record<string, string>;
} {
  const merges = p.review?.merges ?? new Map<string, FileMerge>();
  const moved = (f: FilePatch) => merges.has(f.path);
  if (!p.files.some(moved)) {
    if (isWholeSelection(p.files, p.selection)) return {};
  }
  const files: string[] = [];
  const hunks: Array<{ file: string; index: number }> = [];
  for (const f of p.files) {
    if (moved(f)) continue;
    const flags = p.selection.get(f.path) ?? [];
    if (flags.length > 0 && flags.every(Boolean)) files.push(f.path);
    else flags.forEach((on, i) => on && hunks.push({ file: f.path, index: i + 1 }));
  }
  if (!p.files.some(moved)) return { files, hunks };
  // Files the workspace changed since: their merge hunks, settled conflicts, and the version of
  // the file the review was made against (a file changed since is refused, not merged anew).
  const merge: Array<{ file: string; index: number }> = [];
  const resolve: Array<{ file: string; index: number; take: Take; text?: string }> = [];
  const against: Record<string, string> = {};
  for (const [file, m] of merges) {
    if (!p.files.some((f) => f.path === file)) continue;
    against[file] = m.workspace;
    const flags = p.mergeSelection.get(file) ?? m.hunks.map((h) => !h.conflict);
    for (const h of m.hunks) {
      if (!flags[h.index - 1]) continue;
      const r = p.resolutions.get(file)?.get(h.index);
      if (h.conflict && !r) continue;
      merge.push({ file, index: h.index });
      if (r) resolve.push({ file, index: h.index, take: r.take, ...(r.text !== undefined ? { text: r.text } : {}) });
    }
  }
  return { files, hunks, merge, resolve, against };
}

export function selectionSummary(p: Proposal): { files: number; hunks: number; totalHunks: number } {
  let files = 0;
  let hunks = 0;
  let total = 0;
  for (const f of p.files) {
    const m = mergeOf(p, f.path);
    if (m) {
      const flags = p.mergeSelection.get(f.path) ?? [];
      const on = m.hunks.filter((h, i) => flags[i] && (!h.conflict || p.resolutions.get(f.path)?.has(h.index))).length;
      total += m.hunks.length;
      hunks += on;
      if (on > 0) files++;
      continue;
    }
    const flags = p.selection.get(f.path) ?? [];
    const n = Math.max(1, f.hunks.length);
    total += n;
    const on = flags.filter(Boolean).length;
    hunks += on;
    if (on > 0) files++;
  }
  return { files, hunks, totalHunks: total };
}

/**
 * Applies the sidecar's listProposals states (applied, rejected) to proposals read from disk,
 * matched by their sandbox folder (workspace-relative in the listing).
 */
export function mergeStates(proposals: Proposal[], listing: unknown, workspaceRoot: string): void {
  const list = Array.isArray(listing) ? listing : [];
  const byDir = new Map<string, { state: string; order?: number; conflicts?: unknown }>();
  for (const x of list) {
    const o = (x ?? {}) as { agentDir?: unknown; state?: unknown; order?: unknown; conflicts?: unknown };
    if (typeof o.agentDir !== 'string' || typeof o.state !== 'string') continue;
    byDir.set(path.resolve(workspaceRoot, o.agentDir), { state: o.state, order: typeof o.order === 'number' ? o.order : undefined, conflicts: o.conflicts });
  }
  for (const p of proposals) {
    const s = byDir.get(path.resolve(p.agentDir));
    if (!s) continue;
    if (s.state === 'applied' || s.state === 'rejected' || s.state === 'pending' || s.state === 'reverted') p.status = s.state;
    p.order = s.order;
    p.conflictsWith = Array.isArray(s.conflicts)
      ? s.conflicts.map((c) => {
          const o = (c ?? {}) as { runId?: unknown; agentId?: unknown; files?: unknown };
          return { runId: String(o.runId ?? ''), agentId: String(o.agentId ?? ''), files: Array.isArray(o.files) ? o.files.map(String) : [] };
        })
      : undefined;
  }
}

/** Flips a whole file, or one hunk of it (a merged file: its merge hunks). */
export function setAccepted(p: Proposal, filePath: string, accepted: boolean, hunk?: number): void {
  const f = p.files.find((x) => x.path === filePath);
  if (!f) return;
  const m = mergeOf(p, filePath);
  if (m) {
    if (hunk === undefined) m.hunks.forEach((_, i) => setMergePicked(p, filePath, i, accepted));
    else setMergePicked(p, filePath, hunk, accepted);
    return;
  }
  const n = Math.max(1, f.hunks.length);
  const flags = p.selection.get(filePath) ?? new Array<boolean>(n).fill(false);
  if (hunk === undefined) flags.fill(accepted);
  else if (hunk >= 0 && hunk < n) flags[hunk] = accepted;
  p.selection.set(filePath, flags);
}

/** The gitHead warning: the proposal was made against another commit than the one checked out. */
export function headWarning(p: Proposal, currentHead: string | undefined): string | undefined {
  if (!p.gitHead || !currentHead || p.gitHead === currentHead) return undefined;
  return `This proposal was made against commit ${p.gitHead.slice(0, 12)}, but the workspace is at ${currentHead.slice(0, 12)}. The files may have changed since; the sidecar checks every hunk before writing.`;
}

/**
 * The problems of a refused request: the error's data.problems ({path, reason} each), else read
 * from its message.
 */
export function problemsOf(e: unknown): Array<{ path: string; reason: string }> {
  const data = (e as { data?: unknown } | undefined)?.data as { problems?: unknown } | undefined;
  if (data && Array.isArray(data.problems)) {
    return data.problems.map((p) => {
      const o = (p ?? {}) as { path?: unknown; reason?: unknown };
      return { path: typeof o.path === 'string' ? o.path : '', reason: String(o.reason ?? '') };
    });
  }
  return conflictsFromMessage(e instanceof Error ? e.message : String(e));
}

/**
 * The problems in a refusal from the sidecar, whose message reads
 * "agentcanvas/applyProposal: patch refused: src/a.ts: <reason>; src/b.ts: <reason> (the workspace is unchanged)".
 * A problem without a path (a whole-patch reason) keeps path "".
 */
export function conflictsFromMessage(message: string): Array<{ path: string; reason: string }> {
  const at = message.indexOf('patch refused: ');
  if (at < 0) return [];
  const body = message.slice(at + 'patch refused: '.length).replace(/\s*\(the workspace is unchanged\)\s*$/, '');
  return body
    .split(/\n|;\s+/)
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((l) => {
      const q = /^("(?:[^"\\]|\\.)*")\s*:\s+(.*)$/.exec(l); // a quoted (unusual) name
      if (q) return { path: JSON.parse(q[1]) as string, reason: q[2] };
      const i = l.indexOf(': ');
      return i > 0 && !l.slice(0, i).includes(' ') ? { path: l.slice(0, i), reason: l.slice(i + 2) } : { path: '', reason: l };
    });
}

// ---- the review conversation ---------------------------------------------------------------

/** The proposal's comments, revisions and reviewed marks (getProposal's review). */
export function conversationOf(p: Proposal): ReviewConversation | undefined {
  return p.review?.conversation;
}

/** The comments a revision has not answered yet. */
export function openComments(p: Proposal): ReviewComment[] {
  return conversationOf(p)?.comments.filter((c) => c.answeredIn === 0) ?? [];
}

/** "revision 2 · 1 open comment · 1 answered", or undefined for an uncommented first revision. */
export function reviewSummary(p: Proposal): string | undefined {
  const c = conversationOf(p);
  if (!c) return undefined;
  const parts: string[] = [];
  if (c.revision > 1) parts.push(`revision ${c.revision}`);
  if (c.revising) parts.push('being revised');
  const open = openComments(p).length;
  const answered = c.comments.length - open;
  if (open > 0) parts.push(`${open} open comment${open === 1 ? '' : 's'}`);
  if (answered > 0) parts.push(`${answered} answered`);
  return parts.length > 0 ? parts.join(' · ') : undefined;
}

/** A hunk's key and reviewed mark (index from 0). */
export function hunkMark(p: Proposal, file: string, index: number): HunkMark | undefined {
  return p.review?.hunkMarks.get(file)?.[index];
}

/** Whether every hunk of a file is marked reviewed. */
export function fileReviewed(p: Proposal, file: string): boolean {
  const marks = p.review?.hunkMarks.get(file) ?? [];
  return marks.length > 0 && marks.every((m) => m.reviewed);
}

/** Where a comment sits, for a person: "src/a.ts:12" or "src/a.ts". */
export function commentPlace(c: ReviewComment): string {
  return c.line > 0 ? `${c.path}:${c.line}` : c.path;
}

/** A comment's state, for a person. */
export function commentState(c: ReviewComment): string {
  if (c.answeredIn > 0) return `answered in revision ${c.answeredIn}`;
  if (c.sentIn > 0) return `sent with revision ${c.sentIn}, not answered`;
  return 'open';
}
