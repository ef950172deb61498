// Colour scales that stay readable for colour-blind readers: viridis for
// probabilities (0 → dark purple, 1 → yellow) and cividis for signed or unbounded values.

// Viridis and cividis sampled at 9 evenly spaced stops (from matplotlib's tables).
const VIRIDIS = [
  [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37],
];
const CIVIDIS = [
  [0, 34, 78], [18, 53, 112], [59, 73, 108], [87, 93, 109], [112, 113, 115],
  [138, 134, 120], [166, 157, 117], [197, 181, 103], [232, 207, 75],
];

function sample(table: number[][], t: number): [number, number, number] {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (table.length - 1);
  const i = Math.min(table.length - 2, Math.floor(x));
  const f = x - i;
  const a = table[i];
  const b = table[i + 1];
  return [Math.round(a[0] + (b[0] - a[0]) * f), Math.round(a[1] + (b[1] - a[1]) * f), Math.round(a[2] + (b[2] - a[2]) * f)];
}

export function viridis(t: number): string {
  const [r, g, b] = sample(VIRIDIS, t);
  return `rgb(${r},${g},${b})`;
}

export function cividis(t: number): string {
  const [r, g, b] = sample(CIVIDIS, t);
  return `rgb(${r},${g},${b})`;
}

/** RGB triple for canvas drawing. */
export function viridisRgb(t: number): [number, number, number] {
  return sample(VIRIDIS, t);
}

/**
 * Black or white, whichever contrasts more with this background (WCAG luminance): at least
 * 4.58:1 on any colour (pure black is needed for that; #111 leaves mid-tones near 4.3:1).
 */
function inkFor([r, g, b]: [number, number, number]): string {
  const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  const lum = 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  // Equal contrast with black and white falls at luminance √(1.05 · 0.05) − 0.05 ≈ 0.179.
  return lum > 0.179 ? '#000' : '#fff';
}

/** Text colour that stays legible on top of viridis(t). */
export function inkOn(t: number): string {
  return inkFor(sample(VIRIDIS, t));
}

/** Text colour that stays legible on top of cividis(t). */
export function inkOnCividis(t: number): string {
  return inkFor(sample(CIVIDIS, t));
}

import { fixed } from './format';

/** Tokens as people read them: spaces and specials made visible. */
export function showToken(tok: string): string {
  if (tok === ' ') return '␣';
  if (tok === '\n') return '⏎';
  if (tok === '\t') return '⇥';
  return tok;
}

/** East Asian wide and fullwidth characters: Han, kana, Hangul, CJK punctuation, fullwidth forms. */
const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]/u;

/**
 * Width of a token in columns, as a monospace grid lays it out: a Chinese character takes
 * two, a Latin letter one. Counts characters, not UTF-16 units (so 𠀀 is one character).
 */
export function displayWidth(tok: string): number {
  let w = 0;
  for (const ch of tok) w += WIDE.test(ch) ? 2 : 1;
  return w;
}

/** `zh-Hans` for a token with Han characters (so glyphs and screen readers pick Chinese), else undefined. */
export function tokenLang(tok: string): string | undefined {
  return /\p{Script=Han}/u.test(tok) ? 'zh-Hans' : undefined;
}

/** A value with `digits` decimals, or an exponent where they would say nothing (../ui/format.ts `fixed`). */
export const fmt = fixed;

/** Diverging blue ↔ orange for signed differences in [−1, 1] (PuOr-like, colour-blind safe). */
export function diverging(t: number): string {
  const c = divergingRgb(t);
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

function divergingRgb(t: number): [number, number, number] {
  const x = Math.max(-1, Math.min(1, Number.isFinite(t) ? t : 0));
  const white = [247, 247, 247];
  const end = x < 0 ? [33, 102, 172] : [230, 97, 1];
  const a = Math.abs(x);
  const c = white.map((w, i) => Math.round(w + (end[i] - w) * a));
  return [c[0], c[1], c[2]];
}

/** Text colour that stays legible on top of diverging(t). */
export function inkOnDiverging(t: number): string {
  return inkFor(divergingRgb(t));
}

/**
 * The colours of series in charts and of marks that are not a heatmap (Okabe & Ito's
 * palette, told apart with any colour vision), one name per role, the same in both themes
 * (each is readable on the light and the dark card). Heatmaps use viridis / the diverging
 * scale above (../ui/heat.ts); page colours are the theme's variables (./shared.ts).
 */
export const SERIES = {
  blue: '#0072b2',
  vermillion: '#d55e00',
  green: '#009e73',
  orange: '#e69f00',
  pink: '#cc79a7',
  sky: '#56b4e9',
  grey: '#999999',
} as const;

/** The mark of what the reader points at (a hovered cell, the chosen token): the theme's --tp-focus in light. */
export const HIGHLIGHT = '#e4007c';
