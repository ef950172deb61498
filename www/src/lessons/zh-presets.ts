// The lessons on Chinese models: with the page in Chinese, a lesson whose experiment works
// the same on a shipped Chinese model opens on that model instead (the preset here replaces
// the lesson's own, ./lessons.ts). A lesson that is not listed keeps its preset: its task
// names a sibling that only the English-data model has (a design choice, W_Q = W_K, a
// position encoding the Chinese models lack).
//
// Each entry holds only what changes, the model and its input: the lesson's views and
// switches come from its own preset, so the two never drift apart.

import type { Lang } from '../state/url';

const ZH_GRAMMAR = 'model=zh-grammar-sinusoidal.safetensors';

/** Per lesson id, the settings its Chinese run puts over the lesson's own preset. */
export const ZH_PRESETS: Readonly<Record<string, string>> = {
  // One new token end to end, and the recap's generation to the end, on the Chinese grammar model.
  'new-token': ZH_GRAMMAR,
  recap: ZH_GRAMMAR,
  heads: ZH_GRAMMAR,
  'scaled-dot': ZH_GRAMMAR,
  // A short review and a longer one in one batch: the short one is padded.
  'padding-mask': 'model=zh-sentiment.safetensors&text=这部电影很好&batch=我不喜欢这部电影但是音乐很好',
  'causal-mask': ZH_GRAMMAR,
  'attention-sites': 'model=zh-numerals.safetensors&text=三百一十二',
  parallel: ZH_GRAMMAR,
  // The Chinese grammar models differ only in their position encoding: sinusoidal, learned, ALiBi, none.
  positions: ZH_GRAMMAR,
  // The order view starts on the page's model: 猫追狗 against 狗追猫 without positions.
  order: 'model=zh-grammar-none.safetensors',
  // On a Chinese model the view measures the four Chinese grammar models.
  extrapolation: ZH_GRAMMAR,
  architectures: ZH_GRAMMAR,
  // From the Chinese grammar model (decoder only) to the Chinese numerals model (encoder–decoder: 三百一十二 → 312).
  'which-architecture': ZH_GRAMMAR,
  // Any decoder changes a token and compares the rows: the FFN's and the no-leak view's
  // checks count what the engine measured on the model loaded.
  ffn: ZH_GRAMMAR,
  'no-leak': ZH_GRAMMAR,
  'kv-cache': ZH_GRAMMAR,
  // The view times a model of its own; the page around it shows the Chinese grammar model.
  time: ZH_GRAMMAR,
  decoding: ZH_GRAMMAR,
};

/** The preset a lesson opens with in `lang`: its own, with the Chinese settings over it where it has them. */
export function presetFor(lesson: { id: string; preset: string }, lang: Lang): string {
  if (lang !== 'zh-Hans' || !Object.hasOwn(ZH_PRESETS, lesson.id)) return lesson.preset;
  const merged = new URLSearchParams(lesson.preset);
  for (const [k, v] of new URLSearchParams(ZH_PRESETS[lesson.id])) merged.set(k, v);
  return merged.toString();
}
