// The lesson panel's code and the lessons' text (./tp-lesson.ts with ./lessons.ts,
// ./seed-lessons.ts, ./checks.ts, the course and the assignment panel), fetched once when a
// lesson first opens rather than with the page: the first load knows the lessons by their
// catalogue alone (./catalogue.ts). A page opened on a lesson fetches it beside the engine.

let panel: Promise<unknown> | null = null;

/** Fetch the lesson panel's code (once; a failed fetch is tried again by the next caller). */
export function loadLessonPanel(): Promise<unknown> {
  panel ??= import('./tp-lesson').catch((e: unknown) => {
    panel = null;
    throw e;
  });
  return panel;
}

/** Does a link (`lesson=<id>` in `hash`) or the element's own `lesson` open a lesson? */
export function opensLesson(hash: string, own: string): boolean {
  if (own) return true;
  try {
    return !!new URLSearchParams(hash.replace(/^#/, '')).get('lesson');
  } catch {
    return false;
  }
}
