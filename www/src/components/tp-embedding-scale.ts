// ‖token embedding‖ against ‖position vector‖ at each position of the input, with and
// without the ×√d_model that the model applies to its embeddings. The two are added
// before the first layer; the factor decides which one dominates the sum.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller } from '../engine/client';
import type { EmbeddingScale, ModelInfo } from '../engine/protocol';
import { panel, scrollLabel, scrollRegion } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';
import { lineChart, swatch, type Series } from '../ui/plot';

const TOKEN = '#d55e00';
const SCALED = '#cc79a7';
const POS = '#0072b2';

export class TpEmbeddingScale extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    info: { attribute: false },
    tokens: { attribute: false },
    labels: { attribute: false },
    data: { state: true },
    problem: { state: true },
  };

  engine: EngineCaller | null = null;
  info: ModelInfo | null = null;
  /** The input ids as the model reads them. */
  tokens: number[] = [];
  labels: string[] = [];
  /** The engine's numbers (read by the browser tests). */
  data: EmbeddingScale | null = null;
  problem = '';
  private asked = '';
  private askedInfo: ModelInfo | null = null;
  /** The model `data` was measured on (read by the lessons: a model just loaded is not measured yet). */
  measuredInfo: ModelInfo | null = null;

  /**
   * Mean ‖position vector‖ over mean ‖token part as the model adds it‖ (×√d_model where
   * the model multiplies) over the input, from the engine's norms; null without a
   * position vector (read by the lessons and the browser tests).
   */
  get ratio(): number | null {
    const d = this.data;
    if (!d || !d.position_norm.length || !d.token_norm.length) return null;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const tok = mean(d.scaled_in_model ? d.token_norm_scaled : d.token_norm);
    return tok > 0 ? mean(d.position_norm) / tok : null;
  }

  static styles = [
    panel,
    css`
      svg {
        width: 100%;
        height: auto;
        display: block;
        max-width: 620px;
      }
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
      .legend {
        display: flex;
        gap: 14px;
        flex-wrap: wrap;
        font-size: var(--tp-text-sm);
      }
      .swatch {
        display: inline-block;
        width: 18px;
        border-top: 3px solid;
        vertical-align: middle;
        margin-right: var(--tp-space-1);
      }
      .swatch.dashed {
        border-top-style: dashed;
      }
      table {
        border-collapse: collapse;
        font-size: var(--tp-text-sm);
        font-variant-numeric: tabular-nums;
      }
      td,
      th {
        padding: 1px 6px;
        text-align: right;
        border-bottom: 1px solid var(--tp-line);
      }
      .wrap {
        overflow-x: auto;
      }
    `,
  ];

  updated(): void {
    if (!this.engine || !this.info || !this.tokens.length) return;
    // Another model (a sibling may share every size and the prompt) or another input.
    const key = this.tokens.join(',');
    if (key === this.asked && this.info === this.askedInfo) return;
    this.asked = key;
    this.askedInfo = this.info;
    void this.load();
  }

  private async load() {
    const info = this.info;
    try {
      this.data = await this.engine!.call('embeddingScale', { tokens: this.tokens });
      this.measuredInfo = info;
      this.problem = '';
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  /** Which part dominates the sum in this model, with the ratio measured on its weights. */
  private balance(r: number, scaled: boolean) {
    const x = fmt(r, 2);
    const text = scaled
      ? r >= 1
        ? msg(str`In this model the position vector is ${x}× the size of the scaled token embedding it is added to: the position part is the larger.`)
        : msg(str`In this model the position vector is ${x}× the size of the scaled token embedding it is added to: the token part is the larger.`)
      : r >= 1
        ? msg(str`In this model, without the factor, the position vector is ${x}× the size of the token embedding it is added to: the position part dominates the sum.`)
        : msg(str`In this model, without the factor, the position vector is ${x}× the size of the token embedding it is added to: the token part is still the larger.`);
    return html`<p class="verdict" data-ratio=${r}>${text}</p>`;
  }

  render() {
    const d = this.data;
    const info = this.info;
    const series: Series[] = d
      ? [
          { name: '‖E[token]‖', color: TOKEN, dashed: true, points: d.token_norm.map((v, t) => [t, v]) },
          { name: '‖E[token]‖ · √d_model', color: SCALED, points: d.token_norm_scaled.map((v, t) => [t, v]) },
          ...(d.position_norm.length ? [{ name: '‖PE[t]‖', color: POS, points: d.position_norm.map((v, t) => [t, v] as [number, number]) }] : []),
        ]
      : [];
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    const chart = d && d.token_norm.length ? lineChart(series, { width: 560, height: 220, xLabel: msg('position'), yLabel: msg('L2 norm'), yMin: 0 }) : null;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Embedding × √d_model')} <span class="sub">${msg('sizes of what is added at the input')}</span></h2>
      <p>
        ${msg('The first layer reads E[token] · s + PE[position]. Embedding tables are initialised small (entries of size about 1/√d_model), while every sinusoidal position vector has length √(d_model/2). Multiplying the embedding by s = √d_model')}${d ? html` = ${fmt(d.root_c, 2)}` : nothing}
        ${msg('lifts it to the same footing, so the position does not drown out the token.')}
        ${info && d
          ? d.scaled_in_model
            ? msg('This model multiplies by √d_model.')
            : msg('This model does not multiply (s = 1).')
          : nothing}
        ${d && !d.position_norm.length ? html`<br />${msg('This model adds no position vector to the embedding (its positions act inside attention).')}` : nothing}
      </p>
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}
      ${chart && d
        ? html`<div class="legend" aria-hidden="true">
              <span>${swatch(TOKEN, true)}${msg('‖E[token]‖ as stored')}</span>
              <span>${swatch(SCALED)}‖E[token]‖ · √d_model</span>
              ${d.position_norm.length ? html`<span>${swatch(POS)}‖PE[t]‖</span>` : nothing}
            </div>
            <svg viewBox=${chart.viewBox} role="img" aria-label=${msg('norm of the token embedding with and without the factor, and of the position vector, at each position')}>${chart.body}</svg>
            <p class="small" data-mean-token=${mean(d.token_norm)} data-mean-scaled=${mean(d.token_norm_scaled)} data-mean-position=${mean(d.position_norm)}>
              ${msg('Mean over the input:')} ‖E‖ = ${fmt(mean(d.token_norm))}, ‖E‖·√d_model = ${fmt(mean(d.token_norm_scaled))}${d.position_norm.length
                ? html`, ‖PE‖ = ${fmt(mean(d.position_norm))}`
                : nothing}.
            </p>
            ${this.ratio !== null ? this.balance(this.ratio, d.scaled_in_model) : nothing}
            <details>
              <summary class="small">${msg('Per position')}</summary>
              <div class="wrap" ${scrollRegion(scrollLabel())}>
                <table>
                  <thead><tr><th>t</th><th>${msg('token')}</th><th>‖E‖</th><th>‖E‖·√d</th>${d.position_norm.length ? html`<th>‖PE‖</th>` : nothing}</tr></thead>
                  <tbody>
                    ${d.token_norm.map(
                      (v, t) => html`<tr data-t=${t} data-token-norm=${v} data-scaled-norm=${d.token_norm_scaled[t]} data-position-norm=${d.position_norm[t] ?? ''}>
                        <td>${t}</td><td>${showToken(this.labels[t] ?? '')}</td><td>${fmt(v)}</td><td>${fmt(d.token_norm_scaled[t])}</td>${d.position_norm.length ? html`<td>${fmt(d.position_norm[t])}</td>` : nothing}
                      </tr>`,
                    )}
                  </tbody>
                </table>
              </div>
            </details>`
        : html`<p class="muted">${msg('Waiting for the input…')}</p>`}
    </section>`;
  }
}

customElements.define('tp-embedding-scale', TpEmbeddingScale);
