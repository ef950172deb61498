// <tp-assignment>: the top of the lesson panel when the link gives an assignment
// (`lessons=a,b,c`): who is working (a name or seat number typed once, "new student" and
// "reset" for a shared PC), the teacher's instruction and class example sentence (drawn as
// text, never as markup), the assigned lessons with how each was answered, and, once every
// one is answered, the completion code and its QR code to hand in. Changing the student
// reloads the page, so that everything drawn (runs included) is the new student's.

import { LitElement, html, css, nothing } from 'lit';
import { msg, str, updateWhenLocaleChanges } from '@lit/localize';
import type { PlaygroundStore } from '../state/store';
import type { RunRecord } from '../lab/types';
import { panel } from '../ui/shared';
import { drawQr } from '../ui/qr';
import { emit } from '../ui/shared';
import { allAnswered, assignedRun, assignmentLessonHash, assignmentOf, completionOf, type Assignment } from './assignment';
import { assignmentLabel, encodeCompletion } from './code';
import { forgetLessonStates } from './lesson-state';
import { forgetProgress, loadProgress } from './progress';
import { cleanStudent, currentStudent, MAX_STUDENT, setStudent, studentRunPrefix } from './student';
import { forgetRuns } from '../lab/persist';

export class TpAssignment extends LitElement {
  static properties = {
    lessonId: { type: String, attribute: 'lesson-id' },
    store: { attribute: false },
    runs: { attribute: false },
    confirming: { state: true },
    said: { state: true },
  };

  lessonId = '';
  store: PlaygroundStore | null = null;
  /** The lab's runs of the student working now. */
  runs: () => readonly RunRecord[] = () => [];
  /** Asking "really reset?" */
  confirming = false;
  said = '';

  private timer: ReturnType<typeof setInterval> | undefined;
  private student = currentStudent();

  constructor() {
    super();
    updateWhenLocaleChanges(this);
  }

  connectedCallback(): void {
    super.connectedCallback();
    // Answers are committed in the panel beside it and runs finish in the lab: read both again now and then.
    this.timer = setInterval(() => this.requestUpdate(), 1000);
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.timer);
  }

  static styles = [
    panel,
    css`
      :host {
        display: block;
      }
      .box {
        border: 1px solid var(--tp-line);
        border-radius: 8px;
        padding: 6px 10px;
        margin: 0 0 var(--tp-space-2);
      }
      .who {
        display: flex;
        flex-wrap: wrap;
        gap: 8px;
        align-items: center;
      }
      .who input {
        font: inherit;
        width: 14em;
      }
      .note {
        white-space: pre-wrap;
        overflow-wrap: anywhere;
      }
      ol.assigned {
        margin: 4px 0;
        padding-left: 1.6em;
      }
      ol.assigned li[aria-current='step'] {
        font-weight: 700;
      }
      .mark {
        color: var(--tp-muted);
      }
      .mark[data-mark='right'] {
        color: var(--tp-accent);
      }
      .done {
        display: flex;
        flex-wrap: wrap;
        gap: 12px;
        align-items: flex-start;
      }
      .done code {
        font-family: var(--tp-mono);
        overflow-wrap: anywhere;
        word-break: break-all;
        font-size: var(--tp-text-md);
        user-select: all;
      }
      .done .text {
        flex: 1 1 18em;
        min-width: 0;
      }
      canvas {
        image-rendering: pixelated;
        background: #fff;
        border: 1px solid var(--tp-line);
        width: 180px;
        height: 180px;
      }
      .muted {
        color: var(--tp-muted);
        font-size: var(--tp-text-sm);
      }
      a {
        color: var(--tp-accent);
      }
    `,
  ];

  /** Back to the assignment's first lesson as the teacher's link opens it (not with the last student's changes), then reload as the new student. */
  private restart() {
    const s = this.store;
    const a = s ? assignmentOf(s.st) : null;
    if (s && a?.lessons.length) {
      const hash = assignmentLessonHash(s.hash, a.lessons[0].id, undefined, s.st.lock);
      history.replaceState(null, '', `${location.pathname}${location.search}#${hash}`);
    }
    location.reload();
  }

  private name(e: Event) {
    e.preventDefault();
    const input = this.renderRoot.querySelector<HTMLInputElement>('input[data-student-name]');
    const n = cleanStudent(input?.value ?? '');
    if (!n) {
      this.said = msg('Type your name or seat number first.', { id: 'class.name-empty' });
      return;
    }
    setStudent(n);
    this.restart();
  }

  private newStudent() {
    setStudent('');
    this.restart();
  }

  private async reset() {
    // Only the student working now: their answers, where their lessons stood, their runs.
    forgetProgress();
    forgetLessonStates();
    try {
      await forgetRuns(studentRunPrefix());
    } catch {
      // no IndexedDB: there were no runs kept
    }
    this.restart();
  }

  protected updated(): void {
    const canvas = this.renderRoot.querySelector<HTMLCanvasElement>('canvas[data-completion-qr]');
    const code = canvas?.dataset.code;
    if (canvas && code && canvas.dataset.drawn !== code) {
      drawQr(canvas, code, 240);
      canvas.dataset.drawn = code;
    }
  }

  private who() {
    const s = this.student;
    if (!s) {
      return html`<form class="who" data-student-form @submit=${(e: Event) => this.name(e)}>
        <label
          >${msg('Your name or seat number', { id: 'class.name' })}
          <input data-student-name type="text" maxlength=${MAX_STUDENT} autocomplete="off" required
        /></label>
        <button type="submit">${msg('Start', { id: 'class.start' })}</button>
        <span class="muted">${msg('Kept in this browser only, with your answers.', { id: 'class.name-kept' })}</span>
        <span role="status">${this.said}</span>
      </form>`;
    }
    return html`<div class="who" data-student=${s}>
      <span>${msg('Working as', { id: 'class.working-as' })} <strong data-student-shown>${s}</strong></span>
      <button data-student-new @click=${() => this.newStudent()}>${msg('New student', { id: 'class.new-student' })}</button>
      ${this.confirming
        ? html`<span role="alert">${msg(str`Erase the answers and lab runs of ${s} in this browser?`, { id: 'class.reset-ask' })}</span>
            <button data-student-reset-yes @click=${() => void this.reset()}>${msg('Erase them', { id: 'class.reset-yes' })}</button>
            <button data-student-reset-no @click=${() => (this.confirming = false)}>${msg('Keep them', { id: 'class.reset-no' })}</button>`
        : html`<button data-student-reset @click=${() => (this.confirming = true)}>${msg('Reset my answers', { id: 'class.reset' })}</button>`}
    </div>`;
  }

  private list(a: Assignment) {
    const p = loadProgress();
    return html`<ol class="assigned" aria-label=${msg('the lessons of this assignment', { id: 'class.assigned' })}>
      ${a.lessons.map((l) => {
        const x = Object.hasOwn(p.answers, l.id) ? p.answers[l.id] : undefined;
        const mark = !x ? 'open' : x.right ? 'right' : 'wrong';
        return html`<li data-assigned=${l.id} aria-current=${l.id === this.lessonId ? 'step' : 'false'}>
          <a
            href=${`#lesson=${l.id}`}
            @click=${(e: Event) => {
              e.preventDefault();
              emit(this, 'tp-lesson-open', l.id);
            }}
            >${l.title()}</a
          >
          <span class="mark" data-mark=${mark}
            >${mark === 'right'
              ? msg('answered, right', { id: 'class.mark-right' })
              : mark === 'wrong'
                ? msg('answered, not right yet', { id: 'class.mark-wrong' })
                : msg('not answered yet', { id: 'class.mark-open' })}</span
          >
        </li>`;
      })}
    </ol>`;
  }

  private completion(a: Assignment) {
    const p = loadProgress();
    if (!allAnswered(a, p)) return nothing;
    if (!this.student) {
      return html`<p data-completion-wait role="status">${msg('Every lesson is answered. Type your name above to get your completion code.', { id: 'class.need-name' })}</p>`;
    }
    const runs = this.runs();
    const code = encodeCompletion(completionOf(a, p, this.student, runs));
    const runMissing = a.train !== '' && !assignedRun(runs, a.train);
    return html`<div class="box done" data-completion>
      <div class="text">
        <p><strong>${msg('Your completion code', { id: 'class.code' })}</strong> <span class="muted">${msg(html`(assignment <code>${assignmentLabel(a.id)}</code>)`, { id: 'class.code-of' })}</span></p>
        <p><code data-completion-code>${code}</code></p>
        <p class="muted">${msg('Hand it in: show the QR code to your teacher, or copy the text.', { id: 'class.code-how' })}</p>
        ${runMissing ? html`<p class="muted" data-run-missing>${msg('The lab run is not in it yet: it comes in once your run has been evaluated.', { id: 'class.run-missing' })}</p>` : nothing}
      </div>
      <canvas data-completion-qr data-code=${code} role="img" aria-label=${msg('QR code of your completion code', { id: 'class.code-qr' })}></canvas>
    </div>`;
  }

  render() {
    const a = this.store ? assignmentOf(this.store.st) : null;
    if (!a) return nothing;
    return html`<div class="box" data-assignment>
        ${this.who()}
        ${a.note ? html`<p class="note" data-note><strong>${msg('From your teacher:', { id: 'class.note' })}</strong> ${a.note}</p>` : nothing}
        ${a.example
          ? html`<p data-example>
              <strong>${msg('Class example:', { id: 'class.example' })}</strong> <q class="note">${a.example}</q>
              <button data-example-use @click=${() => void this.store?.patch({ text: a.example })}>${msg('Use it', { id: 'class.example-use' })}</button>
            </p>`
          : nothing}
        ${this.list(a)}
        ${a.unknown.length ? html`<p class="muted" role="status">${msg(str`Not lessons, left out: ${a.unknown.join(', ')}`, { id: 'class.unknown' })}</p>` : nothing}
      </div>
      ${this.completion(a)}`;
  }
}

customElements.define('tp-assignment', TpAssignment);
