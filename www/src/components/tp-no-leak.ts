// `no-leak`: the residual path does not carry the future backwards. Two inputs that differ
// in a later token run twice: under the mask the page applies now (the causal switch, or
// the mask editor's rule, named as the core applied it: `ForwardResult.masks`) and under
// the opposite for comparison (no mask when the page's mask hides every later key, the
// causal mask otherwise). The core compares every position's residual stream (after the
// embedding and after each layer) and its logits bit-exactly. Under a causal mask, every
// position before the edit is bit-identical in every row — except with BatchNorm in train
// mode, whose statistics run over every position of the batch.

import { html, nothing } from 'lit';
import type { AttnSite, BlockDiff, MaskEdit, MaskView, RowDiff, Switches } from '../engine/protocol';
import { EditView } from './tp-edit-base';
import { fmt } from '../ui/palette';
import { scrollLabel, scrollRegion } from '../ui/shared';
import { hidesTheFuture, maskName } from '../ui/mask-name';
import { msg, str } from '@lit/localize';

/** The two passes of the view: the page's mask now, and the comparison. */
export type Role = 'now' | 'reference';

export class TpNoLeak extends EditView {
  static properties = {
    ...EditView.properties,
    masks: { attribute: false },
    diffs: { state: true },
  };

  /** The masks of the page's last forward pass (the core's `ForwardResult.masks`). */
  masks: MaskView[] = [];
  /** [the mask now, the comparison]: the core's comparisons (read by the browser tests). */
  diffs: BlockDiff[] = [];
  /** The masks the two diffs ran under, in the same order (read by the browser tests). */
  ran: MaskEdit[] = [];

  /** The main stack's self-attention: the site the causal switch and the mask editor act on. */
  private get mainSite(): AttnSite {
    return this.info?.arch === 'encoder_only' ? 'encoder_self' : 'decoder_self';
  }

  /** The mask the core applied to the main stack in the page's last pass, as an edit. */
  private get applied(): MaskEdit | null {
    const v = this.masks.find((m) => m.site === this.mainSite);
    return v ? { rule: v.rule, cells: v.cells } : null;
  }

  protected variants(): Switches[] {
    const s = this.switches;
    const now = this.applied;
    if (!s || !now) return [];
    // The comparison: every key visible when the page's mask hides the future, else causal.
    const other: MaskEdit = { rule: { kind: hidesTheFuture(now) ? 'none' : 'causal' }, cells: [] };
    return [
      { ...s, mask: now },
      { ...s, mask: other },
    ];
  }

  protected got(d: BlockDiff[], variants: Switches[]): void {
    this.ran = variants.map((v) => v.mask!);
    this.diffs = d;
  }

  /** Does this model's norm mix positions in the pass the view runs (BatchNorm in train mode)? */
  private get normMixes(): boolean {
    return this.info?.norm === 'batch_norm' && !!this.train;
  }

  /** The residual-stream and logit rows of the stack the edit is in and of the output. */
  private rowsOf(d: BlockDiff): RowDiff[] {
    const site = d.after.stacks[0]?.site;
    return d.rows.filter((r) => (r.what === 'hidden' && r.stack === site) || r.what === 'logits');
  }

  private table(d: BlockDiff, mask: MaskEdit, role: Role) {
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
    const name = maskName(mask);
    const hides = hidesTheFuture(mask);
    const title = role === 'now' ? msg(str`the mask now: ${name}`) : msg(str`for comparison: ${name}`);
    let why = '';
    if (hides && earlierChanged === 0) why = msg(' — none: no leak');
    else if (hides && this.normMixes) why = msg(": not through attention, which hides every later key, but through BatchNorm's train-mode statistics, taken over every position");
    else if (!hides) why = msg(': the mask lets earlier positions read later keys');
    return html`<div class="wrap" ${scrollRegion(scrollLabel())}>
      <div class="small"><strong>${title}</strong></div>
      <table
        aria-label=${msg(str`residual stream and logits per position under the mask ${name}: changed or bit-identical`)}
        data-role=${role}
        data-mask=${mask.rule.kind}
        data-hides-future=${String(hides)}
      >
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
      <p class="verdict" data-role=${role} data-mask=${mask.rule.kind} data-earlier-changed=${earlierChanged} data-earlier-total=${earlierTotal}>
        ${msg(str`${name}: ${earlierChanged} of ${earlierTotal} values before position ${first} changed`)}${why}${msg('.')}
      </p>
    </div>`;
  }

  render() {
    const info = this.info;
    const bn = info?.norm === 'batch_norm';
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('The residual does not leak the future')} <span class="sub">${msg('change a later token, compare every earlier row bit for bit')}</span></h2>
      <p class="argument">
        ${msg("A residual connection adds a position's own input back to what its sublayer computed, so it can only carry what that position already held. Under a mask that hides every later key, attention brings nothing from a later position, and LayerNorm, the FFN and the residual add each work on one position at a time, so no layer, and no residual around it, can bring the future in.")}
        ${bn
          ? this.train
            ? html`<strong data-norm-mixes>${msg("This model uses BatchNorm, and this pass runs in train mode: each feature is normalised with a mean and variance taken over every position of the batch, so a later token moves the earlier rows even under the causal mask.")}</strong>`
            : msg('This model uses BatchNorm. In eval mode it normalises with the running statistics kept from training, one position at a time; choose train mode and its statistics are taken over every position of the batch, so a later token moves the earlier rows even under the causal mask.')
          : msg('BatchNorm in train mode is the exception: its statistics are taken over every position of the batch (the BatchNorm sibling of the reverse model shows it).')}
      </p>
      <p class="small muted">${msg('The first table runs under the mask the page applies now (the causal switch, or the mask editor’s rule); the second under the opposite, for comparison.')}</p>
      ${info?.arch === 'encoder_decoder'
        ? html`<p class="small muted">${msg("This model's edits go to its encoder, which reads the whole source under either mask; the masks act on the decoder.")}</p>`
        : nothing}
      ${this.controls()}
      ${this.diffs.length === 2 && this.ran.length === 2
        ? html`${this.table(this.diffs[0], this.ran[0], 'now')}${this.table(this.diffs[1], this.ran[1], 'reference')}`
        : html`<p class="muted">${msg('Waiting for the model…')}</p>`}
    </section>`;
  }
}

customElements.define('tp-no-leak', TpNoLeak);
