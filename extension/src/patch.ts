// Reading a proposal's changes.patch (git's unified diff format, as `proposal create` writes it)
// into files and hunks for the Proposals view, and writing back the part the user accepted.
// The selected patch is a valid git patch on its own: hunk headers of kept hunks are renumbered
// for the hunks dropped before them, so `git apply` (and the sidecar's go-gitdiff) applies it
// exactly, without relying on fuzzy offsets.

export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Text after the second @@ (usually the enclosing function). */
  section: string;
  /** Body lines, each with its ' ', '+', '-' or '\' prefix. */
  lines: string[];
  added: number;
  removed: number;
}

export type FileStatus = 'modified' | 'added' | 'deleted' | 'renamed';

export interface FilePatch {
  /** Path in the workspace (the b/ side, or the a/ side for a deletion). */
  path: string;
  oldPath: string;
  status: FileStatus;
  binary: boolean;
  /** Header lines from `diff --git` up to (not including) the first hunk. */
  header: string[];
  hunks: Hunk[];
  added: number;
  removed: number;
}

export class PatchParseError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`changes.patch:${line}: ${message}`);
  }
}

const HUNK_RE = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/;

function stripPrefix(p: string, prefix: 'a/' | 'b/'): string {
  let s = p;
  if (s.startsWith('"') && s.endsWith('"')) s = JSON.parse(s) as string; // git quotes unusual names C-style
  return s.startsWith(prefix) ? s.slice(2) : s;
}

export function parsePatch(text: string): FilePatch[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const files: FilePatch[] = [];
  let cur: FilePatch | undefined;
  let hunk: Hunk | undefined;
  let oldLeft = 0;
  let newLeft = 0;

  const finishHunk = (lineNo: number) => {
    if (hunk && (oldLeft > 0 || newLeft > 0)) throw new PatchParseError(lineNo, 'hunk is shorter than its header says');
    hunk = undefined;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '');
    const no = i + 1;
    if (line.startsWith('diff --git ')) {
      finishHunk(no);
      const m = /^diff --git (\S+|"[^"]*") (\S+|"[^"]*")$/.exec(line);
      if (!m) throw new PatchParseError(no, 'cannot read the paths of "diff --git"');
      const oldPath = stripPrefix(m[1], 'a/');
      const path = stripPrefix(m[2], 'b/');
      cur = { path, oldPath, status: 'modified', binary: false, header: [line], hunks: [], added: 0, removed: 0 };
      files.push(cur);
      continue;
    }
    if (!cur) {
      if (line.trim() === '') continue;
      throw new PatchParseError(no, 'text before the first "diff --git"');
    }
    if (hunk && (oldLeft > 0 || newLeft > 0)) {
      const c = line[0];
      if (c === ' ' || line === '') {
        oldLeft--;
        newLeft--;
      } else if (c === '-') {
        oldLeft--;
        hunk.removed++;
      } else if (c === '+') {
        newLeft--;
        hunk.added++;
      } else if (c !== '\\') throw new PatchParseError(no, `unexpected line in a hunk: ${JSON.stringify(line.slice(0, 40))}`);
      if (oldLeft < 0 || newLeft < 0) throw new PatchParseError(no, 'hunk is longer than its header says');
      hunk.lines.push(line === '' ? ' ' : line);
      continue;
    }
    if (hunk && line.startsWith('\\')) {
      hunk.lines.push(line); // "\ No newline at end of file" after the last line of a hunk
      continue;
    }
    const hm = HUNK_RE.exec(line);
    if (hm) {
      hunk = {
        oldStart: Number(hm[1]),
        oldLines: hm[2] === undefined ? 1 : Number(hm[2]),
        newStart: Number(hm[3]),
        newLines: hm[4] === undefined ? 1 : Number(hm[4]),
        section: hm[5],
        lines: [],
        added: 0,
        removed: 0,
      };
      oldLeft = hunk.oldLines;
      newLeft = hunk.newLines;
      cur.hunks.push(hunk);
      continue;
    }
    if (hunk) finishHunk(no);
    if (cur.hunks.length > 0) throw new PatchParseError(no, `unexpected line after a hunk: ${JSON.stringify(line.slice(0, 40))}`);
    cur.header.push(line);
    if (line.startsWith('new file mode')) cur.status = 'added';
    else if (line.startsWith('deleted file mode')) cur.status = 'deleted';
    else if (line.startsWith('rename from') || line.startsWith('rename to')) cur.status = 'renamed';
    else if (line.startsWith('Binary files ') || line === 'GIT binary patch') cur.binary = true;
    else if (line.startsWith('--- ') && line !== '--- /dev/null') cur.oldPath = stripPrefix(line.slice(4), 'a/');
    else if (line.startsWith('+++ ') && line !== '+++ /dev/null') cur.path = stripPrefix(line.slice(4), 'b/');
  }
  finishHunk(lines.length + 1);
  for (const f of files) {
    if (f.status === 'deleted') f.path = f.oldPath;
    f.added = f.hunks.reduce((n, h) => n + h.added, 0);
    f.removed = f.hunks.reduce((n, h) => n + h.removed, 0);
  }
  return files;
}

/** Which hunks of which files the user accepted. A file missing from the map is rejected. */
export type Selection = Map<string, boolean[]>;

/** Everything accepted: the default when a proposal is opened. */
export function selectAll(files: FilePatch[]): Selection {
  return new Map(files.map((f) => [f.path, f.hunks.length === 0 ? [true] : f.hunks.map(() => true)]));
}

export function isWholeSelection(files: FilePatch[], sel: Selection): boolean {
  return files.every((f) => (sel.get(f.path) ?? []).length > 0 && (sel.get(f.path) ?? []).every(Boolean));
}

/**
 * The accepted part as a patch. Files with no hunks (binary, pure renames, empty new files) are
 * all-or-nothing. New and deleted files can only be taken whole: a partial new file would be a
 * different file than the agent wrote, so picking some of their hunks takes none.
 */
export function selectedPatch(files: FilePatch[], sel: Selection): string {
  const out: string[] = [];
  for (const f of files) {
    const flags = sel.get(f.path);
    if (!flags || !flags.some(Boolean)) continue;
    if (f.hunks.length === 0 || f.binary) {
      out.push(...f.header);
      continue;
    }
    if ((f.status === 'added' || f.status === 'deleted') && !flags.every(Boolean)) continue;
    out.push(...f.header);
    let shift = 0; // lines added minus removed by the dropped hunks before this one
    f.hunks.forEach((h, i) => {
      const delta = h.added - h.removed;
      if (!flags[i]) {
        shift -= delta;
        return;
      }
      const oldPart = h.oldLines === 1 ? `${h.oldStart}` : `${h.oldStart},${h.oldLines}`;
      const newStart = h.newStart + shift;
      const newPart = h.newLines === 1 ? `${newStart}` : `${newStart},${h.newLines}`;
      out.push(`@@ -${oldPart} +${newPart} @@${h.section}`, ...h.lines);
    });
  }
  return out.length === 0 ? '' : out.join('\n') + '\n';
}

/** A short label for a hunk in a tree: its header and first changed line. */
export function hunkLabel(h: Hunk): string {
  const first = h.lines.find((l) => l.startsWith('+') || l.startsWith('-')) ?? '';
  return `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@ ${first.slice(0, 60)}`.trim();
}
