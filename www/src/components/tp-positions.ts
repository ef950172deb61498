// The loaded model's position encoding, drawn from its own tensors:
// - sinusoidal / learned: the table added to the embeddings (position × dimension) and
//   the similarity PEᵢ·PEⱼ of every pair of positions;
// - RoPE: one dimension pair of the model's q and k turning with the position, and the
//   score before and after shifting both positions by the same amount;
// - ALiBi: each head's slope and its bias −m·|i − j|;
// - relative (Shaw): the learned key and value vectors by clipped distance;
// - every model: token embeddings and position vectors on their two principal axes.

import { html, css, nothing, svg } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller } from '../engine/client';
import type { ModelInfo, Positions, RopeDemo } from '../engine/protocol';
import { canvasFor, panel } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';
import './tp-heat';

const Q = '#d55e00';
const K = '#0072b2';
/** More tokens than this are drawn as dots on a canvas (a real vocabulary, 50,257 of them), not as labelled SVG points. */
const SVG_POINTS = 600;

export class TpPositions extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    info: { attribute: false },
    tokens: { attribute: false },
    layer: { type: Number },
    head: { type: Number },
    data: { state: true },
    rope: { state: true },
    problem: { state: true },
    span: { state: true },
    relLayer: { state: true },
    alibiHead: { state: true },
    pair: { state: true },
    qi: { state: true },
    kj: { state: true },
    shift: { state: true },
  };

  engine: EngineCaller | null = null;
  info: ModelInfo | null = null;
  /** The input ids (with <bos>) the RoPE demonstration reads q and k from. */
  tokens: number[] = [];
  layer = 0;
  head = 0;
  /** The engine's answer for the loaded model (read by the browser tests). */
  data: Positions | null = null;
  rope: RopeDemo | null = null;
  problem = '';
  /** Positions drawn. */
  span = 64;
  relLayer = 0;
  alibiHead = 0;
  pair = 0;
  qi = -1;
  kj = -1;
  shift = 10;
  private asked = '';
  private ropeAsked = '';
  private alibiView: [Float32Array, number, Float32Array] | null = null;

  static styles = [
    panel,
    css`
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(min(240px, 100%), 1fr));
        gap: var(--tp-space-3);
      }
      h3 {
        font-size: var(--tp-text-md);
        margin: 10px 0 4px;
      }
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
      .controls {
        display: flex;
        gap: 10px;
        flex-wrap: wrap;
        align-items: center;
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0;
      }
      input[type='number'] {
        width: 5em;
      }
      svg {
        width: 100%;
        height: auto;
        display: block;
        max-width: 420px;
      }
      .cloud-wrap {
        position: relative;
        max-width: 420px;
      }
      canvas.cloud {
        position: absolute;
        inset: 0;
        width: 100% !important;
        height: auto !important;
        aspect-ratio: 420 / 300;
      }
      .rope {
        display: flex;
        gap: var(--tp-space-4);
        flex-wrap: wrap;
        align-items: center;
      }
      .rope svg {
        width: 240px;
      }
      .scores {
        font-variant-numeric: tabular-nums;
        font-size: var(--tp-text-md);
      }
      .scores td,
      .scores th {
        padding: 1px 8px;
        text-align: right;
      }
      .slopes span {
        display: inline-block;
        margin-right: 10px;
        font-size: var(--tp-text-sm);
      }
    `,
  ];

  /** The dots of a large embedding map, drawn on its canvas after each render. */
  private cloud: ((ctx: CanvasRenderingContext2D) => void) | null = null;

  updated(): void {
    const c = this.renderRoot.querySelector<HTMLCanvasElement>('canvas.cloud');
    if (c && this.cloud) {
      const ctx = canvasFor(c, 420, 300);
      if (ctx) this.cloud(ctx);
    }
    const info = this.info;
    if (!this.engine || !info) return;
    const t = Math.min(this.span, info.max_len);
    const key = `${info.pos_encoding}/${info.d_model}/${info.vocab.length}/${info.params}/${t}`;
    if (key !== this.asked) {
      this.asked = key;
      this.rope = null;
      this.ropeAsked = '';
      void this.load(t);
    }
    if (info.pos_encoding === 'rope' && this.tokens.length > 1) {
      const n = this.tokens.length;
      const i = this.qi < 0 || this.qi >= n ? n - 1 : this.qi;
      const j = this.kj < 0 || this.kj >= n ? Math.max(0, n - 3) : this.kj;
      const rk = `${key}/${this.tokens.join(',')}/${this.layer}/${this.head}/${i}/${j}/${this.pair}/${this.shift}`;
      if (rk !== this.ropeAsked) {
        this.ropeAsked = rk;
        void this.loadRope(i, j);
      }
    }
  }

  private async load(t: number) {
    try {
      this.data = await this.engine!.call('positions', { t });
      this.problem = '';
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  private async loadRope(i: number, j: number) {
    try {
      this.rope = await this.engine!.call('ropeDemo', {
        tokens: this.tokens,
        layer: this.layer,
        head: this.head,
        i,
        j,
        pair: this.pair,
        shift: this.shift,
      });
      this.problem = '';
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  private numberInput(label: string, value: number, min: number, max: number, set: (v: number) => void) {
    return html`<label
      >${label}
      <input
        type="number"
        min=${min}
        max=${max}
        .value=${String(value)}
        aria-label=${label}
        @change=${(e: Event) => {
          const input = e.target as HTMLInputElement;
          const v = Math.round(Number(input.value));
          if (!Number.isFinite(v) || v < min || v > max) {
            input.setCustomValidity(msg(str`a whole number from ${min} to ${max}`));
            input.reportValidity();
            return;
          }
          input.setCustomValidity('');
          set(v);
        }}
    /></label>`;
  }

  private additive(d: Positions) {
    if (!d.table || !d.similarity) return nothing;
    const [t, c] = d.table.shape;
    const learned = d.scheme === 'learned';
    return html`<h3>${learned ? msg('Learned position table') : msg('Sinusoidal position table')}</h3>
      <p>
        ${learned
          ? msg('Row t is a trained vector added to the embedding of the token at position t. Rows past the longest training sequence were never trained and stay near their random start.')
          : msg(html`Position t adds sin(t / 10000<sup>2i/C</sup>) on dimension 2i and the cosine on 2i + 1: fast waves on the first dimensions, slow ones on the last. Each position's vector has the same length, √(C/2).`)}
      </p>
      <div class="grid">
        <div>
          <tp-heat
            data-map="table"
            .rows=${t}
            .cols=${c}
            .data=${d.table.data}
            .label=${msg('position vector: position (rows) × dimension (columns)')}
            .rowName=${(r: number) => msg(str`position ${r}`)}
            .colName=${(col: number) => msg(str`dimension ${col}`)}
            .signed=${true}
          ></tp-heat>
          <p class="small muted">${msg(str`rows: position 0 … ${t - 1}; columns: dimension 0 … ${c - 1}`)}</p>
        </div>
        <div>
          <tp-heat
            data-map="similarity"
            .rows=${t}
            .cols=${t}
            .data=${d.similarity.data}
            .label=${msg('similarity PE_i · PE_j of every pair of positions')}
            .rowName=${(r: number) => `PE${r}`}
            .colName=${(col: number) => `· PE${col}`}
          ></tp-heat>
          <p class="small muted">
            PE<sub>i</sub>·PE<sub>j</sub>:
            ${learned ? msg('whatever structure training gave the table.') : msg('largest on the diagonal (C/2) and falling with the distance |i − j|.')}
          </p>
        </div>
      </div>`;
  }

  private alibi(d: Positions, info: ModelInfo) {
    if (!d.alibi || !d.slopes) return nothing;
    const [h, t] = d.alibi.shape;
    const head = Math.min(this.alibiHead, h - 1);
    // One view of the head's rows per (data, head), so a re-render does not redraw the map.
    if (this.alibiView?.[0] !== d.alibi.data || this.alibiView[1] !== head) {
      this.alibiView = [d.alibi.data, head, d.alibi.data.subarray(head * t * t, (head + 1) * t * t)];
    }
    return html`<h3>${msg('ALiBi: a distance penalty per head')}</h3>
      <p>
        ${msg(html`Nothing is added to the embeddings. Each head h subtracts m<sub>h</sub>·|i − j| from the score of query i for key j, with slopes from a fixed geometric sequence: a steep head looks close by, a shallow one far away. The penalty grows with any distance, trained or not, so longer inputs meet no new positions.`)}
      </p>
      <div class="slopes" data-slopes=${Array.from(d.slopes).join(',')}>
        ${Array.from(d.slopes).map(
          (m, i) => html`<span><button aria-pressed=${i === head} @click=${() => (this.alibiHead = i)}>${msg(str`head ${i + 1}`)}</button> m = ${fmt(m, 4)}</span>`,
        )}
      </div>
      <tp-heat
        data-map="alibi"
        .rows=${t}
        .cols=${t}
        .data=${this.alibiView[2]}
        .label=${msg(str`ALiBi bias of head ${head + 1}: query position (rows) × key position (columns)`)}
        .rowName=${(r: number) => msg(str`query ${r}`)}
        .colName=${(c: number) => msg(str`key ${c}`)}
      ></tp-heat>
      <p class="small muted">
        ${msg(str`The causal mask hides the upper triangle of a decoder's map; the bias itself is symmetric. ${info.n_heads} heads.`)}
      </p>`;
  }

  private relative(d: Positions) {
    if (!d.relative.length) return nothing;
    const k = d.max_distance;
    const layer = d.relative[Math.min(this.relLayer, d.relative.length - 1)];
    const [rows, dh] = layer.rel_k.shape;
    const dist = (r: number) => {
      const x = r - k;
      if (x === -k) return msg(str`distance ≤ −${k} (clipped)`);
      if (x === k) return msg(str`distance ≥ +${k} (clipped)`);
      return msg(str`distance ${x > 0 ? '+' : ''}${x}`);
    };
    return html`<h3>${msg('Relative positions (Shaw et al.): learned vectors by clipped distance')}</h3>
      <p>
        ${msg(html`For query i and key j the layer adds a trained vector a<sub>K</sub>[j − i] to the key and a<sub>V</sub>[j − i] to the value. Distances are clipped to ±${k}: every key ${k} or more positions away shares the end rows, so the model tells near neighbours apart and treats everything farther as "far".`)}
      </p>
      ${d.relative.length > 1
        ? html`<div class="controls">
            ${d.relative.map(
              (r, i) => html`<button aria-pressed=${i === this.relLayer} @click=${() => (this.relLayer = i)}>${msg(str`layer ${r.layer + 1}`)}</button>`,
            )}
          </div>`
        : nothing}
      <div class="grid" data-max-distance=${k}>
        <div>
          <p class="small">rel_k: ${msg(str`${rows} rows (distance −${k} … +${k}) × ${dh} dimensions`)}</p>
          <tp-heat
            data-map="rel_k"
            .rows=${rows}
            .cols=${dh}
            .data=${layer.rel_k.data}
            .label=${msg('relative key vectors: clipped distance (rows) × dimension')}
            .rowName=${dist}
            .colName=${(c: number) => msg(str`dimension ${c}`)}
            .signed=${true}
          ></tp-heat>
        </div>
        <div>
          <p class="small">rel_v: ${msg('the same distances, added to the values')}</p>
          <tp-heat
            data-map="rel_v"
            .rows=${rows}
            .cols=${dh}
            .data=${layer.rel_v.data}
            .label=${msg('relative value vectors: clipped distance (rows) × dimension')}
            .rowName=${dist}
            .colName=${(c: number) => msg(str`dimension ${c}`)}
            .signed=${true}
          ></tp-heat>
        </div>
      </div>`;
  }

  private ropeView(info: ModelInfo) {
    if (info.pos_encoding !== 'rope') return nothing;
    const r = this.rope;
    const n = this.tokens.length;
    const pairs = Math.floor(info.d_head / 2);
    const size = 220;
    const mid = size / 2;
    const rad = r ? Math.max(...[...r.q_path, ...r.k_path].map(([a, b]) => Math.hypot(a, b)), 1e-6) : 1;
    const P = ([a, b]: [number, number]) => [mid + (a / rad) * (mid - 14), mid - (b / rad) * (mid - 14)];
    const dot = (p: [number, number], color: string, label: string, big: boolean) => {
      const [x, y] = P(p);
      return svg`<circle cx=${x} cy=${y} r=${big ? 5 : 2} fill=${color} opacity=${big ? 1 : 0.45}><title>${label}</title></circle>`;
    };
    return html`<h3>${msg('RoPE: queries and keys turn with their position')}</h3>
      <p>
        ${msg(html`Nothing is added to the embeddings. Inside attention each pair of dimensions (2p, 2p + 1) of q and k is rotated by the angle t·θ<sub>p</sub>, θ<sub>p</sub> = 10000<sup>−2p/d_k</sup>. Rotating both by the same extra angle leaves their dot product alone, so the score of query i for key j depends on i − j only. Here are this model's own q and k (layer ${this.layer + 1}, head ${this.head + 1}), rotated back to position 0 and turned again position by position.`)}
      </p>
      <div class="controls">
        ${this.numberInput(msg('pair p'), this.pair, 0, pairs - 1, (v) => (this.pair = v))}
        ${this.numberInput(msg('query position i'), r?.i ?? 0, 0, n - 1, (v) => (this.qi = v))}
        ${this.numberInput(msg('key position j'), r?.j ?? 0, 0, n - 1, (v) => (this.kj = v))}
        ${this.numberInput(msg('shift both by'), this.shift, 0, 4096, (v) => (this.shift = v))}
      </div>
      ${r
        ? html`<div class="rope">
            <svg viewBox="0 0 ${size} ${size}" role="img" aria-label=${msg(str`pair ${r.pair} of q (orange) and k (blue) at every position; it turns ${fmt(r.theta, 4)} radians per position`)}>
              <line x1="0" y1=${mid} x2=${size} y2=${mid} stroke="var(--tp-line)"></line>
              <line x1=${mid} y1="0" x2=${mid} y2=${size} stroke="var(--tp-line)"></line>
              ${r.q_path.map((p, t) => dot(p, Q, msg(str`q at position ${t}`), t === r.i))}
              ${r.k_path.map((p, t) => dot(p, K, msg(str`k at position ${t}`), t === r.j))}
              <text x="4" y="12" font-size="10" fill=${Q}>${msg(str`q (position ${r.i} large)`)}</text>
              <text x="4" y="24" font-size="10" fill=${K}>${msg(str`k (position ${r.j} large)`)}</text>
              <text x="4" y=${size - 4} font-size="10" fill="var(--tp-muted)">θ_${r.pair} = ${fmt(r.theta, 4)} ${msg('rad / position')}</text>
            </svg>
            <table class="scores" data-score=${r.score} data-shifted=${r.shifted_score} data-offset=${r.offset_score}>
              <tr><th scope="row">${msg(str`q·k at (${r.i}, ${r.j})`)}</th><td>${fmt(r.score, 5)}</td></tr>
              <tr><th scope="row">${msg(str`at (${r.i + r.shift}, ${r.j + r.shift})`)}</th><td>${fmt(r.shifted_score, 5)}</td></tr>
              <tr><th scope="row">${msg(str`from the offset ${r.i - r.j} alone`)}</th><td>${fmt(r.offset_score, 5)}</td></tr>
              <tr><th scope="row">${msg('difference after the shift')}</th><td>${(r.shifted_score - r.score).toExponential(1)}</td></tr>
            </table>
          </div>`
        : html`<p class="muted">${msg('Computing…')}</p>`}`;
  }

  private map(d: Positions, info: ModelInfo) {
    const m = d.map;
    const pts = [...m.tokens, ...m.positions];
    if (!pts.length) return nothing;
    const xs = pts.map((p) => p[0]);
    const ys = pts.map((p) => p[1]);
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const W = 420;
    const H = 300;
    const X = (x: number) => 16 + ((x - x0) / (x1 - x0 || 1)) * (W - 32);
    const Y = (y: number) => H - 16 - ((y - y0) / (y1 - y0 || 1)) * (H - 32);
    const line = m.positions.map(([x, y], i) => `${i ? 'L' : 'M'}${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join('');
    const many = m.tokens.length > SVG_POINTS;
    this.cloud = many
      ? (ctx) => {
          ctx.fillStyle = K;
          ctx.globalAlpha = 0.35;
          for (const [x, y] of m.tokens) ctx.fillRect(X(x) - 1, Y(y) - 1, 2, 2);
          ctx.globalAlpha = 1;
        }
      : null;
    return html`<h3>${msg('Embedding space, flattened')}</h3>
      <p>
        ${m.positions.length
          ? msg(str`Every token's embedding (×√d_model where the model scales it) and every position vector projected onto the two directions along which they vary most (principal components, computed in the engine): ${fmt(100 * m.explained[0], 1)}% and ${fmt(100 * m.explained[1], 1)}% of the variance. Hover a point for its token.`)
          : msg(str`Every token's embedding (×√d_model where the model scales it) projected onto the two directions along which they vary most (principal components, computed in the engine): ${fmt(100 * m.explained[0], 1)}% and ${fmt(100 * m.explained[1], 1)}% of the variance. Hover a point for its token.`)}
        ${m.positions.length ? msg('Positions are joined in order (grey).') : msg('This model adds no vector for the position.')}
      </p>
      ${many ? html`<p class="small muted">${msg(str`${m.tokens.length} tokens: each a dot, without its label.`, { id: 'positions.many-tokens' })}</p>` : nothing}
      <div class="cloud-wrap">
      ${many ? html`<canvas class="cloud" aria-hidden="true"></canvas>` : nothing}
      <svg viewBox="0 0 ${W} ${H}" role="img" aria-label=${m.positions.length ? msg(str`${m.tokens.length} token embeddings and ${m.positions.length} position vectors on two principal axes`) : msg(str`${m.tokens.length} token embeddings on two principal axes`)}>
        ${m.positions.length ? svg`<path d=${line} fill="none" stroke="var(--tp-muted)" stroke-width="1"></path>` : ''}
        ${m.positions.length > SVG_POINTS ? nothing : m.positions.map(([x, y], i) => svg`<circle cx=${X(x)} cy=${Y(y)} r="2.5" fill="var(--tp-muted)" data-position=${i}><title>${msg(str`position ${i}`)}</title></circle>`)}
        ${(many ? [] : m.tokens).map(
          ([x, y], i) => svg`<g data-token=${info.vocab[i]}>
            <circle cx=${X(x)} cy=${Y(y)} r="3.5" fill=${K}><title>${msg(str`token ${JSON.stringify(info.vocab[i])}`)}</title></circle>
            <text
              x=${X(x) > W * 0.8 ? X(x) - 4 : X(x) + 4}
              y=${Y(y) < 14 ? Y(y) + 11 : Y(y) - 3}
              text-anchor=${X(x) > W * 0.8 ? 'end' : 'start'}
              font-size="9"
              fill="var(--tp-fg)"
            >${showToken(info.vocab[i] ?? '')}</text>
          </g>`,
        )}
      </svg>
      </div>`;
  }

  render() {
    const info = this.info;
    const d = this.data;
    const names: Record<string, string> = {
      none: msg('none'),
      sinusoidal: msg('sinusoidal, added to the embeddings'),
      learned: msg('learned, added to the embeddings'),
      rope: msg('RoPE, inside attention'),
      alibi: msg('ALiBi, inside attention'),
      relative: msg('relative (Shaw), inside attention'),
    };
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Position encoding')} <span class="sub">${info ? names[info.pos_encoding] ?? info.pos_encoding : ''}</span></h2>
      ${info?.pos_encoding === 'none'
        ? html`<p>
            ${msg('This model has no position encoding. Attention sees a set of tokens; only the causal mask (each position sees how many came before it) tells it anything about order. The order view shows what that means.')}
          </p>`
        : nothing}
      ${d && info && (d.table || d.alibi)
        ? html`<div class="controls">${this.numberInput(msg('positions drawn'), Math.min(this.span, info.max_len), 2, info.max_len, (v) => (this.span = v))}</div>`
        : nothing}
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}
      ${d && info
        ? html`${this.additive(d)} ${this.ropeView(info)} ${this.alibi(d, info)} ${this.relative(d)} ${this.map(d, info)}`
        : html`<p class="muted">${msg('Waiting for the model…')}</p>`}
    </section>`;
  }
}

customElements.define('tp-positions', TpPositions);
