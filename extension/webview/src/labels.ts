// Edge labels: `patternId (key parameter)`, as docs/patterns.md names them — for example `debate_judge (3r)`.
import type { EdgeData, Termination } from "../../src/canvas/protocol";
import { formatTokens } from "../../src/canvas/spend";

/** formatDuration writes milliseconds the short way a label has room for: 600000 → "10m". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "?";
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000}s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)}s`;
  return `${ms}ms`;
}

/** conditions flattens a termination (one condition or any:/all: lists) into its leaves. */
export function conditions(t: Termination | undefined): Termination[] {
  if (!t) return [];
  const out: Termination[] = [];
  const walk = (c: Termination) => {
    if (c.type) out.push(c);
    c.any?.forEach(walk);
    c.all?.forEach(walk);
  };
  walk(t);
  return out;
}

function conditionLabel(c: Termination): string | undefined {
  switch (c.type) {
    case "max_rounds":
      return c.rounds !== undefined ? `${c.rounds}r` : undefined;
    case "timeout_ms":
      return c.ms !== undefined ? formatDuration(c.ms) : undefined;
    case "consensus_threshold":
      return c.threshold !== undefined ? `≥${c.threshold}` : undefined;
    case "quality_gate":
      return c.metric ? `${c.metric}${c.op ?? ">="}${c.value ?? ""}` : "gate";
    case "judge_decision":
      return "judge";
    case "max_cost_usd":
      return c.usd !== undefined ? `$${c.usd}` : undefined;
    case "max_tokens":
      return c.tokens !== undefined ? `${formatTokens(c.tokens)} tok` : undefined;
  }
  return undefined;
}

// The parameter that says most about how long an interaction runs, best first.
const PRIORITY = ["max_rounds", "consensus_threshold", "quality_gate", "judge_decision", "timeout_ms", "max_tokens", "max_cost_usd"];

/** keyParameter is the one parameter an edge label shows, or undefined when there is none. */
export function keyParameter(data: EdgeData | undefined): string | undefined {
  const conds = conditions(data?.termination);
  for (const type of PRIORITY) {
    const c = conds.find((x) => x.type === type);
    const l = c && conditionLabel(c);
    if (l) return l;
  }
  // A condition without its number (the loader dropped a bad value): name its type.
  if (conds.length > 0 && conds[0].type) return `${conds[0].type}?`;
  const p = data?.params ?? {};
  if (typeof p.timeout_ms === "number") return formatDuration(p.timeout_ms);
  if (typeof p.n === "number") return `n=${p.n}`;
  if (typeof p.rate_limit_per_min === "number") return `${p.rate_limit_per_min}/min`;
  return undefined;
}

/** edgeLabel is the label drawn on an interaction edge. */
export function edgeLabel(patternId: string, data: EdgeData | undefined): string {
  const k = keyParameter(data);
  const id = patternId || "?";
  return k ? `${id} (${k})` : `${id} (no termination)`;
}

/**
 * Below this zoom a big flow's edge labels are not drawn (App.tsx): their text would be 5 px high
 * or less, unreadable, and a thousand of them made every frame of the whole flow in view slow.
 * Zooming in draws them.
 */
export const LABEL_MIN_ZOOM = 0.45;

/** The widest a label's estimate for the layout counts (the label wraps past it: labelForms). */
export const MAX_LABEL_CHARS = 28;

/** A piece of a label's line: the interaction's id (drawn bold) or plain text. */
export interface LabelWord {
  text: string;
  ix?: boolean;
}
export type LabelLine = LabelWord[];

/** A way to draw a label: its lines, and whether it says all the label says (else its tooltip does). */
export interface LabelForm {
  lines: LabelLine[];
  whole: boolean;
}

/**
 * labelForms are the ways a label can be drawn, best first: on one line, then wrapped between its
 * words (the interaction's id, the pattern, the key parameter) on two and three lines, then
 * without the pattern (the tooltip has the whole label). A word is never cut: a narrow spot
 * takes a form with more lines, never an ellipsis in the middle of an id.
 */
export function labelForms(interactionId: string, label: string): LabelForm[] {
  // every drawing asks again for every label: the forms are kept (a label's forms never change)
  const key = `${interactionId}\u0000${label}`;
  const known = FORMS.get(key);
  if (known) return known;
  if (FORMS.size >= FORMS_KEPT) FORMS.clear();
  const forms = makeForms(interactionId, label).map((f) => ({ ...f, lines: breakLongWords(f.lines) }));
  FORMS.set(key, forms);
  return forms;
}
const FORMS = new Map<string, LabelForm[]>();
const FORMS_KEPT = 10_000;

function makeForms(interactionId: string, label: string): LabelForm[] {
  const m = /^(\S+) (\(.*\))$/u.exec(label);
  const pattern = m ? m[1] : label;
  const param = m ? m[2] : "";
  const ix: LabelWord = { text: interactionId, ix: true };
  const w = (text: string): LabelWord => ({ text });
  if (!param) return [{ lines: [[ix, w(pattern)]], whole: true }, { lines: [[ix], [w(pattern)]], whole: true }];
  // on two lines, broken where the wider line is narrowest
  const two = [
    { lines: [[ix, w(pattern)], [w(param)]], whole: true },
    { lines: [[ix], [w(`${pattern} ${param}`)]], whole: true },
  ].sort((a, b) => lineChars(a.lines) - lineChars(b.lines))[0];
  return [
    { lines: [[ix, w(`${pattern} ${param}`)]], whole: true },
    two,
    { lines: [[ix], [w(pattern)], [w(param)]], whole: true },
    { lines: [[ix, w(param)]], whole: false },
    { lines: [[ix], [w(param)]], whole: false },
  ];
}

/**
 * The longest word a label keeps on one line. An id may be 128 characters and a custom metric
 * longer: on one line such a word made a label wider than the screen (the first view opened on it,
 * no card in sight). It is broken across lines instead, all of it shown; every id and parameter
 * of the patterns is shorter.
 */
export const MAX_WORD_CHARS = 32;

/** breakLongWords puts each piece of a word longer than MAX_WORD_CHARS on a line of its own, the words around it before and after. */
function breakLongWords(lines: LabelLine[]): LabelLine[] {
  const out: LabelLine[] = [];
  for (const line of lines) {
    let cur: LabelLine = [];
    for (const word of line) {
      const tokens = word.text.split(" ").map((t) => [...t]); // a piece of a line may hold words: the pattern and its parameter
      if (tokens.every((t) => t.length <= MAX_WORD_CHARS)) {
        cur.push(word);
        continue;
      }
      for (const chars of tokens) {
        if (chars.length <= MAX_WORD_CHARS) {
          cur.push({ ...word, text: chars.join("") });
          continue;
        }
        if (cur.length > 0) out.push(cur);
        const pieces: LabelWord[] = [];
        for (let i = 0; i < chars.length; i += MAX_WORD_CHARS) pieces.push({ ...word, text: chars.slice(i, i + MAX_WORD_CHARS).join("") });
        out.push(...pieces.slice(0, -1).map((p) => [p]));
        cur = [pieces[pieces.length - 1]]; // the words after it follow its last piece
      }
    }
    out.push(cur);
  }
  return out;
}

/** lineChars is the widest line's length in characters (the words of a line are a space apart). */
export function lineChars(lines: LabelLine[]): number {
  return Math.max(0, ...lines.map((l) => l.reduce((n, word) => n + [...word.text].length, 0) + Math.max(0, l.length - 1)));
}

// An estimate of a label's box (the canvas measures the real font when it places labels): the
// label is set in the editor's monospace font at 0.85 of the UI size, about 7 px a character.
export const LABEL_CHAR_WIDTH = 7;
export const LABEL_PADDING = 16;
export const LABEL_HEIGHT = 20;

/** labelWidth estimates the width of an edge label as drawn (a long one wraps), in canvas pixels. */
export function labelWidth(text: string): number {
  return Math.min([...text].length, MAX_LABEL_CHARS) * LABEL_CHAR_WIDTH + LABEL_PADDING;
}
