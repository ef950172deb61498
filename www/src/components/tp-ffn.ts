// `ffn`: the feed-forward network is position-wise. Two inputs one token apart run through
// the model; for every layer the core compares each position's FFN input row and output
// row bit-exactly. A row's output changes exactly where its input changed: the FFN never
// looks at another position. With the causal mask and the last token edited, only that
// position's rows change at all.

import { html, css, nothing } from 'lit';
import type { AttnSite, BlockDiff, CostReport, FfnProbe, ModelInfo, RowDiff, Switches } from '../engine/protocol';
import { EditView } from './tp-edit-base';
import './tp-heat';
import { fmt } from '../ui/palette';
import { scrollLabel, scrollRegion } from '../ui/shared';
import { msg, str } from '@lit/localize';
import { activationName } from '../i18n/terms';

export class TpFfn extends EditView {
  static properties = {
    ...EditView.properties,
    layer: { type: Number },
    diff: { state: true },
    share: { state: true },
  };

  /** The layer whose activations are drawn. */
  layer = 0;
  /** The core's comparison (read by the browser tests). */
  diff: BlockDiff | null = null;
  /**
   * The FFN's parameters against all of one layer's, from the core's cost report for the
   * loaded model (the stack whose positions are edited; read by the browser tests).
   */
  share: { ffn: number; layer: number; group: string } | null = null;
  private costFor: ModelInfo | null = null;

  static styles = [
    ...EditView.styles,
    css`
      .maps {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(min(200px, 100%), 1fr));
        gap: 10px;
      }
    `,
  ];

  protected variants(): Switches[] {
    return this.switches ? [this.switches] : [];
  }

  protected got(d: BlockDiff[]): void {
    this.diff = d[0] ?? null;
  }

  updated(): void {
    super.updated();
    if (this.engine && this.info && this.info !== this.costFor) {
      this.costFor = this.info;
      void this.loadShare(this.info);
    }
  }

  /** The FFN's share of one layer's parameters, from the core's cost report. */
  private async loadShare(info: ModelInfo) {
    try {
      const c: CostReport = await this.engine!.call('cost', { n_heads: info.n_heads, context: 1 });
      // The stack whose positions are edited: the encoder's where the model has one.
      const group = info.arch === 'decoder_only' ? 'decoder layer' : 'encoder layer';
      const rows = c.rows.filter((r) => r.group === group);
      const ffn = rows.find((r) => r.part === 'FFN')?.params ?? 0;
      const layer = rows.reduce((a, r) => a + r.params, 0);
      if (info === this.info) this.share = layer > 0 ? { ffn, layer, group } : null;
    } catch {
      if (info === this.info) this.share = null;
    }
  }

  /** The stack whose positions were edited: the encoder of an encoder-decoder, else the only one. */
  private stackSite(): AttnSite | null {
    const d = this.diff;
    if (!d) return null;
    return d.after.stacks[0]?.site ?? null;
  }

  private rowsOf(what: 'ffn_input' | 'ffn_output', site: AttnSite): RowDiff[] {
    return (this.diff?.rows ?? []).filter((r) => r.what === what && r.stack === site);
  }

  render() {
    const d = this.diff;
    const info = this.info;
    const site = this.stackSite();
    const ins = site ? this.rowsOf('ffn_input', site) : [];
    const outs = site ? this.rowsOf('ffn_output', site) : [];
    const labels = this.labels();
    const edited = new Set(d ? (this.afterInput?.src ? d.src_edited : d.edited) : []);
    const P = ins[0]?.changed.length ?? 0;
    let agree = 0;
    let total = 0;
    let changedRows = 0;
    ins.forEach((r, l) =>
      r.changed.forEach((c, p) => {
        total++;
        if (c === outs[l]?.changed[p]) agree++;
        if (c || outs[l]?.changed[p]) changedRows++;
      }),
    );
    const ffn: FfnProbe | undefined = d?.after.stacks[0]?.ffn[Math.min(this.layer, (d?.after.stacks[0]?.ffn.length ?? 1) - 1)];
    const cell = (r: RowDiff | undefined, p: number, l: number, what: string) => {
      const c = r?.changed[p] ?? false;
      const m = r?.max_abs[p] ?? 0;
      return html`<td
        class=${c ? 'changed' : 'same'}
        data-layer=${l}
        data-what=${what}
        data-pos=${p}
        data-changed=${String(c)}
        data-max=${m}
        title=${c ? msg(str`changed: max |Δ| = ${fmt(m)}`) : msg('bit-identical')}
      >
        ${c ? `Δ ${fmt(m, 2)}` : '='}
      </td>`;
    };
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Position-wise FFN')} <span class="sub">${msg("edit one token: which rows of each layer's FFN change")}</span></h2>
      ${info
        ? html`<p>
            ${msg('Every layer applies one small network,')} <span class="mono">${activationName(info.activation)}(x·W₁ᵀ + b₁)·W₂ᵀ + b₂</span> (${info.d_model} → ${info.d_ff} → ${info.d_model}),
            ${msg("to each position by itself. What carries an edit to other positions is attention and, in a model with BatchNorm run in train mode, the norm's statistics taken over every position; the FFN passes on a change in a row only if that same row's input changed. Cells compare the f32 bits of the two runs: “=” means bit-identical.")}
            ${this.share
              ? html`<span data-ffn-params=${this.share.ffn} data-layer-params=${this.share.layer}
                  >${msg(str`In this model the FFN holds ${this.share.ffn.toLocaleString('en')} of the ${this.share.layer.toLocaleString('en')} parameters of one layer (${fmt((100 * this.share.ffn) / this.share.layer, 0)} %); the rest are attention's projections and the norms.`)}</span
                >`
              : nothing}
          </p>`
        : nothing}
      ${this.controls()}
      ${d && P
        ? html`<div class="wrap" ${scrollRegion(scrollLabel())}>
              <table aria-label=${msg('FFN input and output rows, changed or bit-identical, per layer and position')}>
                <thead>
                  <tr>
                    <th>${msg('position')}</th>
                    ${ins.map((r) => html`<th>${msg(str`L${r.layer + 1} FFN in`)}</th><th>${msg(str`L${r.layer + 1} FFN out`)}</th>`)}
                  </tr>
                </thead>
                <tbody>
                  ${Array.from({ length: P }, (_, p) => html`<tr class=${edited.has(p) ? 'edited' : ''}>
                      <th scope="row">${p} ${labels[p] ?? ''}${edited.has(p) ? ' ✎' : ''}</th>
                      ${ins.map((r, l) => html`${cell(r, p, r.layer, 'ffn_input')}${cell(outs[l], p, r.layer, 'ffn_output')}`)}
                    </tr>`)}
                </tbody>
              </table>
            </div>
            <p class="verdict" data-agree=${agree} data-total=${total} data-changed-rows=${changedRows}>
              ${msg(str`In ${agree} of ${total} rows (layer × position) the FFN output changed exactly when its input did; ${changedRows} of them changed at all.`)}
            </p>`
        : html`<p class="muted">${msg('Waiting for the model…')}</p>`}
      ${ffn && info
        ? html`<p class="small">
              ${msg(str`Layer ${ffn.layer + 1}, after the edit: the FFN's input, its hidden units after ${activationName(info.activation)} (${fmt(100 * ffn.zero_fraction, 1)}% exactly zero${info.activation === 'relu' ? msg(' — ReLU cuts every negative pre-activation to 0') : ''}) and its output, one row per position.`)}
            </p>
            <div class="maps">
              ${(
                [
                  ['input', msg('ffn input x'), ffn.input, info.d_model],
                  ['hidden', msg(str`hidden ${activationName(info.activation)}(x·W₁ᵀ + b₁)`), ffn.hidden, info.d_ff],
                  ['output', msg('output ·W₂ᵀ + b₂'), ffn.output, info.d_model],
                ] as const
              ).map(
                ([key, name, t, w]) => html`<div>
                  <div class="small muted">${name}</div>
                  <tp-heat
                    data-map=${key === 'input' ? 'ffn input x' : key === 'hidden' ? `hidden ${info.activation}(x·W₁ᵀ + b₁)` : 'output ·W₂ᵀ + b₂'}
                    .rows=${t.shape[1]}
                    .cols=${w}
                    .data=${t.data.subarray(0, t.shape[1] * w)}
                    .label=${msg(str`${name}, layer ${ffn.layer + 1}`)}
                    .rowName=${(r: number) => msg(str`position ${r} ${labels[r] ?? ''}`)}
                    .colName=${(c: number) => msg(str`unit ${c}`)}
                    .maxCell=${8}
                  ></tp-heat>
                </div>`,
              )}
            </div>`
        : nothing}
    </section>`;
  }
}

customElements.define('tp-ffn', TpFfn);
