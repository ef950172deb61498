// `dropout`: where the model drops units in train mode, the masks one pass drew (zeros and
// 1/(1 − p)), and eval mode as the identity. The core runs the input in train mode with a
// seed (and the next seed), and twice in eval mode; this view draws what it reports.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller } from '../engine/client';
import type { DropSite, DropoutDemo, ModelInfo, SequenceInput } from '../engine/protocol';
import { numberTable, panel, scrollLabel, scrollRegion } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';
import { num } from '../ui/format';
import './tp-heat';

const PLACES: Record<DropSite['place'], string> = {
  get embedding() {
    return msg('embedding + positions');
  },
  get attention_probs() {
    return msg('attention probabilities (before ·V)');
  },
  get ffn_hidden() {
    return msg('FFN hidden units (between W₁ and W₂)');
  },
  get sublayer_output() {
    return msg('sublayer output, before the residual add');
  },
};

export class TpDropout extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    info: { attribute: false },
    input: { attribute: false },
    seed: { type: Number },
    p: { type: Number },
    data: { state: true },
    shown: { state: true },
    problem: { state: true },
  };

  engine: EngineCaller | null = null;
  info: ModelInfo | null = null;
  input: SequenceInput | null = null;
  seed = 0;
  /** The page's train-mode p (null: the model's own, or 0.1 when the model has none). */
  p: number | null = null;
  /** The core's answer (read by the browser tests). */
  data: DropoutDemo | null = null;
  /** Index of the mask drawn large. */
  shown = 0;
  problem = '';
  private asked = '';

  static styles = [
    panel,
    numberTable,
    css`
      tr.sel td {
        background: var(--tp-accent-soft);
      }
      .wrap {
        overflow-x: auto;
      }
      .maps {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(min(220px, 100%), 1fr));
        gap: 10px;
      }
    `,
  ];

  /** The p this view demonstrates: the page's, else the model's, else 0.1. */
  private demoP(): number {
    if (this.p !== null) return this.p;
    return this.info && this.info.dropout > 0 ? this.info.dropout : 0.1;
  }

  updated(): void {
    if (!this.engine || !this.info || !this.input) return;
    const key = JSON.stringify([this.info.params, this.info.arch, this.input, this.seed, this.demoP()]);
    if (key === this.asked) return;
    this.asked = key;
    void this.load();
  }

  private async load() {
    try {
      this.data = await this.engine!.call('dropoutDemo', { input: this.input!, seed: this.seed, dropout: this.demoP() });
      this.shown = Math.min(this.shown, this.data.sites.length - 1);
      this.problem = '';
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  private where(s: DropSite): string {
    const stack = s.stack === 'encoder_self' ? msg('encoder') : msg('decoder');
    const names: Record<string, string> = { self_attention: msg('self-attention'), cross_attention: msg('cross-attention'), ffn: msg('FFN') };
    const sub = s.sublayer ? ` ${names[s.sublayer] ?? s.sublayer}` : '';
    return `${stack}${s.layer !== null ? ` L${s.layer + 1}` : ''}${sub}`;
  }

  render() {
    const d = this.data;
    const info = this.info;
    const v = info?.vocab ?? [];
    const ids = this.input ? (this.input.src ?? this.input.tokens) : [];
    const site = d?.sites[this.shown];
    // A (B, H, T, S) mask is drawn for head 0; the others as (T, width).
    const mask = site
      ? site.mask.shape.length === 4
        ? { rows: site.mask.shape[2], cols: site.mask.shape[3], data: site.mask.data.subarray(0, site.mask.shape[2] * site.mask.shape[3]), what: msg('head 1, query × key') }
        : { rows: site.mask.shape[1], cols: site.mask.shape[2], data: site.mask.data, what: msg('position × unit') }
      : null;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Dropout, train vs eval mode')} <span class="sub">${msg('where units are dropped, and what eval mode does instead')}</span></h2>
      <p>
        ${msg('In train mode each marked tensor is multiplied by a fresh random mask: a unit is set to 0 with probability p and otherwise multiplied by 1/(1 − p), so every unit keeps its expected value. In eval mode there is no mask at all — the layer passes its input through unchanged — which is why a model must be switched to eval mode before it is used: otherwise two runs on the same input disagree.')}
      </p>
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}
      ${d && info
        ? html`<p class="small" data-p=${d.p} data-keep=${d.keep_scale}>
              p = ${num(d.p)}${d.p !== d.model_p ? msg(str` (this model was trained with p = ${num(d.model_p)}; dropout has no weights, so any p can be switched on)`) : ''} · ${msg('kept units ×')}
              1/(1 − p) = ${fmt(d.keep_scale, 4)} · ${msg(str`masks from seed ${d.seed}.`)}
            </p>
            <div class="wrap" ${scrollRegion(scrollLabel())}>
              <table aria-label=${msg('every place the model applies dropout')}>
                <thead>
                  <tr><th>${msg('where')}</th><th>${msg('what is dropped')}</th><th>${msg('source')}</th><th>${msg('shape')}</th><th>${msg('kept')}</th></tr>
                </thead>
                <tbody>
                  ${d.sites.map(
                    (s, i) => html`<tr class=${i === this.shown ? 'sel' : ''} data-place=${s.place} data-kept=${s.kept_fraction} @click=${() => (this.shown = i)}>
                      <td><button aria-pressed=${String(i === this.shown)} @click=${() => (this.shown = i)}>${this.where(s)}</button></td>
                      <td>${PLACES[s.place]}</td>
                      <td>${s.in_paper ? msg('the 2017 paper') : msg('added by PyTorch’s layers')}</td>
                      <td class="mono">${s.mask.shape.join('×')}</td>
                      <td>${fmt(100 * s.kept_fraction, 1)}%</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
            ${site && mask
              ? html`<p class="small">${msg(str`The mask of ${this.where(site)} (${PLACES[site.place]}), ${mask.what}: dark 0 (dropped), light ${fmt(d.keep_scale, 3)} (kept).`)}</p>
                  <tp-heat
                    data-map="mask"
                    .rows=${mask.rows}
                    .cols=${mask.cols}
                    .data=${mask.data}
                    .signed=${false}
                    .label=${msg(str`dropout mask of ${this.where(site)}`)}
                    .rowName=${(r: number) => msg(str`row ${r}`)}
                    .colName=${(c: number) => msg(str`column ${c}`)}
                    .maxCell=${8}
                  ></tp-heat>`
              : nothing}
            <p class="small">${msg("The first layer's input, eval mode against train mode: every train value is the eval value times its mask entry, bit for bit.")}</p>
            <div class="maps">
              ${(
                [
                  ['eval mode', msg('eval mode'), d.embed_eval],
                  ['train mode', msg('train mode'), d.embed_train],
                ] as const
              ).map(
                ([key, name, t]) => html`<div>
                  <div class="small muted">${name}</div>
                  <tp-heat
                    data-map=${`embedding ${key}`}
                    .rows=${t.shape[0]}
                    .cols=${t.shape[1]}
                    .data=${t.data}
                    .label=${msg(str`embedding + positions, ${name}`)}
                    .rowName=${(r: number) => msg(str`position ${r} ${showToken(v[ids[r]] ?? '')}`)}
                    .colName=${(c: number) => msg(str`feature ${c}`)}
                    .maxCell=${8}
                  ></tp-heat>
                </div>`,
              )}
            </div>
            <ul class="small" data-masked=${String(d.embed_is_masked_eval)} data-eval-identical=${String(d.eval_repeat_identical)} data-train-diff=${d.train_repeat_diff}>
              <li>${msg('train = eval × mask for every element of the embedding:')} <strong>${d.embed_is_masked_eval ? msg('yes') : msg('no')}</strong></li>
              <li>${msg(str`two train-mode runs (seeds ${d.seed} and ${d.seed + 1}): logits differ by up to ${fmt(d.train_repeat_diff)}`)}</li>
              <li>${msg('two eval-mode runs:')} <strong>${d.eval_repeat_identical ? msg('bit-identical') : msg('different')}</strong></li>
              ${d.zero_p_is_eval !== null
                ? html`<li>${msg('train mode with p = 0 gives the eval-mode logits:')} <strong>${d.zero_p_is_eval ? msg('yes, bit for bit') : msg('no')}</strong></li>`
                : html`<li>${msg('this model has BatchNorm: its train mode differs from eval mode even at p = 0 (see the norms view)')}</li>`}
            </ul>`
        : html`<p class="muted">${msg('Waiting for the model…')}</p>`}
    </section>`;
  }
}

customElements.define('tp-dropout', TpDropout);
