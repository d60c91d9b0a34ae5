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
  const s = unquote(p);
  return s.startsWith(prefix) ? s.slice(2) : s;
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** A name as git writes it: C-style quoted when it holds a quote, a backslash, a control character or a byte past ASCII (as octal: café is "caf\303\251"). */
export function unquote(s: string): string {
  if (s.length < 2 || !s.startsWith('"') || !s.endsWith('"')) return s;
  const bytes: number[] = [];
  const body = s.slice(1, -1);
  const enc = new TextEncoder();
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== '\\') {
      bytes.push(...enc.encode(body[i]));
    } else if (/^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(C_ESCAPES[body[i + 1]] ?? body.charCodeAt(i + 1));
      i++;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * The two names of a "diff --git" line: each quoted or free of spaces, or — a name with spaces,
 * which git leaves unquoted — the same name twice, "a/N b/N" (as git itself reads it). A
 * rename's names with spaces come from its "rename from/to" lines instead.
 */
function headerNames(rest: string): [string, string] | undefined {
  const m = /^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$/.exec(rest);
  if (m) return [m[1], m[2]];
  const n = (rest.length - 5) / 2;
  const name = rest.slice(2, 2 + n);
  return Number.isInteger(n) && rest === `a/${name} b/${name}` ? [`a/${name}`, `b/${name}`] : undefined;
}

/** A path of a "---" or "+++" line: git ends one holding a space with a tab. */
function fileLinePath(rest: string, prefix: 'a/' | 'b/'): string {
  return stripPrefix(rest.replace(/\t$/, ''), prefix);
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
      const m = headerNames(line.slice('diff --git '.length));
      const [oldPath, path] = m ? [stripPrefix(m[0], 'a/'), stripPrefix(m[1], 'b/')] : ['', ''];
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
    else if (line.startsWith('rename from ')) [cur.status, cur.oldPath] = ['renamed', unquote(line.slice('rename from '.length))];
    else if (line.startsWith('rename to ')) [cur.status, cur.path] = ['renamed', unquote(line.slice('rename to '.length))];
    else if (line.startsWith('Binary files ') || line === 'GIT binary patch') cur.binary = true;
    else if (line.startsWith('--- ') && line !== '--- /dev/null') cur.oldPath = fileLinePath(line.slice(4), 'a/');
    else if (line.startsWith('+++ ') && line !== '+++ /dev/null') cur.path = fileLinePath(line.slice(4), 'b/');
  }
  finishHunk(lines.length + 1);
  for (const f of files) {
    if (f.status === 'added' && !f.oldPath) f.oldPath = f.path;
    if (f.status === 'deleted' && !f.path) f.path = f.oldPath;
    if (!f.path || !f.oldPath) throw new PatchParseError(lines.indexOf(f.header[0]) + 1, 'cannot read the paths of "diff --git"');
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
