// Stage 5 — generation: play / pause / step / speed, tokens streaming in, the KV cache
// growing one column per token (switch it off and every step recomputes the whole prefix,
// drawn as such), time to first token and time per token, FLOPs so far, and the live
// beams of beam search.

import { html, css, nothing } from 'lit';
import type { GenerateStep, Hypothesis, ModelInfo } from '../engine/protocol';
import { lockedNote, whyLocked } from '../ui/locked';
import { emit, panel, scrollLabel, scrollRegion, styles } from '../ui/shared';
import type { GenStats } from '../state/generation';
import type { GenBefore } from '../state/store-data';
import { ifDefined } from 'lit/directives/if-defined.js';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import { fmt, SERIES, tokenLang, viridisRgb } from '../ui/palette';
import { int } from '../ui/format';
import { groupBytePieces } from '../ui/byte-level';
import type { SampleDraw } from '../engine/protocol';
import './tp-draw';


export class TpGeneration extends LocalizedElement {
  static properties = {
    info: { attribute: false },
    prompt: { attribute: false },
    generated: { attribute: false },
    playing: { type: Boolean },
    done: { type: Boolean },
    speed: { type: Number },
    stats: { attribute: false },
    step: { attribute: false },
    strategy: { type: String },
    note: { type: String },
    max: { type: Number },
    label: { type: String },
    cache: { type: Boolean },
    previousRun: { attribute: false },
    sides: { attribute: false },
    width: { state: true },
    draws: { attribute: false },
    lock: { attribute: false },
  };

  /** Classroom mode: the settings the link locked (their inputs are disabled, saying why). */
  lock: readonly string[] = [];

  /** The stream's width in CSS pixels, as last measured (the lines it reserves follow it). */
  width = 0;
  private resize = new ResizeObserver((e) => {
    const w = e[0]?.contentRect.width ?? 0;
    if (Math.abs(w - this.width) > 1) this.width = w;
  });

  connectedCallback(): void {
    super.connectedCallback();
    this.resize.observe(this);
  }

  disconnectedCallback(): void {
    this.resize.disconnect();
    super.disconnectedCallback();
  }

  /**
   * The lines the stream holds room for: those the prompt and \`max\` more tokens take at
   * this width (a monospaced glyph is about 0.6 em, counted as 0.62; a word token about six glyphs with its
   * space), so that it does not grow a line at a time while the tokens arrive.
   */
  private streamLines(): number {
    if (!this.width || !this.info || this.info.arch === 'encoder_only') return 1;
    const word = this.info.tokenizer_kind === 'word';
    const chars = this.prompt.reduce((n, t) => n + t.length + (word ? 1 : 0), 0) + this.max * (word ? 6 : 1);
    // The card's padding and border; a glyph's advance rounded up (fonts differ a little).
    const perLine = Math.max(1, Math.floor((this.width - 48) / (16 * 0.62)));
    return Math.min(40, Math.ceil(chars / perLine));
  }

  info: ModelInfo | null = null;
  prompt: string[] = [];
  generated: number[] = [];
  playing = false;
  done = false;
  speed = 150;
  stats: GenStats = { ttftMs: null, engineMsPerToken: null, wallMsPerToken: null, prefillMs: null, totalFlops: 0, totalFed: 0 };
  step: GenerateStep | null = null;
  strategy = 'greedy';
  /** Why generation cannot run now, in the engine's words. */
  note = '';
  /** Tokens to generate before stopping. */
  max = 32;
  label = 'Generation';
  /** Generating with the KV cache. */
  cache = true;
  /** The generation a switch restarted, shown as "before" beside this one. */
  previousRun: GenBefore | null = null;
  /** The settings of the two sides, in words. */
  sides: { before: string; after: string } | null = null;
  /** Sampling: each generated token's draw, from the core's sampler (drawn by tp-draw). */
  draws: (SampleDraw | null)[] = [];

  static styles = [
    panel,
    css`
      input.max-tokens {
        width: 4.5em;
      }
      .buttons {
        display: flex;
        gap: 6px;
        flex-wrap: wrap;
        align-items: center;
      }
      .stream {
        font-family: var(--tp-mono);
        font-size: var(--tp-text-base);
        line-height: 1.8;
        margin: 10px 0;
        min-height: 1.8em;
        word-break: break-all;
        white-space: pre-wrap;
      }
      .stream .p {
        color: var(--tp-muted);
      }
      .stream .g {
        background: var(--tp-accent-soft);
        border-radius: 3px;
        padding: 0 1px;
        animation: pop 0.25s ease-out;
      }
      @keyframes pop {
        from {
          background: #fde725;
        }
      }
      /* Each figure keeps its place while the numbers change: short ones in columns of one
         width, the long ones on a row of their own. */
      .stats {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(15em, 1fr));
        gap: 2px 14px;
        font-size: var(--tp-text-sm);
      }
      .stats > span:not(.row) {
        white-space: nowrap;
      }
      .stats .row {
        grid-column: 1 / -1;
      }
      :host {
        display: block;
        container-type: inline-size;
      }
      /* In a narrow panel the running totals take two lines once their numbers grow: they hold both from the start. */
      @container (max-width: 520px) {
        .stats .totals {
          min-height: 2.6em;
        }
      }
      /* Pause and Play take the same room, so the controls after them stay put. */
      button.play {
        min-width: 7em;
      }
      .cache.waiting {
        visibility: hidden;
      }
      .stats b {
        font-family: var(--tp-mono);
      }
      .cache {
        margin-top: 10px;
        overflow-x: auto;
      }
      canvas {
        display: block;
        image-rendering: pixelated;
      }
      .beams {
        margin-top: 10px;
        font-size: var(--tp-text-sm);
        list-style: none;
        padding: 0;
      }
      .beams li {
        font-family: var(--tp-mono);
        padding: 2px 4px;
        border-left: 3px solid var(--tp-accent);
        margin-bottom: 3px;
        white-space: pre-wrap;
      }
      .beams li.done {
        border-left-color: #21908d;
      }
      .note {
        color: var(--tp-warn);
        font-size: var(--tp-text-md);
      }
      .restarted {
        font-size: 0.85rem;
        margin: 8px 0 0;
      }
      .restarted button {
        margin-left: 6px;
      }
      .compare {
        display: grid;
        grid-template-columns: repeat(2, minmax(0, 1fr));
        gap: 10px;
      }
      .compare > div {
        min-width: 0;
      }
      .compare .side {
        font-size: 0.78rem;
        color: var(--tp-muted);
        margin-top: 8px;
        overflow-wrap: anywhere;
      }
      .compare .side b {
        color: var(--tp-fg);
      }
      .compare .before-side {
        border-right: 1px solid var(--tp-line);
        padding-right: 10px;
      }
      .stream .b {
        background: var(--tp-io-fill, rgba(128, 128, 128, 0.15));
        border-radius: 3px;
        padding: 0 1px;
      }
      label {
        font-size: var(--tp-text-md);
        display: inline-flex;
        gap: var(--tp-space-1);
        align-items: center;
      }
    `,
  ];

  protected updated(): void {
    // The KV cache: one column per cached position, one pair of rows (K, V) per layer.
    // Each column is coloured by the newest query's attention to it (mean over heads).
    const c = this.renderRoot.querySelector<HTMLCanvasElement>('canvas#cache');
    const step = this.step?.step;
    if (!c || !step) return;
    const L = step.attention.length;
    const S = step.cache_len;
    const cell = 8;
    // The positions this step computed: only the newest with the cache (after the
    // prefill), every one of them again without it. They get a bar under their column.
    const fresh = Math.min(S, this.cache ? step.fed : S);
    c.width = Math.max(1, S * cell);
    c.height = cacheHeight(L);
    c.style.width = `${c.width}px`;
    c.style.height = `${c.height}px`;
    const ctx = c.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, c.width, c.height);
    step.attention.forEach((heads, l) => {
      for (let s = 0; s < S; s++) {
        let w = 0;
        for (const row of heads) w += row[s] ?? 0;
        w /= Math.max(1, heads.length);
        const [r, g, b] = viridisRgb(w);
        ctx.fillStyle = `rgb(${r},${g},${b})`;
        const y = l * (2 * cell + 4);
        ctx.fillRect(s * cell, y, cell - 1, cell - 1);
        ctx.fillRect(s * cell, y + cell, cell - 1, cell - 1);
      }
    });
    ctx.fillStyle = SERIES.vermillion;
    for (let s = S - fresh; s < S; s++) ctx.fillRect(s * cell, L * (2 * cell + 4), cell - 1, 4);
  }

  private beamList(tok: (id: number) => string) {
    const beam = this.step?.step.beam;
    if (!beam) return nothing;
    const line = (h: Hypothesis, done: boolean) =>
      html`<li class=${done ? 'done' : ''}>${h.tokens.map(tok).join(this.info?.tokenizer_kind === 'word' ? ' ' : '')}
        <span class="muted">log p ${fmt(h.log_prob, 2)} · ${msg('score')} ${fmt(h.score, 2)}${done ? ` · ${msg('finished')}` : ''}</span></li>`;
    return html`<ul class="beams" aria-label=${msg('live and finished beams')}>
      ${beam.live.map((h) => line(h, false))}${beam.finished.slice(0, 4).map((h) => line(h, true))}
    </ul>`;
  }

  /** The prompt and the tokens generated so far. */
  private stream(sep: string) {
    const info = this.info;
    const texts = [...this.prompt, ...this.generated.map((id) => info?.vocab[id] ?? `${id}`)];
    const p = this.prompt.length;
    // A byte-level model's character whose bytes came in several tokens (an emoji, a CJK
    // character) is drawn once, as the character, over the tokens that spell it.
    const groups = info?.tokenizer_kind === 'bpe' ? groupBytePieces(texts) : texts.map((text, i) => ({ text, from: i, to: i }));
    return html`<div
      class="stream"
      style=${styles(`min-height:${1.8 * this.streamLines()}em`)}
      aria-live="polite"
      aria-label=${msg('prompt and generated tokens')}
      data-generated=${this.generated.join(',')}
    >${groups.map(
      (g) =>
        html`<span class=${g.to >= p ? 'g' : 'p'} lang=${ifDefined(tokenLang(g.text))} title=${ifDefined(g.to > g.from ? texts.slice(g.from, g.to + 1).join('') : undefined)}>${g.text}</span>${sep}`,
    )}</div>`;
  }

  /**
   * The generation a switch restarted beside the one running now: before | after, each
   * labelled with its settings, and a line saying what restarted it.
   */
  private compare(b: GenBefore, now: unknown) {
    const sep = b.words ? ' ' : '';
    const sides = this.sides ?? { before: '', after: '' };
    return html`<p class="restarted" role="status" data-restarted>
        ${msg(str`Changing ${b.what} restarted the generation; the previous output is kept below as “before”.`, { id: 'gen.restarted' })}
        <button @click=${() => emit(this, 'tp-dismiss-before', null)} aria-label=${msg('stop comparing: forget the previous output')}>×</button>
      </p>
      <div class="compare" data-compare>
        <div class="before-side">
          <div class="side">${msg('before')}: <b data-side="before">${sides.before}</b></div>
          <div class="stream" data-before=${b.ids.join(',')} aria-label=${msg('the previous output, before the change')}>${b.prompt.map((t) => html`<span class="p" lang=${ifDefined(tokenLang(t))}>${t}</span>${sep}`)}${b.tokens.map(
            (t) => html`<span class="b" lang=${ifDefined(tokenLang(t))}>${t}</span>${sep}`,
          )}</div>
        </div>
        <div>
          <div class="side">${msg('after')}: <b data-side="after">${sides.after}</b></div>
          ${now}
        </div>
      </div>`;
  }

  render() {
    const info = this.info;
    const st = this.stats;
    const step = this.step;
    // Word-level models: tokens are words, so the stream puts spaces between them.
    const sep = info?.tokenizer_kind === 'word' ? ' ' : '';
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${this.label} <span class="sub">${this.done ? msg('finished') : this.playing ? msg('running') : msg('paused')}</span></h2>
      <div class="buttons">
        ${this.playing
          ? html`<button class="play" @click=${() => emit(this, 'tp-pause', null)} aria-label=${msg('pause generation')}>❚❚ ${msg('Pause')}</button>`
          : html`<button class="play" @click=${() => emit(this, 'tp-play', null)} aria-label=${msg('play generation')}>▶ ${msg('Play')}</button>`}
        <button @click=${() => emit(this, 'tp-step', null)} ?disabled=${this.playing} aria-label=${msg('Step: generate one token')}>${msg('Step')}</button>
        <button @click=${() => emit(this, 'tp-restart', null)} aria-label=${msg('Restart: start again from the prompt')}>↺ ${msg('Restart')}</button>
        <label
          >${msg('pause between tokens')}
          <input
            type="range"
            min="0"
            max="1000"
            step="25"
            .value=${String(this.speed)}
            aria-valuetext=${msg(str`${this.speed} milliseconds`)}
            data-setting="speed"
            ?disabled=${!!whyLocked(this.lock, 'speed')}
            @change=${(e: Event) => emit(this, 'tp-speed', Number((e.target as HTMLInputElement).value))}
          />
          <span class="mono small">${this.speed} ms</span>${lockedNote('speed', whyLocked(this.lock, 'speed'))}</label
        >
        <label title=${msg("keep each position's keys and values; off, every step runs the whole prefix again")}
          ><input type="checkbox" data-setting="cache" ?disabled=${!!whyLocked(this.lock, 'cache')} .checked=${this.cache} @change=${(e: Event) => emit(this, 'tp-cache', (e.target as HTMLInputElement).checked)} />${msg('KV cache')}${lockedNote('cache', whyLocked(this.lock, 'cache'))}</label
        >
        <label
          >${msg('tokens')}
          <input
            type="number"
            min="1"
            max="200"
            class="max-tokens"
            data-setting="max"
            ?disabled=${!!whyLocked(this.lock, 'max')}
            .value=${String(this.max)}
            @change=${(e: Event) => {
              const v = Math.round(Number((e.target as HTMLInputElement).value));
              if (v >= 1 && v <= 200) emit(this, 'tp-max', v);
            }}
        />${lockedNote('max', whyLocked(this.lock, 'max'))}</label>
      </div>
      ${this.note ? html`<p class="note" role="status">${errorText(this.note)}</p>` : nothing}
      ${this.previousRun ? this.compare(this.previousRun, this.stream(sep)) : this.stream(sep)}
      <div class="stats">
        <span>${msg('time to first token')} <b>${st.ttftMs === null ? '—' : `${fmt(st.ttftMs, 1)} ms`}</b></span>
        <span>${msg('prefill')} <b>${st.prefillMs === null ? '—' : `${fmt(st.prefillMs, 2)} ms`}</b></span>
        <span>${msg('engine per token')} <b>${st.engineMsPerToken === null ? '—' : `${fmt(st.engineMsPerToken, 2)} ms`}</b></span>
        <span>${msg('page per token')} <b>${st.wallMsPerToken === null ? '—' : `${fmt(st.wallMsPerToken, 1)} ms`}</b></span>
        <span>${msg('tokens')} <b>${this.generated.length}</b></span>
        <span class="row">${step ? msg(html`last step <b>${int(step.step.flops)}</b> FLOPs, fed <b>${step.step.fed}</b> tokens`) : html`&nbsp;`}</span>
        <span class="row totals" data-total-flops=${st.totalFlops} data-total-fed=${st.totalFed} data-cache=${this.cache ? '1' : '0'}
          >${msg(html`so far <b>${int(st.totalFlops)}</b> FLOPs, <b>${st.totalFed}</b> tokens run through the model`)}</span
        >
      </div>
      ${step
        ? this.cacheBlock(step.step.cache_len, step.step.attention.length, step.step.fed)
        : info && info.arch !== 'encoder_only'
          ? html`<div class="cache waiting" aria-hidden="true" data-cache-placeholder>${this.cacheText(0, info.decoder_layers)}<span style=${styles(`display:inline-block;width:1px;height:${cacheHeight(info.decoder_layers)}px`)}></span></div>`
          : nothing}
      ${this.strategy === 'beam' ? this.beamList((id) => info?.vocab[id] ?? `${id}`) : nothing}
      ${this.strategy === 'sample' ? html`<tp-draw .draws=${this.draws} .vocab=${info?.vocab ?? []}></tp-draw>` : nothing}
    </section>`;
  }

  /** The words over the KV cache's picture. */
  private cacheText(len: number, layers: number) {
    return html`<div class="small muted">
      ${this.cache ? msg('KV cache') : msg('No cache: keys and values recomputed')}:
      ${msg(str`${len} positions × ${layers} layers (a K and a V row per layer), coloured by the newest token's mean attention to each position. The bar underneath marks what this step computed:`)}
      ${this.cache ? msg('only the new position (the others were read from the cache)') : msg('every position again, the whole prefix')}${msg('.')}
    </div>`;
  }

  /** The KV cache of the last step: its words and its picture (drawn in \`updated\`). */
  private cacheBlock(len: number, layers: number, fed: number) {
    return html`<div class="cache" ${scrollRegion(scrollLabel())}>
            ${this.cacheText(len, layers)}
            <canvas
              id="cache"
              role="img"
              data-cache-len=${len}
              data-computed=${Math.min(len, this.cache ? fed : len)}
              aria-label=${msg(str`KV cache holding ${len} positions in each of ${layers} layers`)}
            ></canvas>
          </div>`;
  }
}

/** The height of the KV cache's picture for L layers (see \`updated\`). */
function cacheHeight(L: number): number {
  return Math.max(1, L * (2 * 8 + 4) + 6);
}

customElements.define('tp-generation', TpGeneration);
