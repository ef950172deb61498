// Why scores are divided by √d_k: the core draws q and k with unit-variance entries and
// measures Var(q·k) against the width d_k (1 … 512), before and after the division, and
// what a softmax over such scores looks like (its entropy and largest probability).
// The registry puts it just before the saturation view: the loaded model's own heads.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import type { ScoreScaling } from '../engine/protocol';
import type { EngineCaller } from '../engine/client';
import { panel, scrollLabel, scrollRegion, SeenController } from '../ui/shared';
import { fmt, SERIES } from '../ui/palette';
import { lineChart, swatch, type Series } from '../ui/plot';
import { int } from '../ui/format';

const RAW = SERIES.vermillion;
const SCALED = SERIES.blue;

export class TpSqrtDk extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    dHead: { type: Number },
    result: { state: true },
    busy: { state: true },
    problem: { state: true },
  };

  engine: EngineCaller | null = null;
  /** The loaded model's d_k, marked on the plots. */
  dHead = 0;
  /** The core's measurement (read by the browser tests). */
  result: ScoreScaling | null = null;
  busy = false;
  problem = '';
  private samples = 10000;
  private keys = 16;
  private seed = 1;
  private asked = false;

  static styles = [
    panel,
    css`
      .charts {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(min(260px, 100%), 1fr));
        gap: 10px;
      }
      svg {
        width: 100%;
        height: auto;
        display: block;
      }
      figure {
        margin: 0;
      }
      figcaption {
        font-size: var(--tp-text-sm);
        font-weight: 600;
      }
      .legend {
        display: flex;
        gap: 14px;
        flex-wrap: wrap;
        font-size: var(--tp-text-sm);
        margin: var(--tp-space-1) 0;
      }
      .swatch {
        display: inline-block;
        width: 18px;
        height: 0;
        border-top: 3px solid;
        vertical-align: middle;
        margin-right: var(--tp-space-1);
      }
      .controls {
        display: flex;
        gap: var(--tp-space-3);
        flex-wrap: wrap;
        align-items: center;
        font-size: var(--tp-text-md);
        margin: 6px 0;
      }
      input[type='number'] {
        width: 6em;
      }
      details {
        font-size: var(--tp-text-sm);
        margin-top: 6px;
      }
      .wrap {
        overflow-x: auto;
      }
      table {
        border-collapse: collapse;
      }
      th,
      td {
        padding: 1px 6px;
        text-align: right;
        border-bottom: 1px solid var(--tp-line);
        font-variant-numeric: tabular-nums;
      }
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
    `,
  ];

  /** Whether the view has been on screen (it asks the engine only from then on). */
  private readonly sight = new SeenController(this);

  updated(): void {
    if (!this.sight.seen) return;
    if (this.engine && !this.asked) {
      this.asked = true;
      void this.measure();
    }
  }

  private async measure() {
    if (!this.engine) return;
    this.busy = true;
    try {
      this.result = await this.engine.call('scoreScaling', { samples: this.samples, keys: this.keys, rows: 400, seed: this.seed });
      this.problem = '';
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    } finally {
      this.busy = false;
    }
  }

  private setNumber(e: Event, min: number, max: number, apply: (v: number) => void) {
    const input = e.target as HTMLInputElement;
    const v = Math.round(Number(input.value));
    if (!Number.isFinite(v) || v < min || v > max) {
      input.setCustomValidity(msg(str`a whole number from ${min} to ${max}`));
      input.reportValidity();
      return;
    }
    input.setCustomValidity('');
    apply(v);
    void this.measure();
  }

  private chart(label: string, series: Series[], o: Parameters<typeof lineChart>[1]) {
    const c = lineChart(series, { ...o, xLog: true, vguide: this.dHead ? [this.dHead, msg(str`this model: d_k = ${this.dHead}`)] : undefined });
    return html`<figure>
      <figcaption>${label}</figcaption>
      <svg viewBox=${c.viewBox} role="img" aria-label=${label}>${c.body}</svg>
    </figure>`;
  }

  private charts(r: ScoreScaling) {
    const w = r.widths;
    const variance: Series[] = [
      { name: 'Var(q·k)', color: RAW, points: w.map((x) => [x.d_k, x.var_raw]) },
      { name: 'Var(q·k / √d_k)', color: SCALED, points: w.map((x) => [x.d_k, x.var_scaled]) },
    ];
    const entropy: Series[] = [
      { name: msg('entropy, q·k'), color: RAW, points: w.map((x) => [x.d_k, x.entropy_raw]) },
      { name: msg('entropy, q·k / √d_k'), color: SCALED, points: w.map((x) => [x.d_k, x.entropy_scaled]) },
    ];
    const top: Series[] = [
      { name: 'max p, q·k', color: RAW, points: w.map((x) => [x.d_k, x.max_prob_raw]) },
      { name: 'max p, q·k / √d_k', color: SCALED, points: w.map((x) => [x.d_k, x.max_prob_scaled]) },
    ];
    return html`<div class="legend" aria-hidden="true">
        <span>${swatch(RAW)}${msg('raw q·k')}</span>
        <span>${swatch(SCALED)}${msg('divided by √d_k')}</span>
      </div>
      <div class="charts">
        ${this.chart(msg('Variance of the score (log scale)'), variance, { xLabel: 'd_k', yLabel: msg('variance'), yLog: true, guides: [[1, msg('variance 1')]] })}
        ${this.chart(msg(str`Softmax entropy over ${r.keys} keys (nats)`), entropy, {
          xLabel: 'd_k',
          yLabel: msg('entropy'),
          yMin: 0,
          yMax: r.max_entropy * 1.05,
          guides: [[r.max_entropy, msg(str`uniform: ln ${r.keys}`)]],
        })}
        ${this.chart(msg('Largest probability in a row'), top, { xLabel: 'd_k', yLabel: 'max p', yMin: 0, yMax: 1 })}
      </div>
      <details>
        <summary>${msg('The numbers')}</summary>
        <div class="wrap" ${scrollRegion(scrollLabel())}>
        <table aria-label=${msg('score variance and softmax spread per d_k')}>
          <thead>
            <tr><th>d_k</th><th>Var(q·k)</th><th>Var(q·k/√d_k)</th><th>${msg('entropy raw')}</th><th>${msg('entropy scaled')}</th><th>${msg('max p raw')}</th><th>${msg('max p scaled')}</th></tr>
          </thead>
          <tbody>
            ${w.map(
              (x) => html`<tr data-dk=${x.d_k} data-var-raw=${x.var_raw} data-var-scaled=${x.var_scaled} data-entropy-raw=${x.entropy_raw} data-entropy-scaled=${x.entropy_scaled}>
                <td>${x.d_k}</td><td>${fmt(x.var_raw, 2)}</td><td>${fmt(x.var_scaled)}</td><td>${fmt(x.entropy_raw)}</td><td>${fmt(x.entropy_scaled)}</td><td>${fmt(x.max_prob_raw)}</td><td>${fmt(x.max_prob_scaled)}</td>
              </tr>`,
            )}
          </tbody>
        </table>
        </div>
      </details>`;
  }

  render() {
    const r = this.result;
    const at64 = r?.widths.find((x) => x.d_k === 64);
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Why divide by √d_k')} <span class="sub">${msg('measured by the engine')}</span></h2>
      <p>
        ${msg('Draw a query q and a key k whose d_k entries each have mean 0 and variance 1. Their dot product adds up d_k independent products of variance 1, so its variance is d_k: wider heads give wider scores, and a softmax over wide scores puts almost all its weight on one key — the entropy collapses and the gradient through the other keys vanishes. Dividing by √d_k brings the variance back to 1 at every width')}${at64 ? msg(str` (here at d_k = ${at64.d_k}: ${fmt(at64.var_raw, 1)} before, ${fmt(at64.var_scaled)} after)`) : nothing}${msg('.')}
      </p>
      <div class="controls">
        <label
          >${msg('pairs per width')}
          <input type="number" min="100" max="200000" step="1000" .value=${String(this.samples)} aria-label=${msg('sampled q, k pairs per width')}
            @change=${(e: Event) => this.setNumber(e, 100, 200000, (v) => (this.samples = v))} />
        </label>
        <label
          >${msg('keys per softmax row')}
          <input type="number" min="2" max="1024" .value=${String(this.keys)} aria-label=${msg('keys per softmax row')}
            @change=${(e: Event) => this.setNumber(e, 2, 1024, (v) => (this.keys = v))} />
        </label>
        <label
          >${msg('seed')}
          <input type="number" min="0" max="1000000" .value=${String(this.seed)} aria-label=${msg('seed of the sampled vectors')}
            @change=${(e: Event) => this.setNumber(e, 0, 1000000, (v) => (this.seed = v))} />
        </label>
        <span class="muted" role="status">${this.busy ? msg('sampling…') : r ? msg(str`${int(r.samples)} pairs per width, seed ${r.seed}`) : ''}</span>
      </div>
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}
      ${r ? this.charts(r) : html`<p class="muted">${msg('Sampling…')}</p>`}
      <p class="small muted">${msg("The loaded model's own heads, with and without the scaling: the softmax saturation view.")}</p>
    </section>`;
  }
}

customElements.define('tp-sqrt-dk', TpSqrtDk);
