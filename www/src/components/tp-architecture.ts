// The architecture diagram (SVG): every block of the loaded model. Clicking (or pressing
// Enter on) an attention block selects what the other views show; expanding it lists the
// steps Q·Kᵀ → scale → mask → softmax → ·V with the formula and the live numbers of the
// focused query.

import { html, svg, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import type { AttnSite, AttnTrace, LayerPlan, ModelInfo, NormStep, SublayerKind } from '../engine/protocol';
import { emit, panel, styles } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';
import { at } from './tp-attention';
import { archName, stackName } from '../i18n/terms';

interface Block {
  label: string;
  kind: 'io' | 'embed' | 'attn' | 'ffn' | 'norm' | 'head';
  site?: AttnSite;
  layer?: number;
  /** The plan's sublayer kind (`self_attention`, …), norm name (`norm1`, …) or `final_norm`. */
  part?: string;
}

/** Position encodings that act inside self-attention rather than on the embedding. */
function inAttention(pos: string): boolean {
  return pos === 'rope' || pos === 'alibi' || pos === 'relative';
}

export class TpArchitecture extends LocalizedElement {
  static properties = {
    info: { attribute: false },
    plan: { attribute: false },
    site: { type: String },
    layer: { type: Number },
    head: { type: Number },
    row: { type: Number },
    cell: { attribute: false },
    trace: { attribute: false },
    queryTokens: { attribute: false },
    keyTokens: { attribute: false },
    scaleOn: { type: Boolean },
    causalOn: { type: Boolean },
    paddingOn: { type: Boolean },
    expanded: { state: true },
  };

  info: ModelInfo | null = null;
  /** The core's layer plan of the loaded model: the diagram draws exactly this. */
  plan: LayerPlan | null = null;
  site: AttnSite = 'decoder_self';
  layer = 0;
  head = 0;
  row = 0;
  /** The focused heatmap cell: query i, key j. */
  cell: { i: number; j: number } = { i: 0, j: 0 };
  /** The selected attention sublayer's trace. */
  trace: AttnTrace | null = null;
  queryTokens: string[] = [];
  keyTokens: string[] = [];
  scaleOn = true;
  causalOn = true;
  paddingOn = true;
  expanded = true;

  static styles = [
    panel,
    css`
      svg {
        width: 100%;
        height: auto;
        display: block;
        margin: 0 auto;
      }
      .blk rect {
        fill: var(--tp-bg);
        stroke: var(--tp-line);
        stroke-width: 1.5;
      }
      .blk.attn rect {
        fill: var(--tp-attn-fill);
      }
      .blk.ffn rect {
        fill: var(--tp-ffn-fill);
      }
      .blk.norm rect {
        fill: var(--tp-io-fill);
        stroke-dasharray: 3 2;
      }
      .blk.norm text {
        font-size: 10px;
      }
      .blk.io rect,
      .blk.embed rect,
      .blk.head rect {
        fill: var(--tp-io-fill);
      }
      .blk.attn,
      .blk.ffn {
        cursor: pointer;
      }
      .blk.sel rect {
        stroke: var(--tp-accent);
        stroke-width: 3;
      }
      .blk:focus {
        outline: none;
      }
      .blk:focus-visible rect {
        stroke: var(--tp-focus);
        stroke-width: 3;
      }
      .blk text {
        font-size: 11px;
        fill: var(--tp-fg);
        pointer-events: none;
      }
      .stack-label {
        font-size: 11px;
        fill: var(--tp-muted);
      }
      line.flow,
      path.flow {
        stroke: var(--tp-muted);
        stroke-width: 1.2;
        fill: none;
      }
      ol.steps {
        margin: 8px 0 0;
        padding-left: 1.3em;
        font-size: 0.85rem;
      }
      ol.steps li {
        margin-bottom: 6px;
      }
      .formula {
        font-family: var(--tp-mono);
        background: var(--tp-accent-soft);
        padding: 0 4px;
        border-radius: 3px;
      }
      .nums {
        font-family: var(--tp-mono);
        font-size: 0.75rem;
        color: var(--tp-muted);
        overflow-wrap: anywhere;
      }
    `,
  ];

  /**
   * The blocks of every stack, bottom to top, read off the core's layer plan: per layer
   * its sublayers in order, each norm before (pre-LN) or after (post-LN, BatchNorm) its
   * sublayer, the final norm, and the head after the last stack.
   */
  private stacks(): { name: string; blocks: Block[] }[] {
    const info = this.info;
    const plan = this.plan;
    if (!info || !plan) return [];
    const title: Record<SublayerKind, string> = {
      self_attention: msg('self-attention'),
      cross_attention: msg('cross-attention'),
      ffn: msg('feed-forward'),
    };
    const normTitle = (kind: NormStep['kind']) => (kind === 'batch_norm' ? 'BatchNorm' : 'LayerNorm');
    return plan.stacks.map((st, si) => {
      const blocks: Block[] = [
        { label: st.input === 'source' ? msg('source tokens') : plan.stacks.length > 1 ? msg('target tokens') : msg('tokens'), kind: 'io' },
        // Only sinusoidal and learned positions are added to the embedding; RoPE, ALiBi and
        // relative positions act inside self-attention (named on those blocks).
        {
          label:
            info.pos_encoding === 'sinusoidal' || info.pos_encoding === 'learned'
              ? msg(str`embedding + ${info.pos_encoding} positions`)
              : info.pos_encoding === 'none'
                ? msg('embedding (no positions)')
                : msg('embedding'),
          kind: 'embed',
        },
      ];
      for (let l = 0; l < st.layers; l++) {
        for (const sub of st.sublayers) {
          const norm: Block | null = sub.norm
            ? { label: `L${l + 1} ${normTitle(sub.norm.kind)} (${sub.norm.name})`, kind: 'norm', layer: l, part: sub.norm.name }
            : null;
          if (norm && sub.norm?.placement === 'before') blocks.push(norm);
          blocks.push({
            label: `L${l + 1} ${title[sub.kind]}${sub.kind === 'self_attention' && inAttention(info.pos_encoding) ? ` + ${info.pos_encoding}` : ''}${sub.residual ? '' : msg(' (no residual)')}`,
            kind: sub.kind === 'ffn' ? 'ffn' : 'attn',
            site: sub.site ?? st.site,
            layer: l,
            part: sub.kind,
          });
          if (norm && sub.norm?.placement === 'after') blocks.push(norm);
        }
      }
      if (st.final_norm) blocks.push({ label: msg(str`final LayerNorm (${st.name}.norm)`), kind: 'norm', part: 'final_norm' });
      if (si === plan.stacks.length - 1) {
        const label = plan.head === 'classifier' ? msg(str`classifier (${info.num_classes})`) : plan.arch === 'encoder_only' ? msg('token head') : msg('LM head → next token');
        blocks.push({ label, kind: 'head' });
      }
      return { name: st.name, blocks };
    });
  }

  private select(b: Block) {
    if (b.site === undefined || b.layer === undefined) return;
    if (b.site === this.site && b.layer === this.layer) this.expanded = !this.expanded;
    else this.expanded = true;
    emit(this, 'tp-select', { site: b.site, layer: b.layer, head: this.head });
  }

  private diagram() {
    const stacks = this.stacks();
    // The model's numbers can arrive before its layer plan: nothing to draw yet.
    if (!stacks.length) return html`<p>${msg("Waiting for the model's layers…")}</p>`;
    const W = 210;
    const gap = 30;
    const vgap = 8;
    // Norms are thin bars between the sublayers they belong to.
    const bh = (b: Block) => (b.kind === 'norm' ? 16 : 26);
    const tall = (blocks: Block[]) => blocks.reduce((a, b) => a + bh(b) + vgap, 0);
    /** Top edge of every block: data flows upwards, as in the paper's figure (inputs at the bottom). */
    const tops = (blocks: Block[]) => {
      const ys: number[] = [];
      let y = 20;
      for (let bi = blocks.length - 1; bi >= 0; bi--) {
        ys[bi] = y;
        y += bh(blocks[bi]) + vgap;
      }
      return ys;
    };
    const width = stacks.length * W + (stacks.length - 1) * gap;
    const height = Math.max(...stacks.map((s) => tall(s.blocks))) + 24;
    const memoryY: number[] = [];
    const parts = stacks.map((s, si) => {
      const x0 = si * (W + gap);
      const n = s.blocks.length;
      const ys = tops(s.blocks);
      return svg`<text class="stack-label" x=${x0 + 4} y="12">${stackName(s.name)}</text>
        ${s.blocks.map((b, bi) => {
          const y = ys[bi];
          const h = bh(b);
          if (s.name === 'encoder' && bi === n - 1) memoryY.push(y + h / 2);
          const sel = b.kind === 'attn' ? b.site === this.site && b.layer === this.layer : b.kind === 'ffn' && b.layer === this.layer && b.site === this.site;
          const focusable = b.kind === 'attn' || b.kind === 'ffn';
          const line = bi > 0 ? svg`<line class="flow" x1=${x0 + W / 2} x2=${x0 + W / 2} y1=${y + h} y2=${y + h + vgap}></line>` : nothing;
          return svg`${line}<g
              class="blk ${b.kind} ${sel ? 'sel' : ''}"
              data-stack=${s.name}
              data-kind=${b.kind}
              data-part=${b.part ?? b.kind}
              data-layer=${b.layer ?? nothing}
              role=${focusable ? 'button' : 'img'}
              tabindex=${focusable ? 0 : -1}
              aria-pressed=${focusable ? String(sel) : nothing}
              aria-label=${focusable ? msg(str`select ${stackName(s.name)} ${b.label}`) : b.label}
              @click=${() => this.select(b)}
              @keydown=${(e: KeyboardEvent) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  this.select(b);
                }
              }}
            >
              <rect x=${x0} y=${y} width=${W} height=${h} rx="6"></rect>
              <text x=${x0 + 10} y=${y + h / 2 + 4}>${b.label}</text>
            </g>`;
        })}`;
    });
    // Encoder-decoder: the encoder's output feeds every cross-attention block.
    let memory: unknown = nothing;
    if (stacks.length === 2 && memoryY.length) {
      const dec = stacks[1];
      const ys = tops(dec.blocks);
      memory = dec.blocks.map((b, bi) => {
        if (b.site !== 'cross') return nothing;
        const y = ys[bi] + bh(b) / 2;
        return svg`<path class="flow" d=${`M ${W} ${memoryY[0]} C ${W + gap / 2} ${memoryY[0]}, ${W + gap / 2} ${y}, ${W + gap} ${y}`}></path>`;
      });
    }
    return html`<svg viewBox=${`-2 0 ${width + 4} ${height}`} style=${styles(`max-width:${(width + 4) * 1.3}px`)} role="group" aria-label=${msg('architecture of the loaded model; attention blocks are buttons')}>
      ${parts}${memory}
    </svg>`;
  }

  private steps() {
    const t = this.trace;
    if (!t) return nothing;
    const [B, H, T, S] = t.probs.shape;
    const b = Math.min(this.row, B - 1);
    const h = Math.min(this.head, H - 1);
    const i = Math.min(this.cell.i, T - 1);
    const scores: number[] = [];
    const probs: number[] = [];
    const masked: number[] = [];
    for (let j = 0; j < S; j++) {
      const s = at(t.scores, b, h, i, j);
      scores.push(s);
      probs.push(at(t.probs, b, h, i, j));
      if (s === Number.NEGATIVE_INFINITY) masked.push(j);
    }
    const dk = this.info?.d_head ?? 0;
    const q = showToken(this.queryTokens[i] ?? `${i}`);
    const sum = probs.reduce((a, p) => a + p, 0);
    const row = (xs: number[]) => xs.slice(0, 24).map((x) => fmt(x, 2)).join('  ') + (xs.length > 24 ? `  … ${msg(str`(${xs.length - 24} more)`)}` : '');
    // The causal switch acts on the main stack's self-attention only (docs/model.md).
    const causalHere = t.site === 'decoder_self' || (t.site === 'encoder_self' && this.info?.arch === 'encoder_only');
    const maskWhy =
      [causalHere && this.causalOn ? msg('causal: keys after the query') : '', this.paddingOn ? (t.site === 'cross' ? msg('padding of the source') : msg('padding')) : '']
        .filter(Boolean)
        .join(' + ') || msg('no mask switched on');
    return html`<p class="small">
        ${msg(html`Steps of head ${h + 1} for the query <span class="mono">“${q}”</span> (position ${i}); numbers come from the running model.`)}
      </p>
      <ol class="steps">
        <li>
          <strong>Q·Kᵀ</strong> <span class="formula">s_ij = q_i · k_j</span> — ${msg(str`one score per key (${S} keys, d_k = ${dk}).`)}
        </li>
        <li>
          ${this.info?.score === 'scaled_dot'
            ? html`<strong>${msg('scale')}</strong> <span class="formula">s_ij / √d_k = s_ij / ${fmt(Math.sqrt(dk), 2)}</span>
                ${this.scaleOn ? msg('on') : html`<strong>${msg('off')}</strong> — ${msg('scores keep their raw size and softmax saturates')}`}${msg('.')}`
            : html`<strong>${msg('scale')}</strong> — ${this.info?.score === 'additive' ? msg("none: this model's score is additive (w·tanh(q + k)), never divided by √d_k.") : msg("none: this model's score is the plain dot product, never divided by √d_k.")}`}
          ${msg('Scores after this step (with any position bias):')}
          <div class="nums">${row(scores)}</div>
        </li>
        <li>
          <strong>${msg('mask')}</strong> <span class="formula">${msg('s_ij = −∞ where masked')}</span> (${maskWhy}): ${msg(str`${masked.length} of ${S} keys masked`)}${masked.length ? ` ${msg(str`(positions ${masked.slice(0, 16).join(', ')}${masked.length > 16 ? '…' : ''})`)}` : ''}${msg('.')}
        </li>
        <li>
          <strong>softmax</strong> <span class="formula">p_ij = exp(s_ij) / Σ_j exp(s_ij)</span> — ${msg(str`row sums to ${fmt(sum, 4)}:`)}
          <div class="nums">${row(probs)}</div>
        </li>
        <li><strong>·V</strong> <span class="formula">z_i = Σ_j p_ij · v_j</span> — ${msg("the weights above mix the value vectors into the head's output.")}</li>
      </ol>`;
  }

  render() {
    const info = this.info;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">
        ${msg('Architecture')}
        <span class="sub"
          >${info
            ? `${archName(info.arch)} · d_model ${info.d_model} · ${msg(str`${info.n_heads} heads of ${info.d_head}`)} · FFN ${info.d_ff} · ${info.norm.replace('_', '-')} · ${msg(str`${info.params.toLocaleString('en')} parameters`)}`
            : ''}</span
        >
      </h2>
      ${info ? this.diagram() : nothing}
      <button aria-expanded=${this.expanded} @click=${() => (this.expanded = !this.expanded)}>
        ${this.expanded ? msg('Hide the steps of the selected attention block') : msg('Show the steps of the selected attention block')}
      </button>
      ${this.expanded ? this.steps() : nothing}
    </section>`;
  }
}

customElements.define('tp-architecture', TpArchitecture);
