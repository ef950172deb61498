// The tour's progress, kept in the reader's browser (localStorage): which lessons are done,
// which was open last, and each lesson's answer to its question. Never sent anywhere; a
// browser without storage simply forgets. What is read back is checked field by field:
// anything of the wrong shape or size is dropped, so hostile content cannot break the page.

import { studentKey } from './student';

/** The default student's key; a named student's is `tplay-lessons@<name>` (./student.ts). */
const KEY = 'tplay-lessons';

/** The learner's answer to a lesson's question: what they committed last, whether it was right, after how many tries. */
export interface Answer {
  /** A choice's option index, or the number as typed (in its text form). */
  answer: string;
  right: boolean;
  tries: number;
}

export interface Progress {
  /** Lessons done: the experiment seen AND the answer right (or done before answers were asked). */
  done: string[];
  last: string;
  /** Per lesson id, its answer (no entry: not answered yet). */
  answers: Record<string, Answer>;
}

const ID = (x: unknown): x is string => typeof x === 'string' && x.length > 0 && x.length <= 40;

/** An answer read back from storage, or null when it is not one. */
export function validAnswer(a: unknown): Answer | null {
  if (!a || typeof a !== 'object' || Array.isArray(a)) return null;
  const r = a as { answer?: unknown; right?: unknown; tries?: unknown };
  if (typeof r.answer !== 'string' || r.answer.length > 64) return null;
  if (typeof r.right !== 'boolean') return null;
  if (typeof r.tries !== 'number' || !Number.isInteger(r.tries) || r.tries < 1 || r.tries > 1e6) return null;
  return { answer: r.answer, right: r.right, tries: r.tries };
}

function validAnswers(raw: unknown): Record<string, Answer> {
  const out: Record<string, Answer> = Object.create(null) as Record<string, Answer>;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const [id, a] of Object.entries(raw).slice(0, 100)) {
    const v = validAnswer(a);
    if (ID(id) && v) out[id] = v;
  }
  return out;
}

export function loadProgress(): Progress {
  try {
    const raw = JSON.parse(localStorage.getItem(studentKey(KEY)) ?? 'null') as unknown;
    if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
      const r = raw as { done?: unknown; last?: unknown; answers?: unknown };
      const done = Array.isArray(r.done) ? r.done.filter(ID).slice(0, 100) : [];
      return { done, last: typeof r.last === 'string' && r.last.length <= 40 ? r.last : '', answers: validAnswers(r.answers) };
    }
  } catch {
    // unreadable or no storage: start afresh
  }
  return { done: [], last: '', answers: Object.create(null) as Record<string, Answer> };
}

export function saveProgress(p: Progress): void {
  try {
    localStorage.setItem(studentKey(KEY), JSON.stringify({ done: p.done, last: p.last, answers: { ...p.answers } }));
  } catch {
    // no storage (private mode, full): the tour still works, it only forgets
  }
}

/** Keep lesson `id`'s answer (and, when right, the lesson as done), re-reading what is stored so that another tab's progress is kept. */
export function recordAnswer(id: string, a: Answer): Progress {
  const p = loadProgress();
  p.answers[id] = a;
  if (a.right && !p.done.includes(id)) p.done.push(id);
  saveProgress(p);
  return p;
}

/** Forget the progress and answers of the student working now (the caller has asked for confirmation). */
export function forgetProgress(): void {
  try {
    localStorage.removeItem(studentKey(KEY));
  } catch {
    // no storage: nothing kept
  }
}
