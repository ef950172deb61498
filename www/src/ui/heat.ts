// A heatmap on a canvas: one rectangle per cell, coloured by value (viridis for values of
// one sign, the diverging scale for signed ones, −∞ hatched grey), and the cell under the
// pointer reported so the component can show its exact number.

import { diverging, viridis } from './palette';

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

/** Draw `h` filling `canvas` (its CSS size decides the cell size). */
export function drawHeat(canvas: HTMLCanvasElement, h: Heat, cell: number): void {
  const { lo, hi, signed: both } = range(h.data);
  const signed = h.signed ?? both;
  const w = Math.max(1, Math.round(h.cols * cell));
  const ht = Math.max(1, Math.round(h.rows * cell));
  canvas.width = w;
  canvas.height = ht;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  for (let r = 0; r < h.rows; r++) {
    for (let c = 0; c < h.cols; c++) {
      const v = h.data[r * h.cols + c];
      if (!Number.isFinite(v)) {
        ctx.fillStyle = '#9aa0a6';
        ctx.fillRect(c * cell, r * cell, cell, cell);
        ctx.strokeStyle = '#ffffff';
        ctx.beginPath();
        ctx.moveTo(c * cell, (r + 1) * cell);
        ctx.lineTo((c + 1) * cell, r * cell);
        ctx.stroke();
        continue;
      }
      if (h.zeros && v === 0) {
        ctx.fillStyle = '#dcdcdc';
        ctx.fillRect(c * cell, r * cell, Math.ceil(cell), Math.ceil(cell));
        ctx.fillStyle = '#555555';
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
