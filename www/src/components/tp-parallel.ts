// Training is parallel, inference serial: one sequence run as a single teacher-forced
// pass and token by token with and without the KV cache, timed live by the engine on this
// device, with the FLOPs it counted beside every time; and dot-product against additive
// scoring, counted and timed on the loaded model's shape. Every number comes from the
// engine (`parallel` and `scoring` requests); nothing is computed here but sums for the
// plot.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller } from '../engine/client';
import type { ModelInfo, ParallelTiming, ScoringComparison } from '../engine/protocol';
import { panel, scrollLabel, scrollRegion, SeenController } from '../ui/shared';
import { fmt, SERIES } from '../ui/palette';
import { lineChart, swatch, type Series } from '../ui/plot';
import { int } from '../ui/format';

const ONE_PASS = SERIES.green;
const CACHED = SERIES.blue;
const UNCACHED = SERIES.vermillion;

const cumulative = (xs: number[]) => {
  let s = 0;
  return xs.map((x) => (s += x));
};

export class TpParallel extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    info: { attribute: false },
    prompt: { attribute: false },
    data: { state: true },
    scoring: { state: true },
    busy: { state: true },
    problem: { state: true },
    length: { state: true },
  };

  engine: EngineCaller | null = null;
  info: ModelInfo | null = null;
  /** Decoder ids to start from, `<bos>` first. */
  prompt: number[] = [];
  /** The engine's measurement (read by the browser tests). */
  data: ParallelTiming | null = null;
  /** Dot against additive scoring (read by the browser tests). */
  scoring: ScoringComparison | null = null;
  busy = false;
  problem = '';
  /** N: tokens in the measured sequence. */
  length = 0;
  private asked = '';
  /** Whether the view has been on screen: it measures only from then on. */
  private readonly sight = new SeenController(this);

  static styles = [
    panel,
    css`
      svg.chart {
        width: 100%;
        height: auto;
        display: block;
        max-width: 560px;
      }
      .charts {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-3);
      }
      .charts figure {
        margin: 0;
        flex: 1 1 360px;
        min-width: 0;
      }
      figcaption {
        font-size: var(--tp-text-sm);
      }
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
      .legend {
        display: flex;
        gap: 14px;
        flex-wrap: wrap;
        font-size: var(--tp-text-sm);
      }
      table {
        border-collapse: collapse;
        font-size: var(--tp-text-sm);
        font-variant-numeric: tabular-nums;
      }
      td,
      th {
        padding: 1px 6px;
        text-align: right;
        border-bottom: 1px solid var(--tp-line);
      }
      th:first-child,
      td:first-child {
        text-align: left;
      }
      .wrap {
        overflow-x: auto;
      }
      .row {
        display: flex;
        gap: 10px;
        align-items: center;
        flex-wrap: wrap;
        font-size: var(--tp-text-md);
      }
      input[type='number'] {
        width: 5em;
      }
    `,
  ];

  /** The longest sequence the engine measures for this model. */
  private get top(): number {
    return Math.min(this.info?.max_len ?? 0, 256);
  }

  updated(): void {
    const info = this.info;
    if (!this.sight.seen || !this.engine || !info || info.arch !== 'decoder_only' || !this.prompt.length) return;
    const key = `${info.params}/${info.pos_encoding}/${info.score}/${info.norm}`;
    if (key === this.asked) return;
    this.asked = key;
    this.length = Math.min(64, this.top);
    void this.measure();
  }

  /** Ask the engine to measure again (the page's button; tests call it too). */
  async measure(): Promise<void> {
    if (!this.engine || this.busy) return;
    this.busy = true;
    this.problem = '';
    try {
      const prompt = this.prompt.slice(0, Math.max(1, Math.min(this.prompt.length, this.length)));
      this.data = await this.engine.call('parallel', { prompt, length: this.length, repeats: 3 });
      this.scoring = await this.engine.call('scoring', { tokens: Math.min(this.length, this.top), repeats: 5 });
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    } finally {
      this.busy = false;
    }
  }

  private scoringTable() {
    const s = this.scoring;
    if (!s) return nothing;
    const name = { dot: msg('dot q·k'), scaled_dot: msg('scaled dot q·k/√d_k'), additive: msg('additive v·tanh(q + k)') };
    const dot = s.rows.find((r) => r.score === 'scaled_dot');
    return html`<h3 class="small">${msg('Dot-product against additive scores')}</h3>
      <p>
        ${msg(str`The loaded model's shape with each score function (seeded weights: what a pass costs does not depend on them), one forward pass over ${s.tokens} tokens: ${int(s.pairs)} (query, key) pairs over all layers. Per pair and dimension a dot product does one multiply-add; additive scoring does one too (v·tanh), plus an addition and a tanh — the multiply-add count hides that, the clock does not.`)}
      </p>
      <div class="wrap" ${scrollRegion(scrollLabel())}>
        <table aria-label=${msg('cost of one forward pass with each score function')}>
          <thead>
            <tr><th>${msg('score')}</th><th>${msg('multiply-adds (pass)')}</th><th>${msg('of them in scores')}</th><th>${msg('additions')}</th><th>tanh</th><th>${msg('time (median)')}</th><th>${msg('vs scaled dot')}</th></tr>
          </thead>
          <tbody>
            ${s.rows.map(
              (r) => html`<tr data-score=${r.score} data-macs=${r.multiply_adds} data-score-macs=${r.score_multiply_adds} data-additions=${r.additions} data-tanh=${r.tanh} data-ms=${r.ms}>
                <td>${name[r.score]}</td>
                <td>${int(r.multiply_adds)}</td>
                <td>${int(r.score_multiply_adds)}</td>
                <td>${int(r.additions)}</td>
                <td>${int(r.tanh)}</td>
                <td>${fmt(r.ms, 3)} ms</td>
                <td>${dot && dot.ms > 0 ? `×${fmt(r.ms / dot.ms, 2)}` : '—'}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>`;
  }

  render() {
    const info = this.info;
    if (info && info.arch !== 'decoder_only') {
      return html`<section class="card" aria-labelledby="h">
        <h2 id="h">${msg('Parallel training, serial inference')}</h2>
        <p class="muted">${msg('This view measures a decoder-only model generating from a prompt; load one of the language models.')}</p>
        ${this.scoringTable()}
      </section>`;
    }
    const d = this.data;
    const ns = d ? d.cached_ms.map((_, i) => i + 1) : [];
    const pts = (ys: number[], xs: number[] = ns) => xs.map((x, i) => [x, ys[i]] as [number, number]);
    const whole: Series[] = d
      ? [
          { name: msg('one teacher-forced pass'), color: ONE_PASS, points: pts(d.forward_ms, d.forward_lengths) },
          { name: msg('serial, KV cache'), color: CACHED, dots: false, points: pts(d.cached_ms) },
          { name: msg('serial, no cache'), color: UNCACHED, dashed: true, dots: false, points: pts(d.uncached_ms) },
        ]
      : [];
    const perToken: Series[] = d
      ? [
          { name: msg('attention FLOPs, KV cache'), color: CACHED, dots: false, points: pts(d.cached_step_attention_flops) },
          { name: msg('attention FLOPs, no cache'), color: UNCACHED, dashed: true, dots: false, points: pts(d.uncached_step_attention_flops) },
        ]
      : [];
    const c1 = d ? lineChart(whole, { width: 460, height: 230, xLabel: msg('tokens n (log)'), yLabel: msg('ms to produce all n (log)'), xLog: true, yLog: true, vguide: [d.fit_from, msg('fit from here')] }) : null;
    const c2 = d ? lineChart(perToken, { width: 460, height: 230, xLabel: msg('context length n'), yLabel: msg('FLOPs for the n-th token') }) : null;
    const x = d?.exponents;
    // A few lengths for the table: powers of two and N.
    const rows = d ? [...new Set([...d.forward_lengths.filter((n) => n >= 4), ns.length])] : [];
    const cumC = d ? d.cached_ms : [];
    const cumU = d ? d.uncached_ms : [];
    const cumCf = d ? cumulative(d.cached_step_flops) : [];
    const cumUf = d ? cumulative(d.uncached_step_flops) : [];
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Parallel training, serial inference')} <span class="sub">${msg('measured now, on this device')}</span></h2>
      <p>
        ${msg(str`In training the whole target is known, so one pass computes every position at once (teacher forcing). Generating has to go one token at a time, since each token depends on the one before. With the KV cache a step computes only the new position and reads the keys and values of the earlier ones; without it every step runs the whole prefix again. The same ${d ? d.tokens.length : 'N'} tokens, three ways:`)}
      </p>
      <div class="row">
        <label
          >${msg('tokens N')}
          <input
            type="number"
            min="16"
            max=${this.top}
            .value=${String(this.length)}
            @change=${(e: Event) => {
              const v = Math.round(Number((e.target as HTMLInputElement).value));
              if (v >= 16 && v <= this.top) this.length = v;
            }}
        /></label>
        <button ?disabled=${this.busy} @click=${() => void this.measure()}>${this.busy ? msg('measuring…') : msg('Measure again')}</button>
        ${d ? html`<span class="small muted">${msg(str`each time is the median of ${d.repeats} measurements, each an average of runs back to back spanning at least 20 ms (the page's clock ticks in tenths of a millisecond)`)}</span>` : nothing}
      </div>
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}
      ${d && c1 && c2 && x
        ? html`<div class="legend" aria-hidden="true">
              <span>${swatch(ONE_PASS)}${msg('one teacher-forced pass over n tokens')}</span>
              <span>${swatch(CACHED)}${msg('token by token, KV cache')}</span>
              <span>${swatch(UNCACHED, true)}${msg('token by token, no cache')}</span>
            </div>
            <div class="charts">
              <figure>
                <svg class="chart" viewBox=${c1.viewBox} role="img" aria-label=${msg('time to produce n tokens, three ways')}>${c1.body}</svg>
                <figcaption
                  data-exp-cached-ms=${x.cached_ms}
                  data-exp-uncached-ms=${x.uncached_ms}
                  data-exp-forward-ms=${x.forward_ms}
                  data-exp-cached-flops=${x.cached_flops}
                  data-exp-uncached-flops=${x.uncached_flops}
                  data-exp-forward-flops=${x.forward_flops}
                >
                  ${msg(html`Growth from n = ${d.fit_from} to ${ns.length} (slope on log–log axes; the serial totals counted after their first step, a one-off prefill): with the cache time ∝ n<sup>${fmt(x.cached_ms, 2)}</sup>, FLOPs ∝ n<sup>${fmt(x.cached_flops, 2)}</sup>; without it time ∝ n<sup>${fmt(x.uncached_ms, 2)}</sup>, FLOPs ∝ n<sup>${fmt(x.uncached_flops, 2)}</sup>; one pass: time ∝ n<sup>${fmt(x.forward_ms, 2)}</sup>, FLOPs ∝ n<sup>${fmt(x.forward_flops, 2)}</sup> — the same FLOPs as the cached steps, at once.`)}
                  ${msg('The longer the sequence, the larger the share of attention in a cached step, and the more its total bends upwards from n¹. On the CPU backend times grow faster than FLOPs: its attention (scores, softmax, weighted sum) runs as plain loops, slower per operation than the matrix products, so the part that grows with n weighs more in time than in the count. There the one pass and the cached steps do the same arithmetic on one core, one position after another: what the one pass saves is the work around each step, and the table shows how much that is on this device. Where the hardware computes positions side by side (WebGPU), the one pass also does its arithmetic at once, and each serial step pays a round trip to the device.')}
                </figcaption>
              </figure>
              <figure>
                <svg class="chart" viewBox=${c2.viewBox} role="img" aria-label=${msg('attention work for the n-th token with and without the cache')}>${c2.body}</svg>
                <figcaption
                  data-exp-cached-attention=${x.cached_attention_flops}
                  data-exp-uncached-attention=${x.uncached_attention_flops}
                  data-n=${ns.length}
                  data-cached-attention-flops=${d.cached_step_attention_flops[ns.length - 1]}
                  data-uncached-attention-flops=${d.uncached_step_attention_flops[ns.length - 1]}
                >
                  ${msg(html`The n-th token's attention FLOPs (a multiply-add counts as two, as in the plot): with the cache one query against n keys, 4·C·n per layer (∝ n<sup>${fmt(x.cached_attention_flops, 2)}</sup>, linear); without it all n queries again, 2·C·n(n + 1) per layer (∝ n<sup>${fmt(x.uncached_attention_flops, 2)}</sup>, quadratic).`)}
                  ${msg(str`At n = ${ns.length}: ${d.cached_step_attention_flops[ns.length - 1].toLocaleString('en')} FLOPs with the cache, ${d.uncached_step_attention_flops[ns.length - 1].toLocaleString('en')} without.`)}
                </figcaption>
              </figure>
            </div>
            <div class="wrap" ${scrollRegion(scrollLabel())}>
              <table aria-label=${msg('time and FLOPs to produce n tokens')}>
                <thead>
                  <tr><th>n</th><th>${msg('one pass')}</th><th>FLOPs</th><th>${msg('serial, cache')}</th><th>FLOPs</th><th>${msg('serial, no cache')}</th><th>FLOPs</th></tr>
                </thead>
                <tbody>
                  ${rows.map((n) => {
                    const k = d.forward_lengths.indexOf(n);
                    return html`<tr data-n=${n} data-cached-ms=${cumC[n - 1]} data-uncached-ms=${cumU[n - 1]} data-cached-flops=${cumCf[n - 1]} data-uncached-flops=${cumUf[n - 1]}>
                      <td>${n}</td>
                      <td>${k >= 0 ? `${fmt(d.forward_ms[k], 3)} ms` : '—'}</td>
                      <td>${k >= 0 ? int(d.forward_flops[k]) : '—'}</td>
                      <td>${fmt(cumC[n - 1], 3)} ms</td>
                      <td>${int(cumCf[n - 1])}</td>
                      <td>${fmt(cumU[n - 1], 3)} ms</td>
                      <td>${int(cumUf[n - 1])}</td>
                    </tr>`;
                  })}
                </tbody>
              </table>
            </div>`
        : html`<p class="muted">${this.busy ? msg('Measuring…') : msg('Waiting for the model…')}</p>`}
      ${this.scoringTable()}
    </section>`;
  }
}

customElements.define('tp-parallel', TpParallel);
