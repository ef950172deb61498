// <tp-heat>: one labelled heatmap on a canvas that fits its panel. Hover a cell (or focus
// the map and move with the arrow keys) and the line under it names the cell and gives
// its exact value; that line carries the numbers in data attributes for tests.

import { html, css } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { panel, ThemeColours } from '../ui/shared';
import { fmt } from '../ui/palette';
import { cellAt, drawHeat, HEAT_COLOURS, range } from '../ui/heat';

export class TpHeat extends LocalizedElement {
  static properties = {
    rows: { type: Number },
    cols: { type: Number },
    data: { attribute: false },
    label: { type: String },
    rowName: { attribute: false },
    colName: { attribute: false },
    signed: { attribute: false },
    zeros: { type: Boolean },
    maxCell: { type: Number },
    cursor: { state: true },
  };

  rows = 0;
  cols = 0;
  data: ArrayLike<number> = [];
  /** What the map shows, for the screen reader and the readout. */
  label = '';
  /** How a row / column is named in the readout ("position 3"). */
  rowName: (r: number) => string = (r) => msg(str`row ${r}`);
  colName: (c: number) => string = (c) => msg(str`column ${c}`);
  signed: boolean | undefined = undefined;
  /** Mark cells that are exactly 0 (light grey with a dot). */
  zeros = false;
  /** The largest cell side in CSS pixels (cells shrink to fit the panel). */
  maxCell = 14;
  cursor: [number, number] | null = null;

  static styles = [
    panel,
    css`
      canvas {
        display: block;
        image-rendering: pixelated;
        max-width: 100%;
        border: 1px solid var(--tp-line);
      }
      .readout {
        font-size: var(--tp-text-sm);
        min-height: 1.3em;
        font-variant-numeric: tabular-nums;
      }
      .scale {
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
      }
    `,
  ];

  private colours = new ThemeColours(this, HEAT_COLOURS);

  /** The element's width in CSS pixels, as last measured (reading it in `updated` would force a layout per map). */
  private width = 0;
  private resize = new ResizeObserver((e) => {
    const w = e[0]?.contentRect.width ?? 0;
    if (Math.abs(w - this.width) > 0.5) {
      this.width = w;
      this.drawn = '';
      this.requestUpdate();
    }
  });
  /** What the canvas holds now (the map is drawn again only when that changes, not when the cursor moves). */
  private drawn = '';
  private drawnData: ArrayLike<number> | null = null;

  connectedCallback(): void {
    super.connectedCallback();
    this.resize.observe(this);
  }

  disconnectedCallback(): void {
    this.resize.disconnect();
    super.disconnectedCallback();
  }

  private get canvas(): HTMLCanvasElement | null {
    return this.renderRoot.querySelector('canvas');
  }

  private cellSize(): number {
    const width = this.width || this.getBoundingClientRect().width || 400;
    return Math.max(1, Math.min(this.maxCell, Math.floor((width - 4) / Math.max(1, this.cols))));
  }

  updated(): void {
    const c = this.canvas;
    if (!c || !this.rows || !this.cols) return;
    const cell = this.cellSize();
    const colours = this.colours.get();
    const key = `${this.rows}×${this.cols}·${cell}·${this.signed}·${this.zeros}·${colours['--tp-zero']}·${colours['--tp-hatch-a']}`;
    if (key === this.drawn && this.drawnData === this.data) return;
    this.drawn = key;
    this.drawnData = this.data;
    drawHeat(c, { rows: this.rows, cols: this.cols, data: this.data, signed: this.signed, zeros: this.zeros }, cell, colours);
    c.style.width = `${this.cols * cell}px`;
    c.style.height = `${this.rows * cell}px`;
  }

  private value(r: number, c: number): number {
    return this.data[r * this.cols + c];
  }

  private move(e: KeyboardEvent) {
    const [r, c] = this.cursor ?? [0, 0];
    const step: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const d = step[e.key];
    if (!d) return;
    e.preventDefault();
    this.cursor = [Math.min(this.rows - 1, Math.max(0, r + d[0])), Math.min(this.cols - 1, Math.max(0, c + d[1]))];
  }

  render() {
    const cur = this.cursor && this.cursor[0] < this.rows && this.cursor[1] < this.cols ? this.cursor : null;
    const v = cur ? this.value(cur[0], cur[1]) : NaN;
    const { lo, hi } = range(this.data);
    return html`<canvas
        tabindex="0"
        role="img"
        aria-label=${msg(str`${this.label}: ${this.rows} × ${this.cols}, values from ${fmt(lo)} to ${fmt(hi)}; arrow keys read the cells`)}
        @mousemove=${(e: MouseEvent) => {
          const c = this.canvas;
          if (c) this.cursor = cellAt(c, e, this.rows, this.cols) ?? this.cursor;
        }}
        @keydown=${this.move}
        @focus=${() => (this.cursor = this.cursor ?? [0, 0])}
      ></canvas>
      <div class="scale">${fmt(lo)} … ${fmt(hi)}${this.zeros ? ` · ${msg('grey dotted cells are exactly 0')}` : ''}</div>
      <div class="readout" aria-live="polite" data-row=${cur ? cur[0] : ''} data-col=${cur ? cur[1] : ''} data-value=${cur ? String(v) : ''}>
        ${cur ? `${this.rowName(cur[0])}, ${this.colName(cur[1])}: ${fmt(v, 4)}` : msg('Hover or focus the map to read a cell.')}
      </div>`;
  }
}

customElements.define('tp-heat', TpHeat);
