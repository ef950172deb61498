// The page's one heatmap style, for every map it draws (tp-heat, the attention maps, the
// masks): viridis for values of one sign, the diverging blue–orange scale for signed ones,
// −∞ (a masked score) hatched in the theme's two greys, an exact 0 (where it matters, as
// ReLU's zeros) light grey with a dot; a 1 px line round the map. The cell under the pointer
// is reported so the component can show its exact number.

import { diverging, viridis } from './palette';

/** The theme variables a heatmap reads (ThemeColours of its host). */
export const HEAT_COLOURS = ['--tp-hatch-a', '--tp-hatch-b', '--tp-zero', '--tp-zero-dot'] as const;
/** The light theme's values, where a variable is not set (a map outside any playground). */
export const HATCH_A = '#9aa1ab';
export const HATCH_B = '#d8dce1';
const ZERO = '#dcdcdc';
const ZERO_DOT = '#555555';

/**
 * The hatch of a masked cell, as the legends show it: stripes at 45°, 2 px of `a` on `b`
 * (a 7 px tile), for a canvas drawn at `dpr` device pixels per CSS pixel.
 */
export function maskedHatch(ctx: CanvasRenderingContext2D, a: string, b: string, dpr: number): CanvasPattern | string {
  const tile = document.createElement('canvas');
  tile.width = tile.height = 7 * dpr;
  const tc = tile.getContext('2d');
  if (!tc) return a;
  tc.scale(dpr, dpr);
  tc.fillStyle = b;
  tc.fillRect(0, 0, 7, 7);
  tc.strokeStyle = a;
  tc.lineWidth = 2;
  for (const o of [-7, 0, 7]) {
    tc.beginPath();
    tc.moveTo(o, 0);
    tc.lineTo(o + 7, 7);
    tc.stroke();
  }
  return ctx.createPattern(tile, 'repeat') ?? a;
}

export interface Heat {
  rows: number;
  cols: number;
  /** (rows, cols) row-major. */
  data: ArrayLike<number>;
  /** Colour by sign around 0 (default: when the data has both signs). */
  signed?: boolean;
  /** Draw cells that are exactly 0 apart (light grey with a dot), e.g. ReLU's zeros. */
  zeros?: boolean;
}

/** The finite range of the data and whether it has both signs. */
export function range(data: ArrayLike<number>): { lo: number; hi: number; signed: boolean } {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (!Number.isFinite(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!Number.isFinite(lo)) return { lo: 0, hi: 0, signed: false };
  return { lo, hi, signed: lo < 0 && hi > 0 };
}

/** Draw `h` filling `canvas` (its CSS size decides the cell size), in the theme's `colours` (HEAT_COLOURS). */
export function drawHeat(canvas: HTMLCanvasElement, h: Heat, cell: number, colours: Record<string, string> = {}): void {
  const { lo, hi, signed: both } = range(h.data);
  const signed = h.signed ?? both;
  const w = Math.max(1, Math.round(h.cols * cell));
  const ht = Math.max(1, Math.round(h.rows * cell));
  canvas.width = w;
  canvas.height = ht;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  let hatch: CanvasPattern | string | null = null;
  for (let r = 0; r < h.rows; r++) {
    for (let c = 0; c < h.cols; c++) {
      const v = h.data[r * h.cols + c];
      if (!Number.isFinite(v)) {
        hatch ??= maskedHatch(ctx, colours['--tp-hatch-a'] || HATCH_A, colours['--tp-hatch-b'] || HATCH_B, 1);
        ctx.fillStyle = hatch;
        ctx.fillRect(c * cell, r * cell, Math.ceil(cell), Math.ceil(cell));
        continue;
      }
      if (h.zeros && v === 0) {
        ctx.fillStyle = colours['--tp-zero'] || ZERO;
        ctx.fillRect(c * cell, r * cell, Math.ceil(cell), Math.ceil(cell));
        ctx.fillStyle = colours['--tp-zero-dot'] || ZERO_DOT;
        const d = Math.max(1, cell / 5);
        ctx.fillRect(c * cell + cell / 2 - d / 2, r * cell + cell / 2 - d / 2, d, d);
        continue;
      }
      ctx.fillStyle = signed ? diverging(v / m) : viridis(hi > lo ? (v - lo) / (hi - lo) : 0.5);
      ctx.fillRect(c * cell, r * cell, Math.ceil(cell), Math.ceil(cell));
    }
  }
}

/** The (row, col) under a pointer event on a canvas drawn by `drawHeat`. */
export function cellAt(canvas: HTMLCanvasElement, e: MouseEvent, rows: number, cols: number): [number, number] | null {
  const box = canvas.getBoundingClientRect();
  const c = Math.floor(((e.clientX - box.left) / box.width) * cols);
  const r = Math.floor(((e.clientY - box.top) / box.height) * rows);
  if (r < 0 || c < 0 || r >= rows || c >= cols) return null;
  return [r, c];
}
