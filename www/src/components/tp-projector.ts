// <tp-projector-link>: the corner of the projector view (../components/transformer-playground.ts,
// "Show on a projector") with the class link and its QR code, for students who come in late.
// Loaded only when a view is projected, with the QR encoder (uqr) it draws with.

import { html, css, nothing } from 'lit';
import { msg } from '@lit/localize';
import { encode } from 'uqr';
import { LocalizedElement } from '../i18n/locale';
import { panel } from '../ui/shared';

export class TpProjectorLink extends LocalizedElement {
  static properties = {
    link: { type: String },
  };

  /** The link the QR code holds: the page as it stands (a class link keeps its locks). */
  link = '';

  static styles = [
    panel,
    css`
      :host {
        display: block;
        background: #fff;
        color: #000;
        border: 1px solid var(--tp-line);
        border-radius: var(--tp-radius);
        padding: var(--tp-space-2);
        box-shadow: var(--tp-shadow);
        width: 13rem;
      }
      canvas {
        display: block;
        width: 100%;
        height: auto;
        image-rendering: pixelated;
      }
      p {
        margin: var(--tp-space-1) 0 0;
        font-size: var(--tp-text-sm);
        line-height: 1.3;
      }
      .warn {
        color: #8a3b00;
        font-size: var(--tp-text-xs);
      }
      .url {
        font-family: var(--tp-mono);
        font-size: var(--tp-text-xs);
        overflow-wrap: anywhere;
        max-height: 4.2em;
        overflow: hidden;
        color: #333;
      }
    `,
  ];

  protected updated(): void {
    const canvas = this.renderRoot.querySelector('canvas');
    if (!canvas || !this.link) return;
    // The medium error correction (15 %): still read from the back of a room.
    let qr: ReturnType<typeof encode>;
    try {
      qr = encode(this.link, { ecc: 'M', border: 2 });
    } catch {
      // Longer than a QR code holds: the link stays as text below.
      canvas.width = 0;
      canvas.height = 0;
      canvas.dataset.modules = '0';
      return;
    }
    const scale = Math.max(2, Math.floor(360 / qr.size));
    canvas.width = qr.size * scale;
    canvas.height = qr.size * scale;
    const g = canvas.getContext('2d');
    if (!g) return;
    g.fillStyle = '#ffffff';
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.fillStyle = '#000000';
    qr.data.forEach((row, y) => row.forEach((dark, x) => dark && g.fillRect(x * scale, y * scale, scale, scale)));
    canvas.dataset.modules = String(qr.size);
  }

  render() {
    return html`<canvas data-projector-qr role="img" aria-label=${msg('QR code of the class link', { id: 'projector.qr' })}></canvas>
      <p><strong>${msg('Join the class: scan, or open', { id: 'projector.join' })}</strong></p>
      <p class="url" data-projector-link>${this.link}</p>
      ${onlyHere(this.link)
        ? html`<p class="warn" data-projector-local>
            ${msg('This address opens only on this computer. Serve the page on the network with', { id: 'projector.local' })}
            <code>cargo xtask serve --lan</code>
            ${msg('and open it by the address it prints.', { id: 'projector.local-then' })}
          </p>`
        : nothing}`;
  }
}

/** A link that names this computer (localhost, 127.x, ::1): students' devices cannot open it. */
function onlyHere(link: string): boolean {
  try {
    const h = new URL(link).hostname;
    return h === 'localhost' || h.endsWith('.localhost') || /^127\./.test(h) || h === '[::1]';
  } catch {
    return false;
  }
}

customElements.define('tp-projector-link', TpProjectorLink);
