// `weights`: edit a number of the model, watch everything change. Pick a vector of the
// loaded model — a token's embedding (a token of the prompt), a row of a head's W_Q, W_K
// or W_V, that head's bias, or one FFN unit (its row of W₁, its bias, its column of W₂) —
// drawn as a strip of cells with the values the engine holds now. Drag a cell up or down,
// press ↑ / ↓ on it (Shift: ten times as far), or type a value; every view recomputes
// from the edited model. Edited cells are marked, the "changed" list names every tensor
// that differs from the trained model, and one click restores a value, a tensor or all.
// The values, the trained values and the list all come from the engine
// (crate/src/engine/weights.rs); the page only picks which flat indices to ask for.

import { html, css, nothing, type PropertyValues } from 'lit';
import { msg, str } from '@lit/localize';
import type { ModelInfo, WeightEdits, WeightSelection, WeightValues } from '../engine/protocol';
import type { WeightEditor } from '../state/weights';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import { lockedNote, whyLocked } from '../ui/locked';
import { panel, styles } from '../ui/shared';
import { diverging, inkOnDiverging, fmt, showToken } from '../ui/palette';
import { download } from '../ui/export';

type Mode = 'embedding' | 'qkv' | 'bias' | 'ffn';
type Part = 0 | 1 | 2;

/** One strip: a selection of one tensor, with its label. */
interface Strip {
  key: string;
  label: string;
  sel: WeightSelection & { start: number; count: number; stride: number };
}

export class TpWeights extends LocalizedElement {
  static properties = {
    editor: { attribute: false },
    info: { attribute: false },
    edits: { attribute: false },
    promptIds: { attribute: false },
    modelName: { type: String },
    mode: { type: String },
    stack: { type: String },
    layer: { type: Number },
    head: { type: Number },
    proj: { type: Number },
    row: { type: Number },
    unit: { type: Number },
    token: { type: Number },
    values: { state: true },
    focused: { state: true },
    problem: { state: true },
    lock: { attribute: false },
  };

  /** Classroom mode: the settings the link locked (a locked model refuses edited weights; the view says so). */
  lock: readonly string[] = [];

  editor: WeightEditor | null = null;
  info: ModelInfo | null = null;
  /** What is edited now (the store's, from the engine). */
  edits: WeightEdits = { edits: [], changed: 0 };
  /** The prompt's token ids: the embedding's tokens to pick from. */
  promptIds: number[] = [];
  modelName = 'model';
  mode: Mode = 'embedding';
  stack: 'encoder' | 'decoder' | 'cross' = 'decoder';
  layer = 0;
  head = 0;
  /** W_Q, W_K or W_V. */
  proj: Part = 0;
  /** The row of the head's block (0 … d_head − 1). */
  row = 0;
  /** The FFN unit (0 … d_ff − 1). */
  unit = 0;
  /** The token whose embedding is shown (−1: the prompt's first after `<bos>`). */
  token = -1;
  /** The engine's values of each strip, by key. */
  values = new Map<string, WeightValues>();
  /** The focused cell: strip key and position in it. */
  focused: { key: string; i: number } | null = null;
  problem = '';

  private readVersion = 0;
  private drag: { strip: Strip; i: number; y: number; v0: number; scale: number } | null = null;

  static styles = [
    panel,
    css`
      .pick {
        display: flex;
        flex-wrap: wrap;
        gap: 6px 12px;
        align-items: center;
        font-size: 0.85rem;
        margin-bottom: 8px;
      }
      .tokens button {
        font-family: var(--tp-mono);
        padding: 1px 6px;
      }
      .tokens button[aria-pressed='true'] {
        outline: 2px solid var(--tp-accent);
      }
      .strip-label {
        font-family: var(--tp-mono);
        font-size: 0.78rem;
        margin: 8px 0 3px;
        overflow-wrap: anywhere;
      }
      .strip {
        display: flex;
        flex-wrap: wrap;
        gap: 2px;
        touch-action: none;
      }
      .cell {
        box-sizing: border-box;
        min-width: 3.1em;
        padding: 3px 2px;
        text-align: center;
        font-family: var(--tp-mono);
        font-size: 0.7rem;
        border: 1px solid transparent;
        border-radius: 3px;
        cursor: ns-resize;
        user-select: none;
        color: #111;
      }
      .cell.edited {
        border-color: var(--tp-warn, #b35806);
        box-shadow: inset 0 -3px 0 var(--tp-warn, #b35806);
      }
      .cell:focus-visible,
      .cell.focused {
        outline: 2px solid var(--tp-accent);
        outline-offset: 1px;
      }
      .editor {
        display: flex;
        flex-wrap: wrap;
        gap: 6px 10px;
        align-items: center;
        margin-top: 10px;
        font-size: 0.85rem;
      }
      .editor input {
        width: 8em;
        font-family: var(--tp-mono);
      }
      .changed {
        margin-top: 10px;
        font-size: 0.85rem;
      }
      .changed ul {
        margin: 4px 0;
        padding-left: 1.2em;
      }
      .changed code {
        overflow-wrap: anywhere;
      }
      .problem {
        color: var(--tp-warn);
        font-size: 0.85rem;
      }
    `,
  ];

  // ---------------------------------------------------------------- what is shown

  /** The stacks (and attention kinds) this model has. */
  private stacks(): ('encoder' | 'decoder' | 'cross')[] {
    const info = this.info;
    if (!info) return [];
    const out: ('encoder' | 'decoder' | 'cross')[] = [];
    if (info.encoder_layers > 0) out.push('encoder');
    if (info.decoder_layers > 0) out.push('decoder');
    if (info.arch === 'encoder_decoder' && this.mode !== 'ffn') out.push('cross');
    return out;
  }

  private layers(): number {
    const info = this.info;
    if (!info) return 0;
    return this.stack === 'encoder' ? info.encoder_layers : info.decoder_layers;
  }

  /** The token whose embedding is shown. */
  private shownToken(): number {
    if (this.token >= 0) return this.token;
    const bos = this.info?.bos;
    return this.promptIds.find((id) => id !== bos) ?? this.promptIds[0] ?? 0;
  }

  private embedName(): string {
    const arch = this.info?.arch;
    // An encoder-decoder with separate tables is read from the tensor list; the others have one.
    if (arch === 'encoder_decoder' && this.tables.includes('src_embed.weight')) return this.stack === 'encoder' ? 'src_embed.weight' : 'tgt_embed.weight';
    return 'embed.weight';
  }

  /** Tensor names of the loaded model (from the engine). */
  private tables: string[] = [];

  /** The strips of the current choice, each a selection of one tensor. */
  strips(): Strip[] {
    const info = this.info;
    if (!info) return [];
    const C = info.d_model;
    const D = info.d_head;
    const F = info.d_ff;
    const site = this.stack === 'cross' ? 'decoder' : this.stack;
    const attn = this.stack === 'cross' ? 'multihead_attn' : 'self_attn';
    const l = Math.min(this.layer, Math.max(0, this.layers() - 1));
    const h = Math.min(this.head, info.n_heads - 1);
    const qkv = ['W_Q', 'W_K', 'W_V'][this.proj];
    const b = ['b_Q', 'b_K', 'b_V'][this.proj];
    const strip = (key: string, label: string, name: string, start: number, count: number, stride = 1): Strip => ({ key, label, sel: { name, start, count, stride } });
    switch (this.mode) {
      case 'embedding': {
        const t = this.shownToken();
        const name = this.embedName();
        return [strip(`e${t}`, `${name} [${t}, :] — '${showToken(info.vocab[t] ?? `${t}`)}'`, name, t * C, C)];
      }
      case 'qkv': {
        const d = Math.min(this.row, D - 1);
        const r = this.proj * C + h * D + d;
        return [strip(`q${r}`, `${site}.layers.${l}.${attn}.in_proj_weight [${r}, :] — ${qkv} ${msg(str`of head ${h}, row ${d}`)}`, `${site}.layers.${l}.${attn}.in_proj_weight`, r * C, C)];
      }
      case 'bias': {
        const r = this.proj * C + h * D;
        return [strip(`b${r}`, `${site}.layers.${l}.${attn}.in_proj_bias [${r} … ${r + D - 1}] — ${b} ${msg(str`of head ${h}`)}`, `${site}.layers.${l}.${attn}.in_proj_bias`, r, D)];
      }
      case 'ffn': {
        const j = Math.min(this.unit, F - 1);
        const p = `${site}.layers.${l}`;
        return [
          strip(`w1${j}`, `${p}.linear1.weight [${j}, :] — ${msg('W₁: what the unit reads')}`, `${p}.linear1.weight`, j * C, C),
          strip(`b1${j}`, `${p}.linear1.bias [${j}]`, `${p}.linear1.bias`, j, 1),
          strip(`w2${j}`, `${p}.linear2.weight [:, ${j}] — ${msg('W₂: what the unit writes')}`, `${p}.linear2.weight`, j, C, F),
        ];
      }
    }
  }

  // ---------------------------------------------------------------- engine

  protected willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('info')) {
      this.tables = [];
      this.values = new Map();
      this.focused = null;
      if (!this.stacks().includes(this.stack)) this.stack = this.stacks()[0] ?? 'decoder';
    }
  }

  protected updated(changed: PropertyValues<this>): void {
    const picks = ['info', 'edits', 'promptIds', 'mode', 'stack', 'layer', 'head', 'proj', 'row', 'unit', 'token'] as const;
    if (picks.some((k) => changed.has(k))) void this.readAll();
  }

  /** Ask the engine for every strip's values (the newest answer wins). */
  async readAll(): Promise<void> {
    const editor = this.editor;
    if (!editor || !this.info) return;
    const v = ++this.readVersion;
    try {
      if (!this.tables.length) this.tables = (await editor.tensors()).map((t) => t.name);
      const strips = this.strips();
      const got = await Promise.all(strips.map((s) => editor.read(s.sel)));
      if (v !== this.readVersion) return;
      this.values = new Map(strips.map((s, i) => [s.key, got[i]]));
      this.problem = '';
    } catch (e) {
      if (v === this.readVersion) this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  /** Set one cell of a strip (the engine refuses a bad value with its message). */
  private async setCell(strip: Strip, i: number, value: number): Promise<void> {
    if (!this.editor) return;
    try {
      await this.editor.set({ name: strip.sel.name, start: strip.sel.start + i * strip.sel.stride, values: [value] });
      this.problem = '';
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  private async restore(req: { name?: string; start?: number; count?: number; stride?: number }): Promise<void> {
    if (!this.editor) return;
    try {
      await this.editor.restore(req);
      this.problem = '';
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  private async exportModel(): Promise<void> {
    if (!this.editor) return;
    try {
      const blob = await this.editor.exportModel();
      download(blob, `${this.modelName.replace(/\.safetensors$/, '').replace(/[^A-Za-z0-9_.-]+/g, '-')}-edited.safetensors`);
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  // ---------------------------------------------------------------- cells

  /** How far one ↑ or one pixel of dragging moves a cell of this strip: its size, from the trained values. */
  private scaleOf(v: WeightValues): number {
    let m = 0;
    for (const x of v.trained) m = Math.max(m, Math.abs(x));
    return m > 0 ? m : 0.1;
  }

  private onKey(e: KeyboardEvent, strip: Strip, i: number, v: WeightValues): void {
    const step = (this.scaleOf(v) / 20) * (e.shiftKey ? 10 : 1);
    const now = v.values[i];
    if (e.key === 'ArrowUp') void this.setCell(strip, i, now + step);
    else if (e.key === 'ArrowDown') void this.setCell(strip, i, now - step);
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      const j = Math.max(0, Math.min(v.indices.length - 1, i + (e.key === 'ArrowLeft' ? -1 : 1)));
      this.focusCell(strip.key, j);
    } else if (e.key === 'Home' || e.key === 'Delete' || e.key === 'Backspace') {
      void this.restore({ name: strip.sel.name, start: v.indices[i], count: 1 });
    } else return;
    e.preventDefault();
  }

  private focusCell(key: string, i: number): void {
    this.focused = { key, i };
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>(`.cell[data-strip="${key}"][data-i="${i}"]`)?.focus());
  }

  private onDown(e: PointerEvent, strip: Strip, i: number, v: WeightValues): void {
    this.focused = { key: strip.key, i };
    (e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId);
    this.drag = { strip, i, y: e.clientY, v0: v.values[i], scale: this.scaleOf(v) / 40 };
  }

  private onMove(e: PointerEvent): void {
    const d = this.drag;
    if (!d) return;
    const dy = d.y - e.clientY;
    if (Math.abs(dy) < 2) return;
    void this.setCell(d.strip, d.i, d.v0 + dy * d.scale);
  }

  private onUp(): void {
    this.drag = null;
  }

  private stripView(strip: Strip) {
    const v = this.values.get(strip.key);
    if (!v) return html`<div class="strip-label">${strip.label}</div><div class="strip muted small">…</div>`;
    const m = this.scaleOf(v);
    const cells = v.indices.map((flat, i) => {
      const x = v.values[i];
      const t = v.trained[i];
      const edited = !Object.is(x, t) && x !== t;
      const focused = this.focused?.key === strip.key && this.focused.i === i;
      return html`<span
        class="cell ${edited ? 'edited' : ''} ${focused ? 'focused' : ''}"
        role="slider"
        tabindex=${focused || (!this.focused && i === 0) ? 0 : -1}
        aria-label=${msg(str`${strip.sel.name} value ${flat}`)}
        aria-valuenow=${x}
        aria-valuetext=${edited ? msg(str`${fmt(x)}, edited (trained ${fmt(t)})`) : fmt(x)}
        data-strip=${strip.key}
        data-i=${i}
        data-index=${flat}
        data-value=${x}
        data-trained=${t}
        data-edited=${edited ? '1' : '0'}
        title=${edited ? msg(str`${fmt(x, 4)} (trained ${fmt(t, 4)})`) : fmt(x, 4)}
        style=${styles(`background:${diverging(x / m)};color:${inkOnDiverging(x / m)}`)}
        @focus=${() => (this.focused = { key: strip.key, i })}
        @keydown=${(e: KeyboardEvent) => this.onKey(e, strip, i, v)}
        @pointerdown=${(e: PointerEvent) => this.onDown(e, strip, i, v)}
        @pointermove=${(e: PointerEvent) => this.onMove(e)}
        @pointerup=${() => this.onUp()}
        @pointercancel=${() => this.onUp()}
        >${fmt(x, 2)}</span
      >`;
    });
    return html`<div class="strip-label">${strip.label}</div>
      <div class="strip" role="group" aria-label=${strip.label}>${cells}</div>`;
  }

  /** The focused cell's editor: type a value, restore the trained one. */
  private cellEditor(strips: Strip[]) {
    const f = this.focused;
    const strip = f && strips.find((s) => s.key === f.key);
    const v = strip && this.values.get(strip.key);
    if (!f || !strip || !v || f.i >= v.indices.length) return html`<p class="small muted">${msg('Drag a cell up or down, or focus it and press ↑ / ↓ (Shift: ten times as far); ← / → move along the strip; Delete restores the trained value.')}</p>`;
    const x = v.values[f.i];
    const t = v.trained[f.i];
    return html`<div class="editor">
      <label
        >${strip.sel.name} [${v.indices[f.i]}]
        <input
          type="number"
          step="any"
          class="value"
          .value=${String(x)}
          aria-label=${msg('type a value')}
          @change=${(e: Event) => {
            const raw = (e.target as HTMLInputElement).value.trim();
            const n = raw === '' ? Number.NaN : Number(raw);
            if (!Number.isFinite(n)) this.problem = msg(str`“${raw}” is not a number.`);
            else void this.setCell(strip, f.i, n);
          }}
      /></label>
      <span class="small">${msg('trained')} <span class="mono" data-trained=${t}>${fmt(t, 4)}</span></span>
      <button class="restore-cell" ?disabled=${x === t} @click=${() => void this.restore({ name: strip.sel.name, start: v.indices[f.i], count: 1 })}>↺ ${msg('Restore this value')}</button>
    </div>`;
  }

  private picker() {
    const info = this.info!;
    const num = (label: string, value: number, max: number, key: 'layer' | 'head' | 'row' | 'unit') =>
      html`<label
        >${label}
        <input
          type="number"
          min="0"
          max=${max}
          .value=${String(value)}
          @change=${(e: Event) => {
            const n = Math.round(Number((e.target as HTMLInputElement).value));
            if (n >= 0 && n <= max) this[key] = n;
          }}
      /></label>`;
    const modes: [Mode, string][] = [
      ['embedding', msg("a token's embedding")],
      ['qkv', msg("a row of a head's W_Q, W_K or W_V")],
      ['bias', msg("a head's bias")],
      ['ffn', msg('an FFN unit')],
    ];
    const stackName = (s: string) => (s === 'encoder' ? msg('encoder') : s === 'decoder' ? msg('decoder') : msg('cross-attention'));
    return html`<div class="pick">
        <label
          >${msg('edit')}
          <select class="mode" @change=${(e: Event) => (this.mode = (e.target as HTMLSelectElement).value as Mode)}>
            ${modes.map(([m, label]) => html`<option value=${m} ?selected=${this.mode === m}>${label}</option>`)}
          </select></label
        >
        ${this.mode !== 'embedding' || this.stacks().length > 1
          ? html`<label
              >${msg('stack')}
              <select @change=${(e: Event) => (this.stack = (e.target as HTMLSelectElement).value as 'encoder' | 'decoder' | 'cross')}>
                ${this.stacks().map((s) => html`<option value=${s} ?selected=${this.stack === s}>${stackName(s)}</option>`)}
              </select></label
            >`
          : nothing}
        ${this.mode !== 'embedding' ? num(msg('layer'), this.layer, Math.max(0, this.layers() - 1), 'layer') : nothing}
        ${this.mode === 'qkv' || this.mode === 'bias' ? num(msg('head'), this.head, info.n_heads - 1, 'head') : nothing}
        ${this.mode === 'qkv' || this.mode === 'bias'
          ? html`<label
              >${msg('projection')}
              <select @change=${(e: Event) => (this.proj = Number((e.target as HTMLSelectElement).value) as Part)}>
                ${['Q', 'K', 'V'].map((p, i) => html`<option value=${i} ?selected=${this.proj === i}>W_${p}</option>`)}
              </select></label
            >`
          : nothing}
        ${this.mode === 'qkv' ? num(msg('row'), this.row, info.d_head - 1, 'row') : nothing}
        ${this.mode === 'ffn' ? num(msg('unit'), this.unit, info.d_ff - 1, 'unit') : nothing}
      </div>
      ${this.mode === 'embedding'
        ? html`<div class="pick tokens" role="group" aria-label=${msg('the token whose embedding is edited')}>
            ${[...new Set(this.promptIds)].map(
              (id) => html`<button aria-pressed=${id === this.shownToken() ? 'true' : 'false'} data-id=${id} @click=${() => (this.token = id)}>${showToken(info.vocab[id] ?? `${id}`)}</button>`,
            )}
          </div>`
        : nothing}`;
  }

  private changedList() {
    const e = this.edits;
    return html`<div class="changed" aria-live="polite">
      ${e.changed === 0
        ? html`<p class="small muted">${msg('Nothing is edited: the model computes with its trained weights.')}</p>`
        : html`<div>
              ${msg(str`Changed: ${e.changed} values in ${e.edits.length} tensors.`)}
              <button class="restore-all" @click=${() => void this.restore({})}>↺ ${msg('Restore all trained values')}</button>
            </div>
            <ul>
              ${e.edits.map(
                (t) =>
                  html`<li data-name=${t.name} data-changed=${t.changed}>
                    <code>${t.name}</code> — ${msg(str`${t.changed} values, largest change ${fmt(t.max_abs_change)}`)}
                    <button class="restore-tensor" @click=${() => void this.restore({ name: t.name })} aria-label=${msg(str`restore ${t.name}`)}>↺</button>
                  </li>`,
              )}
            </ul>`}
      <button class="export" @click=${() => void this.exportModel()}>${msg('Export edited model')}</button>
      <span class="small muted">${msg('a .safetensors checkpoint, as a lab run exports it')}</span>
    </div>`;
  }

  render() {
    const info = this.info;
    const strips = info ? this.strips() : [];
    return html`<section class="card" aria-labelledby="h" @pointerup=${() => this.onUp()}>
      <h2 id="h">${msg('Edit a weight, watch everything change')}</h2>
      ${whyLocked(this.lock, 'model') ? html`<p class="small" data-weights-locked>${lockedNote('model', whyLocked(this.lock, 'model'))}</p>` : nothing}
      <p class="small muted">${msg('Every view on the page recomputes from the edited model. The values are the engine’s own; orange cells are above 0, blue below.')}</p>
      ${info ? this.picker() : nothing}
      ${strips.map((s) => this.stripView(s))}
      ${info ? this.cellEditor(strips) : nothing}
      ${this.problem ? html`<p class="problem" role="alert">${errorText(this.problem)}</p>` : nothing}
      ${info ? this.changedList() : nothing}
    </section>`;
  }
}

customElements.define('tp-weights', TpWeights);
