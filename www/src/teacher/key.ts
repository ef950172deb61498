// The answer key's values, measured by the engine: each assigned lesson is opened in a
// playground element of its own (off screen, inert), its experiment done through the
// element's scripting API (a switch through `store.patch`, a head switched off with
// `store.toggleHead`, the lesson's sibling model loaded, the cross-attention site chosen,
// beam search chosen and the generation run, one step generated, train mode run again, the
// warmup set), and the answer read from the
// lesson's own check on that model — the value the students' pages will judge their answers
// against. A lesson whose answer depends on which model each student picks, on the timing of
// each student's device, on what each student picks inside a view, or on runs trained in the
// lab for minutes says so instead (`whyOpen`), with what its check compares. A lesson whose
// check a view answers as it opens (the order view, the plan, the dropout sites, the mask of
// the recap) is read as it opens. The playground is drawn at a fiftieth of its size with no
// opacity at the top of the page: its views measure only once they are in the viewport.

import { msg, str } from '@lit/localize';
import { currentLang } from '../i18n/locale';
import { HEADS_EXPERIMENT } from '../lab/experiments';
import type { Lesson } from '../lessons/lessons';
import type { PlaygroundState } from '../state/url';

/** What an experiment may drive: the element's store, through its scripting API. */
interface StoreLike {
  st: PlaygroundState;
  site: PlaygroundState['site'];
  lastForward: unknown;
  schedule: { warmup: number } | null;
  gen: { done: boolean; playing: boolean; start(play: boolean): Promise<void>; stepOne(): Promise<void> };
  runAgain(): Promise<void>;
  patch(p: Partial<PlaygroundState>): Promise<void>;
  toggleHead(h: { site: PlaygroundState['site']; layer: number; head: number }): Promise<void>;
  setWarmup(w: number): void;
}

/** One lesson's experiment: what to do, and (where the check's value is there before it too) when its result has come back. */
interface Experiment {
  run: (s: StoreLike) => Promise<void> | void;
  settled?: (s: StoreLike) => boolean;
}

const setting = (p: Partial<PlaygroundState>): Experiment => ({ run: (s) => s.patch(p) });
/** Load the lesson's sibling model: the check then reads that model (its info, a view's result, the forward pass). */
const load = (model: string): Experiment => ({ run: (s) => s.patch({ model }), settled: (s) => s.st.model === model });
/** A setting that restarts the generation, then the generation run to its end. */
const generate = (p: Partial<PlaygroundState>): Experiment => ({
  run: async (s) => {
    await s.patch(p);
    if (!s.gen.done && !s.gen.playing) await s.gen.start(true);
  },
});

/** The experiments done here, by lesson id: each the one the lesson's task asks for. */
const EXPERIMENTS: Readonly<Record<string, Experiment>> = {
  'causal-mask': setting({ causal: false }),
  'no-leak': setting({ causal: false }),
  'scaled-dot': setting({ scale: false }),
  'padding-mask': setting({ pad: false }),
  dropout: {
    run: async (s) => {
      await s.patch({ mode: 'train' });
      await s.runAgain();
    },
  },
  'batch-norm': setting({ mode: 'train' }),
  'attention-sites': setting({ site: 'cross' }),
  heads: { run: (s) => s.toggleHead({ site: s.site, layer: s.st.layer, head: 0 }) },
  qkv: load('grammar-shared-qk.safetensors'),
  'shared-qk': load('grammar-sinusoidal.safetensors'),
  'dot-vs-additive': load('reverse-additive.safetensors'),
  'embedding-scale': load('reverse-no-embed-scale.safetensors'),
  residual: load('reverse-no-residual.safetensors'),
  'residual-and-norm': load('reverse-no-residual.safetensors'),
  norms: load('reverse-batch-norm.safetensors'),
  'pre-post-ln': load('reverse-post-ln.safetensors'),
  'which-architecture': {
    run: (s) => s.patch({ model: s.st.model.startsWith('zh-') ? 'zh-numerals.safetensors' : 'translate.safetensors' }),
    settled: (s) => s.st.model === 'zh-numerals.safetensors' || s.st.model === 'translate.safetensors',
  },
  'kv-cache': generate({ cache: false }),
  decoding: generate({ strategy: 'beam' }),
  'new-token': { run: (s) => s.gen.stepOne() },
  'noam-adam': { run: (s) => s.setWarmup(400), settled: (s) => s.schedule?.warmup === 400 },
};

/** Why a lesson's answer is not measured here, with what its check compares; null when it is. */
export function whyOpen(l: Lesson): string | null {
  switch (l.id) {
    case 'head-dim': {
      const [one, many] = HEADS_EXPERIMENT.heads;
      return msg(str`measured on the students’ pages: the two runs take minutes of training in the lab. The check compares the held-out loss of the run with ${one} head against the run with ${many} heads.`, { id: 'teacher.key-open-lab' });
    }
    case 'positions':
      return msg('measured on the students’ pages: the right answer depends on which position encoding each student loads (added to the input, a term in the scores, or a rotation of the queries and keys).', { id: 'teacher.key-open-positions' });
    case 'architectures':
      return msg('measured on the students’ pages: the right answer depends on which model each student loads (encoder-only or encoder–decoder).', { id: 'teacher.key-open-architectures' });
    case 'ffn':
      return msg('measured on the students’ pages: the number of changed rows depends on which position each student edits in the view.', { id: 'teacher.key-open-ffn' });
    case 'extrapolation':
      return msg('measured on the students’ pages: the view measures every scheme at every length when the student presses its “Measure” button, which takes a while.', { id: 'teacher.key-open-extrapolation' });
    case 'parallel':
      return msg('measured on the students’ pages: the check fits the times measured on each student’s device.', { id: 'teacher.key-open-parallel' });
    default:
      return null;
  }
}

interface PlaygroundLike extends HTMLElement {
  ready: Promise<void>;
  store: StoreLike | null;
}

interface LessonLike extends HTMLElement {
  lesson?: Lesson;
  truth?: (l: Lesson) => number | null;
  doneNow?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The right option's index or the expected number of lesson `l` on `model` ('' for the lesson's own), or null when it is not measured here. */
export async function measureLesson(l: Lesson, model: string, host: HTMLElement, timeoutMs = 20000): Promise<number | null> {
  if (whyOpen(l) !== null) return null;
  // The built playground beside this page (its own entry: importing its module here would
  // move it into a shared chunk, away from the models it finds beside itself).
  if (!customElements.get('transformer-playground')) await import(/* @vite-ignore */ new URL('./playground.js', location.href).href);
  const el = document.createElement('transformer-playground') as PlaygroundLike;
  el.setAttribute('no-hash', '');
  // Off screen it never comes near the viewport: the engine starts at once.
  el.setAttribute('load', 'eager');
  el.setAttribute('models', new URL('./models/', location.href).href);
  el.setAttribute('lesson', l.id);
  el.setAttribute('lang', currentLang());
  if (model) el.setAttribute('preset', `model=${model}`);
  host.append(el);
  try {
    await Promise.race([el.ready, sleep(timeoutMs)]);
    const t0 = performance.now();
    while (!el.store?.lastForward && performance.now() - t0 < timeoutMs) await sleep(100);
    const ex = EXPERIMENTS[l.id];
    const s = el.store;
    if (ex && s) await Promise.race([ex.run(s), sleep(timeoutMs)]);
    const t1 = performance.now();
    // Lessons with no experiment here (a view's own result, read as the lesson opens) get a short wait.
    while (performance.now() - t1 < (ex ? timeoutMs : 3000)) {
      const tl = el.shadowRoot?.querySelector('tp-lesson') as LessonLike | null;
      // With an experiment: read once the lesson's own `done` sees it done, as a student's page does.
      const ok = !ex || (tl?.doneNow === true && (!ex.settled || (s !== null && ex.settled(s))));
      const v = ok && tl?.lesson && typeof tl.truth === 'function' ? tl.truth(tl.lesson) : null;
      if (v !== null && v !== undefined) return v;
      await sleep(200);
    }
    return null;
  } finally {
    el.remove();
  }
}
