// Cost: parameters and FLOPs per token of every component of the running model, as the
// engine counts them, and a heads control that rebuilds the count for another h. Split
// into h heads of d_model/h, the Q/K/V/O projections keep exactly the same size.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { costName } from '../i18n/terms';
import type { CostReport, CostRow, ModelInfo } from '../engine/protocol';
import { emit, panel, scrollLabel, scrollRegion } from '../ui/shared';
import { int } from '../ui/format';

/** 12 345 678 → "12,345,678". */
function count(n: number): string {
  return int(n);
}

/** Divisors of n, ascending. */
function divisors(n: number): number[] {
  const out: number[] = [];
  for (let d = 1; d <= n; d++) if (n % d === 0) out.push(d);
  return out;
}

export class TpCost extends LocalizedElement {
  static properties = {
    report: { attribute: false },
    info: { attribute: false },
  };

  report: CostReport | null = null;
  info: ModelInfo | null = null;

  static styles = [
    panel,
    css`
      .wrap {
        overflow-x: auto;
      }
      table {
        border-collapse: collapse;
        font-size: var(--tp-text-sm);
        width: 100%;
      }
      th,
      td {
        padding: 2px 5px;
        border-bottom: 1px solid var(--tp-line);
        text-align: right;
        white-space: nowrap;
      }
      th:first-child,
      td:first-child {
        text-align: left;
        white-space: normal;
      }
      thead th {
        font-weight: 600;
        color: var(--tp-muted);
      }
      tr.group th {
        text-align: left;
        font-weight: 600;
        padding-top: 6px;
      }
      tr.proj td:first-child {
        border-left: 3px solid var(--tp-accent);
      }
      tfoot td {
        font-weight: 700;
        border-bottom: none;
      }
      .controls {
        display: flex;
        gap: 10px;
        align-items: center;
        flex-wrap: wrap;
        margin-bottom: 6px;
      }
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
    `,
  ];

  private rowHtml(r: CostRow) {
    const proj = / projection$/.test(r.part);
    return html`<tr class=${proj ? 'proj' : ''} data-group=${r.group} data-part=${r.part} data-params=${r.params} data-flops=${r.flops} data-layers=${r.layers}>
      <td>${costName(r.part)}</td>
      <td class="mono">${count(r.params)}</td>
      <td class="mono">${r.flops ? count(r.flops) : '—'}</td>
    </tr>`;
  }

  render() {
    const r = this.report;
    const info = this.info;
    const groups: CostRow['group'][] = ['embeddings', 'encoder layer', 'decoder layer', 'head'];
    const totalFlops = r ? r.rows.reduce((s, x) => s + x.flops * x.layers, 0) : 0;
    const layerFlops = r ? r.rows.filter((x) => x.group.endsWith('layer')).reduce((s, x) => s + x.flops * x.layers, 0) : 0;
    const q = r?.rows.find((x) => x.part === 'Q projection');
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Cost')} <span class="sub">${msg('parameters and FLOPs per token, per component')}</span></h2>
      ${info && r
        ? html`<div class="controls">
              <label
                >${msg('heads h')}
                <select
                  aria-label=${msg('number of heads h (divisors of d_model)')}
                  .value=${String(r.n_heads)}
                  @change=${(e: Event) => emit(this, 'tp-heads', Number((e.target as HTMLSelectElement).value))}
                >
                  ${divisors(info.d_model).map((d) => html`<option value=${d} ?selected=${d === r.n_heads}>${d}${d === info.n_heads ? msg(' (trained)') : ''}</option>`)}
                </select></label
              >
              <span class="small" data-dhead=${r.d_head}>d_k = d_model / h = ${r.d_model} / ${r.n_heads} = <strong>${r.d_head}</strong></span>
            </div>
            <p>
              ${msg(str`${r.n_heads} heads of ${r.d_head} dimensions: each head's W_Q is ${r.d_model}×${r.d_head}, and ${r.n_heads} of them side by side are one ${r.d_model}×${r.d_model} matrix —`)}
              ${q ? html`<strong class="mono">${count(q.params)}</strong> ${msg('parameters')}` : nothing}
              ${msg('and the same FLOPs for any h. Scores and the weighted sum cost h × 2·2·d_k per key, also the same for any h.')}
              ${msg(str`Each query is counted as seeing ${r.context} keys, the length of the current input.`)}
              ${headsNote(info, r)}
            </p>
            <div class="wrap" ${scrollRegion(scrollLabel())}>
              <table aria-label=${msg(str`parameters and FLOPs per token with ${r.n_heads} heads`)}>
                <thead>
                  <tr>
                    <th scope="col">${msg('component')}</th>
                    <th scope="col">${msg('parameters')}</th>
                    <th scope="col">${msg('FLOPs / token')}</th>
                  </tr>
                </thead>
                ${groups.map((g) => {
                  const rows = r.rows.filter((x) => x.group === g);
                  if (!rows.length) return nothing;
                  const n = rows[0].layers;
                  const each = g.endsWith('layer') ? (n > 1 ? msg(str`, each of ${n}`) : msg(', the only one')) : '';
                  return html`<tbody>
                    <tr class="group"><th scope="rowgroup" colspan="3">${costName(g)}${each}</th></tr>
                    ${rows.map((x) => this.rowHtml(x))}
                  </tbody>`;
                })}
                <tfoot>
                  <tr data-total-params=${r.params} data-total-flops=${totalFlops}>
                    <td>${msg('whole model')}</td>
                    <td class="mono">${count(r.params)}</td>
                    <td class="mono">${count(totalFlops)}</td>
                  </tr>
                </tfoot>
              </table>
            </div>
            <p class="small muted" data-layer-flops=${layerFlops} data-core-flops=${r.core_layer_flops ?? ''}>
              ${msg('FLOPs are 2 × the multiply-adds of matrix products; lookups, norms, softmax and activations are left out.')}
              ${r.core_layer_flops !== null
                ? msg(str`The layers add up to ${count(layerFlops)} FLOPs per token; the engine's generation counter says ${count(r.core_layer_flops)}.`)
                : msg(str`The whole model's total adds all layers at ${r.context} keys per query.`)}
            </p>`
        : html`<p class="muted">${msg('Waiting for the model…')}</p>`}
    </section>`;
  }
}

/** A reminder that only the trained head count has trained weights. */
function headsNote(info: ModelInfo, r: CostReport) {
  return r.n_heads === info.n_heads ? nothing : msg(str`(The trained model has ${info.n_heads}; this is the same model rebuilt with ${r.n_heads}, counted, not run.)`);
}

customElements.define('tp-cost', TpCost);
