// One small progress bar for every slow step (starting the engine, downloading a model, a
// long computation): a role="progressbar" with its numbers, what is happening in words,
// and an estimate of the time left once enough has been done to make one. With no total
// it says what it is doing and how long it has taken, so the panel never looks frozen.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { styles } from '../ui/shared';
import { bytes } from '../ui/format';


/** Seconds left at the rate so far; null until there is a rate worth trusting. */
export function secondsLeft(done: number, total: number | null, elapsedMs: number): number | null {
  if (total === null || done <= 0 || done >= total || elapsedMs < 300) return null;
  return ((total - done) * elapsedMs) / done / 1000;
}

export class TpProgress extends LocalizedElement {
  static properties = {
    label: {},
    done: { type: Number },
    total: { type: Number },
    unit: {},
    since: { type: Number },
    now: { state: true },
  };

  /** What is happening, in words (also the bar's accessible name). */
  label = '';
  done = 0;
  /** NaN (or absent) when the total is unknown. */
  total = Number.NaN;
  /** 'bytes' shows sizes; anything else is a plain count. */
  unit = 'bytes';
  /** performance.now() when the step began (for the time estimate). */
  since = 0;
  now = performance.now();
  private timer: ReturnType<typeof setInterval> | undefined;

  static styles = css`
    :host {
      display: block;
      font-size: var(--tp-text-md);
      margin: 6px 0;
    }
    .track {
      height: 8px;
      border: 1px solid var(--tp-muted, #5b6470);
      border-radius: 4px;
      overflow: hidden;
      background: var(--tp-bg, transparent);
      max-width: 28em;
    }
    .fill {
      height: 100%;
      width: 0;
      background: var(--tp-accent, #2f5bd3);
    }
    .track.unknown .fill {
      width: 30%;
    }
    .text {
      margin-top: 3px;
      font-variant-numeric: tabular-nums;
      color: var(--tp-fg, inherit);
    }
  `;

  connectedCallback(): void {
    super.connectedCallback();
    this.timer = setInterval(() => (this.now = performance.now()), 500);
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    clearInterval(this.timer);
  }

  private amount(n: number): string {
    return this.unit === 'bytes' ? bytes(n) : String(n);
  }

  render() {
    const known = Number.isFinite(this.total) && this.total > 0;
    const total = known ? this.total : null;
    // `now` only ticks the clock between updates; the estimate reads the time at drawing.
    void this.now;
    const elapsed = Math.max(0, performance.now() - this.since);
    const left = secondsLeft(this.done, total, elapsed);
    const frac = total ? Math.min(1, this.done / total) : 0;
    const counts = total
      ? msg(str`${this.amount(this.done)} of ${this.amount(total)}`)
      : this.done > 0
        ? msg(str`${this.amount(this.done)} so far`)
        : '';
    const time = left !== null ? msg(str`about ${Math.ceil(left)} s left`) : msg(str`${(elapsed / 1000).toFixed(0)} s so far`);
    return html`<div
        class="track ${known ? '' : 'unknown'}"
        role="progressbar"
        aria-label=${this.label}
        aria-valuemin="0"
        aria-valuemax=${known ? String(this.total) : nothing}
        aria-valuenow=${known ? String(this.done) : nothing}
        aria-valuetext=${[counts, time].filter(Boolean).join(msg(', '))}
        data-done=${this.done}
        data-total=${known ? this.total : ''}
      >
        <div class="fill" style=${styles(`width: ${(frac * 100).toFixed(1)}%`)}></div>
      </div>
      <div class="text">${this.label}${counts ? html` — <span data-counts>${counts}</span>` : nothing} · ${time}</div>`;
  }
}

customElements.define('tp-progress', TpProgress);
