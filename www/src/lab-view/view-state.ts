// What the lab's panel holds when it is left (its chapter closed, the element removed):
// the form's settings, the selected run, the experiment chosen, the run the form was filled
// from and the link it last applied. Kept in session storage, so the lab opened again in
// this tab shows them as they were; never sent anywhere.

import type { Settings } from './fields';

const KEY = 'tplay-lab-view';

export interface LabViewState {
  form: Settings | null;
  selected: string | null;
  preset: string;
  from: string | null;
  appliedLink: string;
}

/** The lab panel's kept state, checked for its shape (null when none was kept). */
export function labViewState(): LabViewState | null {
  try {
    const raw = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Partial<LabViewState> | null;
    if (!raw || typeof raw !== 'object') return null;
    const str = (v: unknown) => (typeof v === 'string' && v.length <= 4000 ? v : null);
    const form = raw.form && typeof raw.form === 'object' && !Array.isArray(raw.form) && typeof (raw.form as { task?: unknown }).task === 'string' ? raw.form : null;
    return { form, selected: str(raw.selected), preset: str(raw.preset) ?? '', from: str(raw.from), appliedLink: str(raw.appliedLink) ?? '' };
  } catch {
    return null;
  }
}

/** Keep the lab panel's state (a browser without storage forgets it). */
export function keepLabViewState(s: LabViewState): void {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(s));
  } catch {
    // no storage: the lab starts afresh next time
  }
}

const TEXT_KEY = 'tplay-lab-text';

/** The lab's text box as it was left in this tab ('' when none was kept). */
export function labText(): string {
  try {
    return sessionStorage.getItem(TEXT_KEY) ?? '';
  } catch {
    return '';
  }
}

/** Keep the text box's text for this tab (apart from the form, which is kept on every redraw; a text too large for the storage is not kept). */
export function keepLabText(text: string): void {
  try {
    sessionStorage.setItem(TEXT_KEY, text);
  } catch {
    // no storage, or no room: the box starts empty next time
  }
}
