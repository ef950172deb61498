// The Noam learning-rate schedule for the running model's d_model: a linear warmup for
// `warmup` steps, then decay as 1/√step, and optionally a cooldown that brings the rate
// down in a straight line over the last share of the steps; the engine computes every
// point, the cooled steps and the peak.

import { html, css, svg, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import type { Schedule } from '../engine/protocol';
import { emit, panel } from '../ui/shared';
import { int } from '../ui/format';

/** A learning rate to three significant digits: 0.00456. */
function lrText(x: number): string {
  return x.toPrecision(3);
}

const W = 380;
const H = 180;
const PAD = { l: 58, r: 12, t: 26, b: 30 };

export class TpSchedule extends LocalizedElement {
  static properties = {
    schedule: { attribute: false },
  };

  schedule: Schedule | null = null;

  static styles = [
    panel,
    css`
      svg {
        width: 100%;
        max-width: 560px;
        height: auto;
        display: block;
      }
      .axis {
        stroke: var(--tp-muted);
        stroke-width: 1;
      }
      .curve {
        fill: none;
        stroke: var(--tp-accent);
        stroke-width: 2;
      }
      .guide {
        stroke: var(--tp-warn);
        stroke-dasharray: 3 3;
      }
      .peak {
        fill: var(--tp-warn);
      }
      .bend {
        stroke: var(--tp-muted);
        stroke-dasharray: 2 4;
      }
      text {
        font-size: 11px;
        fill: var(--tp-fg);
      }
      text.muted {
        fill: var(--tp-muted);
      }
      .controls {
        display: flex;
        gap: 10px;
        align-items: center;
        flex-wrap: wrap;
        margin-bottom: 6px;
      }
      input[type='number'] {
        width: 7em;
      }
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
    `,
  ];

  private onWarmup(e: Event) {
    const input = e.target as HTMLInputElement;
    const v = Math.round(Number(input.value));
    if (!Number.isFinite(v) || v < 100 || v > 200000) {
      input.setCustomValidity(msg('warmup must be a whole number of steps from 100 to 200000'));
      input.reportValidity();
      return;
    }
    input.setCustomValidity('');
    emit(this, 'tp-warmup', v);
  }

  private onCooldown(e: Event) {
    const input = e.target as HTMLInputElement;
    const v = Number(input.value);
    if (input.value.trim() === '' || !Number.isFinite(v) || v < 0 || v > 1) {
      input.setCustomValidity(msg('the cooldown is a share of the steps, from 0 to 1'));
      input.reportValidity();
      return;
    }
    input.setCustomValidity('');
    emit(this, 'tp-cooldown', v);
  }

  private chart(s: Schedule) {
    const last = s.steps[s.steps.length - 1];
    const top = s.peak_lr * 1.1;
    const x = (step: number) => PAD.l + ((step - 1) / (last - 1)) * (W - PAD.l - PAD.r);
    const y = (lr: number) => H - PAD.b - (lr / top) * (H - PAD.t - PAD.b);
    const pts = s.steps.map((st, i) => `${x(st).toFixed(1)},${y(s.lr[i]).toFixed(1)}`).join(' ');
    const px = x(s.peak_step);
    const py = y(s.peak_lr);
    const anchor = px > W * 0.6 ? 'end' : 'start';
    const label = msg(str`peak: step ${int(s.peak_step)}, lr ${lrText(s.peak_lr)}`);
    const end = lrText(s.lr[s.lr.length - 1]);
    const bend = last - s.cooldown_steps + 1;
    return html`<svg
      viewBox="0 0 ${W} ${H}"
      role="img"
      aria-label=${s.cooldown_steps > 0
        ? msg(str`Noam learning rate against step for d_model ${s.d_model} and warmup ${s.warmup}, with a cooldown over the last ${int(s.cooldown_steps)} steps: ${label}, then falls in a straight line from step ${int(bend)} to ${end} at step ${int(last)}`)
        : msg(str`Noam learning rate against step for d_model ${s.d_model} and warmup ${s.warmup}: rises linearly to ${label}, then falls as one over the square root of the step, to ${end} at step ${last}`)}
    >
      ${svg`
        <line class="axis" x1=${PAD.l} y1=${H - PAD.b} x2=${W - PAD.r} y2=${H - PAD.b}></line>
        <line class="axis" x1=${PAD.l} y1=${PAD.t - 6} x2=${PAD.l} y2=${H - PAD.b}></line>
        <line class="guide" x1=${px} y1=${py} x2=${px} y2=${H - PAD.b}></line>
        <line class="guide" x1=${PAD.l} y1=${py} x2=${px} y2=${py}></line>
        ${s.cooldown_steps > 0 && s.cooldown_steps < last ? svg`<line class="bend" data-bend=${bend} x1=${x(bend)} y1=${PAD.t + 6} x2=${x(bend)} y2=${H - PAD.b}></line>` : nothing}
        <polyline class="curve" points=${pts}></polyline>
        <circle class="peak" cx=${px} cy=${py} r="4"></circle>
        <text x=${px + (anchor === 'start' ? 6 : -6)} y=${py - 8} text-anchor=${anchor} data-peak>${label}</text>
        <text x=${PAD.l - 4} y=${py + 4} text-anchor="end" class="muted">${lrText(s.peak_lr)}</text>
        <text x=${PAD.l - 4} y=${H - PAD.b + 4} text-anchor="end" class="muted">0</text>
        <text x=${PAD.l} y=${H - PAD.b + 16} text-anchor="start" class="muted">1</text>
        <text x=${px} y=${H - PAD.b + 16} text-anchor="middle" class="muted">${int(s.peak_step)}</text>
        <text x=${W - PAD.r} y=${H - PAD.b + 16} text-anchor="end" class="muted">${int(last)}</text>
        <text x=${(W + PAD.l) / 2} y=${H - 5} text-anchor="middle" class="muted">${msg('step')}</text>
        <text x="12" y=${(H - PAD.b + PAD.t) / 2} text-anchor="middle" class="muted" transform=${`rotate(-90 12 ${(H - PAD.b + PAD.t) / 2})`}>${msg('learning rate')}</text>
      `}
    </svg>`;
  }

  render() {
    const s = this.schedule;
    return html`<section class="card" aria-labelledby="h">
      <h2 id="h">${msg('Noam schedule')} <span class="sub">${msg('learning rate vs step')}</span></h2>
      <p>
        <span class="mono">lr = d_model^−0.5 · min(step^−0.5, step · warmup^−1.5)</span>${msg(': a linear warmup, then decay as 1/√step.')}
        ${msg('The peak sits at step = warmup, with lr = (d_model · warmup)^−0.5')}${s ? msg(str` (d_model = ${s.d_model} here)`) : nothing}${msg('.')}
      </p>
      ${s && s.cooldown_steps > 0
        ? html`<p data-cooldown>
            ${msg(str`With the cooldown, the last ${int(s.cooldown_steps)} of the ${int(s.steps[s.steps.length - 1])} steps take a share of that rate that falls in a straight line, to ${lrText(s.lr[s.lr.length - 1])} at the last step: the small final updates let the weights settle.`)}
          </p>`
        : nothing}
      <div class="controls">
        <label
          >${msg('warmup steps')}
          <input
            type="number"
            min="100"
            max="200000"
            step="100"
            .value=${String(s?.warmup ?? 4000)}
            aria-label=${msg('warmup steps of the Noam schedule')}
            @change=${this.onWarmup}
          />
        </label>
        <label
          >${msg('cooldown share')}
          <input
            type="number"
            min="0"
            max="1"
            step="0.1"
            .value=${String(s ? Math.round((1000 * s.cooldown_steps) / s.steps[s.steps.length - 1]) / 1000 : 0)}
            aria-label=${msg('share of the steps that cool down at the end of the schedule')}
            @change=${this.onCooldown}
          />
        </label>
      </div>
      ${s ? this.chart(s) : html`<p class="muted">${msg('Waiting for the model…')}</p>`}
    </section>`;
  }
}

customElements.define('tp-schedule', TpSchedule);
