// <tp-lesson>: one lesson above the playground's views — its explanation, formula, the
// experiment with its question, and, once the page has seen the learner do it, what to
// notice. With `tour`, also the table of contents and previous / next; the tour's progress
// is kept in local storage. It sends `tp-lesson-open` (detail: a lesson id, '' to close)
// and `tp-lesson-done` (detail: the id) and never blocks the views below it.

import { LitElement, html, css, nothing } from 'lit';
import { msg, str, updateWhenLocaleChanges } from '@lit/localize';
import type { PlaygroundStore } from '../state/store';
import { emit, panel } from '../ui/shared';
import { LESSONS, lessonNamed, type Lesson, type LessonCtx, type LessonText } from './lessons';
import { loadProgress, saveProgress } from './progress';
import { keepLessonState, lessonState } from './lesson-state';

/** Where docs/model.md is in the build (beside the page). */
const DOC = { toString: () => (document.documentElement.lang.startsWith('zh') ? './docs/model.zh-Hans.md' : './docs/model.md') };

export class TpLesson extends LitElement {
  static properties = {
    lessonId: { type: String, attribute: 'lesson-id' },
    tour: { type: Boolean },
    store: { attribute: false },
    version: { type: Number },
    findView: { attribute: false },
    doneNow: { state: true },
    showToc: { state: true },
  };

  lessonId = '';
  /** Show the table of contents and previous / next (off in an embed and in a classroom link). */
  tour = true;
  store: PlaygroundStore | null = null;
  /** Bumped by the playground on every change, so the step is checked again. */
  version = 0;
  /** The playground's shown view of a tag. */
  findView: (tag: string) => HTMLElement | null = () => null;
  /** The page has seen this lesson's experiment done (since it opened). */
  doneNow = false;
  showToc = false;

  private progress = loadProgress();
  private memo = new Map<string, string>();
  private seenId = '';
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor() {
    super();
    updateWhenLocaleChanges(this);
  }

  static styles = [
    panel,
    css`
      .card {
        border-left: 4px solid var(--tp-accent);
      }
      header {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-2);
        align-items: baseline;
      }
      header .count {
        color: var(--tp-muted);
        font-size: var(--tp-text-sm);
      }
      header h2 {
        margin: 0;
        font-size: var(--tp-text-lg);
        flex: 1 1 16em;
      }
      nav {
        display: flex;
        gap: 6px;
        flex-wrap: wrap;
      }
      p {
        margin: 6px 0;
        line-height: 1.45;
      }
      .formula {
        font-family: var(--tp-mono);
        background: var(--tp-io-fill);
        border-radius: 6px;
        padding: 6px 10px;
        overflow-x: auto;
        white-space: pre-wrap;
        font-size: var(--tp-text-md);
      }
      .try {
        border: 1px dashed var(--tp-line);
        border-radius: 8px;
        padding: 6px 10px;
        margin: var(--tp-space-2) 0;
      }
      .try[data-step='done'] {
        border: 1px solid var(--tp-accent);
        background: var(--tp-accent-soft);
      }
      .status {
        font-weight: 600;
      }
      .links {
        font-size: var(--tp-text-sm);
        color: var(--tp-muted);
      }
      .links code {
        font-family: var(--tp-mono);
      }
      ol.toc {
        columns: 2 16em;
        font-size: var(--tp-text-md);
        margin: 6px 0;
      }
      ol.toc li[data-done] a::after {
        content: ' ✓';
        color: var(--tp-accent);
      }
      ol.toc a[aria-current='page'] {
        font-weight: 700;
      }
      a {
        color: var(--tp-accent);
      }
    `,
  ];

  connectedCallback(): void {
    super.connectedCallback();
    // Once done, the notice is drawn again as the views finish measuring (it quotes them).
    this.timer = setInterval(() => (this.doneNow ? this.requestUpdate() : this.check()), 500);
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.timer);
  }

  private get lesson(): Lesson | undefined {
    return lessonNamed(this.lessonId);
  }

  protected willUpdate(): void {
    if (this.lessonId !== this.seenId) {
      this.seenId = this.lessonId;
      // Where the learner left this lesson (in this tab), else a fresh start.
      const kept = lessonState(this.lessonId);
      this.memo = new Map(kept?.memo ?? []);
      this.doneNow = kept?.done ?? false;
      this.keptText = '';
      if (this.lesson) {
        this.progress = { ...loadProgress(), last: this.lessonId };
        saveProgress(this.progress);
      }
    }
  }

  protected updated(): void {
    this.check();
  }

  /** What was kept last of this lesson's state (to write only what changed). */
  private keptText = '';

  /** Keep where the lesson stands, so that closing and reopening it returns here. */
  private keep(): void {
    if (!this.lesson) return;
    const s = this.store;
    const part = { done: this.doneNow, memo: [...this.memo], ...(s && s.st.lesson === this.lessonId ? { hash: s.hash } : {}) };
    const text = JSON.stringify(part);
    if (text === this.keptText) return;
    this.keptText = text;
    keepLessonState(this.lessonId, part);
  }

  /** Has the learner done the experiment? Checked on every change of the page and twice a second (views measure on their own). */
  private check(): void {
    const l = this.lesson;
    const s = this.store;
    if (!l || !s || this.doneNow || !s.info) return;
    const ctx: LessonCtx = {
      st: s.st,
      store: s,
      view: <T,>(tag: string) => this.findView(tag) as T | null,
      changed: (key, value) => {
        if (value === null || value === undefined) return false;
        const now = JSON.stringify(value);
        const first = this.memo.get(key);
        if (first === undefined) {
          this.memo.set(key, now);
          return false;
        }
        return first !== now;
      },
    };
    let done = false;
    try {
      done = l.done(ctx);
    } catch {
      done = false;
    }
    if (!done) {
      this.keep();
      return;
    }
    this.doneNow = true;
    this.keep();
    const p = loadProgress();
    if (!p.done.includes(l.id)) p.done.push(l.id);
    this.progress = { ...p, last: l.id };
    saveProgress(this.progress);
    emit(this, 'tp-lesson-done', l.id);
  }

  private open(id: string) {
    emit(this, 'tp-lesson-open', id);
  }

  private nav(i: number) {
    const prev = LESSONS[i - 1];
    const next = LESSONS[i + 1];
    return html`<nav aria-label=${msg('lesson tour', { id: 'tour.nav' })}>
      <button data-tour="prev" ?disabled=${!prev} @click=${() => prev && this.open(prev.id)}>${msg('← Previous', { id: 'tour.prev' })}</button>
      <button data-tour="next" ?disabled=${!next} @click=${() => next && this.open(next.id)}>${msg('Next →', { id: 'tour.next' })}</button>
      <button data-tour="toc" aria-expanded=${this.showToc} @click=${() => (this.showToc = !this.showToc)}>${msg('All lessons', { id: 'tour.toc' })}</button>
      <button data-tour="close" @click=${() => this.open('')}>${msg('Close the lesson', { id: 'tour.close' })}</button>
    </nav>`;
  }

  private toc() {
    const done = this.progress.done;
    return html`<ol class="toc" aria-label=${msg('lessons', { id: 'tour.toc-label' })}>
      ${LESSONS.map(
        (l) => html`<li ?data-done=${done.includes(l.id)} data-lesson=${l.id}>
          <a
            href=${`#lesson=${l.id}`}
            aria-current=${l.id === this.lessonId ? 'page' : 'false'}
            @click=${(e: Event) => {
              e.preventDefault();
              this.open(l.id);
            }}
            >${l.title()}</a
          >
        </li>`,
      )}
    </ol>`;
  }

  render() {
    const l = this.lesson;
    if (!l) {
      return html`<section class="card" data-lesson-missing>
        <p role="status">${msg(str`There is no lesson called “${this.lessonId.slice(0, 40)}”. The lessons are:`, { id: 'tour.missing' })}</p>
        ${this.toc()}
      </section>`;
    }
    const i = LESSONS.indexOf(l);
    const done = this.doneNow;
    // What the sentences read their numbers from: the store and the views' measured results.
    const text: LessonText = { store: this.store, view: <T,>(tag: string) => this.findView(tag) as T | null };
    const finished = this.progress.done.filter((id) => lessonNamed(id)).length;
    return html`<section class="card" aria-labelledby="lesson-title" data-lesson=${l.id}>
      <header>
        <span class="count">${msg(str`Lesson ${i + 1} of ${LESSONS.length}`, { id: 'tour.count' })}${this.tour
            ? html` · ${msg(str`${finished} done`, { id: 'tour.finished' })}`
            : nothing}</span>
        <h2 id="lesson-title">${l.title()}</h2>
        ${this.tour ? this.nav(i) : nothing}
      </header>
      ${this.tour && this.showToc ? this.toc() : nothing}
      ${l.explain(text).map((p) => html`<p>${p}</p>`)}
      ${l.formula ? html`<div class="formula" role="math" aria-label=${msg('formula', { id: 'tour.formula' })}>${l.formula}</div>` : nothing}
      <div class="try" data-step=${done ? 'done' : 'todo'}>
        <p><strong>${msg('Try it:', { id: 'tour.try' })}</strong> ${l.task()}</p>
        <p><strong>${msg('Question:', { id: 'tour.question' })}</strong> ${l.question()}</p>
        <p class="status" role="status">
          ${done ? msg('Done: the page saw you do it.', { id: 'tour.done' }) : msg('Waiting for you to do it…', { id: 'tour.waiting' })}
        </p>
        ${done ? html`<p data-notice><strong>${msg('What to notice:', { id: 'tour.notice' })}</strong> ${l.notice(text)}</p>` : nothing}
      </div>
      <p class="links">
        ${msg('The code:', { id: 'tour.code' })} ${l.code.map((c, k) => html`${k ? ', ' : ''}<code>${c}</code>`)} ·
        <a href=${`${DOC}#${l.doc}`} target="_blank" rel="noopener">${msg('the model, exactly (docs/model.md)', { id: 'tour.doc' })}</a>
      </p>
    </section>`;
  }
}

customElements.define('tp-lesson', TpLesson);
