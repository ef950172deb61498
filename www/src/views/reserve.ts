// The room each view takes before the engine first answers, so that the page (and an
// embedded view) does not jump when the numbers arrive: a placeholder of about the view's
// final height, in CSS pixels, as each view draws the default model — in a two-column page
// or a wide embed (`wide`) and in one narrow column, a phone's (`narrow`). These are sizes
// of empty boxes, not numbers the page shows; `cargo xtask bench` prints the layout shift
// they leave (tests/browser/layout-bench.mjs). A view missing here reserves nothing.

import type { Arch } from '../engine/protocol';

export const RESERVE: Readonly<Record<string, { wide: number; narrow: number }>> = {
  controls: { wide: 170, narrow: 390 },
  backend: { wide: 32, narrow: 95 },
  input: { wide: 180, narrow: 205 },
  characters: { wide: 180, narrow: 190 },
  generation: { wide: 270, narrow: 470 },
  architecture: { wide: 950, narrow: 1090 },
  attention: { wide: 755, narrow: 1130 },
  masks: { wide: 335, narrow: 495 },
  output: { wide: 490, narrow: 590 },
  hidden: { wide: 195, narrow: 285 },
  'sqrt-dk': { wide: 210, narrow: 475 },
  saturation: { wide: 310, narrow: 415 },
  cost: { wide: 560, narrow: 790 },
  schedule: { wide: 425, narrow: 380 },
  positions: { wide: 1520, narrow: 1215 },
  'embedding-scale': { wide: 565, narrow: 585 },
  order: { wide: 320, narrow: 550 },
  extrapolation: { wide: 160, narrow: 355 },
  ffn: { wide: 470, narrow: 995 },
  'no-leak': { wide: 560, narrow: 845 },
  norms: { wide: 180, narrow: 385 },
  dropout: { wide: 800, narrow: 1640 },
  parallel: { wide: 180, narrow: 350 },
  beams: { wide: 110, narrow: 155 },
  lab: { wide: 610, narrow: 1385 },
};

/**
 * Views whose final height depends on the kind of model: the overview draws a row per
 * stack (two for an encoder-decoder) and ends in the next token or in class
 * probabilities. The kind is known before the engine answers (the model's manifest
 * entry), so the room is that of the model being loaded.
 */
export const RESERVE_BY_ARCH: Readonly<Record<string, Readonly<Record<Arch, { wide: number; narrow: number }>>>> = {
  overview: {
    // Each with the text box above the stages (41 px).
    decoder_only: { wide: 471, narrow: 1467 },
    encoder_decoder: { wide: 796, narrow: 2471 },
    encoder_only: { wide: 456, narrow: 1221 },
  },
};

/**
 * Views whose content follows the generation (and the settings that shape it): they keep
 * their reserved room as a minimum after the first pass too, so that a shorter content
 * (fewer tokens asked for, a short prompt) leaves space at the foot of the view instead of
 * pulling up what is below it.
 */
export const KEEP_ROOM: ReadonlySet<string> = new Set(['overview', 'attention', 'generation']);

/** The room a view takes before the engine first answers, for a model of kind `arch` (null: reserve nothing). */
export function reserveOf(view: string, arch: Arch): { wide: number; narrow: number } | null {
  return RESERVE_BY_ARCH[view]?.[arch] ?? RESERVE[view] ?? null;
}

/** What `generationReach` reads of the page's state (the store). */
export interface ReachSource {
  canGenerate(): boolean;
  readonly info: { max_len: number } | null;
  readonly promptTokens: readonly string[];
  readonly st: { play: boolean; max: number };
  readonly gen: { playing: boolean; generated: readonly number[] };
}

/**
 * The length the decoder's sequence can reach while the model generates: the prompt and
 * `max` new tokens, within the model's context; 0 when nothing is being or will be
 * generated (a classifier, or playback off and nothing generated yet). Views that grow
 * with the sequence (the attention map, the masks) keep a box of this length from the
 * start, so they fill in without moving what is below them.
 */
export function generationReach(s: ReachSource): number {
  if (!s.info || !s.canGenerate()) return 0;
  if (!s.st.play && !s.gen.playing && s.gen.generated.length === 0) return 0;
  return Math.min(s.info.max_len, s.promptTokens.length + s.st.max);
}
