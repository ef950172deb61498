// The entry of the playground's own pages (index.html, embed.html), loaded beside
// playground.js: the service worker that keeps the page, the engine and every shipped
// model for use without a network, registered once the page is live so that it never
// slows the first load. A small status line says when the page works offline and when a
// new version is waiting (the reader chooses when to reload). A page that embeds
// playground.js from another site registers nothing. No Lit here, so that playground.js
// stays one file whose own URL locates the models beside it.

import { registerSW } from 'virtual:pwa-register';
// The line's words, as the playground's class gives them in the page's language (a type only:
// nothing of Lit is loaded by it).
import type { PageText } from './i18n/page-text';

type Status = 'none' | 'offline-ready' | 'update' | 'error';


/** English, for a page whose playground.js does not give its words. */
const ENGLISH: PageText = {
  title: 'Transformer Playground',
  update: 'A new version of the playground is ready.',
  offlineReady: 'The playground and its models are saved: it now works without a network.',
  error: (d) => `The page could not be saved for offline use: ${d}`,
  reload: 'Reload',
  later: 'Later',
  laterLabel: 'Later: keep this version for now',
  ok: 'OK',
  okLabel: 'OK, dismiss this note',
};

/** The page's words in its language now (the element's class holds the translations). */
function pageText(): PageText {
  const cls = customElements.get('transformer-playground') as (CustomElementConstructor & { pageText?: () => PageText }) | undefined;
  try {
    return cls?.pageText?.() ?? ENGLISH;
  } catch {
    return ENGLISH;
  }
}

// On a phone the line is a strip along the bottom edge, and the page gets room under its
// last panel for it, so that it never sits over the end of the page (the backend badge).
const SHEET = `
  .bar {
    position: fixed; left: 50%; bottom: 16px; transform: translateX(-50%);
    max-width: calc(100vw - 32px); display: flex; gap: 10px; align-items: center;
    background: Canvas; color: CanvasText; border: 1px solid GrayText; border-radius: 10px;
    box-shadow: 0 4px 16px rgba(0, 0, 0, 0.25); padding: 8px 12px; z-index: 10;
    font: 0.9rem system-ui, -apple-system, 'Segoe UI', Roboto, 'PingFang SC', 'Noto Sans CJK SC', sans-serif;
  }
  @media (max-width: 640px) {
    .bar {
      left: 0; right: 0; bottom: 0; transform: none; max-width: none; border-radius: 0;
      border-width: 1px 0 0; box-shadow: 0 -2px 10px rgba(0, 0, 0, 0.2); padding: 6px 10px;
      font-size: 0.82rem; gap: 8px;
    }
    .bar span { flex: 1 1 auto; min-width: 0; }
  }
  button { font: inherit; border: 1px solid GrayText; border-radius: 6px; padding: 4px 10px; background: Canvas; color: CanvasText; cursor: pointer; flex: none; }
  button:focus-visible { outline: 2px solid Highlight; outline-offset: 2px; }
  [hidden] { display: none; }
`;

/** The service worker's news, as one dismissible line at the bottom of the page. */
export class TpAppStatus extends HTMLElement {
  private bar: HTMLDivElement;
  private text: HTMLSpanElement;
  private reload: HTMLButtonElement;
  private dismiss: HTMLButtonElement;
  private current: Status = 'none';
  private detail = '';
  /** Activates the waiting version and reloads the page. */
  applyUpdate: (() => Promise<void>) | null = null;
  private resize = new ResizeObserver(() => this.makeRoom());
  private onLocale = (e: Event) => {
    if ((e as CustomEvent<{ status: string }>).detail?.status === 'ready') this.draw();
  };

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    // A constructed style sheet: allowed by a style-src 'self' policy, unlike <style>.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(SHEET);
    root.adoptedStyleSheets = [sheet];
    this.bar = document.createElement('div');
    this.bar.className = 'bar';
    this.bar.setAttribute('role', 'status');
    this.bar.hidden = true;
    this.text = document.createElement('span');
    this.reload = document.createElement('button');
    this.reload.addEventListener('click', () => void this.applyUpdate?.());
    this.dismiss = document.createElement('button');
    this.dismiss.addEventListener('click', () => this.show('none'));
    this.bar.append(this.text, this.reload, this.dismiss);
    root.append(this.bar);
  }

  connectedCallback(): void {
    // The words follow the page's language when the reader switches it.
    window.addEventListener('lit-localize-status', this.onLocale);
    this.resize.observe(this.bar);
  }

  disconnectedCallback(): void {
    window.removeEventListener('lit-localize-status', this.onLocale);
    this.resize.disconnect();
    document.body.style.paddingBottom = '';
    document.documentElement.style.scrollPaddingBottom = '';
  }

  get status(): Status {
    return this.current;
  }

  show(s: Status, detail = ''): void {
    this.current = s;
    this.detail = detail;
    this.draw();
  }

  /** Draw the line in the page's language now. */
  private draw(): void {
    const s = this.current;
    const t = pageText();
    this.bar.hidden = s === 'none';
    this.bar.dataset.status = s;
    this.reload.hidden = s !== 'update';
    this.reload.textContent = t.reload;
    this.dismiss.textContent = s === 'update' ? t.later : t.ok;
    this.dismiss.setAttribute('aria-label', s === 'update' ? t.laterLabel : t.okLabel);
    this.text.textContent = s === 'update' ? t.update : s === 'offline-ready' ? t.offlineReady : s === 'error' ? t.error(this.detail) : '';
    this.makeRoom();
  }

  /** Room under the page's end for the line where it spans the bottom edge (a phone). */
  private makeRoom(): void {
    const docked = !this.bar.hidden && matchMedia('(max-width: 640px)').matches;
    const room = docked ? `${Math.ceil(this.bar.getBoundingClientRect().height) + 8}px` : '';
    document.body.style.paddingBottom = room;
    // Scrolling a part into view (a link, the keyboard's focus) stops above the line too.
    document.documentElement.style.scrollPaddingBottom = room;
  }
}
customElements.define('tp-app-status', TpAppStatus);

/** Resolves when every playground on the page has drawn its first forward pass. */
async function pageLive(): Promise<void> {
  if (document.readyState === 'loading') await new Promise((r) => document.addEventListener('DOMContentLoaded', r, { once: true }));
  const els = Array.from(document.querySelectorAll('transformer-playground'));
  if (!els.length) return;
  await customElements.whenDefined('transformer-playground');
  await Promise.all(els.map((e) => (e as Element & { ready?: Promise<void> }).ready?.catch(() => undefined)));
}

async function startOffline(): Promise<void> {
  if (!('serviceWorker' in navigator)) return;
  await pageLive();
  const status = document.createElement('tp-app-status') as TpAppStatus;
  document.body.appendChild(status);
  status.applyUpdate = registerSW({
    immediate: true,
    onNeedRefresh: () => status.show('update'),
    onOfflineReady: () => {
      // Inside another site's frame the news is for that site's reader only when it asks
      // them to do something.
      if (window.parent !== window) return;
      status.show('offline-ready');
      setTimeout(() => status.status === 'offline-ready' && status.show('none'), 10_000);
    },
    onRegisterError: (e: unknown) => status.show('error', e instanceof Error ? e.message : String(e)),
  });
}

/**
 * The page's own header follows the playground's language: the heading and paragraph of
 * that language are shown (index.html holds one of each per language), the document says
 * which it is, and its title is in it. The
 * playground announces each switch with @lit/localize's `lit-localize-status` event.
 */
function followLanguage(): void {
  const show = (lang: string) => {
    const paragraphs = document.querySelectorAll<HTMLElement>('header [data-lang]');
    if (![...paragraphs].some((p) => p.dataset.lang === lang)) return;
    for (const p of paragraphs) p.hidden = p.dataset.lang !== lang;
    document.documentElement.lang = lang;
    document.title = pageText().title;
  };
  window.addEventListener('lit-localize-status', (e) => {
    const d = (e as CustomEvent<{ status: string; readyLocale?: string }>).detail;
    if (d.status === 'ready' && d.readyLocale) show(d.readyLocale);
  });
}

followLanguage();
void startOffline();
