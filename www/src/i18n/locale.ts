// The page's languages: English (the source text) and Simplified Chinese, with
// @lit/localize in runtime mode. Every user-visible string of the page is a `msg()` call;
// `lit-localize extract` collects them into ../../xliff/zh-Hans.xlf, where they are
// translated, and `lit-localize build` writes the translations as ../locales/zh-Hans.ts
// (committed; tests/unit/i18n.test.mjs fails when a string lacks a translation, when a
// translation no longer has a string, or when that module is out of date).
//
// One locale holds for the whole page (several playgrounds on one page share it). Numbers,
// the math of formulas, token text and what the model writes are never translated (a
// lesson's formula with words in it goes through msg() like its prose).

import { configureLocalization, LOCALE_STATUS_EVENT, updateWhenLocaleChanges } from '@lit/localize';
import { LitElement } from 'lit';
import { sourceLocale, targetLocales } from '../locales/codes';
import type { Lang } from '../state/url';

export { LOCALE_STATUS_EVENT };

export const { getLocale, setLocale } = configureLocalization({
  sourceLocale,
  targetLocales,
  // The only target locale, so the bundler makes it one lazily loaded chunk.
  loadLocale: () => import('../locales/zh-Hans'),
});

/** The language of a browser locale tag (`navigator.language`): any Chinese is zh-Hans, the rest English. */
export function langOfBrowser(tag: string | undefined): Lang {
  return /^zh\b/i.test(tag ?? '') ? 'zh-Hans' : 'en';
}

/** The browser's preferred language among the page's. */
export function browserLang(): Lang {
  const tags = typeof navigator === 'undefined' ? [] : (navigator.languages?.length ? navigator.languages : [navigator.language]);
  // The first tag decides; a Chinese reader with English second still reads Chinese.
  return langOfBrowser(tags[0]);
}

let wanted: Lang = sourceLocale as Lang;

/** Switch the page to `lang` (the module with its strings loads on first use). */
export function useLang(lang: Lang): Promise<void> {
  if (lang === wanted) return Promise.resolve();
  wanted = lang;
  return setLocale(lang);
}

/** The language the page asked for last (its strings may still be loading). */
export function currentLang(): Lang {
  return wanted;
}

/**
 * The base of every component of the page: it draws itself again when the language
 * changes (`updateWhenLocaleChanges`), so live switching needs nothing else.
 */
export class LocalizedElement extends LitElement {
  constructor() {
    super();
    updateWhenLocaleChanges(this);
  }
}
