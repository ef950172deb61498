// The locks of a classroom link (`lock=causal,model`, names in ../lessons/classroom.ts):
// which settings are held, and the one rule that holds them. Every change of the settings
// goes through `holdLocks` (the store's state setter calls it), whichever path asked for
// it: a control, the mask editor, a view's button, a changed URL hash, a lesson, a script.
// The controls read `isLocked` to draw themselves disabled with `lockReason` beside them.

import { msg, str } from '@lit/localize';
import { settingName } from '../i18n/terms';
import type { PlaygroundState } from './url';
import type { RunSettings } from '../engine/protocol';
import { formatRunQuery, parseRunQuery } from '../lab/url';

/**
 * Settings a lock holds with it: the mask editor's rule replaces the causal switch on the
 * main stack, so a locked causal mask holds the editor's rule too (else "none" in the
 * editor would lift it). A locked rule alone leaves the switch free: the rule it holds,
 * "the causal switch decides", is the switch's.
 */
const ONE_FOR_LOCKING: Readonly<Record<string, readonly string[]>> = {
  causal: ['mask'],
};

/** The classroom's own keys: once a link locks a setting, these hold as well (a changed hash cannot lift the locks). */
const CLASSROOM_KEYS = ['lock', 'hide'] as const;

/** Every setting a lock list holds (with the ones locked together). */
export function lockedNames(lock: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const k of lock) {
    out.add(k);
    for (const t of ONE_FOR_LOCKING[k] ?? []) out.add(t);
  }
  return out;
}

/** The settings whose lock holds this one with it (`causal` for `mask`). */
function holders(name: string): string[] {
  return Object.keys(ONE_FOR_LOCKING).filter((k) => ONE_FOR_LOCKING[k].includes(name));
}

/** Is this setting held by the state's lock list? */
export function isLocked(state: Pick<PlaygroundState, 'lock'> | null | undefined, name: string): boolean {
  if (!state || !state.lock.length) return false;
  return state.lock.includes(name) || holders(name).some((t) => state.lock.includes(t));
}

/** The setting named as the learner saw it locked: the editor's rule held by a locked causal mask is named as the causal mask. */
function shownName(state: Pick<PlaygroundState, 'lock'>, name: string): string {
  return holders(name).find((t) => state.lock.includes(t)) ?? name;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * `next` with every setting `prev` locks kept as `prev` has it, and the names of the ones
 * that `next` would have changed (the classroom's own keys are kept without being named).
 */
export function holdLocks(prev: PlaygroundState, next: PlaygroundState): { state: PlaygroundState; refused: string[] } {
  if (!prev.lock.length) return { state: next, refused: [] };
  const held = lockedNames(prev.lock);
  const out: Record<string, unknown> = { ...next };
  const refused: string[] = [];
  for (const k of held) {
    if (!(k in prev)) continue;
    const key = k as keyof PlaygroundState;
    if (!same(prev[key], next[key])) {
      out[key] = prev[key];
      const shown = shownName(prev, k);
      if (!refused.includes(shown)) refused.push(shown);
    }
  }
  for (const k of CLASSROOM_KEYS) out[k] = prev[k];
  return { state: out as unknown as PlaygroundState, refused };
}

/**
 * Does `next` open another lesson of the assignment `prev` is in (`lessons=`), under its
 * locks? Each lesson opens on its own preset (its model, its input), so the locks then hold
 * the settings as the assignment's link opens that lesson (`assignedLessonLocks`), not as
 * the last lesson had them; a lesson the assignment does not give is held as any change.
 */
export function opensAssignedLesson(prev: PlaygroundState, next: PlaygroundState): boolean {
  return prev.lock.length > 0 && next.lesson !== '' && next.lesson !== prev.lesson && prev.lessons.includes(next.lesson);
}

/**
 * The part of the link (`hash`, without `#`, written under the lesson open now) that the
 * locks hold when lesson `lesson` of the assignment opens: the locked settings the link
 * names (the teacher's own; the ones it leaves out come from the lesson's preset) and the
 * classroom's keys. A hand-edited value of a locked setting in the new link is not in it,
 * so it is refused as before.
 */
export function assignedLessonLocks(hash: string, lesson: string, lock: readonly string[]): string {
  const held = lockedNames(lock);
  const out = new URLSearchParams();
  out.set('lesson', lesson);
  for (const [k, v] of new URLSearchParams(hash)) if (held.has(k) || (CLASSROOM_KEYS as readonly string[]).includes(k) || k === 'lessons' || k === 'lang') out.set(k, v);
  return out.toString();
}

/** A copy of the settings that scripts cannot change in place (a script changes them through the store, where the locks hold). */
export function frozen(st: PlaygroundState): PlaygroundState {
  for (const v of Object.values(st)) {
    if (Array.isArray(v)) {
      for (const x of v) if (x && typeof x === 'object') Object.freeze(x);
      Object.freeze(v);
    } else if (v && typeof v === 'object') {
      const m = v as { rule?: object; cells?: object[] };
      if (m.rule) Object.freeze(m.rule);
      if (m.cells) {
        for (const c of m.cells) Object.freeze(c);
        Object.freeze(m.cells);
      }
      Object.freeze(v);
    }
  }
  return Object.freeze(st);
}

/** The short note beside a locked control: why it does not move. */
export function lockReason(state: Pick<PlaygroundState, 'lock'>, name: string): string {
  return msg(str`locked by your teacher: ${settingName(shownName(state, name))}`, { id: 'lock.reason' });
}

/** What the page says when a change of locked settings was refused. */
export function refusedNote(refused: readonly string[]): string {
  const names = refused.map(settingName).join(msg(', ', { id: 'lock.list-sep' }));
  return refused.length === 1
    ? msg(str`This link keeps ${names} as it is: your teacher locked it.`, { id: 'teacher.locked-one' })
    : msg(str`This link keeps ${names} as they are: your teacher locked them.`, { id: 'teacher.locked-many' });
}

/** Why a lesson's experiment cannot be done here: the setting it needs is locked. */
export function blockedNote(state: Pick<PlaygroundState, 'lock'>, name: string): string {
  return msg(str`This experiment changes the ${settingName(shownName(state, name))}, which your teacher locked in this link, so it cannot be done here. Ask your teacher for a link that leaves it free.`, {
    id: 'lock.blocked',
  });
}

/**
 * Why a lab run with these settings (over its task's `defaults`) may not be trained: with
 * the lab's settings (`train`) locked, only the link's run trains; '' when it may.
 */
export function trainRefusal(state: PlaygroundState, settings: RunSettings, defaults: RunSettings): string {
  if (!isLocked(state, 'train')) return '';
  const fixed = parseRunQuery(state.train).settings;
  const allowed = { ...defaults, ...fixed, task: fixed.task ?? 'reverse' } as RunSettings;
  if (settings.task === allowed.task && formatRunQuery(settings, defaults) === formatRunQuery(allowed, defaults)) return '';
  return refusedNote(['train']);
}
