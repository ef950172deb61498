// The draw that chose a sampled token: the shaped distribution laid end to end as
// intervals of its running sum (in the order the sampler walks it: token id order), the
// uniform number u marked where it fell, the chosen token's interval highlighted — so "why
// not the most likely token?" answers itself. Every number is the core sampler's own
// (`Step.draw`, crate/src/generate/sampling.rs); the page only lays the intervals out.

import { html, css, nothing, type PropertyValues } from 'lit';
import { msg, str } from '@lit/localize';
import type { SampleDraw } from '../engine/protocol';
import { LocalizedElement } from '../i18n/locale';
import { styles } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';

export class TpDraw extends LocalizedElement {
  static properties = {
    draws: { attribute: false },
    vocab: { attribute: false },
    /** The step shown; null: the last one. */
    selected: { state: true },
  };

  /** Every generated token's draw, in order (null where a step drew nothing). */
  draws: (SampleDraw | null)[] = [];
  vocab: string[] = [];
  selected: number | null = null;

  static styles = css`
    :host {
      display: block;
      margin-top: 10px;
      font-size: 0.85rem;
    }
    .head {
      display: flex;
      flex-wrap: wrap;
      gap: 6px 10px;
      align-items: center;
    }
    .bar {
      position: relative;
      height: 34px;
      margin: 8px 0 18px;
      border: 1px solid var(--tp-border, #999);
      background: repeating-linear-gradient(90deg, transparent 0 3px, rgba(127, 127, 127, 0.15) 3px 4px);
    }
    .seg {
      position: absolute;
      top: 0;
      bottom: 0;
      box-sizing: border-box;
      border-right: 1px solid var(--tp-bg, #fff);
      background: #9ecae1;
      color: #111;
      font-family: var(--tp-mono);
      font-size: 0.72rem;
      overflow: hidden;
      white-space: nowrap;
      text-align: center;
      line-height: 34px;
    }
    .seg.likely {
      background: #c6dbef;
    }
    .seg.chosen {
      background: #e66101;
      color: #fff;
      font-weight: bold;
    }
    .u {
      position: absolute;
      top: -4px;
      bottom: -14px;
      width: 2px;
      background: var(--tp-fg, #111);
    }
    .u span {
      position: absolute;
      bottom: 0;
      left: 4px;
      font-family: var(--tp-mono);
      font-size: 0.72rem;
      white-space: nowrap;
    }
    .sentence {
      margin: 0;
    }
  `;

  protected willUpdate(changed: PropertyValues<this>): void {
    // A new generation (fewer draws than the one shown) shows its last token again.
    if (changed.has('draws') && this.selected !== null && this.selected >= this.draws.length) this.selected = null;
  }

  private tok(id: number): string {
    return showToken(this.vocab[id] ?? `${id}`);
  }

  render() {
    const n = this.draws.length;
    if (!n) return nothing;
    const at = this.selected ?? n - 1;
    const d = this.draws[at];
    const nav = html`<span class="head">
      <button class="prev" ?disabled=${at === 0} @click=${() => (this.selected = at - 1)} aria-label=${msg('the draw of the token before')}>‹</button>
      <span>${msg(str`Token ${at + 1} of ${n}`)}</span>
      <button class="next" ?disabled=${at === n - 1} @click=${() => (this.selected = at + 1 === n - 1 ? null : at + 1)} aria-label=${msg('the draw of the token after')}>›</button>
    </span>`;
    if (!d) return html`${nav}<p class="sentence small muted">${msg('This token was not drawn at random.')}</p>`;
    const total = d.total > 0 ? d.total : 1;
    const pct = (x: number) => `${((100 * x) / total).toFixed(3)}%`;
    const segs = d.ids.map((id, i) => {
      const lo = d.cum[i] - d.probs[i];
      const cls = `seg ${i === d.chosen_at ? 'chosen' : ''} ${id === d.most_likely ? 'likely' : ''}`;
      const label = d.probs[i] / total > 0.06 ? this.tok(id) : '';
      return html`<div
        class=${cls}
        data-id=${id}
        data-lo=${lo}
        data-hi=${d.cum[i]}
        title=${`'${this.tok(id)}' ${fmt(lo)}–${fmt(d.cum[i])} (p = ${fmt(d.probs[i])})`}
        style=${styles(`left:${pct(lo)};width:${pct(d.probs[i])}`)}
      >
        ${label}
      </div>`;
    });
    const chosen = this.tok(d.chosen);
    // Interval ends and u read as probabilities: three decimals (no 4.92e-9 for a tiny start).
    const p3 = (x: number) => x.toFixed(3);
    const sentence =
      d.chosen === d.most_likely
        ? msg(str`u = ${p3(d.u)} fell in '${chosen}' (${p3(d.lo)}–${p3(d.hi)}), which is also the most likely token.`)
        : msg(str`u = ${p3(d.u)} fell in '${chosen}' (${p3(d.lo)}–${p3(d.hi)}); the most likely token was '${this.tok(d.most_likely)}'.`);
    return html`${nav}
      <div
        class="bar"
        role="img"
        aria-label=${sentence}
        data-u=${d.u}
        data-lo=${d.lo}
        data-hi=${d.hi}
        data-chosen=${d.chosen}
        data-most-likely=${d.most_likely}
        data-step=${at}
      >
        ${segs}
        <div class="u" style=${styles(`left:${pct(d.u)}`)}><span>u</span></div>
      </div>
      <p class="sentence">${sentence}</p>
      <p class="small muted">
        ${msg(str`The sampler lays the ${d.possible} possible tokens end to end in token order, each as long as its probability, draws one uniform number u in [0, 1) and takes the token whose interval holds it.`)}
        ${d.ids.length < d.possible ? msg(str`The ${d.ids.length} longest intervals are drawn; the others fill the gaps.`) : nothing}
      </p>`;
  }
}

customElements.define('tp-draw', TpDraw);
