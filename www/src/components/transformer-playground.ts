// <transformer-playground>: the whole playground as one element. It owns the settings
// table (mirrored in the URL hash), talks to the engine worker, and hands each stage's
// component the numbers it draws. Attributes:
//   model="file.safetensors"  the model to start with
//   preset="causal=0&text=…"  settings in the URL-hash format, applied before the hash
//   models="url/"             where manifest.json and the checkpoints are (default: beside this script)
//   no-hash                   do not read or write the page's URL hash (several widgets on one page)
//   theme="dark"              colours: light, dark or auto (the reader's system setting)
//   views="attention,output"  show only these parts (controls, backend, input, generation,
//                             architecture, attention, output, hidden, saturation, cost,
//                             schedule); default: all

import { LitElement, html, css, nothing } from 'lit';
import { EngineClient } from '../engine/client';
import type {
  AttnSite,
  BackendInfo,
  CostReport,
  ForwardRequest,
  ForwardResult,
  GenerateStartRequest,
  HeadRef,
  ManifestEntry,
  ModelInfo,
  Sampling,
  Schedule,
  Switches,
  Tokenized,
} from '../engine/protocol';
import { DEFAULTS, formatHash, parseHash, parseTheme, quote, toggleAblation, type Parsed, type PlaygroundState, type Theme } from '../state/url';
import { panel, theme } from '../ui/shared';
import { prefersReducedMotion, storedTheme, storeTheme } from '../ui/prefs';
import { GenerationRunner, type GenStats } from '../state/generation';
import './tp-controls';
import './tp-backend-badge';
import './tp-input';
import './tp-architecture';
import './tp-attention';
import './tp-hidden';
import './tp-output';
import './tp-generation';
import './tp-saturation';
import './tp-cost';
import './tp-schedule';


function validManifest(x: unknown): ManifestEntry[] {
  if (!Array.isArray(x)) throw new Error('models/manifest.json is not a list');
  return x.filter(
    (m): m is ManifestEntry =>
      m && typeof m.file === 'string' && /^[A-Za-z0-9_.-]+\.safetensors$/.test(m.file) && typeof m.title === 'string',
  );
}

/** The run-time switch that changed between two settings, in words; '' when none did. */
function describeSwitchChange(a: PlaygroundState, b: PlaygroundState, causalDefault: boolean): string {
  const onOff = (v: boolean) => (v ? 'on' : 'off');
  const parts: string[] = [];
  const ca = a.causal ?? causalDefault;
  const cb = b.causal ?? causalDefault;
  if (ca !== cb) parts.push(`causal mask ${onOff(ca)} → ${onOff(cb)}`);
  if (a.pad !== b.pad) parts.push(`padding mask ${onOff(a.pad)} → ${onOff(b.pad)}`);
  if (a.scale !== b.scale) parts.push(`√d_k scaling ${onOff(a.scale)} → ${onOff(b.scale)}`);
  if (a.ablate.length !== b.ablate.length || a.ablate.some((h, i) => h.site !== b.ablate[i].site || h.layer !== b.ablate[i].layer || h.head !== b.ablate[i].head)) {
    parts.push(`${a.ablate.length} → ${b.ablate.length} heads switched off`);
  }
  if (a.backend !== b.backend) parts.push(`${a.backend} → ${b.backend}`);
  return parts.join(', ');
}

export class TransformerPlayground extends LitElement {
  static properties = {
    model: { type: String },
    preset: { type: String },
    models: { type: String },
    noHash: { type: Boolean, attribute: 'no-hash' },
    views: { type: String },
    st: { state: true },
    manifest: { state: true },
    info: { state: true },
    backendInfo: { state: true },
    notes: { state: true },
    error: { state: true },
    tokenized: { state: true },
    lastForward: { state: true },
    cell: { state: true },
    row: { state: true },
    costReport: { state: true },
    schedule: { state: true },
  };

  model = '';
  preset = '';
  models = '';
  noHash = false;
  views = '';

  st: PlaygroundState = { ...DEFAULTS };
  manifest: ManifestEntry[] = [];
  info: ModelInfo | null = null;
  backendInfo: BackendInfo | null = null;
  notes: string[] = [];
  error = '';
  tokenized: Tokenized[] = [];
  /** The latest forward pass with its traces (read by the browser tests). */
  lastForward: ForwardResult | null = null;
  /** The generation loop and what it has produced. */
  private gen = new GenerationRunner({
    engine: () => this.engine,
    request: () => this.generationRequest(),
    pauseMs: () => this.st.speed,
    changed: () => this.requestUpdate(),
    afterStep: () => this.refresh(),
    failed: (e) => this.fail(e),
  });
  // Read by the browser tests and the benchmark.
  get generated(): number[] {
    return this.gen.generated;
  }
  get done(): boolean {
    return this.gen.done;
  }
  get playing(): boolean {
    return this.gen.playing;
  }
  get genNote(): string {
    return this.gen.note;
  }
  get stats(): GenStats {
    return this.gen.stats;
  }
  cell = { i: 0, j: 0 };
  /** The cost panel's numbers for `heads` heads (read by the browser tests). */
  costReport: CostReport | null = null;
  /** The Noam schedule for this model's d_model and `warmup` (read by the browser tests). */
  schedule: Schedule | null = null;
  /** Heads the cost panel counts with (null: the model's own). */
  private heads: number | null = null;
  private warmup = 4000;
  /** Which sequence of the batch the views show. */
  row = 0;
  /** The forward pass before the last switch changed, and what changed. */
  private previous: ForwardResult | null = null;
  private beforeLabel = '';
  /** Milliseconds from connection to the first drawn forward pass. */
  readyMs: number | null = null;
  /** performance.now() when the first forward pass was drawn (from navigation start). */
  readyAt: number | null = null;

  private client: EngineClient | null = null;
  private defaults: PlaygroundState = { ...DEFAULTS };
  private fwdVersion = 0;
  private textTimer: ReturnType<typeof setTimeout> | undefined;
  private onHash = () => this.applyHash();
  private resolveReady!: () => void;
  /** Settles when the page first shows a real forward pass. */
  readonly ready: Promise<void> = new Promise((r) => (this.resolveReady = r));

  static styles = [
    theme,
    panel,
    css`
      .bar {
        display: flex;
        gap: 12px;
        align-items: center;
        justify-content: flex-end;
        flex-wrap: wrap;
        font-size: 0.85rem;
        color: var(--tp-muted);
      }
      .bar .hint {
        margin-right: auto;
      }
      .layout {
        display: grid;
        grid-template-columns: minmax(0, 1fr) minmax(0, 1fr);
        gap: 12px;
      }
      .wide {
        grid-column: 1 / -1;
      }
      tp-saturation,
      tp-cost,
      tp-schedule {
        align-self: start;
      }
      .layout.single {
        grid-template-columns: minmax(0, 1fr);
      }
      @media (max-width: 900px) {
        .layout {
          grid-template-columns: minmax(0, 1fr);
        }
      }
      .notes {
        border: 1px solid var(--tp-warn);
        background: var(--tp-warn-soft);
        color: var(--tp-fg);
        border-radius: 8px;
        padding: 6px 10px;
        font-size: 0.85rem;
      }
      .notes ul {
        margin: 4px 0 0;
        padding-left: 1.2em;
      }
      .notes button {
        float: right;
      }
      .error {
        border: 2px solid var(--tp-error);
        border-radius: 8px;
        padding: 8px 12px;
      }
    `,
  ];

  /** The system asked for reduced motion when the element started. */
  reducedMotion = false;

  // ---------------------------------------------------------------- lifecycle

  protected willUpdate(): void {
    // The colour theme lives on the host, where every view's colours are inherited from.
    if (this.st.theme === 'auto') this.removeAttribute('theme');
    else if (this.getAttribute('theme') !== this.st.theme) this.setAttribute('theme', this.st.theme);
  }

  /** The reader chose a theme: it holds here, is remembered, and stays out of links. */
  private setTheme(t: Theme) {
    storeTheme(t);
    this.defaults = { ...this.defaults, theme: t };
    this.st = { ...this.st, theme: t };
    this.writeHash();
  }

  connectedCallback(): void {
    super.connectedCallback();
    if (!this.noHash) window.addEventListener('hashchange', this.onHash);
    this.start().catch((e) => this.fail(e));
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    window.removeEventListener('hashchange', this.onHash);
    this.gen.reset();
    this.client?.terminate();
    this.client = null;
  }

  private fail(e: unknown) {
    this.error = e instanceof Error ? e.message : String(e);
    console.warn('playground:', this.error);
  }

  private modelsBase(): URL {
    return new URL(this.models || './models/', this.models ? document.baseURI : import.meta.url);
  }

  private async start() {
    const t0 = performance.now();
    this.client = new EngineClient();
    this.client.onEvent((e) => {
      if (e.event === 'backend') this.backendInfo = e.info;
    });
    const resp = await fetch(new URL('manifest.json', this.modelsBase()));
    if (!resp.ok) throw new Error(`cannot load the model list (HTTP ${resp.status})`);
    this.manifest = validManifest(await resp.json());
    if (!this.manifest.length) throw new Error('the model list is empty');
    const first = this.manifest.find((m) => m.file === this.model) ?? this.manifest[0];
    // The reader's own preferences: the theme they chose last (or the embedder's), and no
    // playback on load when their system asks for reduced motion (a link may still ask).
    this.reducedMotion = prefersReducedMotion();
    this.defaults = {
      ...DEFAULTS,
      model: first.file,
      text: first.default_prompt,
      theme: parseTheme(this.getAttribute('theme') ?? '') ?? storedTheme(),
      play: !this.reducedMotion,
    };
    const notes: string[] = [];
    if (this.preset) {
      const p = this.parseSettings(this.preset, this.defaults);
      this.defaults = p.state;
      notes.push(...p.notes);
    }
    const parsed = this.noHash ? { state: this.defaults, notes: [] } : this.parseSettings(location.hash, this.defaults);
    notes.push(...parsed.notes);
    this.st = this.checkModel(parsed.state, notes);
    this.notes = notes;
    await this.loadModel(this.st.model, false);
    this.backendInfo = await this.client.call('setBackend', { backend: this.st.backend });
    await this.retokenize();
    await this.refresh();
    await this.updateComplete;
    this.readyAt = performance.now();
    this.readyMs = this.readyAt - t0;
    this.resolveReady();
    this.dispatchEvent(new CustomEvent('tp-ready', { detail: { ms: this.readyMs } }));
    this.writeHash();
    if (this.canGenerate()) await this.gen.start(this.st.play);
  }

  /** The defaults for a state that runs `model`: that model's own default prompt. */
  private defaultsFor(model: string): PlaygroundState {
    const entry = this.manifest.find((m) => m.file === model);
    return { ...this.defaults, text: entry ? entry.default_prompt : this.defaults.text };
  }

  /** Parse settings; a link that names a model but no text gets that model's prompt. */
  private parseSettings(text: string, base: PlaygroundState): Parsed {
    const first = parseHash(text, base);
    const entry = this.manifest.find((m) => m.file === first.state.model);
    if (!entry || entry.file === base.model) return first;
    return parseHash(text, { ...base, text: entry.default_prompt });
  }

  /** A model named by a link must be one of the shipped ones. */
  private checkModel(s: PlaygroundState, notes: string[]): PlaygroundState {
    if (this.manifest.some((m) => m.file === s.model)) return s;
    notes.push(`Ignored model=${quote(s.model)}: not one of the shipped models.`);
    return { ...s, model: this.defaults.model };
  }

  // ---------------------------------------------------------------- engine calls

  private get engine(): EngineClient {
    if (!this.client) throw new Error('the engine is not running');
    return this.client;
  }

  private async loadModel(file: string, resetText: boolean) {
    const entry = this.manifest.find((m) => m.file === file);
    if (!entry) throw new Error(`unknown model ${file}`);
    this.info = await this.engine.call('load', { url: new URL(entry.file, this.modelsBase()).href });
    const st = { ...this.st, model: file };
    if (resetText) {
      st.text = entry.default_prompt;
      st.batch = [];
      st.ablate = [];
      st.causal = null;
      st.layer = 0;
      st.head = 0;
      st.site = null;
    }
    if (st.site !== null && !this.sites().includes(st.site)) st.site = null;
    this.st = st;
    this.clampSelection();
    this.heads = null;
    this.costReport = null;
    await this.updateSchedule();
  }

  /** Count the cost of the model with the chosen heads, for the current input length. */
  private async updateCost() {
    const info = this.info;
    const f = this.lastForward;
    if (!info || !f) return;
    // The input's length: the source of a translation, the prompt and what followed it otherwise.
    const input = info.arch === 'encoder_decoder' ? f.src_tokens[0]?.length : f.tokens[0]?.length;
    const context = Math.max(1, Math.min(info.max_len, input ?? 1));
    const n_heads = this.heads ?? info.n_heads;
    const c = this.costReport;
    if (c && c.n_heads === n_heads && c.context === context && c.d_model === info.d_model) return;
    try {
      this.costReport = await this.engine.call('cost', { n_heads, context });
    } catch (e) {
      this.fail(e);
    }
  }

  private async updateSchedule() {
    const w = this.warmup;
    try {
      this.schedule = await this.engine.call('noam', { warmup: w, last_step: Math.min(1_000_000, Math.max(100, 5 * w)), points: 240 });
    } catch (e) {
      this.fail(e);
    }
  }

  private sites(): AttnSite[] {
    const a = this.info?.arch;
    if (a === 'encoder_only') return ['encoder_self'];
    if (a === 'decoder_only') return ['decoder_self'];
    // Encoder-decoder: cross-attention first, where the alignment of the translation shows.
    return ['cross', 'decoder_self', 'encoder_self'];
  }

  private defaultSite(): AttnSite {
    return this.sites()[0];
  }

  private clampSelection() {
    const info = this.info;
    if (!info) return;
    const site = this.st.site ?? this.defaultSite();
    const layers = site === 'encoder_self' ? info.encoder_layers : info.decoder_layers;
    const layer = Math.min(this.st.layer, Math.max(0, layers - 1));
    const head = Math.min(this.st.head, info.n_heads - 1);
    const ablate = this.st.ablate.filter(
      (h) => this.sites().includes(h.site) && h.head < info.n_heads && h.layer < (h.site === 'encoder_self' ? info.encoder_layers : info.decoder_layers),
    );
    if (layer !== this.st.layer || head !== this.st.head || ablate.length !== this.st.ablate.length) {
      this.st = { ...this.st, layer, head, ablate };
    }
  }

  private canGenerate(): boolean {
    return this.info !== null && this.info.arch !== 'encoder_only';
  }

  private switches(): Switches {
    return { causal: this.st.causal ?? this.info?.arch !== 'encoder_only', padding_mask: this.st.pad, scale: this.st.scale, ablate: this.st.ablate };
  }

  private sampling(): Sampling {
    return {
      strategy: this.st.strategy,
      temperature: this.st.temp,
      top_k: this.st.topk,
      top_p: this.st.topp,
      beam_width: this.st.beam,
      seed: this.st.seed,
    };
  }

  private async retokenize() {
    const texts = [this.st.text, ...this.st.batch.filter((l) => l.trim() !== '')];
    const out: Tokenized[] = [];
    for (const text of texts) out.push(await this.engine.call('tokenize', { text }));
    this.tokenized = out;
  }

  /** What the decoder (or the encoder of an encoder-only model) reads, per batch row. */
  private targetRows(): number[][] {
    const info = this.info;
    if (!info) return [];
    // A classifier reads its answer at position 0, where training put <bos>; a tagger
    // reads the words alone.
    if (info.arch === 'encoder_only') return this.tokenized.map((t) => (info.num_classes > 0 ? [info.bos, ...t.ids] : t.ids));
    if (info.arch === 'encoder_decoder') return [[info.bos, ...this.generated]];
    return this.tokenized.map((t, b) => [info.bos, ...t.ids, ...(b === 0 ? this.generated : [])]);
  }

  private srcRows(): number[][] | undefined {
    if (this.info?.arch !== 'encoder_decoder') return undefined;
    return this.tokenized.slice(0, 1).map((t) => t.ids);
  }

  /** One forward pass with traces of what is on screen now. */
  private async refresh() {
    const version = ++this.fwdVersion;
    const req: ForwardRequest = {
      batch: this.targetRows(),
      src: this.srcRows(),
      switches: this.switches(),
      sampling: this.sampling(),
      qkv: this.shows('attention'),
    };
    try {
      const r = await this.engine.call('forward', req);
      if (version === this.fwdVersion) {
        this.lastForward = r;
        this.error = '';
        await this.updateCost();
      }
    } catch (e) {
      this.fail(e);
    }
  }

  // ---------------------------------------------------------------- generation

  /** What a fresh generation starts from: the prompt (or source) as the model was trained. */
  private generationRequest(): GenerateStartRequest | null {
    const info = this.info;
    if (!info || !this.canGenerate()) return null;
    const row0 = this.tokenized[0]?.ids ?? [];
    return {
      prompt: info.arch === 'encoder_decoder' ? [info.bos] : [info.bos, ...row0],
      src: info.arch === 'encoder_decoder' ? row0 : undefined,
      switches: this.switches(),
      sampling: this.sampling(),
      max_new_tokens: this.st.max,
    };
  }

  // ---------------------------------------------------------------- settings

  private writeHash() {
    if (this.noHash) return;
    const h = formatHash(this.st, this.defaultsFor(this.st.model));
    const url = `${location.pathname}${location.search}${h ? `#${h}` : ''}`;
    history.replaceState(null, '', url);
  }

  /** A pasted or edited link: apply it as a whole. */
  private async applyHash() {
    const want = `#${formatHash(this.st, this.defaultsFor(this.st.model))}`;
    if (location.hash === want || (location.hash === '' && want === '#')) return;
    const p = this.parseSettings(location.hash, this.defaults);
    const notes = [...p.notes];
    const next = this.checkModel(p.state, notes);
    this.notes = notes;
    await this.applySettings(next);
  }

  /** Apply new settings: reload, retokenize, rerun and restart only what they touch. */
  private async applySettings(next: PlaygroundState) {
    const prev = this.st;
    this.st = next;
    // The link says what the page is set to from the moment it is set, not once the model
    // has loaded; it is written again below after the selection is clamped.
    this.writeHash();
    const changed = describeSwitchChange(prev, next, this.info?.arch !== 'encoder_only');
    if (changed && next.model === prev.model && next.text === prev.text) {
      this.previous = this.lastForward;
      this.beforeLabel = changed;
    } else if (next.model !== prev.model || next.text !== prev.text) {
      this.previous = null;
      this.beforeLabel = '';
    }
    try {
      if (next.model !== prev.model) {
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
      if (next.backend !== prev.backend) {
        this.backendInfo = await this.engine.call('setBackend', { backend: next.backend });
      }
      if (next.model !== prev.model || next.text !== prev.text || next.batch.join('\n') !== prev.batch.join('\n')) {
        await this.retokenize();
      }
      const restart =
        next.model !== prev.model ||
        next.text !== prev.text ||
        next.backend !== prev.backend ||
        next.causal !== prev.causal ||
        next.pad !== prev.pad ||
        next.scale !== prev.scale ||
        next.seed !== prev.seed ||
        next.strategy !== prev.strategy ||
        next.temp !== prev.temp ||
        next.topk !== prev.topk ||
        next.topp !== prev.topp ||
        next.beam !== prev.beam ||
        next.max !== prev.max ||
        formatHash({ ...DEFAULTS, ablate: next.ablate }) !== formatHash({ ...DEFAULTS, ablate: prev.ablate });
      this.writeHash();
      if (restart && this.canGenerate()) {
        const wasPlaying = this.gen.playing || next.model !== prev.model;
        this.gen.reset();
        await this.refresh();
        if (wasPlaying && this.st.play) await this.gen.start(true);
      } else {
        await this.refresh();
      }
    } catch (e) {
      this.fail(e);
    }
  }

  private patch(p: Partial<PlaygroundState>) {
    void this.applySettings({ ...this.st, ...p });
  }

  private samplingPatch(p: Partial<Sampling>) {
    const m: Partial<PlaygroundState> = {};
    if (p.strategy !== undefined) m.strategy = p.strategy;
    if (p.temperature !== undefined) m.temp = p.temperature;
    if (p.top_k !== undefined) m.topk = p.top_k;
    if (p.top_p !== undefined) m.topp = p.top_p;
    if (p.beam_width !== undefined) m.beam = p.beam_width;
    this.patch(m);
  }

  private onText(text: string) {
    clearTimeout(this.textTimer);
    this.textTimer = setTimeout(() => this.patch({ text }), 200);
  }

  // ---------------------------------------------------------------- drawing

  /** The input as the model saw it (padded), without the tokens generated after it. */
  private inputRows(): number[][] {
    const f = this.lastForward;
    const info = this.info;
    if (!f || !info) return [];
    if (info.arch === 'encoder_decoder') return f.src_tokens;
    if (info.arch === 'encoder_only') return f.tokens;
    const promptLen = 1 + (this.tokenized[0]?.ids.length ?? 0);
    return f.tokens.map((row, b) => (b === 0 ? row.slice(0, promptLen) : row));
  }

  private tokensOf(ids: number[]): string[] {
    const v = this.info?.vocab ?? [];
    return ids.map((id) => v[id] ?? `?${id}`);
  }

  /** Is this part of the playground shown (the `views` attribute)? */
  private shows(part: string): boolean {
    if (!this.views.trim()) return true;
    return this.views.split(',').some((v) => v.trim() === part);
  }

  /** Page-wide preferences above the controls: the colour theme. */
  private bar() {
    const still = this.reducedMotion && !this.gen.playing && this.gen.generated.length === 0 && this.canGenerate();
    return html`<div class="bar wide">
      ${still ? html`<span class="hint" data-reduced-motion>Your system asks for reduced motion, so generation waits for Play.</span>` : nothing}
      <label
        >Colours
        <select
          aria-label="colour theme"
          @change=${(e: Event) => this.setTheme((e.target as HTMLSelectElement).value as Theme)}
        >
          ${(['auto', 'light', 'dark'] as const).map(
            (t) => html`<option value=${t} ?selected=${this.st.theme === t}>${t === 'auto' ? 'as the system' : t}</option>`,
          )}
        </select></label
      >
    </div>`;
  }

  render() {
    if (this.error && !this.info) return html`<div class="error" role="alert">The playground could not start: ${this.error}</div>`;
    const info = this.info;
    const f = this.lastForward;
    // No site in the settings: the model's most telling one (kept out of the URL).
    const site = this.st.site ?? this.defaultSite();
    const row = Math.min(this.row, Math.max(0, (f?.tokens.length ?? 1) - 1));
    const rowIds = f?.tokens[row] ?? [];
    const srcIds = f?.src_tokens[row] ?? f?.src_tokens[0] ?? [];
    const queryTokens = this.tokensOf(site === 'encoder_self' && info?.arch === 'encoder_decoder' ? srcIds : rowIds);
    const keyTokens = this.tokensOf(site === 'decoder_self' || info?.arch !== 'encoder_decoder' ? rowIds : srcIds);
    const trace = f?.attention.find((a) => a.site === site && a.layer === this.st.layer) ?? null;
    const inputLabel = info?.arch === 'encoder_decoder' ? 'Source sentence' : info?.arch === 'encoder_only' ? 'Input' : 'Prompt';
    const promptTokens = info?.arch === 'encoder_decoder' ? this.tokensOf([info.bos]) : this.tokensOf(info ? [info.bos, ...(this.tokenized[0]?.ids ?? [])] : []);
    const single = this.views.trim() !== '' && this.views.split(',').filter((v) => v.trim()).length === 1;
    return html`<div class="layout ${single ? 'single' : ''}">
      ${this.notes.length
        ? html`<div class="notes wide" role="status" data-notes>
            <button @click=${() => (this.notes = [])} aria-label="dismiss the notes">×</button>
            <strong>Some settings in the link were not used:</strong>
            <ul>
              ${this.notes.map((n) => html`<li>${n}</li>`)}
            </ul>
          </div>`
        : nothing}
      ${this.error ? html`<div class="error wide" role="alert">${this.error}</div>` : nothing}
      ${this.shows('controls') ? this.bar() : nothing}
      ${this.shows('controls') ? html`<tp-controls
        class="wide"
        .manifest=${this.manifest}
        .state=${this.st}
        .info=${info}
        .causalDefault=${info?.arch !== 'encoder_only'}
        @tp-state=${(e: CustomEvent<Partial<PlaygroundState>>) => this.patch(e.detail)}
      ></tp-controls>` : nothing}
      ${this.shows('backend') ? html`<tp-backend-badge class="wide" .info=${this.backendInfo}></tp-backend-badge>` : nothing}
      ${this.shows('input') ? html`<tp-input
        .text=${this.st.text}
        .batch=${this.st.batch}
        .label=${inputLabel}
        .info=${info}
        .tokenized=${this.tokenized}
        .padded=${this.inputRows()}
        @tp-text=${(e: CustomEvent<string>) => this.onText(e.detail)}
        @tp-batch=${(e: CustomEvent<string[]>) => this.patch({ batch: e.detail })}
      ></tp-input>` : nothing}
      ${this.canGenerate() && this.shows('generation')
        ? html`<tp-generation
            .info=${info}
            .prompt=${promptTokens}
            .generated=${this.gen.generated}
            .playing=${this.gen.playing}
            .done=${this.gen.done}
            .speed=${this.st.speed}
            .stats=${this.gen.stats}
            .step=${this.gen.step}
            .strategy=${this.st.strategy}
            .note=${this.gen.note}
            .max=${this.st.max}
            @tp-max=${(e: CustomEvent<number>) => this.patch({ max: e.detail })}
            .label=${info?.arch === 'encoder_decoder' ? 'Translation' : 'Generation'}
            @tp-play=${() => void this.gen.play()}
            @tp-pause=${() => this.gen.pause()}
            @tp-step=${() => void this.gen.stepOne()}
            @tp-restart=${() => void this.gen.start(true)}
            @tp-speed=${(e: CustomEvent<number>) => {
              this.st = { ...this.st, speed: e.detail };
              this.writeHash();
            }}
          ></tp-generation>`
        : !this.canGenerate() && this.shows('output')
        ? html`<tp-output
            .info=${info}
            .modelProbs=${f?.model_probs ?? null}
            .sampleProbs=${f?.next_probs ?? null}
            .classProbs=${f?.class_probs ?? null}
            .predicted=${f?.predicted ?? []}
            .classNames=${this.manifest.find((m) => m.file === this.st.model)?.classes ?? []}
            .inputTokens=${this.tokensOf(rowIds)}
            .sampling=${this.sampling()}
          ></tp-output>`
        : nothing}
      ${this.shows('architecture') ? html`<tp-architecture
        .info=${info}
        .site=${site}
        .layer=${this.st.layer}
        .head=${this.st.head}
        .cell=${this.cell}
        .trace=${trace}
        .queryTokens=${queryTokens}
        .keyTokens=${keyTokens}
        .row=${row}
        .scaleOn=${this.st.scale}
        .causalOn=${this.switches().causal}
        .paddingOn=${this.st.pad}
        @tp-select=${(e: CustomEvent<{ site: AttnSite; layer: number; head: number }>) => this.patch(e.detail)}
      ></tp-architecture>` : nothing}
      ${this.shows('attention') ? html`<tp-attention
        .attention=${f?.attention ?? []}
        .site=${site}
        .layer=${this.st.layer}
        .head=${this.st.head}
        .queryTokens=${queryTokens}
        .keyTokens=${keyTokens}
        .row=${row}
        .ablate=${this.st.ablate}
        .scaleOn=${this.st.scale}
        .score=${info?.score ?? 'scaled_dot'}
        .posEncoding=${info?.pos_encoding ?? ''}
        .previous=${this.previous?.attention ?? []}
        .beforeLabel=${this.previous ? this.beforeLabel : ''}
        @tp-select=${(e: CustomEvent<{ site: AttnSite; layer: number; head: number }>) => this.patch(e.detail)}
        @tp-ablate=${(e: CustomEvent<HeadRef>) => this.patch({ ablate: toggleAblation(this.st, e.detail) })}
        @tp-focus=${(e: CustomEvent<{ i: number; j: number }>) => (this.cell = e.detail)}
        @tp-row=${(e: CustomEvent<number>) => (this.row = e.detail)}
      ></tp-attention>` : nothing}
      ${this.canGenerate() && this.shows('output')
        ? html`<tp-output
            .info=${info}
            .modelProbs=${f?.model_probs ?? null}
            .sampleProbs=${f?.next_probs ?? null}
            .sampling=${this.sampling()}
            @tp-sampling=${(e: CustomEvent<Partial<Sampling>>) => this.samplingPatch(e.detail)}
          ></tp-output>`
        : nothing}
      ${this.shows('hidden') ? html`<tp-hidden
        .states=${f?.hidden ?? []}
        .info=${info}
        .tokens=${this.tokensOf(rowIds)}
        .srcTokens=${this.tokensOf(srcIds)}
        .row=${row}
        .selectedLayer=${this.st.layer}
      ></tp-hidden>` : nothing}
      ${this.shows('saturation') ? html`<tp-saturation
        .attention=${f?.attention ?? []}
        .previous=${this.previous?.attention ?? []}
        .site=${site}
        .layer=${this.st.layer}
        .row=${row}
        .scaleOn=${this.st.scale}
        .beforeLabel=${this.previous ? this.beforeLabel : ''}
      ></tp-saturation>` : nothing}
      ${this.shows('cost') ? html`<tp-cost
        .report=${this.costReport}
        .info=${info}
        @tp-heads=${(e: CustomEvent<number>) => {
          this.heads = e.detail;
          void this.updateCost();
        }}
      ></tp-cost>` : nothing}
      ${this.shows('schedule') ? html`<tp-schedule
        .schedule=${this.schedule}
        @tp-warmup=${(e: CustomEvent<number>) => {
          this.warmup = e.detail;
          void this.updateSchedule();
        }}
      ></tp-schedule>` : nothing}
    </div>`;
  }
}

customElements.define('transformer-playground', TransformerPlayground);
