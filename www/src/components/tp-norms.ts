// `norms`: LayerNorm against BatchNorm on a batch of two sequences — this one and another.
// The core runs the loaded model and a trained model with the other kind of norm (the
// shipped reverse model trained with BatchNorm, or beside a BatchNorm model the reverse
// model it was trained against; that model reads the same sequences in its own
// vocabulary), in train and
// eval mode, once beside the other sequence and once beside a changed copy of it, and
// says whether this sequence's output moved. It also gives the statistics each norm took
// (per position over its features, or per feature over the whole batch) and the size of
// the residual stream after each layer.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { modelTitle } from '../i18n/models';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller } from '../engine/client';
import type { CouplingModel, ManifestEntry, ModelInfo, NormCoupling } from '../engine/protocol';
import { numberTable, panel, SeenController } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';
import './tp-heat';

const NORM_NAMES: Record<string, string> = {
  get pre_ln() {
    return msg('pre-LN LayerNorm');
  },
  get post_ln() {
    return msg('post-LN LayerNorm');
  },
  batch_norm: 'BatchNorm',
  get none() {
    return msg('no norm');
  },
};

export class TpNorms extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    info: { attribute: false },
    tokens: { attribute: false },
    seed: { type: Number },
    base: { attribute: false },
    manifest: { attribute: false },
    model: { type: String },
    data: { state: true },
    problem: { state: true },
  };

  engine: EngineCaller | null = null;
  info: ModelInfo | null = null;
  /** This sequence (the main stack's ids, or an encoder-decoder's source). */
  tokens: number[] = [];
  seed = 0;
  /** Where the shipped checkpoints are, their manifest, and the loaded model's file. */
  base: URL | null = null;
  manifest: ManifestEntry[] = [];
  model = '';
  /** The trained model of the other kind of norm (a manifest entry), if one is shipped. */
  sibling: ManifestEntry | null = null;
  /** The core's answer (read by the browser tests). */
  data: NormCoupling | null = null;
  /** The batch sent: this, the other sequence and its changed copy. */
  other: number[] = [];
  otherChanged: number[] = [];
  problem = '';
  private asked = '';
  /** Whether the view has been on screen: it fetches the sibling model only from then on. */
  private readonly sight = new SeenController(this);

  static styles = [
    panel,
    numberTable,
    css`
      td,
      th {
        vertical-align: top;
      }
      .yes {
        color: var(--tp-warn);
        font-weight: 700;
      }
      .wrap {
        overflow-x: auto;
      }
      .models {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(min(300px, 100%), 1fr));
        gap: 14px;
      }
    `,
  ];

  /** The other sequence: this one's words in reverse order (the first token kept), and a changed copy. */
  private pair(): [number[], number[]] {
    const info = this.info!;
    const special = new Set([info.pad, info.bos, info.eos, info.unk]);
    const t = this.tokens;
    const lead = t.length > 1 && t[0] === info.bos ? [t[0]] : [];
    const body = t.slice(lead.length);
    const other = [...lead, ...[...body].reverse()];
    const v = info.vocab.length;
    const shift = (id: number) => {
      if (special.has(id)) return id;
      for (let k = 1; k < v; k++) if (!special.has((id + k) % v)) return (id + k) % v;
      return id;
    };
    return [other, other.map(shift)];
  }

  /**
   * The shipped model trained with the other kind of norm: the BatchNorm sibling of the
   * reverse model beside a LayerNorm model; beside a BatchNorm model, the model it is a
   * sibling of (trained with pre-LN LayerNorm).
   */
  private siblingOf(): ManifestEntry | null {
    if (!this.info) return null;
    if (this.info.norm === 'batch_norm') {
      const own = this.manifest.find((e) => e.file === (this.model || this.manifest[0]?.file));
      return this.manifest.find((e) => e.file === own?.variant_of) ?? null;
    }
    return this.manifest.find((e) => e.variant?.startsWith('BatchNorm')) ?? null;
  }

  updated(): void {
    if (!this.sight.seen || !this.engine || !this.info || !this.tokens.length || !this.manifest.length) return;
    const sib = this.siblingOf();
    const key = `${this.model}/${this.info.params}/${this.info.arch}/${this.tokens.join(',')}/${this.seed}/${sib?.file ?? ''}`;
    if (key === this.asked) return;
    this.asked = key;
    void this.load(sib, key);
  }

  private async load(sib: ManifestEntry | null, key: string) {
    const [other, changed] = this.pair();
    try {
      const req = { tokens: this.tokens, other, other_changed: changed, seed: this.seed };
      const data = await this.engine!.call(
        'normCoupling',
        sib && this.base ? { ...req, sibling_url: new URL(sib.file, this.base).href, sibling_name: msg(str`the shipped ${modelTitle(sib)} model`) } : req,
      );
      if (key !== this.asked) return;
      this.other = other;
      this.otherChanged = changed;
      this.sibling = sib;
      this.data = data;
      this.problem = '';
    } catch (e) {
      if (key !== this.asked) return;
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  private stats(m: CouplingModel) {
    const s = m.stats;
    if (!s) return html`<p class="small muted">${msg('This model has no norm inside its layers.')}</p>`;
    const where = s.over_batch
      ? msg(str`one μ and σ² per feature (${s.mean.shape[0]}), each over all ${m.batch_rows} positions of the batch`)
      : s.running
        ? msg('the stored running μ and σ² per feature (eval mode)')
        : msg(str`one μ and σ² per position, each over its own ${this.info?.d_model ?? ''} features`);
    const perPos = !s.over_batch && !s.running;
    const T = perPos ? s.mean.shape[1] : s.mean.shape[0];
    const data = perPos ? [...s.mean.data.subarray(0, T), ...s.var.data.subarray(0, T)] : [...s.mean.data, ...s.var.data];
    return html`<p class="small">${msg(str`Layer 1 ${s.name} in train mode took ${where}:`)}</p>
      <tp-heat
        data-map=${`${m.norm} stats`}
        .rows=${2}
        .cols=${T}
        .data=${data}
        .label=${perPos ? msg(str`${NORM_NAMES[m.norm]}: mean (row 1) and variance (row 2) per position of this sequence`) : msg(str`${NORM_NAMES[m.norm]}: mean (row 1) and variance (row 2) per feature`)}
        .rowName=${(r: number) => (r === 0 ? 'μ' : 'σ²')}
        .colName=${(c: number) => (perPos ? msg(str`position ${c}`) : msg(str`feature ${c}`))}
        .maxCell=${14}
      ></tp-heat>`;
  }

  private modelCard(m: CouplingModel) {
    const yes = (moved: boolean, d: number) =>
      moved ? html`<span class="yes">${msg('yes')}</span> (max |Δ| ${fmt(d)})` : msg('no — bit-identical');
    const v = m.vocab;
    const words = (ids: number[]) => ids.map((id) => showToken(v?.[id] ?? '')).join(this.info?.tokenizer_kind === 'word' ? ' ' : '');
    return html`<div data-norm=${m.norm} data-trained=${String(m.trained)}>
      <h3>${NORM_NAMES[m.norm] ?? m.norm} <span class="small muted" data-model-text>${m.label}</span></h3>
      ${v && m.tokens && m.other && m.other_changed
        ? html`<p class="small">
            ${msg(html`It reads the same batch in its own vocabulary (what it lacks becomes <span class="mono">&lt;unk&gt;</span>):
              <span class="mono">“${words(m.tokens)}”</span> beside <span class="mono">“${words(m.other)}”</span>, then
              <span class="mono">“${words(m.other_changed)}”</span>.`)}
          </p>`
        : nothing}
      <table>
        <tbody>
          <tr data-mode="train" data-identical=${String(m.train_identical)} data-max=${m.train_max_diff}>
            <th>${msg("train mode: does the other sequence move this one's output?")}</th>
            <td>${yes(!m.train_identical, m.train_max_diff)}</td>
          </tr>
          <tr data-mode="eval" data-identical=${String(m.eval_identical)} data-max=${m.eval_max_diff}>
            <th>${msg('eval mode')}</th>
            <td>${yes(!m.eval_identical, m.eval_max_diff)}</td>
          </tr>
          <tr>
            <th>${msg('mean ‖x‖ of the residual stream (this sequence)')}</th>
            <td class="mono" data-residual=${Array.from(m.residual_norms).join(',')}>
              ${Array.from(m.residual_norms).map((v, l) => html`${l === 0 ? 'in' : `L${l}`} ${fmt(v, 2)}${l + 1 < m.residual_norms.length ? ' · ' : ''}`)}
            </td>
          </tr>
        </tbody>
      </table>
      ${this.stats(m)}
    </div>`;
  }

  render() {
    const d = this.data;
    const v = this.info?.vocab ?? [];
    const words = (ids: number[]) => ids.map((id) => showToken(v[id] ?? '')).join(this.info?.tokenizer_kind === 'word' ? ' ' : '');
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('LayerNorm vs BatchNorm')} <span class="sub">${msg('what each one averages over, and what that couples')}</span></h2>
      <p>
        ${msg("LayerNorm centres and scales each position by the mean and variance of its own features, so nothing else in the batch can reach it. BatchNorm in train mode takes each feature's mean and variance over every position of every sequence in the batch, so a neighbour in the batch shifts this sequence's numbers; in eval mode it uses stored running statistics and the coupling is gone.")}
      </p>
      ${this.info && this.tokens.length
        ? html`<p class="small">
            ${msg(html`Batch: <span class="mono">“${words(this.tokens)}”</span> beside <span class="mono">“${words(this.other)}”</span>, then beside <span class="mono">“${words(this.otherChanged)}”</span>; train mode draws its dropout masks from seed ${this.seed}, the same masks for both batches.`)}
          </p>`
        : nothing}
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}
      ${d ? html`<div class="models">${d.models.map((m) => this.modelCard(m))}</div>` : html`<p class="muted">${msg('Waiting for the model…')}</p>`}
    </section>`;
  }
}

customElements.define('tp-norms', TpNorms);
