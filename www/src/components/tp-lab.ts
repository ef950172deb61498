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

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { archName, notForTask, taskDescription } from '../i18n/terms';
import { backendReason } from '../i18n/engine-text';
import type { ModelInfo } from '../engine/protocol';
import type { RunBackend, RunDefaults, RunHandle, RunRecord, RunSettings } from '../lab-view/host';
import { LABEL_FIELDS, differenceLabels, differingFields, type LabelledSettings } from '../lab-view/labels';
import { FIELDS, GROUPS, PRESETS, fieldShown, getField, setField, tidy, type FieldDef, type FieldKey, type Settings, type Value } from '../lab-view/fields';
import { runColor, shade, type Theme } from '../lab-view/colors';
import '../lab-view/tp-lab-plot';
import type { Line } from '../lab-view/tp-lab-plot';
import { panel } from '../ui/shared';
import { download } from '../ui/export';

/** What the lab needs of the page's element (its scripting API). */
interface LabHost extends HTMLElement {
  readonly ready: Promise<void>;
  train(settings: Partial<RunSettings>): RunHandle;
  runDefaults(task: string): Promise<RunDefaults>;
  runQuery(settings: RunSettings, base?: RunSettings): string;
  parseRunQuery(text: string): { settings: Partial<RunSettings>; notes: string[] };
  linkTo(view: string): string;
  readonly store: { patch(p: { train: string }): unknown } | null;
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

const METRIC_WORDS: Record<string, string> = {
  get exact_match() {
    return msg('exact match');
  },
  get token_accuracy() {
    return msg('token accuracy');
  },
  get class_accuracy() {
    return msg('class accuracy');
  },
  get grammatical() {
    return msg('grammatical sentences');
  },
};

const STATUS_WORDS: Record<string, string> = {
  get running() {
    return msg('training');
  },
  get paused() {
    return msg('paused');
  },
  get stopped() {
    return msg('stopped');
  },
  get done() {
    return msg('done');
  },
  get failed() {
    return msg('failed');
  },
};

/** The least time between two redraws of the plots and the table while runs train. */
const REDRAW_MS = 150;

const BUSY_WORDS: Record<string, string> = {
  get pause() {
    return msg('pausing…');
  },
  get resume() {
    return msg('resuming…');
  },
  get stop() {
    return msg('stopping…');
  },
  get stepOnce() {
    return msg('taking one step…');
  },
};

/**
 * The most points one line of a plot keeps. A longer curve is cut into buckets of
 * consecutive steps, each keeping its first, lowest, highest and last point: spikes stay
 * visible, the last step is always drawn, and drawing (and the memory the plots hold)
 * stays the same however long a run grows — a plot is a few hundred pixels wide.
 */
export const MAX_LINE_POINTS = 1200;

/**
 * A curve of `n` rows as plot points [x(i), y(i)], thinned to at most MAX_LINE_POINTS.
 * Rows are read by index (a run's curves are columns, lab/points.ts), so drawing
 * allocates only the points it keeps.
 */
export function series(n: number, x: (i: number) => number, y: (i: number) => number | null): [number, number | null][] {
  if (n <= MAX_LINE_POINTS) return Array.from({ length: n }, (_, i) => [x(i), y(i)]);
  const buckets = Math.floor(MAX_LINE_POINTS / 4);
  const out: [number, number | null][] = [];
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor((b * n) / buckets);
    const hi = Math.floor(((b + 1) * n) / buckets);
    let iMin = lo;
    let iMax = lo;
    let vMin = Infinity;
    let vMax = -Infinity;
    for (let i = lo; i < hi; i++) {
      const v = y(i);
      if (v === null || !Number.isFinite(v)) continue;
      if (v < vMin) [vMin, iMin] = [v, i];
      if (v > vMax) [vMax, iMax] = [v, i];
    }
    for (const i of [...new Set([lo, iMin, iMax, hi - 1])].sort((a, c) => a - c)) out.push([x(i), y(i)]);
  }
  return out;
}

/** A number for the table: four significant digits, '–' for none. */
function n4(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** The Noam rate of step `step` (the core's `train::schedule::noam_lr`: steps count from 1). */
export function noamLr(step: number, dModel: number, warmup: number, factor: number): number {
  const s = Math.max(1, step);
  const w = Math.max(1, warmup);
  return factor * dModel ** -0.5 * Math.min(s ** -0.5, s * w ** -1.5);
}

/** Where a run's steps run, in a few words: "WebGPU", or "CPU: why". */
export function backendText(b: RunBackend | null): string {
  if (!b) return '–';
  switch (b.kind) {
    case 'webgpu':
      return 'WebGPU';
    case 'cpu_chosen':
      return msg('CPU: chosen in the settings');
    case 'cpu_no_gpu':
      return msg('CPU: WebGPU not available');
    case 'cpu_refused':
      return msg(str`CPU: ${b.detail}`);
    case 'cpu_lost':
      return /lost/i.test(b.detail) ? msg(str`CPU: the GPU device was lost at step ${b.step}`) : msg(str`CPU: the GPU failed at step ${b.step}`);
    default:
      // The statuses of the playground's engine (a run's steps never take these).
      return backendReason(b);
  }
}

/** The longer story of a run's backend (the cell's title): the adapter, or what happened. */
function backendDetail(b: RunBackend | null): string {
  if (!b) return '';
  switch (b.kind) {
    case 'webgpu':
      return b.adapter;
    case 'cpu_chosen':
      return '';
    case 'cpu_no_gpu':
    case 'cpu_refused':
      return b.detail;
    case 'cpu_lost':
      return msg(str`${b.detail}; the run went on on the CPU from step ${b.from}, the last step copied back from the GPU`);
    default:
      return '';
  }
}

/** A value of a setting in words, for the "in use" summary. */
function valueText(f: FieldDef, v: Value): string {
  if (v === null) return f.control.kind === 'number' && f.control.nullable ? f.control.nullable() : f.control.kind === 'select' ? (f.control.options.find(([k]) => k === '')?.[1] ?? '–') : '–';
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  if (f.control.kind === 'select') return f.control.options.find(([k]) => k === String(v))?.[1] ?? String(v);
  return String(v);
}

export class TpLab extends LocalizedElement {
  static properties = {
    themeKey: { attribute: false },
    link: { attribute: false },
  };

  /** A run's settings from the page's link (`#train=…`): the form starts from them. */
  link = '';
  private appliedLink = '';
  /** What the link's settings had that was refused, one sentence each. */
  linkNotes: string[] = [];

  /** The page's colour setting; the plots are redrawn in the new palette when it changes. */
  themeKey = '';

  /** The settings the form shows. */
  form: Settings | null = null;
  /** The engine's defaults and notes for the form's task. */
  defaults: RunDefaults | null = null;
  /** The runs, as the element last reported them. */
  runs: RunRecord[] = [];
  /** The run the buttons act on. */
  selected: string | null = null;
  /** Run handles of the runs started from this page. */
  private handles = new Map<string, RunHandle>();
  /** The run (or file) the page's model came from, with its settings. */
  used: { what: string; settings: Settings | null; info: ModelInfo } | null = null;
  /** A message about the last action (role=status), and the last failure (role=alert). */
  said = '';
  error = '';
  /** The run whose settings the form was filled from ("train again with one change"). */
  from: string | null = null;
  /** The preset chosen in the experiments list. */
  preset = PRESETS[0].id;
  /** Runs whose pause, resume, stop or single step is under way. */
  private busy = new Map<string, 'pause' | 'resume' | 'stop' | 'stepOnce'>();
  /** The run being renamed. */
  renaming: string | null = null;
  /** The dark palette is in use (read from the page's colours). */
  private dark = false;
  private media: MediaQueryList | null = null;
  private frame = 0;
  private host_: LabHost | null = null;

  private onRuns = () => this.refresh();
  private onScheme = () => this.requestUpdate();

  static styles = [
    panel,
    css`
      .lab {
        display: grid;
        gap: 12px;
      }
      .lab.drop {
        outline: 3px dashed var(--tp-accent);
        outline-offset: 4px;
      }
      h2 .sub {
        font-weight: normal;
      }
      .intro {
        margin: 0 0 8px;
        font-size: 0.86rem;
      }
      .groups {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(300px, 1fr));
        gap: 10px;
      }
      fieldset {
        border: 1px solid var(--tp-line);
        border-radius: 8px;
        margin: 0;
        padding: 6px 10px 8px;
        min-width: 0;
      }
      legend {
        font-weight: 600;
        font-size: 0.85rem;
        padding: 0 4px;
      }
      .field {
        display: grid;
        grid-template-columns: minmax(8.5em, auto) minmax(0, 1fr);
        gap: 2px 8px;
        align-items: center;
        margin: 6px 0;
        font-size: 0.85rem;
      }
      .field .help,
      .field .note {
        grid-column: 1 / -1;
        font-size: 0.76rem;
        color: var(--tp-muted);
        margin: 0;
      }
      .field .note {
        color: var(--tp-warn);
      }
      .field.off label {
        color: var(--tp-muted);
      }
      .field input[type='number'],
      .field select {
        width: 100%;
        min-width: 0;
        box-sizing: border-box;
      }
      .field input[type='checkbox'] {
        justify-self: start;
      }
      .field .nullable {
        display: flex;
        gap: 6px;
        align-items: center;
      }
      .actions,
      .buttons {
        display: flex;
        flex-wrap: wrap;
        gap: 8px;
        align-items: center;
        font-size: 0.86rem;
      }
      .actions .grow {
        flex: 1;
      }
      button.primary {
        background: var(--tp-accent);
        border-color: var(--tp-accent);
        color: var(--tp-bg);
        font-weight: 600;
      }
      button:disabled {
        opacity: 0.5;
        cursor: default;
      }
      .experiments {
        display: flex;
        flex-wrap: wrap;
        gap: 8px;
        align-items: center;
        font-size: 0.86rem;
      }
      .experiments p {
        margin: 0;
        flex-basis: 100%;
        color: var(--tp-muted);
        font-size: 0.8rem;
      }
      .from {
        font-size: 0.82rem;
        color: var(--tp-accent);
        margin: 4px 0 0;
      }
      .plots {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(380px, 1fr));
        gap: 10px;
      }
      .table {
        overflow-x: auto;
      }
      table {
        border-collapse: collapse;
        width: 100%;
        font-size: 0.8rem;
      }
      th,
      td {
        border-bottom: 1px solid var(--tp-line);
        padding: 4px 6px;
        text-align: left;
        vertical-align: middle;
        white-space: nowrap;
      }
      td.num,
      th.num {
        text-align: right;
        font-variant-numeric: tabular-nums;
      }
      td.label {
        white-space: normal;
        min-width: 10em;
      }
      tr.hidden td {
        color: var(--tp-muted);
      }
      tr.selected {
        background: var(--tp-accent-soft);
      }
      td .row-actions {
        display: flex;
        flex-wrap: wrap;
        gap: 4px;
      }
      td button {
        padding: 1px 6px;
        font-size: 0.76rem;
      }
      .swatch {
        display: inline-block;
        width: 12px;
        height: 12px;
        border-radius: 3px;
        vertical-align: middle;
      }
      .status-failed {
        color: var(--tp-error);
      }
      .alert {
        border: 2px solid var(--tp-error);
        border-radius: 8px;
        padding: 6px 10px;
        font-size: 0.85rem;
      }
      .said {
        font-size: 0.85rem;
        color: var(--tp-muted);
        min-height: 1.2em;
      }
      .used dl {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(220px, 1fr));
        gap: 2px 14px;
        margin: 6px 0 0;
        font-size: 0.8rem;
      }
      .used dl div {
        display: flex;
        gap: 6px;
      }
      .used dt {
        color: var(--tp-muted);
      }
      .used dd {
        margin: 0;
      }
      .dropzone {
        border: 1px dashed var(--tp-line);
        border-radius: 8px;
        padding: 6px 10px;
        color: var(--tp-muted);
        font-size: 0.82rem;
      }
      input[type='file'] {
        font-size: 0.8rem;
      }
    `,
  ];

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
    if (!this.form) void this.host?.ready.then(() => (this.form || this.link ? undefined : this.loadDefaults('reverse')));
  }

  /** Fill the form from a link's settings over its task's defaults; say what was refused. */
  private async applyLink(text: string) {
    const host = this.host;
    if (!host) return;
    await host.ready;
    const { settings, notes } = host.parseRunQuery(text);
    this.linkNotes = notes;
    this.from = null;
    await this.loadDefaults(settings.task ?? 'reverse', settings as Record<string, unknown>);
    this.said = msg('The form holds the settings of the link: press Train to train them.');
    this.requestUpdate();
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
      this.said = 'A link to these settings is copied: whoever opens it finds them in this form.';
    } catch {
      this.said = `A link to these settings: ${link}`;
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
      this.form = tidy({ ...(d.settings as unknown as Settings), ...(keep ?? {}) });
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
    try {
      const h = host.train(settings as Partial<RunSettings>);
      this.handles.set(h.id, h);
      this.selected = h.id;
      h.addEventListener('progress', this.onRuns);
      (h as RunHandle & { started?: Promise<unknown> }).started?.catch((e: unknown) => this.fail(msg(str`The run could not start: ${message(e)}`)));
      h.done.then(
        () => this.refresh(),
        (e: unknown) => {
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
    this.form = tidy({ ...(r.settings as unknown as Settings) });
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

  // ---------------------------------------------------------------- the form

  private note(key: FieldKey): string {
    const d = this.defaults;
    if (!d) return '';
    const base = key.startsWith('lr.') ? 'lr' : key;
    return notForTask(d.not_for_task[key] ?? d.not_for_task[base] ?? '');
  }

  private edit(key: FieldKey, v: Value) {
    if (!this.form) return;
    if (key === 'task' && typeof v === 'string') {
      this.from = null;
      void this.loadDefaults(v);
      return;
    }
    this.form = setField(this.form, key, v);
    this.requestUpdate();
  }

  private control(f: FieldDef, off: boolean) {
    const v = getField(this.form!, f.key);
    const id = `f-${f.key.replace('.', '-')}`;
    const c = f.control;
    if (c.kind === 'select') {
      return html`<select
        id=${id}
        name=${f.key}
        ?disabled=${off}
        @change=${(e: Event) => {
          const s = (e.target as HTMLSelectElement).value;
          this.edit(f.key, s === '' ? null : s);
        }}
      >
        ${c.options.map(([k, t]) => html`<option value=${k} ?selected=${(v ?? '') === k}>${t}</option>`)}
      </select>`;
    }
    if (c.kind === 'bool') {
      return html`<input id=${id} name=${f.key} type="checkbox" ?disabled=${off} .checked=${v === true} @change=${(e: Event) => this.edit(f.key, (e.target as HTMLInputElement).checked)} />`;
    }
    const number = html`<input
      id=${id}
      name=${f.key}
      type="number"
      min=${c.min}
      max=${c.max}
      step=${c.step}
      required
      ?disabled=${off || (c.nullable !== undefined && v === null)}
      .value=${v === null ? '' : String(v)}
      @change=${(e: Event) => {
        const input = e.target as HTMLInputElement;
        const x = Number(input.value);
        const ok = input.value !== '' && Number.isFinite(x) && x >= c.min && x <= c.max && (!c.integer || Number.isInteger(x));
        input.setCustomValidity(ok ? '' : c.integer ? msg(str`${f.label}: a whole number from ${c.min} to ${c.max}`) : msg(str`${f.label}: a number from ${c.min} to ${c.max}`));
        if (ok) this.edit(f.key, x);
      }}
    />`;
    if (c.nullable === undefined) return number;
    return html`<span class="nullable"
      >${number}<label
        ><input
          type="checkbox"
          ?disabled=${off}
          .checked=${v === null}
          @change=${(e: Event) => this.edit(f.key, (e.target as HTMLInputElement).checked ? null : c.min === 1 ? 8 : c.min)}
        />${c.nullable()}</label
      ></span
    >`;
  }

  private field(f: FieldDef) {
    if (!this.form || !fieldShown(this.form, f.key)) return nothing;
    const note = this.note(f.key);
    const id = `f-${f.key.replace('.', '-')}`;
    return html`<div class="field ${note ? 'off' : ''}" data-field=${f.key}>
      <label for=${id}>${f.label}</label>
      ${this.control(f, note !== '' && f.key !== 'task')}
      <p class="help" id=${`${id}-help`}>${f.help}</p>
      ${note ? html`<p class="note" data-note=${f.key}>${msg('Not for this task:')} ${note}</p>` : nothing}
    </div>`;
  }

  private settingsForm() {
    if (!this.form) return html`<p class="muted small">${msg("Reading the task's defaults…")}</p>`;
    const from = this.from ? this.runs.find((r) => r.id === this.from) : undefined;
    return html`<form class="settings" @submit=${(e: Event) => e.preventDefault()} novalidate>
      ${this.defaults ? html`<p class="intro">${taskDescription(this.defaults.settings.task, this.defaults.description)}</p>` : nothing}
      <div class="groups">
        ${GROUPS.map(
          ([g, title]) => html`<fieldset data-group=${g}>
            <legend>${title}</legend>
            ${FIELDS.filter((f) => f.group === g).map((f) => this.field(f))}
          </fieldset>`,
        )}
      </div>
      ${this.linkNotes.length
        ? html`<div class="alert" role="status" data-link-notes>
            ${msg('Some settings of the link were not used:')}
            <ul>
              ${this.linkNotes.map((n) => html`<li>${n}</li>`)}
            </ul>
          </div>`
        : nothing}
      ${from ? html`<p class="from" data-from=${from.id}>${msg(str`These are the settings of ${from.name}: change one and press Train to compare.`)}</p>` : nothing}
    </form>`;
  }

  // ---------------------------------------------------------------- plots

  private lines(runs: readonly RunRecord[], labels: string[], colors: string[]) {
    const bg = this.dark ? '#1d2026' : '#ffffff';
    const loss: Line[] = [];
    const metric: Line[] = [];
    const lr: Line[] = [];
    const grad: Line[] = [];
    const resid: Line[] = [];
    const layerGrad: Line[] = [];
    let metricName = '';
    runs.forEach((r, i) => {
      const log = r.log;
      const n = log.length;
      const step = (k: number) => log.step(k);
      const c = colors[i];
      const label = labels[i];
      loss.push({ label: `${label} · training`, color: c, points: series(n, step, (k) => log.loss(k)) });
      const evals = log.evalRows();
      const ev = (k: number) => log.evalAt(evals[k])!;
      const evStep = (k: number) => log.step(evals[k]);
      loss.push({ label: `${label} · held-out`, color: c, dash: [6, 4], points: series(evals.length, evStep, (k) => ev(k).loss) });
      metric.push({ label, color: c, points: series(evals.length, evStep, (k) => 100 * ev(k).metric) });
      if (evals.length) metricName = ev(evals.length - 1).metric_name;
      lr.push({ label: `${label} · used`, color: c, points: series(n, step, (k) => log.lr(k)) });
      const s = r.settings as unknown as Settings;
      const sched = s.lr as { kind: string; factor?: number; warmup?: number; value?: number } | undefined;
      const steps = Number(s.steps ?? 0);
      if (sched && steps > 0) {
        const n = Math.min(steps, 240);
        const xs = Array.from({ length: n }, (_, k) => (n === 1 ? 1 : 1 + Math.round((k * (steps - 1)) / (n - 1))));
        const plan = (x: number) => (sched.kind === 'noam' ? noamLr(x, Number(s.d_model), Number(sched.warmup), Number(sched.factor)) : Number(sched.value));
        lr.push({ label: `${label} · planned`, color: shade(c, bg, 0.45), dash: [3, 3], width: 1.2, points: [...new Set(xs)].map((x) => [x, plan(x)]) });
      }
      if (n) lr.push({ label: `${label} · now`, color: c, dotsOnly: true, points: [[log.step(n - 1), log.lr(n - 1)]] });
      grad.push({ label, color: c, points: series(n, step, (k) => log.gradNorm(k)) });
      const at = n ? log.layersAt(n - 1) : { residual: 0, grad: 0 };
      const layers = at.residual;
      for (let l = 0; l < layers; l++) {
        const lc = layers === 1 ? c : shade(c, bg, 0.65 * (1 - l / (layers - 1)));
        resid.push({ label: `${label} L${l + 1}`, color: lc, points: series(n, step, (k) => log.residual(k, l)) });
      }
      const gl = at.grad;
      for (let l = 0; l < gl; l++) {
        const lc = gl === 1 ? c : shade(c, bg, 0.65 * (1 - l / (gl - 1)));
        layerGrad.push({ label: `${label} L${l + 1}`, color: lc, points: series(n, step, (k) => log.layerGrad(k, l)) });
      }
    });
    return { loss, metric, lr, grad, resid, layerGrad, metricName };
  }

  private plots(runs: readonly RunRecord[], labels: string[], colors: string[]) {
    const l = this.lines(runs, labels, colors);
    // A picture's caption: the runs by name and difference, and the settings they share.
    const all = runs.map((r) => r.settings as unknown as LabelledSettings);
    const differ = new Set(differingFields(all));
    const shared = all.length ? LABEL_FIELDS.filter((f) => !differ.has(f.key)).map((f) => f.words(all[0])).filter((w) => w !== undefined) : [];
    const caption = {
      model: runs.length ? `lab runs ${runs.map((r, i) => `${r.name} (${labels[i]})`).join(', ')}` : 'no runs',
      settings: shared.join(', '),
    };
    const t = `${this.theme}:${this.themeKey}`;
    const metric = METRIC_WORDS[l.metricName] ?? (l.metricName || msg('metric'));
    const empty = msg('Train a run to see its curves here.');
    // Runs with steps but no per-layer curves took them on WebGPU, whose step reports the loss, the rate and the global norm only.
    const perLayerEmpty = runs.some((r) => r.log.length) ? msg('The per-layer norms are measured on the CPU: steps taken on WebGPU have none.') : empty;
    return html`<div class="plots">
      <tp-lab-plot data-plot="loss" heading=${msg('Loss: training (solid) and held-out (dashed)')} .yLabel=${msg('cross-entropy, nats')} .lines=${l.loss} .themeKey=${t} .caption=${caption} .empty=${empty}></tp-lab-plot>
      <tp-lab-plot data-plot="metric" heading=${msg(str`Held-out ${metric}`)} .yLabel=${msg('percent')} .lines=${l.metric} .themeKey=${t} .caption=${caption} .empty=${empty}></tp-lab-plot>
      <tp-lab-plot data-plot="lr" heading=${msg('Learning rate: used (solid), planned (dotted), now (dot)')} .yLabel=${msg('learning rate')} .lines=${l.lr} .themeKey=${t} .caption=${caption} .empty=${empty}></tp-lab-plot>
      <tp-lab-plot data-plot="grad" heading=${msg('Gradient norm before clipping (log scale)')} .yLabel=${'‖g‖₂'} .yLog=${true} .lines=${l.grad} .themeKey=${t} .caption=${caption} .empty=${empty}></tp-lab-plot>
      <tp-lab-plot data-plot="residual" heading=${msg('Residual stream after each layer (lighter: earlier layer)')} .yLabel=${msg('mean ‖x‖₂ per token')} .lines=${l.resid} .themeKey=${t} .caption=${caption} .empty=${perLayerEmpty}></tp-lab-plot>
      <tp-lab-plot data-plot="layer-grad" heading=${msg("Gradient of each layer's weights (log scale; lighter: earlier layer)")} .yLabel=${'‖g‖₂'} .yLog=${true} .lines=${l.layerGrad} .themeKey=${t} .caption=${caption} .empty=${perLayerEmpty}></tp-lab-plot>
    </div>`;
  }

  // ---------------------------------------------------------------- the runs

  private table(runs: readonly RunRecord[], labelOf: Map<string, string>, colorOf: Map<string, string>) {
    if (!runs.length) return html`<p class="muted small">${msg('No runs yet: press Train, or pick an experiment.')}</p>`;
    return html`<div class="table">
      <table>
        <caption class="visually-hidden">
          ${msg('The runs, with their final numbers')}
        </caption>
        <thead>
          <tr>
            <th scope="col">${msg('act on')}</th>
            <th scope="col">${msg('run')}</th>
            <th scope="col">${msg('differs by')}</th>
            <th scope="col">${msg('status')}</th>
            <th scope="col" class="num">${msg('step')}</th>
            <th scope="col" class="num">${msg('training loss')}</th>
            <th scope="col" class="num">${msg('held-out loss')}</th>
            <th scope="col" class="num">${msg('held-out metric')}</th>
            <th scope="col" class="num">${msg('time')}</th>
            <th scope="col" class="num">${msg('steps/s')}</th>
            <th scope="col">${msg('runs on')}</th>
            <th scope="col">${msg('actions')}</th>
          </tr>
        </thead>
        <tbody>
          ${runs.map((r) => {
            const last = r.log.length ? r.log.at(r.log.length - 1) : undefined;
            const ev = r.log.lastEval();
            const label = labelOf.get(r.id) ?? '';
            return html`<tr class="${r.hidden ? 'hidden' : ''} ${r.id === this.selected ? 'selected' : ''}" data-run=${r.id} data-status=${r.status} data-busy=${this.busy.get(r.id) ?? ''}>
              <td>
                <input
                  type="radio"
                  name="act-on"
                  .checked=${r.id === this.selected}
                  aria-label=${`the buttons act on ${r.name}`}
                  @change=${() => {
                    this.selected = r.id;
                    this.requestUpdate();
                  }}
                />
              </td>
              <td>
                <span class="swatch" data-color=${colorOf.get(r.id) ?? ''}></span>
                ${this.renaming === r.id
                  ? html`<input
                      type="text"
                      aria-label=${`new name for ${r.name}`}
                      .value=${r.name}
                      @keydown=${(e: KeyboardEvent) => {
                        if (e.key === 'Enter') void this.rename(r, e.target as HTMLInputElement);
                        if (e.key === 'Escape') {
                          this.renaming = null;
                          this.requestUpdate();
                        }
                      }}
                      @blur=${(e: Event) => void this.rename(r, e.target as HTMLInputElement)}
                    />`
                  : html`<span data-name>${r.name}</span>`}
              </td>
              <td class="label" data-label>${r.hidden ? '(hidden)' : label}</td>
              <td class=${`status-${r.status}`} title=${r.error ?? ''}>${this.busy.has(r.id) ? BUSY_WORDS[this.busy.get(r.id)!] : (STATUS_WORDS[r.status] ?? r.status)}${r.status === 'failed' && r.error ? `: ${r.error}` : ''}</td>
              <td class="num">${last ? Number(last.step) : 0} / ${Number((r.settings as unknown as Settings).steps ?? 0)}</td>
              <td class="num">${n4(last?.loss)}</td>
              <td class="num">${n4(ev?.loss)}</td>
              <td class="num">${ev ? `${(100 * ev.metric).toFixed(1)} % ${METRIC_WORDS[ev.metric_name] ?? ev.metric_name}` : '–'}</td>
              <td class="num">${seconds(r.elapsed_ms)}</td>
              <td class="num">${r.steps_per_s ? r.steps_per_s.toFixed(1) : '–'}</td>
              <td data-backend=${r.backend?.kind ?? ''} title=${backendDetail(r.backend)}>${backendText(r.backend)}</td>
              <td>
                <div class="row-actions">
                  <button @click=${() => void this.host!.hideRun(r.id, !r.hidden)} aria-pressed=${r.hidden ? 'true' : 'false'}>${r.hidden ? msg('show') : msg('hide')}</button>
                  <button
                    @click=${() => {
                      this.renaming = r.id;
                      this.requestUpdate();
                      this.updateComplete.then(() => this.renderRoot.querySelector<HTMLInputElement>(`tr[data-run="${r.id}"] input[type="text"]`)?.focus());
                    }}
                  >
                    ${msg('rename')}
                  </button>
                  <button @click=${() => void this.host!.deleteRun(r.id)} aria-label=${msg(str`delete ${r.name}`)}>${msg('delete')}</button>
                  <button @click=${() => this.againWith(r)} data-again>${msg('train again with one change')}</button>
                  <button @click=${() => void this.use(r, label)} data-use ?disabled=${r.log.length === 0}>${msg('use this run')}</button>
                  <button @click=${() => void this.exportRun(r)} ?disabled=${r.log.length === 0}>.safetensors</button>
                  <button @click=${() => this.exportCsv(r)} ?disabled=${r.log.length === 0}>CSV</button>
                </div>
              </td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>`;
  }

  private usedBox() {
    const u = this.used;
    if (!u) return nothing;
    const s = u.settings;
    return html`<section class="used" data-used aria-label=${msg('the model the page uses')}>
      <strong>${msg(str`The page's model is ${u.what}`)}</strong>
      <span class="muted small">— ${archName(u.info.arch)}, d_model ${u.info.d_model}, ${msg(str`${u.info.n_heads} heads, ${u.info.encoder_layers + u.info.decoder_layers} layers, ${u.info.params.toLocaleString('en-US')} parameters`)}</span>
      ${s
        ? html`<dl>
            ${FIELDS.filter((f) => fieldShown(s, f.key)).map((f) => html`<div><dt>${f.label}</dt><dd>${valueText(f, getField(s, f.key))}</dd></div>`)}
          </dl>`
        : nothing}
    </section>`;
  }

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
          @change=${(e: Event) => {
            this.preset = (e.target as HTMLSelectElement).value;
            this.requestUpdate();
          }}
        >
          ${PRESETS.map((x) => html`<option value=${x.id} ?selected=${x.id === this.preset}>${x.title}</option>`)}
        </select>
        <button class="primary" data-action="train-preset" @click=${() => void this.trainPreset()} ?disabled=${!this.host}>${msg(str`Train these ${p.runs.length} runs`)}</button>
        <p>${p.about}</p>
      </div>
      ${this.settingsForm()}
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
          <input type="file" accept=".safetensors,application/octet-stream" data-import @change=${(e: Event) => this.onPick(e)} />
        </label>
      </div>
      ${this.error ? html`<div class="alert" role="alert" data-error>${this.error}</div>` : nothing}
      <div class="said" role="status">${this.said}</div>
      ${this.usedBox()}
      ${this.plots(shown, labels, shown.map((r) => colorOf.get(r.id)!))}
      ${this.table(all, labelOf, colorOf)}
    </section>`;
  }

  protected updated(): void {
    // The table's colour swatches, through the CSSOM (the page's policy refuses style attributes).
    for (const el of this.renderRoot.querySelectorAll<HTMLElement>('.swatch[data-color]')) el.style.background = el.dataset.color ?? '';
  }
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
