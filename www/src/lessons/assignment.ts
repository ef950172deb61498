// An assignment: a classroom link that gives several lessons in the teacher's order
// (`lessons=a,b,c`), with an optional instruction (`note=`) and class example sentence
// (`example=`), besides the link's language, model, lab run settings (`train=`) and locks.
// Its id (a 32-bit FNV-1a of the lessons, the instruction, the example and the run
// settings) goes into every completion code, so the teacher page can tell a code of another
// assignment. No DOM here.

import type { PlaygroundState } from '../state/url';
import type { RunRecord } from '../lab/types';
import { parseRunQuery } from '../lab/url';
import { fnv1a, type Completion, type CodeRun } from './code';
import { lessonNamed, type Lesson } from './lessons';
import type { Progress } from './progress';

/** The keys of a link that belong to the assignment, not to one lesson: they go along from lesson to lesson. */
export const ASSIGNMENT_KEYS: readonly string[] = ['lessons', 'note', 'example', 'lang', 'lock', 'hide', 'train', 'model'];

export interface Assignment {
  /** The lessons given, known ones only, in the teacher's order. */
  lessons: Lesson[];
  /** Ids the link names that are no lesson (dropped). */
  unknown: string[];
  note: string;
  example: string;
  /** The lab's run settings ('' for no lab run). */
  train: string;
  id: number;
}

/** The assignment's id: the same for the teacher's link and every student's page of it. */
export function assignmentId(a: { lessons: readonly string[]; note: string; example: string; train: string }): number {
  return fnv1a(['tplay-assignment-1', a.lessons.join(','), a.note, a.example, a.train].join('\n'));
}

/** The assignment a link's settings give, or null when they give none. */
export function assignmentOf(st: Pick<PlaygroundState, 'lessons' | 'note' | 'example' | 'train'>): Assignment | null {
  if (!st.lessons.length) return null;
  const lessons = st.lessons.map((id) => lessonNamed(id)).filter((l): l is Lesson => !!l);
  const unknown = st.lessons.filter((id) => !lessonNamed(id));
  return { lessons, unknown, note: st.note, example: st.example, train: st.train, id: assignmentId(st) };
}

/** The link (hash, without `#`) of lesson `id` in the assignment the current link `hash` gives; `kept` is where the student left that lesson. */
export function assignmentLessonHash(hash: string, id: string, kept?: string, locked: readonly string[] = []): string {
  const now = new URLSearchParams(hash);
  const out = new URLSearchParams();
  out.set('lesson', id);
  const carry = new Set([...ASSIGNMENT_KEYS, ...locked]);
  for (const [k, v] of now) if (carry.has(k)) out.set(k, v);
  if (kept) for (const [k, v] of new URLSearchParams(kept)) if (!carry.has(k) && k !== 'lesson') out.set(k, v);
  return out.toString().replace(/%2C/g, ',');
}

/**
 * Does this link give an assignment that names its model (`lessons=…&model=…`)? Then the
 * page's own hash names the model in every lesson of it, even where the model is the open
 * lesson's own: else the next lesson, carrying the keys its link names, would open on its
 * own preset's model instead of the teacher's.
 */
export function namesAssignmentModel(hash: string): boolean {
  try {
    const p = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
    return p.has('lessons') && p.get('model') !== null && p.get('model') !== '';
  } catch {
    return false;
  }
}

/** The task the assignment's lab run trains ('' for none). */
export function assignedTask(train: string): string {
  if (!train) return '';
  const t = parseRunQuery(train).settings.task;
  return typeof t === 'string' ? t : '';
}

/** The student's run for the assignment: the latest that trains its task and has been evaluated; null for none. */
export function assignedRun(runs: readonly RunRecord[], train: string): RunRecord | null {
  const task = assignedTask(train);
  if (!task) return null;
  let best: RunRecord | null = null;
  for (const r of runs) if (r.settings.task === task && r.log.lastEval() && (!best || r.created_at >= best.created_at)) best = r;
  return best;
}

/** What a run hands in: its last evaluation's metric and loss, and its steps. */
export function runResult(r: RunRecord): CodeRun | null {
  const e = r.log.lastEval();
  if (!e) return null;
  const n = r.log.length;
  return { metric: e.metric, loss: e.loss, steps: n ? r.log.step(n - 1) : 0 };
}

/** Has every assigned lesson an answer? */
export function allAnswered(a: Assignment, p: Progress): boolean {
  return a.lessons.length > 0 && a.lessons.every((l) => Object.hasOwn(p.answers, l.id));
}

/** The completion a student hands in (encodeCompletion makes its code). */
export function completionOf(a: Assignment, p: Progress, student: string, runs: readonly RunRecord[]): Omit<Completion, 'version'> {
  const run = assignedRun(runs, a.train);
  const result = run ? runResult(run) : null;
  return {
    student,
    assignment: a.id,
    lessons: a.lessons.map((l) => {
      const x = Object.hasOwn(p.answers, l.id) ? p.answers[l.id] : undefined;
      return x ? { answer: x.answer, answered: true, right: x.right, tries: x.tries } : { answer: '', answered: false, right: false, tries: 0 };
    }),
    runs: result ? [result] : [],
  };
}
