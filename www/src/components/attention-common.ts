// What several views share about attention: the readable name of each attention site and
// the reading of one weight from a (B, H, T, S) tensor. Kept apart from the attention view
// (./tp-attention.ts) so the views that only need these do not load that component.

import { msg } from '@lit/localize';
import type { AttnSite } from '../engine/protocol';

export const SITE_NAMES: Record<AttnSite, string> = {
  get encoder_self() {
    return msg('encoder self-attention');
  },
  get decoder_self() {
    return msg('decoder self-attention');
  },
  get cross() {
    return msg('cross-attention');
  },
};

/** Value at (b, h, i, j) of a (B, H, T, S) tensor. */
export function at(t: { shape: number[]; data: Float32Array }, b: number, h: number, i: number, j: number): number {
  const [, H, T, S] = t.shape;
  return t.data[((b * H + h) * T + i) * S + j];
}

/** The cell that an arrow, Home or End key moves to from [i, j] in a T × S grid; null for any other key. */
export function gridMove(key: string, [i, j]: readonly [number, number], T: number, S: number): [number, number] | null {
  switch (key) {
    case 'ArrowUp':
      return [Math.max(0, i - 1), j];
    case 'ArrowDown':
      return [Math.min(T - 1, i + 1), j];
    case 'ArrowLeft':
      return [i, Math.max(0, j - 1)];
    case 'ArrowRight':
      return [i, Math.min(S - 1, j + 1)];
    case 'Home':
      return [i, 0];
    case 'End':
      return [i, S - 1];
    default:
      return null;
  }
}
