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
