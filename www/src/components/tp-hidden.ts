// Stage 3 — FFN and the residual stream: the size (L2 norm) of every position's hidden
// vector before the first layer and after each layer. The FFN works on each position
// alone; its width and activation are shown beside the map.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import type { HiddenTrace, ModelInfo } from '../engine/protocol';
import { panel, scrollLabel, scrollRegion, styles } from '../ui/shared';
import { fmt, showToken, viridis } from '../ui/palette';
import { activationName } from '../i18n/terms';

export class TpHidden extends LocalizedElement {
  static properties = {
    states: { attribute: false },
    info: { attribute: false },
    tokens: { attribute: false },
    srcTokens: { attribute: false },
    row: { type: Number },
    selectedLayer: { type: Number },
  };

  states: HiddenTrace[] = [];
  info: ModelInfo | null = null;
  tokens: string[] = [];
  srcTokens: string[] = [];
  row = 0;
  selectedLayer = 0;

  static styles = [
    panel,
    css`
      .wrap {
        overflow-x: auto;
      }
      table {
        border-collapse: separate;
        border-spacing: 1px;
        font-size: var(--tp-text-xs);
      }
      th {
        font-weight: normal;
        color: var(--tp-muted);
        font-family: var(--tp-mono);
        white-space: pre;
        padding: 0 3px;
      }
      th[scope='row'] {
        text-align: right;
        font-family: inherit;
      }
      tr.sel th[scope='row'] {
        color: var(--tp-fg);
        font-weight: 700;
      }
      td {
        width: 20px;
        height: 16px;
        border-radius: 2px;
      }
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
    `,
  ];

  private table(t: HiddenTrace) {
    const [L1, B, T] = t.norms.shape;
    const b = Math.min(this.row, B - 1);
    const labels = t.stack === 'encoder_self' && this.info?.arch === 'encoder_decoder' ? this.srcTokens : this.tokens;
    let max = 0;
    for (let l = 0; l < L1; l++) for (let i = 0; i < T; i++) max = Math.max(max, t.norms.data[(l * B + b) * T + i]);
    const stackName = t.stack === 'encoder_self' ? msg('encoder') : msg('decoder');
    return html`<div class="wrap" ${scrollRegion(scrollLabel())}>
      ${this.states.length > 1 ? html`<div class="small muted">${stackName}</div>` : nothing}
      <table aria-label=${msg(str`residual stream norms, ${stackName} stack`)}>
        <thead>
          <tr>
            <th></th>
            ${Array.from({ length: T }, (_, i) => html`<th scope="col">${showToken(labels[i] ?? `${i}`)}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${Array.from({ length: L1 }, (_, l) => {
            const name = l === 0 ? msg('input') : msg(str`after L${l}`);
            return html`<tr class=${l === this.selectedLayer + 1 ? 'sel' : ''}>
              <th scope="row">${name}</th>
              ${Array.from({ length: T }, (_, i) => {
                const v = t.norms.data[(l * B + b) * T + i];
                const label = msg(str`${name}, position ${i} “${labels[i] ?? ''}”: ‖x‖ = ${fmt(v)}`);
                return html`<td style=${styles(`background:${viridis(max > 0 ? v / max : 0)}`)} title=${label} aria-label=${label} data-norm=${v}></td>`;
              })}
            </tr>`;
          })}
        </tbody>
      </table>
    </div>`;
  }

  render() {
    const info = this.info;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Feed-forward & residual stream')} <span class="sub">${msg('‖x‖ per position, per layer')}</span></h2>
      ${info
        ? html`<p>
            ${msg("Each layer's FFN is the same small network applied to every position on its own:")}
            <span class="mono">${activationName(info.activation)}(x·W₁ᵀ + b₁)·W₂ᵀ + b₂</span>, ${info.d_model} → ${info.d_ff} → ${info.d_model}${msg('.')}
            ${info.norm === 'batch_norm'
              ? msg("A position's FFN output never depends on its neighbours. Positions mix in attention and, in train mode, in this model's BatchNorm, whose mean and variance are taken over every position of the batch.")
              : msg("A position's FFN output never depends on its neighbours; in this model attention is the only place positions mix.")}
          </p>`
        : nothing}
      ${this.states.map((t) => this.table(t))}
    </section>`;
  }
}

customElements.define('tp-hidden', TpHidden);
