// The interaction colours, chosen from the theme's own. A theme names a dozen or so hues (its
// chart colours and its terminal's), and their even mixes fill the gaps between them; of those,
// the canvas keeps the ones that read as a line on the editor's background (WCAG's 3:1 for
// graphics, and far from it in CIEDE2000), that are colours rather than greys, and that cannot be
// taken for the error colour or the focus colour (a problem, a selection). Then it picks twelve,
// each the farthest (CIEDE2000) from those picked before, starting from the theme's chart blue:
// the first interactions of a flow get the most distinct colours. canvas.css draws each
// interaction with --ac-pal-N; past twelve, dashes tell the same colours apart.
import { differenceCiede2000, formatHex, interpolate, modeLab, modeLab65, modeLch, modeLrgb, modeRgb, parse, useMode, wcagContrast, type Color } from "culori/fn";

// Only the colour spaces used here (culori's tree-shakable entry): sRGB to read the theme's
// colours (linear sRGB for WCAG contrast), CIELAB for CIEDE2000, LCh for chroma.
useMode(modeRgb);
useMode(modeLrgb);
useMode(modeLab);
useMode(modeLab65);
const lch = useMode(modeLch);

/** What the palette is chosen from: the theme's colours, as CSS colour strings. */
export interface ThemeColours {
  background: string;
  foreground: string;
  error: string;
  focus: string;
  /** the theme's named hues, best first (the first usable one is the palette's first colour) */
  hues: string[];
}

/** The number of colours (graph.ts: INTERACTION_COLOURS). */
export const PALETTE_SIZE = 12;
/** A line's least contrast with the background: WCAG 2's 3:1 for graphical objects. */
export const MIN_CONTRAST = 3;
/** How far (CIEDE2000) a line's colour keeps from the background, the error and the focus colours. */
const FROM_BACKGROUND = 25;
const FROM_ERROR = 20;
const FROM_FOCUS = 10;
/** Below this chroma (CIE LCh) a colour reads as grey: not an interaction's. */
const MIN_CHROMA = 25;

const de = differenceCiede2000();

/** The theme variables the hues come from, in the order they are preferred. */
export const HUE_VARIABLES = [
  "charts-blue",
  "charts-orange",
  "charts-purple",
  "charts-yellow",
  "charts-green",
  "charts-red",
  "terminal-ansiCyan",
  "terminal-ansiMagenta",
  "terminal-ansiBlue",
  "terminal-ansiGreen",
  "terminal-ansiYellow",
  "terminal-ansiRed",
  "terminal-ansiBrightCyan",
  "terminal-ansiBrightMagenta",
  "terminal-ansiBrightBlue",
  "terminal-ansiBrightGreen",
  "terminal-ansiBrightYellow",
  "terminal-ansiBrightRed",
];

/**
 * choosePalette picks the interaction colours for a theme (as #rrggbb), or none when the theme
 * gives too few usable colours (canvas.css's fallbacks stay).
 */
export function choosePalette(t: ThemeColours): string[] {
  const bg = opaque(t.background);
  if (!bg) return [];
  const on = (c: string | undefined) => (c ? opaque(c, bg) : undefined);
  const [error, focus] = [on(t.error), on(t.focus)];
  const named = t.hues.map((h) => on(h)).filter((c): c is Color => !!c);
  const fg = on(t.foreground);
  const pool: Color[] = [...named];
  for (let i = 0; i < named.length; i++) for (let j = i + 1; j < named.length; j++) pool.push(interpolate([named[i], named[j]])(0.5));
  if (fg) for (const c of named) pool.push(interpolate([c, fg])(0.45));
  const usable = pool.filter(
    (c) =>
      wcagContrast(c, bg) >= MIN_CONTRAST &&
      de(c, bg) >= FROM_BACKGROUND &&
      (lch(c)?.c ?? 0) >= MIN_CHROMA &&
      (!error || de(c, error) >= FROM_ERROR) &&
      (!focus || de(c, focus) >= FROM_FOCUS),
  );
  if (usable.length < PALETTE_SIZE) return [];
  const chosen = [usable[0]];
  const nearest = usable.map((c) => de(c, usable[0]));
  while (chosen.length < PALETTE_SIZE) {
    let best = -1;
    for (let i = 0; i < usable.length; i++) if (nearest[i] > 0 && (best < 0 || nearest[i] > nearest[best])) best = i;
    if (best < 0) break;
    chosen.push(usable[best]);
    for (let i = 0; i < usable.length; i++) nearest[i] = Math.min(nearest[i], de(usable[i], usable[best]));
  }
  return chosen.length === PALETTE_SIZE ? chosen.map((c) => formatHex(c)) : [];
}

/** opaque parses a CSS colour, laid over the background when it is see-through. */
function opaque(css: string, over?: Color): Color | undefined {
  const c = parse(css.trim());
  if (!c) return undefined;
  const alpha = c.alpha ?? 1;
  if (alpha >= 1 || !over) return { ...c, alpha: undefined };
  return interpolate([over, { ...c, alpha: undefined }])(alpha);
}

/** themeColours reads the theme's colours from the page's --vscode-* variables. */
export function themeColours(root: HTMLElement): ThemeColours {
  const css = getComputedStyle(root);
  const v = (name: string) => css.getPropertyValue(`--vscode-${name}`).trim();
  return {
    background: v("editor-background"),
    foreground: v("foreground"),
    error: v("editorError-foreground"),
    focus: v("focusBorder"),
    hues: HUE_VARIABLES.map(v).filter(Boolean),
  };
}

/**
 * applyPalette sets --ac-pal-N on root from the theme, now and whenever the theme changes (VS Code
 * sets its variables on the html element's style and its class on the body); returns a stop.
 */
export function applyPalette(root: HTMLElement): () => void {
  let last = "";
  const apply = () => {
    const colours = themeColours(root);
    const key = JSON.stringify(colours);
    if (key === last) return;
    last = key;
    const palette = choosePalette(colours);
    for (let i = 0; i < PALETTE_SIZE; i++) {
      if (palette[i]) root.style.setProperty(`--ac-pal-${i}`, palette[i]);
      else root.style.removeProperty(`--ac-pal-${i}`);
    }
  };
  apply();
  const watch = new MutationObserver(apply);
  watch.observe(root, { attributes: true, attributeFilter: ["style", "class"] });
  if (document.body) watch.observe(document.body, { attributes: true, attributeFilter: ["class"] });
  return () => watch.disconnect();
}
