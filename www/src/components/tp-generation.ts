// Stage 5 — generation: play / pause / step / speed, tokens streaming in, the KV cache
// growing one column per token (switch it off and every step recomputes the whole prefix,
// drawn as such), time to first token and time per token, FLOPs so far, and the live
// beams of beam search.

import { html, css, nothing } from 'lit';
import type { GenerateStep, Hypothesis, ModelInfo } from '../engine/protocol';
import { emit, panel } from '../ui/shared';
import type { GenStats } from '../state/generation';
import { ifDefined } from 'lit/directives/if-defined.js';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import { fmt, tokenLang, viridisRgb } from '../ui/palette';
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
    draws: { attribute: false },
  };

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
        font-size: 0.95rem;
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
      .stats {
        display: flex;
        gap: 14px;
        flex-wrap: wrap;
        font-size: 0.82rem;
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
        font-size: 0.82rem;
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
        font-size: 0.85rem;
      }
      label {
        font-size: 0.85rem;
        display: inline-flex;
        gap: 4px;
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
    c.height = Math.max(1, L * (2 * cell + 4) + 6);
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
    ctx.fillStyle = '#d55e00';
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
          ? html`<button @click=${() => emit(this, 'tp-pause', null)} aria-label=${msg('pause generation')}>❚❚ ${msg('Pause')}</button>`
          : html`<button @click=${() => emit(this, 'tp-play', null)} aria-label=${msg('play generation')}>▶ ${msg('Play')}</button>`}
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
            @change=${(e: Event) => emit(this, 'tp-speed', Number((e.target as HTMLInputElement).value))}
          />
          <span class="mono small">${this.speed} ms</span></label
        >
        <label title=${msg("keep each position's keys and values; off, every step runs the whole prefix again")}
          ><input type="checkbox" .checked=${this.cache} @change=${(e: Event) => emit(this, 'tp-cache', (e.target as HTMLInputElement).checked)} />${msg('KV cache')}</label
        >
        <label
          >${msg('tokens')}
          <input
            type="number"
            min="1"
            max="200"
            class="max-tokens"
            .value=${String(this.max)}
            @change=${(e: Event) => {
              const v = Math.round(Number((e.target as HTMLInputElement).value));
              if (v >= 1 && v <= 200) emit(this, 'tp-max', v);
            }}
        /></label>
      </div>
      ${this.note ? html`<p class="note" role="status">${errorText(this.note)}</p>` : nothing}
      <div class="stream" aria-live="polite" aria-label=${msg('prompt and generated tokens')} data-generated=${this.generated.join(',')}>${this.prompt.map((t) => html`<span class="p" lang=${ifDefined(tokenLang(t))}>${t}</span>${sep}`)}${this.generated.map((id) => {
        const t = info?.vocab[id] ?? `${id}`;
        return html`<span class="g" lang=${ifDefined(tokenLang(t))}>${t}</span>${sep}`;
      })}</div>
      <div class="stats">
        <span>${msg('time to first token')} <b>${st.ttftMs === null ? '—' : `${fmt(st.ttftMs, 1)} ms`}</b></span>
        <span>${msg('prefill')} <b>${st.prefillMs === null ? '—' : `${fmt(st.prefillMs, 2)} ms`}</b></span>
        <span>${msg('engine per token')} <b>${st.engineMsPerToken === null ? '—' : `${fmt(st.engineMsPerToken, 2)} ms`}</b></span>
        <span>${msg('page per token')} <b>${st.wallMsPerToken === null ? '—' : `${fmt(st.wallMsPerToken, 1)} ms`}</b></span>
        <span>${msg('tokens')} <b>${this.generated.length}</b></span>
        ${step ? html`<span>${msg(html`last step <b>${step.step.flops.toLocaleString('en')}</b> FLOPs, fed <b>${step.step.fed}</b> tokens`)}</span>` : nothing}
        <span class="totals" data-total-flops=${st.totalFlops} data-total-fed=${st.totalFed} data-cache=${this.cache ? '1' : '0'}
          >${msg(html`so far <b>${st.totalFlops.toLocaleString('en')}</b> FLOPs, <b>${st.totalFed}</b> tokens run through the model`)}</span
        >
      </div>
      ${step
        ? html`<div class="cache">
            <div class="small muted">
              ${this.cache ? msg('KV cache') : msg('No cache: keys and values recomputed')}:
              ${msg(str`${step.step.cache_len} positions × ${step.step.attention.length} layers (a K and a V row per layer), coloured by the newest token's mean attention to each position. The bar underneath marks what this step computed:`)}
              ${this.cache ? msg('only the new position (the others were read from the cache)') : msg('every position again, the whole prefix')}${msg('.')}
            </div>
            <canvas
              id="cache"
              role="img"
              data-cache-len=${step.step.cache_len}
              data-computed=${Math.min(step.step.cache_len, this.cache ? step.step.fed : step.step.cache_len)}
              aria-label=${msg(str`KV cache holding ${step.step.cache_len} positions in each of ${step.step.attention.length} layers`)}
            ></canvas>
          </div>`
        : nothing}
      ${this.strategy === 'beam' ? this.beamList((id) => info?.vocab[id] ?? `${id}`) : nothing}
      ${this.strategy === 'sample' ? html`<tp-draw .draws=${this.draws} .vocab=${info?.vocab ?? []}></tp-draw>` : nothing}
    </section>`;
  }
}

customElements.define('tp-generation', TpGeneration);
