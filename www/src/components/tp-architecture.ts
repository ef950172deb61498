// The architecture diagram (SVG): every block of the loaded model, drawn from the core's
// layer plan — each sublayer with its residual arrow (when the model has residuals), its
// norm where the model puts it (pre-LN before the sublayer, post-LN and BatchNorm after
// the add, none: no box), the final norm, and the encoder's output feeding every
// cross-attention. Clicking (or pressing Enter on) a block opens it on the live tensors:
// an attention block into Q·Kᵀ → scale → mask → softmax → ·V for the focused query, an
// FFN block into W₁ → activation → W₂ for every position (the core's `blockProbe`), a
// norm block into the mean and variance it removed.

import { html, svg, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import type { AttnSite, AttnTrace, BlockProbe, FfnProbe, LayerPlan, MaskView, ModelInfo, NormProbe, NormStep, SublayerKind, Switches, TrainMode } from '../engine/protocol';
import { maskName } from '../ui/mask-name';
import type { EngineCaller } from '../engine/client';
import { emit, panel, scrollLabel, scrollRegion, styles } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';
import { at } from './attention-common';
import './tp-heat';
import { activationName, archName, normName, posEncodingShort, stackName } from '../i18n/terms';
import { int } from '../ui/format';

interface Block {
  label: string;
  kind: 'io' | 'embed' | 'attn' | 'ffn' | 'norm' | 'add' | 'head';
  site?: AttnSite;
  layer?: number;
  /** The plan's sublayer kind (`self_attention`, …), norm name (`norm1`, …), `final_norm` or `add`. */
  part?: string;
  /** A norm box that also adds the residual (post-LN, BatchNorm): "Add & Norm". */
  adds?: boolean;
  /** An add node or an Add & Norm box: the sublayer whose residual it adds. */
  of?: SublayerKind;
}

/** A residual arrow: from the gap below block `from` (the sublayer's input) to block `to` (where it is added). */
interface Residual {
  layer: number;
  part: SublayerKind;
  from: number;
  to: number;
}

/** An opened FFN or norm block: which stack, which layer (null: the final norm), which part. */
export interface Opened {
  stack: string;
  kind: 'ffn' | 'norm';
  layer: number | null;
  part: string;
}

/** Position encodings that act inside self-attention rather than on the embedding. */
/** The header row of a per-position table: the position and its token, for the first T. */
function positionHead(labels: string[], T: number) {
  return html`<thead>
    <tr>
      <th>${msg('position')}</th>
      ${labels.slice(0, T).map((t, p) => html`<th>${p} ${t}</th>`)}
    </tr>
  </thead>`;
}

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
    masks: { attribute: false },
    paddingOn: { type: Boolean },
    engine: { attribute: false },
    batch: { attribute: false },
    src: { attribute: false },
    switches: { attribute: false },
    train: { attribute: false },
    expanded: { state: true },
    opened: { state: true },
    probe: { state: true },
    problem: { state: true },
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
  /** The masks of the last forward pass, per site (the core's `ForwardResult.masks`). */
  masks: MaskView[] = [];
  paddingOn = true;
  /** What runs the block probe, and what it runs on: the batch of the last forward pass. */
  engine: EngineCaller | null = null;
  batch: number[][] = [];
  src: number[][] = [];
  switches: Switches | null = null;
  train: TrainMode | undefined = undefined;
  expanded = true;
  /** The opened FFN or norm block; null: the selected attention block is open. */
  opened: Opened | null = null;
  /** The core's live tensors of every block for `batch` (read by the browser tests). */
  probe: BlockProbe | null = null;
  problem = '';
  private asked = '';
  private askedInfo: ModelInfo | null = null;

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
      path.residual {
        stroke: var(--tp-accent);
        stroke-width: 1.3;
        fill: none;
      }
      path.memory {
        stroke: var(--tp-fg);
        stroke-width: 1.4;
        stroke-dasharray: 4 2;
      }
      marker path {
        fill: context-stroke;
      }
      .blk.add circle {
        fill: var(--tp-bg);
        stroke: var(--tp-accent);
        stroke-width: 1.5;
      }
      .blk.add text {
        font-size: 12px;
        font-weight: 700;
        fill: var(--tp-accent);
      }
      .blk.norm {
        cursor: pointer;
      }
      .open {
        margin-top: 10px;
      }
      .open .maps {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(min(220px, 100%), 1fr));
        gap: 10px;
      }
      .open h3 {
        font-size: var(--tp-text-md);
        margin: 6px 0 2px;
      }
      .open table {
        border-collapse: collapse;
        font-size: var(--tp-text-sm);
        font-variant-numeric: tabular-nums;
      }
      .open td,
      .open th {
        padding: 1px 6px;
        border-bottom: 1px solid var(--tp-line);
        text-align: right;
      }
      .open th {
        font-weight: normal;
        color: var(--tp-muted);
      }
      .feats {
        display: flex;
        flex-wrap: wrap;
        gap: 2px 10px;
        font-family: var(--tp-mono);
        font-size: var(--tp-text-xs);
      }
      .wrap {
        overflow-x: auto;
      }
      ol.steps {
        margin: var(--tp-space-2) 0 0;
        padding-left: 1.3em;
        font-size: var(--tp-text-md);
      }
      ol.steps li {
        margin-bottom: 6px;
      }
      .formula {
        font-family: var(--tp-mono);
        background: var(--tp-accent-soft);
        padding: 0 var(--tp-space-1);
        border-radius: 3px;
      }
      .nums {
        font-family: var(--tp-mono);
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
        overflow-wrap: anywhere;
      }
    `,
  ];

  /**
   * Whether a mask rule (or a painted cell) acts on this self-attention site now: the
   * core's `ForwardResult.masks` where the last pass has one, else the causal switch,
   * which acts on the main stack's self-attention only (docs/model.md).
   */
  private masked(site: AttnSite): boolean {
    const v = this.masks.find((m) => m.site === site);
    if (v) return v.rule.kind !== 'none' || v.cells.length > 0;
    return this.causalOn && (site === 'decoder_self' || (site === 'encoder_self' && this.info?.arch === 'encoder_only'));
  }

  /**
   * The blocks of every stack, bottom to top, read off the core's layer plan: per layer
   * its sublayers in order, each norm before (pre-LN) or after the add (post-LN,
   * BatchNorm) of its sublayer, an add node where the residual joins without a norm box
   * (pre-LN, or no norm), the final norm, and the head after the last stack; and every
   * sublayer's residual arrow.
   */
  private stacks(): { name: string; blocks: Block[]; residuals: Residual[] }[] {
    const info = this.info;
    const plan = this.plan;
    if (!info || !plan) return [];
    const normTitle = (kind: NormStep['kind']) => (kind === 'batch_norm' ? 'BatchNorm' : 'LayerNorm');
    return plan.stacks.map((st, si) => {
      const blocks: Block[] = [
        { label: st.input === 'source' ? msg('source tokens') : plan.stacks.length > 1 ? msg('target tokens') : msg('tokens'), kind: 'io' },
        // Only sinusoidal and learned positions are added to the embedding; RoPE, ALiBi and
        // relative positions act inside self-attention (named on those blocks).
        {
          label:
            info.pos_encoding === 'sinusoidal' || info.pos_encoding === 'learned'
              ? msg(str`embedding + ${posEncodingShort(info.pos_encoding)} positions`)
              : info.pos_encoding === 'none'
                ? msg('embedding (no positions)')
                : msg('embedding'),
          kind: 'embed',
        },
      ];
      const residuals: Residual[] = [];
      const title = (kind: SublayerKind) =>
        kind === 'ffn' ? msg('feed-forward') : kind === 'cross_attention' ? msg('cross-attention') : this.masked(st.site) ? msg('masked self-attention') : msg('self-attention');
      for (let l = 0; l < st.layers; l++) {
        for (const sub of st.sublayers) {
          const n = sub.norm;
          const addsHere = sub.residual && n?.placement === 'after';
          const norm: Block | null = n
            ? {
                label: addsHere ? msg(str`L${l + 1} Add & ${normTitle(n.kind)} (${n.name})`) : `L${l + 1} ${normTitle(n.kind)} (${n.name})`,
                kind: 'norm',
                site: st.site,
                layer: l,
                part: n.name,
                adds: addsHere,
                of: sub.kind,
              }
            : null;
          const first = blocks.length;
          if (norm && n?.placement === 'before') blocks.push(norm);
          blocks.push({
            label: `L${l + 1} ${title(sub.kind)}${sub.kind === 'self_attention' && inAttention(info.pos_encoding) ? ` + ${posEncodingShort(info.pos_encoding)}` : ''}${sub.residual ? '' : msg(' (no residual)')}`,
            kind: sub.kind === 'ffn' ? 'ffn' : 'attn',
            site: sub.site ?? st.site,
            layer: l,
            part: sub.kind,
          });
          if (norm && n?.placement === 'after') blocks.push(norm);
          else if (sub.residual) blocks.push({
              label: msg(str`L${l + 1} add the ${title(sub.kind)}'s input (residual)`),
              kind: 'add',
              layer: l,
              part: 'add',
              of: sub.kind,
            });
          if (sub.residual) residuals.push({ layer: l, part: sub.kind, from: first, to: blocks.length - 1 });
        }
      }
      if (st.final_norm) blocks.push({ label: msg(str`final LayerNorm (${st.name}.norm)`), kind: 'norm', site: st.site, part: 'final_norm' });
      if (si === plan.stacks.length - 1) {
        const label = plan.head === 'classifier' ? msg(str`classifier (${info.num_classes})`) : plan.arch === 'encoder_only' ? msg('token head') : msg('LM head → next token');
        blocks.push({ label, kind: 'head' });
      }
      return { name: st.name, blocks, residuals };
    });
  }

  private select(stack: string, b: Block) {
    if (b.kind === 'ffn' || b.kind === 'norm') {
      const o: Opened = { stack, kind: b.kind, layer: b.layer ?? null, part: b.part ?? b.kind };
      const same = this.opened && this.isOpened(stack, b);
      this.opened = o;
      this.expanded = same ? !this.expanded : true;
      if (b.site !== undefined && b.layer !== undefined && (b.site !== this.site || b.layer !== this.layer)) {
        emit(this, 'tp-select', { site: b.site, layer: b.layer, head: this.head });
      }
      return;
    }
    if (b.site === undefined || b.layer === undefined) return;
    if (!this.opened && b.site === this.site && b.layer === this.layer) this.expanded = !this.expanded;
    else this.expanded = true;
    this.opened = null;
    emit(this, 'tp-select', { site: b.site, layer: b.layer, head: this.head });
  }

  private isOpened(stack: string, b: Block): boolean {
    const o = this.opened;
    return !!o && o.stack === stack && o.kind === b.kind && o.part === (b.part ?? b.kind) && o.layer === (b.layer ?? null);
  }

  private diagram() {
    const stacks = this.stacks();
    // The model's numbers can arrive before its layer plan: nothing to draw yet.
    if (!stacks.length) return html`<p>${msg("Waiting for the model's layers…")}</p>`;
    const W = 210;
    const M = 16; // room beside a column for its residual arrows
    const gap = 34;
    const vgap = 8;
    const bh = (b: Block) => (b.kind === 'norm' ? 16 : b.kind === 'add' ? 14 : 26);
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
    const colW = W + 2 * M;
    const width = stacks.length * colW + (stacks.length - 1) * gap;
    const height = Math.max(...stacks.map((s) => tall(s.blocks))) + 24;
    const x0s = stacks.map((_, si) => si * (colW + gap) + M);
    const memory: { x: number; y: number } = { x: 0, y: 0 };
    const parts = stacks.map((s, si) => {
      const x0 = x0s[si];
      const cx = x0 + W / 2;
      const n = s.blocks.length;
      const ys = tops(s.blocks);
      // The encoder of an encoder-decoder keeps its residuals on the left, clear of the memory arrows.
      const left = stacks.length > 1 && si === 0;
      if (s.name === 'encoder') memory.x = x0 + W;
      if (s.name === 'encoder') memory.y = ys[n - 1] + bh(s.blocks[n - 1]) / 2;
      const blocks = s.blocks.map((b, bi) => {
        const y = ys[bi];
        const h = bh(b);
        const sel = this.opened
          ? this.isOpened(s.name, b)
          : b.kind === 'attn' && b.site === this.site && b.layer === this.layer;
        const focusable = b.kind === 'attn' || b.kind === 'ffn' || b.kind === 'norm';
        const line = bi > 0 ? svg`<line class="flow" x1=${cx} x2=${cx} y1=${y + h} y2=${y + h + vgap}></line>` : nothing;
        const shape =
          b.kind === 'add'
            ? svg`<circle cx=${cx} cy=${y + h / 2} r=${h / 2}></circle><text x=${cx - 4} y=${y + h / 2 + 4}>+</text>`
            : svg`<rect x=${x0} y=${y} width=${W} height=${h} rx="6"></rect><text x=${x0 + 10} y=${y + h / 2 + 4}>${b.label}</text>`;
        return svg`${line}<g
            class="blk ${b.kind} ${sel ? 'sel' : ''}"
            data-stack=${s.name}
            data-kind=${b.kind}
            data-part=${b.part ?? b.kind}
            data-layer=${b.layer ?? nothing}
            data-adds=${b.adds ? 'true' : nothing}
            data-of=${b.of ?? nothing}
            role=${focusable ? 'button' : 'img'}
            tabindex=${focusable ? 0 : -1}
            aria-pressed=${focusable ? String(sel) : nothing}
            aria-label=${focusable ? msg(str`select ${stackName(s.name)} ${b.label}`) : b.label}
            @click=${() => this.select(s.name, b)}
            @keydown=${(e: KeyboardEvent) => {
              if (e.key === 'Enter' || e.key === ' ') {
                e.preventDefault();
                this.select(s.name, b);
              }
            }}
          >
            ${shape}
          </g>`;
      });
      // Each residual leaves the flow in the gap below its sublayer's first block, runs
      // beside the column and rejoins at the add (an add node or an Add & Norm box).
      const residuals = s.residuals.map((r) => {
        const y1 = ys[r.from] + bh(s.blocks[r.from]) + vgap / 2;
        const to = s.blocks[r.to];
        const y2 = ys[r.to] + bh(to) / 2;
        const side = left ? x0 - M + 4 : x0 + W + M - 4;
        const end = to.kind === 'add' ? (left ? cx - bh(to) / 2 : cx + bh(to) / 2) : left ? x0 : x0 + W;
        return svg`<path
          class="residual"
          data-stack=${s.name}
          data-layer=${r.layer}
          data-part=${r.part}
          data-y1=${y1}
          data-y2=${y2}
          marker-end="url(#tp-arrow)"
          d=${`M ${cx} ${y1} H ${side} V ${y2} H ${end + (left ? -2 : 2)}`}
        ></path>`;
      });
      return svg`<text class="stack-label" x=${x0 + 4} y="12">${stackName(s.name)}</text>${blocks}${residuals}`;
    });
    // Encoder-decoder: the encoder's output (the memory) feeds every cross-attention block.
    let memArrows: unknown = nothing;
    if (stacks.length === 2) {
      const dec = stacks[1];
      const ys = tops(dec.blocks);
      const xd = x0s[1];
      memArrows = dec.blocks.map((b, bi) => {
        if (b.site !== 'cross' || b.kind !== 'attn') return nothing;
        const y = ys[bi] + bh(b) / 2;
        const mid = (memory.x + xd) / 2;
        return svg`<path class="flow memory" data-layer=${b.layer ?? nothing} marker-end="url(#tp-arrow)"
          d=${`M ${memory.x} ${memory.y} C ${mid} ${memory.y}, ${mid} ${y}, ${xd - 2} ${y}`}></path>`;
      });
    }
    return html`<svg viewBox=${`-2 0 ${width + 4} ${height}`} style=${styles(`max-width:${(width + 4) * 1.3}px`)} role="group" aria-label=${msg('architecture of the loaded model; attention blocks are buttons')}>
      <defs>
        <marker id="tp-arrow" viewBox="0 0 6 6" refX="5" refY="3" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
          <path d="M0,0 L6,3 L0,6 z"></path>
        </marker>
      </defs>
      ${parts}${memArrows}
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
    // The mask the core applied at this site (its rule, painted cells, padding), named as
    // the masks view names it.
    const mv = this.masks.find((m) => m.site === t.site);
    const ruled = mv ? mv.rule.kind !== 'none' || mv.cells.length > 0 : this.masked(t.site);
    const padded = mv ? mv.padding : this.paddingOn;
    const maskWhy =
      [ruled ? (mv ? maskName(mv) : msg('causal')) : '', padded ? (t.site === 'cross' ? msg('padding of the source') : msg('padding')) : '']
        .filter(Boolean)
        .join(' + ') || msg('no mask');
    return html`<p class="small">
        ${msg(html`Steps of head ${h + 1} for the query <span class="mono">“${q}”</span> (position ${i}); numbers come from the running model.`)}
      </p>
      <ol class="steps">
        <li>
          ${this.info?.score === 'additive'
            ? html`<strong>${msg('additive score')}</strong> <span class="formula" data-step="score">s_ij = w_h · tanh(q_i + k_j)</span> — ${msg(str`one score per key (${S} keys, d_k = ${dk}), from a trained vector w_h per head: not a product of Q and Kᵀ.`)}`
            : html`<strong>Q·Kᵀ</strong> <span class="formula" data-step="score">s_ij = q_i · k_j</span> — ${msg(str`one score per key (${S} keys, d_k = ${dk}).`)}`}
        </li>
        <li>
          ${this.info?.score === 'scaled_dot'
            ? html`<strong>${msg('scale')}</strong> <span class="formula">s_ij / √d_k = s_ij / ${fmt(Math.sqrt(dk), 2)}</span>
                ${this.scaleOn ? msg('on') : html`<strong>${msg('off')}</strong> — ${msg('scores keep their raw size and softmax saturates')}`}${msg('.')}`
            : html`<strong>${msg('scale')}</strong> — ${this.info?.score === 'additive' ? msg("none: this model's score is additive (w·tanh(q + k)), never divided by √d_k.") : msg("none: this model's score is the plain dot product, never divided by √d_k.")}`}
          ${msg('Scores after this step (with any position bias):')}
          <div class="nums">${row(scores)}</div>
        </li>
        <li data-step="mask">
          <strong>${msg('mask')}</strong> <span class="formula">${msg('s_ij = −∞ where masked')}</span> (${maskWhy}): ${msg(str`${masked.length} of ${S} keys masked`)}${masked.length ? ` ${msg(str`(positions ${masked.slice(0, 16).join(', ')}${masked.length > 16 ? '…' : ''})`)}` : ''}${msg('.')}
        </li>
        <li>
          <strong>softmax</strong> <span class="formula">p_ij = exp(s_ij) / Σ_j exp(s_ij)</span> — ${msg(str`row sums to ${fmt(sum, 4)}:`)}
          <div class="nums">${row(probs)}</div>
        </li>
        <li><strong>·V</strong> <span class="formula">z_i = Σ_j p_ij · v_j</span> — ${msg("the weights above mix the value vectors into the head's output.")}</li>
      </ol>`;
  }

  /** The stack's site in the probe: `encoder` → encoder_self, `decoder` → decoder_self. */
  private siteOf(stack: string): AttnSite {
    return stack === 'encoder' ? 'encoder_self' : 'decoder_self';
  }

  updated(): void {
    if (!this.opened || !this.expanded || !this.engine || !this.info || !this.batch.length || !this.switches) return;
    const src = this.info.arch === 'encoder_decoder' ? this.src : undefined;
    const key = JSON.stringify([this.batch, src ?? null, this.switches, this.train ?? null]);
    if (key === this.asked && this.info === this.askedInfo) return;
    this.asked = key;
    this.askedInfo = this.info;
    void this.runProbe(key, src);
  }

  private async runProbe(key: string, src: number[][] | undefined) {
    const info = this.info;
    try {
      const req = { batch: this.batch, switches: this.switches!, ...(src ? { src } : {}), ...(this.train ? { train: this.train } : {}) };
      const p = await this.engine!.call('blockProbe', req);
      if (key !== this.asked || info !== this.info) return;
      this.probe = p;
      this.problem = '';
    } catch (e) {
      if (key !== this.asked) return;
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  /** The probe's row `b` of the shown batch, its length and the tokens along it. */
  private rowOf(stack: string): { b: number; labels: string[] } {
    const ids = stack === 'encoder' && this.info?.arch === 'encoder_decoder' ? this.src : this.batch;
    const b = Math.min(this.row, Math.max(0, ids.length - 1));
    const v = this.info?.vocab ?? [];
    return { b, labels: (ids[b] ?? []).map((id) => showToken(v[id] ?? `?${id}`)) };
  }

  /** Rows `b` of a (B, T, X) tensor: (T, X). */
  private slice(d: { shape: number[]; data: Float32Array }, b: number): Float32Array {
    const [, T, X] = d.shape;
    return d.data.subarray(b * T * X, (b + 1) * T * X);
  }

  private ffnPanel(o: Opened) {
    const info = this.info!;
    const st = this.probe?.stacks.find((x) => x.site === this.siteOf(o.stack));
    const f: FfnProbe | undefined = st?.ffn.find((x) => x.layer === o.layer);
    if (!f) return html`<p class="muted">${msg('Reading the feed-forward block…')}</p>`;
    const { b, labels } = this.rowOf(o.stack);
    const [, T, F] = f.hidden.shape;
    const C = f.input.shape[2];
    const zeros = f.zeros.slice(b * T, (b + 1) * T);
    const act = activationName(info.activation === 'relu' ? 'relu' : 'gelu');
    const map = (name: string, data: Float32Array, cols: number, label: string, zerosOn = false) =>
      html`<div>
        <h3>${label}</h3>
        <tp-heat
          data-map=${name}
          .rows=${T}
          .cols=${cols}
          .data=${data}
          .zeros=${zerosOn}
          .label=${msg(str`${label}, one row per position`)}
          .rowName=${(r: number) => msg(str`position ${r} “${labels[r] ?? ''}”`)}
          .colName=${(c: number) => msg(str`unit ${c}`)}
          .maxCell=${8}
        ></tp-heat>
      </div>`;
    const total = zeros.reduce((a, z) => a + z, 0);
    return html`<div class="open" data-open="ffn" data-stack=${o.stack} data-layer=${o.layer ?? ''} data-row=${b}>
      <p class="small">
        ${msg(str`Layer ${(o.layer ?? 0) + 1} feed-forward of the ${stackName(o.stack)}${this.batch.length > 1 ? msg(str`, batch row ${b}`) : ''}: every position's row goes through the same two matrices,`)}
        <span class="mono">x (${C}) → W₁x + b₁ (${F}) → ${act} (${F}) → W₂h + b₂ (${C})</span>.
        ${act === 'ReLU'
          ? msg(str`ReLU sets every negative unit to exactly 0: ${total} of ${T * F} hidden units here (${fmt((100 * total) / Math.max(1, T * F), 1)}%).`)
          : msg(str`GELU is smooth: ${total} of ${T * F} hidden units are exactly 0.`)}
        ${this.train ? msg("Train mode: the hidden units also carry this pass's dropout mask.") : nothing}
      </p>
      <div class="maps">
        ${map('ffn-input', this.slice(f.input, b), C, msg('x: what the FFN reads'))}
        ${map('ffn-pre', this.slice(f.pre, b), F, 'W₁x + b₁')}
        ${map('ffn-hidden', this.slice(f.hidden, b), F, `${act}(W₁x + b₁)`, true)}
        ${map('ffn-output', this.slice(f.output, b), C, msg('W₂h + b₂: what it adds back'))}
      </div>
      <div class="wrap" ${scrollRegion(scrollLabel())}>
        <table aria-label=${msg('hidden units that are exactly zero, per position')}>
          ${positionHead(labels, T)}
          <tbody>
            <tr>
              <th>${msg(str`units at 0 (of ${F})`)}</th>
              ${Array.from(zeros).map((z, p) => html`<td data-pos=${p} data-zeros=${z}>${z}</td>`)}
            </tr>
          </tbody>
        </table>
      </div>
    </div>`;
  }

  private normPanel(o: Opened) {
    const st = this.probe?.stacks.find((x) => x.site === this.siteOf(o.stack));
    const n: NormProbe | undefined = st?.norms.find((x) => (o.part === 'final_norm' ? x.layer === null : x.layer === o.layer && x.name === o.part));
    if (!n) return html`<p class="muted">${msg('Reading the norm…')}</p>`;
    const { b, labels } = this.rowOf(o.stack);
    const [, T, C] = n.input.shape;
    const kind = n.kind === 'batch_norm' ? 'BatchNorm' : 'LayerNorm';
    const where = o.part === 'final_norm' ? msg(str`The ${stackName(o.stack)}'s final ${kind}`) : msg(str`Layer ${(o.layer ?? 0) + 1} ${kind} (${n.name})`);
    const placement =
      n.placement === 'before'
        ? msg('before its sublayer (pre-LN)')
        : n.placement === 'after'
          ? n.kind === 'batch_norm'
            ? msg('after its sublayer and the residual add')
            : msg('after its sublayer and the residual add (post-LN)')
          : msg('after the last layer');
    const input = html`<h3>${msg(str`What it normalised (row ${b})`)}</h3>
      <tp-heat
        data-map="norm-input"
        .rows=${T}
        .cols=${C}
        .data=${this.slice(n.input, b)}
        .label=${msg(str`${where}: its input, one row per position`)}
        .rowName=${(r: number) => msg(str`position ${r} “${labels[r] ?? ''}”`)}
        .colName=${(c: number) => msg(str`feature ${c}`)}
        .maxCell=${8}
      ></tp-heat>`;
    if (!n.over_batch && !n.running) {
      const mean = n.mean.data.subarray(b * T, (b + 1) * T);
      const vr = n.var.data.subarray(b * T, (b + 1) * T);
      return html`<div class="open" data-open="norm" data-stack=${o.stack} data-layer=${o.layer ?? ''} data-part=${o.part} data-row=${b} data-per="position">
        <p class="small">
          ${msg(str`${where}, ${placement}: each position subtracts the mean μ of its own ${C} features and divides by √(σ² + 10⁻⁵), then scales and shifts by its learned γ and β. Nothing from another position or sequence enters.`)}
        </p>
        <div class="wrap" ${scrollRegion(scrollLabel())}>
          <table aria-label=${msg('mean and variance each position removed')}>
            ${positionHead(labels, T)}
            <tbody>
              <tr>
                <th>μ</th>
                ${Array.from(mean).map((m, p) => html`<td data-stat="mean" data-pos=${p} data-value=${m}>${fmt(m, 3)}</td>`)}
              </tr>
              <tr>
                <th>σ²</th>
                ${Array.from(vr).map((v, p) => html`<td data-stat="var" data-pos=${p} data-value=${v}>${fmt(v, 3)}</td>`)}
              </tr>
            </tbody>
          </table>
        </div>
        ${input}
      </div>`;
    }
    const how = n.running
      ? msg('eval mode: the running μ and σ² it stored while training, one per feature — the same for every position of every sequence')
      : msg(str`train mode: one μ and σ² per feature, taken over all ${n.input.shape[0] * T} positions of the batch — so the other sequences of the batch move this one`);
    return html`<div class="open" data-open="norm" data-stack=${o.stack} data-layer=${o.layer ?? ''} data-part=${o.part} data-row=${b} data-per="feature">
      <p class="small">${msg(str`${where}, ${placement}. It removed, in ${how}:`)}</p>
      <div class="feats" role="list" aria-label=${msg('mean and variance per feature')}>
        ${Array.from(n.mean.data).map(
          (m, k) => html`<span role="listitem" data-feature=${k} data-mean=${m} data-var=${n.var.data[k]}>f${k} μ ${fmt(m, 2)} σ² ${fmt(n.var.data[k], 2)}</span>`,
        )}
      </div>
      ${input}
    </div>`;
  }

  private openedPanel() {
    const o = this.opened;
    if (!o) return this.steps();
    if (this.problem) return html`<p role="alert">${this.problem}</p>`;
    if (!this.probe) return html`<p class="muted">${msg('Running the model…')}</p>`;
    return o.kind === 'ffn' ? this.ffnPanel(o) : this.normPanel(o);
  }

  render() {
    const info = this.info;
    const what = this.opened ? this.opened.kind : 'attention';
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">
        ${msg('Architecture')}
        <span class="sub"
          >${info
            ? `${archName(info.arch)} · d_model ${info.d_model} · ${msg(str`${info.n_heads} heads of ${info.d_head}`)} · FFN ${info.d_ff} · ${normName(info.norm)} · ${msg(str`${int(info.params)} parameters`)}`
            : ''}</span
        >
      </h2>
      ${info ? this.diagram() : nothing}
      <button aria-expanded=${this.expanded} @click=${() => (this.expanded = !this.expanded)}>
        ${what === 'attention'
          ? this.expanded
            ? msg('Hide the steps of the selected attention block')
            : msg('Show the steps of the selected attention block')
          : what === 'ffn'
            ? this.expanded
              ? msg('Hide the live numbers of the selected feed-forward block')
              : msg('Show the live numbers of the selected feed-forward block')
            : this.expanded
              ? msg('Hide the live numbers of the selected norm block')
              : msg('Show the live numbers of the selected norm block')}
      </button>
      ${this.expanded ? this.openedPanel() : nothing}
    </section>`;
  }
}

customElements.define('tp-architecture', TpArchitecture);
