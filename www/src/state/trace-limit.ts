// A real model's traced forward pass can ask for more attention weights than the engine
// keeps (batch · layers · heads · T², crate/src/limits MAX_ATTENTION_CELLS): the page traces
// the longest prefix that fits and says so.

import { msg, str } from '@lit/localize';
import type { ModelInfo, ModelInput } from '../engine/protocol';

/** The most attention weights one traced forward pass may hold (crate/src/limits MAX_ATTENTION_CELLS, 2^24). */
export const MAX_TRACED_CELLS = 1 << 24;

/**
 * The input cut to the longest prefix whose traced attention the engine accepts, with the
 * prompt's note saying so; unchanged, with no note, when it fits. A model with a source (an
 * encoder-decoder, only the shipped toys) is left to the engine.
 */
export function fitTrace(input: ModelInput | null, info: ModelInfo | null): { input: ModelInput | null; note: string } {
  if (!input || !info || input.src || !input.batch.length) return { input, note: '' };
  const layers = info.decoder_layers + info.encoder_layers;
  const t = Math.max(...input.batch.map((r) => r.length));
  const per = input.batch.length * Math.max(1, layers) * Math.max(1, info.n_heads);
  if (per * t * t <= MAX_TRACED_CELLS) return { input, note: '' };
  const keep = Math.max(1, Math.floor(Math.sqrt(MAX_TRACED_CELLS / per)));
  const note = msg(
    str`The views trace the attention of every head over the first ${keep} of the ${t} tokens: ${layers} layers × ${info.n_heads} heads over all ${t} would be ${per * t * t} attention weights, more than the ${MAX_TRACED_CELLS} this page traces.`,
    { id: 'store.trace-cut' },
  );
  return { input: { ...input, batch: input.batch.map((r) => r.slice(0, keep)) }, note };
}
