// <tp-embed-dialog>: what "Embed" in a view's ⋯ menu opens. The snippet that puts this view,
// with its settings as they are (play state included), into a blog post — as the script and
// the element, or as an iframe of embed.html — copied with one click, and below it a live
// preview: the snippet's own element, parsed from the snippet's text and started here, so
// the preview is exactly what the post will show. The playground gives the snippets
// (`make`, from ../state/share.ts); this element draws the dialog and the preview.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { panel } from '../ui/shared';

export type EmbedForm = 'element' | 'iframe';

export interface EmbedRequest {
  /** The view's title. */
  title: string;
  /** The snippets for the picture alone (`alone`, with the parts in `keep`) or the full view, and the iframe's height. */
  make: (alone: boolean, height: number, keep: readonly string[]) => { element: string; iframe: string };
  /** The parts of the view that may be kept beside the picture alone (../views/alone.ts, the `keep` attribute's names). */
  parts: readonly string[];
  /** The view's height as drawn now, the iframe's until its page reports one. */
  height: number;
}

export class TpEmbedDialog extends LocalizedElement {
  static properties = {
    request: { attribute: false },
    alone: { state: true },
    form: { state: true },
    said: { state: true },
    previewHeight: { state: true },
    keep: { state: true },
  };

  /** The parts kept beside the picture alone (`keep="…"`). */
  keep: readonly string[] = [];

  request: EmbedRequest | null = null;
  /** The picture alone (`chrome="none"`), as a post usually wants it. */
  alone = true;
  form: EmbedForm = 'element';
  said = '';
  /** The preview's height once live (the iframe form's height). */
  previewHeight = 0;
  private shownSnippet = '';

  static styles = [
    panel,
    css`
      dialog {
        width: min(56rem, calc(100vw - 2 * var(--tp-space-3)));
        max-height: calc(100vh - 2 * var(--tp-space-4));
        box-sizing: border-box;
        padding: var(--tp-space-4);
        color: var(--tp-fg);
        background: var(--tp-bg);
        border: 1px solid var(--tp-line);
        border-radius: var(--tp-radius);
        box-shadow: var(--tp-shadow);
      }
      dialog::backdrop {
        background: rgba(0, 0, 0, 0.45);
      }
      h2 {
        margin: 0 0 var(--tp-space-2);
        padding: 0;
      }
      .row {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-2) var(--tp-space-4);
        align-items: center;
        margin: var(--tp-space-2) 0;
        font-size: var(--tp-text-md);
      }
      textarea {
        box-sizing: border-box;
        width: 100%;
        min-height: 7.5rem;
        font-family: var(--tp-mono);
        font-size: var(--tp-text-sm);
        color: var(--tp-fg);
        background: var(--tp-page);
        border: 1px solid var(--tp-line);
        border-radius: var(--tp-radius-sm);
        padding: var(--tp-space-2);
        resize: vertical;
      }
      .actions {
        justify-content: space-between;
      }
      .said {
        color: var(--tp-muted);
        font-size: var(--tp-text-sm);
      }
      .preview-label {
        margin: var(--tp-space-3) 0 var(--tp-space-1);
        font-size: var(--tp-text-sm);
        color: var(--tp-muted);
      }
      .preview {
        border: 1px dashed var(--tp-line);
        border-radius: var(--tp-radius-sm);
        padding: var(--tp-space-2);
        background: var(--tp-page);
      }
      fieldset.keep {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-1) var(--tp-space-3);
        margin: var(--tp-space-2) 0;
        border: 1px solid var(--tp-line);
        border-radius: var(--tp-radius);
      }
      fieldset.keep legend {
        font-size: var(--tp-text-sm);
      }
      .hint {
        font-size: var(--tp-text-sm);
        color: var(--tp-muted);
        margin: var(--tp-space-1) 0 0;
      }
    `,
  ];

  private get dialog(): HTMLDialogElement | null {
    return this.renderRoot.querySelector('dialog');
  }

  /** The snippet shown now (element or iframe form). */
  get snippet(): string {
    const r = this.request;
    if (!r) return '';
    const s = r.make(this.alone, this.previewHeight || r.height, this.keep);
    return this.form === 'element' || !s.iframe ? s.element : s.iframe;
  }

  /** The element form's snippet now (what the preview draws). */
  private get elementSnippet(): string {
    return this.request?.make(this.alone, 0, this.keep).element ?? '';
  }

  async show(): Promise<void> {
    await this.updateComplete;
    this.said = '';
    if (!this.dialog?.open) this.dialog?.showModal();
    this.renderPreview();
    this.renderRoot.querySelector<HTMLElement>('[data-embed-copy]')?.focus();
  }

  close(): void {
    this.dialog?.close();
  }

  disconnectedCallback(): void {
    this.clearPreview();
    super.disconnectedCallback();
  }

  private clearPreview(): void {
    this.renderRoot.querySelector('.preview')?.replaceChildren();
    this.shownSnippet = '';
  }

  /**
   * Draw the snippet's element in the preview: the snippet's text parsed as HTML (inert,
   * in a template), its <transformer-playground> taken as it is and started here.
   */
  private renderPreview(): void {
    const box = this.renderRoot.querySelector<HTMLElement>('.preview');
    const snippet = this.elementSnippet;
    if (!box || !this.dialog?.open || snippet === this.shownSnippet) return;
    this.shownSnippet = snippet;
    const t = document.createElement('template');
    // The room the snippet holds (its style attribute) is set through the CSSOM: a page under
    // a strict policy (style-src without 'unsafe-inline', as this folder's own) refuses a
    // style attribute in parsed HTML, and would report a violation for the preview.
    const room = /\sstyle="([^"]*)"/.exec(snippet)?.[1] ?? '';
    t.innerHTML = snippet.replace(/\sstyle="[^"]*"/, '');
    const el = t.content.querySelector('transformer-playground');
    box.replaceChildren();
    this.previewHeight = 0;
    if (!el) return;
    const live = document.importNode(el, true) as HTMLElement & { ready?: Promise<void> };
    for (const d of room.split(';')) {
      const at = d.indexOf(':');
      if (at > 0) live.style.setProperty(d.slice(0, at).trim(), d.slice(at + 1).trim());
    }
    box.append(live);
    void live.ready?.then(async () => {
      await (live as unknown as { updateComplete?: Promise<unknown> }).updateComplete;
      if (live.isConnected) this.previewHeight = Math.ceil(live.getBoundingClientRect().height);
    });
  }

  protected updated(): void {
    this.renderPreview();
  }

  private toggle(part: string, on: boolean): void {
    const parts = this.request?.parts ?? [];
    this.keep = parts.filter((p) => (p === part ? on : this.keep.includes(p)));
  }

  private async copy(): Promise<void> {
    const text = this.snippet;
    try {
      await navigator.clipboard.writeText(text);
      this.said = msg('Copied. Paste it into the HTML of your post.', { id: 'embed.copied' });
    } catch {
      // No clipboard (permissions, an insecure page): the text is selected to copy by hand.
      const area = this.renderRoot.querySelector<HTMLTextAreaElement>('textarea');
      area?.focus();
      area?.select();
      this.said = msg('Selected: copy it with Ctrl+C (⌘C).', { id: 'embed.copy-by-hand' });
    }
  }

  render() {
    const r = this.request;
    return html`<dialog aria-labelledby="embed-h" @close=${() => this.clearPreview()} @cancel=${() => this.clearPreview()}>
      ${r
        ? html`<h2 id="embed-h">${msg(str`Embed: ${r.title}`, { id: 'embed.heading' })}</h2>
            <div class="row">
              <label
                ><input type="checkbox" data-embed-alone .checked=${this.alone} @change=${(e: Event) => (this.alone = (e.target as HTMLInputElement).checked)} />
                ${msg('Just the picture (no title, text or controls)', { id: 'embed.alone' })}</label
              >
              <span role="radiogroup" aria-label=${msg('form of the snippet', { id: 'embed.form' })}>
                <label
                  ><input type="radio" name="form" value="element" data-embed-form="element" .checked=${this.form === 'element'} @change=${() => (this.form = 'element')} />
                  ${msg('script and element', { id: 'embed.form-element' })}</label
                >
                ${r.make(this.alone, 0, this.keep).iframe
                  ? html`<label
                      ><input type="radio" name="form" value="iframe" data-embed-form="iframe" .checked=${this.form === 'iframe'} @change=${() => (this.form = 'iframe')} />
                      ${msg('iframe', { id: 'embed.form-iframe' })}</label
                    >`
                  : nothing}
              </span>
            </div>
            ${this.alone && r.parts.length
              ? html`<fieldset class="keep" data-embed-keep>
                  <legend>${msg('Keep beside the picture (the keep attribute):', { id: 'embed.keep' })}</legend>
                  ${r.parts.map(
                    (p) =>
                      html`<label
                        ><input type="checkbox" value=${p} data-embed-part=${p} .checked=${this.keep.includes(p)} @change=${(e: Event) => this.toggle(p, (e.target as HTMLInputElement).checked)} />
                        <code>${p}</code></label
                      >`,
                  )}
                </fieldset>`
              : nothing}
            <textarea readonly data-embed-snippet aria-label=${msg('the snippet to paste into your post', { id: 'embed.snippet' })} .value=${this.snippet}></textarea>
            <p class="hint">
              ${this.form === 'element' || !r.make(this.alone, 0, this.keep).iframe
                ? msg('The element keeps your page’s fonts; the playground’s folder must be on your page’s own site.', { id: 'embed.hint-element' })
                : msg('The iframe works on any site and grows to fit what it shows.', { id: 'embed.hint-iframe' })}
            </p>
            <div class="row actions">
              <button class="primary" data-embed-copy @click=${() => void this.copy()}>${msg('Copy the snippet', { id: 'embed.copy' })}</button>
              <span class="said" role="status">${this.said}</span>
              <button data-embed-close @click=${() => this.close()}>${msg('Close', { id: 'embed.close' })}</button>
            </div>
            <p class="preview-label">${msg('Preview: what your post will show', { id: 'embed.preview' })}</p>
            <div class="preview" data-embed-preview></div>`
        : nothing}
    </dialog>`;
  }
}

customElements.define('tp-embed-dialog', TpEmbedDialog);
