// The playground's state and its orchestration, with no DOM in it: the settings (the URL
// table of ./url.ts), what the engine answered, and what each change of a setting makes
// happen — reload the model, switch the backend, tokenize again, restart the generation,
// run the forward pass again, or only redraw — as each setting declares in that table.
// The element <transformer-playground> reads this store and draws it; a test or a lesson
// page can drive the same store without a page.

import { msg, str } from '@lit/localize';
import type { EngineClient } from '../engine/client';
import type {
  Api,
  AttnSite,
  AttnTrace,
  BackendInfo,
  CostReport,
  ForwardRequest,
  ForwardResult,
  GenerateStartRequest,
  HeadRef,
  ManifestEntry,
  LayerPlan,
  ModelInfo,
  ModelInput,
  Op,
  Progress,
  Sampling,
  Schedule,
  Switches,
  SequenceInput,
  Tokenized,
  TrainMode,
} from '../engine/protocol';
import { DEFAULTS, effectsOf, formatHash, formatMask, parseHash, quote, SETTING_NAMES, toggleAblation, type Effect, type Parsed, type Lang, type PlaygroundState, type Theme } from './url';
import { GenerationRunner, type GenStats } from './generation';
import { MAX_CHECKPOINT_BYTES } from '../lab/registry';

/**
 * What a view needs from the engine beyond the forward pass and its traces (which every
 * view gets); the store asks only for what a shown view needs.
 */
export type Need =
  /** q, k and v of every head on each attention trace (the q·k inspector) */
  | 'qkv'
  /** parameters and FLOPs per component (`cost`) */
  | 'cost'
  /** the Noam learning-rate curve (`noam`) */
  | 'schedule';

/** What the store needs from its surroundings (the element gives the page's). */
export interface StoreHost {
  /** A fresh engine (in the page: a Web Worker running the wasm core). */
  engine(): EngineClient;
  /** Where manifest.json and the checkpoints are. */
  modelsBase: URL;
  /** The file to start with (an entry of the manifest; '' for the first). */
  model: string;
  /** Settings in the URL-hash format, applied before the hash. */
  preset: string;
  /** The view names shown when the settings name none ('' for every view). */
  views: string;
  /** Defaults the page sets before any preset or link (the reader's theme, reduced motion). */
  defaults: Partial<PlaygroundState>;
  /** The URL hash, or null to leave it alone (several widgets on one page). */
  hash: { read(): string; write(hash: string): void } | null;
  /** Every view name there is (the registry's). */
  viewNames: readonly string[];
  /** What each view needs, by name. */
  needsOf(view: string): readonly Need[];
  /** Something drawn changed. */
  changed(): void;
  /**
   * Settings a link implies beyond its own keys (a lesson's preset for `lesson=<id>`),
   * applied as defaults under the link's; '' for none.
   */
  implied?(hash: string): string;
  /** The names a classroom link may hide (`hide=`). */
  hideable?: readonly string[];
}

/** The parts of a model's manifest entry the page checks before using it. */
function validManifest(x: unknown): ManifestEntry[] {
  if (!Array.isArray(x)) throw new Error('models/manifest.json is not a list');
  return x.filter(
    (m): m is ManifestEntry =>
      m && typeof m.file === 'string' && /^[A-Za-z0-9_.-]+\.safetensors$/.test(m.file) && typeof m.title === 'string',
  );
}

/** The run-time switch that changed between two settings, in words; '' when none did. */
export function describeSwitchChange(a: PlaygroundState, b: PlaygroundState, causalDefault: boolean): string {
  const onOff = (v: boolean) => (v ? msg('on') : msg('off'));
  const parts: string[] = [];
  const ca = a.causal ?? causalDefault;
  const cb = b.causal ?? causalDefault;
  if (ca !== cb) parts.push(msg(str`causal mask ${onOff(ca)} → ${onOff(cb)}`));
  if (formatMask(a.mask) !== formatMask(b.mask)) parts.push(msg(str`mask ${formatMask(a.mask)} → ${formatMask(b.mask)}`));
  if (a.pad !== b.pad) parts.push(msg(str`padding mask ${onOff(a.pad)} → ${onOff(b.pad)}`));
  if (a.scale !== b.scale) parts.push(msg(str`√d_k scaling ${onOff(a.scale)} → ${onOff(b.scale)}`));
  if (formatHash({ ...DEFAULTS, ablate: a.ablate }) !== formatHash({ ...DEFAULTS, ablate: b.ablate })) {
    parts.push(msg(str`${a.ablate.length} → ${b.ablate.length} heads switched off`));
  }
  if (a.backend !== b.backend) parts.push(`${a.backend} → ${b.backend}`);
  if (a.mode !== b.mode) parts.push(msg(str`${a.mode} mode → ${b.mode} mode`));
  if (a.mode === 'train' && b.mode === 'train' && a.drop !== b.drop) parts.push(msg(str`dropout ${a.drop ?? msg("the model's")} → ${b.drop ?? msg("the model's")}`));
  return parts.join(msg(', '));
}

/** Structural equality of plain values: primitives, arrays and plain objects of them. */
/** One empty list for every "nothing yet" (a fresh `[]` would read as a change to a view). */
export const EMPTY: never[] = Object.freeze([]) as unknown as never[];

export function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!(k in b) || !sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

export class PlaygroundStore {
  /** The settings (mirrored in the URL hash). */
  st: PlaygroundState = { ...DEFAULTS };
  manifest: ManifestEntry[] = [];
  info: ModelInfo | null = null;
  /** The loaded model's layer plan, from the core: what the architecture diagram draws. */
  plan: LayerPlan | null = null;
  backendInfo: BackendInfo | null = null;
  /** Settings of the link that were not used, one sentence each. */
  notes: string[] = [];
  error = '';
  /** The input rows after the tokenizer: the text first, then the batch lines. */
  tokenized: Tokenized[] = [];
  /** The latest forward pass with its traces. */
  lastForward: ForwardResult | null = null;
  /** The input as the core reads it (`modelInput`), for the text as tokenized now. */
  private input: ModelInput | null = null;
  /** The input of the last forward pass drawn (with the tokens generated by then). */
  private lastInput: ModelInput | null = null;
  /** The forward pass before the last switch changed, and what changed. */
  previous: ForwardResult | null = null;
  beforeLabel = '';
  /** The cost panel's numbers for `heads` heads. */
  costReport: CostReport | null = null;
  /** The Noam schedule for this model's d_model and `warmup`. */
  schedule: Schedule | null = null;
  /** The focused heatmap cell: query i, key j. */
  cell = { i: 0, j: 0 };
  /** Which sequence of the batch the views show. */
  row = 0;
  /** Milliseconds from start to the first drawn forward pass. */
  readyMs: number | null = null;
  /** performance.now() when the first forward pass was ready. */
  readyAt: number | null = null;
  /** The generation loop and what it has produced. */
  readonly gen: GenerationRunner;
  /** The slow step under way (engine start, a download), with when it began; null when none. */
  progress: (Progress & { since: number }) | null = null;
  /** The label of a model that is not a shipped one (a run's weights, an imported file); '' for a shipped model. */
  customModel = '';
  /** Times the engine died and was restarted. */
  engineRestarts = 0;
  /** What the page says about the last restart ('' when there was none). */
  engineNote = '';

  /**
   * Train mode: how many times the forward pass was run again ("run again"); each run
   * draws its dropout masks from seed + draw, so repeats differ in train mode and are
   * identical in eval mode.
   */
  draw = 0;

  /** Heads the cost panel counts with (null: the model's own). */
  private heads: number | null = null;
  private warmup = 4000;
  private client: EngineClient | null = null;
  private defaults: PlaygroundState = { ...DEFAULTS };
  /** The defaults before any implied settings (a lesson's preset), and those settings. */
  private base: PlaygroundState = { ...DEFAULTS };
  private impliedNow = '';
  /** What the page said when a locked setting was asked to change ('' when nothing was refused). */
  lockNote = '';
  private fwdVersion = 0;
  private textTimer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private crashTimes: number[] = [];
  private t0 = 0;

  /** Values handed to the views, by name (see `keep`). */
  private kept = new Map<string, unknown>();

  /**
   * `next`, or the value kept under `key` when that one holds the same numbers: a view
   * handed a value derived afresh on every change (the switches, the input row, its
   * tokens) gets the very object it already has while its numbers stay the same, so it
   * does not draw again (or ask the engine again) for a change that is not its own.
   */
  keep<T>(key: string, next: T): T {
    const prev = this.kept.get(key);
    if (this.kept.has(key) && sameValue(prev, next)) return prev as T;
    this.kept.set(key, next);
    return next;
  }

  constructor(private host: StoreHost) {
    this.gen = new GenerationRunner({
      engine: () => this.engine,
      request: () => this.generationRequest(),
      pauseMs: () => this.st.speed,
      changed: () => this.host.changed(),
      afterStep: () => this.refresh(),
      failed: (e) => this.fail(e),
    });
  }

  // ---------------------------------------------------------------- lifecycle

  /** Load the manifest and the model, run the first forward pass, start generating. */
  async start(): Promise<void> {
    this.t0 = performance.now();
    this.connect();
    const resp = await fetch(new URL('manifest.json', this.host.modelsBase));
    if (!resp.ok) throw new Error(msg(str`cannot load the model list (HTTP ${resp.status})`));
    this.manifest = validManifest(await resp.json());
    if (!this.manifest.length) throw new Error(msg('the model list is empty'));
    const first = this.manifest.find((m) => m.file === this.host.model) ?? this.manifest[0];
    this.defaults = { ...DEFAULTS, model: first.file, text: first.default_prompt, ...this.host.defaults };
    const notes: string[] = [];
    if (this.host.views.trim()) {
      const p = this.parseSettings(`views=${encodeURIComponent(this.host.views.replace(/\s+/g, ''))}`, this.defaults);
      this.defaults = p.state;
      notes.push(...p.notes);
    }
    if (this.host.preset) {
      const p = this.parseSettings(this.host.preset, this.defaults);
      this.defaults = p.state;
      notes.push(...p.notes);
    }
    this.base = this.defaults;
    const implied = this.implyFrom(this.host.hash ? this.host.hash.read() : '');
    notes.push(...implied);
    const parsed = this.host.hash ? this.parseSettings(this.host.hash.read(), this.defaults) : { state: this.defaults, notes: [] };
    notes.push(...parsed.notes);
    this.st = this.checkModel(parsed.state, notes);
    this.notes = notes;
    this.host.changed();
    await this.loadModel(this.st.model, false);
    this.backendInfo = await this.engine.call('setBackend', { backend: this.st.backend });
    await this.retokenize();
    await this.refresh();
    this.progress = null;
    this.writeHash();
    this.host.changed();
  }

  /** Show how far a slow step has got (a new step restarts the clock for its time estimate). */
  private showProgress(p: Progress | null): void {
    if (!p) this.progress = null;
    else {
      const same = this.progress && this.progress.phase === p.phase && this.progress.label === p.label;
      this.progress = { ...p, since: same ? this.progress!.since : performance.now() };
    }
    this.host.changed();
  }

  /** A fresh engine, wired to this store. */
  private connect(): void {
    this.showProgress({ phase: 'engine', label: msg('Starting the engine (its worker)'), done: 0, total: null });
    const c = this.host.engine();
    c.onEvent((e) => {
      if (e.event === 'backend') {
        this.backendInfo = e.info;
        this.host.changed();
      } else if (e.event === 'progress') this.showProgress(e.progress);
    });
    c.onCrash((why) => void this.recover(why));
    this.client = c;
  }

  /**
   * The engine died (a trap, a dead worker): start a new one, load the same model, apply
   * the same settings, say what happened and carry on where the page was (generation runs
   * again with the same request and seed, so the same tokens come back). Gives up after a
   * few deaths within a minute.
   */
  private async recover(why: string): Promise<void> {
    if (this.stopped) return;
    const now = performance.now();
    this.crashTimes = [...this.crashTimes.filter((t) => now - t < 60_000), now];
    const wasPlaying = this.gen.playing;
    const had = this.gen.generated.length;
    this.gen.reset();
    this.fwdVersion++;
    if (this.crashTimes.length > 3) {
      this.engineNote = '';
      this.fail(new Error(msg(str`The engine stopped ${this.crashTimes.length} times within a minute (last: ${why}); reload the page to try again.`)));
      return;
    }
    this.engineRestarts++;
    this.engineNote = msg(str`The engine stopped (${why}) and was restarted; the model and your settings were loaded again.`);
    console.warn('playground:', this.engineNote);
    this.host.changed();
    try {
      this.connect();
      await this.loadModel(this.st.model, false);
      this.backendInfo = await this.engine.call('setBackend', { backend: this.st.backend });
      await this.retokenize();
      await this.refresh();
      this.progress = null;
      this.error = '';
      this.host.changed();
      if (this.canGenerate() && (wasPlaying || had > 0)) {
        await this.gen.start(wasPlaying);
        while (!wasPlaying && this.gen.generated.length < had && !this.gen.done) await this.gen.stepOne();
      }
    } catch (e) {
      this.fail(e);
    }
  }

  dismissEngineNote(): void {
    this.engineNote = '';
    this.host.changed();
  }

  /**
   * Test-only hook: make the engine die on purpose ('trap': the wasm engine traps;
   * 'throw': its worker throws outside any request), to prove the page recovers.
   */
  async testOnlyCrashEngine(kind: 'trap' | 'throw' = 'trap'): Promise<void> {
    try {
      await this.engine.call('testOnlyCrash', { kind });
    } catch {
      // The trap answers with the engine's death; recovery is already under way.
    }
  }

  /** Test-only hook: destroy the WebGPU device under the running engine. */
  testOnlyLoseGpu(): Promise<boolean> {
    return this.engine.call('testOnlyLoseGpu', {});
  }

  /** The engine's memory: wasm linear memory and (where the browser says) its JS heap. */
  memoryUse(): Promise<{ wasm_bytes: number; js_heap_bytes: number | null }> {
    return this.engine.call('memoryUse', {});
  }

  /** The first forward pass is on screen: note when. */
  drawn(): void {
    this.readyAt = performance.now();
    this.readyMs = this.readyAt - this.t0;
  }

  /** Start generating on load when the settings say so (after the first drawing). */
  async autoplay(): Promise<void> {
    if (this.canGenerate()) await this.gen.start(this.st.play);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.textTimer);
    this.gen.reset();
    this.client?.terminate();
    this.client = null;
  }

  fail(e: unknown): void {
    this.error = e instanceof Error ? e.message : String(e);
    this.progress = null;
    console.warn('playground:', this.error);
    this.host.changed();
  }

  /** Where manifest.json and the checkpoints are (views that load a side model read it). */
  get modelsBase(): URL {
    return this.host.modelsBase;
  }

  /** Send one request to this playground's engine (for lesson pages and tests). */
  call<K extends Op>(op: K, payload: Api[K]['req']): Promise<Api[K]['res']> {
    return this.engine.call(op, payload);
  }

  private get engine(): EngineClient {
    if (!this.client) throw new Error('the engine is not running');
    return this.client;
  }

  // ---------------------------------------------------------------- views

  /** The names of the views shown (every view when the settings name none). */
  get shownViews(): string[] {
    return this.st.views.length ? this.st.views : [...this.host.viewNames];
  }

  /** Is this view shown? */
  shows(view: string): boolean {
    return this.shownViews.includes(view);
  }

  /** Does a shown view need this from the engine? */
  needs(need: Need): boolean {
    return this.shownViews.some((v) => this.host.needsOf(v).includes(need));
  }

  // ---------------------------------------------------------------- settings

  /** The defaults for a state that runs `model`: that model's own default prompt. */
  private defaultsFor(model: string): PlaygroundState {
    const entry = this.manifest.find((m) => m.file === model);
    return { ...this.defaults, text: entry ? entry.default_prompt : this.defaults.text };
  }

  /** Parse settings; a link that names a model but no text gets that model's prompt. */
  private parseSettings(text: string, base: PlaygroundState): Parsed {
    const first = this.checkViews(parseHash(text, base), base);
    const entry = this.manifest.find((m) => m.file === first.state.model);
    if (!entry || entry.file === base.model) return first;
    return this.checkViews(parseHash(text, { ...base, text: entry.default_prompt }), base);
  }

  /**
   * The settings this link implies (a lesson's preset) become the defaults under it; a link
   * that implies other settings than before (another lesson, or none) starts from them.
   * Returns the notes about the implied settings.
   */
  private implyFrom(hash: string): string[] {
    const implied = this.host.implied?.(hash) ?? '';
    if (implied === this.impliedNow) return [];
    this.impliedNow = implied;
    if (!implied) {
      this.defaults = this.base;
      return [];
    }
    const p = this.parseSettings(implied, this.base);
    this.defaults = p.state;
    return p.notes;
  }

  /** Classroom names must be known ones (settings for `lock`, controls for `hide`); the others are dropped with a note. */
  private checkClassroom(p: Parsed): Parsed {
    const notes = [...p.notes];
    const known = { lock: SETTING_NAMES, hide: this.host.hideable ?? [] };
    const state = { ...p.state };
    for (const key of ['lock', 'hide'] as const) {
      const bad = state[key].filter((n) => !known[key].includes(n));
      if (!bad.length) continue;
      state[key] = state[key].filter((n) => known[key].includes(n));
      const names = bad.map(quote).join(', ');
      notes.push(
        key === 'lock'
          ? msg(str`Ignored lock ${names}: not a setting of the page.`, { id: 'teacher.bad-lock' })
          : msg(str`Ignored hide ${names}: not a control of the page.`, { id: 'teacher.bad-hide' }),
      );
    }
    return { state, notes };
  }

  /** View names must be registered ones; the others are dropped with a note. */
  private checkViews(p: Parsed, base: PlaygroundState): Parsed {
    if (p.state.lock.length || p.state.hide.length) p = this.checkClassroom(p);
    const unknown = p.state.views.filter((v) => !this.host.viewNames.includes(v));
    if (!unknown.length) return p;
    const views = p.state.views.filter((v) => this.host.viewNames.includes(v));
    const note = msg(str`Ignored views ${unknown.map(quote).join(', ')}: known views are ${this.host.viewNames.join(', ')}.`);
    return { state: { ...p.state, views: views.length ? views : base.views }, notes: [...p.notes, note] };
  }

  /** A model named by a link must be one of the shipped ones. */
  private checkModel(s: PlaygroundState, notes: string[]): PlaygroundState {
    if (this.manifest.some((m) => m.file === s.model)) return s;
    notes.push(msg(str`Ignored model=${quote(s.model)}: not one of the shipped models.`));
    return { ...s, model: this.defaults.model };
  }

  /** The settings as a URL hash (without `#`), only what differs from the defaults. */
  get hash(): string {
    return formatHash(this.st, this.defaultsFor(this.st.model));
  }

  private writeHash() {
    this.host.hash?.write(this.hash);
  }

  /** A pasted or edited link: apply it as a whole. */
  async applyHash(hash: string): Promise<void> {
    const want = `#${this.hash}`;
    if (hash === want || (hash === '' && want === '#')) return;
    const implied = this.implyFrom(hash);
    const p = this.parseSettings(hash, this.defaults);
    const notes = [...implied, ...p.notes];
    const next = this.checkModel(p.state, notes);
    this.notes = notes;
    await this.apply(next);
  }

  /** Change some settings; a classroom link's locked settings stay as they are, and the page says so. */
  patch(p: Partial<PlaygroundState>): Promise<void> {
    const refused = Object.keys(p).filter(
      (k) => this.st.lock.includes(k) && JSON.stringify(p[k as keyof PlaygroundState]) !== JSON.stringify(this.st[k as keyof PlaygroundState]),
    );
    if (refused.length) {
      const allowed = { ...p };
      for (const k of refused) delete allowed[k as keyof PlaygroundState];
      const names = refused.join(', ');
      this.lockNote =
        refused.length === 1
          ? msg(str`This link keeps ${names} as it is: your teacher locked it.`, { id: 'teacher.locked-one' })
          : msg(str`This link keeps ${names} as they are: your teacher locked them.`, { id: 'teacher.locked-many' });
      this.host.changed();
      return this.apply({ ...this.st, ...allowed });
    }
    return this.apply({ ...this.st, ...p });
  }

  /** Change the sampling controls (named as the engine names them). */
  patchSampling(p: Partial<Sampling>): Promise<void> {
    const m: Partial<PlaygroundState> = {};
    if (p.strategy !== undefined) m.strategy = p.strategy;
    if (p.temperature !== undefined) m.temp = p.temperature;
    if (p.top_k !== undefined) m.topk = p.top_k;
    if (p.top_p !== undefined) m.topp = p.top_p;
    if (p.beam_width !== undefined) m.beam = p.beam_width;
    return this.patch(m);
  }

  /** Typing: the text is applied once the typing pauses. */
  typeText(text: string): void {
    clearTimeout(this.textTimer);
    this.textTimer = setTimeout(() => void this.patch({ text }), 200);
  }

  /** Switch one head off, or back on. */
  toggleHead(h: HeadRef): Promise<void> {
    return this.patch({ ablate: toggleAblation(this.st, h) });
  }

  /** The cost panel's head count (not a setting: an exploration of the numbers). */
  setHeads(n: number): void {
    this.heads = n;
    void this.updateCost();
  }

  /** The schedule's warmup (not a setting either). */
  setWarmup(w: number): void {
    this.warmup = w;
    void this.updateSchedule();
  }

  /** The reader chose a colour theme: it holds here and stays out of links. */
  setTheme(t: Theme): void {
    this.defaults = { ...this.defaults, theme: t };
    this.st = { ...this.st, theme: t };
    this.writeHash();
    this.host.changed();
  }

  /** The reader chose a language (null: the browser's): it holds here and stays out of links. */
  setLang(l: Lang | null): void {
    this.defaults = { ...this.defaults, lang: l };
    this.st = { ...this.st, lang: l };
    this.writeHash();
    this.host.changed();
  }

  focusCell(cell: { i: number; j: number }): void {
    this.cell = cell;
    this.host.changed();
  }

  selectRow(row: number): void {
    this.row = row;
    this.host.changed();
  }

  dismissNotes(): void {
    this.notes = [];
    this.host.changed();
  }

  /**
   * Apply new settings, doing only what the changed settings declare (url.ts): reload,
   * switch the backend, tokenize, restart the generation, run the forward pass, or redraw.
   */
  async apply(next: PlaygroundState): Promise<void> {
    const prev = this.st;
    const effects = effectsOf(prev, next);
    this.st = next;
    // The link says what the page is set to from the moment it is set, not once the model
    // has loaded; it is written again below after the selection is clamped.
    this.writeHash();
    this.host.changed();
    if (effects.size === 0) return;
    const has = (e: Effect) => effects.has(e);
    const changed = describeSwitchChange(prev, next, this.info?.causal_default ?? true);
    if (changed && next.model === prev.model && next.text === prev.text) {
      this.previous = this.lastForward;
      this.beforeLabel = changed;
    } else if (next.model !== prev.model || next.text !== prev.text) {
      this.previous = null;
      this.beforeLabel = '';
    }
    try {
      if (has('reload')) {
        this.gen.reset();
        // Nothing of the old model stays on screen while the new one loads.
        this.fwdVersion++;
        this.lastForward = null;
        this.previous = null;
        // Another task (another vocabulary) starts from its own prompt, unless the same
        // change also set the text (a pasted link); a sibling model keeps the input.
        const task = (file: string) => this.manifest.find((m) => m.file === file)?.task;
        await this.loadModel(next.model, task(next.model) !== task(prev.model) && next.text === prev.text);
      }
      this.clampSelection();
      if (has('backend')) this.backendInfo = await this.engine.call('setBackend', { backend: this.st.backend });
      if (has('tokenize')) await this.retokenize();
      this.writeHash();
      if (has('restart') && this.canGenerate()) {
        const wasPlaying = this.gen.playing || has('reload');
        this.gen.reset();
        await this.refresh();
        if (wasPlaying && this.st.play) await this.gen.start(true);
      } else if (has('forward') || has('restart')) {
        await this.refresh();
      } else {
        // A newly shown view may need numbers the engine has not sent yet.
        await this.updateCost();
        if (this.needs('schedule') && !this.schedule) await this.updateSchedule();
      }
    } catch (e) {
      this.fail(e);
    }
    this.host.changed();
  }

  // ---------------------------------------------------------------- engine calls

  private async loadModel(file: string, resetText: boolean) {
    const entry = this.manifest.find((m) => m.file === file);
    if (!entry) throw new Error(`unknown model ${file}`);
    this.info = await this.engine.call('load', { url: new URL(entry.file, this.host.modelsBase).href });
    this.customModel = '';
    if (this.readyAt === null) this.showProgress({ phase: 'engine', label: msg('Running the model for the first time'), done: 0, total: null });
    else this.showProgress(null);
    this.plan = await this.engine.call('layerPlan', {});
    const st = { ...this.st, model: file };
    if (resetText) {
      st.text = entry.default_prompt;
      st.batch = [];
      st.ablate = [];
      st.causal = null;
      st.mask = null;
      st.layer = 0;
      st.head = 0;
      st.site = null;
    }
    if (st.site !== null && !this.sites().includes(st.site)) st.site = null;
    this.st = st;
    this.clampSelection();
    this.heads = null;
    this.costReport = null;
    this.schedule = null;
    if (this.needs('schedule')) await this.updateSchedule();
    this.host.changed();
  }

  /**
   * Make checkpoint bytes the page's model (a lab run's weights, an imported file). Bad
   * bytes reject with the loader's own message and change nothing: the engine replaces
   * its model only once the new one has loaded. `text`: a prompt that fits the new model.
   */
  async useCheckpoint(bytes: Uint8Array, label: string, text?: string): Promise<ModelInfo> {
    if (bytes.length > MAX_CHECKPOINT_BYTES) {
      // The loader's own check (crate/src/limits.rs), made before the bytes are copied to the engine.
      throw new Error(msg(str`bad checkpoint: file size (bytes): ${bytes.length} is above the limit of ${MAX_CHECKPOINT_BYTES}`));
    }
    const info = await this.engine.call('loadBytes', { bytes });
    this.gen.reset();
    this.fwdVersion++;
    this.lastForward = null;
    this.previous = null;
    this.beforeLabel = '';
    this.info = info;
    this.customModel = label;
    this.plan = await this.engine.call('layerPlan', {});
    const st = { ...this.st, batch: [], ablate: [], causal: null, mask: null, layer: 0, head: 0, site: null };
    if (text !== undefined) st.text = text;
    this.st = st;
    this.clampSelection();
    this.heads = null;
    this.costReport = null;
    this.schedule = null;
    if (this.needs('schedule')) await this.updateSchedule();
    await this.retokenize();
    await this.refresh();
    this.host.changed();
    return info;
  }

  /** Count the cost of the model with the chosen heads, for the current input length. */
  private async updateCost() {
    const info = this.info;
    const f = this.lastForward;
    if (!info || !f || !this.needs('cost')) return;
    // The input's length: the source of a translation, the prompt and what followed it otherwise.
    const input = info.arch === 'encoder_decoder' ? f.src_tokens[0]?.length : f.tokens[0]?.length;
    const context = Math.max(1, Math.min(info.max_len, input ?? 1));
    const n_heads = this.heads ?? info.n_heads;
    const c = this.costReport;
    if (c && c.n_heads === n_heads && c.context === context && c.d_model === info.d_model) return;
    const engine = this.engine;
    try {
      this.costReport = await engine.call('cost', { n_heads, context });
      this.host.changed();
    } catch (e) {
      // Nobody waits for these numbers: an engine that died meanwhile is being replaced,
      // and its restart says so; only a failure of the engine in use is the page's error.
      if (engine === this.client) this.fail(e);
    }
  }

  private async updateSchedule() {
    const w = this.warmup;
    try {
      this.schedule = await this.engine.call('noam', { warmup: w, last_step: Math.min(1_000_000, Math.max(100, 5 * w)), points: 240 });
      this.host.changed();
    } catch (e) {
      this.fail(e);
    }
  }

  private async retokenize() {
    const texts = [this.st.text, ...this.st.batch.filter((l) => l.trim() !== '')];
    const out: Tokenized[] = [];
    for (const text of texts) out.push(await this.engine.call('tokenize', { text }));
    this.tokenized = out;
    this.input = await this.modelInput([]);
  }

  /** The tokenized rows and `generated` as the model reads them (the core's rules). */
  private async modelInput(generated: number[]): Promise<ModelInput | null> {
    if (!this.info || !this.tokenized.length) return null;
    return this.engine.call('modelInput', { rows: this.tokenized.map((t) => t.ids), generated });
  }

  /** Run the forward pass again: in train mode with the next seed (new dropout masks). */
  async runAgain(): Promise<void> {
    this.previous = this.lastForward;
    this.beforeLabel = this.st.mode === 'train' ? `train-mode draw ${this.draw} → ${this.draw + 1}` : 'eval mode, run again';
    this.draw++;
    await this.refresh();
  }

  /** The train mode of the inference views' passes (undefined: eval mode). */
  trainMode(): TrainMode | undefined {
    if (this.st.mode !== 'train') return undefined;
    const t: TrainMode = { seed: this.st.seed + this.draw };
    if (this.st.drop !== null) t.dropout = this.st.drop;
    return this.keep('trainMode', t);
  }

  /** One forward pass with traces of what is on screen now. */
  private async refresh() {
    const version = ++this.fwdVersion;
    let input: ModelInput | null;
    try {
      input = this.gen.generated.length ? await this.modelInput(this.gen.generated) : this.input;
    } catch (e) {
      this.fail(e);
      return;
    }
    const req: ForwardRequest = {
      batch: input?.batch ?? [],
      src: input?.src ?? undefined,
      switches: this.switches(),
      sampling: this.sampling(),
      qkv: this.needs('qkv'),
    };
    const train = this.trainMode();
    if (train) req.train = train;
    try {
      const r = await this.engine.call('forward', req);
      if (version === this.fwdVersion && !this.stopped) {
        this.lastForward = r;
        this.lastInput = input;
        this.error = '';
        this.host.changed();
        // The cost view's numbers follow on their own: playback does not wait for them.
        void this.updateCost();
      }
    } catch (e) {
      this.fail(e);
    }
  }

  // ---------------------------------------------------------------- derived

  /** The attention sublayers of the loaded model, the most telling first. */
  sites(): AttnSite[] {
    const a = this.info?.arch;
    if (a === 'encoder_only') return ['encoder_self'];
    if (a === 'decoder_only') return ['decoder_self'];
    // Encoder-decoder: cross-attention first, where the alignment of the translation shows.
    return ['cross', 'decoder_self', 'encoder_self'];
  }

  /** The sublayer the views show: the setting's, or the model's most telling one. */
  get site(): AttnSite {
    return this.st.site ?? this.sites()[0];
  }

  private clampSelection() {
    const info = this.info;
    if (!info) return;
    const layersOf = (s: AttnSite) => (s === 'encoder_self' ? info.encoder_layers : info.decoder_layers);
    const layer = Math.min(this.st.layer, Math.max(0, layersOf(this.site) - 1));
    const head = Math.min(this.st.head, info.n_heads - 1);
    const ablate = this.st.ablate.filter((h) => this.sites().includes(h.site) && h.head < info.n_heads && h.layer < layersOf(h.site));
    if (layer !== this.st.layer || head !== this.st.head || ablate.length !== this.st.ablate.length) {
      this.st = { ...this.st, layer, head, ablate };
    }
  }

  canGenerate(): boolean {
    return this.info !== null && this.info.arch !== 'encoder_only';
  }

  switches(): Switches {
    // Absent, the causal mask follows the model's rule (`ModelInfo.causal_default`).
    const sw: Switches = { padding_mask: this.st.pad, scale: this.st.scale, ablate: this.st.ablate };
    if (this.st.causal !== null) sw.causal = this.st.causal;
    if (this.st.mask) sw.mask = this.st.mask;
    return this.keep('switches', sw);
  }

  sampling(): Sampling {
    return this.keep('sampling', {
      strategy: this.st.strategy,
      temperature: this.st.temp,
      top_k: this.st.topk,
      top_p: this.st.topp,
      beam_width: this.st.beam,
      seed: this.st.seed,
    });
  }

  /** What a fresh generation starts from: the prompt (or source) as the model was trained. */
  private generationRequest(): GenerateStartRequest | null {
    const prompt = this.input?.prompt;
    if (!this.canGenerate() || !prompt) return null;
    return {
      prompt,
      src: this.input?.prompt_src ?? undefined,
      switches: this.switches(),
      sampling: this.sampling(),
      max_new_tokens: this.st.max,
      use_cache: this.st.cache,
    };
  }

  /** The input as the model saw it (padded), without the tokens generated after it. */
  inputRows(): number[][] {
    const f = this.lastForward;
    const input = this.lastInput;
    if (!f || !input) return EMPTY;
    if (input.input_is_source) return f.src_tokens;
    const promptLen = input.prompt_len;
    if (promptLen === null) return f.tokens;
    return this.keep('inputRows', f.tokens.map((row, b) => (b === 0 ? row.slice(0, promptLen) : row)));
  }

  /** Row 0 of the input (see `inputRows`), the same object while its tokens stay the same. */
  get inputRow(): number[] {
    return this.keep('inputRow', this.inputRows()[0] ?? EMPTY);
  }

  /** The tokens of `ids` as text, kept under `key` (see `keep`). */
  tokensAs(key: string, ids: number[]): string[] {
    return this.keep(`tokens:${key}`, this.tokensOf(ids));
  }

  /**
   * Row 0 of the input as one sequence, without the generated tokens: what the block views
   * (ffn, no-leak, dropout) edit and probe. An encoder-decoder's is its source, read by a
   * decoder holding only `<bos>`.
   */
  sequenceInput(): SequenceInput | null {
    const seq = this.lastForward ? this.lastInput?.sequence : undefined;
    if (!seq || !(seq.src ?? seq.tokens).length) return null;
    return this.keep('sequenceInput', seq);
  }

  tokensOf(ids: number[]): string[] {
    const v = this.info?.vocab ?? [];
    return ids.map((id) => v[id] ?? `?${id}`);
  }

  /** The batch row the views show, kept inside the batch. */
  get shownRow(): number {
    return Math.min(this.row, Math.max(0, (this.lastForward?.tokens.length ?? 1) - 1));
  }

  /** Token ids of the shown row (target side). */
  get rowIds(): number[] {
    return this.lastForward?.tokens[this.shownRow] ?? EMPTY;
  }

  /** Source ids of the shown row (encoder-decoder). */
  get srcIds(): number[] {
    const f = this.lastForward;
    return f?.src_tokens[this.shownRow] ?? f?.src_tokens[0] ?? EMPTY;
  }

  /** The tokens along the rows (queries) of the shown attention map. */
  get queryTokens(): string[] {
    return this.tokensAs('query', this.site === 'encoder_self' && this.info?.arch === 'encoder_decoder' ? this.srcIds : this.rowIds);
  }

  /** The tokens along the columns (keys) of the shown attention map. */
  get keyTokens(): string[] {
    return this.tokensAs('key', this.site === 'decoder_self' || this.info?.arch !== 'encoder_decoder' ? this.rowIds : this.srcIds);
  }

  /** The trace of the shown sublayer and layer. */
  get trace(): AttnTrace | null {
    return this.lastForward?.attention.find((a) => a.site === this.site && a.layer === this.st.layer) ?? null;
  }

  /** The prompt as the decoder reads it. */
  get promptTokens(): string[] {
    const input = this.input;
    if (!input) return EMPTY;
    return this.tokensAs('prompt', input.prompt ?? input.sequence.tokens);
  }

  /** The class names of the loaded model (a classifier's manifest entry). */
  get classNames(): string[] {
    return this.manifest.find((m) => m.file === this.st.model)?.classes ?? EMPTY;
  }

  get stats(): GenStats {
    return this.gen.stats;
  }
}
