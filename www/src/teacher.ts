// The entry of teacher.html: compose a classroom link — a lesson (or the settings of a
// pasted playground link), which settings the students may change (every other one is
// locked) and which controls they do not see — and show it as a QR code for the projector.
// The link is rebuilt on every change, so there is nothing to press but "Copy".

import { LitElement, html, css, nothing } from 'lit';
import { msg, updateWhenLocaleChanges } from '@lit/localize';
import { encode } from 'uqr';
import { LESSONS, lessonNamed } from './lessons/lessons';
import { classroomHash, defaultAllowed, defaultHidden, HIDEABLE, LOCKABLE, settingsOfLink } from './lessons/classroom';
import { panel, theme } from './ui/shared';
import { browserLang, useLang } from './i18n/locale';
import { storedLang } from './ui/prefs';
import { parseLang } from './state/url';
import { controlName, settingName } from './i18n/terms';

export class TpTeacher extends LitElement {
  static properties = {
    lesson: { state: true },
    pasted: { state: true },
    allowed: { state: true },
    hiddenControls: { state: true },
    said: { state: true },
  };

  lesson = LESSONS[0].id;
  /** A playground link whose settings the class starts from ('' for none). */
  pasted = '';
  allowed: string[] = defaultAllowed(LESSONS[0].id);
  hiddenControls: string[] = defaultHidden(defaultAllowed(LESSONS[0].id));
  said = '';

  constructor() {
    super();
    updateWhenLocaleChanges(this);
    // The playground's language: the link's, else the reader's own choice, else the browser's.
    const from = location.hash.slice(1);
    let lang: string | null = null;
    try {
      lang = new URLSearchParams(from).get('lang');
    } catch {
      lang = null;
    }
    const chosen = parseLang(lang ?? '') ?? storedLang() ?? browserLang();
    document.documentElement.lang = chosen;
    void useLang(chosen).catch(() => undefined);
    // Opened from the playground's "For teachers" link: its settings, and its lesson if any.
    let keys: string[] = [];
    let lesson: string | null = null;
    try {
      const params = new URLSearchParams(from);
      keys = [...params.keys()].filter((k) => k !== 'lang');
      lesson = params.get('lesson');
    } catch {
      keys = [];
    }
    if (keys.length) {
      this.pickLesson(lesson && lessonNamed(lesson) ? lesson : '');
      this.pasted = `#${from}`;
    }
  }

  static styles = [
    theme,
    panel,
    css`
      :host {
        max-width: 980px;
        margin: 0 auto;
      }
      fieldset {
        border: 1px solid var(--tp-line);
        border-radius: 8px;
        margin: 10px 0;
      }
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(13em, 1fr));
        gap: 4px 12px;
        font-size: 0.9rem;
      }
      .grid code {
        font-size: 0.8em;
        color: var(--tp-muted);
      }
      label.wide {
        display: flex;
        gap: 8px;
        align-items: center;
        margin: 6px 0;
      }
      label.wide input,
      label.wide select {
        flex: 1 1 auto;
        min-width: 0;
      }
      .out {
        display: flex;
        gap: 16px;
        flex-wrap: wrap;
        align-items: flex-start;
      }
      .out .link {
        flex: 1 1 24em;
        min-width: 0;
      }
      textarea {
        width: 100%;
        box-sizing: border-box;
        font-family: var(--tp-mono);
        font-size: 0.8rem;
      }
      canvas {
        image-rendering: pixelated;
        border: 1px solid var(--tp-line);
        background: #fff;
      }
      .muted {
        color: var(--tp-muted);
        font-size: 0.85rem;
      }
    `,
  ];

  private pickLesson(id: string) {
    this.lesson = id;
    this.allowed = defaultAllowed(id);
    this.hiddenControls = defaultHidden(this.allowed);
  }

  private toggle(list: 'allowed' | 'hiddenControls', name: string, on: boolean) {
    const cur = this[list].filter((n) => n !== name);
    this[list] = on ? [...cur, name] : cur;
  }

  /** The classroom link, absolute, to the playground beside this page. */
  get link(): string {
    const { settings } = settingsOfLink(this.pasted);
    const url = new URL('./', location.href);
    url.hash = classroomHash({ lesson: this.lesson, settings, allowed: this.allowed, hidden: this.hiddenControls });
    return url.href;
  }

  protected updated(): void {
    const canvas = this.renderRoot.querySelector('canvas');
    if (!canvas) return;
    const qr = encode(this.link, { ecc: 'M', border: 2 });
    const scale = Math.max(2, Math.floor(320 / qr.size));
    canvas.width = qr.size * scale;
    canvas.height = qr.size * scale;
    const g = canvas.getContext('2d');
    if (!g) return;
    g.fillStyle = '#ffffff';
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.fillStyle = '#000000';
    qr.data.forEach((row, y) => row.forEach((dark, x) => dark && g.fillRect(x * scale, y * scale, scale, scale)));
    canvas.dataset.modules = String(qr.size);
  }

  private async copy() {
    try {
      await navigator.clipboard.writeText(this.link);
      this.said = msg('Link copied.', { id: 'teacher.copied' });
    } catch {
      this.said = msg('Copy the link from the box by hand.', { id: 'teacher.copy-by-hand' });
    }
  }

  render() {
    // The tab's title, in the page's language (teacher.html's own is the English one).
    document.title = msg('Transformer Playground · a link for your class', { id: 'teacher.page-title' });
    const l = lessonNamed(this.lesson);
    const notes = settingsOfLink(this.pasted).notes;
    return html`<section class="card">
      <h1>${msg('A link for your class', { id: 'teacher.title' })}</h1>
      <p class="muted">
        ${msg('Pick a lesson, tick what your students may change, and hand out the link or the QR code. Every other setting is locked.', { id: 'teacher.intro' })}
      </p>
      <label class="wide"
        >${msg('Lesson', { id: 'teacher.lesson' })}
        <select data-teacher="lesson" @change=${(e: Event) => this.pickLesson((e.target as HTMLSelectElement).value)}>
          <option value="" ?selected=${this.lesson === ''}>${msg('no lesson: only the settings of the link below', { id: 'teacher.no-lesson' })}</option>
          ${LESSONS.map((x) => html`<option value=${x.id} ?selected=${x.id === this.lesson}>${x.title()}</option>`)}
        </select></label
      >
      ${l ? html`<p class="muted">${l.task()} ${l.question()}</p>` : nothing}
      <label class="wide"
        >${msg('Start from the settings of a playground link (optional)', { id: 'teacher.paste' })}
        <input data-teacher="paste" type="url" .value=${this.pasted} @input=${(e: Event) => (this.pasted = (e.target as HTMLInputElement).value)}
      /></label>
      ${notes.length ? html`<ul class="muted" role="status">${notes.map((n) => html`<li>${n}</li>`)}</ul>` : nothing}
      <fieldset>
        <legend>${msg('Students may change', { id: 'teacher.allowed' })}</legend>
        <div class="grid">
          ${LOCKABLE.map(
            (k) => html`<label
              ><input type="checkbox" data-allow=${k} .checked=${this.allowed.includes(k)} @change=${(e: Event) => this.toggle('allowed', k, (e.target as HTMLInputElement).checked)} />
              ${settingName(k)} <code>${k}</code></label
            >`,
          )}
        </div>
      </fieldset>
      <fieldset>
        <legend>${msg('Hide these controls', { id: 'teacher.hidden' })}</legend>
        <div class="grid">
          ${HIDEABLE.map(
            (k) => html`<label
              ><input type="checkbox" data-hide=${k} .checked=${this.hiddenControls.includes(k)} @change=${(e: Event) => this.toggle('hiddenControls', k, (e.target as HTMLInputElement).checked)} />
              ${controlName(k)} <code>${k}</code></label
            >`,
          )}
        </div>
      </fieldset>
      <div class="out">
        <div class="link">
          <label for="link">${msg('The link', { id: 'teacher.link' })}</label>
          <textarea id="link" data-teacher="link" rows="5" readonly .value=${this.link}></textarea>
          <p>
            <button data-teacher="copy" @click=${() => void this.copy()}>${msg('Copy', { id: 'teacher.copy' })}</button>
            <a href=${this.link} target="_blank" rel="noopener">${msg('Open it', { id: 'teacher.open' })}</a>
            <span role="status">${this.said}</span>
          </p>
        </div>
        <canvas data-teacher="qr" role="img" aria-label=${msg('QR code of the link', { id: 'teacher.qr' })}></canvas>
      </div>
    </section>`;
  }
}

customElements.define('tp-teacher', TpTeacher);
