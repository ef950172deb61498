// The page's languages: English (the source text) and Simplified Chinese, with
// @lit/localize's runtime `msg()`. Every user-visible string of the page is a `msg()` call;
// `lit-localize extract` collects them into ../../xliff/zh-Hans.xlf, where they are
// translated, and `lit-localize build` writes the translations as ../locales/zh-Hans.ts
// (committed; tests/unit/i18n.test.mjs fails when a string lacks a translation, when a
// translation no longer has a string, or when that module is out of date).
//
// A language per playground: @lit/localize keeps one active locale for the whole page,
// so its `configureLocalization` is not used. Instead `msg()` is installed here and looks
// its string up in the language of what is being drawn: each component draws itself
// (`LocalizedElement.performUpdate`) in the language of its nearest ancestor with a `lang`
// attribute — across shadow roots, as HTML defines the language of an element — and
// every <transformer-playground> holds its own language in its `lang` attribute. Two
// playgrounds in two languages on one page therefore each draw in theirs, and neither
// changes the page's. A string made outside drawing (a note about a link, say) is in the
// language the page's playgrounds share, else in the page's own.
//
// Numbers, the math of formulas, token text and what the model writes are never
// translated (a lesson's formula with words in it goes through msg() like its prose).

import type { TemplateMap } from '@lit/localize/internal/types.js';
import { LitElement } from 'lit';
import type { Lang } from '../state/url';
import { activeLang, ambientLang, langOfBrowser, playgrounds, setPageLang, templates, withLang } from './scope';

export { langOfBrowser, withLang };

/** @lit/localize's event name: the language of the page's strings changed (detail: `{ status: 'ready', readyLocale }`). */
export const LOCALE_STATUS_EVENT = 'lit-localize-status';
/** The language of some drawn part changed, or a language's strings arrived (detail: `{ loaded?: Lang }`). */
export const LANG_EVENT = 'tp-lang';

const loading = new Map<Lang, Promise<void>>();
let lastAmbient: Lang | null = null;

/** The browser's preferred language among the page's. */
export function browserLang(): Lang {
  const tags = typeof navigator === 'undefined' ? [] : (navigator.languages?.length ? navigator.languages : [navigator.language]);
  // The first tag decides; a Chinese reader with English second still reads Chinese.
  return langOfBrowser(tags[0]);
}

/** The language of an element: that of its nearest ancestor with a `lang` attribute, across shadow roots. */
export function langOf(el: Element): Lang {
  for (let n: Node | null = el; n; ) {
    if (n instanceof Element) {
      const l = n.getAttribute('lang');
      if (l) return langOfBrowser(l);
    }
    n = n.parentNode ?? (n instanceof ShadowRoot ? n.host : null);
  }
  return ambientLang();
}

/** Load a language's strings (once); when they arrive, what is drawn in it draws again. */
export function loadLang(lang: Lang): Promise<void> {
  if (templates.has(lang)) return Promise.resolve();
  let p = loading.get(lang);
  if (!p) {
    // The only target language, so the bundler makes it one lazily loaded chunk.
    p = import('../locales/zh-Hans').then(
      (mod) => {
        templates.set(lang, mod.templates as TemplateMap);
        window.dispatchEvent(new CustomEvent(LANG_EVENT, { detail: { loaded: lang } }));
        announceAmbient();
      },
      (e: unknown) => {
        loading.delete(lang);
        throw e;
      },
    );
    loading.set(lang, p);
  }
  return p;
}

/** Tell the page when the language of its strings made outside drawing changes (app.ts follows it on the playground's own pages). */
function announceAmbient(): void {
  const l = ambientLang();
  if (l === lastAmbient || !templates.has(l)) return;
  lastAmbient = l;
  window.dispatchEvent(new CustomEvent(LOCALE_STATUS_EVENT, { detail: { status: 'ready', readyLocale: l } }));
}

/** A playground holds `lang` now (null: it left the page). */
export function setPlaygroundLang(el: Element, lang: Lang | null): void {
  // A playground taken off the page holds no language (an update drawn after its removal
  // would otherwise leave it deciding the language of everything outside the playgrounds).
  if (lang === null || !el.isConnected) playgrounds.delete(el);
  else playgrounds.set(el, lang);
  // After the drawing under way: every part checks whether its language changed.
  queueMicrotask(() => {
    window.dispatchEvent(new CustomEvent(LANG_EVENT, { detail: {} }));
    announceAmbient();
  });
  if (lang) void loadLang(lang).catch(() => undefined);
}

/** Switch the page's own language to `lang` (pages without a playground, such as the teacher page). */
export function useLang(lang: Lang): Promise<void> {
  setPageLang(lang);
  return loadLang(lang).then(() => {
    window.dispatchEvent(new CustomEvent(LANG_EVENT, { detail: {} }));
    announceAmbient();
  });
}

/** The language strings are made in now: that of the part being drawn, else the page's. */
export function getLocale(): Lang {
  return activeLang();
}

/** Same as getLocale (kept for callers that ask which language was asked for). */
export function currentLang(): Lang {
  return activeLang();
}

/**
 * The base of every component of the page: it draws itself in its own language (that of
 * its nearest ancestor with `lang`, or `ownLang()`), and again when that language changes
 * or its strings arrive.
 */
export class LocalizedElement extends LitElement {
  /** The language this element last drew itself in. */
  private drawnIn: Lang | null = null;
  private onLang = (e: Event) => {
    const loaded = (e as CustomEvent<{ loaded?: Lang }>).detail?.loaded;
    const l = this.langNow();
    if (l !== this.drawnIn || l === loaded) this.requestUpdate();
  };

  /** The language this element decides for itself (a playground: its setting); null: its surroundings'. */
  protected ownLang(): Lang | null {
    return null;
  }

  private langNow(): Lang {
    return this.ownLang() ?? langOf(this);
  }

  connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener(LANG_EVENT, this.onLang);
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener(LANG_EVENT, this.onLang);
  }

  protected override performUpdate(): void {
    const l = this.langNow();
    this.drawnIn = l;
    withLang(l, () => super.performUpdate());
  }
}

/** Have `lang`'s strings loaded? */
export function isLoaded(lang: Lang): boolean {
  return templates.has(lang);
}
