// The masks view: which mask hid each cell of an attention map — the rule (causal,
// prefix-LM, a sliding window, or a cell painted by hand) or padding, or both — in three
// hatches with a legend, and the additive mask the softmax sees as numbers (0 or −∞).
// Above it the mask editor: choose the rule, its length, and paint single cells on or off;
// the model runs again with the edited mask (CPU or WebGPU) and every view follows. Every
// number drawn is the core's (`MaskView.reasons`, `model::mask::MaskSpec::reasons`).

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { guard } from 'lit/directives/guard.js';
import { getLocale, LocalizedElement } from '../i18n/locale';
import type { AttnSite, CellEdit, MaskEdit, MaskView } from '../engine/protocol';
import { lockedNote, whyLocked } from '../ui/locked';
import { canvasFor, emit, panel, styles, ThemeColours } from '../ui/shared';
import { SERIES, showToken } from '../ui/palette';
import { SITE_NAMES } from './attention-common';
import { ruleName } from '../ui/mask-name';

export { ruleName };

/** Bits of `MaskView.reasons`. */
const BY_RULE = 1;
const BY_PAD = 2;

type RuleKind = 'switch' | MaskEdit['rule']['kind'];

/** The height of the key-label row of the map, in CSS pixels. */
const KEY_ROW = 16;

export class TpMasks extends LocalizedElement {
  static properties = {
    masks: { attribute: false },
    site: { type: String },
    mainSite: { type: String },
    row: { type: Number },
    queryTokens: { attribute: false },
    keyTokens: { attribute: false },
    mask: { attribute: false },
    promptLength: { type: Number },
    reach: { type: Number },
    lock: { attribute: false },
    width: { state: true },
  };

  masks: MaskView[] = [];
  /** The site whose mask is drawn (the attention view's selection). */
  site: AttnSite = 'decoder_self';
  /** The site the editor changes: the main stack's self-attention. */
  mainSite: AttnSite = 'decoder_self';
  row = 0;
  queryTokens: string[] = [];
  keyTokens: string[] = [];
  /** The edited mask in the settings (null: the causal switch decides). */
  mask: MaskEdit | null = null;
  /** The prompt's length: the prefix a new prefix-LM mask starts with. */
  promptLength = 1;
  /** The length the decoder's sequence can reach while it generates (0: none): the map keeps a box of that size, its cells sized for it (../views/reserve.ts). */
  reach = 0;
  /** Classroom mode: the settings the link locked (the mask and the causal switch are one: either locks the editor). */
  lock: readonly string[] = [];
  width = 600;
  private resize = new ResizeObserver((e) => (this.width = e[0]?.contentRect.width || this.width));

  static styles = [
    panel,
    css`
      .editor {
        display: flex;
        flex-wrap: wrap;
        gap: 6px 14px;
        align-items: center;
        margin-bottom: var(--tp-space-2);
        font-size: var(--tp-text-md);
      }
      .editor input[type='number'] {
        width: 4em;
      }
      .grid {
        display: grid;
        gap: 1px;
        width: max-content;
        max-width: 100%;
      }
      .r {
        display: contents;
      }
      .lab {
        font-family: var(--tp-mono);
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
        overflow: hidden;
        white-space: pre;
        text-align: center;
      }
      .lab.row {
        text-align: right;
        padding-right: 3px;
        max-width: 80px;
      }
      .cell {
        box-sizing: border-box;
        border: 0;
        padding: 0;
        border-radius: 2px;
        background: var(--tp-bg, #fff);
        outline: 1px solid var(--tp-line);
        font-family: var(--tp-mono);
        color: var(--tp-fg);
        display: flex;
        align-items: center;
        justify-content: center;
        overflow: hidden;
        cursor: pointer;
      }
      .cell.rule {
        background: repeating-linear-gradient(45deg, #0072b2 0 1.5px, transparent 1.5px 5px);
      }
      .cell.pad {
        background: repeating-linear-gradient(-45deg, #e69f00 0 1.5px, transparent 1.5px 5px);
      }
      .cell.both {
        background:
          repeating-linear-gradient(45deg, #0072b2 0 1.5px, transparent 1.5px 5px),
          repeating-linear-gradient(-45deg, #e69f00 0 1.5px, transparent 1.5px 5px);
      }
      .cell .num {
        background: var(--tp-bg);
        border-radius: 2px;
        padding: 0 1px;
        line-height: 1.1;
      }
      .cell.painted {
        outline: 2px solid #cc79a7;
        outline-offset: -2px;
      }
      /* The map's cells: their fill, hatches and outlines are drawn on one canvas under
         the grid (one image to paint instead of a few shapes per cell); the buttons on
         top take their size from the grid's tracks and carry the numbers, the focus and
         the clicks. */
      .grid.map {
        position: relative;
        isolation: isolate;
      }
      .grid.map .cell {
        font-size: var(--cell-font, 11px);
        width: auto;
        height: auto;
        background: none;
        outline: none;
        border-radius: 0;
      }
      .grid.map canvas.under {
        position: absolute;
        top: -1px;
        left: -1px;
        grid-row: 2 / -1;
        grid-column: 2 / -1;
        z-index: -1;
        pointer-events: none;
      }
      .cell:focus-visible,
      .grid.map .cell:focus-visible {
        outline: 2px solid var(--tp-focus);
      }
      .legend {
        display: flex;
        flex-wrap: wrap;
        gap: 4px 14px;
        font-size: var(--tp-text-sm);
        color: var(--tp-muted);
        margin-top: 6px;
        align-items: center;
      }
      .legend .cell {
        display: inline-block;
        width: 16px;
        height: 12px;
        cursor: default;
        vertical-align: middle;
      }
    `,
  ];

  connectedCallback(): void {
    super.connectedCallback();
    this.resize.observe(this);
  }

  disconnectedCallback(): void {
    this.resize.disconnect();
    super.disconnectedCallback();
  }

  /** What the map shows (the canvas under its grid is drawn from it). */
  private drawn: { v: MaskView; b: number; cell: number; T: number; S: number } | null = null;
  private underKey = '';
  private colours = new ThemeColours(this, ['--tp-bg', '--tp-line']);
  private underView: MaskView | null = null;

  protected updated(): void {
    this.drawUnder();
  }

  /**
   * The cells of the map on the canvas under its grid, as the cells' own styles would
   * draw them: the panel's colour inside a 1 px outline, blue stripes falling to the right
   * where the rule or a painted cell hides the key, orange ones rising for padding, a pink
   * inner frame on a painted cell.
   */
  private drawUnder() {
    const c = this.renderRoot.querySelector<HTMLCanvasElement>('.grid.map canvas.under');
    const d = this.drawn;
    if (!c || !d) return;
    const { v, b, cell, T, S } = d;
    const colours = this.colours.get();
    const bg = colours['--tp-bg'] || '#fff';
    const line = colours['--tp-line'] || '#d9dde3';
    const dpr = Math.max(1, Math.min(3, Math.round(window.devicePixelRatio || 1)));
    const painted = new Set(v.cells.map((x) => `${x.query}.${x.key}`));
    const key = `${b}·${cell}·${T}·${S}·${dpr}·${bg}·${line}`;
    if (key === this.underKey && v === this.underView && c.width === (S * (cell + 1) + 1) * dpr) return;
    this.underKey = key;
    this.underView = v;
    // One pixel of outline around the cells, so the canvas reaches 1 px past them.
    const pitch = cell + 1;
    const w = S * pitch + 1;
    const h = T * pitch + 1;
    const ctx = canvasFor(c, w, h);
    if (!ctx) return;
    const stripes = (colour: string, rising: boolean): CanvasPattern | null => {
      // 1.5 px stripes every 5 px across them, at 45°: a 7 px tile holds one period.
      const tile = document.createElement('canvas');
      tile.width = tile.height = 7 * dpr;
      const tc = tile.getContext('2d');
      if (!tc) return null;
      tc.scale(dpr, dpr);
      tc.strokeStyle = colour;
      tc.lineWidth = 1.5;
      for (const o of [-7, 0, 7]) {
        tc.beginPath();
        if (rising) {
          tc.moveTo(o, 7);
          tc.lineTo(o + 7, 0);
        } else {
          tc.moveTo(o, 0);
          tc.lineTo(o + 7, 7);
        }
        tc.stroke();
      }
      return ctx.createPattern(tile, 'repeat');
    };
    const rule = stripes(SERIES.blue, false);
    const pad = stripes(SERIES.orange, true);
    ctx.fillStyle = line;
    ctx.fillRect(0, 0, w, h);
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < S; j++) {
        const x = 1 + j * pitch;
        const y = 1 + i * pitch;
        const why = v.reasons.data[(b * T + i) * S + j];
        ctx.fillStyle = bg;
        ctx.fillRect(x, y, cell, cell);
        if (why & BY_RULE && rule) {
          ctx.fillStyle = rule;
          ctx.fillRect(x, y, cell, cell);
        }
        if (why & BY_PAD && pad) {
          ctx.fillStyle = pad;
          ctx.fillRect(x, y, cell, cell);
        }
        if (painted.has(`${i}.${j}`)) {
          ctx.strokeStyle = SERIES.pink;
          ctx.lineWidth = 2;
          ctx.strokeRect(x + 1, y + 1, cell - 2, cell - 2);
        }
      }
    }
  }

  private current(): MaskView | undefined {
    return this.masks.find((m) => m.site === this.site) ?? this.masks.find((m) => m.site === this.mainSite);
  }

  private setRule(kind: RuleKind, n?: number) {
    if (kind === 'switch') {
      emit(this, 'tp-mask', null);
      return;
    }
    const cells = this.mask?.cells ?? [];
    const old = this.mask?.rule;
    const rule: MaskEdit['rule'] =
      kind === 'prefix_lm'
        ? { kind, prefix: n ?? (old?.kind === 'prefix_lm' ? old.prefix : this.promptLength) }
        : kind === 'sliding_window'
          ? { kind, window: Math.max(1, n ?? (old?.kind === 'sliding_window' ? old.window : 3)) }
          : { kind };
    emit(this, 'tp-mask', { rule, cells });
  }

  /** A click on a cell of the grid (one listener for every cell): paint it. */
  private clicked = (e: Event) => {
    const c = (e.target as Element).closest<HTMLButtonElement>('button.cell');
    const now = this.current();
    if (!c || c.disabled || !now) return;
    this.paint(now, Number(c.dataset.i), Number(c.dataset.j), (Number(c.dataset.reason) & BY_RULE) !== 0);
  };

  /** Paint (i, j): a painted cell goes back to the rule; any other cell flips. */
  private paint(v: MaskView, i: number, j: number, hiddenNow: boolean) {
    const base: MaskEdit = this.mask ?? { rule: v.rule, cells: [] };
    const others = base.cells.filter((c) => !(c.query === i && c.key === j));
    const cells: CellEdit[] = others.length < base.cells.length ? others : [...others, { query: i, key: j, hidden: !hiddenNow }];
    emit(this, 'tp-mask', { rule: base.rule, cells });
  }

  private editor(v: MaskView | undefined) {
    const kind: RuleKind = this.mask ? this.mask.rule.kind : 'switch';
    const r = this.mask?.rule;
    const painted = this.mask?.cells.length ?? 0;
    const locked = whyLocked(this.lock, 'mask');
    const off = locked !== '';
    const radio = (k: RuleKind, label: string) =>
      html`<label><input type="radio" name="rule" value=${k} data-rule=${k} ?disabled=${off} aria-describedby=${off ? 'why-mask' : nothing} .checked=${kind === k} @change=${() => this.setRule(k)} /> ${label}</label>`;
    return html`<div class="editor" role="group" aria-label=${msg(str`mask of the ${SITE_NAMES[this.mainSite]}`)}>
      ${radio('switch', msg('causal switch'))} ${radio('causal', msg('causal'))} ${radio('none', msg('none'))}
      ${radio('prefix_lm', msg('prefix-LM', { id: 'masks.prefix-lm' }))}
      ${r?.kind === 'prefix_lm'
        ? html`<label>${msg('prefix')} <input type="number" min="0" max="999" aria-label=${msg('prefix length')} ?disabled=${off} .value=${String(r.prefix)}
              @change=${(e: Event) => this.setRule('prefix_lm', Math.max(0, Number((e.target as HTMLInputElement).value) | 0))} /></label>`
        : nothing}
      ${radio('sliding_window', msg('sliding window'))}
      ${r?.kind === 'sliding_window'
        ? html`<label>w <input type="number" min="1" max="999" aria-label=${msg('window length')} ?disabled=${off} .value=${String(r.window)}
              @change=${(e: Event) => this.setRule('sliding_window', Math.max(1, Number((e.target as HTMLInputElement).value) | 0))} /></label>`
        : nothing}
      ${off ? lockedNote('mask', locked, 'why-mask') : html`<span class="muted small">${v && v.site === this.mainSite ? msg('click a cell to hide or show it') : ''}</span>`}
      ${painted ? html`<button ?disabled=${off} @click=${() => emit(this, 'tp-mask', { rule: this.mask!.rule, cells: [] })}>${msg(str`clear ${painted} painted`)}</button>` : nothing}
    </div>`;
  }

  render() {
    const v = this.current();
    const head = html`<h2 id="h">${msg('Masks')} <span class="sub">${v ? `${SITE_NAMES[v.site]} · ${ruleName(v)}${v.cells.length ? ` + ${msg(str`${v.cells.length} painted`)}` : ''}${v.padding ? ` · ${msg('padding on')}` : ''}` : ''}</span></h2>`;
    if (!v) return html`<section class="card" aria-labelledby="h">${head}${this.editor(v)}<p class="muted">${msg('No forward pass yet.')}</p></section>`;
    const [B, T, S] = v.reasons.shape;
    const b = Math.min(this.row, B - 1);
    const editable = v.site === this.mainSite && !whyLocked(this.lock, 'mask');
    const paintedAt = new Map(v.cells.map((c) => [`${c.query}.${c.key}`, c.hidden]));
    // Cells shrink to fit the panel; numbers show while they fit in a cell.
    const labelW = 60;
    const grows = this.reach > 0 && v.site !== 'encoder_self';
    const roomT = grows ? Math.max(T, this.reach) : T;
    const roomS = grows && v.site !== 'cross' ? Math.max(S, this.reach) : S;
    const cell = Math.max(6, Math.min(26, Math.floor((this.width - labelW - 8) / roomS) - 1));
    const numbers = cell >= 18;
    this.drawn = { v, b, cell, T, S };
    const every = Math.ceil(11 / cell);
    const q = (i: number) => showToken(this.queryTokens[i] ?? `${i}`);
    const k = (j: number) => showToken(this.keyTokens[j] ?? `${j}`);
    const rule = ruleName(v);
    const locale = getLocale();
    // The key labels, then one element per row (laid out as if absent, `display: contents`):
    // a key or a query added during playback leaves every earlier cell where it is, so its
    // guard sees the same values and it is not written again.
    const keys: unknown[] = [html`<div></div>`];
    const rows: unknown[] = [];
    for (let j = 0; j < S; j++) keys.push(html`<div class="lab" title=${msg(str`key ${j}`)}>${j % every === 0 ? k(j).slice(0, 2) : ''}</div>`);
    for (let i = 0; i < T; i++) {
      const row: unknown[] = [];
      row.push(html`<div class="lab row" title=${msg(str`query ${i}`)}>${cell >= 10 || i % every === 0 ? q(i) : ''}</div>`);
      for (let j = 0; j < S; j++) {
        const why = v.reasons.data[(b * T + i) * S + j];
        const cls = why === (BY_RULE | BY_PAD) ? 'both' : why === BY_RULE ? 'rule' : why === BY_PAD ? 'pad' : '';
        const painted = paintedAt.has(`${i}.${j}`);
        // A cell is written again only when what it shows changed (during playback the
        // cells of the earlier rows and columns stay as they are).
        row.push(
          guard([why, painted, cell, numbers, editable, rule, q(i), k(j), locale], () => {
            const add = why ? '−∞' : '0';
            const state =
              why === 0
                ? msg('visible')
                : msg(str`hidden by ${[why & BY_RULE ? (painted ? msg('a painted cell') : rule) : '', why & BY_PAD ? msg('padding') : ''].filter(Boolean).join(msg(' and '))}`);
            const label = msg(str`${add} — query ${i} “${q(i)}”, key ${j} “${k(j)}”: ${state}`) + (painted ? msg(', painted') : '');
            return html`<button
              class="cell ${cls} ${painted ? 'painted' : ''}"
              data-i=${i}
              data-j=${j}
              data-reason=${why}
              data-add=${why ? '-Infinity' : '0'}
              aria-label=${label}
              title=${label}
              ?disabled=${!editable}
            >${numbers ? html`<span class="num">${add}</span>` : ''}</button>`;
          }),
        );
      }
      rows.push(html`<div class="r">${row}</div>`);
    }
    return html`<section class="card" aria-labelledby="h">
      ${head} ${this.editor(v)}
      <div class="room" style=${styles(roomT > T || roomS > S ? `min-height:${KEY_ROW + roomT * (cell + 1)}px` : '')}><div class="grid map" role="group" aria-label=${msg(str`additive mask of the ${SITE_NAMES[v.site]}: 0 where a key is visible, −∞ where it is hidden`)}
        style=${styles(`grid-template-columns: ${labelW}px repeat(${S}, ${cell}px); grid-template-rows: ${KEY_ROW}px repeat(${T}, ${cell}px); --cell-font: ${Math.max(7, Math.min(11, cell * 0.45))}px`)}
        @click=${this.clicked}><canvas class="under" aria-hidden="true"></canvas>${keys}${rows}</div></div>
      <div class="legend">
        <span><span class="cell rule"></span> ${v.cells.length ? msg(str`hidden by the rule or a painted cell (${ruleName(v)})`) : msg(str`hidden by the rule (${ruleName(v)})`)}</span>
        <span><span class="cell pad"></span> ${msg('hidden as padding')}</span>
        <span><span class="cell both"></span> ${msg('both')}</span>
        <span><span class="cell painted"></span> ${msg('painted by hand')}</span>
        <span>${msg('numbers: the additive mask added to the scores before softmax (0 or −∞)')}</span>
      </div>
    </section>`;
  }
}

customElements.define('tp-masks', TpMasks);
