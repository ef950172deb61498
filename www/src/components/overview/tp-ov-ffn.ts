// <tp-ov-ffn>: the overview's live picture of one FFN sublayer: its hidden units
// act(x·W₁ᵀ + b₁) for row 0 as a small heatmap strip, positions down and the d_ff units
// across (viridis of √(value / largest), values at or below 0 darkest), the newest
// position's row outlined. Its numbers are in data attributes, exactly as the engine sent
// them: `data-rows` (positions), `data-cols` (units), `data-max` (the largest value),
// `data-active` (how many values are above 0), `data-pos` and `data-last` (the newest
// position and its row of units, comma-separated).

import { html, css, type PropertyValues } from 'lit';
import { LocalizedElement } from '../../i18n/locale';
import { msg, str } from '@lit/localize';
import type { FfnTrace } from '../../engine/protocol';
import { fmt, viridisRgb } from '../../ui/palette';
import { ffnMatrix } from './stages';
import { paintGrid } from './paint';

export class TpOvFfn extends LocalizedElement {
  static properties = {
    trace: { attribute: false },
    last: { type: Number },
    mark: { type: Boolean },
  };

  /** The FFN trace of the layer (B, T, F), or null before the first pass. */
  trace: FfnTrace | null = null;
  /** The newest real position of row 0. */
  last = 0;
  /** Outline the newest position's row (a stack that reads the source has no newest token). */
  mark = true;

  static styles = css`
    :host {
      display: block;
      width: var(--ov-ffn-w, 104px);
      margin: 0 auto;
    }
    .ffn {
      display: block;
      width: 100%;
      height: var(--ov-ffn-h, 31px);
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
  `;

  render() {
    const t = this.trace;
    if (!t) return html`<span class="ffn"></span>`;
    const m = ffnMatrix(t);
    const last = Math.min(Math.max(0, this.last), m.rows - 1);
    const row = Array.from(m.values.subarray(last * m.cols, (last + 1) * m.cols));
    let max = 0;
    let active = 0;
    for (const v of m.values) {
      if (v > max) max = v;
      if (v > 0) active++;
    }
    return html`<span
      class="ffn"
      data-rows=${m.rows}
      data-cols=${m.cols}
      data-max=${max}
      data-active=${active}
      data-pos=${last}
      data-last=${row.join(',')}
      ><canvas
        role="img"
        aria-label=${msg(str`hidden units of the feed-forward network: ${m.rows} positions × ${m.cols} units, ${active} of ${m.rows * m.cols} above zero, largest ${fmt(max, 2)}`)}
      ></canvas
    ></span>`;
  }

  protected updated(changed: PropertyValues<this>): void {
    if (!changed.has('trace') && !changed.has('last') && !changed.has('mark')) return;
    const t = this.trace;
    const canvas = this.renderRoot.querySelector('canvas');
    if (!t || !canvas) return;
    const m = ffnMatrix(t);
    draw(canvas, m, this.mark ? Math.min(this.last, m.rows - 1) : -1);
  }
}

/** The (T, F) matrix, a pixel per unit across and a few per position down (the CSS scales it). */
function draw(canvas: HTMLCanvasElement, m: ReturnType<typeof ffnMatrix>, last: number): void {
  const sy = Math.max(1, Math.ceil(32 / Math.max(1, m.rows)));
  let max = 0;
  for (const v of m.values) if (v > max) max = v;
  paintGrid(canvas, m.rows, m.cols, 1, sy, (k) => viridisRgb(max > 0 ? Math.sqrt(Math.max(0, m.values[k]) / max) : 0), last, 1);
}

customElements.define('tp-ov-ffn', TpOvFfn);
