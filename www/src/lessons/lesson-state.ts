// Where each lesson stood when the learner left it: the settings of its link (what they
// changed under the lesson's preset), whether the page had seen the experiment done, and
// the values the experiment is judged against, and the answer given to its question. Kept in session storage, so closing a
// lesson (or the lessons' chapter) and opening it again returns to it in this tab; never
// sent anywhere. A browser without storage simply starts the lesson afresh.

import { validAnswer, type Answer } from './progress';

import { studentKey } from './student';

/** The default student's key; a named student's is `tplay-lesson-state@<name>` (./student.ts). */
const KEY = 'tplay-lesson-state';

export interface LessonState {
  /** The lesson's link as the learner left it (`lesson=<id>&…`). */
  hash?: string;
  /** The page had seen the experiment done. */
  done?: boolean;
  /** The first value seen of each thing the experiment watches (its `changed` baseline). */
  memo?: [string, string][];
  /** The last answer committed to the lesson's question (right or not), and the tries so far. */
  answer?: Answer;
}

function readAll(): Record<string, LessonState> {
  try {
    const raw = JSON.parse(sessionStorage.getItem(studentKey(KEY)) ?? 'null') as unknown;
    if (raw && typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, LessonState>;
  } catch {
    // unreadable or no storage: nothing kept
  }
  return {};
}

/** What was kept of lesson `id`, checked for its shape (null when nothing was). */
export function lessonState(id: string): LessonState | null {
  const all = readAll();
  const s = Object.hasOwn(all, id) ? all[id] : undefined;
  if (!s || typeof s !== 'object') return null;
  const out: LessonState = {};
  // A kept link must be this lesson's, and of a link's size.
  if (typeof s.hash === 'string' && s.hash.length <= 4000 && new URLSearchParams(s.hash).get('lesson') === id) out.hash = s.hash;
  if (typeof s.done === 'boolean') out.done = s.done;
  if (Array.isArray(s.memo)) {
    out.memo = s.memo
      .filter((e): e is [string, string] => Array.isArray(e) && e.length === 2 && typeof e[0] === 'string' && typeof e[1] === 'string')
      .slice(0, 50);
  }
  const a = validAnswer(s.answer);
  if (a) out.answer = a;
  return out;
}

/** Keep `part` of lesson `id`'s state (merged into what is kept). */
export function keepLessonState(id: string, part: LessonState): void {
  if (!id) return;
  try {
    const all = readAll();
    all[id] = { ...(Object.hasOwn(all, id) ? all[id] : {}), ...part };
    sessionStorage.setItem(studentKey(KEY), JSON.stringify(all));
  } catch {
    // no storage (private mode, full): the lesson starts afresh next time
  }
}

/** Forget where every lesson stood for the student working now. */
export function forgetLessonStates(): void {
  try {
    sessionStorage.removeItem(studentKey(KEY));
  } catch {
    // no storage
  }
}
