// Where the time goes: a decoding step and a training step of the lab's reverse model at
// one width after another, timed by the engine on this device on the CPU and (where the
// browser has WebGPU) on the GPU (`timeRates`, then `timeWidth` per width). Each step is
// drawn as its parts: on the CPU its arithmetic and its bytes at this device's measured
// rates, on the GPU its submissions and dispatches at their measured cost, and the rest.
// The two curves of each kind of step cross where the GPU starts to win; the crossover is
// marked where the measured points cross. Every number comes from the engine; the page
// only places the crossing between two measured widths.

import { html, css, nothing, type TemplateResult } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller, EngineClient } from '../engine/client';
import type { DeviceRates, PartKind, StepTime, WidthTime } from '../engine/protocol';
import { panel, scrollLabel, scrollRegion, SeenController, styles } from '../ui/shared';
import { SERIES } from '../ui/palette';
import { lineChart, swatch, type Series } from '../ui/plot';
import { bytes, int, ms, num, percent } from '../ui/format';

const CPU = SERIES.blue;
const GPU = SERIES.vermillion;
const PART_COLOR: Record<PartKind, string> = {
  arithmetic: SERIES.blue,
  bytes: SERIES.sky,
  submissions: SERIES.vermillion,
  dispatches: SERIES.orange,
  rest: SERIES.grey,
};

/** The widths the view offers to go up to (d_model). */
export const TOPS = [16, 32, 64, 128, 256, 512, 1024] as const;
/** The smallest width measured. */
export const FIRST_WIDTH = 16;

export type StepKind = 'decode' | 'train';

/** Where the GPU's curve crosses below the CPU's (log-log between the two widths around it). */
export interface Crossing {
  /** 'crosses': at `at`; 'gpu': the GPU was faster at every width; 'cpu': never faster. */
  readonly kind: 'crosses' | 'gpu' | 'cpu';
  readonly at: number | null;
}

/**
 * The first width at which the GPU's time falls below the CPU's, placed between the two
 * measured widths around it where the log of their ratio crosses 0.
 */
export function crossing(widths: readonly number[], cpu: readonly number[], gpu: readonly number[]): Crossing {
  if (!widths.length) return { kind: 'cpu', at: null };
  if (gpu[0] < cpu[0]) return { kind: 'gpu', at: null };
  for (let i = 1; i < widths.length; i++) {
    if (gpu[i] < cpu[i]) {
      const r0 = Math.log(gpu[i - 1] / cpu[i - 1]);
      const r1 = Math.log(gpu[i] / cpu[i]);
      const t = r0 / (r0 - r1);
      const lw = Math.log(widths[i - 1]) + t * (Math.log(widths[i]) - Math.log(widths[i - 1]));
      return { kind: 'crosses', at: Math.exp(lw) };
    }
  }
  return { kind: 'cpu', at: null };
}

/** The widths measured up to `top`: 16, 32, 64, … */
export function widthsUpTo(top: number): number[] {
  const out: number[] = [];
  for (let w = FIRST_WIDTH; w <= top; w *= 2) out.push(w);
  return out;
}

function partName(k: PartKind): string {
  switch (k) {
    case 'arithmetic':
      return msg('arithmetic', { id: 'time.part.arithmetic' });
    case 'bytes':
      return msg('reading the bytes', { id: 'time.part.bytes' });
    case 'submissions':
      return msg('submissions (round trips)', { id: 'time.part.submissions' });
    case 'dispatches':
      return msg('kernel dispatches', { id: 'time.part.dispatches' });
    case 'rest':
      return msg('everything else', { id: 'time.part.rest' });
  }
}

export class TpTime extends LocalizedElement {
  static properties = {
    spawn: { attribute: false },
    auto: { attribute: false },
    rates: { state: true },
    widths: { state: true },
    busy: { state: true },
    problem: { state: true },
    top: { state: true },
    chosen: { state: true },
  };

  /** Starts the engine that measures, in a worker of its own so the page's engine is never held up (the page's `EngineClient.trainer`). */
  spawn: (() => EngineClient) | null = null;
  /** Measure as soon as the view is first on screen (else on the button). */
  auto = false;
  /** This device's measured rates (read by the browser tests). */
  rates: DeviceRates | null = null;
  /** Each measured width, smallest first (read by the browser tests). */
  widths: WidthTime[] = [];
  busy = false;
  problem = '';
  /** The widest model measured. */
  top = 128;
  /** The width whose steps are drawn part by part. */
  chosen = FIRST_WIDTH;
  private started = false;
  /** Measurements asked for (the button, `measure()`) that ran to the end; the first one, on sight, is not counted. */
  asked = 0;
  /** Bumped by each measurement: an older one stops when a newer one starts. */
  private run = 0;
  private readonly sight = new SeenController(this);
  private own: EngineClient | null = null;

  static styles = [
    panel,
    css`
      p,
      .rates {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
      .row {
        display: flex;
        gap: 10px;
        align-items: center;
        flex-wrap: wrap;
        font-size: var(--tp-text-md);
        margin-bottom: var(--tp-space-2);
      }
      .charts {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-3);
      }
      .charts figure {
        margin: 0;
        flex: 1 1 320px;
        min-width: 0;
      }
      svg.chart {
        width: 100%;
        height: auto;
        display: block;
        max-width: 520px;
      }
      figcaption {
        font-size: var(--tp-text-sm);
      }
      .legend {
        display: flex;
        gap: 14px;
        flex-wrap: wrap;
        font-size: var(--tp-text-sm);
        margin: var(--tp-space-1) 0;
      }
      .key {
        display: inline-block;
        width: 12px;
        height: 12px;
        border-radius: 2px;
        vertical-align: -2px;
        margin-right: 4px;
      }
      .bars {
        display: grid;
        grid-template-columns: minmax(7em, max-content) 1fr minmax(5em, max-content);
        gap: 6px 10px;
        align-items: center;
        font-size: var(--tp-text-sm);
        margin: var(--tp-space-2) 0;
      }
      .bar {
        display: flex;
        height: 18px;
        background: var(--tp-bg);
        border: 1px solid var(--tp-line);
        border-radius: 3px;
        overflow: hidden;
      }
      .bar span {
        height: 100%;
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
    `,
  ];

  updated(): void {
    if (!this.auto || !this.sight.seen || this.started) return;
    this.started = true;
    void this.measure(this.top, false);
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    this.run++;
    this.own?.terminate();
    this.own = null;
    this.started = false;
  }

  private caller(): EngineCaller {
    if (!this.spawn) throw new Error('the time view has no engine to measure with');
    if (!this.own) {
      const own = this.spawn();
      own.onCrash((why) => {
        if (this.own !== own) return;
        this.own = null;
        this.run++;
        this.busy = false;
        this.problem = errorText(why);
      });
      this.own = own;
    }
    return this.own;
  }

  /** Measure the device, then each width up to `top` (the page's button; tests call it too). */
  async measure(top: number = this.top, asked = true): Promise<void> {
    const run = ++this.run;
    this.top = top;
    this.busy = true;
    this.problem = '';
    this.widths = [];
    try {
      const engine = this.caller();
      const nav = globalThis.navigator as Navigator & { gpu?: unknown };
      const rates = await engine.call('timeRates', { gpu: !!nav.gpu });
      if (run !== this.run) return;
      this.rates = rates;
      for (const d_model of widthsUpTo(top)) {
        const w = await engine.call('timeWidth', { d_model, rates });
        if (run !== this.run) return;
        this.widths = [...this.widths, w];
      }
      if (!this.widths.some((w) => w.d_model === this.chosen)) this.chosen = FIRST_WIDTH;
      if (asked) this.asked++;
    } catch (e) {
      if (run === this.run) this.problem = errorText(e instanceof Error ? e.message : String(e));
    } finally {
      if (run === this.run) this.busy = false;
    }
  }

  /** The crossing of a kind of step over the widths measured on both backends. */
  crossingOf(kind: StepKind): Crossing | null {
    const both = this.widths.filter((w) => (kind === 'decode' ? w.decode_gpu : w.train_gpu));
    if (!both.length || both.length !== this.widths.length) return null;
    const cpu = both.map((w) => (kind === 'decode' ? w.decode_cpu : w.train_cpu).ms);
    const gpu = both.map((w) => (kind === 'decode' ? w.decode_gpu : w.train_gpu)!.ms);
    return crossing(
      both.map((w) => w.d_model),
      cpu,
      gpu,
    );
  }

  private chart(kind: StepKind): TemplateResult {
    const ws = this.widths;
    const cpu = ws.map((w) => [w.d_model, (kind === 'decode' ? w.decode_cpu : w.train_cpu).ms] as [number, number]);
    const gpu = ws.filter((w) => (kind === 'decode' ? w.decode_gpu : w.train_gpu)).map((w) => [w.d_model, (kind === 'decode' ? w.decode_gpu : w.train_gpu)!.ms] as [number, number]);
    const series: Series[] = [{ name: 'CPU', color: CPU, points: cpu }];
    if (gpu.length) series.push({ name: 'GPU', color: GPU, dashed: true, points: gpu });
    const cross = this.crossingOf(kind);
    const title = kind === 'decode' ? msg('One decoding step (one token, KV cache)', { id: 'time.decode' }) : msg('One training step (a batch, forward, backward, Adam)', { id: 'time.train' });
    const c = ws.length
      ? lineChart(series, {
          width: 420,
          height: 220,
          xLabel: msg('d_model (log)', { id: 'time.x' }),
          yLabel: msg('ms per step (log)', { id: 'time.y' }),
          xLog: true,
          yLog: true,
          vguide: cross?.kind === 'crosses' && cross.at !== null ? [cross.at, msg(str`GPU faster from about ${Math.round(cross.at)}`, { id: 'time.guide' })] : undefined,
        })
      : null;
    return html`<figure data-kind=${kind}>
      <h3 class="small">${title}</h3>
      ${c ? html`<svg class="chart" viewBox=${c.viewBox} role="img" aria-label=${title}>${c.body}</svg>` : nothing}
      <figcaption data-crossing=${cross?.kind ?? 'none'} data-crossing-at=${cross?.at ?? ''}>${this.crossingText(kind, cross)}</figcaption>
    </figure>`;
  }

  private crossingText(kind: StepKind, cross: Crossing | null): string {
    const ws = this.widths;
    if (!ws.length) return '';
    if (!cross) {
      return this.rates?.gpu ? '' : msg('Only the CPU was measured: this browser has no WebGPU, or it did not start.', { id: 'time.cpuOnly' });
    }
    const lo = ws[0].d_model;
    const hi = ws[ws.length - 1].d_model;
    const train = kind === 'train';
    if (cross.kind === 'gpu')
      return train
        ? msg(str`The GPU trained faster at every width measured, from d_model ${lo}.`, { id: 'time.gpuAlways.train' })
        : msg(str`The GPU decoded faster at every width measured, from d_model ${lo}.`, { id: 'time.gpuAlways.decode' });
    if (cross.kind === 'cpu')
      return train
        ? msg(str`The CPU trained faster at every width measured, up to d_model ${hi}: on this device each step is too small for the GPU to pay for its round trips and dispatches.`, { id: 'time.cpuAlways.train' })
        : msg(str`The CPU decoded faster at every width measured, up to d_model ${hi}: on this device each token is too small a step for the GPU to pay for its round trips and dispatches.`, { id: 'time.cpuAlways.decode' });
    const at = Math.round(cross.at ?? 0);
    return train
      ? msg(str`The curves cross at d_model ≈ ${at}: below it the CPU trains faster, above it the GPU does.`, { id: 'time.crosses.train' })
      : msg(str`The curves cross at d_model ≈ ${at}: below it the CPU decodes faster, above it the GPU does.`, { id: 'time.crosses.decode' });
  }

  /** One step drawn as its parts, on a scale shared by the steps of its kind. */
  private bar(label: string, s: StepTime, scale: number, width: number, kind: StepKind, backend: 'cpu' | 'gpu'): TemplateResult {
    const parts = s.parts.filter((p) => p.ms > 0);
    const total = parts.reduce((a, p) => a + p.ms, 0);
    const fill = Math.max(total, s.ms);
    return html`<span>${label}</span>
      <div
        class="bar"
        role="img"
        data-width=${width}
        data-kind=${kind}
        data-backend=${backend}
        aria-label=${`${label}: ${ms(s.ms)}; ${s.parts.map((p) => `${partName(p.kind)} ${ms(p.ms)}`).join(', ')}`}
        style=${styles(`width:${Math.max(2, (100 * fill) / scale).toFixed(2)}%`)}
      >
        ${parts.map((p) => html`<span title=${`${partName(p.kind)}: ${ms(p.ms)}`} style=${styles(`width:${((100 * p.ms) / fill).toFixed(2)}%;background:${PART_COLOR[p.kind]}`)}></span>`)}
      </div>
      <span class="total">${ms(s.ms)}</span>`;
  }

  private anatomy(): TemplateResult | typeof nothing {
    const w = this.widths.find((x) => x.d_model === this.chosen) ?? this.widths[0];
    if (!w) return nothing;
    const rows: [StepKind, 'cpu' | 'gpu', StepTime | null][] = [
      ['decode', 'cpu', w.decode_cpu],
      ['decode', 'gpu', w.decode_gpu],
      ['train', 'cpu', w.train_cpu],
      ['train', 'gpu', w.train_gpu],
    ];
    const label = (k: StepKind, b: 'cpu' | 'gpu') =>
      k === 'decode' ? (b === 'cpu' ? msg('decoding, CPU', { id: 'time.row.decodeCpu' }) : msg('decoding, GPU', { id: 'time.row.decodeGpu' })) : b === 'cpu' ? msg('training, CPU', { id: 'time.row.trainCpu' }) : msg('training, GPU', { id: 'time.row.trainGpu' });
    const scale = (k: StepKind) => Math.max(...rows.filter((r) => r[0] === k && r[2]).map((r) => Math.max(r[2]!.ms, r[2]!.parts.reduce((a, p) => a + p.ms, 0))));
    const gd = w.decode_gpu;
    const overhead = gd ? gd.parts.filter((p) => p.kind === 'submissions' || p.kind === 'dispatches').reduce((a, p) => a + p.ms, 0) : 0;
    // The GPU's parts only where a GPU step was measured.
    const kinds: PartKind[] = gd || w.train_gpu ? ['arithmetic', 'bytes', 'submissions', 'dispatches', 'rest'] : ['arithmetic', 'bytes', 'rest'];
    return html`<h3 class="small">${msg('One step, part by part', { id: 'time.anatomy' })}</h3>
      <div class="row">
        <label for="width">${msg('Width', { id: 'time.width' })}</label>
        <select id="width" .value=${String(w.d_model)} @change=${(e: Event) => (this.chosen = Number((e.target as HTMLSelectElement).value))}>
          ${this.widths.map((x) => html`<option value=${x.d_model} ?selected=${x.d_model === w.d_model}>d_model ${x.d_model}</option>`)}
        </select>
        <span class="muted">${msg(str`${int(w.params)} parameters, ${w.layers} layers, ${w.n_heads} heads, d_ff ${w.d_ff}, batches of ${w.batch}`, { id: 'time.shape' })}</span>
      </div>
      <div class="legend">${kinds.map((k) => html`<span><span class="key" style=${styles(`background:${PART_COLOR[k]}`)}></span>${partName(k)}</span>`)}</div>
      <div class="bars">${rows.filter((r) => r[2]).map(([k, b, s]) => this.bar(label(k, b), s!, scale(k), w.d_model, k, b))}</div>
      ${gd && gd.ms > 0
        ? html`<p data-overhead=${overhead / gd.ms}>
            ${msg(
              str`At d_model ${w.d_model} one token on the GPU takes ${ms(gd.ms)}. Its round trips and kernel launches (submissions: ${num(gd.submissions, 3)}, dispatches: ${num(gd.dispatches, 3)}) account for ${ms(overhead)} of it (${percent(Math.min(1, overhead / gd.ms), 0)}) before any arithmetic. The CPU takes ${ms(w.decode_cpu.ms)} for the same token.`,
              { id: 'time.overheadNote' },
            )}
          </p>`
        : nothing}
      ${w.decode_cpu.overlapped || w.train_cpu.overlapped || gd?.overlapped || w.train_gpu?.overlapped
        ? html`<p class="muted">${msg('Where the estimated parts add up to more than the step took, the device did them at the same time, and nothing is left for the rest.', { id: 'time.overlap' })}</p>`
        : nothing}
      <div class="wrap" ${scrollRegion(scrollLabel())}>
        <table aria-label=${msg('each step measured and counted', { id: 'time.table' })}>
          <thead>
            <tr>
              <th>${msg('step', { id: 'time.th.step' })}</th>
              <th>${msg('time', { id: 'time.th.time' })}</th>
              <th>${msg('multiply-adds', { id: 'time.th.macs' })}</th>
              <th>${msg('bytes read', { id: 'time.th.bytes' })}</th>
              <th>${msg('submissions', { id: 'time.th.subs' })}</th>
              <th>${msg('dispatches', { id: 'time.th.disp' })}</th>
              ${kinds.map((k) => html`<th>${partName(k)}</th>`)}
            </tr>
          </thead>
          <tbody>
            ${rows
              .filter((r) => r[2])
              .map(([k, b, s]) => {
                const part = (kind: PartKind) => s!.parts.find((p) => p.kind === kind);
                return html`<tr data-width=${w.d_model} data-kind=${k} data-backend=${b} data-ms=${s!.ms} data-macs=${s!.multiply_adds} data-bytes=${s!.bytes} data-submissions=${s!.submissions} data-dispatches=${s!.dispatches} data-part-arithmetic=${part('arithmetic')?.ms ?? nothing} data-part-bytes=${part('bytes')?.ms ?? nothing} data-part-submissions=${part('submissions')?.ms ?? nothing} data-part-dispatches=${part('dispatches')?.ms ?? nothing} data-part-rest=${part('rest')?.ms ?? nothing} data-overlapped=${s!.overlapped ? '1' : '0'}>
                  <td>${label(k, b)}</td>
                  <td>${ms(s!.ms)}</td>
                  <td>${int(s!.multiply_adds)}</td>
                  <td>${bytes(s!.bytes)}</td>
                  <td>${b === 'gpu' ? num(s!.submissions, 3) : '—'}</td>
                  <td>${b === 'gpu' ? num(s!.dispatches, 3) : '—'}</td>
                  ${kinds.map((kind) => html`<td>${part(kind) ? ms(part(kind)!.ms) : '—'}</td>`)}
                </tr>`;
              })}
          </tbody>
        </table>
      </div>`;
  }

  private ratesText(): TemplateResult | typeof nothing {
    const r = this.rates;
    if (!r) return nothing;
    const g = r.gpu;
    return html`<div class="rates" data-gflops=${r.cpu_gflops} data-round-trip=${g?.round_trip_ms ?? ''} data-dispatch=${g?.dispatch_ms ?? ''}>
      ${msg(str`Measured here: the faster of the engine's two matrix-product kernels reaches ${num(r.cpu_gflops, 3)} GFLOP/s on this CPU.`, { id: 'time.rates.cpu' })}
      ${g
        ? html`${msg(str`On the GPU one round trip — submit, wait, read back — takes ${ms(g.round_trip_ms)}, and each further kernel launch adds ${ms(g.dispatch_ms)}.`, { id: 'time.rates.gpu' })}
          ${g.software ? html`<strong data-software>${msg('This browser’s WebGPU runs in software, on the CPU: its times show the cost of each submission and launch, but say little about a real GPU’s arithmetic.', { id: 'time.rates.software' })}</strong>` : nothing}`
        : r.gpu_error
          ? html`${msg('No GPU could be started here: only the CPU is measured.', { id: 'time.rates.noGpu' })}
              <details><summary>${msg('The engine’s reason', { id: 'time.rates.why' })}</summary><code data-gpu-error>${r.gpu_error}</code></details>`
          : msg('This browser has no WebGPU: only the CPU is measured.', { id: 'time.rates.noWebgpu' })}
    </div>`;
  }

  render() {
    const first = this.widths[0];
    return html`<section class="card" aria-labelledby="h" aria-busy=${this.busy ? 'true' : 'false'} data-measured=${this.widths.length}>
      <h2 id="h">${msg('Where the time goes', { id: 'time.title' })}</h2>
      <p>
        ${first
          ? msg(
              str`The lab's reverse model (${first.layers} layers, ${first.n_heads} heads), made wider step by step with random weights, is timed here on this device: one decoding step and one training step on the CPU and on the GPU. A step's time is split into what this device's own measured rates say its parts cost.`,
              { id: 'time.intro' },
            )
          : msg("The lab's reverse model, made wider step by step with random weights, is timed here on this device: one decoding step and one training step on the CPU and on the GPU.", { id: 'time.introWaiting' })}
      </p>
      <div class="row">
        <label for="top">${msg('Measure up to d_model', { id: 'time.top' })}</label>
        <select id="top" .value=${String(this.top)} @change=${(e: Event) => (this.top = Number((e.target as HTMLSelectElement).value))}>
          ${TOPS.map((t) => html`<option value=${t} ?selected=${t === this.top}>${t}</option>`)}
        </select>
        <button type="button" ?disabled=${this.busy} @click=${() => void this.measure(this.top)}>${this.rates ? msg('Measure again', { id: 'time.again' }) : msg('Measure on this device', { id: 'time.start' })}</button>
        <span class="muted" role="status">${this.busy ? msg(str`Measuring… ${this.widths.length} of ${widthsUpTo(this.top).length} widths done`, { id: 'time.busy' }) : ''}</span>
      </div>
      ${!this.rates && !this.busy && !this.problem ? html`<p class="muted">${msg('A measurement takes a few seconds per width, longer on a GPU that runs in software; the page stays usable meanwhile.', { id: 'time.idle' })}</p>` : nothing}
      ${this.problem ? html`<p class="muted" role="alert">${this.problem}</p>` : nothing}
      ${this.ratesText()}
      ${this.widths.length
        ? html`<div class="legend"><span>${swatch(CPU)}CPU</span>${this.rates?.gpu ? html`<span>${swatch(GPU, true)}GPU</span>` : nothing}</div>
            <div class="charts">${this.chart('decode')}${this.chart('train')}</div>
            ${this.anatomy()}`
        : nothing}
    </section>`;
  }
}

customElements.define('tp-time', TpTime);
