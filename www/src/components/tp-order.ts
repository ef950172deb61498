// Order-blindness: a model with no position encoding, run as an encoder (no causal mask),
// sees its input as a bag of tokens. Reorder the input and every output row moves with its
// token, bit for bit; add a position encoding (or the causal mask) and the rows change.
// The engine runs both orders on the chosen shipped model (English or Chinese grammar) and
// compares the rows, position by position, and the next character each predicts. A
// character the model has no token for is named before anything runs.

import { shippedOnly } from '../i18n/shipped-only';
import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { getLocale, langOf, LocalizedElement } from '../i18n/locale';
import { posEncodingName } from '../i18n/terms';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller } from '../engine/client';
import type { PermutationResult } from '../engine/protocol';
import type { Dense } from '../engine/generated';
import { panel, scrollLabel, scrollRegion, SeenController } from '../ui/shared';
import { fmt, showToken } from '../ui/palette';

/** A model the view compares orders with: a grammar model in English or in Chinese. */
export interface OrderModel {
  file: string;
  /** The language of its sentences. */
  lang: 'en' | 'zh';
  readonly label: string;
}

/** The models compared: the same grammar task, without and with positions, in English and in Chinese. */
export const ORDER_MODELS: OrderModel[] = [
  { file: 'grammar-none.safetensors', lang: 'en', get label() { return msg('no position encoding'); } },
  { file: 'grammar-sinusoidal.safetensors', lang: 'en', get label() { return msg('sinusoidal positions'); } },
  { file: 'grammar-rope.safetensors', lang: 'en', get label() { return posEncodingName('rope'); } },
  { file: 'grammar-alibi.safetensors', lang: 'en', get label() { return posEncodingName('alibi'); } },
  { file: 'zh-grammar-none.safetensors', lang: 'zh', get label() { return msg('no position encoding', { id: 'order.zh-none' }); } },
  { file: 'zh-grammar-sinusoidal.safetensors', lang: 'zh', get label() { return msg('sinusoidal positions', { id: 'order.zh-sinusoidal' }); } },
  { file: 'zh-grammar-learned.safetensors', lang: 'zh', get label() { return posEncodingName('learned'); } },
  { file: 'zh-grammar-alibi.safetensors', lang: 'zh', get label() { return posEncodingName('alibi'); } },
];

/** The sentence each language's models start with. */
export const ORDER_TEXTS: Record<OrderModel['lang'], string> = { en: 'the cat chases the dog.', zh: '猫追狗' };

const orderModel = (file: string) => ORDER_MODELS.find((m) => m.file === file);

/**
 * The units a swap exchanges, as [start, end) in characters (code points): the runs of
 * Latin letters (English words), else each Han character (Chinese is written without
 * spaces, and these models read one character per token).
 */
function units(text: string): [number, number][] {
  const chars = [...text];
  const out: [number, number][] = [];
  for (let i = 0; i < chars.length; ) {
    if (/[A-Za-z]/.test(chars[i])) {
      let j = i;
      while (j < chars.length && /[A-Za-z]/.test(chars[j])) j++;
      out.push([i, j]);
      i = j;
    } else i++;
  }
  if (out.length) return out;
  return chars.flatMap((c, i) => (/\p{Script=Han}/u.test(c) ? [[i, i + 1] as [number, number]] : []));
}

/** Which two units the swap button exchanges: the second and the last word ("cat", "dog"), the first and the last Han character (猫, 狗). */
function swapPair(text: string): [number, number] {
  const w = units(text);
  const latin = /[A-Za-z]/.test(text);
  return latin ? [Math.min(1, w.length - 1), w.length - 1] : [0, w.length - 1];
}

/** The character order that swaps units a and b: out[t] = the position moved to t. */
export function swapWords(text: string, a: number, b: number): number[] {
  const w = units(text);
  const n = [...text].length;
  const ident = [...Array(n).keys()];
  if (a === b || !w[a] || !w[b]) return ident;
  const [x, y] = a < b ? [w[a], w[b]] : [w[b], w[a]];
  const range = (s: number, e: number) => ident.slice(s, e);
  return [...range(0, x[0]), ...range(y[0], y[1]), ...range(x[1], y[0]), ...range(x[0], x[1]), ...range(y[1], n)];
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

/** The index of the largest value of row t of a (T, V) matrix. */
function argmaxRow(d: Dense, t: number): number {
  const v = d.shape[d.shape.length - 1];
  let best = 0;
  for (let k = 1; k < v; k++) if (d.data[t * v + k] > d.data[t * v + best]) best = k;
  return best;
}

export class TpOrder extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    base: { attribute: false },
    pageModel: { attribute: false },
    loaded: { attribute: false },
    text: { state: true },
    perm: { state: true },
    model: { state: true },
    causal: { state: true },
    result: { state: true },
    busy: { state: true },
    problem: { state: true },
    unknown: { state: true },
  };

  engine: EngineCaller | null = null;
  /** Where the checkpoints are. */
  base: URL | null = null;
  /** The model the page runs: the view starts on the grammar models of its language. */
  pageModel = '';
  /** The page's model when it is not a shipped one (a loaded folder, a lab run): this experiment does not run on it. */
  loaded = '';
  text = ORDER_TEXTS.en;
  perm: number[] = swapWords(ORDER_TEXTS.en, ...swapPair(ORDER_TEXTS.en));
  model = ORDER_MODELS[0].file;
  causal = false;
  /** The engine's comparison (read by the browser tests). */
  result: PermutationResult | null = null;
  busy = false;
  problem = '';
  /** The typed characters the chosen model has no token for (it is not run while there are any). */
  unknown: string[] = [];
  /** The vocabulary of the model the result is of (to name its predictions). */
  private vocab: string[] = [];
  private asked = '';
  private shuffles = 0;
  private started = false;

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
      td.tok {
        font-family: ui-monospace, Menlo, Consolas, monospace;
      }
    `,
  ];

  /** Whether the view has been on screen (it asks the engine only from then on). */
  private readonly sight = new SeenController(this);

  willUpdate(): void {
    if (this.started) return;
    this.started = true;
    // The grammar models of the page's model's language; else of the page's language.
    const lang = orderModel(this.pageModel)?.lang ?? (this.pageModel.startsWith('zh-') || langOf(this) === 'zh-Hans' ? 'zh' : 'en');
    if (lang === 'zh') this.pickModel('zh-grammar-none.safetensors');
  }

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
    const asked = this.asked;
    try {
      const url = new URL(this.model, this.base!).href;
      // Before running: a character the model has no token for would be read as <unk>,
      // the same token for every such character, and rows would look alike for no reason.
      const vocab = await vocabularyOf(url);
      if (asked !== this.asked) return;
      const unknown = vocab.kind === 'char' ? [...new Set([...this.text].filter((c) => !vocab.spells.has(c)))] : [];
      this.unknown = unknown;
      if (unknown.length) {
        this.result = null;
        this.problem = '';
        return;
      }
      const result = await this.engine!.call('permutation', { url, text: this.text, perm: this.perm, causal: this.causal });
      if (asked !== this.asked) return;
      this.vocab = vocab.tokens;
      this.result = result;
      this.problem = '';
    } catch (e) {
      if (asked !== this.asked) return;
      this.problem = e instanceof Error ? e.message : String(e);
      this.result = null;
    } finally {
      if (asked === this.asked) this.busy = false;
    }
  }

  /** Another model; a sentence of the other language's models turns into this language's. */
  private pickModel(file: string) {
    const m = orderModel(file);
    this.model = file;
    if (!m) return;
    const other = m.lang === 'zh' ? ORDER_TEXTS.en : ORDER_TEXTS.zh;
    if (this.text === other) this.setText(ORDER_TEXTS[m.lang]);
  }

  private setText(text: string) {
    this.text = text;
    this.perm = swapWords(text, ...swapPair(text));
  }

  render() {
    const r = this.result;
    const same = r ? r.row_identical.filter((x) => x).length : 0;
    const n = r?.perm.length ?? 0;
    const w = units(this.text);
    const chars = [...this.text];
    const permutedText = this.perm.map((p) => chars[p] ?? '').join('');
    const [a, b] = swapPair(this.text);
    const unit = (k: number) => chars.slice(...w[k]).join('');
    // Per position, the most likely next character after the reordered input, and after the original at the row it came from.
    const next = r ? r.perm.map((p, t) => [argmaxRow(r.logits, p), argmaxRow(r.permuted_logits, t)]) : [];
    const nextDiffer = next.filter(([x, y]) => x !== y).length;
    const tok = (id: number) => showToken(this.vocab[id] ?? '');
    // Sentences side by side: a space between English ones, none between Chinese ones.
    const gap = getLocale() === 'zh-Hans' ? '' : ' ';
    const groups: [string, OrderModel['lang']][] = [
      [msg('English sentences', { id: 'order.group-en' }), 'en'],
      [msg('Chinese sentences', { id: 'order.group-zh' }), 'zh'],
    ];
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Order-blindness')} <span class="sub">${msg('the same tokens in another order')}</span></h2>
      ${this.loaded ? html`<p class="small muted" data-shipped-only>${shippedOnly(this.loaded)}</p>` : nothing}
      <p>
        ${msg('Attention mixes a token with the others through dot products and a weighted sum; neither cares where a token sits. Without a position encoding and without the causal mask, reordering the input only reorders the output: the row of each character moves with it, bit for bit, and "the cat chases the dog" reads exactly like "the dog chases the cat". A position encoding (or the causal mask, which tells each position how many came before it) breaks the tie.')}
      </p>
      <div class="controls">
        <label>${msg('model')} <select aria-label=${msg('model to compare orders with')} @change=${(e: Event) => this.pickModel((e.target as HTMLSelectElement).value)}>
          ${groups.map(
            ([label, lang]) => html`<optgroup label=${label}>
              ${ORDER_MODELS.filter((m) => m.lang === lang).map((m) => html`<option value=${m.file} ?selected=${m.file === this.model}>${m.label}</option>`)}
            </optgroup>`,
          )}
        </select></label>
        <label><input type="checkbox" .checked=${this.causal} aria-label=${msg('order comparison: each position sees only earlier ones')} @change=${(e: Event) => (this.causal = (e.target as HTMLInputElement).checked)} /> ${msg('each position sees only earlier ones (causal)')}</label>
        <label>${msg('text')} <input type="text" .value=${this.text} aria-label=${msg('text to reorder')} @change=${(e: Event) => this.setText((e.target as HTMLInputElement).value)} /></label>
      </div>
      <div class="controls">
        ${w.length > 1
          ? html`<button @click=${() => (this.perm = swapWords(this.text, a, b))}>
              ${msg(str`swap “${unit(a)}” and “${unit(b)}”`)}
            </button>`
          : nothing}
        <button @click=${() => (this.perm = shuffled(chars.length, ++this.shuffles * 7919))}>${msg('shuffle the characters')}</button>
        <button @click=${() => (this.perm = chars.map((_, i) => i))}>${msg('original order')}</button>
        <span class="muted small" role="status">${this.busy ? msg('running…') : ''}</span>
      </div>
      <div class="texts">
        <div>${msg('input:')} <span data-model-text>“${this.text}”</span></div>
        <div>${msg('reordered:')} <span data-model-text>“${permutedText}”</span></div>
      </div>
      ${this.unknown.length
        ? html`<p role="alert" data-unknown=${this.unknown.join('')}>
            ${msg(str`This model has no token for ${this.unknown.map((c) => `“${c}”`).join(msg(', '))}: it would read every such character as the same unknown token, so their rows could not tell them apart. It was not run; type characters of its sentences instead.`, { id: 'order.unknown' })}
          </p>`
        : nothing}
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}
      ${r
        ? html`<p class="verdict" data-identical=${same} data-rows=${n} data-next-differ=${nextDiffer}>${[
                same === n
                  ? msg(str`All ${n} output rows are the original rows, moved with their characters, identical to the last bit.`)
                  : msg(str`${n - same} of ${n} rows differ from the row their character had before (largest logit difference ${fmt(Math.max(...r.row_diff))}).`),
                nextDiffer
                  ? msg(str`The most likely next character changes at ${nextDiffer} of ${n} positions.`, { id: 'order.next-differ' })
                  : msg('The most likely next character is the same at every position.', { id: 'order.next-same' }),
              ].join(gap)}</p>
            <div class="wrap" ${scrollRegion(scrollLabel())}>
              <table aria-label=${msg('each reordered position, where its character came from, and whether its output row is unchanged')}>
                <tr><th scope="row">${msg('position')}</th>${r.perm.map((_, t) => html`<td>${t}</td>`)}</tr>
                <tr><th scope="row">${msg('character')}</th>${r.permuted.map((c) => html`<td class="tok" data-model-text>${showToken(c)}</td>`)}</tr>
                <tr><th scope="row">${msg('came from')}</th>${r.perm.map((p) => html`<td>${p}</td>`)}</tr>
                <tr>
                  <th scope="row">${msg('next, in the original order', { id: 'order.next-original' })}</th>
                  ${next.map(([x, y], t) => html`<td class="tok ${x === y ? 'same' : 'diff'}" data-model-text data-t=${t} data-next=${x}>${tok(x)}</td>`)}
                </tr>
                <tr>
                  <th scope="row">${msg('next, reordered', { id: 'order.next-reordered' })}</th>
                  ${next.map(([x, y], t) => html`<td class="tok ${x === y ? 'same' : 'diff'}" data-model-text data-t=${t} data-next=${y}>${tok(y)}</td>`)}
                </tr>
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
            <p class="small muted">${[
              msg('Green: the row equals the original row of the same character bit for bit. Orange: it changed.'),
              msg('The two “next” rows name the most likely next character after each position: after the original order, at the row the character came from, and after the reordered one.', { id: 'order.next-legend' }),
            ].join(gap)}</p>`
        : nothing}
    </section>`;
  }
}

/** A checkpoint's vocabulary, read from its safetensors header (`__metadata__.tokenizer`), without running it. */
interface Vocabulary {
  kind: string;
  tokens: string[];
  /** The characters it has a (non-special) token for. */
  spells: Set<string>;
}

const vocabularies = new Map<string, Promise<Vocabulary>>();

function vocabularyOf(url: string): Promise<Vocabulary> {
  let v = vocabularies.get(url);
  if (!v) {
    v = (async () => {
      const resp = await fetch(url);
      if (!resp.ok) throw new Error(msg(str`cannot load the model (HTTP ${resp.status})`, { id: 'order.http' }));
      const bytes = new Uint8Array(await resp.arrayBuffer());
      const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
      const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as { __metadata__?: { tokenizer?: string } };
      const t = JSON.parse(header.__metadata__?.tokenizer ?? '{}') as { kind?: string; tokens?: string[]; pad?: number; bos?: number; eos?: number; unk?: number };
      const tokens = t.tokens ?? [];
      const special = new Set([t.pad, t.bos, t.eos, t.unk]);
      return { kind: t.kind ?? '', tokens, spells: new Set(tokens.filter((_, i) => !special.has(i))) };
    })();
    v.catch(() => vocabularies.delete(url));
    vocabularies.set(url, v);
  }
  return v;
}

customElements.define('tp-order', TpOrder);
