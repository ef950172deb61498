// A control that a classroom link locked is drawn disabled, with this short note beside it
// saying why (the rule that holds the setting is ../state/locks.ts).

import { html, nothing } from 'lit';
import { isLocked, lockReason } from '../state/locks';

/** Why the setting `name` cannot change under this lock list ('' when it can). */
export function whyLocked(lock: readonly string[] | null | undefined, name: string): string {
  const st = { lock: [...(lock ?? [])] };
  return isLocked(st, name) ? lockReason(st, name) : '';
}

/** The note beside a locked control (nothing when `why` is ''); `id` for the control's aria-describedby. */
export function lockedNote(name: string, why: string, id = '') {
  return why
    ? html` <span class="locked-why" data-locked-why=${name} id=${id || nothing}>(${why})</span>`
    : nothing;
}
