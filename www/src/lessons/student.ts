// Who is working in this browser: a name or seat number a student types once, kept in local
// storage (`tplay-student`). Everything a student does is kept under their own name: the
// tour's progress and answers (`tplay-lessons@<name>`), where each lesson stood
// (`tplay-lesson-state@<name>` in session storage) and the lab's runs (IndexedDB keys under
// `@<name>/`). Nobody named (the default) keeps the keys the page always used, so progress
// and runs from before students existed stay readable as the default student's. Nothing is
// sent anywhere. No DOM beyond storage.

const KEY = 'tplay-student';
/** Longest name kept (characters). */
export const MAX_STUDENT = 32;

/** A typed name made fit to keep: control characters dropped, spaces collapsed, cut to MAX_STUDENT characters. */
export function cleanStudent(text: string): string {
  // eslint-disable-next-line no-control-regex
  const t = String(text).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ').replace(/\s+/g, ' ').trim();
  return [...t].slice(0, MAX_STUDENT).join('');
}

/** The student working now ('' for nobody named: the default). */
export function currentStudent(): string {
  try {
    return cleanStudent(localStorage.getItem(KEY) ?? '');
  } catch {
    return '';
  }
}

/** Name the student working now ('' for nobody: the default). */
export function setStudent(name: string): void {
  try {
    const n = cleanStudent(name);
    if (n) localStorage.setItem(KEY, n);
    else localStorage.removeItem(KEY);
  } catch {
    // no storage: the name is not kept
  }
}

/** A storage key of the student working now: the key itself for the default student, `key@<name>` for a named one. */
export function studentKey(key: string, student = currentStudent()): string {
  return student ? `${key}@${encodeURIComponent(student)}` : key;
}

/** The prefix of the student's keys in the lab's IndexedDB store ('' for the default student). */
export function studentRunPrefix(student = currentStudent()): string {
  return student ? `@${encodeURIComponent(student)}/` : '';
}
