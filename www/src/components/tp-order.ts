// Order-blindness: a model with no position encoding, run as an encoder (no causal mask),
// sees its input as a bag of tokens. Reorder the input and every output row moves with its
// token, bit for bit; add a position encoding (or the causal mask) and the rows change.
// The engine runs both orders on the chosen shipped model and compares the rows.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller } from '../engine/client';
import type { PermutationResult } from '../engine/protocol';
import { panel, scrollLabel, scrollRegion, SeenController } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';

/** The models compared: the same grammar task, without and with positions. */
export const ORDER_MODELS: { file: string; label: string }[] = [
  {
    file: 'grammar-none.safetensors',
    get label() {
      return msg('no position encoding');
    },
  },
  {
    file: 'grammar-sinusoidal.safetensors',
    get label() {
      return msg('sinusoidal positions');
    },
  },
  { file: 'grammar-rope.safetensors', label: 'RoPE' },
  { file: 'grammar-alibi.safetensors', label: 'ALiBi' },
];

/** The word spans of a text: [start, end) of each run of letters. */
function words(text: string): [number, number][] {
  return [...text.matchAll(/[A-Za-z]+/g)].map((m) => [m.index ?? 0, (m.index ?? 0) + m[0].length]);
}

/** The character order that swaps words a and b: out[t] = the position moved to t. */
export function swapWords(text: string, a: number, b: number): number[] {
  const w = words(text);
  const ident = [...text].map((_, i) => i);
  if (a === b || !w[a] || !w[b]) return ident;
  const [x, y] = a < b ? [w[a], w[b]] : [w[b], w[a]];
  const range = (s: number, e: number) => ident.slice(s, e);
  return [...range(0, x[0]), ...range(y[0], y[1]), ...range(x[1], y[0]), ...range(x[0], x[1]), ...range(y[1], text.length)];
}

/** A seeded shuffle of 0..n (xorshift), so a test can reproduce it. */
export function shuffled(n: number, seed: number): number[] {
  const p = [...Array(n).keys()];
  let s = seed >>> 0 || 1;
  for (let i = n - 1; i > 0; i--) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    const j = (s >>> 0) % (i + 1);
    [p[i], p[j]] = [p[j], p[i]];
  }
  return p;
}

export class TpOrder extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    base: { attribute: false },
    text: { state: true },
    perm: { state: true },
    model: { state: true },
    causal: { state: true },
    result: { state: true },
    busy: { state: true },
    problem: { state: true },
  };

  engine: EngineCaller | null = null;
  /** Where the checkpoints are. */
  base: URL | null = null;
  text = 'the cat chases the dog.';
  perm: number[] = swapWords('the cat chases the dog.', 1, 4);
  model = ORDER_MODELS[0].file;
  causal = false;
  /** The engine's comparison (read by the browser tests). */
  result: PermutationResult | null = null;
  busy = false;
  problem = '';
  private asked = '';
  private shuffles = 0;

  static styles = [
    panel,
    css`
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
        margin: 6px 0;
      }
      input[type='text'] {
        border: 1px solid var(--tp-line);
        border-radius: 6px;
        padding: 4px 6px;
        min-width: 16em;
      }
      .texts {
        font-family: ui-monospace, Menlo, Consolas, monospace;
        font-size: var(--tp-text-md);
      }
      .verdict {
        font-weight: 600;
        margin: 6px 0;
      }
      .wrap {
        overflow-x: auto;
      }
      table {
        border-collapse: collapse;
        font-size: var(--tp-text-sm);
        font-variant-numeric: tabular-nums;
      }
      th,
      td {
        padding: 1px 4px;
        text-align: center;
        border: 1px solid var(--tp-line);
        min-width: 1.4em;
      }
      td.same {
        background: #d9f0d3;
        color: #111;
      }
      td.diff {
        background: #fde0c5;
        color: #111;
      }
    `,
  ];

  /** Whether the view has been on screen (it asks the engine only from then on). */
  private readonly sight = new SeenController(this);

  updated(): void {
    if (!this.sight.seen) return;
    if (!this.engine || !this.base) return;
    const key = `${this.model}/${this.text}/${this.perm.join(',')}/${this.causal}`;
    if (key === this.asked) return;
    this.asked = key;
    void this.run();
  }

  private async run() {
    this.busy = true;
    try {
      this.result = await this.engine!.call('permutation', {
        url: new URL(this.model, this.base!).href,
        text: this.text,
        perm: this.perm,
        causal: this.causal,
      });
      this.problem = '';
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
      this.result = null;
    } finally {
      this.busy = false;
    }
  }

  private setText(text: string) {
    this.text = text;
    const w = words(text);
    this.perm = swapWords(text, Math.min(1, w.length - 1), w.length - 1);
  }

  render() {
    const r = this.result;
    const same = r ? r.row_identical.filter((x) => x).length : 0;
    const n = r?.perm.length ?? 0;
    const w = words(this.text);
    const permutedText = this.perm.map((p) => this.text[p] ?? '').join('');
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Order-blindness')} <span class="sub">${msg('the same tokens in another order')}</span></h2>
      <p>
        ${msg('Attention mixes a token with the others through dot products and a weighted sum; neither cares where a token sits. Without a position encoding and without the causal mask, reordering the input only reorders the output: the row of each character moves with it, bit for bit, and "the cat chases the dog" reads exactly like "the dog chases the cat". A position encoding (or the causal mask, which tells each position how many came before it) breaks the tie.')}
      </p>
      <div class="controls">
        <label>${msg('model')} <select aria-label=${msg('model to compare orders with')} @change=${(e: Event) => (this.model = (e.target as HTMLSelectElement).value)}>
          ${ORDER_MODELS.map((m) => html`<option value=${m.file} ?selected=${m.file === this.model}>${m.label}</option>`)}
        </select></label>
        <label><input type="checkbox" .checked=${this.causal} aria-label=${msg('order comparison: each position sees only earlier ones')} @change=${(e: Event) => (this.causal = (e.target as HTMLInputElement).checked)} /> ${msg('each position sees only earlier ones (causal)')}</label>
        <label>${msg('text')} <input type="text" .value=${this.text} aria-label=${msg('text to reorder')} @change=${(e: Event) => this.setText((e.target as HTMLInputElement).value)} /></label>
      </div>
      <div class="controls">
        ${w.length > 1
          ? html`<button @click=${() => (this.perm = swapWords(this.text, Math.min(1, w.length - 1), w.length - 1))}>
              ${msg(str`swap “${this.text.slice(...w[Math.min(1, w.length - 1)])}” and “${this.text.slice(...w[w.length - 1])}”`)}
            </button>`
          : nothing}
        <button @click=${() => (this.perm = shuffled(this.text.length, ++this.shuffles * 7919))}>${msg('shuffle the characters')}</button>
        <button @click=${() => (this.perm = [...this.text].map((_, i) => i))}>${msg('original order')}</button>
        <span class="muted small" role="status">${this.busy ? msg('running…') : ''}</span>
      </div>
      <div class="texts">
        <div>${msg('input:')} <span data-model-text>“${this.text}”</span></div>
        <div>${msg('reordered:')} <span data-model-text>“${permutedText}”</span></div>
      </div>
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}
      ${r
        ? html`<p class="verdict" data-identical=${same} data-rows=${n}>
              ${same === n
                ? msg(str`All ${n} output rows are the original rows, moved with their characters, identical to the last bit.`)
                : msg(str`${n - same} of ${n} rows differ from the row their character had before (largest logit difference ${fmt(Math.max(...r.row_diff))}).`)}
            </p>
            <div class="wrap" ${scrollRegion(scrollLabel())}>
              <table aria-label=${msg('each reordered position, where its character came from, and whether its output row is unchanged')}>
                <tr><th scope="row">${msg('position')}</th>${r.perm.map((_, t) => html`<td>${t}</td>`)}</tr>
                <tr><th scope="row">${msg('character')}</th>${r.permuted.map((c) => html`<td>${showToken(c)}</td>`)}</tr>
                <tr><th scope="row">${msg('came from')}</th>${r.perm.map((p) => html`<td>${p}</td>`)}</tr>
                <tr>
                  <th scope="row">max |Δ logit|</th>
                  ${Array.from(r.row_diff).map(
                    (d, t) => html`<td class=${r.row_identical[t] ? 'same' : 'diff'} data-t=${t} data-diff=${d} data-identical=${r.row_identical[t]}>
                      ${r.row_identical[t] ? '0' : fmt(d, 2)}
                    </td>`,
                  )}
                </tr>
              </table>
            </div>
            <p class="small muted">${msg('Green: the row equals the original row of the same character bit for bit. Orange: it changed.')}</p>`
        : nothing}
    </section>`;
  }
}

customElements.define('tp-order', TpOrder);
