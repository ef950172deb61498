// <tp-ov-heads>: the overview's thumbnails of one attention sublayer, a small heatmap per
// head of the probabilities of row 0 (queries down, keys across; viridis from 0 to 1, cells
// the mask hid in the page's grey), the newest query's row outlined. Each thumbnail's
// numbers are in its data attributes: `data-head`, `data-rows`, `data-cols`, `data-max`
// (its largest probability) and `data-last` (the newest real query's row, comma-separated),
// all exactly as the engine sent them.

import { html, css, type PropertyValues } from 'lit';
import { LocalizedElement } from '../../i18n/locale';
import { msg, str } from '@lit/localize';
import type { AttnTrace } from '../../engine/protocol';
import { fmt, viridisRgb } from '../../ui/palette';
import { ThemeColours } from '../../ui/shared';
import { headMatrix } from './stages';
import { paintGrid } from './paint';

export class TpOvHeads extends LocalizedElement {
  private colours = new ThemeColours(this, ['--tp-masked']);
  static properties = {
    trace: { attribute: false },
    last: { type: Number },
    heads: { type: Number },
    mark: { type: Boolean },
  };

  /** The attention trace of the sublayer (B, H, T, S), or null before the first pass. */
  trace: AttnTrace | null = null;
  /** The newest real query (row) of row 0. */
  last = 0;
  /** Heads to reserve room for before a trace arrives. */
  heads = 4;
  /** Outline the newest query's row (a stack that reads the source has no newest token). */
  mark = true;

  static styles = css`
    :host {
      display: grid;
      grid-template-columns: repeat(var(--ov-head-cols, 2), var(--ov-head, 40px));
      gap: 3px;
      justify-content: center;
    }
    .head {
      position: relative;
      width: var(--ov-head, 40px);
      height: var(--ov-head, 40px);
      border-radius: 3px;
      overflow: hidden;
      background: var(--tp-io-fill);
    }
    canvas {
      width: 100%;
      height: 100%;
      display: block;
      image-rendering: pixelated;
    }
    .h {
      position: absolute;
      left: 2px;
      top: 1px;
      font-size: 9px;
      line-height: 1;
      color: #fff;
      text-shadow: 0 0 2px #000;
      pointer-events: none;
    }
  `;

  protected willUpdate(): void {
    const H = this.trace?.probs.shape[1] ?? this.heads;
    this.style.setProperty('--ov-head-cols', String(H <= 4 ? 2 : Math.ceil(H / 2)));
  }

  render() {
    const t = this.trace;
    const H = t?.probs.shape[1] ?? this.heads;
    return Array.from({ length: H }, (_, h) => {
      if (!t) return html`<span class="head" data-head=${h}></span>`;
      const m = headMatrix(t, h);
      const last = Math.min(Math.max(0, this.last), m.rows - 1);
      const row = Array.from(m.probs.subarray(last * m.cols, (last + 1) * m.cols));
      let max = 0;
      for (const p of m.probs) if (p > max) max = p;
      return html`<span
        class="head"
        data-head=${h}
        data-rows=${m.rows}
        data-cols=${m.cols}
        data-query=${last}
        data-max=${max}
        data-last=${row.join(',')}
        title=${msg(str`head ${h + 1}`)}
        ><canvas role="img" aria-label=${msg(str`head ${h + 1}: attention of ${m.rows} queries over ${m.cols} keys, largest ${fmt(max, 2)}`)}></canvas
        ><span class="h" aria-hidden="true">${h + 1}</span></span
      >`;
    });
  }

  protected updated(changed: PropertyValues<this>): void {
    if (!changed.has('trace') && !changed.has('last') && !changed.has('mark')) return;
    const t = this.trace;
    if (!t) return;
    const canvases = this.renderRoot.querySelectorAll('canvas');
    const masked = hexRgb(this.colours.get()['--tp-masked']) ?? MASKED;
    canvases.forEach((c, h) => draw(c, headMatrix(t, h), this.mark ? Math.min(this.last, t.probs.shape[2] - 1) : -1, masked));
  }
}

/** Masked cells: the theme's `--tp-masked`, else a neutral grey. */
const MASKED: [number, number, number] = [150, 156, 166];

/** `#rrggbb` as numbers (null for anything else). */
function hexRgb(v: string): [number, number, number] | null {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(v.trim());
  return m ? [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)] : null;
}

/** One head's matrix, a pixel per cell (the CSS scales it up), the newest query's row outlined. */
function draw(canvas: HTMLCanvasElement, m: ReturnType<typeof headMatrix>, last: number, grey: [number, number, number]): void {
  const scale = Math.max(1, Math.ceil(40 / Math.max(m.rows, m.cols)));
  paintGrid(canvas, m.rows, m.cols, scale, scale, (k) => (m.masked[k] ? grey : viridisRgb(Math.sqrt(Math.max(0, m.probs[k])))), last, Math.max(1, scale / 2));
}

customElements.define('tp-ov-heads', TpOvHeads);
