// Stage 4 — output: the next-token distribution over the whole vocabulary, and the
// knobs that turn it into a choice (greedy, temperature, top-k, top-p, beam width).
// For a classifier, the class probabilities; for a tagger, the tag at every position.

import { html, css, nothing } from 'lit';
import type { ModelInfo, Sampling } from '../engine/protocol';
import { lockedNote, whyLocked } from '../ui/locked';
import { emit, panel, scrollLabel, scrollRegion, styles } from '../ui/shared';
import { ifDefined } from 'lit/directives/if-defined.js';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { fmt, showToken, tokenLang, viridis } from '../ui/palette';

/** A vocabulary larger than this is not listed in full: its top tokens, a search, and the rest's sum. */
const BIG_VOCAB = 1000;
const TOP = 12;
const TOP_MORE = 100;
const SEARCH_SHOWN = 20;

export class TpOutput extends LocalizedElement {
  static properties = {
    info: { attribute: false },
    modelProbs: { attribute: false },
    sampleProbs: { attribute: false },
    classProbs: { attribute: false },
    predicted: { attribute: false },
    classNames: { attribute: false },
    inputTokens: { attribute: false },
    sampling: { attribute: false },
    previousProbs: { attribute: false },
    previousClassProbs: { attribute: false },
    previousSame: { type: Boolean },
    sides: { attribute: false },
    lock: { attribute: false },
    showAll: { state: true },
    query: { state: true },
  };

  info: ModelInfo | null = null;
  modelProbs: Float32Array | null = null;
  sampleProbs: Float32Array | null = null;
  classProbs: Float32Array | null = null;
  predicted: number[] = [];
  /** Names of the classes, when the model list gives them. */
  classNames: string[] = [];
  inputTokens: string[] = [];
  sampling: Sampling = { strategy: 'greedy', temperature: 1, top_k: 0, top_p: 1, beam_width: 3, seed: 0 };
  showAll = false;
  /** What the token search asks for (a large vocabulary: its tokens are found, not listed). */
  query = '';
  /** The distribution's ids, most probable first, for the distribution they were sorted from. */
  private sorted: { p: Float32Array; order: number[] } | null = null;
  /** Classroom mode: the settings the link locked (their sampling inputs are disabled, saying why). */
  lock: readonly string[] = [];
  /** The model's distribution of the forward pass before the last switch (null: none). */
  previousProbs: Float32Array | null = null;
  /** A classifier's class probabilities before the last switch. */
  previousClassProbs: Float32Array | null = null;
  /** The previous pass read the same tokens (so its numbers stand beside these). */
  previousSame = false;
  /** The settings before the last switch and now, in words (null: no previous pass). */
  sides: { before: string; after: string } | null = null;

  /** The previous numbers to draw beside `now`, or null (none, or another input or vocabulary). */
  private beside(prev: Float32Array | null, now: Float32Array): Float32Array | null {
    return this.sides && prev && this.previousSame && prev.length === now.length ? prev : null;
  }

  /** The labels of the two sides, or why the previous numbers are not beside these. */
  private sidesLine(shown: boolean) {
    const s = this.sides;
    if (!s) return nothing;
    return shown
      ? html`<p class="small muted" data-sides>${msg('before')}: <b data-side="before">${s.before}</b> · ${msg('now')}: <b data-side="after">${s.after}</b></p>`
      : html`<p class="small muted" data-sides="elsewhere">${msg(str`The numbers before the change (${s.before}) were read with other tokens; they stand beside these when both read the same input.`, { id: 'output.before-elsewhere' })}</p>`;
  }

  static styles = [
    panel,
    css`
      .controls {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(min(150px, 100%), 1fr));
        gap: 8px 14px;
        font-size: var(--tp-text-md);
        margin-bottom: 10px;
      }
      .controls label {
        display: flex;
        flex-direction: column;
        gap: 2px;
      }
      .strategy {
        display: flex;
        gap: var(--tp-space-1);
        flex-wrap: wrap;
      }
      .find {
        display: flex;
        gap: var(--tp-space-2);
        align-items: center;
        font-size: var(--tp-text-md);
        margin: var(--tp-space-2) 0;
      }
      .bars.with-before {
        grid-template-columns: minmax(4.5em, max-content) 1fr 5.2em 5.2em 5.2em;
      }
      .num.before {
        color: var(--tp-muted);
      }
      .bars {
        display: grid;
        grid-template-columns: minmax(4.5em, max-content) 1fr 5.2em 5.2em;
        gap: 2px 6px;
        align-items: center;
        font-size: var(--tp-text-sm);
        max-height: 360px;
        overflow-y: auto;
      }
      /* Rows for screen readers; the grid lays out their cells. */
      .bars > [role='row'] {
        display: contents;
      }
      .tok {
        font-family: var(--tp-mono);
        text-align: right;
        white-space: pre;
        overflow: hidden;
      }
      .track {
        position: relative;
        height: 12px;
        background: rgba(128, 128, 128, 0.12);
        border-radius: 3px;
      }
      .fill {
        position: absolute;
        left: 0;
        top: 0;
        bottom: 0;
        border-radius: 3px;
      }
      .samp {
        position: absolute;
        left: 0;
        top: 8px;
        bottom: 0;
        background: var(--tp-focus);
        border-radius: 2px;
      }
      .num {
        font-family: var(--tp-mono);
        text-align: right;
      }
      .head {
        color: var(--tp-muted);
        font-size: var(--tp-text-xs);
      }
      .tags {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-1);
      }
      .tag {
        display: flex;
        flex-direction: column;
        align-items: center;
        border: 1px solid var(--tp-line);
        border-radius: 5px;
        padding: 2px 5px;
        font-family: var(--tp-mono);
        font-size: var(--tp-text-xs);
      }
      .tag b {
        color: var(--tp-accent);
      }
    `,
  ];

  private set(patch: Partial<Sampling>) {
    emit(this, 'tp-sampling', patch);
  }

  private controls() {
    const s = this.sampling;
    const num = (e: Event) => Number((e.target as HTMLInputElement).value);
    const why = (k: string) => whyLocked(this.lock, k);
    const strat = why('strategy');
    return html`<div class="controls">
      <div>
        <div id="strat-l">${msg('Choice')}</div>
        <div class="strategy" role="group" aria-labelledby="strat-l">
          ${(['greedy', 'sample', 'beam'] as const).map(
            (k) => html`<button aria-pressed=${s.strategy === k} data-setting="strategy" ?disabled=${!!strat} @click=${() => this.set({ strategy: k })}>
              ${k === 'greedy' ? msg('greedy') : k === 'sample' ? msg('sample') : msg('beam search')}
            </button>`,
          )}
        </div>
        ${lockedNote('strategy', strat)}
      </div>
      <label
        >${msg('temperature')} ${fmt(s.temperature, 2)}
        <input type="range" min="0.05" max="3" step="0.05" .value=${String(s.temperature)} data-setting="temp" ?disabled=${s.strategy !== 'sample' || !!why('temp')} @change=${(e: Event) => this.set({ temperature: num(e) })}
      />${lockedNote('temp', why('temp'))}</label>
      <label
        >${msg('top-k (0 = off)')}
        <input type="number" min="0" max=${this.info?.vocab.length ?? 1000} .value=${String(s.top_k)} data-setting="topk" ?disabled=${s.strategy !== 'sample' || !!why('topk')} @change=${(e: Event) => this.set({ top_k: Math.max(0, Math.round(num(e)) || 0) })}
      />${lockedNote('topk', why('topk'))}</label>
      <label
        >top-p ${fmt(s.top_p, 2)}
        <input type="range" min="0.05" max="1" step="0.05" .value=${String(s.top_p)} data-setting="topp" ?disabled=${s.strategy !== 'sample' || !!why('topp')} @change=${(e: Event) => this.set({ top_p: num(e) })}
      />${lockedNote('topp', why('topp'))}</label>
      <label
        >${msg('beam width')}
        <input type="number" min="1" max="8" .value=${String(s.beam_width)} data-setting="beam" ?disabled=${s.strategy !== 'beam' || !!why('beam')} @change=${(e: Event) => this.set({ beam_width: Math.min(8, Math.max(1, Math.round(num(e)) || 1)) })}
      />${lockedNote('beam', why('beam'))}</label>
    </div>`;
  }

  private distribution() {
    const p = this.modelProbs;
    const info = this.info;
    if (!p || !info) return nothing;
    const q = this.sampleProbs;
    if (this.sorted?.p !== p) this.sorted = { p, order: Array.from(p.keys()).sort((a, b) => p[b] - p[a] || a - b) };
    const order = this.sorted.order;
    // A vocabulary too large to list (GPT-2's 50,257 tokens): the top tokens, a search, and the rest as one sum.
    const big = p.length > BIG_VOCAB;
    const shown = big ? order.slice(0, this.showAll ? TOP_MORE : TOP) : this.showAll ? order : order.slice(0, TOP);
    const max = p[order[0]] || 1;
    // Summed in double precision over every token of the vocabulary.
    let total = 0;
    for (let i = 0; i < p.length; i++) total += p[i];
    let top = 0;
    for (const id of shown) top += p[id];

    const prev = this.beside(this.previousProbs, p);
    return html`<p class="small muted">
        ${this.sampling.strategy === 'sample'
          ? msg(str`Model probability of every one of the ${p.length} tokens (sum ${fmt(total, 4)}); the pink mark is what the sampler draws from after temperature, top-k and top-p.`)
          : msg(str`Model probability of every one of the ${p.length} tokens (sum ${fmt(total, 4)}); the pink mark is what the chooser keeps.`)}
      </p>
      ${this.sidesLine(prev !== null)}
      <div class="bars ${prev ? 'with-before' : ''}" ${scrollRegion(scrollLabel())} role="table" aria-label=${msg('next-token distribution')}>
        <div role="row">
          <div class="head" role="columnheader">${msg('token')}</div>
          <div class="head" role="columnheader">${msg('probability')}</div>
          <div class="head num" role="columnheader">${msg('model')}</div>
          <div class="head num" role="columnheader">${msg('drawn')}</div>
          ${prev ? html`<div class="head num" role="columnheader">${msg('before')}</div>` : nothing}
        </div>
        ${shown.map(
          (id) => html`<div role="row"><div class="tok" role="cell">${showToken(info.vocab[id] ?? `${id}`)}</div>
            <div class="track" role="cell" aria-label=${`${info.vocab[id]}: ${fmt(p[id])}`}>
              <div class="fill" style=${styles(`width:${(100 * p[id]) / max}%;background:${viridis(0.25 + 0.6 * (p[id] / max))}`)}></div>
              ${q ? html`<div class="samp" style=${styles(`width:${100 * Math.min(1, q[id] / max)}%`)}></div>` : nothing}
            </div>
            <div class="num" role="cell" data-token=${id} data-prob=${p[id]}>${fmt(p[id])}</div>
            <div class="num" role="cell">${q ? fmt(q[id]) : '—'}</div>${prev
              ? html`<div class="num before" role="cell" data-before-prob=${prev[id]}>${fmt(prev[id])}</div>`
              : nothing}</div>`,
        )}
      </div>
      ${big
        ? html`<p class="small muted" data-rest=${total - top} data-sum=${total}>
              ${msg(str`The other ${p.length - shown.length} tokens together: ${fmt(total - top, 6)}; all ${p.length}: ${fmt(total, 6)}.`, { id: 'output.rest' })}
            </p>
            <button @click=${() => (this.showAll = !this.showAll)} aria-expanded=${this.showAll}>
              ${this.showAll ? msg(str`Show the top ${TOP}`, { id: 'output.top-n' }) : msg(str`Show the top ${TOP_MORE}`, { id: 'output.top-more' })}
            </button>
            ${this.search(p)}`
        : html`<button @click=${() => (this.showAll = !this.showAll)} aria-expanded=${this.showAll}>
            ${this.showAll ? msg('Show the top 12') : msg(str`Show all ${p.length} tokens`)}
          </button>`}`;
  }

  /** A large vocabulary's token search: the matching tokens (by their text, or an id), most probable first, with their rank. */
  private search(p: Float32Array) {
    const info = this.info!;
    const q = this.query.trim();
    const hits: number[] = [];
    const rank = new Map<number, number>();
    let count = 0;
    if (q) {
      const id = /^#?\d+$/.test(q) ? Number(q.replace('#', '')) : -1;
      const low = q.toLowerCase();
      this.sorted!.order.forEach((i, r) => {
        const t = info.vocab[i] ?? '';
        if (i === id || t.toLowerCase().includes(low)) {
          count++;
          if (hits.length < SEARCH_SHOWN) {
            hits.push(i);
            rank.set(i, r + 1);
          }
        }
      });
    }
    return html`<label class="find"
        >${msg('Find a token', { id: 'output.find' })}
        <input type="search" .value=${this.query} @input=${(e: Event) => (this.query = (e.target as HTMLInputElement).value)} /></label>
      ${q
        ? html`<p class="small muted" data-found=${count}>${msg(str`${count} tokens match; the ${hits.length} most probable:`, { id: 'output.found' })}</p>
            <div class="bars found" role="table" aria-label=${msg('tokens found', { id: 'output.found-table' })}>
              ${hits.map(
                (i) => html`<div role="row">
                  <div class="tok" role="cell" data-model-text>${showToken(info.vocab[i] ?? `${i}`)}</div>
                  <div class="num" role="cell">#${rank.get(i)}</div>
                  <div class="num" role="cell" data-token=${i} data-prob=${p[i]}>${fmt(p[i])}</div>
                  <div class="num" role="cell">${i}</div>
                </div>`,
              )}
            </div>`
        : nothing}`;
  }

  private classes() {
    const p = this.classProbs;
    if (!p) return nothing;
    const prev = this.beside(this.previousClassProbs, p);
    return html`${this.sidesLine(prev !== null)}<div class="bars" ${scrollRegion(scrollLabel())} role="table" aria-label=${msg('class probabilities')}>
      ${Array.from(p, (x, c) => html`<div role="row"><div class="tok" role="cell" ?data-model-text=${this.classNames[c] !== undefined} lang=${ifDefined(tokenLang(this.classNames[c] ?? ''))}>${this.classNames[c] ?? msg(str`class ${c}`)}</div>
          <div class="track" role="cell"><div class="fill" style=${styles(`width:${100 * x}%;background:${viridis(0.3 + 0.6 * x)}`)}></div></div>
          <div class="num" role="cell" data-class=${c} data-prob=${x}>${fmt(x)}</div>${prev
            ? html`<div class="num before" role="cell" data-before-prob=${prev[c]} title=${msg('before')}>${fmt(prev[c])}</div>`
            : html`<div></div>`}</div>`)}
    </div>`;
  }

  private tags() {
    const info = this.info;
    if (!info || !this.predicted.length) return nothing;
    return html`<p class="small muted">${msg('The most probable output token at each position:')}</p>
      <div class="tags">
        ${this.predicted.map(
          (id, i) => html`<span class="tag"><span>${showToken(this.inputTokens[i] ?? '')}</span><b>${showToken(info.vocab[id] ?? `${id}`)}</b></span>`,
        )}
      </div>`;
  }

  render() {
    const info = this.info;
    const classifier = info ? info.num_classes > 0 : false;
    const tagger = info?.arch === 'encoder_only' && !classifier;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Output')} <span class="sub">${classifier ? msg('class probabilities') : tagger ? msg('per-position output') : msg('next-token distribution')}</span></h2>
      ${classifier ? this.classes() : tagger ? this.tags() : html`${this.controls()}${this.distribution()}`}
    </section>`;
  }
}

customElements.define('tp-output', TpOutput);
