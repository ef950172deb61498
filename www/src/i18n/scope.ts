// Which language a string is made in, now: the part of the page being drawn sets it
// (`withLang`), and outside drawing it is the language the page's playgrounds share, else
// the page's own. No DOM and no Lit here, so the DOM-free state (../state/) can make its
// words in its playground's language too. ./locale.ts explains the design.

import { _installMsgImplementation } from '@lit/localize/init/install.js';
import { runtimeMsg } from '@lit/localize/internal/runtime-msg.js';
import type { TemplateMap } from '@lit/localize/internal/types.js';
import { sourceLocale } from '../locales/codes';
import type { Lang } from '../state/url';

/** The translations of each language loaded so far (the source language has none). */
export const templates = new Map<Lang, TemplateMap | undefined>([[sourceLocale as Lang, undefined]]);

/** The language of what is being drawn now (null: outside drawing). */
let scope: Lang | null = null;
/** The page's language as set by `useLang` (null: the document's `lang`). */
let pageLang: Lang | null = null;
/** The language of each playground on the page. */
export const playgrounds = new Map<object, Lang>();

_installMsgImplementation(((template, options) => runtimeMsg(templates.get(activeLang()), template, options)) as typeof import('@lit/localize').msg);

/** Any tag of a `lang` attribute as one of the page's languages: any Chinese is zh-Hans, the rest English. */
export function langOfBrowser(tag: string | undefined): Lang {
  return /^zh\b/i.test(tag ?? '') ? 'zh-Hans' : 'en';
}

export function setPageLang(lang: Lang): void {
  pageLang = lang;
}

/** The language of strings made outside drawing: the one the page's playgrounds share, else the page's. */
export function ambientLang(): Lang {
  const langs = new Set(playgrounds.values());
  if (langs.size === 1) return [...langs][0];
  if (pageLang) return pageLang;
  const doc = typeof document === 'undefined' ? '' : document.documentElement.lang;
  return doc ? langOfBrowser(doc) : (sourceLocale as Lang);
}

/** The language strings are made in now. */
export function activeLang(): Lang {
  return scope ?? ambientLang();
}

/** Run `f` with its strings in `lang` (drawing a part of the page in that language, or making a playground's words). */
export function withLang<T>(lang: Lang, f: () => T): T {
  const was = scope;
  scope = lang;
  try {
    return f();
  } finally {
    scope = was;
  }
}
