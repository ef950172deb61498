// The lab: train any variant of the transformer in the page and compare the runs. A form
// with every switch of a run (each saying what it does, and why it does not apply to the
// chosen task where it does not), presets for the classic experiments, live plots of every
// run's curves overlaid (legend: how the runs' settings differ), a table of the runs, the
// buttons that drive a run, and import and export of checkpoints.
//
// The view is a client of the element's scripting API (www/README.md, "The lab"): it
// trains with `el.train`, reads `el.runs`, and listens for `tp-runs-changed`. The task
// defaults and the notes about each field come from the engine (`runDefaults`). This
// module and uPlot are loaded when the lab first comes into view.
//
// This file holds the lab's state, its wiring to the page's element and its actions; what
// it draws is in ../lab-view/: the form (settings-form.ts), the plots (plots.ts), the
// table of runs (run-table.ts), and their styles (lab-styles.ts).

import { html, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import type { ModelInfo } from '../engine/protocol';
import type { RunDefaults, RunHandle, RunRecord, RunSettings } from '../lab-view/host';
import { differenceLabels, type LabelledSettings } from '../lab-view/labels';
import { PRESETS, presetOfLink, setField, tidy, type FieldKey, type Settings, type Value } from '../lab-view/fields';
import { runColor, type Theme } from '../lab-view/colors';
import '../lab-view/tp-lab-plot';
import { labStyles } from '../lab-view/lab-styles';
import { runPlots } from '../lab-view/plots';
import { backendDetail, backendText } from '../lab-view/run-text';
import { alarmCause, alarmFix, alarmWhat } from '../lab/health';
import { PreflightRefusal } from '../lab/preflight';
import { runTable, type BusyAction, type RunTableActions } from '../lab-view/run-table';
import { settingsForm, usedBox, type UsedModel } from '../lab-view/settings-form';
import { lockedNote, whyLocked } from '../ui/locked';
import { panel } from '../ui/shared';
import { download } from '../ui/export';
import { keepLabViewState, keepLabText, labText, labViewState } from '../lab-view/view-state';
import { readTextFile, textBox, textProblem, textRunBox } from '../lab-view/text-input';

export { MAX_LINE_POINTS, noamLr, series } from '../lab-view/plots';
export { backendText } from '../lab-view/run-text';

/** What the lab needs of the page's element (its scripting API). */
interface LabHost extends HTMLElement {
  readonly ready: Promise<void>;
  train(settings: Partial<RunSettings>): RunHandle;
  runDefaults(task: string): Promise<RunDefaults>;
  runQuery(settings: RunSettings, base?: RunSettings): string;
  parseRunQuery(text: string): { settings: Partial<RunSettings>; notes: string[] };
  linkTo(view: string): string;
  readonly store: { patch(p: { train: string }): unknown; readonly st?: { readonly chrome?: string } } | null;
  /** Settles once the runs kept from earlier visits are back. */
  readonly runsRestored?: Promise<void>;
  /** The runs' controls by id (runs kept from an earlier visit, or started by a script). */
  readonly lab?: { pause(id: string): Promise<void>; resume(id: string): Promise<void>; stop(id: string): Promise<void>; stepOnce(id: string): Promise<void> } | null;
  readonly runs: RunRecord[];
  useRun(id: string): Promise<ModelInfo>;
  exportRun(id: string): Promise<Blob>;
  exportRunCsv(id: string): Blob;
  loadCheckpoint(bytes: Uint8Array | ArrayBuffer): Promise<ModelInfo>;
  renameRun(id: string, name: string): void | Promise<void>;
  hideRun(id: string, hidden: boolean): void | Promise<void>;
  deleteRun(id: string): void | Promise<void>;
}

/** The least time between two redraws of the plots and the table while runs train. */
const REDRAW_MS = 150;

export class TpLab extends LocalizedElement {
  static properties = {
    themeKey: { attribute: false },
    link: { attribute: false },
    lock: { attribute: false },
  };

  /** Classroom mode: the settings the link locked. With `train` locked the form holds the link's run and cannot be edited; with `model` locked no other weights may become the page's model. */
  lock: readonly string[] = [];
  private get formLocked(): string {
    return whyLocked(this.lock, 'train');
  }

  /** A run's settings from the page's link (`#train=…`): the form starts from them. */
  link = '';
  private appliedLink = '';
  /** What the link's settings had that was refused, one sentence each. */
  linkNotes: string[] = [];

  /**
   * Shown alone (`chrome=none`) with a run's settings in the link (`train=…`, what the embed
   * of the lab carries) and no run with steps kept in this browser, that run trains on load,
   * so the picture has curves without a click: 'waiting' until it is decided, 'started' once it is.
   */
  private autoTrain: 'no' | 'waiting' | 'started' = 'no';

  /** Whether the picture (the plots) is drawn: a shown run has steps, or none is about to start. */
  get pictureDrawn(): boolean {
    if (this.runs.some((r) => !r.hidden && r.log.length > 0)) return true;
    return this.autoTrain === 'no' && this.defaults !== null;
  }

  /** The form's settings as a lab link (`train=…` text), or '' before the defaults are read. */
  get formLink(): string {
    return this.host && this.form && this.defaults ? this.host.runQuery(this.form as unknown as RunSettings, this.defaults.settings) : '';
  }

  /** The page's colour setting; the plots are redrawn in the new palette when it changes. */
  themeKey = '';

  /** The settings the form shows. */
  form: Settings | null = null;
  /** The engine's defaults and notes for the form's task. */
  defaults: RunDefaults | null = null;
  /** The text a run of task text learns (kept apart from the form: it never goes in a link). */
  text = labText();
  /** What the last text upload said ('' when nothing). */
  private textNote = '';
  /** The runs, as the element last reported them. */
  runs: RunRecord[] = [];
  /** The run the buttons act on. */
  selected: string | null = null;
  /** Run handles of the runs started from this page. */
  private handles = new Map<string, RunHandle>();
  /** The run (or file) the page's model came from, with its settings. */
  used: UsedModel | null = null;
  /** A message about the last action (role=status), and the last failure (role=alert). */
  said = '';
  error = '';
  /** The smaller settings a refused run would fit with (the pre-flight's offer), and the run's name. */
  private offer: { settings: Settings; name?: string; batch: number } | null = null;
  /** The run whose settings the form was filled from ("train again with one change"). */
  from: string | null = null;
  /** The preset chosen in the experiments list. */
  preset = PRESETS[0].id;
  /** Runs whose pause, resume, stop or single step is under way. */
  private busy = new Map<string, BusyAction>();
  /** The run being renamed. */
  renaming: string | null = null;
  /** The dark palette is in use (read from the page's colours). */
  private dark = false;
  private media: MediaQueryList | null = null;
  private frame = 0;
  private host_: LabHost | null = null;

  private onRuns = () => this.refresh();
  private onScheme = () => this.requestUpdate();

  static styles = [panel, labStyles];

  // ---------------------------------------------------------------- wiring

  /** The page's element: the shadow root this view is drawn in belongs to it. */
  private get host(): LabHost | null {
    if (this.host_) return this.host_;
    const root = this.getRootNode();
    const h = root instanceof ShadowRoot ? (root.host as LabHost) : null;
    this.host_ = h && typeof h.train === 'function' ? h : null;
    return this.host_;
  }

  connectedCallback(): void {
    super.connectedCallback();
    this.host_ = null;
    this.host?.addEventListener('tp-runs-changed', this.onRuns);
    this.media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
    this.media?.addEventListener('change', this.onScheme);
    this.refresh();
    // Drawn again after being left (its chapter closed): the form and the selection as
    // they were, unless the page's link now asks for other settings.
    // A locked form starts from the link's run, never from what an earlier visit left in it.
    const kept = this.form || this.formLocked ? null : labViewState();
    if (kept?.form) {
      this.selected = kept.selected;
      this.preset = PRESETS.some((p) => p.id === kept.preset) ? kept.preset : this.preset;
      this.from = kept.from;
      if (this.link === kept.appliedLink) this.appliedLink = kept.appliedLink;
      const form = kept.form;
      void this.host?.ready.then(() => (this.form ? undefined : this.loadDefaults(String(form.task), form as unknown as Record<string, unknown>)));
    } else if (!this.form) void this.host?.ready.then(() => (this.form || this.link ? undefined : this.loadDefaults('reverse')));
  }

  /** Fill the form from a link's settings over its task's defaults; say what was refused. */
  private async applyLink(text: string) {
    const host = this.host;
    if (!host) return;
    await host.ready;
    const { settings, notes } = host.parseRunQuery(text);
    this.linkNotes = notes;
    this.from = null;
    // A link to one run of an experiment opens the lab with that experiment chosen.
    const p = presetOfLink(settings as Record<string, unknown>);
    if (p) this.preset = p.id;
    await this.loadDefaults(settings.task ?? 'reverse', settings as Record<string, unknown>);
    this.said = msg('The form holds the settings of the link: press Train to train them.');
    this.requestUpdate();
    if (this.autoTrain === 'waiting') {
      await host.runsRestored;
      const kept = host.runs.some((r) => !r.hidden && r.log.length > 0);
      if (!kept && this.form && !this.formLocked) {
        this.start(this.form);
        this.autoTrain = 'started';
      } else this.autoTrain = 'no';
      this.requestUpdate();
    }
  }

  /** A link to the lab with the form's settings, copied (or shown when there is no clipboard). */
  private async copyLink() {
    const host = this.host;
    if (!host || !this.form || !this.defaults) return;
    const q = host.runQuery(this.form as unknown as RunSettings, this.defaults.settings);
    this.appliedLink = q;
    host.store?.patch({ train: q });
    const link = host.linkTo('lab');
    try {
      await navigator.clipboard.writeText(link);
      this.said = msg('A link to these settings is copied: whoever opens it finds them in this form.');
    } catch {
      this.said = msg(str`A link to these settings: ${link}`);
    }
    this.requestUpdate();
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    this.host?.removeEventListener('tp-runs-changed', this.onRuns);
    this.media?.removeEventListener('change', this.onScheme);
    clearTimeout(this.frame);
    this.frame = 0;
  }

  /**
   * Read the runs again: at the next frame, and at most every REDRAW_MS while runs report
   * progress (each chunk of training does), so drawing never crowds out input or training.
   */
  private refresh() {
    if (this.frame) return;
    const wait = Math.max(0, this.lastRefresh + this.redrawGap - performance.now());
    this.frame = window.setTimeout(() => requestAnimationFrame(() => this.redraw()), wait);
  }

  private lastRefresh = -Infinity;
  /** The time between redraws: REDRAW_MS, or five times what the last redraw took (at most a second). */
  private redrawGap = REDRAW_MS;

  private redraw() {
    this.frame = 0;
    this.lastRefresh = performance.now();
    this.runs = [...(this.host?.runs ?? [])];
    if (this.selected && !this.runs.some((r) => r.id === this.selected)) this.selected = null;
    if (!this.selected && this.runs.length) this.selected = this.runs[this.runs.length - 1].id;
    this.requestUpdate();
    // What the redraw costs (the plots draw in their own updates), so that drawing keeps
    // to about a fifth of the page's time however long the runs grow.
    const t0 = performance.now();
    void this.updateComplete
      .then(() => Promise.all([...this.renderRoot.querySelectorAll<LocalizedElement>('tp-lab-plot')].map((p) => p.updateComplete)))
      .then(() => {
        this.redrawGap = Math.min(1000, Math.max(REDRAW_MS, 5 * (performance.now() - t0)));
      });
  }

  protected willUpdate(): void {
    if (this.link && this.link !== this.appliedLink) {
      this.appliedLink = this.link;
      if (this.autoTrain === 'no' && this.host?.store?.st?.chrome === 'none' && !this.handles.size) this.autoTrain = 'waiting';
      void this.applyLink(this.link);
    }
    // The palette in use, for the canvas colours (CSS variables do not reach a canvas).
    const bg = getComputedStyle(this).getPropertyValue('--tp-bg').trim();
    this.dark = bg !== '' && isDark(bg);
  }

  private get theme(): Theme {
    return this.dark ? 'dark' : 'light';
  }

  /** The task's defaults from the engine; the form starts from them. */
  private async loadDefaults(task: string, keep?: Record<string, unknown>) {
    if (!this.host) return;
    try {
      const d = await this.host.runDefaults(task);
      this.defaults = d;
      const { text, ...form } = { ...(d.settings as unknown as Settings), ...(keep ?? {}) };
      // A run's text goes to the text box (a run of task text trained again keeps its text).
      if (typeof text === 'string') this.setText(text);
      this.form = tidy(form as Settings);
      this.error = '';
    } catch (e) {
      this.error = msg(str`Could not read the defaults of the task ${task}: ${message(e)}`);
    }
    this.requestUpdate();
  }

  // ---------------------------------------------------------------- actions

  private selectedRun(): RunRecord | undefined {
    return this.runs.find((r) => r.id === this.selected);
  }

  private start(settings: Settings, name?: string) {
    const host = this.host;
    if (!host) return;
    if (settings.task === 'text') {
      // The text comes from its box, checked here so that the reason is in the page's language.
      const problem = textProblem(this.text);
      if (problem) {
        this.said = '';
        this.fail(msg(str`The run could not start: ${problem}`));
        return;
      }
      settings = { ...settings, text: this.text };
    }
    try {
      const h = host.train(settings as Partial<RunSettings>);
      this.handles.set(h.id, h);
      this.selected = h.id;
      h.addEventListener('progress', this.onRuns);
      this.offer = null;
      // A run that never started says why once ("could not start"), not again as a run that stopped.
      let began = false;
      const started: Promise<unknown> = h.started;
      started.then(
        () => {
          began = true;
        },
        (e: unknown) => {
          if (e instanceof PreflightRefusal && e.offer?.batch !== undefined) this.offer = { settings: { ...settings, ...e.offer } as Settings, name, batch: e.offer.batch };
          this.said = '';
          this.fail(msg(str`The run could not start: ${message(e)}`));
        },
      );
      h.done.then(
        () => this.refresh(),
        (e: unknown) => {
          if (!began) return;
          this.error = msg(str`The run stopped with an error: ${message(e)}`);
          this.refresh();
        },
      );
      if (name) void host.renameRun(h.id, name);
      this.said = msg('Training started.');
      this.error = '';
    } catch (e) {
      this.error = msg(str`Could not start the run: ${message(e)}`);
    }
    this.refresh();
  }

  /** Train the form's settings as a new run. */
  private trainForm() {
    const form = this.renderRoot.querySelector<HTMLFormElement>('form.settings');
    if (form && !form.reportValidity()) {
      this.error = msg('Some settings are out of range: the marked field says which.');
      this.requestUpdate();
      return;
    }
    if (!this.form) return;
    this.from = null;
    this.start(this.form);
  }

  /** Train every run of a preset, each from the task's defaults with its one change. */
  private async trainPreset() {
    const p = PRESETS.find((x) => x.id === this.preset);
    if (!p || !this.host) return;
    try {
      const d = await this.host.runDefaults(p.task);
      for (const change of p.runs) this.start(tidy({ ...(d.settings as unknown as Settings), ...change }));
    } catch (e) {
      this.error = msg(str`Could not start the experiment: ${message(e)}`);
      this.requestUpdate();
    }
  }

  private handle(): RunHandle | undefined {
    return this.selected ? this.handles.get(this.selected) : undefined;
  }

  /** Whether the buttons can drive the selected run (a handle of ours, or the element's lab). */
  private canDrive(): boolean {
    return !!this.handle() || !!this.host?.lab;
  }

  private act(what: 'pause' | 'resume' | 'stop' | 'stepOnce') {
    const id = this.selected;
    if (!id) return;
    const h = this.handle();
    const lab = this.host?.lab;
    try {
      const r = (h ? h[what]() : lab ? lab[what](id) : undefined) as unknown;
      if (r instanceof Promise) {
        // Until the chunk in flight is in, the run is "pausing", "stopping" or "stepping".
        this.busy.set(id, what);
        r.catch((e: unknown) => this.fail(e)).finally(() => {
          this.busy.delete(id);
          this.refresh();
        });
      }
    } catch (e) {
      this.fail(e);
    }
    this.refresh();
  }

  private fail(e: unknown) {
    this.error = message(e);
    this.requestUpdate();
  }

  private againWith(r: RunRecord) {
    if (this.formLocked) {
      this.said = this.formLocked;
      this.requestUpdate();
      return;
    }
    const { text, ...form } = r.settings as unknown as Settings;
    if (typeof text === 'string') this.setText(text);
    this.form = tidy(form as Settings);
    this.from = r.id;
    this.said = '';
    void this.loadDefaults(String(r.settings.task), r.settings as unknown as Record<string, unknown>);
    this.updateComplete.then(() => this.renderRoot.querySelector('form.settings')?.scrollIntoView({ block: 'start' }));
  }

  private async use(r: RunRecord, label: string) {
    try {
      const info = await this.host!.useRun(r.id);
      this.used = { what: `the run ${r.name} (${label})`, settings: tidy(r.settings as unknown as Settings), info };
      this.said = msg(str`The page's model is now ${r.name}: every other view shows it.`);
      this.error = '';
    } catch (e) {
      this.error = msg(str`Could not use the run: ${message(e)}`);
    }
    this.requestUpdate();
  }

  private async exportRun(r: RunRecord) {
    try {
      download(await this.host!.exportRun(r.id), `${fileName(r.name)}.safetensors`);
    } catch (e) {
      this.fail(msg(str`Could not export the run: ${message(e)}`));
    }
  }

  private exportCsv(r: RunRecord) {
    try {
      download(this.host!.exportRunCsv(r.id), `${fileName(r.name)}.csv`);
    } catch (e) {
      this.fail(msg(str`Could not export the curves: ${message(e)}`));
    }
  }

  /** A checkpoint from a file: it becomes the page's model, or its loader says what is wrong. */
  private async importFile(file: File) {
    if (/\.txt$/i.test(file.name) || file.type === 'text/plain') return this.pickText(file);
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      const info = await this.host!.loadCheckpoint(bytes);
      this.used = { what: `the file ${file.name}`, settings: null, info };
      this.said = msg(str`Loaded ${file.name}: every other view shows it.`);
      this.error = '';
    } catch (e) {
      this.said = '';
      this.error = `${file.name} was not loaded: ${message(e)}`;
    }
    this.requestUpdate();
  }

  private onPick(e: Event) {
    const input = e.target as HTMLInputElement;
    const f = input.files?.[0];
    if (f) void this.importFile(f);
    input.value = '';
  }

  private dragging = false;
  private onDrag(e: DragEvent, over: boolean) {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    if (this.dragging !== over) {
      this.dragging = over;
      this.requestUpdate();
    }
  }
  private onDrop(e: DragEvent) {
    const f = e.dataTransfer?.files?.[0];
    if (!f) return;
    e.preventDefault();
    this.dragging = false;
    void this.importFile(f);
  }

  private async rename(r: RunRecord, input: HTMLInputElement) {
    const name = input.value.trim();
    this.renaming = null;
    if (name && name !== r.name) await this.host!.renameRun(r.id, name);
    this.refresh();
  }

  // ---------------------------------------------------------------- the text

  private setText(text: string) {
    this.text = text;
    keepLabText(text);
    this.requestUpdate();
  }

  /** A .txt file into the text box, or why it cannot be read (the box keeps what it had). */
  private async pickText(file: File) {
    const r = await readTextFile(file);
    if ('error' in r) {
      this.textNote = r.error;
    } else {
      this.textNote = msg(str`Read ${file.name}.`, { id: 'lab.text.read' });
      this.setText(r.text);
      if (this.form && this.form.task !== 'text' && !this.formLocked) void this.loadDefaults('text');
    }
    this.requestUpdate();
  }

  // ---------------------------------------------------------------- the form

  private edit(key: FieldKey, v: Value) {
    if (!this.form || this.formLocked) return;
    if (key === 'task' && typeof v === 'string') {
      this.from = null;
      void this.loadDefaults(v);
      return;
    }
    this.form = setField(this.form, key, v);
    this.requestUpdate();
  }

  // ---------------------------------------------------------------- the runs

  /** What the table's buttons do. */
  private tableActions: RunTableActions = {
    select: (id) => {
      this.selected = id;
      this.requestUpdate();
    },
    startRename: (r) => {
      this.renaming = r.id;
      this.requestUpdate();
      this.updateComplete.then(() => this.renderRoot.querySelector<HTMLInputElement>(`tr[data-run="${r.id}"] input[type="text"]`)?.focus());
    },
    rename: (r, input) => void this.rename(r, input),
    cancelRename: () => {
      this.renaming = null;
      this.requestUpdate();
    },
    hide: (r, hidden) => void this.host!.hideRun(r.id, hidden),
    remove: (r) => void this.host!.deleteRun(r.id),
    again: (r) => this.againWith(r),
    use: (r, label) => void this.use(r, label),
    exportRun: (r) => void this.exportRun(r),
    exportCsv: (r) => this.exportCsv(r),
    exportText: (r) => download(new Blob([r.settings.text ?? ''], { type: 'text/plain;charset=utf-8' }), `${fileName(r.name)}.txt`),
  };

  // ---------------------------------------------------------------- render

  render() {
    const all = this.runs;
    const shown = all.filter((r) => !r.hidden);
    const labels = differenceLabels(shown.map((r) => r.settings as unknown as LabelledSettings));
    const labelOf = new Map(shown.map((r, i) => [r.id, labels[i]]));
    const colorOf = new Map(all.map((r, i) => [r.id, runColor(i, this.theme)]));
    const sel = this.selectedRun();
    const status = sel?.status;
    const live = this.canDrive() && (status === 'running' || status === 'paused') && !(sel && this.busy.has(sel.id));
    const p = PRESETS.find((x) => x.id === this.preset) ?? PRESETS[0];
    return html`<section
      class="card lab ${this.dragging ? 'drop' : ''}"
      aria-labelledby="lab-h"
      @dragover=${(e: DragEvent) => this.onDrag(e, true)}
      @dragleave=${(e: DragEvent) => this.onDrag(e, false)}
      @drop=${(e: DragEvent) => this.onDrop(e)}
    >
      <h2 id="lab-h">${msg('The lab')} <span class="sub">${msg('train your own variant in this page and compare the runs')}</span></h2>
      <div class="experiments" data-experiments>
        <label for="preset">${msg('Experiment')}</label>
        <select
          id="preset"
          ?disabled=${!!this.formLocked}
          @change=${(e: Event) => {
            this.preset = (e.target as HTMLSelectElement).value;
            this.requestUpdate();
          }}
        >
          ${PRESETS.map((x) => html`<option value=${x.id} ?selected=${x.id === this.preset}>${x.title}</option>`)}
        </select>
        <button class="primary" data-action="train-preset" @click=${() => void this.trainPreset()} ?disabled=${!this.host || !!this.formLocked}>${msg(str`Train these ${p.runs.length} runs`)}</button>${lockedNote('train', this.formLocked)}
        <p>${p.about}</p>
      </div>
      ${settingsForm({
        form: this.form,
        defaults: this.defaults,
        from: this.from ? this.runs.find((r) => r.id === this.from) : undefined,
        linkNotes: this.linkNotes,
        locked: this.formLocked,
        edit: (key, v) => this.edit(key, v),
      })}
      ${this.form?.task === 'text'
        ? textBox({ text: this.text, note: this.textNote, locked: !!this.formLocked, setText: (t) => this.setText(t), pick: (f) => void this.pickText(f) })
        : nothing}
      <div class="actions" role="group" aria-label=${msg('training controls')}>
        <button class="primary" data-action="train" @click=${() => this.trainForm()} ?disabled=${!this.form}>${msg('Train')}</button>
        <button data-action="pause" @click=${() => this.act('pause')} ?disabled=${!live || status !== 'running'}>${msg('Pause')}</button>
        <button data-action="resume" @click=${() => this.act('resume')} ?disabled=${!live || status !== 'paused'}>${msg('Resume')}</button>
        <button data-action="step" @click=${() => this.act('stepOnce')} ?disabled=${!live}>${msg('Step once')}</button>
        <button data-action="stop" @click=${() => this.act('stop')} ?disabled=${!live}>${msg('Stop')}</button>
        <span class="muted small">${sel ? html`${msg('acting on')} <strong>${sel.name}</strong>` : nothing}</span>
        ${sel && sel.backend && (status === 'running' || status === 'paused')
          ? html`<span class="muted small" data-live-backend=${sel.backend.kind} title=${backendDetail(sel.backend)}>${msg(str`runs on: ${backendText(sel.backend)}`)}</span>`
          : nothing}
        <button data-action="link" @click=${() => void this.copyLink()} ?disabled=${!this.form || !this.defaults}>${msg('Copy a link to these settings')}</button>
        <span class="grow"></span>
        <label class="dropzone"
          >${msg('Import a .safetensors checkpoint (or drop one here)')}
          <input type="file" accept=".safetensors,application/octet-stream" data-import ?disabled=${!!whyLocked(this.lock, 'model')} @change=${(e: Event) => this.onPick(e)} />
          ${lockedNote('model', whyLocked(this.lock, 'model'))}
        </label>
      </div>
      ${this.error
        ? html`<div class="alert" role="alert" data-error>
            ${this.error}
            ${this.offer
              ? html`<button type="button" data-offer=${this.offer.batch} @click=${() => {
                  const o = this.offer!;
                  this.offer = null;
                  this.start(o.settings, o.name);
                }}>${msg(str`Train with a batch of ${this.offer.batch}`, { id: 'preflight.offer-button' })}</button>`
              : nothing}
          </div>`
        : nothing}
      ${healthList(sel)} ${textRunBox(sel)}
      <div class="said" role="status">${this.said}</div>
      ${usedBox(this.used)}
      ${runPlots(shown, labels, shown.map((r) => colorOf.get(r.id)!), this.theme, this.themeKey)}
      ${runTable(all, labelOf, colorOf, { selected: this.selected, renaming: this.renaming, busy: this.busy }, this.tableActions)}
    </section>`;
  }

  protected updated(): void {
    // The table's colour swatches, through the CSSOM (the page's policy refuses style attributes).
    for (const el of this.renderRoot.querySelectorAll<HTMLElement>('.swatch[data-color]')) el.style.background = el.dataset.color ?? '';
    // What the panel holds, kept for when it is drawn again after being left.
    if (this.form) keepLabViewState({ form: this.form, selected: this.selected, preset: this.preset, from: this.from, appliedLink: this.appliedLink });
  }
}

/** What the health watch saw in the selected run: each alarm with its likely cause and a fix to try. */
function healthList(r: RunRecord | undefined) {
  const alarms = r?.alarms ?? [];
  if (!r || !alarms.length) return nothing;
  return html`<section class="health" data-health aria-label=${msg('training health', { id: 'health.heading' })}>
    <h3>${msg(str`Training health of ${r.name}`, { id: 'health.title' })}</h3>
    <ul>
      ${alarms.map(
        (a) =>
          html`<li class=${a.stopped ? 'stopped' : 'warning'} data-alarm=${a.kind} data-step=${a.step} data-layer=${a.layer ?? ''} data-op=${a.op ?? ''}>
            ${alarmWhat(a)} ${alarmCause(a)} ${alarmFix(a, r.settings)}
          </li>`,
      )}
    </ul>
  </section>`;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function fileName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '') || 'run';
}

/** A background colour that reads as dark (luminance below one half). */
function isDark(color: string): boolean {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  if (!m) return false;
  const [r, g, b] = [m[1], m[2], m[3]].map((x) => parseInt(x, 16) / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5;
}

customElements.define('tp-lab', TpLab);
