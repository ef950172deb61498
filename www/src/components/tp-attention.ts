// Stage 2 — attention: every layer × head as a small map (click to look, switch a head
// off to ablate it), and the selected head as a large heatmap whose rows (queries) and
// columns (keys) are labelled with tokens. Masked cells are hatched; every cell shows its
// score and probability on hover or keyboard focus (arrow keys move between cells).

import { html, css, nothing, unsafeCSS } from 'lit';
import type { AttnSite, AttnTrace, HeadRef } from '../engine/protocol';
import { lockedNote, whyLocked } from '../ui/locked';
import { canvasFor, emit, panel, scrollLabel, scrollRegion, styles, ThemeColours } from '../ui/shared';
import { ifDefined } from 'lit/directives/if-defined.js';
import { guard } from 'lit/directives/guard.js';
import { msg, str } from '@lit/localize';
import { SITE_NAMES, at, gridMove } from './attention-common';
import { getLocale, LocalizedElement } from '../i18n/locale';
import { diverging, displayWidth, fmt, HIGHLIGHT, inkOn, showToken, tokenLang, viridis, viridisRgb } from '../ui/palette';
import { HATCH_A, HATCH_B, HEAT_COLOURS, maskedHatch } from '../ui/heat';
import './tp-qk';

/** More heads than this (layers × heads) are drawn as a grid of smaller thumbnails. */
const MANY_HEADS = 48;
/** Maps with more cells than this are drawn on one canvas instead of one element per cell. */
const BIG_MAP = 48 * 48;
/** The large map's row-label column and key-label row while the sequence grows (the labels' largest sizes, .lab.row and .lab.col). */
const LABEL_COL = 90;
const LABEL_ROW = 72;
/** A panel at least this wide (CSS pixels) holds the map and the q·k inspector side by side. */
const WIDE_PANEL = 600;

export class TpAttention extends LocalizedElement {
  static properties = {
    attention: { attribute: false },
    site: { type: String },
    layer: { type: Number },
    head: { type: Number },
    row: { type: Number },
    queryTokens: { attribute: false },
    keyTokens: { attribute: false },
    ablate: { attribute: false },
    lock: { attribute: false },
    scaleOn: { type: Boolean },
    score: { type: String },
    posEncoding: { type: String },
    maxDistance: { type: Number },
    previous: { attribute: false },
    beforeLabel: { type: String },
    reach: { type: Number },
    showDiff: { state: true },
    focusCell: { state: true },
    raw: { state: true },
    zoom: { state: true },
    width: { state: true },
  };

  attention: AttnTrace[] = [];
  site: AttnSite = 'decoder_self';
  layer = 0;
  head = 0;
  /** Which sequence of the batch is drawn. */
  row = 0;
  queryTokens: string[] = [];
  keyTokens: string[] = [];
  ablate: HeadRef[] = [];
  /** Classroom mode: the settings the link locked (`ablate` disables the heads' off switches, saying why). */
  lock: readonly string[] = [];
  scaleOn = true;
  /** The model's score function (scaled_dot, dot, additive) and position encoding. */
  score = 'scaled_dot';
  posEncoding = '';
  /** K of relative positions (the q·k inspector names the clipped offset). */
  maxDistance = 0;
  /** The attention of the run before the last switch changed, to compare with. */
  previous: AttnTrace[] = [];
  /** What changed, in words ("causal mask on → off"). */
  beforeLabel = '';
  /**
   * The length the decoder's sequence can reach while it generates (prompt + max new
   * tokens, within the model's context), 0 when nothing will be generated. The large map
   * keeps the box of that many positions from the start, its cells sized for it, so it
   * fills in token by token without moving what is around it.
   */
  reach = 0;
  showDiff = false;
  focusCell: [number, number] = [0, 0];
  /** Colour the map by the raw scores (before softmax, after the mask) instead of probabilities. */
  raw = false;
  /** Full-size cells behind a scroll, instead of cells shrunk to fit the panel. */
  zoom = false;
  /** The panel's width in CSS pixels (the map fits it). */
  width = 640;
  /** Queries × keys of the large map as drawn last (its cells' keys move within it). */
  private shape: [number, number] = [0, 0];
  private resize = new ResizeObserver((e) => {
    const w = e[0]?.contentRect.width;
    if (w && Math.abs(w - this.width) > 1) this.width = w;
  });

  connectedCallback(): void {
    super.connectedCallback();
    this.resize.observe(this);
  }

  disconnectedCallback(): void {
    this.resize.disconnect();
    super.disconnectedCallback();
  }

  /** Side of one cell of the large map: shrinks so that the S columns fit the panel. */
  private cellSide(S: number): number {
    if (this.zoom) return 22;
    // The row labels and the card's padding; on a wide panel also the q·k inspector beside
    // the map (flex-basis 240 px and the gap), so that it stays there however long the
    // sequence grows.
    const avail = this.width - 90 - 24 - (this.width >= WIDE_PANEL ? 256 : 0);
    return Math.max(5, Math.min(22, Math.floor(avail / Math.max(1, S)) - 1));
  }

  /**
   * The queries × keys the large map holds room for: the trace's own, or, on the side
   * that grows while the decoder generates (its self-attention: both; cross-attention: the
   * queries), the length the generation can reach.
   */
  private room(t: AttnTrace): [number, number] {
    const [, , T, S] = t.probs.shape;
    if (this.reach <= 0 || t.site === 'encoder_self' || this.zoom) return [T, S];
    return [Math.max(T, this.reach), t.site === 'cross' ? S : Math.max(S, this.reach)];
  }

  /** The colour value of a cell: its probability, or its raw score scaled into [0, 1]. */
  private shade(t: AttnTrace, b: number, h: number): (i: number, j: number) => number {
    if (!this.raw) return (i, j) => at(t.probs, b, h, i, j);
    const [, , T, S] = t.scores.shape;
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < T; i++)
      for (let j = 0; j < S; j++) {
        const v = at(t.scores, b, h, i, j);
        if (Number.isFinite(v)) {
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
    const span = hi > lo ? hi - lo : 1;
    return (i, j) => (at(t.scores, b, h, i, j) - lo) / span;
  }

  static styles = [
    panel,
    css`
      .sites {
        display: flex;
        gap: 6px;
        flex-wrap: wrap;
        margin-bottom: var(--tp-space-2);
      }
      .thumbs {
        display: grid;
        justify-content: start;
        gap: 6px 10px;
        overflow-x: auto;
        padding-bottom: var(--tp-space-1);
      }
      .thumb {
        display: flex;
        flex-direction: column;
        align-items: center;
        gap: 2px;
        font-size: var(--tp-text-xs);
      }
      .thumb button.pick {
        padding: 2px;
        line-height: 0;
        border-width: 2px;
      }
      .thumb button.pick[aria-current='true'] {
        border-color: var(--tp-accent);
      }
      .thumb canvas {
        width: 56px;
        height: 56px;
        image-rendering: pixelated;
      }
      /* A real model's grid (GPT-2: 12 layers × 12 heads): smaller thumbnails, the grid scrolled in its own box. */
      .thumbs.many {
        gap: 2px 4px;
        max-height: 560px;
      }
      .thumbs.many .thumb canvas {
        width: 32px;
        height: 32px;
      }
      .thumbs.many .thumb button.abl {
        padding: 0 2px;
      }
      .thumb.off canvas {
        opacity: 0.3;
      }
      .thumb button.abl {
        font-size: var(--tp-text-xs);
        padding: 0 6px;
      }
      .layer-label {
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
        align-self: center;
        white-space: nowrap;
      }
      .map-wrap {
        max-width: 100%;
        margin-top: 10px;
      }
      .map-wrap.zoomed {
        overflow: auto;
      }
      .map-tools {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-1) var(--tp-space-4);
        margin-top: var(--tp-space-2);
      }
      .beside {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-3);
        align-items: flex-start;
      }
      .beside .map-wrap {
        flex: 0 1 auto;
      }
      .beside tp-qk {
        margin-top: 10px;
        flex: 1 1 240px;
        max-width: 440px;
      }
      .grid {
        display: grid;
        gap: 1px;
        width: max-content;
      }
      .r {
        display: contents;
      }
      /* The large map: its colours are drawn on one canvas under the grid (one image to
         paint instead of a rectangle per cell); the cells on top take their size from the
         grid's tracks and carry the numbers, the focus and the pointer. */
      .grid.map {
        position: relative;
        isolation: isolate;
      }
      .grid.map .cell,
      .grid.map .cell.masked {
        width: auto;
        height: auto;
        background: none !important;
      }
      .grid.map canvas.under {
        position: absolute;
        grid-row: 2 / -1;
        grid-column: 2 / -1;
        z-index: -1;
        pointer-events: none;
      }
      canvas.big {
        display: block;
        image-rendering: pixelated;
        cursor: crosshair;
      }
      .cell {
        width: 22px;
        height: 22px;
        border-radius: 2px;
        font-size: 0;
        box-sizing: border-box;
      }
      .cell.masked {
        background: repeating-linear-gradient(45deg, var(--tp-hatch-a) 0 2px, var(--tp-hatch-b) 2px 5px) !important;
      }
      .cell:focus {
        outline: 2px solid var(--tp-focus);
        outline-offset: 0;
        z-index: 1;
      }
      .lab {
        font-family: var(--tp-mono);
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
        display: flex;
        align-items: center;
        justify-content: center;
        white-space: pre;
        overflow: hidden;
        max-width: 60px;
      }
      .lab.row {
        justify-content: flex-end;
        padding-right: var(--tp-space-1);
        max-width: 90px;
      }
      .lab.col {
        width: 22px;
        max-height: 72px;
        align-items: flex-end;
      }
      .lab.col.long {
        writing-mode: vertical-rl;
        /* Every glyph turned the same way, Chinese ones included: in vertical-rl they would
           otherwise stand upright and end up upside down after the rotation. */
        text-orientation: sideways;
        transform: rotate(180deg);
        justify-content: flex-start;
        align-items: center;
        padding-top: 2px;
      }
      .lab.hot {
        color: var(--tp-fg);
        font-weight: 700;
      }
      .readout {
        min-height: 2.8em;
        font-size: var(--tp-text-md);
        margin-top: 6px;
      }
      .legend {
        display: flex;
        align-items: center;
        gap: 6px;
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
        margin-top: var(--tp-space-1);
        flex-wrap: wrap;
      }
      .ramp {
        width: 120px;
        height: 10px;
        border-radius: 3px;
        background: linear-gradient(90deg, ${unsafeRamp()});
      }
      .hatch {
        display: inline-block;
        width: 14px;
        height: 10px;
        background: repeating-linear-gradient(45deg, var(--tp-hatch-a) 0 2px, var(--tp-hatch-b) 2px 5px);
      }
      .diff .cell {
        width: 14px;
        height: 14px;
      }
      @media (max-width: 600px) {
        .cell {
          width: 16px;
          height: 16px;
        }
        .lab.col {
          width: 16px;
        }
      }
    `,
  ];

  private sites(): AttnSite[] {
    const s: AttnSite[] = [];
    for (const a of this.attention) if (!s.includes(a.site)) s.push(a.site);
    return s;
  }

  private traces(): AttnTrace[] {
    return this.attention.filter((a) => a.site === this.site);
  }

  private current(): AttnTrace | undefined {
    return this.attention.find((a) => a.site === this.site && a.layer === this.layer);
  }

  private isOff(h: HeadRef): boolean {
    return this.ablate.some((a) => a.site === h.site && a.layer === h.layer && a.head === h.head);
  }

  /** What the small multiples show now (they are drawn again only when it changes). */
  private thumbsDrawn: unknown[] = [];

  protected updated(): void {
    this.drawBig();
    this.drawUnder();
    // Small multiples are drawn on canvases: cheap for many heads.
    const canvases = this.renderRoot.querySelectorAll<HTMLCanvasElement>('canvas.t');
    const key = [this.attention, this.site, this.row, this.raw, canvases.length, ...canvases];
    if (key.length === this.thumbsDrawn.length && key.every((k, i) => k === this.thumbsDrawn[i])) return;
    this.thumbsDrawn = key;
    for (const c of canvases) {
      const t = this.traces().find((a) => a.layer === Number(c.dataset.layer));
      if (!t) continue;
      const h = Number(c.dataset.head);
      const [B, , T, S] = t.probs.shape;
      const b = Math.min(this.row, B - 1);
      c.width = S;
      c.height = T;
      const ctx = c.getContext('2d');
      if (!ctx) continue;
      const img = ctx.createImageData(S, T);
      const shade = this.shade(t, b, h);
      for (let i = 0; i < T; i++) {
        for (let j = 0; j < S; j++) {
          const masked = at(t.scores, b, h, i, j) === Number.NEGATIVE_INFINITY;
          const [r, g, bl] = masked ? [190, 194, 200] : viridisRgb(shade(i, j));
          const k = (i * S + j) * 4;
          img.data[k] = r;
          img.data[k + 1] = g;
          img.data[k + 2] = bl;
          img.data[k + 3] = 255;
        }
      }
      ctx.putImageData(img, 0, 0);
    }
  }

  private move(e: KeyboardEvent, T: number, S: number) {
    const to = gridMove(e.key, this.focusCell, T, S);
    if (!to) return;
    e.preventDefault();
    this.setFocus(to[0], to[1], true);
  }

  /**
   * The grid's cells share one listener per event: the pointer or the focus on a cell
   * selects it, the arrow keys move from it.
   */
  private cellEvent = (e: Event) => {
    const c = (e.target as Element).closest<HTMLElement>('.cell[data-i]');
    if (!c) return;
    if (e.type === 'keydown') return this.move(e as KeyboardEvent, this.shape[0], this.shape[1]);
    const i = Number(c.dataset.i);
    const j = Number(c.dataset.j);
    if (this.focusCell[0] !== i || this.focusCell[1] !== j) this.setFocus(i, j, false);
  };

  private setFocus(i: number, j: number, moveFocus: boolean) {
    this.focusCell = [i, j];
    emit(this, 'tp-focus', { i, j });
    if (moveFocus) {
      this.updateComplete.then(() => {
        this.renderRoot.querySelector<HTMLElement>(`[data-i="${i}"][data-j="${j}"]`)?.focus();
      });
    }
  }

  /** What the canvas under the grid shows now (drawn again only when that changes). */
  private underDrawn = '';
  private colours = new ThemeColours(this, HEAT_COLOURS);
  private underTrace: AttnTrace | null = null;

  /**
   * The colours of the large map's cells, on the canvas under its grid: viridis of the
   * probability (or of the raw score), masked cells hatched; a cell's place is that of its
   * grid track (side px, 1 px gaps).
   */
  private drawUnder() {
    const c = this.renderRoot.querySelector<HTMLCanvasElement>('.grid.map canvas.under');
    const t = this.current();
    if (!c || !t) return;
    const [B, H, T, S] = t.probs.shape;
    const b = Math.min(this.row, B - 1);
    const h = Math.min(this.head, H - 1);
    const side = this.cellSide(this.room(t)[1]);
    const gap = 1;
    const w = S * side + (S - 1) * gap;
    const ht = T * side + (T - 1) * gap;
    const dpr = Math.max(1, Math.min(3, Math.round(window.devicePixelRatio || 1)));
    const colours = this.colours.get();
    const hatchA = colours['--tp-hatch-a'] || HATCH_A;
    const hatchB = colours['--tp-hatch-b'] || HATCH_B;
    const key = `${b}·${h}·${side}·${dpr}·${this.raw}·${hatchA}·${hatchB}`;
    if (key === this.underDrawn && t === this.underTrace && c.width === w * dpr) return;
    this.underDrawn = key;
    this.underTrace = t;
    const ctx = canvasFor(c, w, ht);
    if (!ctx) return;
    const hatch = maskedHatch(ctx, hatchA, hatchB, dpr);
    const shade = this.shade(t, b, h);
    const r = Math.min(2, side / 4);
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < S; j++) {
        const masked = at(t.scores, b, h, i, j) === Number.NEGATIVE_INFINITY;
        ctx.fillStyle = masked ? hatch : viridis(shade(i, j));
        ctx.beginPath();
        ctx.roundRect(j * (side + gap), i * (side + gap), side, side, r);
        ctx.fill();
      }
    }
  }

  /** Side of one cell of the large map drawn on a canvas (sized for the room it holds). */
  private bigCell(t: AttnTrace): number {
    return this.zoom ? 10 : Math.max(2, Math.min(10, Math.floor((this.width - 24) / Math.max(1, this.room(t)[1]))));
  }

  /** The large map on a canvas: one pixel block per cell, the focused one outlined. */
  private drawBig() {
    const c = this.renderRoot.querySelector<HTMLCanvasElement>('canvas.big');
    const t = this.current();
    if (!c || !t) return;
    const [B, H, T, S] = t.probs.shape;
    const b = Math.min(this.row, B - 1);
    const h = Math.min(this.head, H - 1);
    const cell = this.bigCell(t);
    const shade = this.shade(t, b, h);
    c.width = S * cell;
    c.height = T * cell;
    c.style.width = `${S * cell}px`;
    c.style.height = `${T * cell}px`;
    const ctx = c.getContext('2d');
    if (!ctx) return;
    const colours = this.colours.get();
    const hatch = maskedHatch(ctx, colours['--tp-hatch-a'] || HATCH_A, colours['--tp-hatch-b'] || HATCH_B, 1);
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < S; j++) {
        const masked = at(t.scores, b, h, i, j) === Number.NEGATIVE_INFINITY;
        ctx.fillStyle = masked ? hatch : viridis(shade(i, j));
        ctx.fillRect(j * cell, i * cell, cell, cell);
      }
    }
    const [fi, fj] = this.focusCell;
    ctx.strokeStyle = HIGHLIGHT;
    ctx.lineWidth = 2;
    ctx.strokeRect(Math.min(fj, S - 1) * cell + 1, Math.min(fi, T - 1) * cell + 1, cell - 2, cell - 2);
  }

  private heatmap(t: AttnTrace) {
    const [B, H, T, S] = t.probs.shape;
    const b = Math.min(this.row, B - 1);
    const h = Math.min(this.head, H - 1);
    const [fi, fj] = [Math.min(this.focusCell[0], T - 1), Math.min(this.focusCell[1], S - 1)];
    const q = (i: number) => showToken(this.queryTokens[i] ?? `${i}`);
    const k = (j: number) => showToken(this.keyTokens[j] ?? `${j}`);
    const cells = [];
    const keys = [];
    const [roomT, roomS] = this.room(t);
    const growing = roomT > T || roomS > S;
    const side = this.cellSide(roomS);
    // Labels thin out as cells shrink: every `every`-th key (and query) is named.
    const every = side >= 14 ? 1 : Math.ceil(14 / side);
    const named = (n: number, hot: boolean) => hot || n % every === 0;
    // Header row: an empty corner, then the key tokens.
    keys.push(html`<div class="lab" aria-hidden="true"></div>`);
    // A key label wider than one Chinese character (two columns) is written vertically.
    for (let j = 0; j < S; j++)
      keys.push(
        html`<div class="lab col ${displayWidth(k(j)) > 2 ? 'long' : ''} ${j === fj ? 'hot' : ''}" style=${styles(`width:${side}px`)} lang=${ifDefined(tokenLang(k(j)))} aria-hidden="true" title=${msg(str`key ${j}`)}>${named(j, j === fj) ? k(j) : ''}</div>`,
      );
    // Grid or canvas is chosen for the room, so that it does not change while the sequence grows.
    const big = roomT * roomS > BIG_MAP;
    this.shape = [T, S];
    const locale = getLocale();
    for (let i = 0; i < T && !big; i++) {
      const row = [];
      row.push(html`<div class="lab row ${i === fi ? 'hot' : ''}" lang=${ifDefined(tokenLang(q(i)))} aria-hidden="true" title=${msg(str`query ${i}`)}>${named(i, i === fi) ? q(i) : ''}</div>`);
      for (let j = 0; j < S; j++) {
        const p = at(t.probs, b, h, i, j);
        const s = at(t.scores, b, h, i, j);
        const masked = s === Number.NEGATIVE_INFINITY;
        const hot = i === fi && j === fj;
        // A cell is written again only when what it says changed: during playback the
        // earlier rows keep their numbers, and only the new row and column are written.
        // Its colour is drawn on the canvas under the grid (drawUnder).
        row.push(
          guard([p, s, hot, this.raw, q(i), k(j), locale], () => {
            const label = masked ? msg(str`query ${i} “${q(i)}” to key ${j} “${k(j)}”: masked`) : msg(str`query ${i} “${q(i)}” to key ${j} “${k(j)}”: score ${fmt(s)}, probability ${fmt(p)}`);
            return html`<div
              class="cell ${masked ? 'masked' : ''}"
              role="gridcell"
              tabindex=${hot ? 0 : -1}
              data-i=${i}
              data-j=${j}
              data-prob=${p}
              data-shown=${masked ? '-Infinity' : this.raw ? s : p}
              data-score=${masked ? '-Infinity' : s}
              aria-label=${label}
            ></div>`;
          }),
        );
      }
      cells.push(html`<div role="row" class="r">${row}</div>`);
    }
    const fs = at(t.scores, b, h, fi, fj);
    const fp = at(t.probs, b, h, fi, fj);
    const masked = fs === Number.NEGATIVE_INFINITY;
    const scoreFormula =
      t.site === 'cross'
        ? msg('q from the decoder, k and v from the encoder')
        : msg('q and k from the same sequence');
    const map = big
      ? html`<canvas
          class="big"
          tabindex="0"
          role="img"
          data-site=${t.site}
          data-layer=${t.layer}
          data-head=${h}
          aria-label=${msg(str`${SITE_NAMES[t.site]}, layer ${t.layer + 1}, head ${h + 1}: ${T} queries by ${S} keys; arrow keys move the highlighted cell, its values are read out below`)}
          @mousemove=${(e: MouseEvent) => {
            const r = (e.target as HTMLCanvasElement).getBoundingClientRect();
            const j = Math.floor(((e.clientX - r.left) / r.width) * S);
            const i = Math.floor(((e.clientY - r.top) / r.height) * T);
            if (i >= 0 && i < T && j >= 0 && j < S && (i !== fi || j !== fj)) this.setFocus(i, j, false);
          }}
          @keydown=${(e: KeyboardEvent) => this.move(e, T, S)}
        ></canvas>`
      : html`<div
          class="grid map"
          role="grid"
          @mouseover=${this.cellEvent}
          @focusin=${this.cellEvent}
          @keydown=${this.cellEvent}
          aria-label=${msg(str`${SITE_NAMES[t.site]}, layer ${t.layer + 1}, head ${h + 1}: rows are queries, columns are keys`)}
          data-site=${t.site}
          data-layer=${t.layer}
          data-head=${h}
          data-shows=${this.raw ? 'scores' : 'probabilities'}
          style=${styles(
            growing
              ? `grid-template-columns: ${LABEL_COL}px repeat(${S}, ${side}px); grid-template-rows: ${LABEL_ROW}px repeat(${T}, ${side}px)`
              : `grid-template-columns: auto repeat(${S}, ${side}px); grid-template-rows: auto repeat(${T}, ${side}px)`,
          )}
        >
          <canvas class="under" aria-hidden="true"></canvas>
          ${keys}${cells}
        </div>`;
    // While the sequence grows, the map's box is that of the full length from the start.
    const cell = big ? this.bigCell(t) : side + 1;
    const box = growing ? `min-width:${(big ? 0 : LABEL_COL) + roomS * cell}px;min-height:${(big ? 0 : LABEL_ROW) + roomT * cell}px` : '';
    return html`<div class="map-tools small">
        <label><input type="checkbox" .checked=${this.raw} @change=${(e: Event) => (this.raw = (e.target as HTMLInputElement).checked)} />
          ${msg('raw scores (before softmax, after the mask)')}</label>
        <label><input type="checkbox" .checked=${this.zoom} @change=${(e: Event) => (this.zoom = (e.target as HTMLInputElement).checked)} />
          ${msg('zoom (full-size cells, scroll)')}</label>
      </div>
      <div class="beside">
        <div class="map-wrap ${this.zoom ? 'zoomed' : ''}" ${scrollRegion(scrollLabel())} style=${styles(box)}>${map}</div>
        <tp-qk
          .trace=${t}
          .b=${b}
          .head=${h}
          .i=${fi}
          .j=${fj}
          .scaleOn=${this.scaleOn}
          .score=${this.score}
          .posEncoding=${this.posEncoding}
          .maxDistance=${this.maxDistance}
          .queryTokens=${this.queryTokens}
          .keyTokens=${this.keyTokens}
        ></tp-qk>
      </div>
      <div class="readout" aria-live="polite">
        <span class="mono">“${q(fi)}”</span> ${msg(str`(query ${fi})`)} → <span class="mono">“${k(fj)}”</span> ${msg(str`(key ${fj}):`)}
        ${masked
          ? html`<strong>${msg('masked')}</strong> — ${msg('the score is −∞, so softmax gives it weight 0.')}`
          : html`${msg('score')} <span class="mono" data-score-function=${this.score}>${fmt(fs)}</span> = ${this.scoreFunction()}${' '}
              ${msg('(plus any position bias); probability')} <span class="mono" style=${styles(`background:${viridis(fp)};color:${inkOn(fp)};padding:0 3px;border-radius:3px`)}>${fmt(fp)}</span>
              ${msg('= softmax over the row.')}`}
        <span class="muted small">(${scoreFormula})</span>
      </div>
      <div class="legend">
        ${this.raw
          ? html`<span>${msg('lowest')}</span><span class="ramp" aria-hidden="true"></span><span>${msg('highest')}</span><span>${msg('raw score of this head (viridis, scaled to its own range)')}</span>`
          : html`<span>0</span><span class="ramp" aria-hidden="true"></span><span>1</span><span>${msg('probability (viridis)')}</span>`}
        <span class="hatch" aria-hidden="true"></span><span>${msg('masked (−∞ before softmax)')}</span>
      </div>`;
  }

  /** The score function this model runs, as the readout writes it. */
  private scoreFunction() {
    switch (this.score) {
      case 'additive':
        return html`w<sub>h</sub>·tanh(q + k) <span class="muted">${msg('(additive: never divided by √d_k)')}</span>`;
      case 'dot':
        return html`q·k <span class="muted">${msg('(plain dot product: never divided by √d_k)')}</span>`;
      default:
        return this.scaleOn ? 'q·k / √d_k' : html`q·k <span class="muted">${msg('(the division by √d_k is switched off)')}</span>`;
    }
  }

  /** now − before for the selected head, when the previous run had the same shape. */
  private difference(t: AttnTrace) {
    const prev = this.previous.find((a) => a.site === t.site && a.layer === t.layer);
    if (!prev || prev.probs.shape.join() !== t.probs.shape.join()) return nothing;
    const [B, H, T, S] = t.probs.shape;
    const b = Math.min(this.row, B - 1);
    const h = Math.min(this.head, H - 1);
    let maxAbs = 0;
    const cells = [];
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < S; j++) {
        const d = at(t.probs, b, h, i, j) - at(prev.probs, b, h, i, j);
        maxAbs = Math.max(maxAbs, Math.abs(d));
        const label = msg(str`query ${i} to key ${j}: probability changed by ${fmt(d)}`);
        cells.push(html`<div class="cell" role="gridcell" style=${styles(`background:${diverging(d)}`)} title=${label} aria-label=${label} data-diff=${d}></div>`);
      }
    }
    return html`<div class="diff">
      <label class="small"><input type="checkbox" .checked=${this.showDiff} @change=${(e: Event) => (this.showDiff = (e.target as HTMLInputElement).checked)} />
        ${msg(str`compare with the previous setting (${this.beforeLabel})`)}</label>
      ${this.showDiff
        ? html`<div class="map-wrap">
              <div class="grid" role="grid" aria-label=${msg('change in attention probability, now minus before')} style=${styles(`grid-template-columns: repeat(${S}, auto)`)}>${cells}</div>
            </div>
            <div class="legend"><span style=${styles(`background:${diverging(-1)}`)}>&nbsp;−1&nbsp;</span><span style=${styles(`background:${diverging(1)}`)}>&nbsp;+1&nbsp;</span>
              <span>${msg(str`probability now − before; largest change ${fmt(maxAbs)}`)}</span></div>`
        : nothing}
    </div>`;
  }

  render() {
    const cur = this.current();
    const traces = this.traces();
    const H = cur ? cur.probs.shape[1] : 0;
    const ablateLocked = whyLocked(this.lock, 'ablate');
    // The head shown (layer, head) and the attention kind (site) are settings too: free unless the link locks them.
    const pickLocked = whyLocked(this.lock, 'layer') || whyLocked(this.lock, 'head');
    const pickName = whyLocked(this.lock, 'layer') ? 'layer' : 'head';
    const siteLocked = whyLocked(this.lock, 'site');
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">
        ${msg('Attention')}
        <span class="sub">${cur ? `${SITE_NAMES[this.site]} · ${msg(str`layer ${this.layer + 1}`)} · ${msg(str`head ${Math.min(this.head, H - 1) + 1}`)}` : msg('no attention in this view')}</span>
      </h2>
      ${this.sites().length > 1
        ? html`<div class="sites" role="group" aria-label=${msg('attention kind')}>
            ${this.sites().map(
              (s) => html`<button aria-pressed=${s === this.site} ?disabled=${!!siteLocked} @click=${() => emit(this, 'tp-select', { site: s, layer: 0, head: this.head })}>
                ${SITE_NAMES[s]}
              </button>`,
            )}
          </div>`
        : nothing}
      ${cur && cur.probs.shape[0] > 1
        ? html`<div class="sites" role="group" aria-label=${msg('sequence of the batch')}>
            ${Array.from(
              { length: cur.probs.shape[0] },
              (_, b) => html`<button aria-pressed=${b === this.row} @click=${() => emit(this, 'tp-row', b)}>${msg(str`sequence ${b + 1}`)}</button>`,
            )}
          </div>`
        : nothing}
      ${siteLocked && this.sites().length > 1 ? html`<p class="small">${lockedNote('site', siteLocked)}</p>` : nothing}
      ${traces.length && ablateLocked ? html`<p class="small">${lockedNote('ablate', ablateLocked, 'why-ablate')}</p>` : nothing}
      ${traces.length && pickLocked ? html`<p class="small">${lockedNote(pickName, pickLocked)}</p>` : nothing}
      ${traces.length
        ? html`<div class="thumbs ${traces.length * H > MANY_HEADS ? 'many' : ''}" ${scrollRegion(scrollLabel())} style=${styles(`grid-template-columns: auto repeat(${H}, auto)`)} role="group" aria-label=${msg('heads by layer')}>
            ${traces.map(
              (t) => html`<div class="layer-label">${msg(str`layer ${t.layer + 1}`)}</div>
                ${Array.from({ length: H }, (_, h) => {
                  const ref: HeadRef = { site: t.site, layer: t.layer, head: h };
                  const off = this.isOff(ref);
                  const selected = t.layer === this.layer && h === this.head;
                  return html`<div class="thumb ${off ? 'off' : ''}">
                    <button
                      class="pick"
                      aria-current=${selected}
                      ?disabled=${!!pickLocked}
                      aria-label=${msg(str`show layer ${t.layer + 1} head ${h + 1}`)}
                      @click=${() => emit(this, 'tp-select', { site: t.site, layer: t.layer, head: h })}
                    >
                      <canvas class="t" data-layer=${t.layer} data-head=${h} aria-hidden="true"></canvas>
                    </button>
                    <button
                      class="abl"
                      aria-pressed=${off}
                      ?disabled=${!!ablateLocked}
                      aria-describedby=${ablateLocked ? 'why-ablate' : nothing}
                      aria-label=${off ? msg(str`off — switch on layer ${t.layer + 1} head ${h + 1}`) : msg(str`h${h + 1} — switch off (ablate) layer ${t.layer + 1} head ${h + 1}`)}
                      title=${msg("zero this head's output")}
                      @click=${() => emit(this, 'tp-ablate', ref)}
                    >
                      ${off ? msg('off') : `h${h + 1}`}
                    </button>
                  </div>`;
                })}`,
            )}
          </div>`
        : nothing}
      ${cur ? this.heatmap(cur) : nothing} ${cur && this.beforeLabel ? this.difference(cur) : nothing}
    </section>`;
  }
}

/** The viridis ramp as CSS gradient stops (constant text, not user data). */
function unsafeRamp() {
  return unsafeCSS(Array.from({ length: 9 }, (_, i) => viridis(i / 8)).join(', '));
}

customElements.define('tp-attention', TpAttention);
