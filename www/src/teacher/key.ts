// The answer key's values, measured by the engine: each assigned lesson is opened in a
// playground element of its own (off screen, inert), its experiment done where it is one
// switch (the causal, padding or √d_k mask off, the KV cache off, train mode), and the
// answer read from the lesson's own check on that model — the value the students' pages will
// judge their answers against. Lessons whose experiment is not one switch are measured if
// their check needs no experiment, else left to the students' pages.

import { currentLang } from '../i18n/locale';
import type { Lesson } from '../lessons/lessons';
import type { PlaygroundState } from '../state/url';

/** The one-switch experiments, by the setting a lesson changes. */
const SWITCHES: Partial<Record<keyof PlaygroundState, Partial<PlaygroundState>>> = {
  causal: { causal: false },
  scale: { scale: false },
  pad: { pad: false },
  cache: { cache: false },
  mode: { mode: 'train' },
};

interface PlaygroundLike extends HTMLElement {
  ready: Promise<void>;
  store: { patch(p: Partial<PlaygroundState>): Promise<void>; lastForward: unknown } | null;
}

interface LessonLike extends HTMLElement {
  lesson?: Lesson;
  truth?: (l: Lesson) => number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The right option's index or the expected number of lesson `l` on `model` ('' for the lesson's own), or null when it is not measured here. */
export async function measureLesson(l: Lesson, model: string, host: HTMLElement, timeoutMs = 20000): Promise<number | null> {
  // The built playground beside this page (its own entry: importing its module here would
  // move it into a shared chunk, away from the models it finds beside itself).
  if (!customElements.get('transformer-playground')) await import(/* @vite-ignore */ new URL('./playground.js', location.href).href);
  const el = document.createElement('transformer-playground') as PlaygroundLike;
  el.setAttribute('no-hash', '');
  // Off screen, it never comes near the viewport: its engine starts at once.
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
    const sw = l.setting ? SWITCHES[l.setting] : undefined;
    if (sw && el.store) await el.store.patch(sw);
    const t1 = performance.now();
    while (performance.now() - t1 < (sw ? timeoutMs : 3000)) {
      const tl = el.shadowRoot?.querySelector('tp-lesson') as LessonLike | null;
      const v = tl?.lesson && typeof tl.truth === 'function' ? tl.truth(tl.lesson) : null;
      if (v !== null && v !== undefined) return v;
      await sleep(200);
    }
    return null;
  } finally {
    el.remove();
  }
}
