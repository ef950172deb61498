// The reader's own preferences, which belong to the reader rather than to a link: the
// colour theme and the language they last chose (kept in local storage) and whether their system asks for
// reduced motion. Storage can be missing or refused (private windows, sandboxed frames);
// then the defaults apply and nothing fails.

import { parseLang, parseTheme, type Lang, type Theme } from '../state/url';

const THEME_KEY = 'tplay-theme';
const LANG_KEY = 'tplay-lang';

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

/** The language the reader chose last (null: none chosen, the browser's applies). */
export function storedLang(): Lang | null {
  try {
    return parseLang(localStorage.getItem(LANG_KEY) ?? '') ?? null;
  } catch {
    return null;
  }
}

export function storeLang(l: Lang | null): void {
  try {
    if (l === null) localStorage.removeItem(LANG_KEY);
    else localStorage.setItem(LANG_KEY, l);
  } catch {
    // not kept: the choice still holds for this page
  }
}

/** Does the system ask for reduced motion (`prefers-reduced-motion: reduce`)? */
export function prefersReducedMotion(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;
}
