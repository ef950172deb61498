// <tp-lesson>: one lesson above the playground's views — its explanation, formula, the
// experiment with its question; once the page has seen the learner do it, the answer box
// (a choice or a number), checked against what the engine measured on the loaded model now;
// once the answer is right, what to notice, and the lesson counts as done. With `tour`, also
// the table of contents and previous / next; the tour's progress (answers included) is kept
// in local storage. It sends `tp-lesson-open` (detail: a lesson id, '' to close) and
// `tp-lesson-done` (detail: the id, once the answer is right) and never blocks the views
// below it.

import { blockedNote, isLocked } from '../state/locks';
import { html, css, nothing } from 'lit';
import { getLocale, LocalizedElement } from '../i18n/locale';
import { ifDefined } from 'lit/directives/if-defined.js';
import { msg, str } from '@lit/localize';
import type { PlaygroundStore } from '../state/store';
import { emit, panel } from '../ui/shared';
import { lessonNamed, type Lesson, type LessonCtx, type LessonText } from './lessons';
import { courseLessons, courseParts, partOf, seedQuestion } from './course';
import { loadProgress, recordAnswer, saveProgress, type Answer } from './progress';
import { isRight, parseNumber } from './answer';
import { keepLessonState, lessonState } from './lesson-state';
import { assignmentOf } from './assignment';
import type { RunRecord } from '../lab/types';
import './tp-assignment';

/** Where docs/model.md is in the build (beside the page). */
const DOC = { toString: () => (getLocale() === 'zh-Hans' ? './docs/model.zh-Hans.md' : './docs/model.md') };

/** The reader's actions that set the lesson's checks going again. */
const STIRS = ['pointerdown', 'keydown', 'input', 'change'] as const;
/** How long after the last change the panel keeps checking (a view's slowest measurement fits in it). */
const QUIET_MS = 30_000;

export class TpLesson extends LocalizedElement {
  static properties = {
    lessonId: { type: String, attribute: 'lesson-id' },
    tour: { type: Boolean },
    store: { attribute: false },
    version: { type: Number },
    findView: { attribute: false },
    runs: { attribute: false },
    doneNow: { state: true },
    showToc: { state: true },
    answer: { state: true },
    draft: { state: true },
    unreadable: { state: true },
  };

  lessonId = '';
  /** Show the table of contents and previous / next (off in an embed and in a classroom link). */
  tour = true;
  store: PlaygroundStore | null = null;
  /** Bumped by the playground on every change, so the step is checked again. */
  version = 0;
  /** The playground's shown view of a tag. */
  findView: (tag: string) => HTMLElement | null = () => null;
  /** The lab's runs of the student working now (an assignment's completion code carries its run). */
  runs: () => readonly RunRecord[] = () => [];
  /** The page has seen this lesson's experiment done (since it opened). */
  doneNow = false;
  showToc = false;
  /** The last answer committed to the lesson's question (null: none yet). */
  answer: Answer | null = null;
  /** What is chosen or typed in the answer box, not yet committed. */
  draft = '';
  /** The typed answer is not a number (nothing was committed). */
  unreadable = false;

  private progress = loadProgress();
  private memo = new Map<string, string>();
  private seenId = '';
  private timer: ReturnType<typeof setInterval> | undefined;

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
      .answer fieldset {
        border: none;
        margin: 0;
        padding: 0;
      }
      .answer legend {
        font-weight: 600;
        padding: 0;
        margin: 4px 0;
      }
      .answer .option {
        display: flex;
        gap: 6px;
        align-items: baseline;
        margin: 2px 0;
      }
      .answer .number {
        display: flex;
        flex-wrap: wrap;
        gap: 6px;
        align-items: baseline;
        font-weight: 600;
      }
      .answer .number input {
        font: inherit;
        font-weight: normal;
        width: 10em;
      }
      .answer .row {
        display: flex;
        gap: 8px;
        align-items: baseline;
        margin: 6px 0;
      }
      [data-measuring] {
        font-style: italic;
      }
      .links {
        font-size: var(--tp-text-sm);
        color: var(--tp-muted);
      }
      .links code {
        font-family: var(--tp-mono);
      }
      div.toc {
        columns: 2 18em;
        margin: 6px 0;
      }
      div.toc .part {
        break-inside: avoid;
      }
      div.toc h3 {
        margin: 6px 0 2px;
        font-size: var(--tp-text-md);
      }
      ol.toc {
        font-size: var(--tp-text-md);
        margin: 0 0 6px;
      }
      .seed {
        font-style: italic;
        color: var(--tp-muted);
      }
      .seed strong {
        font-style: normal;
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
    this.stir();
    for (const type of STIRS) window.addEventListener(type, this.stir, { capture: true, passive: true });
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.timer);
    this.timer = undefined;
    for (const type of STIRS) window.removeEventListener(type, this.stir, { capture: true });
  }

  /** When the playground last drew or the reader last acted. */
  private stirredAt = 0;
  private drawnVersion = -1;

  /**
   * Something changed (the playground drew, the reader acted): for a while the panel checks
   * the lesson's step twice a second, and once done draws its notice again as the views
   * finish measuring (it quotes them). A lesson left alone runs no timer.
   */
  private stir = () => {
    this.stirredAt = performance.now();
    if (this.timer !== undefined || !this.isConnected) return;
    this.timer = setInterval(() => {
      if (performance.now() - this.stirredAt > QUIET_MS) {
        clearInterval(this.timer);
        this.timer = undefined;
        return;
      }
      if (this.doneNow) this.requestUpdate();
      else this.check();
    }, 500);
  };

  private get lesson(): Lesson | undefined {
    return lessonNamed(this.lessonId);
  }

  protected willUpdate(): void {
    if (this.version !== this.drawnVersion) {
      this.drawnVersion = this.version;
      this.stir();
    }
    if (this.lessonId !== this.seenId) {
      this.seenId = this.lessonId;
      // Where the learner left this lesson (in this tab), else a fresh start.
      const kept = lessonState(this.lessonId);
      this.memo = new Map(kept?.memo ?? []);
      this.doneNow = kept?.done ?? false;
      this.answer = kept?.answer ?? null;
      this.draft = this.answer?.answer ?? '';
      this.unreadable = false;
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
    const part = {
      done: this.doneNow,
      memo: [...this.memo],
      ...(this.answer ? { answer: this.answer } : {}),
      ...(s && s.st.lesson === this.lessonId ? { hash: s.hash } : {}),
    };
    const text = JSON.stringify(part);
    if (text === this.keptText) return;
    this.keptText = text;
    keepLessonState(this.lessonId, part);
  }

  /** What a lesson's `done` and `check` read: the store now, the shown views, the experiment's baselines. */
  private ctx(s: PlaygroundStore): LessonCtx {
    return {
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
  }

  /** Has the learner done the experiment? Checked on every change of the page and twice a second (views measure on their own). */
  private check(): void {
    const l = this.lesson;
    const s = this.store;
    if (!l || !s || this.doneNow || !s.info) return;
    const ctx = this.ctx(s);
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
    // The experiment is done; the lesson is, once its question is answered right.
    this.doneNow = true;
    this.keep();
  }

  /** The right answer on the model now (an option index or a number), or null while the engine has not measured it. */
  private truth(l: Lesson): number | null {
    const s = this.store;
    if (!s || !s.info) return null;
    try {
      const c = l.check;
      const v = c.kind === 'choice' ? c.right(this.ctx(s)) : c.expected(this.ctx(s));
      return typeof v === 'number' && Number.isFinite(v) ? v : null;
    } catch {
      return null;
    }
  }

  /** Commit the answer in the box: right or wrong, kept with the lesson's state and the progress. */
  private commit(l: Lesson): void {
    if (!this.doneNow || this.answer?.right) return;
    const truth = this.truth(l);
    if (truth === null || this.draft === '') return;
    const c = l.check;
    let right: boolean;
    if (c.kind === 'choice') {
      right = Number(this.draft) === truth;
    } else {
      const x = parseNumber(this.draft);
      this.unreadable = x === null;
      if (x === null) return;
      right = isRight(x, truth, c.tolerance(truth));
    }
    this.answer = { answer: this.draft.slice(0, 64), right, tries: (this.answer?.tries ?? 0) + 1 };
    this.keep();
    this.progress = { ...recordAnswer(l.id, this.answer), last: l.id };
    if (right) emit(this, 'tp-lesson-done', l.id);
  }

  private open(id: string) {
    emit(this, 'tp-lesson-open', id);
  }

  /** Previous / next through `course` (the whole course, or an assignment's lessons: then without the table of contents and "close"). */
  private nav(i: number, course: readonly Lesson[] = courseLessons(), assigned = false) {
    const prev = course[i - 1];
    const next = course[i + 1];
    return html`<nav aria-label=${msg('lesson tour', { id: 'tour.nav' })}>
      <button data-tour="prev" ?disabled=${!prev} @click=${() => prev && this.open(prev.id)}>${msg('← Previous', { id: 'tour.prev' })}</button>
      <button data-tour="next" ?disabled=${!next} @click=${() => next && this.open(next.id)}>${msg('Next →', { id: 'tour.next' })}</button>
      ${assigned
        ? nothing
        : html`<button data-tour="toc" aria-expanded=${this.showToc} @click=${() => (this.showToc = !this.showToc)}>${msg('All lessons', { id: 'tour.toc' })}</button>
            <button data-tour="close" @click=${() => this.open('')}>${msg('Close the lesson', { id: 'tour.close' })}</button>`}
    </nav>`;
  }

  /** The table of contents, in the course's order, one list per part of the seed notes. */
  private toc() {
    const done = this.progress.done;
    let n = 0;
    return html`<div class="toc" role="group" aria-label=${msg('lessons', { id: 'tour.toc-label' })}>
      ${courseParts().map(({ part, lessons }) => {
        const start = n + 1;
        n += lessons.length;
        const head = part ? `toc-${part.id}` : 'toc-more';
        return html`<div class="part" data-part=${part?.id ?? ''}>
          ${part ? html`<h3 id=${head}>${part.title()}</h3>` : nothing}
          <ol class="toc" start=${start} aria-labelledby=${ifDefined(part ? head : undefined)}>
            ${lessons.map(
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
          </ol>
        </div>`;
      })}
    </div>`;
  }

  /**
   * The answer box, once the experiment is done: the options (a radio group) or a number
   * field, and "Check". It waits ("measuring…") while the engine has not measured the value
   * it is judged against; after a wrong answer it gives the hint, after a right one it keeps
   * the answer shown and locked.
   */
  private answerBox(l: Lesson, text: LessonText) {
    const c = l.check;
    const a = this.answer;
    const solved = a?.right === true;
    const measuring = !solved && this.truth(l) === null;
    const locked = solved;
    const submit = (e: Event) => {
      e.preventDefault();
      this.commit(l);
    };
    // A wrong answer's hint stays until the next answer is committed.
    const verdict = solved ? 'right' : this.unreadable ? 'unreadable' : a && !a.right ? 'wrong' : '';
    const field =
      c.kind === 'choice'
        ? html`<fieldset ?disabled=${locked}>
            <legend>${c.ask ? c.ask() : l.question()}</legend>
            ${c.options().map(
              (o, i) => html`<label class="option"
                ><input
                  type="radio"
                  name="answer"
                  value=${String(i)}
                  data-option=${i}
                  .checked=${this.draft === String(i)}
                  @change=${() => {
                    this.draft = String(i);
                  }}
                />
                ${o}</label
              >`,
            )}
          </fieldset>`
        : html`<label class="number"
            >${c.label()}
            <input
              type="text"
              inputmode="decimal"
              autocomplete="off"
              spellcheck="false"
              data-answer-input
              ?disabled=${locked}
              .value=${this.draft}
              @input=${(e: Event) => {
                this.draft = (e.target as HTMLInputElement).value.slice(0, 64);
                this.unreadable = false;
              }}
          /></label>`;
    return html`<form class="answer" data-answer=${solved ? 'right' : measuring ? 'measuring' : 'open'} aria-label=${msg('your answer', { id: 'tour.answer-label' })} @submit=${submit}>
        ${field}
        <div class="row">
          <button type="submit" data-check ?disabled=${locked || measuring || this.draft === ''}>${msg('Check', { id: 'tour.check' })}</button>
          ${measuring ? html`<span data-measuring>${msg('measuring on the loaded model…', { id: 'tour.measuring' })}</span>` : nothing}
        </div>
      </form>
      <p class="verdict" role="status" data-verdict=${verdict || nothing}>
        ${verdict === 'right'
          ? html`<strong>${msg('Right.', { id: 'tour.right' })}</strong> ${a && a.tries > 1 ? msg(str`(after ${a.tries} tries)`, { id: 'tour.tries' }) : nothing}`
          : verdict === 'wrong'
            ? html`<strong>${msg('Not quite.', { id: 'tour.wrong' })}</strong> <span data-hint>${c.hint(text)}</span> ${msg('Look again and try once more.', { id: 'tour.again' })}`
            : verdict === 'unreadable'
              ? msg('Type a number, for example as the view prints it.', { id: 'tour.unreadable' })
              : nothing}
      </p>`;
  }

  render() {
    const l = this.lesson;
    if (!l) {
      return html`<section class="card" data-lesson-missing>
        <p role="status">${msg(str`There is no lesson called “${this.lessonId.slice(0, 40)}”. The lessons are:`, { id: 'tour.missing' })}</p>
        ${this.toc()}
      </section>`;
    }
    // An assignment's lesson: counted and stepped through among the assignment's lessons.
    const assignment = this.store ? assignmentOf(this.store.st) : null;
    const assigned = !!assignment && assignment.lessons.includes(l);
    const course = assigned ? assignment.lessons : courseLessons();
    const i = course.indexOf(l);
    const part = partOf(l.id);
    const asks = seedQuestion(l.id);
    const done = this.doneNow;
    // A classroom link that locks the setting this experiment changes: it cannot be done here, and the lesson says so instead of waiting.
    const st = this.store?.st;
    const blocked = !done && l.setting && st && isLocked(st, l.setting) ? blockedNote(st, l.setting) : '';
    // What the sentences read their numbers from: the store and the views' measured results.
    const text: LessonText = { store: this.store, view: <T,>(tag: string) => this.findView(tag) as T | null };
    const finished = this.progress.done.filter((id) => lessonNamed(id)).length;
    return html`<section class="card" aria-labelledby="lesson-title" data-lesson=${l.id}>
      <header>
        <span class="count">${msg(str`Lesson ${i + 1} of ${course.length}`, { id: 'tour.count' })}${part ? html` · <span data-part=${part.id}>${part.title()}</span>` : nothing}${this.tour
            ? html` · ${msg(str`${finished} done`, { id: 'tour.finished' })}`
            : nothing}</span>
        <h2 id="lesson-title">${l.title()}</h2>
        ${assigned ? this.nav(i, course, true) : this.tour ? this.nav(i) : nothing}
      </header>
      ${assignment ? html`<tp-assignment lesson-id=${l.id} .store=${this.store} .runs=${this.runs}></tp-assignment>` : nothing}
      ${asks ? html`<p class="seed" data-seed-question><strong>${msg('The question it answers:', { id: 'tour.seed-question' })}</strong> ${asks}</p>` : nothing}
      ${this.tour && this.showToc ? this.toc() : nothing}
      ${l.explain(text).map((p) => html`<p>${p}</p>`)}
      ${l.formula ? html`<div class="formula" role="math" aria-label=${msg('formula', { id: 'tour.formula' })}>${typeof l.formula === 'function' ? l.formula() : l.formula}</div>` : nothing}
      <div class="try" data-step=${done ? 'done' : 'todo'}>
        <p><strong>${msg('Try it:', { id: 'tour.try' })}</strong> ${l.task()}</p>
        <p><strong>${msg('Question:', { id: 'tour.question' })}</strong> ${l.question()}</p>
        <p class="status" role="status" ?data-blocked=${!!blocked}>
          ${done ? msg('Done: the page saw you do it.', { id: 'tour.done' }) : blocked || msg('Waiting for you to do it…', { id: 'tour.waiting' })}
        </p>
        ${done ? this.answerBox(l, text) : nothing}
        ${done && this.answer?.right ? html`<p data-notice><strong>${msg('What to notice:', { id: 'tour.notice' })}</strong> ${l.notice(text)}</p>` : nothing}
      </div>
      <p class="links">
        ${msg('The code:', { id: 'tour.code' })} ${l.code.map((c, k) => html`${k ? ', ' : ''}<code>${c}</code>`)} ·
        <a href=${`${DOC}#${l.doc}`} target="_blank" rel="noopener">${msg('the model, exactly (docs/model.md)', { id: 'tour.doc' })}</a>
      </p>
    </section>`;
  }
}

customElements.define('tp-lesson', TpLesson);
