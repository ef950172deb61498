// Softmax saturation: for the selected attention layer, how peaked each head's rows are
// — the mean entropy of a query's attention row and its mean largest probability. With
// the √d_k scaling off, scores grow with d_k and the softmax saturates: entropy falls
// and the largest weight climbs toward 1. The previous setting is shown beside.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import type { AttnSite, AttnTrace } from '../engine/protocol';
import { panel, scrollLabel, scrollRegion, styles } from '../ui/shared';
import { fmt, inkOn, viridis } from '../ui/palette';
import { SITE_NAMES } from './attention-common';

interface Readout {
  entropy: number[];
  maxProb: number[];
}

function readout(t: AttnTrace | undefined, row: number): Readout | null {
  if (!t || !t.entropy || !t.max_prob) return null;
  const [B, H] = t.entropy.shape;
  const b = Math.min(row, B - 1);
  return {
    entropy: Array.from(t.entropy.data.slice(b * H, (b + 1) * H)),
    maxProb: Array.from(t.max_prob.data.slice(b * H, (b + 1) * H)),
  };
}

function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

export class TpSaturation extends LocalizedElement {
  static properties = {
    attention: { attribute: false },
    previous: { attribute: false },
    site: { type: String },
    layer: { type: Number },
    row: { type: Number },
    scaleOn: { type: Boolean },
    score: { type: String },
    beforeLabel: { type: String },
    sides: { attribute: false },
  };

  attention: AttnTrace[] = [];
  previous: AttnTrace[] = [];
  site: AttnSite = 'decoder_self';
  layer = 0;
  row = 0;
  scaleOn = true;
  /** The model's score function: only `scaled_dot` is divided by √d_k, and only then does the switch act. */
  score = 'scaled_dot';
  beforeLabel = '';
  /** The settings of the previous pass and of now, in words (each side's column label). */
  sides: { before: string; after: string } | null = null;

  static styles = [
    panel,
    css`
      .wrap {
        overflow-x: auto;
      }
      table {
        border-collapse: collapse;
        font-size: var(--tp-text-sm);
      }
      th,
      td {
        padding: 2px 8px;
        text-align: right;
        border-bottom: 1px solid var(--tp-line);
        white-space: nowrap;
      }
      th[scope='row'] {
        text-align: left;
      }
      thead th {
        color: var(--tp-muted);
        font-weight: 600;
      }
      td.cell {
        font-family: var(--tp-mono);
      }
      tfoot td,
      tfoot th {
        font-weight: 700;
        border-bottom: none;
      }
      .before {
        border-left: 2px solid var(--tp-line);
      }
      th[scope='colgroup'] {
        text-align: center;
        white-space: normal;
        max-width: 16em;
      }
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
    `,
  ];

  /** A max-probability cell, shaded from spread (dark) to saturated (bright). */
  private probCell(p: number, cls = '') {
    return html`<td class="cell ${cls}" style=${styles(`background:${viridis(p)};color:${inkOn(p)}`)}>${fmt(p)}</td>`;
  }

  render() {
    const cur = this.attention.find((a) => a.site === this.site && a.layer === this.layer);
    const prev = this.previous.find((a) => a.site === this.site && a.layer === this.layer);
    const now = readout(cur, this.row);
    const before = this.beforeLabel && prev && cur && prev.entropy.shape.join() === cur.entropy.shape.join() ? readout(prev, this.row) : null;
    const keys = cur ? cur.probs.shape[3] : 0;
    const scaled = this.score === 'scaled_dot';
    const setting = before && this.sides ? this.sides.after : !scaled ? msg('never scaled') : this.scaleOn ? msg('√d_k scaling on') : msg('√d_k scaling off');
    const was = this.sides ? this.sides.before : msg('before');
    const promise = scaled
      ? msg('Turn the √d_k scaling off and the dot-product part of every score grows by the factor √d_k: rows saturate toward one key.')
      : this.score === 'dot'
        ? msg("This model's scores are plain dot products, never divided by √d_k, so the scaling switch changes nothing here: its rows are as peaked as training made them.")
        : msg("This model's scores are additive, w·tanh(q + k), never divided by √d_k, so the scaling switch changes nothing here.");
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Softmax saturation')} <span class="sub">${SITE_NAMES[this.site]}${msg(', ')}${msg(str`layer ${this.layer + 1}`)}</span></h2>
      <p>
        ${msg(str`Per head: the entropy of a query's attention row (in nats; 0 = all weight on one key, at most ln ${keys} = ${fmt(Math.log(Math.max(keys, 1)), 2)} for ${keys} equal keys) and its largest probability, averaged over the queries.`)}
        <span data-score-function=${this.score}>${promise}</span>
      </p>
      ${now
        ? html`<div class="wrap" ${scrollRegion(scrollLabel())}>
              <table aria-label=${before ? msg(str`attention entropy and largest probability per head, ${setting}, beside the previous setting`) : msg(str`attention entropy and largest probability per head, ${setting}`)}>
                <thead>
                  ${before
                    ? html`<tr>
                        <td></td>
                        <th scope="colgroup" colspan="2" data-side="after"><span class="small muted">${msg('now')}:</span> ${setting}</th>
                        <th scope="colgroup" colspan="2" class="before" data-side="before"><span class="small muted">${msg('before')}:</span> ${was}</th>
                      </tr>`
                    : nothing}
                  <tr>
                    <th scope="col">${msg('head')}</th>
                    <th scope="col">${msg('entropy')}${before ? nothing : html`<br /><span class="small muted">${setting}</span>`}</th>
                    <th scope="col">max p${before ? nothing : html`<br /><span class="small muted">${setting}</span>`}</th>
                    ${before ? html`<th scope="col" class="before">${msg('entropy')}</th><th scope="col">max p</th>` : nothing}
                  </tr>
                </thead>
                <tbody>
                  ${now.entropy.map(
                    (e, h) => html`<tr data-head=${h} data-entropy=${e} data-max-prob=${now.maxProb[h]}>
                      <th scope="row">${h + 1}</th>
                      <td class="cell">${fmt(e)}</td>
                      ${this.probCell(now.maxProb[h])}
                      ${before ? html`<td class="cell before">${fmt(before.entropy[h])}</td>${this.probCell(before.maxProb[h])}` : nothing}
                    </tr>`,
                  )}
                </tbody>
                <tfoot>
                  <tr data-mean-entropy=${mean(now.entropy)} data-before-mean-entropy=${before ? mean(before.entropy) : ''}>
                    <th scope="row">${msg('mean')}</th>
                    <td class="cell">${fmt(mean(now.entropy))}</td>
                    <td class="cell">${fmt(mean(now.maxProb))}</td>
                    ${before
                      ? html`<td class="cell before">${fmt(mean(before.entropy))}</td>
                          <td class="cell">${fmt(mean(before.maxProb))}</td>`
                      : nothing}
                  </tr>
                </tfoot>
              </table>
            </div>
            ${before
              ? html`<p class="small muted">${msg(str`“before”: the setting before the last switch (${this.beforeLabel}).`)}</p>`
              : html`<p class="small muted">${scaled ? msg('Toggle √d_k scaling (Controls) to see the previous setting beside this one.') : msg('Change a setting (Controls) to see the previous one beside this.')}</p>`}`
        : html`<p class="muted">${msg('No attention map for this layer yet.')}</p>`}
    </section>`;
  }
}

customElements.define('tp-saturation', TpSaturation);
