// Classroom mode: a link that locks chosen settings (`lock=causal,model`) and hides chosen
// controls (`hide=model,backend`). The page refuses changes to a locked setting and says
// so; unknown names in either list are dropped and named like every other bad value of a
// link. It is a convenience for a class, not a security boundary: a learner who edits the
// link can remove it. No DOM here.

import { DEFAULTS, formatHash, parseHash, SETTING_NAMES, type PlaygroundState } from '../state/url';
import { lessonEntry } from './catalogue';

/** The controls a classroom link may hide. */
export const HIDEABLE: readonly string[] = [
  'model',
  'position',
  'design',
  'causal',
  'pad',
  'scale',
  'backend',
  'seed',
  'mode',
  'drop',
  'rerun',
  'colours',
  'lessons',
];

/** Settings a class never needs to lock (they say what is shown, not what is computed). */
export const NEVER_LOCKED: readonly string[] = ['lesson', 'lock', 'hide', 'theme', 'views', 'lang', 'lessons', 'note', 'example', 'chrome', 'keep'];

/** The settings a classroom link may lock, in table order. */
export const LOCKABLE: readonly string[] = SETTING_NAMES.filter((k) => !NEVER_LOCKED.includes(k));

/** Settings that only steer what the views show or how fast: left free unless the teacher locks them. */
export const FREE_BY_DEFAULT: readonly string[] = ['site', 'layer', 'head', 'play', 'speed'];

/** The controls that change this setting. */
export const CONTROLS_OF: Readonly<Record<string, readonly string[]>> = {
  model: ['model', 'position', 'design'],
  causal: ['causal'],
  pad: ['pad'],
  scale: ['scale'],
  backend: ['backend'],
  seed: ['seed'],
  mode: ['mode', 'rerun'],
  drop: ['drop'],
};

export interface ClassroomLink {
  /** The lesson the link opens ('' for none: `settings` alone). */
  lesson: string;
  /** Extra settings in the URL-hash format (the teacher's own, or a pasted link's hash). */
  settings: string;
  /** Settings the learner may change; every other lockable one is locked. */
  allowed: readonly string[];
  /** Controls not shown. */
  hidden: readonly string[];
}

/** The settings a lesson's experiment needs unlocked, and the navigation ones. */
export function defaultAllowed(lessonId: string): string[] {
  const l = lessonEntry(lessonId);
  return [...FREE_BY_DEFAULT, ...(l?.setting ? [l.setting] : [])];
}

/** The controls nobody needs for this lesson's experiment: those of locked settings, and the tour's. */
export function defaultHidden(allowed: readonly string[]): string[] {
  const keep = new Set(allowed.flatMap((s) => CONTROLS_OF[s] ?? []));
  return HIDEABLE.filter((c) => !keep.has(c) && c !== 'colours');
}

/** The hash (without `#`) of a classroom link. */
export function classroomHash(c: ClassroomLink): string {
  const extra = new URLSearchParams(c.settings.replace(/^#/, ''));
  for (const k of ['lesson', 'lock', 'hide']) extra.delete(k);
  const out = new URLSearchParams();
  if (c.lesson) out.set('lesson', c.lesson);
  for (const [k, v] of extra) out.set(k, v);
  const lock = LOCKABLE.filter((k) => !c.allowed.includes(k));
  if (lock.length) out.set('lock', lock.join(','));
  const hide = HIDEABLE.filter((k) => c.hidden.includes(k));
  if (hide.length) out.set('hide', hide.join(','));
  // Commas may stay as they are in a fragment: a shorter link, a less dense QR code.
  return out.toString().replace(/%2C/g, ',');
}

/** A pasted playground link (or its hash) as settings text, without its classroom keys; notes for what was ignored. */
export function settingsOfLink(link: string): { settings: string; notes: string[] } {
  const i = link.indexOf('#');
  const hash = i >= 0 ? link.slice(i + 1) : link.includes('=') ? link : '';
  const p = parseHash(hash);
  const st: PlaygroundState = { ...p.state, lesson: '', lock: [], hide: [] };
  return { settings: formatHash(st, DEFAULTS), notes: p.notes };
}
