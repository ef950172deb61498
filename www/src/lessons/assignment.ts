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

export { ASSIGNMENT_KEYS, assignmentLessonHash, namesAssignmentModel } from './assignment-link';

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
