// <tp-chapters>: the chapter bar under the overview — one link per chapter
// (../views/chapters.ts), the lessons and "All views", the open one marked with
// `aria-current`. Each is a real link (`#chapter=<name>` with the other settings as they
// are, so it can be opened in a new tab or copied); a plain click asks the page to open the
// chapter in place (`tp-open-chapter`, detail `{ chapter, view: '' }`; the lessons:
// `tp-start-course`). The page keeps it at the top of the window while its chapters scroll
// (position: sticky on the element). Also the heading drawn above an open chapter.

import { html, css, nothing, type TemplateResult } from 'lit';
import { msg } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { emit, panel } from '../ui/shared';
import { CHAPTERS, chapterNamed } from '../views/chapters';
import type { PlaygroundStore } from '../state/store';
import type { ViewDef } from '../views/registry';

export class TpChapters extends LocalizedElement {
  static properties = {
    chapter: { type: String },
    hrefOf: { attribute: false },
    lessonHref: { type: String },
  };

  /** The open chapter ('' none, 'all' every view). */
  chapter = '';
  /** The link of a chapter (the page's settings with `chapter=<name>`). */
  hrefOf: (chapter: string) => string = (c) => `#chapter=${c}`;
  /** The link of the lessons' tour ('' hides the entry: a classroom link, a lesson open). */
  lessonHref = '';

  static styles = [
    panel,
    css`
      nav {
        display: flex;
        flex-wrap: wrap;
        gap: 4px 6px;
        align-items: center;
        padding: 6px 8px;
        border: 1px solid var(--tp-line);
        border-radius: 10px;
        background: var(--tp-bg);
        box-shadow: 0 2px 8px rgba(0, 0, 0, 0.06);
      }
      .label {
        font-size: 0.78rem;
        color: var(--tp-muted);
        margin-right: 4px;
      }
      a {
        font-size: 0.85rem;
        padding: 4px 10px;
        border-radius: 999px;
        color: var(--tp-fg);
        text-decoration: none;
        border: 1px solid transparent;
        white-space: nowrap;
      }
      a:hover {
        border-color: var(--tp-line);
        background: var(--tp-page);
      }
      a[aria-current='page'] {
        background: var(--tp-accent);
        border-color: var(--tp-accent);
        color: var(--tp-bg);
        font-weight: 600;
      }
      a:focus-visible {
        outline: 2px solid var(--tp-focus);
        outline-offset: 2px;
      }
      .sep {
        width: 1px;
        align-self: stretch;
        background: var(--tp-line);
        margin: 2px 4px;
      }
      a.lessons {
        color: var(--tp-accent);
        font-weight: 600;
      }
      a.all {
        font-style: italic;
      }
    `,
  ];

  /** A plain click opens in place; a click with a modifier (new tab, new window) is the browser's. */
  private go(e: MouseEvent, then: () => void) {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    then();
  }

  render() {
    const link = (name: string, title: string, blurb: string, cls = '') =>
      html`<a
        class=${cls}
        href=${this.hrefOf(name)}
        data-chapter=${name}
        title=${blurb}
        aria-current=${this.chapter === name ? 'page' : 'false'}
        @click=${(e: MouseEvent) => this.go(e, () => emit(this, 'tp-open-chapter', { chapter: name, view: '' }))}
        >${title}</a
      >`;
    return html`<nav aria-label=${msg('chapters')}>
      <span class="label">${msg('Chapters')}</span>
      ${CHAPTERS.map((c) => link(c.name, c.title(), c.blurb()))}
      <span class="sep" aria-hidden="true"></span>
      ${this.lessonHref
        ? html`<a class="lessons" href=${this.lessonHref} data-chapter="lessons" @click=${(e: MouseEvent) => this.go(e, () => emit(this, 'tp-start-course', null))}
            >${msg('Lessons', { id: 'chapter.lessons.title' })}</a
          >`
        : nothing}
      ${link('all', msg('All views'), msg('Every view of the page at once, in one long column.'), 'all')}
    </nav>`;
  }
}

customElements.define('tp-chapters', TpChapters);

/**
 * The page below its bar when it is laid out in chapters: the overview, the chapter bar,
 * the open chapter's heading and its views (each drawn by `frame`). `lessonHref`: the
 * lessons' entry in the bar ('' for none).
 */
export function chapterPage(s: PlaygroundStore, views: readonly ViewDef[], frame: (v: ViewDef) => TemplateResult, lessonHref: string) {
  return html`${views.filter((v) => v.name === 'overview').map(frame)}
    <tp-chapters class="wide" .chapter=${s.st.chapter} .hrefOf=${(c: string) => `#${s.hashWith({ chapter: c })}`} .lessonHref=${lessonHref}></tp-chapters>
    ${s.st.chapter ? chapterHeading(s.st.chapter) : nothing} ${views.filter((v) => v.name !== 'overview').map(frame)}`;
}

/** The heading above an open chapter: its title and what it is about (`all`: every view). */
export function chapterHeading(name: string) {
  const c = chapterNamed(name);
  const title = c ? c.title() : msg('All views');
  const blurb = c ? c.blurb() : msg('Every view of the page at once, in one long column.');
  return html`<div class="chapter-head wide" data-chapter-head=${name} tabindex="-1">
    <h2>${title}</h2>
    <p>${blurb}</p>
  </div>`;
}

/** The styles the page needs around the chapter bar and the chapter heading. */
export const chapterStyles = css`
  tp-chapters {
    position: sticky;
    top: 0;
    z-index: 5;
    padding: 4px 0;
    background: var(--tp-page);
  }
  .chapter-head {
    margin: 6px 0 0;
  }
  .chapter-head:focus {
    outline: none;
  }
  .chapter-head h2 {
    margin: 0;
    font-size: 1.15rem;
  }
  .chapter-head p {
    margin: 2px 0 0;
    color: var(--tp-muted);
    font-size: 0.88rem;
  }
  .view {
    scroll-margin-top: 64px;
  }
  .bar button.primary {
    background: var(--tp-accent);
    border-color: var(--tp-accent);
    color: var(--tp-bg);
    font-weight: 600;
    padding: 6px 16px;
    font-size: 0.95rem;
  }
  .bar a.secondary {
    color: var(--tp-muted);
    font-size: 0.8rem;
  }
`;

/**
 * Scroll `target` to the top of the window, and keep it there while the views above it
 * finish drawing (those that ask the engine on their own grow a moment later): for four
 * seconds, or until the reader scrolls, types or clicks.
 */
export function keepInSight(target: HTMLElement, reducedMotion: boolean): void {
  target.scrollIntoView({ behavior: reducedMotion ? 'auto' : 'smooth', block: 'start' });
  const margin = parseFloat(getComputedStyle(target).scrollMarginTop) || 0;
  let lastY = window.scrollY;
  // A smooth scroll starts a frame or two after it is asked for.
  let frames = 0;
  let stopped = false;
  const stop = () => (stopped = true);
  const kinds = ['wheel', 'touchstart', 'keydown', 'pointerdown'] as const;
  for (const k of kinds) window.addEventListener(k, stop, { once: true, passive: true });
  const until = performance.now() + 4000;
  const tick = () => {
    if (stopped || performance.now() > until) {
      for (const k of kinds) window.removeEventListener(k, stop);
      return;
    }
    const y = window.scrollY;
    const settled = frames++ > 3 && Math.abs(y - lastY) < 0.5;
    lastY = y;
    // Once a scroll has settled, the target should sit at its margin from the top (or the
    // page be at its end): where the views around it grew meanwhile, scroll again at once.
    const off = target.getBoundingClientRect().top - margin;
    const atEnd = Math.ceil(y + window.innerHeight) >= document.documentElement.scrollHeight;
    if (settled && Math.abs(off) > 2 && !(off > 0 && atEnd)) target.scrollIntoView({ behavior: 'auto', block: 'start' });
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}
