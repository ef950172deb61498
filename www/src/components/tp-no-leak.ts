// `no-leak`: the residual path does not carry the future backwards. Two inputs that differ
// in a later token run with the causal mask on and with it off; the core compares every
// position's residual stream (after the embedding and after each layer) and its logits
// bit-exactly. With the mask on, every position before the edit is bit-identical in every
// row; with it off, they change.

import { html, nothing } from 'lit';
import type { BlockDiff, RowDiff, Switches } from '../engine/protocol';
import { EditView } from './tp-edit-base';
import { fmt } from '../ui/palette';
import { scrollLabel, scrollRegion } from '../ui/shared';
import { msg, str } from '@lit/localize';

export class TpNoLeak extends EditView {
  static properties = {
    ...EditView.properties,
    diffs: { state: true },
  };

  /** [mask on, mask off]: the core's comparisons (read by the browser tests). */
  diffs: BlockDiff[] = [];

  protected variants(): Switches[] {
    const s = this.switches;
    return s ? [{ ...s, causal: true }, { ...s, causal: false }] : [];
  }

  protected got(d: BlockDiff[]): void {
    this.diffs = d;
  }

  /** The residual-stream and logit rows of the stack the edit is in and of the output. */
  private rowsOf(d: BlockDiff): RowDiff[] {
    const site = d.after.stacks[0]?.site;
    return d.rows.filter((r) => (r.what === 'hidden' && r.stack === site) || r.what === 'logits');
  }

  private table(d: BlockDiff, mask: 'on' | 'off') {
    const rows = this.rowsOf(d);
    const edited = this.afterInput?.src ? d.src_edited : d.edited;
    const first = edited.length ? Math.min(...edited) : (rows[0]?.changed.length ?? 0);
    const labels = this.labels();
    const P = rows.find((r) => r.what === 'hidden')?.changed.length ?? 0;
    const head = (r: RowDiff) => (r.what === 'logits' ? 'logits' : r.layer === 0 ? msg('embedding') : msg(str`after L${r.layer}`));
    let earlierChanged = 0;
    let earlierTotal = 0;
    for (const r of rows) {
      if (r.what === 'logits' && r.changed.length === 1 && P > 1) continue; // a classifier's one row
      for (let p = 0; p < Math.min(first, r.changed.length); p++) {
        earlierTotal++;
        if (r.changed[p]) earlierChanged++;
      }
    }
    return html`<div class="wrap" ${scrollRegion(scrollLabel())}>
      <div class="small"><strong>${mask === 'on' ? msg('causal mask on') : msg('causal mask off')}</strong></div>
      <table aria-label=${mask === 'on' ? msg('residual stream and logits per position, later keys hidden: changed or bit-identical') : msg('residual stream and logits per position, later keys visible: changed or bit-identical')} data-mask=${mask}>
        <thead>
          <tr>
            <th>${msg('position')}</th>
            ${rows.map((r) => html`<th>${head(r)}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${Array.from({ length: P }, (_, p) => html`<tr class=${edited.includes(p) ? 'edited' : ''}>
              <th scope="row">${p} ${labels[p] ?? ''}${edited.includes(p) ? ' ✎' : p < first ? '' : ' ·'}</th>
              ${rows.map((r) => {
                if (p >= r.changed.length) return html`<td class="same">—</td>`;
                const c = r.changed[p];
                return html`<td
                  class=${c ? 'changed' : 'same'}
                  data-what=${r.what}
                  data-layer=${r.layer}
                  data-pos=${p}
                  data-changed=${String(c)}
                  data-max=${r.max_abs[p]}
                  title=${c ? msg(str`changed: max |Δ| = ${fmt(r.max_abs[p])}`) : msg('bit-identical')}
                >
                  ${c ? `Δ ${fmt(r.max_abs[p], 2)}` : '='}
                </td>`;
              })}
            </tr>`)}
        </tbody>
      </table>
      <p class="verdict" data-mask=${mask} data-earlier-changed=${earlierChanged} data-earlier-total=${earlierTotal}>
        ${mask === 'on'
          ? msg(str`Mask on: ${earlierChanged} of ${earlierTotal} values before position ${first} changed`)
          : msg(str`Mask off: ${earlierChanged} of ${earlierTotal} values before position ${first} changed`)}${mask === 'on' && earlierChanged === 0 ? msg(' — none: no leak') : ''}${msg('.')}
      </p>
    </div>`;
  }

  render() {
    const info = this.info;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('The residual does not leak the future')} <span class="sub">${msg('change a later token, compare every earlier row bit for bit')}</span></h2>
      <p class="argument">
        ${msg("A residual connection adds a position's own input back to what its sublayer computed, so it can only carry what that position already held. Under the causal mask nothing a position holds ever came from a later one — not at the start, not after any attention — so no layer, and no residual around it, can bring the future in.")}
      </p>
      ${info?.arch === 'encoder_decoder'
        ? html`<p class="small muted">${msg("This model's edits go to its encoder, which reads the whole source in both mask settings; the mask switch acts on the decoder.")}</p>`
        : nothing}
      ${this.controls()}
      ${this.diffs.length === 2 ? html`${this.table(this.diffs[0], 'on')}${this.table(this.diffs[1], 'off')}` : html`<p class="muted">${msg('Waiting for the model…')}</p>`}
    </section>`;
  }
}

customElements.define('tp-no-leak', TpNoLeak);
