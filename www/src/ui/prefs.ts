// The reader's own preferences, which belong to the reader rather than to a link: the
// colour theme they last chose (kept in local storage) and whether their system asks for
// reduced motion. Storage can be missing or refused (private windows, sandboxed frames);
// then the defaults apply and nothing fails.

import { parseTheme, type Theme } from '../state/url';

const THEME_KEY = 'tplay-theme';

export function storedTheme(): Theme {
  try {
    return parseTheme(localStorage.getItem(THEME_KEY) ?? '') ?? 'auto';
  } catch {
    return 'auto';
  }
}

export function storeTheme(t: Theme): void {
  try {
    if (t === 'auto') localStorage.removeItem(THEME_KEY);
    else localStorage.setItem(THEME_KEY, t);
  } catch {
    // not kept: the choice still holds for this page
  }
}

/** Does the system ask for reduced motion (`prefers-reduced-motion: reduce`)? */
export function prefersReducedMotion(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;
}
