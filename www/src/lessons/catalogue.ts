// The lessons as the first load needs them: each lesson's id, the settings it opens with
// (its preset, in the URL-hash format) and the setting its experiment changes (a classroom
// link leaves it unlocked). A link with `lesson=<id>` brings the preset at once; the
// lessons' text (./lessons.ts, ./seed-lessons.ts, ./checks.ts) comes with the lesson panel
// (./load.ts). Each lesson there takes these fields from here (`...catalogued(id)`), so the two
// never drift apart. In the order of ./lessons.ts's LESSONS.

import type { PlaygroundState } from '../state/url';
import { headsLink } from '../lab/experiments';

const GRAMMAR = 'model=grammar-sinusoidal.safetensors';
const REVERSE = 'model=reverse.safetensors';

export interface LessonEntry {
  /** The id in `#lesson=<id>` and `<transformer-playground lesson="<id>">`. */
  readonly id: string;
  /** The settings it opens with, in the URL-hash format. */
  readonly preset: string;
  /** The setting the experiment changes (a classroom link leaves it unlocked), if it is one. */
  readonly setting?: keyof PlaygroundState;
}

export const CATALOGUE: readonly LessonEntry[] = [
  { id: 'heads', preset: `${GRAMMAR}&views=attention,output,cost&play=0`, setting: 'ablate' },
  { id: 'qkv', preset: `${GRAMMAR}&views=controls,attention&play=0`, setting: 'model' },
  { id: 'scaled-dot', preset: `${GRAMMAR}&views=controls,attention,saturation,sqrt-dk&play=0`, setting: 'scale' },
  { id: 'dot-vs-additive', preset: `${REVERSE}&views=controls,attention,parallel&play=0`, setting: 'model' },
  { id: 'padding-mask', preset: 'model=sentiment.safetensors&text=the movie was good&batch=i did not like the acting but the music was great&views=controls,masks,attention&play=0', setting: 'pad' },
  { id: 'causal-mask', preset: `${GRAMMAR}&views=controls,masks,attention,output&play=0`, setting: 'causal' },
  { id: 'attention-sites', preset: 'model=translate.safetensors&views=architecture,attention&site=encoder_self&play=0', setting: 'site' },
  { id: 'parallel', preset: `${GRAMMAR}&views=parallel&play=0` },
  { id: 'embedding-scale', preset: `${REVERSE}&views=controls,embedding-scale&play=0`, setting: 'model' },
  { id: 'positions', preset: `${GRAMMAR}&views=controls,positions&play=0`, setting: 'model' },
  { id: 'order', preset: 'views=order&play=0' },
  { id: 'extrapolation', preset: 'views=extrapolation&play=0' },
  { id: 'residual', preset: `${REVERSE}&views=controls,hidden,output&play=0`, setting: 'model' },
  { id: 'no-leak', preset: `${REVERSE}&views=controls,no-leak&play=0`, setting: 'causal' },
  { id: 'norms', preset: `${REVERSE}&views=controls,norms&play=0`, setting: 'model' },
  { id: 'pre-post-ln', preset: `${REVERSE}&views=controls,architecture,hidden&play=0`, setting: 'model' },
  { id: 'ffn', preset: `${REVERSE}&views=ffn&play=0` },
  { id: 'dropout', preset: 'model=reverse-dropout.safetensors&views=controls,dropout&play=0', setting: 'mode' },
  { id: 'noam-adam', preset: 'views=schedule&play=0' },
  { id: 'architectures', preset: `${GRAMMAR}&views=controls,architecture,output&play=0`, setting: 'model' },
  { id: 'kv-cache', preset: `${GRAMMAR}&views=generation&max=24&speed=0`, setting: 'cache' },
  { id: 'decoding', preset: `${GRAMMAR}&views=output,generation,beams&max=16&speed=0`, setting: 'strategy' },
  { id: 'new-token', preset: `${GRAMMAR}&views=overview,generation&max=8&speed=0&play=0` },
  { id: 'shared-qk', preset: 'model=grammar-shared-qk.safetensors&views=controls,attention&play=0', setting: 'model' },
  { id: 'head-dim', preset: `views=lab&play=0&${new URLSearchParams({ train: headsLink() }).toString()}` },
  { id: 'block-anatomy', preset: 'model=reverse-post-ln.safetensors&views=architecture,hidden&play=0' },
  { id: 'residual-and-norm', preset: `${REVERSE}&views=controls,architecture,hidden&play=0`, setting: 'model' },
  { id: 'batch-norm', preset: 'model=reverse-batch-norm.safetensors&views=controls,norms,output&play=0', setting: 'mode' },
  { id: 'dropout-where', preset: 'model=reverse-dropout.safetensors&views=controls,dropout&play=0' },
  { id: 'which-architecture', preset: `${GRAMMAR}&views=controls,overview&play=0`, setting: 'model' },
  { id: 'time', preset: `${REVERSE}&views=time&play=0` },
  { id: 'recap', preset: `${GRAMMAR}&views=overview,generation&max=12&speed=0&play=0` },
];

/** The catalogue's entry of this id, if there is one. */
export function lessonEntry(id: string): LessonEntry | undefined {
  return CATALOGUE.find((l) => l.id === id);
}

/** The entry of a lesson that ./lessons.ts defines (its id, preset and setting). */
export function catalogued(id: string): LessonEntry {
  const e = lessonEntry(id);
  if (!e) throw new Error(`no lesson ${id} in the catalogue`);
  return e;
}
