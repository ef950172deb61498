// Which backend runs, why, and how far the GPU's logits are from the CPU's on this device.

import { html, css, nothing } from 'lit';
import { msg } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { backendDetail, backendReason, backendSummary, raceLine } from '../i18n/engine-text';
import type { BackendInfo, BackendWant } from '../engine/protocol';
import type { EngineCaller } from '../engine/client';
import { panel } from '../ui/shared';
import { fmt } from '../ui/palette';

export class TpBackendBadge extends LocalizedElement {
  static properties = { info: { attribute: false }, asked: { type: String }, engine: { attribute: false }, measuring: { state: true } };

  info: BackendInfo | null = null;
  /** The backend the settings ask for (the control's choice). */
  asked: BackendWant = 'auto';
  /** The engine, asked to measure again on demand (absent: no button). */
  engine: EngineCaller | null = null;
  private measuring = false;

  /** Race the backends again on the loaded model (the settings' choice stands). */
  private async measure() {
    if (!this.engine || this.measuring) return;
    this.measuring = true;
    try {
      await this.engine.call('measureBackend', { backend: this.asked });
    } finally {
      this.measuring = false;
    }
  }

  static styles = [
    panel,
    css`
      .badge {
        display: flex;
        gap: var(--tp-space-2);
        align-items: center;
        flex-wrap: wrap;
        font-size: var(--tp-text-md);
        padding: 6px 10px;
        border-radius: 8px;
        border: 1px solid var(--tp-line);
        background: var(--tp-bg);
      }
      .name {
        font-weight: 700;
        padding: 1px 8px;
        border-radius: 999px;
        color: var(--tp-on-accent);
      }
      .webgpu {
        background: var(--tp-gpu);
      }
      .cpu {
        background: var(--tp-cpu);
      }
      .runs {
        font-weight: 600;
      }
      .race {
        flex-basis: 100%;
      }
    `,
  ];

  render() {
    const i = this.info;
    if (!i) return html`<div class="badge" role="status">${msg('starting the engine…')}</div>`;
    return html`<div class="badge" role="status" data-backend=${i.backend}>
      <span class="name ${i.backend}">${i.backend === 'webgpu' ? 'WebGPU' : 'CPU'}</span>
      <span class="runs" data-backend-runs=${i.backend}>${backendSummary(this.asked, i)}</span>
      <span class="reason">${backendReason(i.status)}${i.adapter?.trim() ? ` (${i.adapter.trim()})` : ''}${msg('.')}</span>
      ${i.detail ? html`<details class="small"><summary>${msg('why')}</summary><span class="muted">${backendDetail(i.status) ?? i.detail}</span></details>` : nothing}
      ${i.parity !== null
        ? html`<span class="muted" data-parity=${i.parity}>${msg('largest GPU−CPU logit difference on this device:')} <b class="mono">${fmt(i.parity)}</b>${Number.isFinite(i.parity)
            ? nothing
            : html` — ${msg('the GPU returned NaN or infinite logits')}`}</span>`
        : nothing}
      ${i.race ? html`<span class="muted race" data-race-cpu=${i.race.cpu_ms} data-race-gpu=${i.race.gpu_ms}>${raceLine(i.race)}</span>` : nothing}
      ${this.engine && this.asked !== 'cpu'
        ? html`<button type="button" class="small" data-measure ?disabled=${this.measuring} @click=${() => void this.measure()}>${this.measuring ? msg('measuring…', { id: 'backend.measuring' }) : msg('measure again', { id: 'backend.measure' })}</button>`
        : nothing}
    </div>`;
  }
}

customElements.define('tp-backend-badge', TpBackendBadge);
