// The tour's progress, kept in the reader's browser (localStorage): which lessons are done
// and which was open last. Never sent anywhere; a browser without storage simply forgets.

const KEY = 'tplay-lessons';

export interface Progress {
  done: string[];
  last: string;
}

export function loadProgress(): Progress {
  try {
    const raw = JSON.parse(localStorage.getItem(KEY) ?? 'null') as unknown;
    if (raw && typeof raw === 'object') {
      const r = raw as { done?: unknown; last?: unknown };
      const done = Array.isArray(r.done) ? r.done.filter((x): x is string => typeof x === 'string' && x.length <= 40).slice(0, 100) : [];
      return { done, last: typeof r.last === 'string' && r.last.length <= 40 ? r.last : '' };
    }
  } catch {
    // unreadable or no storage: start afresh
  }
  return { done: [], last: '' };
}

export function saveProgress(p: Progress): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(p));
  } catch {
    // no storage (private mode, full): the tour still works, it only forgets
  }
}
