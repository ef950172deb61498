// Train short, test long, measured in the page: each shipped grammar model (one per
// position encoding, all trained on 64-character sequences) is scored by the engine on
// held-out text of up to 4× that length, position by position. The same function
// produced the table in models/README.md. On a Chinese model, or with the page in
// Chinese, the view measures the Chinese grammar models (the same recipe on Chinese text).

import { shippedOnly } from '../i18n/shipped-only';
import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { langOf, LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller } from '../engine/client';
import type { Extrapolation, ManifestEntry } from '../engine/protocol';
import { panel } from '../ui/shared';
import './tp-progress';
import { fmt, SERIES } from '../ui/palette';
import { lineChart, swatch, type Series } from '../ui/plot';
import { posEncodingName } from '../i18n/terms';

/** Okabe–Ito colours, one per scheme. */
const COLORS: Record<string, string> = {
  alibi: SERIES.green,
  rope: SERIES.blue,
  relative: SERIES.sky,
  none: SERIES.grey,
  sinusoidal: SERIES.vermillion,
  learned: SERIES.pink,
};

/** Positions averaged per plotted point (the per-position numbers are noisy). */
const WINDOW = 8;

function smooth(xs: number[], w: number): [number, number][] {
  const out: [number, number][] = [];
  for (let s = 0; s + w <= xs.length; s += w) {
    const part = xs.slice(s, s + w);
    out.push([s + (w - 1) / 2, part.reduce((a, b) => a + b, 0) / w]);
  }
  return out;
}

export class TpExtrapolation extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    base: { attribute: false },
    manifest: { attribute: false },
    pageModel: { attribute: false },
    loaded: { attribute: false },
    results: { state: true },
    progress: { state: true },
    problem: { state: true },
    metric: { state: true },
    auto: { type: Boolean },
  };

  /** Measure as soon as the engine is there, without a press of Measure (the view shown alone, `chrome=none`). */
  auto = false;

  engine: EngineCaller | null = null;
  base: URL | null = null;
  manifest: ManifestEntry[] = [];
  /** The page's model: a Chinese one makes the view measure the Chinese grammar models. */
  pageModel = '';
  /** The page's model when it is not a shipped one (a loaded folder, a lab run): this experiment does not run on it. */
  loaded = '';
  /** Per scheme, what the engine measured (read by the browser tests). */
  results: { scheme: string; file: string; r: Extrapolation }[] = [];
  /** null: idle; otherwise [models done, models in all]. */
  progress: [number, number] | null = null;
  private scoringSince = 0;
  problem = '';
  metric: 'accuracy' | 'loss' = 'accuracy';
  /** Held-out sequences per length (the README's table uses 48). */
  sequences = 48;

  static styles = [
    panel,
    css`
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
      svg {
        width: 100%;
        height: auto;
        display: block;
        max-width: 680px;
      }
      .controls {
        display: flex;
        gap: 10px;
        align-items: center;
        flex-wrap: wrap;
        font-size: var(--tp-text-md);
      }
      .legend {
        display: flex;
        gap: var(--tp-space-3);
        flex-wrap: wrap;
        font-size: var(--tp-text-sm);
      }
      .swatch {
        display: inline-block;
        width: 18px;
        border-top: 3px solid;
        vertical-align: middle;
        margin-right: var(--tp-space-1);
      }
      table {
        border-collapse: collapse;
        font-size: var(--tp-text-sm);
        font-variant-numeric: tabular-nums;
      }
      th,
      td {
        padding: 2px 8px;
        text-align: right;
        border-bottom: 1px solid var(--tp-line);
      }
      th[scope='row'] {
        text-align: left;
      }
    `,
  ];

  /** The grammar task measured: the Chinese one on a Chinese model or a Chinese page. */
  get task(): 'grammar' | 'zh-grammar' {
    const page = this.manifest.find((m) => m.file === this.pageModel);
    return page?.task.startsWith('zh-') || langOf(this) === 'zh-Hans' ? 'zh-grammar' : 'grammar';
  }

  /** The grammar models of that task that differ only in their position encoding. */
  private models(): ManifestEntry[] {
    const task = this.task;
    return this.manifest.filter((m) => m.task === task && !m.share_qk);
  }

  willUpdate(): void {
    // Results of the other language's models are not this view's any more.
    if (this.results.length && !this.progress) {
      const files = new Set(this.models().map((m) => m.file));
      if (!this.results.every((r) => files.has(r.file))) this.results = [];
    }
  }

  /** How many models a measurement scores (the lesson is done when every one of them is). */
  get expected(): number {
    return this.models().length;
  }

  protected updated(): void {
    // Once the page's model is known (the store has started: the manifest and the model are there).
    if (this.auto && this.engine && this.base && this.manifest.length && this.pageModel && !this.progress && !this.results.length && !this.problem) void this.measure();
  }

  async measure(): Promise<void> {
    if (!this.engine || !this.base || this.progress) return;
    const models = this.models();
    this.results = [];
    this.problem = '';
    this.progress = [0, models.length];
    this.scoringSince = performance.now();
    try {
      for (const [i, m] of models.entries()) {
        const r = await this.engine.call('extrapolation', { url: new URL(m.file, this.base).href, sequences: this.sequences });
        this.results = [...this.results, { scheme: m.pos_encoding, file: m.file, r }];
        this.progress = [i + 1, models.length];
      }
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    } finally {
      this.progress = null;
    }
  }

  render() {
    const res = this.results;
    const l = res[0]?.r.train_len ?? 0;
    const series: Series[] = res.map(({ scheme, r }) => ({
      name: scheme,
      color: COLORS[scheme] ?? '#000',
      dots: false,
      points: smooth(this.metric === 'accuracy' ? r.accuracy : r.loss, WINDOW),
    }));
    const chart = res.length
      ? lineChart(series, {
          width: 640,
          height: 260,
          xLabel: msg(str`position (each point: the mean of ${WINDOW} positions)`),
          yLabel: this.metric === 'accuracy' ? msg('next-character accuracy') : msg('cross-entropy (nats)'),
          yMin: 0,
          yMax: this.metric === 'accuracy' ? 1 : undefined,
          vguide: [l, msg(str`trained length ${l}`)],
          xTicks: [0, l, 2 * l, 3 * l, 4 * l],
        })
      : null;
    const p = this.progress;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Train short, test long')} <span class="sub">${msg('measured now, in this page')}</span></h2>
      ${this.loaded ? html`<p class="small muted" data-shipped-only>${shippedOnly(this.loaded)}</p>` : nothing}
      <p>
        ${res.length
          ? msg(str`${this.expected} grammar models, identical but for their position encoding, were trained on sequences of ${l} characters. The engine scores each on held-out text of up to ${res[0].r.bands.at(-1)?.to ?? l} characters: the share of next characters it predicts right at every position. Encodings that only ever saw positions below ${l} meet new ones past it.`)
          : msg(str`${this.expected} grammar models, identical but for their position encoding, were trained on sequences of one length. The engine scores each on held-out text several times longer: the share of next characters it predicts right at every position.`)}
      </p>
      <div class="controls">
        <button @click=${() => void this.measure()} ?disabled=${!!p || !this.engine}>${res.length ? msg('Measure again') : msg('Measure')}</button>
        ${p ? html`<tp-progress label=${msg('Scoring the models')} unit="models" .done=${p[0]} .total=${p[1]} .since=${this.scoringSince}></tp-progress>` : nothing}
        <label
          ><input type="radio" name="metric" .checked=${this.metric === 'accuracy'} @change=${() => (this.metric = 'accuracy')} /> ${msg('accuracy')}</label
        >
        <label><input type="radio" name="metric" .checked=${this.metric === 'loss'} @change=${() => (this.metric = 'loss')} /> ${msg('cross-entropy')}</label>
        <span class="small muted">${msg(str`${this.sequences} held-out sequences per length`)}</span>
      </div>
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}
      ${chart
        ? html`<div class="legend" aria-hidden="true">
              ${res.map(({ scheme }) => html`<span>${swatch(COLORS[scheme] ?? '#000')}${posEncodingName(scheme)}</span>`)}
            </div>
            <svg viewBox=${chart.viewBox} role="img" aria-label=${this.metric === 'accuracy' ? msg(str`accuracy per position for ${res.map((x) => posEncodingName(x.scheme)).join(msg(', '))}`) : msg(str`cross-entropy per position for ${res.map((x) => posEncodingName(x.scheme)).join(msg(', '))}`)}>${chart.body}</svg>
            <table aria-label=${msg('accuracy and cross-entropy at the positions each length adds')}>
              <thead>
                <tr>
                  <th scope="col">${msg('positions')}</th>
                  ${res[0].r.bands.map((b) => html`<th scope="col">${b.multiple}×: ${b.from}–${b.to - 1}</th>`)}
                </tr>
              </thead>
              <tbody>
                ${res.map(
                  ({ scheme, r }) => html`<tr data-scheme=${scheme}>
                    <th scope="row">${posEncodingName(scheme)}</th>
                    ${r.bands.map(
                      (b) => html`<td data-multiple=${b.multiple} data-accuracy=${b.accuracy} data-loss=${b.loss}>${fmt(b.accuracy)} / ${fmt(b.loss, 2)}</td>`,
                    )}
                  </tr>`,
                )}
              </tbody>
            </table>
            <p class="small muted">
              ${this.task === 'grammar'
                ? msg('accuracy / cross-entropy at the positions each length adds; the same numbers as the table in models/README.md.')
                : msg('accuracy / cross-entropy at the positions each length adds, on held-out Chinese sentences.', { id: 'extrapolation.zh-footnote' })}
            </p>`
        : html`<p class="muted">${msg('Press Measure: the engine loads each grammar model and scores it (a few seconds).')}</p>`}
    </section>`;
  }
}

customElements.define('tp-extrapolation', TpExtrapolation);
