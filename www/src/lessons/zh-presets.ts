// The lessons on Chinese models: with the page in Chinese, a lesson whose experiment works
// the same on a shipped Chinese model opens on that model instead (the preset here replaces
// the lesson's own, ./lessons.ts). A lesson that is not listed keeps its preset: its task
// names a sibling that only the English-data model has (a design choice, W_Q = W_K, a
// position encoding the Chinese models lack).
//
// Each preset keeps the lesson's views and switches; only the model (and its input) change.

import type { Lang } from '../state/url';

const ZH_GRAMMAR = 'model=zh-grammar-sinusoidal.safetensors';

/** Per lesson id, the preset of its Chinese run. */
export const ZH_PRESETS: Readonly<Record<string, string>> = {
  heads: `${ZH_GRAMMAR}&views=attention,output,cost&play=0`,
  'scaled-dot': `${ZH_GRAMMAR}&views=controls,attention,saturation,sqrt-dk&play=0`,
  // A short review and a longer one in one batch: the short one is padded.
  'padding-mask': 'model=zh-sentiment.safetensors&text=这部电影很好&batch=我不喜欢这部电影但是音乐很好&views=controls,masks,attention&play=0',
  'causal-mask': `${ZH_GRAMMAR}&views=controls,masks,attention,output&play=0`,
  'attention-sites': 'model=zh-numerals.safetensors&text=三百一十二&views=architecture,attention&site=encoder_self&play=0',
  parallel: `${ZH_GRAMMAR}&views=parallel&play=0`,
  // The Chinese grammar models differ only in their position encoding: sinusoidal, learned, ALiBi, none.
  positions: `${ZH_GRAMMAR}&views=controls,positions&play=0`,
  // The order view starts on the page's model: 猫追狗 against 狗追猫 without positions.
  order: 'model=zh-grammar-none.safetensors&views=order&play=0',
  // On a Chinese model the view measures the four Chinese grammar models.
  extrapolation: `${ZH_GRAMMAR}&views=extrapolation&play=0`,
  architectures: `${ZH_GRAMMAR}&views=controls,architecture,output&play=0`,
  'kv-cache': `${ZH_GRAMMAR}&views=generation&max=24&speed=0`,
  decoding: `${ZH_GRAMMAR}&views=output,generation,beams&max=16&speed=0`,
};

/** The preset a lesson opens with in `lang`: its Chinese one where it has one, else its own. */
export function presetFor(lesson: { id: string; preset: string }, lang: Lang): string {
  return lang === 'zh-Hans' && Object.hasOwn(ZH_PRESETS, lesson.id) ? ZH_PRESETS[lesson.id] : lesson.preset;
}
