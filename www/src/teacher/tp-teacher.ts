// <tp-teacher>, the teacher page: compose an assignment — its lessons in the teacher's
// order, the students' language, the model, the lab's run settings, an instruction and a
// class example, which settings the students may change (every other one is locked, grouped
// and described in words) and which controls they do not see — and hand it out as a link or
// a QR code; refuse a lock that blocks a chosen lesson's experiment; warn when the link
// points at this computer only. Then read the students' completion codes into a class table
// (CSV), and print a worksheet. The page's own hash keeps the assignment, so reopening it
// reads the same class's codes.

import { LitElement, html, css, nothing } from 'lit';
import { msg, str, updateWhenLocaleChanges } from '@lit/localize';
import { lessonNamed, type Lesson } from '../lessons/lessons';
import { courseLessons, seedQuestion } from '../lessons/course';
import { classroomHash, defaultAllowed, defaultHidden, HIDEABLE, LOCKABLE, settingsOfLink } from '../lessons/classroom';
import { assignmentOf, type Assignment } from '../lessons/assignment';
import { assignmentLabel, type Completion } from '../lessons/code';
import { panel, theme } from '../ui/shared';
import { drawQr } from '../ui/qr';
import { browserLang, currentLang, useLang } from '../i18n/locale';
import { storedLang, storeLang } from '../ui/prefs';
import { MAX_ASSIGNED, MAX_NOTE, MAX_TEXT, parseHash, parseLang, type Lang } from '../state/url';
import { controlName, settingDescription, settingName, SETTING_GROUPS } from '../i18n/terms';
import { parseRunQuery } from '../lab/url';
import { modelTitle } from '../i18n/models';
import { classCsv, qrOfImage, readCode, readCodes, type Read } from './codes';
import { measureLesson, whyOpen } from './key';

/** What a LAN address looks like (on the port and path of `at`, the address the link points at now). */
function lanExample(at: URL | null): string {
  return `http://192.168.1.20${at?.port ? `:${at.port}` : ''}${at?.pathname ?? '/'}`;
}
/** The commands that print this computer's network address (Windows, macOS, Linux). */
const LAN_COMMANDS = 'ipconfig (Windows), ipconfig getifaddr en0 (macOS), hostname -I (Linux)';

/** Host names only this computer reaches. */
const LOCAL = /^(localhost|127(\.\d+){3}|\[::1\]|::1|0\.0\.0\.0)$/i;

export class TpTeacher extends LitElement {
  static properties = {
    lessons: { state: true },
    pasted: { state: true },
    allowed: { state: true },
    hiddenControls: { state: true },
    said: { state: true },
    studentLang: { state: true },
    model: { state: true },
    train: { state: true },
    note: { state: true },
    example: { state: true },
    base: { state: true },
    models: { state: true },
    rows: { state: true },
    rejected: { state: true },
    measured: { state: true },
    measuring: { state: true },
  };

  /** The assigned lessons, in order ([]: only the settings of the pasted link). */
  lessons: string[] = [courseLessons()[0].id];
  /** A playground link whose settings the class starts from ('' for none). */
  pasted = '';
  allowed: string[] = defaultAllowed(courseLessons()[0].id);
  hiddenControls: string[] = defaultHidden(defaultAllowed(courseLessons()[0].id));
  said = '';
  /** The students' language ('' for each student's own). */
  studentLang: Lang | '' = '';
  /** The model every lesson opens with ('' for each lesson's own). */
  model = '';
  train = '';
  note = '';
  example = '';
  /** Where students open the playground (this page's folder unless it is this computer only). */
  base = new URL('./', location.href).href;
  models: { file: string; title: string }[] = [];
  /** The class table: one completion per student (the latest code read wins). */
  rows: Completion[] = [];
  rejected: Read[] = [];
  /** The answer key's values measured by the engine, by lesson and model (`id|model`): an option index or a number, null when not measurable here. */
  measured: Record<string, number | null> = {};
  measuring = false;

  constructor() {
    super();
    updateWhenLocaleChanges(this);
    const from = location.hash.slice(1);
    let params = new URLSearchParams();
    try {
      params = new URLSearchParams(from);
    } catch {
      params = new URLSearchParams();
    }
    // The page's language: its own (`ui`, kept in this page's hash), else the link's, else the reader's own choice, else the browser's.
    const chosen = parseLang(params.get('ui') ?? '') ?? parseLang(params.get('lang') ?? '') ?? storedLang() ?? browserLang();
    document.documentElement.lang = chosen;
    void useLang(chosen).catch(() => undefined);
    const keys = [...params.keys()].filter((k) => k !== 'lang' && k !== 'ui');
    if (keys.length) this.fromHash(from);
    void this.loadModels();
  }

  /** Start from a link's settings (the playground's "For teachers", or this page's own kept hash). */
  private fromHash(hash: string) {
    const p = parseHash(hash).state;
    const ids = (p.lessons.length ? p.lessons : p.lesson ? [p.lesson] : []).filter((id) => lessonNamed(id));
    this.pickLessons(ids);
    if (p.lock.length) this.allowed = LOCKABLE.filter((k) => !p.lock.includes(k));
    if (p.hide.length) this.hiddenControls = [...p.hide];
    this.studentLang = p.lang ?? '';
    this.model = p.model;
    this.train = p.train;
    this.note = p.note;
    this.example = p.example;
    const rest = new URLSearchParams(hash);
    for (const k of ['lesson', 'lessons', 'lock', 'hide', 'lang', 'model', 'train', 'note', 'example', 'ui']) rest.delete(k);
    this.pasted = rest.toString() ? `#${rest.toString()}` : '';
  }

  private async loadModels() {
    try {
      const r = await fetch(new URL('./models/manifest.json', location.href));
      const list = (await r.json()) as unknown;
      if (Array.isArray(list)) {
        this.models = list
          .filter((m): m is { file: string; title?: unknown } => !!m && typeof m === 'object' && typeof (m as { file?: unknown }).file === 'string')
          .map((m) => ({ file: m.file, title: typeof m.title === 'string' ? m.title : m.file }));
      }
    } catch {
      this.models = [];
    }
  }

  static styles = [
    theme,
    panel,
    css`
      :host {
        display: block;
        max-width: 980px;
        margin: 0 auto;
      }
      fieldset {
        border: 1px solid var(--tp-line);
        border-radius: 8px;
        margin: 10px 0;
        /* A fieldset is as wide as its widest content by default: a long lesson title in a select would widen the page past a phone's screen. */
        min-width: 0;
      }
      legend h2 {
        font-size: 1rem;
        font-weight: 600;
        margin: 0;
      }
      select {
        max-width: 100%;
      }
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(15em, 1fr));
        gap: 6px 14px;
        font-size: 0.9rem;
      }
      .grid label {
        display: block;
      }
      .desc {
        display: block;
        color: var(--tp-muted);
        font-size: 0.8rem;
        margin-left: 1.7em;
      }
      h3 {
        margin: 8px 0 4px;
        font-size: 1rem;
      }
      label.wide {
        display: flex;
        gap: 8px;
        align-items: center;
        margin: 6px 0;
        flex-wrap: wrap;
      }
      label.wide input,
      label.wide select,
      label.wide textarea {
        flex: 1 1 16em;
        min-width: 0;
      }
      .top {
        display: flex;
        justify-content: space-between;
        gap: 8px;
        flex-wrap: wrap;
        align-items: baseline;
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
      .warn {
        border-left: 4px solid #b8860b;
        padding: 4px 10px;
        margin: 8px 0;
      }
      .refuse {
        border-left: 4px solid #c0392b;
        padding: 4px 10px;
        margin: 8px 0;
      }
      /* A refused code is one long word: it breaks anywhere rather than widen the page. */
      [data-rejected] code {
        overflow-wrap: anywhere;
        word-break: break-all;
      }
      ol.order li {
        margin: 2px 0;
      }
      ol.order button {
        font-size: 0.8rem;
      }
      .courses {
        columns: 2 18em;
        font-size: 0.9rem;
      }
      .courses label {
        display: block;
        break-inside: avoid;
      }
      table {
        border-collapse: collapse;
        font-size: 0.85rem;
        margin: 6px 0;
      }
      th,
      td {
        border: 1px solid var(--tp-line);
        padding: 3px 6px;
        text-align: left;
        vertical-align: top;
      }
      td[data-right='no'] {
        background: rgba(192, 57, 43, 0.15);
      }
      .tablewrap {
        overflow-x: auto;
      }
      .worksheet {
        display: none;
      }
      .measure {
        position: fixed;
        left: 0;
        top: 0;
        width: 1100px;
        transform: scale(0.02);
        transform-origin: 0 0;
        opacity: 0;
        pointer-events: none;
        z-index: -1;
      }
      .key li {
        margin: 6px 0;
      }
      .blank {
        display: inline-block;
        min-width: 14em;
        border-bottom: 1px solid currentColor;
      }
      .lines {
        border-bottom: 1px solid #999;
        height: 2em;
      }
      @media print {
        .screen {
          display: none !important;
        }
        .worksheet {
          display: block;
          color: #000;
          background: #fff;
          font-size: 12pt;
        }
        .worksheet ul {
          list-style: none;
          padding-left: 1em;
        }
        .worksheet section {
          break-inside: avoid;
          margin: 0 0 14pt;
        }
      }
    `,
  ];

  // ---------------------------------------------------------------- the assignment

  private pickLessons(ids: string[]) {
    this.lessons = ids.slice(0, MAX_ASSIGNED);
    const allowed = new Set<string>();
    for (const id of this.lessons) for (const k of defaultAllowed(id)) allowed.add(k);
    if (!this.lessons.length) for (const k of defaultAllowed('')) allowed.add(k);
    this.allowed = [...allowed];
    this.hiddenControls = defaultHidden(this.allowed);
  }

  private toggleLesson(id: string, on: boolean) {
    const cur = this.lessons.filter((x) => x !== id);
    this.pickLessons(on ? [...cur, id] : cur);
  }

  private move(i: number, by: number) {
    const l = [...this.lessons];
    const j = i + by;
    if (j < 0 || j >= l.length) return;
    [l[i], l[j]] = [l[j], l[i]];
    this.lessons = l;
  }

  private toggle(list: 'allowed' | 'hiddenControls', name: string, on: boolean) {
    const cur = this[list].filter((n) => n !== name);
    this[list] = on ? [...cur, name] : cur;
  }

  /** Chosen lessons whose experiment a lock blocks: the lesson and the setting it needs. */
  get blocked(): { lesson: Lesson; setting: string }[] {
    const out: { lesson: Lesson; setting: string }[] = [];
    for (const id of this.lessons) {
      const l = lessonNamed(id);
      if (l?.setting && LOCKABLE.includes(l.setting) && !this.allowed.includes(l.setting)) out.push({ lesson: l, setting: l.setting });
    }
    return out;
  }

  /** The hash of the students' link (without `#`). */
  get hash(): string {
    const { settings } = settingsOfLink(this.pasted);
    const extra = new URLSearchParams(settings);
    if (this.studentLang) extra.set('lang', this.studentLang);
    if (this.model) extra.set('model', this.model);
    if (this.train) extra.set('train', this.train);
    if (this.lessons.length > 1 || this.note || this.example) {
      if (this.lessons.length) extra.set('lessons', this.lessons.join(','));
      if (this.note) extra.set('note', this.note.slice(0, MAX_NOTE));
      if (this.example) extra.set('example', this.example.slice(0, MAX_TEXT));
    }
    return classroomHash({ lesson: this.lessons[0] ?? '', settings: extra.toString(), allowed: this.allowed, hidden: this.hiddenControls });
  }

  /** The students' link, absolute, to the playground at `base` (empty while a lock blocks a lesson). */
  get link(): string {
    if (this.blocked.length) return '';
    let url: URL;
    try {
      url = new URL(this.base || './', location.href);
    } catch {
      url = new URL('./', location.href);
    }
    url.hash = this.hash;
    return url.href;
  }

  /** The assignment the link gives, as the students' page reads it (its id goes into their codes). */
  get assignment(): Assignment {
    const st = parseHash(this.hash).state;
    return assignmentOf(st.lessons.length ? st : { ...st, lessons: st.lesson ? [st.lesson] : [] }) ?? { lessons: [], unknown: [], note: '', example: '', train: '', id: 0 };
  }

  protected updated(): void {
    const canvas = this.renderRoot.querySelector<HTMLCanvasElement>('canvas[data-teacher="qr"]');
    const link = this.link;
    if (canvas && link && canvas.dataset.drawn !== link) {
      drawQr(canvas, link);
      canvas.dataset.drawn = link;
    }
    // The page's own hash keeps the assignment: reopening it reads the same class's codes.
    const own = `${this.hash}&ui=${currentLang()}`;
    if (location.hash.slice(1) !== own) history.replaceState(null, '', `${location.pathname}${location.search}#${own}`);
  }

  private async copy() {
    try {
      await navigator.clipboard.writeText(this.link);
      this.said = msg('Link copied.', { id: 'teacher.copied' });
    } catch {
      this.said = msg('Copy the link from the box by hand.', { id: 'teacher.copy-by-hand' });
    }
  }

  private async switchLang(l: Lang) {
    storeLang(l);
    document.documentElement.lang = l;
    await useLang(l);
    this.requestUpdate();
  }

  // ---------------------------------------------------------------- codes

  private take(reads: Read[]) {
    const byName = new Map(this.rows.map((r) => [r.student, r]));
    const rejected: Read[] = [];
    for (const r of reads) {
      if (r.ok) byName.set(r.code.student, r.code);
      else rejected.push(r);
    }
    this.rows = [...byName.values()].sort((a, b) => a.student.localeCompare(b.student));
    this.rejected = rejected;
  }

  private readPasted() {
    const box = this.renderRoot.querySelector<HTMLTextAreaElement>('textarea[data-codes]');
    this.take(readCodes(box?.value ?? '', this.assignment));
  }

  private async readImages(e: Event) {
    const input = e.target as HTMLInputElement;
    const reads: Read[] = [];
    for (const f of [...(input.files ?? [])].slice(0, 60)) {
      let text: string | null = null;
      try {
        text = await qrOfImage(f);
      } catch {
        text = null;
      }
      reads.push(text === null ? { ok: false, text: f.name.slice(0, 60), why: msg('No QR code found in this picture.', { id: 'teacher.code.no-qr' }) } : readCode(text, this.assignment));
    }
    this.take(reads);
    input.value = '';
  }

  private csvHref(): string {
    return `data:text/csv;charset=utf-8,${encodeURIComponent(`\ufeff${classCsv(this.assignment, this.rows)}`)}`;
  }

  /** Measure every assigned lesson's answer on the chosen model, one playground at a time. */
  private async measure() {
    if (this.measuring) return;
    this.measuring = true;
    const host = this.renderRoot.querySelector<HTMLElement>('[data-measure-host]');
    try {
      for (const l of this.assignment.lessons) {
        const k = `${l.id}|${this.model}`;
        if (Object.hasOwn(this.measured, k) || !host) continue;
        let v: number | null = null;
        try {
          v = await measureLesson(l, this.model, host);
        } catch {
          v = null;
        }
        this.measured = { ...this.measured, [k]: v };
      }
    } finally {
      this.measuring = false;
    }
  }

  /** The measured answer of a lesson, in words ('' while not measured). */
  private expected(l: Lesson): string {
    const k = `${l.id}|${this.model}`;
    if (!Object.hasOwn(this.measured, k)) return '';
    const v = this.measured[k];
    const why = whyOpen(l);
    if (why !== null) return why;
    if (v === null) return msg('not measured here: it depends on what each student does; their page judges it on their model.', { id: 'teacher.key-open' });
    const c = l.check;
    if (c.kind === 'choice') return c.options()[v] ?? String(v);
    return `${c.label()}: ${String(Math.round(v * 1e4) / 1e4)}`;
  }

  // ---------------------------------------------------------------- drawing

  private settingsGroups() {
    const placed = new Set(SETTING_GROUPS.flatMap((g) => g.settings));
    const rest = LOCKABLE.filter((k) => !placed.has(k));
    const hidePlaced = new Set(SETTING_GROUPS.flatMap((g) => g.controls));
    const hideRest = HIDEABLE.filter((k) => !hidePlaced.has(k));
    const groups = [...SETTING_GROUPS.map((g) => ({ id: g.id, name: g.name(), settings: g.settings.filter((k) => LOCKABLE.includes(k)), controls: g.controls.filter((k) => HIDEABLE.includes(k)) }))];
    if (rest.length || hideRest.length) groups.push({ id: 'other', name: msg('Other', { id: 'teacher.group.other' }), settings: rest, controls: hideRest });
    return html`<fieldset data-teacher="settings">
      <legend><h2>${msg('What students may change', { id: 'teacher.allowed2' })}</h2></legend>
      <p class="muted">${msg('Ticked settings stay free; every other one is locked as the link sets it. Hidden controls are left out of the page.', { id: 'teacher.allowed-how' })}</p>
      ${groups.map(
        (g) => html`<div data-group=${g.id}>
          <h3>${g.name}</h3>
          <div class="grid">
            ${g.settings.map(
              (k) => html`<label
                ><input type="checkbox" data-allow=${k} .checked=${this.allowed.includes(k)} @change=${(e: Event) => this.toggle('allowed', k, (e.target as HTMLInputElement).checked)} />
                ${msg(str`may change the ${settingName(k)}`, { id: 'teacher.may-change' })}<span class="desc">${settingDescription(k)}</span></label
              >`,
            )}
            ${g.controls.map(
              (k) => html`<label
                ><input type="checkbox" data-hide=${k} .checked=${this.hiddenControls.includes(k)} @change=${(e: Event) => this.toggle('hiddenControls', k, (e.target as HTMLInputElement).checked)} />
                ${msg(str`hide the ${controlName(k)}`, { id: 'teacher.hide-control' })}</label
              >`,
            )}
          </div>
        </div>`,
      )}
    </fieldset>`;
  }

  private lessonPicker() {
    const chosen = this.lessons;
    return html`<fieldset data-teacher="lessons">
      <legend><h2>${msg('Lessons, in the order students take them', { id: 'teacher.lessons' })}</h2></legend>
      <label class="wide"
        >${msg('First lesson', { id: 'teacher.lesson' })}
        <select
          data-teacher="lesson"
          @change=${(e: Event) => {
            const v = (e.target as HTMLSelectElement).value;
            this.pickLessons(v ? [v, ...chosen.slice(1).filter((x) => x !== v)] : []);
          }}
        >
          <option value="" ?selected=${chosen.length === 0}>${msg('no lesson: only the settings of the link below', { id: 'teacher.no-lesson' })}</option>
          ${courseLessons().map((x) => html`<option value=${x.id} ?selected=${x.id === chosen[0]}>${x.title()}</option>`)}
        </select></label
      >
      ${chosen.length
        ? html`<ol class="order" data-teacher="order">
            ${chosen.map((id, i) => {
              const l = lessonNamed(id);
              return html`<li data-order=${id}>
                ${l?.title() ?? id}
                <button aria-label=${msg(str`move ${l?.title() ?? id} up`, { id: 'teacher.up' })} ?disabled=${i === 0} @click=${() => this.move(i, -1)}>↑</button>
                <button aria-label=${msg(str`move ${l?.title() ?? id} down`, { id: 'teacher.down' })} ?disabled=${i === chosen.length - 1} @click=${() => this.move(i, 1)}>↓</button>
                <button aria-label=${msg(str`remove ${l?.title() ?? id}`, { id: 'teacher.remove' })} @click=${() => this.toggleLesson(id, false)}>×</button>
              </li>`;
            })}
          </ol>`
        : nothing}
      <details>
        <summary>${msg('Add lessons (in course order)', { id: 'teacher.add-lessons' })}</summary>
        <div class="courses">
          ${courseLessons().map(
            (x) => html`<label
              ><input type="checkbox" data-pick=${x.id} .checked=${chosen.includes(x.id)} ?disabled=${!chosen.includes(x.id) && chosen.length >= MAX_ASSIGNED} @change=${(e: Event) => this.toggleLesson(x.id, (e.target as HTMLInputElement).checked)} />
              ${x.title()}</label
            >`,
          )}
        </div>
      </details>
    </fieldset>`;
  }

  private classFields() {
    const trainNotes = this.train ? parseRunQuery(this.train).notes : [];
    return html`<fieldset data-teacher="class">
      <legend><h2>${msg('For the whole class', { id: 'teacher.class' })}</h2></legend>
      <label class="wide"
        >${msg('Students’ language', { id: 'teacher.student-lang' })}
        <select data-teacher="student-lang" @change=${(e: Event) => (this.studentLang = (parseLang((e.target as HTMLSelectElement).value) ?? '') as Lang | '')}>
          <option value="" ?selected=${this.studentLang === ''}>${msg('each student’s own', { id: 'teacher.lang-own' })}</option>
          <option value="en" ?selected=${this.studentLang === 'en'} lang="en">English</option>
          <option value="zh-Hans" ?selected=${this.studentLang === 'zh-Hans'} lang="zh-Hans">简体中文</option>
        </select></label
      >
      <label class="wide"
        >${msg('Model', { id: 'teacher.model' })}
        <select data-teacher="model" @change=${(e: Event) => (this.model = (e.target as HTMLSelectElement).value)}>
          <option value="" ?selected=${this.model === ''}>${msg('each lesson’s own model', { id: 'teacher.model-own' })}</option>
          ${this.models.map((m) => html`<option value=${m.file} ?selected=${m.file === this.model}>${modelTitle(m)}</option>`)}
        </select></label
      >
      <label class="wide"
        >${msg('Lab run settings (optional)', { id: 'teacher.train' })}
        <input data-teacher="train" type="text" spellcheck="false" placeholder="task=reverse&steps=300" .value=${this.train} @input=${(e: Event) => (this.train = (e.target as HTMLInputElement).value.trim().slice(0, 2000))}
      /></label>
      ${trainNotes.length ? html`<ul class="muted" role="status" data-train-notes>${trainNotes.map((n) => html`<li>${n}</li>`)}</ul>` : nothing}
      <label class="wide"
        >${msg('Instruction for the students (optional)', { id: 'teacher.note' })}
        <textarea data-teacher="note" rows="2" maxlength=${MAX_NOTE} .value=${this.note} @input=${(e: Event) => (this.note = (e.target as HTMLTextAreaElement).value.slice(0, MAX_NOTE))}></textarea
      ></label>
      <label class="wide"
        >${msg('Class example sentence (optional)', { id: 'teacher.example' })}
        <input data-teacher="example" type="text" maxlength=${MAX_TEXT} .value=${this.example} @input=${(e: Event) => (this.example = (e.target as HTMLInputElement).value.slice(0, MAX_TEXT))}
      /></label>
      <label class="wide"
        >${msg('Start from the settings of a playground link (optional)', { id: 'teacher.paste' })}
        <input data-teacher="paste" type="url" .value=${this.pasted} @input=${(e: Event) => (this.pasted = (e.target as HTMLInputElement).value)}
      /></label>
      ${settingsOfLink(this.pasted).notes.length ? html`<ul class="muted" role="status">${settingsOfLink(this.pasted).notes.map((n) => html`<li>${n}</li>`)}</ul>` : nothing}
    </fieldset>`;
  }

  private linkOut() {
    const blocked = this.blocked;
    let at: URL | null = null;
    try {
      at = new URL(this.base || './', location.href);
    } catch {
      at = null;
    }
    const host = at?.hostname ?? '';
    const local = LOCAL.test(host);
    const link = this.link;
    return html`<section class="card" aria-labelledby="out-title">
      <h2 id="out-title">${msg('The link for your class', { id: 'teacher.link' })}</h2>
      ${blocked.map(
        (b) => html`<p class="refuse" role="alert" data-refuse-lock=${b.lesson.id}>
          ${msg(str`“${b.lesson.title()}” asks students to change the ${settingName(b.setting)}, which is locked: they could never finish it. Tick “may change the ${settingName(b.setting)}”, or remove the lesson. No link is made until then.`, { id: 'teacher.refuse-lock' })}
        </p>`,
      )}
      <label class="wide"
        >${msg('Address students open', { id: 'teacher.base' })}
        <input data-teacher="base" type="url" .value=${this.base} @input=${(e: Event) => (this.base = (e.target as HTMLInputElement).value.trim())}
      /></label>
      ${local
        ? html`<p class="warn" role="status" data-warn-local>
            ${msg(
              html`The link points at <code>${host}</code>, which is each student’s own computer: they cannot open it. Serve the page on your network with <code>cargo xtask serve --lan</code>, which prints the addresses to give students (see <code>www/README.md</code>), and type that address above instead, such as <code data-lan-example>${lanExample(at)}</code>; one of the commands <code>${LAN_COMMANDS}</code> also prints this computer’s network address.`,
              { id: 'teacher.warn-local-lan' },
            )}
          </p>`
        : nothing}
      <div class="out">
        <div class="link">
          <textarea aria-labelledby="out-title" data-teacher="link" rows="5" readonly .value=${link}></textarea>
          <p class="muted" data-assignment-id=${assignmentLabel(this.assignment.id)}>${msg(html`Assignment <code>${assignmentLabel(this.assignment.id)}</code>: the students’ completion codes carry it.`, { id: 'teacher.assignment-id' })}</p>
          <p>
            <button data-teacher="copy" ?disabled=${!link} @click=${() => void this.copy()}>${msg('Copy', { id: 'teacher.copy' })}</button>
            ${link ? html`<a href=${link} target="_blank" rel="noopener">${msg('Open it', { id: 'teacher.open' })}</a>` : nothing}
            <span role="status">${this.said}</span>
          </p>
        </div>
        ${link ? html`<canvas data-teacher="qr" role="img" aria-label=${msg('QR code of the link', { id: 'teacher.qr' })}></canvas>` : nothing}
      </div>
    </section>`;
  }

  private codes() {
    const a = this.assignment;
    return html`<section class="card" aria-labelledby="codes-title" data-teacher="codes">
      <h2 id="codes-title">${msg('Completion codes', { id: 'teacher.codes' })}</h2>
      <p class="muted">${msg('Each student’s page shows a code and its QR code once every lesson is answered. Paste the codes (one per line), or choose photos of the QR codes.', { id: 'teacher.codes-how' })}</p>
      <label for="codes">${msg('Codes', { id: 'teacher.codes-box' })}</label>
      <textarea id="codes" data-codes rows="4" spellcheck="false"></textarea>
      <p>
        <button data-read-codes @click=${() => this.readPasted()}>${msg('Read the codes', { id: 'teacher.read' })}</button>
        <label>${msg('QR photos', { id: 'teacher.qr-photos' })} <input type="file" accept="image/*" multiple data-qr-file @change=${(e: Event) => void this.readImages(e)} /></label>
      </p>
      ${this.rejected.length
        ? html`<div class="refuse" role="alert">
            <ul data-rejected>
              ${this.rejected.map((r) => html`<li><code>${r.text}</code>: <span data-why>${r.ok ? '' : r.why}</span></li>`)}
            </ul>
          </div>`
        : nothing}
      ${this.rows.length
        ? html`<div class="tablewrap">
              <table data-class-table>
                <caption class="muted">${msg(str`${this.rows.length} students`, { id: 'teacher.students' })}</caption>
                <thead>
                  <tr>
                    <th scope="col">${msg('Student', { id: 'teacher.student' })}</th>
                    ${a.lessons.map((l) => html`<th scope="col">${l.title()}</th>`)}
                    <th scope="col">${msg('Lab run', { id: 'teacher.lab-run' })}</th>
                  </tr>
                </thead>
                <tbody>
                  ${this.rows.map(
                    (r) => html`<tr data-row=${r.student}>
                      <th scope="row">${r.student}</th>
                      ${r.lessons.map(
                        (x, i) => html`<td data-lesson=${a.lessons[i]?.id ?? ''} data-right=${x.answered ? (x.right ? 'yes' : 'no') : 'open'}>
                          ${x.answered ? html`${x.right ? '✓' : '✗'} <code>${this.shownAnswer(a.lessons[i], x.answer)}</code> ${msg(str`(${x.tries} tries)`, { id: 'teacher.tries' })}` : '—'}
                        </td>`,
                      )}
                      <td data-run>${r.runs[0] ? msg(str`metric ${r.runs[0].metric.toFixed(4)}, loss ${r.runs[0].loss.toFixed(3)}, ${r.runs[0].steps} steps`, { id: 'teacher.run-cell' }) : '—'}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            <p><a data-csv href=${this.csvHref()} download="class.csv">${msg('Download the table (CSV)', { id: 'teacher.csv' })}</a></p>`
        : nothing}
    </section>`;
  }

  /** An answer as the student saw it: a choice's option text, or the number typed. */
  private shownAnswer(l: Lesson | undefined, answer: string): string {
    const c = l?.check;
    if (c?.kind === 'choice' && /^\d+$/.test(answer)) return c.options()[Number(answer)] ?? answer;
    return answer;
  }

  /** Per lesson: the question and its answer form, and what to notice (the answer key); printed as the worksheet with blanks. */
  private key(print: boolean) {
    const a = this.assignment;
    if (!a.lessons.length) return nothing;
    return html`${a.lessons.map((l, i) => {
      const c = l.check;
      const text = { store: null, view: () => null };
      return html`<section data-key=${l.id}>
        <h3>${i + 1}. ${l.title()}</h3>
        ${seedQuestion(l.id) ? html`<p><em>${seedQuestion(l.id)}</em></p>` : nothing}
        <p><strong>${msg('Try it:', { id: 'tour.try' })}</strong> ${l.task()}</p>
        <p><strong>${msg('Question:', { id: 'tour.question' })}</strong> ${c.kind === 'choice' && c.ask ? c.ask() : l.question()}</p>
        ${c.kind === 'choice'
          ? html`<ul>
              ${c.options().map((o) => html`<li>${print ? '○ ' : ''}${o}</li>`)}
            </ul>`
          : html`<p>${c.label()}: <span class="blank"></span></p>`}
        ${print
          ? html`<p>${msg('What did you notice?', { id: 'teacher.ws-notice' })}</p>
              <div class="lines"></div>
              <div class="lines"></div>`
          : html`${this.expected(l) ? html`<p data-expect=${l.id}><strong>${msg('Expected on the model:', { id: 'teacher.key-expected' })}</strong> ${this.expected(l)}</p>` : nothing}
              <p><strong>${msg('What to notice:', { id: 'tour.notice' })}</strong> ${l.notice(text)}</p>`}
      </section>`;
    })}`;
  }

  render() {
    document.title = msg('Transformer Playground · a link for your class', { id: 'teacher.page-title' });
    const lang = currentLang();
    return html`<div class="screen">
        <section class="card">
          <div class="top">
            <h1>${msg('A link for your class', { id: 'teacher.title' })}</h1>
            <label
              >${msg('Language', { id: 'teacher.ui-lang' })}
              <select data-teacher="ui-lang" @change=${(e: Event) => void this.switchLang((parseLang((e.target as HTMLSelectElement).value) ?? 'en') as Lang)}>
                <option value="en" ?selected=${lang === 'en'} lang="en">English</option>
                <option value="zh-Hans" ?selected=${lang === 'zh-Hans'} lang="zh-Hans">简体中文</option>
              </select></label
            >
          </div>
          <p class="muted">
            ${msg('Pick the lessons, say what your students may change, and hand out the link or the QR code. At the end, read their completion codes into a class table.', { id: 'teacher.intro2' })}
          </p>
          ${this.lessonPicker()} ${this.classFields()} ${this.settingsGroups()}
        </section>
        ${this.linkOut()} ${this.codes()}
        <section class="card" aria-labelledby="key-title" data-teacher="key">
          <div class="top">
            <h2 id="key-title">${msg('Answer key', { id: 'teacher.key' })}</h2>
            <span>
              <button data-measure ?disabled=${this.measuring} @click=${() => void this.measure()}>${msg('Measure the answers on the model', { id: 'teacher.measure' })}</button>
              <button data-print @click=${() => window.print()}>${msg('Print the worksheet', { id: 'teacher.print' })}</button>
            </span>
          </div>
          ${this.measuring ? html`<p class="muted" role="status" data-measuring>${msg('Running each lesson on the model…', { id: 'teacher.measuring' })}</p>` : nothing}
          <div class="measure" data-measure-host inert aria-hidden="true"></div>
          <div class="key">${this.key(false)}</div>
        </section>
      </div>
      <div class="worksheet" data-worksheet>
        <h1>${msg('Worksheet', { id: 'teacher.ws' })} · <code>${assignmentLabel(this.assignment.id)}</code></h1>
        <p>${msg('Name or seat:', { id: 'teacher.ws-name' })} <span class="blank"></span></p>
        ${this.key(true)}
      </div>`;
  }
}

customElements.define('tp-teacher', TpTeacher);
