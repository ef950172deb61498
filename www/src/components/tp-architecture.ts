// The architecture diagram (SVG): every block of the loaded model. Clicking (or pressing
// Enter on) an attention block selects what the other views show; expanding it lists the
// steps Q·Kᵀ → scale → mask → softmax → ·V with the formula and the live numbers of the
// focused query.

import { LitElement, html, svg, css, nothing } from 'lit';
import type { AttnSite, AttnTrace, ModelInfo } from '../engine/protocol';
import { emit, panel, styles } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';
import { at } from './tp-attention';

interface Block {
  label: string;
  kind: 'io' | 'embed' | 'attn' | 'ffn' | 'head';
  site?: AttnSite;
  layer?: number;
}

export class TpArchitecture extends LitElement {
  static properties = {
    info: { attribute: false },
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
        font-family: ui-monospace, Menlo, Consolas, monospace;
        background: var(--tp-accent-soft);
        padding: 0 4px;
        border-radius: 3px;
      }
      .nums {
        font-family: ui-monospace, Menlo, Consolas, monospace;
        font-size: 0.75rem;
        color: var(--tp-muted);
        overflow-wrap: anywhere;
      }
    `,
  ];

  private stacks(): { name: string; blocks: Block[] }[] {
    const info = this.info;
    if (!info) return [];
    const layers = (n: number, site: AttnSite, cross: boolean) => {
      const out: Block[] = [];
      for (let l = 0; l < n; l++) {
        out.push({ label: `L${l + 1} self-attention`, kind: 'attn', site, layer: l });
        if (cross) out.push({ label: `L${l + 1} cross-attention`, kind: 'attn', site: 'cross', layer: l });
        out.push({ label: `L${l + 1} feed-forward`, kind: 'ffn', site, layer: l });
      }
      return out;
    };
    const pe = info.pos_encoding;
    if (info.arch === 'encoder_only') {
      return [
        {
          name: 'encoder',
          blocks: [
            { label: 'tokens', kind: 'io' },
            { label: `embedding + ${pe}`, kind: 'embed' },
            ...layers(info.encoder_layers, 'encoder_self', false),
            { label: info.num_classes > 0 ? `classifier (${info.num_classes})` : 'token head', kind: 'head' },
          ],
        },
      ];
    }
    if (info.arch === 'decoder_only') {
      return [
        {
          name: 'decoder',
          blocks: [
            { label: 'tokens', kind: 'io' },
            { label: `embedding + ${pe}`, kind: 'embed' },
            ...layers(info.decoder_layers, 'decoder_self', false),
            { label: 'LM head → next token', kind: 'head' },
          ],
        },
      ];
    }
    return [
      {
        name: 'encoder',
        blocks: [
          { label: 'source tokens', kind: 'io' },
          { label: `embedding + ${pe}`, kind: 'embed' },
          ...layers(info.encoder_layers, 'encoder_self', false),
        ],
      },
      {
        name: 'decoder',
        blocks: [
          { label: 'target tokens', kind: 'io' },
          { label: `embedding + ${pe}`, kind: 'embed' },
          ...layers(info.decoder_layers, 'decoder_self', true),
          { label: 'LM head → next token', kind: 'head' },
        ],
      },
    ];
  }

  private select(b: Block) {
    if (b.site === undefined || b.layer === undefined) return;
    if (b.site === this.site && b.layer === this.layer) this.expanded = !this.expanded;
    else this.expanded = true;
    emit(this, 'tp-select', { site: b.site, layer: b.layer, head: this.head });
  }

  private diagram() {
    const stacks = this.stacks();
    const W = 210;
    const gap = 30;
    const bh = 26;
    const vgap = 8;
    const width = stacks.length * W + (stacks.length - 1) * gap;
    const height = Math.max(...stacks.map((s) => s.blocks.length)) * (bh + vgap) + 24;
    const memoryY: number[] = [];
    const parts = stacks.map((s, si) => {
      const x0 = si * (W + gap);
      const n = s.blocks.length;
      return svg`<text class="stack-label" x=${x0 + 4} y="12">${s.name}</text>
        ${s.blocks.map((b, bi) => {
          // Data flows upwards, as in the paper's figure: inputs at the bottom.
          const y = 20 + (n - 1 - bi) * (bh + vgap);
          if (s.name === 'encoder' && bi === n - 1) memoryY.push(y + bh / 2);
          const sel = b.kind === 'attn' ? b.site === this.site && b.layer === this.layer : b.kind === 'ffn' && b.layer === this.layer && b.site === this.site;
          const focusable = b.kind === 'attn' || b.kind === 'ffn';
          const line = bi > 0 ? svg`<line class="flow" x1=${x0 + W / 2} x2=${x0 + W / 2} y1=${y + bh} y2=${y + bh + vgap}></line>` : nothing;
          return svg`${line}<g
              class="blk ${b.kind} ${sel ? 'sel' : ''}"
              role=${focusable ? 'button' : 'img'}
              tabindex=${focusable ? 0 : -1}
              aria-pressed=${focusable ? String(sel) : nothing}
              aria-label=${focusable ? `select ${s.name} ${b.label}` : b.label}
              @click=${() => this.select(b)}
              @keydown=${(e: KeyboardEvent) => {
                if (e.key === 'Enter' || e.key === ' ') {
                  e.preventDefault();
                  this.select(b);
                }
              }}
            >
              <rect x=${x0} y=${y} width=${W} height=${bh} rx="6"></rect>
              <text x=${x0 + 10} y=${y + 17}>${b.label}</text>
            </g>`;
        })}`;
    });
    // Encoder-decoder: the encoder's output feeds every cross-attention block.
    let memory: unknown = nothing;
    if (stacks.length === 2 && memoryY.length) {
      const dec = stacks[1];
      const n = dec.blocks.length;
      memory = dec.blocks.map((b, bi) => {
        if (b.site !== 'cross') return nothing;
        const y = 20 + (n - 1 - bi) * (bh + vgap) + bh / 2;
        return svg`<path class="flow" d=${`M ${W} ${memoryY[0]} C ${W + gap / 2} ${memoryY[0]}, ${W + gap / 2} ${y}, ${W + gap} ${y}`}></path>`;
      });
    }
    return html`<svg viewBox=${`-2 0 ${width + 4} ${height}`} style=${styles(`max-width:${(width + 4) * 1.3}px`)} role="group" aria-label="architecture of the loaded model; attention blocks are buttons">
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
    const row = (xs: number[]) => xs.slice(0, 24).map((x) => fmt(x, 2)).join('  ') + (xs.length > 24 ? `  … (${xs.length - 24} more)` : '');
    // The causal switch acts on the main stack's self-attention only (docs/model.md).
    const causalHere = t.site === 'decoder_self' || (t.site === 'encoder_self' && this.info?.arch === 'encoder_only');
    const maskWhy =
      [causalHere && this.causalOn ? 'causal: keys after the query' : '', this.paddingOn ? (t.site === 'cross' ? 'padding of the source' : 'padding') : '']
        .filter(Boolean)
        .join(' + ') || 'no mask switched on';
    return html`<p class="small">
        Steps of head ${h + 1} for the query <span class="mono">“${q}”</span> (position ${i}); numbers come from the running model.
      </p>
      <ol class="steps">
        <li>
          <strong>Q·Kᵀ</strong> <span class="formula">s_ij = q_i · k_j</span> — one score per key (${S} keys, d_k = ${dk}).
        </li>
        <li>
          <strong>scale</strong> <span class="formula">s_ij / √d_k = s_ij / ${fmt(Math.sqrt(dk), 2)}</span>
          ${this.scaleOn ? 'on' : html`<strong>off</strong> — scores keep their raw size and softmax saturates`}.
          Scores after this step (with any position bias):
          <div class="nums">${row(scores)}</div>
        </li>
        <li>
          <strong>mask</strong> <span class="formula">s_ij = −∞ where masked</span> (${maskWhy}): ${masked.length} of ${S} keys masked${masked.length ? html` (positions ${masked.slice(0, 16).join(', ')}${masked.length > 16 ? '…' : ''})` : ''}.
        </li>
        <li>
          <strong>softmax</strong> <span class="formula">p_ij = exp(s_ij) / Σ_j exp(s_ij)</span> — row sums to ${fmt(sum, 4)}:
          <div class="nums">${row(probs)}</div>
        </li>
        <li><strong>·V</strong> <span class="formula">z_i = Σ_j p_ij · v_j</span> — the weights above mix the value vectors into the head's output.</li>
      </ol>`;
  }

  render() {
    const info = this.info;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">
        Architecture
        <span class="sub"
          >${info
            ? `${info.arch.replace('_', '-')} · d_model ${info.d_model} · ${info.n_heads} heads of ${info.d_head} · FFN ${info.d_ff} · ${info.norm.replace('_', '-')} · ${info.params.toLocaleString('en')} parameters`
            : ''}</span
        >
      </h2>
      ${info ? this.diagram() : nothing}
      <button aria-expanded=${this.expanded} @click=${() => (this.expanded = !this.expanded)}>
        ${this.expanded ? 'Hide' : 'Show'} the steps of the selected attention block
      </button>
      ${this.expanded ? this.steps() : nothing}
    </section>`;
  }
}

customElements.define('tp-architecture', TpArchitecture);
