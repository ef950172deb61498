// Which backend runs, why, and how far the GPU's logits are from the CPU's on this device.

import { html, css, nothing } from 'lit';
import { msg } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { backendDetail, backendReason, backendSummary } from '../i18n/engine-text';
import type { BackendInfo } from '../engine/protocol';
import { panel } from '../ui/shared';
import { fmt } from '../ui/palette';

export class TpBackendBadge extends LocalizedElement {
  static properties = { info: { attribute: false }, asked: { type: String } };

  info: BackendInfo | null = null;
  /** The backend the settings ask for (the control's choice). */
  asked: 'webgpu' | 'cpu' = 'webgpu';

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
    </div>`;
  }
}

customElements.define('tp-backend-badge', TpBackendBadge);
