// The playground's state and its orchestration, with no DOM in it: the settings (the URL
// table of ./url.ts), what the engine answered, and what each change of a setting makes
// happen — reload the model, switch the backend, tokenize again, restart the generation,
// run the forward pass again, or only redraw — as each setting declares in that table.
// The element <transformer-playground> reads this store and draws it; a test or a lesson
// page can drive the same store without a page.
//
// This file holds what changes the state: the lifecycle (start, an engine that died),
// the settings' changes and the engine requests they make. What the state is and what the
// views derive from it is ./store-data.ts; how a link is read against the defaults,
// ./settings.ts; what the store needs from its host, ./host.ts.

import { msg, str } from '@lit/localize';
import { EngineCrashed, type EngineClient } from '../engine/client';
import { startErrorText } from '../engine/start-error';
import type { Api, ForwardRequest, GenerateStartRequest, HeadRef, HfCheck, HfFiles, ModelInfo, ModelInput, Op, Progress, Sampling, Tokenized } from '../engine/protocol';
import { DEFAULTS, MODEL_ALIASES, parseHash, unalias, effectsOf, formatHash, toggleAblation, type Effect, type Lang, type PlaygroundState, type Theme } from './url';
import { GenerationRunner, type GenStats } from './generation';
import { checkCheckpointSize, fitsDevice } from './custom-check';
import type { StoreHost } from './host';
import { chineseTwin, describeSwitchChange, SettingsReader, switchSides, validManifest } from './settings';
import { modelTitle } from '../i18n/models';
import { readableVocab } from '../ui/byte-level';
import { fitTrace } from './trace-limit';
import { cannotSpell, unspellable } from './spell';
import { StoreData, type GenBefore } from './store-data';
import { WeightEditor } from './weights';
import { assignedLessonLocks, isLocked, opensAssignedLesson, refusedNote } from './locks';
import { namesAssignmentModel } from '../lessons/assignment-link';
import { manifestAt } from './manifest';

export type { Need, StoreHost } from './host';
export { EMPTY, sameValue } from './same-value';
export { describeSwitchChange } from './settings';

export class PlaygroundStore extends StoreData {
  /** The generation loop and what it has produced. */
  readonly gen: GenerationRunner;
  /** Weights edited by hand (./weights.ts): every view recomputes from the edited model. */
  readonly weights: WeightEditor;


  /** Heads the cost panel counts with (null: the model's own). */
  private heads: number | null = null;
  private warmup = 4000;
  private cooldown = 0;
  private client: EngineClient | null = null;
  /**
   * Settles once the engine has been started (or the store stopped): a view drawn before
   * the engine starts (the element's engine waits until it comes near the viewport, while
   * the asked views are drawn at once) waits for it instead of being refused.
   */
  private markEngineStarted: () => void = () => {};
  private readonly engineStarted = new Promise<void>((r) => (this.markEngineStarted = r));
  /** The defaults that links and presets are read against. */
  private readonly settings: SettingsReader;
  private fwdVersion = 0;
  private textTimer: ReturnType<typeof setTimeout> | undefined;
  /** The link gives an assignment that names its model: the hash keeps naming it. */
  private assignmentModel = false;
  private stopped = false;
  private crashTimes: number[] = [];
  private t0 = 0;

  constructor(host: StoreHost) {
    super(host);
    this.settings = new SettingsReader(host, () => this.manifest);
    this.gen = new GenerationRunner({
      engine: () => this.engine,
      request: () => this.generationRequest(),
      pauseMs: () => this.st.speed,
      changed: () => this.host.changed(),
      afterStep: () => this.refresh(),
      failed: (e) => this.fail(e),
    });
    this.weights = new WeightEditor({
      call: (op, payload) => this.call(op, payload),
      info: () => this.info,
      changed: () => this.host.changed(),
      generating: () => this.canGenerate() && (this.gen.playing || this.gen.generated.length > 0),
      stopGeneration: () => this.gen.reset(),
      recompute: (first, none) => this.afterWeightEdit(first, none),
      restartGeneration: () => void this.gen.start(true),
      refuse: () => (isLocked(this.st, 'model') ? refusedNote(['model']) : ''),
    });
    this.st = this.earlyState();
  }

  /**
   * Before the model list arrives: the settings that say what is shown and how much room
   * it takes (the views, the chapter, the frame, playback and length), read from the
   * element, its preset and the link as `start` will read them, so that the first frame
   * draws the views asked for — never others — in the room they will take.
   */
  private earlyState(): PlaygroundState {
    let st: PlaygroundState = { ...DEFAULTS, ...this.host.defaults };
    const sources = [
      this.host.views.trim() ? `views=${encodeURIComponent(this.host.views.replace(/\s+/g, ''))}` : '',
      this.host.preset,
      this.host.hash ? this.host.hash.read() : '',
    ];
    for (const src of sources) {
      if (!src) continue;
      const p = parseHash(src, st).state;
      st = { ...st, views: p.views.filter((v) => this.host.viewNames.includes(v)), chapter: p.chapter, chrome: p.chrome, keep: p.keep, play: p.play, max: p.max };
    }
    return st;
  }

  /** A weight was edited by hand: the views' forward pass runs on the edited model, the trained model's kept as the "before". */
  private async afterWeightEdit(first: boolean, none: boolean): Promise<void> {
    const label = msg('the trained weights');
    if (first) {
      this.previous = this.lastForward;
      this.beforeLabel = label;
    } else if (none && this.beforeLabel === label) {
      this.previous = null;
      this.beforeLabel = '';
    }
    await this.refresh();
  }

  // ---------------------------------------------------------------- lifecycle

  /** Load the manifest and the model, run the first forward pass, start generating. */
  async start(): Promise<void> {
    this.t0 = performance.now();
    this.connect();
    this.manifest = validManifest(await manifestAt(new URL('manifest.json', this.host.modelsBase).href));
    if (!this.manifest.length) throw new Error(msg('the model list is empty'));
    // The model the element names, else the default: the first of the list, or in a
    // Chinese page its Chinese twin (a link or preset that names a model still wins).
    const chinese = (this.host.startLang?.() ?? 'en') === 'zh-Hans';
    const named = unalias(MODEL_ALIASES, this.host.model);
    const first = this.manifest.find((m) => m.file === named) ?? (chinese ? chineseTwin(this.manifest, this.manifest[0]) : this.manifest[0]);
    const settings = this.settings;
    settings.defaults = { ...DEFAULTS, model: first.file, text: first.default_prompt, ...this.host.defaults };
    const notes: string[] = [];
    if (this.host.views.trim()) {
      const p = settings.parse(`views=${encodeURIComponent(this.host.views.replace(/\s+/g, ''))}`, settings.defaults);
      settings.defaults = p.state;
      notes.push(...p.notes);
    }
    if (this.host.preset) {
      const p = settings.parse(this.host.preset, settings.defaults);
      settings.defaults = p.state;
      notes.push(...p.notes);
    }
    settings.base = settings.defaults;
    this.assignmentModel = namesAssignmentModel(this.host.hash ? this.host.hash.read() : '');
    const implied = settings.implyFrom(this.host.hash ? this.host.hash.read() : '');
    notes.push(...implied);
    const parsed = this.host.hash ? settings.parse(this.host.hash.read(), settings.defaults) : { state: settings.defaults, notes: [] };
    notes.push(...parsed.notes);
    this.st = settings.checkModel(parsed.state, notes);
    this.notes = notes;
    this.host.changed();
    await this.loadModel(this.st.model, 'keep');
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
    this.markEngineStarted();
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
    this.engineNote = this.words(() => msg(str`The engine stopped (${why}) and was restarted; the model and your settings were loaded again.`));
    console.warn('playground:', this.engineNote);
    this.host.changed();
    try {
      this.connect();
      if (this.customBytes || this.customHf) await this.reloadCustom();
      else await this.loadModel(this.st.model, 'keep');
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
    this.markEngineStarted();
    clearTimeout(this.textTimer);
    this.gen.reset();
    this.client?.terminate();
    this.client = null;
  }

  fail(e: unknown): void {
    // A request to an engine that died, rejected only after a new engine took over: the
    // restart has already said what happened (engineNote), and the page runs again.
    if (e instanceof EngineCrashed && this.engineRestarts > 0 && this.client !== null && this.client.crashed === null) return;
    // A host that refuses the engine (its Content-Security-Policy, another origin) is
    // named with what it must allow; any other error keeps its own message.
    this.error = startErrorText(e, import.meta.url);
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
    // Before the engine has started, the request waits for it (then refused if the store was stopped instead).
    if (!this.client && !this.stopped) return this.engineStarted.then(() => this.engine.call(op, payload));
    return this.engine.call(op, payload);
  }

  private get engine(): EngineClient {
    if (!this.client) throw new Error('the engine is not running');
    return this.client;
  }

  // ---------------------------------------------------------------- settings

  /** The settings as a URL hash (without `#`), only what differs from the defaults. */
  get hash(): string {
    return formatHash(this.st, this.hashDefaults());
  }

  /** The hash of these settings with `p` changed (a link to another chapter, say), without `#`. */
  hashWith(p: Partial<PlaygroundState>): string {
    return formatHash({ ...this.st, ...p }, this.hashDefaults());
  }

  /** What the hash leaves out: the defaults, less the model where an assignment's link names it (namesAssignmentModel). */
  private hashDefaults(): PlaygroundState {
    const d = this.settings.defaultsFor(this.st.model);
    return this.assignmentModel && this.st.lessons.length ? { ...d, model: '' } : d;
  }

  private writeHash() {
    this.host.hash?.write(this.hash);
  }

  /** A pasted or edited link: apply it as a whole. */
  async applyHash(hash: string): Promise<void> {
    const want = `#${this.hash}`;
    if (hash === want || (hash === '' && want === '#')) return;
    this.assignmentModel = namesAssignmentModel(hash);
    const implied = this.settings.implyFrom(hash);
    const p = this.settings.parse(hash, this.settings.defaults);
    const notes = [...implied, ...p.notes];
    const next = this.settings.checkModel(p.state, notes);
    this.notes = notes;
    // Another lesson of an assignment opens on its own preset: the locks hold the settings
    // as the assignment's link opens that lesson (from the link as it was, under the lesson
    // open until now), not as the last lesson had them.
    const base = opensAssignedLesson(this.st, next)
      ? this.settings.checkModel(this.settings.parse(assignedLessonLocks(want.slice(1), next.lesson, this.st.lock), this.settings.defaults).state, [])
      : undefined;
    await this.apply(next, base);
  }

  /** Change some settings; a classroom link's locked settings stay as they are, and the page says so (`lockNote`). */
  patch(p: Partial<PlaygroundState>): Promise<void> {
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

  /** The share of the schedule's steps that cool down at its end (0 to 1; not a setting either). */
  setCooldown(share: number): void {
    this.cooldown = share;
    void this.updateSchedule();
  }

  /** The reader chose a colour theme: it holds here and stays out of links. */
  setTheme(t: Theme): void {
    this.settings.defaults = { ...this.settings.defaults, theme: t };
    this.st = { ...this.st, theme: t };
    this.writeHash();
    this.host.changed();
  }

  /** The reader chose a language (null: the browser's): it holds here and stays out of links. */
  setLang(l: Lang | null): void {
    this.settings.defaults = { ...this.settings.defaults, lang: l };
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
  async apply(asked: PlaygroundState, lockBase?: PlaygroundState): Promise<void> {
    const prev = this.st;
    // The state's setter keeps locked settings as they are (./locks.ts), or as `lockBase` has them.
    if (lockBase) this.hold(asked, lockBase);
    else this.st = asked;
    const next = this.st;
    const effects = effectsOf(prev, next);
    // The link says what the page is set to from the moment it is set, not once the model
    // has loaded; it is written again below after the selection is clamped.
    this.writeHash();
    this.host.changed();
    if (effects.size === 0) return;
    const has = (e: Effect) => effects.has(e);
    const causalDefault = this.info?.causal_default ?? true;
    const changed = describeSwitchChange(prev, next, causalDefault);
    if (changed && next.model === prev.model && next.text === prev.text) {
      this.previous = this.lastForward;
      this.previousState = prev;
      this.beforeLabel = changed;
    } else if (next.model !== prev.model || next.text !== prev.text) {
      this.previous = null;
      this.previousState = null;
      this.beforeLabel = '';
    }
    // A switch that restarts the generation keeps what it had written as the "before" of a
    // side-by-side (in the old model's spelling); an edited prompt starts a new comparison.
    if (next.text !== prev.text || next.batch.join('\n') !== prev.batch.join('\n')) this.genBefore = null;
    else if (has('restart') && this.gen.generated.length > 0) {
      const what = switchSides(prev, next, causalDefault, { generation: true, title: this.titleOf }).what;
      if (what) this.genBefore = this.keepGeneration(prev, what);
    }
    if (next.model !== prev.model) this.promptNote = '';
    try {
      if (has('reload')) {
        this.gen.reset();
        // Nothing of the old model stays on screen while the new one loads.
        this.fwdVersion++;
        this.lastForward = null;
        this.previous = null;
        // Another task (another vocabulary) keeps the prompt when its vocabulary spells
        // it, else starts from its own prompt and says which characters it could not
        // spell; a change that also set the text (a pasted link) uses that text, and a
        // sibling model keeps the input as it is.
        const task = (file: string) => this.manifest.find((m) => m.file === file)?.task;
        await this.loadModel(next.model, task(next.model) !== task(prev.model) && next.text === prev.text ? 'spell' : 'keep');
      }
      this.clampSelection();
      if (has('backend')) this.backendInfo = await this.engine.call('setBackend', { backend: this.st.backend });
      if (has('tokenize')) await this.retokenize();
      this.writeHash();
      if (has('restart') && this.canGenerate()) {
        // A generation that was running, or had finished, runs again under the new
        // settings (so the kept "before" gets its "after"); a paused one waits.
        const wasPlaying = this.gen.playing || this.gen.done || has('reload');
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

  /**
   * Load a shipped model. `text`: 'reset' starts from the model's own prompt (and clears
   * the batch, the heads switched off, the masks and the selection); 'spell' keeps the
   * prompt and the batch when the new vocabulary spells every character of them, and
   * otherwise resets, naming the characters it could not spell (`promptNote`); 'keep'
   * leaves the input as it is.
   */
  /** A restarted engine gets the model that is not a shipped one again (a run's weights, an imported file), with the settings as they were. */
  private async reloadCustom() {
    const hf = this.customHf;
    this.info = hf ? await this.engine.call('loadHf', { files: hf }) : await this.engine.call('loadBytes', { bytes: this.customBytes! });
    this.plan = await this.engine.call('layerPlan', {});
    this.heads = null;
    this.costReport = null;
    this.schedule = null;
    if (this.needs('schedule')) await this.updateSchedule();
  }

  private async loadModel(file: string, text: 'reset' | 'spell' | 'keep') {
    const entry = this.manifest.find((m) => m.file === file);
    if (!entry) throw new Error(`unknown model ${file}`);
    this.info = await this.engine.call('load', { url: new URL(entry.file, this.host.modelsBase).href });
    this.customModel = '';
    this.customBytes = null;
    this.customHf = null;
    if (this.readyAt === null) this.showProgress({ phase: 'engine', label: msg('Running the model for the first time'), done: 0, total: null });
    else this.showProgress(null);
    this.plan = await this.engine.call('layerPlan', {});
    const st = { ...this.st, model: file };
    let resetText = text === 'reset';
    if (text === 'spell') {
      const missing = await unspellable(this.engine, [st.text, ...st.batch]);
      resetText = missing.length > 0;
      this.promptNote = resetText && st.text !== entry.default_prompt ? cannotSpell(entry, missing) : '';
    }
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
    this.refuseOtherModel();
    // The loader's size limit and the device's room, before the bytes are copied (./custom-check.ts).
    await checkCheckpointSize(bytes);
    return this.useCustom(this.engine.call('loadBytes', { bytes }), label, { bytes }, text);
  }

  /** A Hugging Face config.json read by the engine (bad, or over its limits: its sentence) and held against this device, before anything large is read or fetched. */
  async checkHf(config: Uint8Array, modelBytes: number | null = null): Promise<HfCheck> {
    this.refuseOtherModel();
    return fitsDevice(await this.call('hfCheck', { config }), modelBytes);
  }

  /** A Hugging Face GPT-2 folder becomes the page's model, as `useCheckpoint` does a checkpoint (a bad one: the engine's sentence, nothing changes). */
  async useHfFolder(files: HfFiles, label: string, text?: string): Promise<ModelInfo> {
    await this.checkHf(files.config, files.model.length);
    return this.useCustom(this.engine.call('loadHf', { files }), label, { hf: files }, text);
  }

  /** Test-only hook (www/README.md): a Hugging Face folder's files made the page's model, as the "Load a model" dialog does. */
  async testOnlyLoadHf(files: HfFiles, label: string, text?: string): Promise<ModelInfo> {
    return this.useHfFolder(files, label, text);
  }

  /** Other weights are another model: a link that locks the model refuses them (says so and throws). */
  private refuseOtherModel(): void {
    if (!isLocked(this.st, 'model')) return;
    this.lockNote = this.words(() => refusedNote(['model']));
    this.host.changed();
    throw new Error(this.lockNote);
  }

  /** Once the engine has loaded it (`loading`), a model that is not a shipped one is the page's: everything starts again from it; its files are kept for a restarted engine. */
  private async useCustom(loading: Promise<ModelInfo>, label: string, kept: { bytes?: Uint8Array; hf?: HfFiles }, text?: string): Promise<ModelInfo> {
    let info = await loading;
    // A byte-level BPE's tokens as the text they spell (" cat", not "Ġcat"), for every view.
    if (info.tokenizer_kind === 'bpe') info = { ...info, vocab: readableVocab(info.vocab) };
    this.gen.reset();
    this.fwdVersion++;
    this.lastForward = null;
    this.previous = null;
    this.previousState = null;
    this.beforeLabel = '';
    this.genBefore = null;
    this.promptNote = '';
    this.info = info;
    this.customModel = label;
    this.customBytes = kept.bytes ?? null;
    this.customHf = kept.hf ?? null;
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

  /** The model's title in the page's language (its file when it is not a shipped one). */
  private readonly titleOf = (file: string): string => {
    const m = this.manifest.find((e) => e.file === file);
    return m ? modelTitle(m) : file;
  };

  /** The generation as it stands, to keep as the "before" of the change `what`. */
  private keepGeneration(state: PlaygroundState, what: string): GenBefore {
    const ids = [...this.gen.generated];
    return {
      ids,
      tokens: this.tokensOf(ids),
      prompt: [...this.promptTokens],
      done: this.gen.done,
      state,
      what,
      words: this.info?.tokenizer_kind === 'word',
    };
  }

  /** The settings of the kept generation and of now, in words ("√d_k scaling on" | "… off"). */
  genSides(): { before: string; after: string } | null {
    const b = this.genBefore;
    if (!b) return null;
    const s = switchSides(b.state, this.st, this.info?.causal_default ?? true, { generation: true, title: this.titleOf });
    return this.keep('genSides', s.what ? { before: s.before, after: s.after } : { before: msg('the same settings'), after: msg('the same settings') });
  }

  /**
   * The settings of the previous forward pass and of now, in words, for the views that
   * show the two side by side; null when there is no previous pass.
   */
  previousSides(): { before: string; after: string } | null {
    if (!this.previous) return null;
    const p = this.previousState;
    const s = p ? switchSides(p, this.st, this.info?.causal_default ?? true) : null;
    return this.keep('previousSides', s && s.what ? { before: s.before, after: s.after } : { before: this.beforeLabel, after: msg('now') });
  }

  /** The previous forward pass read the same tokens as the last one (its numbers compare position by position). */
  get previousSameInput(): boolean {
    const a = this.previous;
    const b = this.lastForward;
    if (!a || !b) return false;
    return JSON.stringify([a.tokens, a.src_tokens]) === JSON.stringify([b.tokens, b.src_tokens]);
  }

  /** Forget the kept generation (the reader dismissed the comparison). */
  dismissGenBefore(): void {
    this.genBefore = null;
    this.host.changed();
  }

  dismissPromptNote(): void {
    this.promptNote = '';
    this.host.changed();
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
      this.schedule = await this.engine.call('noam', { warmup: w, last_step: Math.min(1_000_000, Math.max(100, 5 * w)), points: 240, cooldown: this.cooldown });
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
    this.previousState = null;
    this.beforeLabel = this.st.mode === 'train' ? msg(str`train-mode draw ${this.draw} → ${this.draw + 1}`) : msg('eval mode, run again');
    this.draw++;
    await this.refresh();
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
    const fit = fitTrace(input, this.info);
    input = fit.input;
    if (fit.note || this.promptNote === this.traceCutNote) this.promptNote = fit.note;
    this.traceCutNote = fit.note;
    const req: ForwardRequest = {
      batch: input?.batch ?? [],
      src: input?.src ?? undefined,
      switches: this.switches(),
      sampling: this.sampling(),
      qkv: this.needs('qkv'),
      ffn: this.needs('ffn'),
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

  /** The note of the last cut `fitTrace` made (so that a later input that fits clears it, and only it). */
  private traceCutNote = '';

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

  get stats(): GenStats {
    return this.gen.stats;
  }
}
