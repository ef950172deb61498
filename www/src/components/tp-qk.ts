// The q·k inspector beside the attention heatmap: for the focused cell (query i, key j)
// of the selected head, q_i, k_j and v_j as colour strips, the products q_i[d]·k_j[d]
// whose sum is the raw score, and how that sum becomes the cell's score. Below, how far
// this head's queries are from its keys (zero when the model was trained with W_Q = W_K).
//
// q, k and v come from the core's recorded forward pass; this element only draws them.
// The one sum it writes out is the sum of the products it draws, checked against the
// score the core reported for the cell.

import { html, css, nothing, unsafeCSS } from 'lit';
import type { AttnTrace, Dense } from '../engine/protocol';
import { panel, styles } from '../ui/shared';
import { ifDefined } from 'lit/directives/if-defined.js';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { diverging, fmt, showToken, tokenLang } from '../ui/palette';

/** Row `n` of head `h` of sequence `b` in a (B, H, N, D) tensor. */
function vec(t: Dense, b: number, h: number, n: number): Float32Array {
  const [, H, N, D] = t.shape;
  const start = ((b * H + h) * N + n) * D;
  return t.data.subarray(start, start + D);
}

/** The largest |x| over the given vectors (at least a tiny positive number). */
function span(...xs: ArrayLike<number>[]): number {
  let m = 1e-12;
  for (const x of xs) for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]));
  return m;
}

export class TpQk extends LocalizedElement {
  static properties = {
    trace: { attribute: false },
    b: { type: Number },
    head: { type: Number },
    i: { type: Number },
    j: { type: Number },
    scaleOn: { type: Boolean },
    score: { type: String },
    posEncoding: { type: String },
    maxDistance: { type: Number },
    queryTokens: { attribute: false },
    keyTokens: { attribute: false },
  };

  trace: AttnTrace | null = null;
  b = 0;
  head = 0;
  i = 0;
  j = 0;
  scaleOn = true;
  /** The model's score function: scaled_dot, dot or additive. */
  score = 'scaled_dot';
  posEncoding = '';
  /** K of relative positions: the offset is clipped to ±K. */
  maxDistance = 0;
  queryTokens: string[] = [];
  keyTokens: string[] = [];

  static styles = [
    panel,
    css`
      :host {
        font-size: var(--tp-text-sm);
      }
      .box {
        border: 1px solid var(--tp-line);
        border-radius: 8px;
        padding: 8px 10px;
        min-width: 0;
        max-width: 440px;
      }
      h3 {
        font-size: var(--tp-text-md);
        margin: 0 0 6px;
      }
      .strips {
        display: grid;
        grid-template-columns: auto 1fr auto;
        gap: 3px 8px;
        align-items: center;
      }
      .name {
        font-family: var(--tp-mono);
        white-space: nowrap;
        text-align: right;
      }
      .range {
        font-family: var(--tp-mono);
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
        white-space: nowrap;
      }
      .strip {
        display: flex;
        gap: 1px;
      }
      .strip span {
        flex: 1 1 0;
        min-width: 8px;
        max-width: 28px;
        height: 16px;
        border-radius: 2px;
        outline: 1px solid rgba(0, 0, 0, 0.08);
      }
      .sum {
        margin-top: 6px;
        line-height: 1.5;
      }
      .mono {
        font-family: var(--tp-mono);
      }
      .legend {
        display: flex;
        align-items: center;
        gap: 6px;
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
        margin-top: 6px;
        flex-wrap: wrap;
      }
      .ramp {
        width: 100px;
        height: 10px;
        border-radius: 3px;
        background: linear-gradient(90deg, ${unsafeCSS([-1, -0.5, 0, 0.5, 1].map(diverging).join(', '))});
      }
      .sym {
        margin-top: var(--tp-space-2);
        padding-top: 6px;
        border-top: 1px solid var(--tp-line);
      }
      .ok {
        font-weight: 700;
      }
    `,
  ];

  /** One vector as a strip of D cells, coloured on a diverging scale of ±`m`. */
  private strip(name: string, label: string, x: ArrayLike<number>, m: number, cls: string) {
    const cells = [];
    for (let d = 0; d < x.length; d++) {
      cells.push(html`<span data-d=${d} data-value=${x[d]} title=${`${label}[${d}] = ${fmt(x[d])}`} style=${styles(`background:${diverging(x[d] / m)}`)}></span>`);
    }
    return html`<div class="name">${name}</div>
      <div class="strip ${cls}" role="img" aria-label=${`${label}: ${Array.from(x, (v) => fmt(v)).join(', ')}`}>${cells}</div>
      <div class="range">±${fmt(m, 2)}</div>`;
  }

  render() {
    const t = this.trace;
    if (!t || !t.q || !t.k || !t.v) return nothing;
    const [B, H, T, D] = t.q.shape;
    const S = t.k.shape[2];
    const b = Math.min(this.b, B - 1);
    const h = Math.min(this.head, H - 1);
    const i = Math.min(this.i, T - 1);
    const j = Math.min(this.j, S - 1);
    const q = vec(t.q, b, h, i); // (D)
    const k = vec(t.k, b, h, j); // (D)
    const v = vec(t.v, b, h, j); // (D)
    const additive = this.score === 'additive';
    const prod = Float32Array.from(q, (x, d) => x * k[d]); // (D)
    const raw = prod.reduce((a, x) => a + x, 0);
    const scaled = this.score === 'scaled_dot' && this.scaleOn;
    const dot = scaled ? raw / Math.sqrt(D) : raw;
    const [, , , Sc] = t.scores.shape;
    const cell = t.scores.data[((b * H + h) * t.scores.shape[2] + i) * Sc + j];
    const masked = cell === Number.NEGATIVE_INFINITY;
    const selfAttn = t.site !== 'cross';
    const bias = selfAttn && (this.posEncoding === 'alibi' || this.posEncoding === 'relative');
    const rest = masked ? 0 : cell - dot;
    const qTok = showToken(this.queryTokens[i] ?? `${i}`);
    const kTok = showToken(this.keyTokens[j] ?? `${j}`);
    // q and k share one scale, so equal colours mean equal values; v and q⊙k have their own.
    const m = span(q, k);
    const mv = span(v);
    const mp = span(prod);
    const gap = t.qk_gap ? t.qk_gap.data[b * H + h] : null;
    const formula = scaled ? html`Σ<sub>d</sub> q·k / √${D}` : html`Σ<sub>d</sub> q·k`;
    return html`<div
      class="box"
      data-i=${i}
      data-j=${j}
      data-head=${h}
      data-raw=${raw}
      data-dot=${dot}
      data-score=${masked ? '-Infinity' : cell}
      data-bias=${bias ? rest : 0}
      data-qk-gap=${gap ?? ''}
      aria-live="polite"
    >
      <h3>
        ${msg(
          html`q·k of query ${i} <span class="mono tok q" lang=${ifDefined(tokenLang(qTok))}>“${qTok}”</span> and key ${j}
            <span class="mono tok k" lang=${ifDefined(tokenLang(kTok))}>“${kTok}”</span> · head ${h + 1}`,
        )}
      </h3>
      <div class="strips">
        ${this.strip(`q${sub(i)}`, msg(str`q of query ${i}`), q, m, 'q')} ${this.strip(`k${sub(j)}`, msg(str`k of key ${j}`), k, m, 'k')}
        ${additive ? nothing : this.strip('q⊙k', `q${sub(i)}[d]·k${sub(j)}[d]`, prod, mp, 'prod')} ${this.strip(`v${sub(j)}`, msg(str`v of key ${j}`), v, mv, 'v')}
      </div>
      <div class="legend">
        <span>−</span><span class="ramp" aria-hidden="true"></span><span>+</span>
        <span>${msg("blue negative, white 0, orange positive, up to the ± at each row's end (q and k share theirs)")}</span>
      </div>
      ${additive
        ? html`<div class="sum">
            ${msg('This head scores additively:')} <span class="mono">s = Σ<sub>d</sub> w<sub>h</sub>[d] · tanh(q${sub(i)}[d] + k${sub(j)}[d])</span>
            ${msg(html`with a trained vector w<sub>h</sub>, so the score is not a dot product of the strips above.`)}
            ${masked ? msg('The cell is masked (−∞).') : html`${msg('Its score:')} <span class="mono">${fmt(cell, 4)}</span>${msg('.')}`}
          </div>`
        : html`<div class="sum">
            Σ<sub>d</sub> q·k = <span class="mono raw">${fmt(raw, 4)}</span>${scaled
              ? html`, / √${D} = <span class="mono">${fmt(dot, 4)}</span>`
              : this.score === 'scaled_dot'
                ? msg(str` (scaling by 1/√${D} is switched off)`)
                : msg(" (this model's scores are never scaled)")}
            ${masked
              ? html`<br />${msg('The cell is masked: its score is −∞ whatever q·k is, so softmax gives it weight 0.')}`
              : bias
                ? html`<br />${msg('Score')} <span class="mono">${fmt(cell, 4)}</span> = ${formula} ${rest < 0 ? '−' : '+'}
                    <span class="mono">${fmt(Math.abs(rest), 4)}</span>${msg(', the')}
                    ${this.posEncoding === 'alibi'
                      ? html`${msg('ALiBi distance penalty')} −m<sub>h</sub>·|i − j| = −m<sub>h</sub>·${Math.abs(i - j)}`
                      : html`${msg('relative-position term')} q·rel_k[${clipNote(j - i, this.maxDistance)}]${scaled ? html` / √${D}` : ''}`}${msg('.')}`
                : html`<br />${msg('Score')} <span class="mono">${fmt(cell, 4)}</span> = ${formula}
                    <span class="ok">${Math.abs(rest) < 1e-4 * Math.max(1, Math.abs(cell)) ? msg('✓ they agree') : msg(str`(off by ${fmt(rest)})`)}</span>${msg('; no position bias here.')}`}
          </div>`}
      <div class="sym">
        ${gap === null
          ? msg('Cross-attention: q comes from the decoder and k from the encoder, so there is no q = k symmetry to look for.')
          : html`${msg(html`This head: max |q<sub>t</sub> − k<sub>t</sub>| over all ${T} tokens and ${D} dimensions =`)}
              <span class="mono gap">${fmt(gap, 4)}</span>${msg('.')}
              ${gap === 0
                ? msg(html`<span class="ok">q = k for every token</span> (W<sub>Q</sub> = W<sub>K</sub>), so q<sub>i</sub>·k<sub>j</sub> = q<sub>j</sub>·k<sub>i</sub>: the raw score matrix is symmetric.`)
                : msg(html`It is 0 exactly when every token's query equals its key (a model trained with W<sub>Q</sub> = W<sub>K</sub>); then q<sub>i</sub>·k<sub>j</sub> = q<sub>j</sub>·k<sub>i</sub> and the raw score matrix is symmetric. Here it is not.`)}`}
      </div>
    </div>`;
  }
}

const SUBS = '₀₁₂₃₄₅₆₇₈₉';

/** A position as subscript digits (q₁₂). */
function sub(n: number): string {
  return String(n)
    .split('')
    .map((c) => SUBS[Number(c)])
    .join('');
}

/** The row of rel_k a pair uses: the offset j − i clipped to ±K, saying when it was clipped. */
export function clipNote(r: number, k: number): string {
  const c = Math.max(-k, Math.min(k, r));
  return c === r ? `j − i = ${r}` : `clip(j − i = ${r}, ±${k}) = ${c}`;
}

customElements.define('tp-qk', TpQk);
