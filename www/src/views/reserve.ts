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
  tokenizer: { wide: 136, narrow: 177 },
  generation: { wide: 270, narrow: 476 },
  architecture: { wide: 950, narrow: 1090 },
  attention: { wide: 755, narrow: 1130 },
  masks: { wide: 335, narrow: 495 },
  output: { wide: 490, narrow: 590 },
  hidden: { wide: 195, narrow: 285 },
  'sqrt-dk': { wide: 210, narrow: 475 },
  saturation: { wide: 310, narrow: 430 },
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
  weights: { wide: 330, narrow: 535 },
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
    decoder_only: { wide: 471, narrow: 1471 },
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

/**
 * The room of each view shown alone (`chrome=none`, ../views/alone.ts: its picture without
 * title, prose or controls), measured as RESERVE is, with the default model and settings.
 */
export const RESERVE_ALONE: Readonly<Record<string, { wide: number; narrow: number }>> = {
  overview: { wide: 355, narrow: 1227 },
  controls: { wide: 116, narrow: 285 },
  backend: { wide: 32, narrow: 72 },
  input: { wide: 71, narrow: 71 },
  characters: { wide: 35, narrow: 100 },
  tokenizer: { wide: 79, narrow: 79 },
  generation: { wide: 75, narrow: 100 },
  architecture: { wide: 637, narrow: 637 },
  attention: { wide: 455, narrow: 455 },
  masks: { wide: 258, narrow: 258 },
  output: { wide: 319, narrow: 319 },
  hidden: { wide: 99, narrow: 99 },
  'sqrt-dk': { wide: 283, narrow: 650 },
  saturation: { wide: 160, narrow: 160 },
  cost: { wide: 337, narrow: 367 },
  schedule: { wide: 291, narrow: 195 },
  positions: { wide: 1255, narrow: 633 },
  'embedding-scale': { wide: 270, narrow: 166 },
  order: { wide: 144, narrow: 228 },
  extrapolation: { wide: 302, narrow: 171 },
  ffn: { wide: 188, narrow: 188 },
  'no-leak': { wide: 445, narrow: 505 },
  norms: { wide: 255, narrow: 629 },
  dropout: { wide: 525, narrow: 1007 },
  parallel: { wide: 463, narrow: 801 },
  beams: { wide: 648, narrow: 648 },
  weights: { wide: 129, narrow: 198 },
  lab: { wide: 321, narrow: 928 },
};

/**
 * Views whose picture grows with the generation: alone, while the model generates (or
 * will), their room is that of the map at the length the generation reaches with the
 * default 32 tokens; a still picture (`play=0`) takes RESERVE_ALONE's.
 */
export const RESERVE_ALONE_PLAYING: Readonly<Record<string, { wide: number; narrow: number }>> = {
  masks: { wide: 1122, narrow: 362 },
};

/** What the alone room reads of the settings. */
export interface AloneSettings {
  readonly keep: readonly string[];
  readonly play: boolean;
  readonly text: string;
  readonly max: number;
}

/**
 * The attention map alone, from the settings: its cells are sized for the length the
 * sequence reaches (the prompt, one token per character and the start token, plus `max`
 * when it plays), about 13 px a position in a post's column up to the box of 40 positions,
 * and a phone's column holds any length in about 340 px, a short one in less (measured
 * with the default model at 390 px: 4 positions 166 px, 8 258, 19 and more 314–340).
 */
function attentionAlone(st: AloneSettings): { wide: number; narrow: number } {
  // Before the model list arrives the prompt is the default model's (7 characters).
  const reach = ([...st.text].length || 7) + 1 + (st.play ? st.max : 0);
  const wide = Math.min(951, 190 + 13 * reach);
  return { wide, narrow: Math.min(340, wide) };
}

/**
 * The room a view takes before the engine first answers, for a model of kind `arch` (null:
 * reserve nothing); `alone`: the settings of a view shown alone, whose room is its
 * picture's (and, per part it keeps, that part's share of the full view's room).
 */
export function reserveOf(view: string, arch: Arch, alone: AloneSettings | null = null): { wide: number; narrow: number } | null {
  const full = RESERVE_BY_ARCH[view]?.[arch] ?? RESERVE[view] ?? null;
  if (!alone) return full;
  const pic = view === 'attention' ? attentionAlone(alone) : ((alone.play ? RESERVE_ALONE_PLAYING[view] : undefined) ?? RESERVE_ALONE[view]);
  if (!pic || !full) return pic ?? full;
  // A kept part takes room the picture alone does not: reserve the full view's room then.
  const kept = alone.keep.filter((k) => k !== 'menu');
  return kept.length ? full : pic;
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
