// An assignment's link (./assignment.ts) as the first load needs it: which keys go along
// from lesson to lesson, the link of one lesson of it, and whether it names its model. No
// lessons' text here (it comes with the lesson panel), no DOM.

/** The keys of a link that belong to the assignment, not to one lesson: they go along from lesson to lesson. */
export const ASSIGNMENT_KEYS: readonly string[] = ['lessons', 'note', 'example', 'lang', 'lock', 'hide', 'train', 'model'];

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
