// <tp-load-dialog>: what "Load a model" opens. A Hugging Face GPT-2 folder (config.json,
// model.safetensors, tokenizer.json or vocab.json + merges.txt) or one of the page's own
// .safetensors checkpoints, picked (files, or a whole folder), dropped, or fetched from an
// address — where the size of model.safetensors is shown before it is downloaded, and the
// download has a progress bar and a Cancel button — and the models kept in this browser
// from earlier visits, to load again or delete. A model that does not fit is refused
// before it is read or fetched, with the reason. The loading itself is ../load/loader.ts;
// this element draws it. Loaded with ../load/ when first opened.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { panel } from '../ui/shared';
import { bytes, int } from '../ui/format';
import { Cancelled, FAMILY } from '../load/folder';
import type { ModelLoader, Stage, Loaded } from '../load/loader';

// The loader comes with the dialog: one chunk, loaded when either is first needed.
export { ModelLoader } from '../load/loader';
import type { NamedFile, Probe } from '../load/folder';
import type { KeptModel } from '../load/kept';

export class TpLoadDialog extends LocalizedElement {
  static properties = {
    loader: { attribute: false },
    refusal: { attribute: false },
    stage: { state: true },
    probe: { state: true },
    error: { state: true },
    said: { state: true },
    kept: { state: true },
    dragging: { state: true },
  };

  loader: ModelLoader | null = null;
  /** An error's text in the page's language (the playground gives its `errorText`: ../i18n/engine-text.ts). */
  explain: (text: string) => string = (t) => t;
  /** Why the page's model may not change (a class's link locked it), in the language of the moment; '' when it may. */
  refusal: () => string = () => '';
  /** The step under way (null: none). */
  stage: (Stage & { since: number }) | null = null;
  /** A folder at an address, checked and waiting for the reader to download it. */
  probe: Probe | null = null;
  error = '';
  /** What the dialog says, drawn in the language of the moment (null: nothing). */
  said: (() => unknown) | null = null;
  kept: KeptModel[] | null = null;
  dragging = false;
  private abort: AbortController | null = null;

  static styles = [
    panel,
    css`
      dialog {
        width: min(44rem, calc(100vw - 2 * var(--tp-space-3)));
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
      }
      .hint {
        font-size: var(--tp-text-sm);
        color: var(--tp-muted);
        margin: 0 0 var(--tp-space-3);
      }
      .drop {
        border: 2px dashed var(--tp-line);
        border-radius: var(--tp-radius);
        padding: var(--tp-space-3);
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-2);
        align-items: center;
        background: var(--tp-page);
      }
      .drop[data-dragging] {
        border-color: var(--tp-accent);
        background: var(--tp-accent-soft);
      }
      .drop p {
        margin: 0;
        flex: 1 1 12rem;
      }
      form {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-2);
        align-items: end;
        margin: var(--tp-space-3) 0 0;
      }
      form label {
        display: flex;
        flex-direction: column;
        gap: var(--tp-space-1);
        flex: 1 1 16rem;
        font-size: var(--tp-text-md);
      }
      input[type='url'] {
        font: inherit;
        padding: var(--tp-space-1) var(--tp-space-2);
        color: var(--tp-fg);
        background: var(--tp-page);
        border: 1px solid var(--tp-line);
        border-radius: var(--tp-radius-sm);
        min-width: 0;
      }
      .probe {
        margin: var(--tp-space-3) 0 0;
        padding: var(--tp-space-2) var(--tp-space-3);
        border: 1px solid var(--tp-accent);
        border-radius: var(--tp-radius);
      }
      .probe p {
        margin: 0 0 var(--tp-space-2);
        overflow-wrap: anywhere;
      }
      .row {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-2);
        align-items: center;
      }
      .busy {
        margin: var(--tp-space-3) 0 0;
      }
      .said {
        margin: var(--tp-space-2) 0 0;
        font-size: var(--tp-text-md);
        overflow-wrap: anywhere;
      }
      .said:empty {
        display: none;
      }
      .alert {
        margin: var(--tp-space-2) 0 0;
        padding: var(--tp-space-2) var(--tp-space-3);
        border: 1px solid var(--tp-error);
        border-radius: var(--tp-radius-sm);
        overflow-wrap: anywhere;
      }
      ul {
        list-style: none;
        padding: 0;
        margin: 0;
      }
      li {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-1) var(--tp-space-3);
        align-items: center;
        padding: var(--tp-space-1) 0;
        border-top: 1px solid var(--tp-line);
      }
      li .what {
        flex: 1 1 14rem;
        overflow-wrap: anywhere;
      }
      li .what small {
        display: block;
        color: var(--tp-muted);
        font-size: var(--tp-text-sm);
      }
      .end {
        justify-content: flex-end;
        margin-top: var(--tp-space-3);
      }
    `,
  ];

  private get dialog(): HTMLDialogElement | null {
    return this.renderRoot.querySelector('dialog');
  }

  /** Open the dialog; `files`: a drop on the page, loaded at once. */
  async show(files?: readonly NamedFile[]): Promise<void> {
    await this.updateComplete;
    if (!this.dialog?.open) this.dialog?.showModal();
    if (!this.stage) this.renderRoot.querySelector<HTMLElement>('[data-load-pick]')?.focus();
    void this.refreshKept();
    if (files) await this.loadFiles(files);
  }

  close(): void {
    this.dialog?.close();
  }

  private async refreshKept(): Promise<void> {
    try {
      this.kept = (await this.loader?.kept.list()) ?? [];
    } catch {
      this.kept = [];
    }
  }

  private begin(): AbortController {
    this.error = '';
    this.said = null;
    this.abort = new AbortController();
    return this.abort;
  }

  private onStage = (s: Stage) => {
    const same = this.stage?.stage === s.stage;
    this.stage = { ...s, since: same ? this.stage!.since : performance.now() };
  };

  private done(r: Loaded): void {
    const i = r.info;
    const layers = i.decoder_layers + i.encoder_layers;
    this.said = () => {
      const what = msg(html`Loaded <strong data-model-text>${r.label}</strong>: ${layers} layers × ${i.n_heads} heads, d_model ${i.d_model}, ${int(i.vocab.length)} tokens, ${int(i.params)} parameters (${bytes(r.bytes)}).`, {
        id: 'load.loaded',
      });
      const kept = r.kept ? msg('Kept in this browser for your next visit.', { id: 'load.kept' }) : r.keptNote;
      return html`${what} ${msg('Every view now shows it.', { id: 'load.every-view' })} ${kept}`;
    };
    this.probe = null;
    void this.refreshKept();
    this.dispatchEvent(new CustomEvent('tp-model-loaded', { detail: r, bubbles: true, composed: true }));
  }

  private failed(e: unknown): void {
    if (e instanceof Cancelled) {
      // The reader asked for it: said, not alarmed.
      this.said = () => msg('Cancelled: nothing was changed.', { id: 'load.cancelled' });
      return;
    }
    this.said = null;
    this.error = this.explain(e instanceof Error ? e.message : String(e));
  }

  private async run(work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    // One load at a time: a drop while one runs waits for the reader to try again.
    if (this.stage) return;
    const refused = this.refusal();
    if (refused) {
      this.error = refused;
      return;
    }
    const ctl = this.begin();
    try {
      await work(ctl.signal);
    } catch (e) {
      this.failed(e);
    } finally {
      this.stage = null;
      if (this.abort === ctl) this.abort = null;
    }
  }

  async loadFiles(files: readonly NamedFile[]): Promise<void> {
    this.probe = null;
    await this.run(async () => this.done(await this.loader!.fromFiles(files, { stage: this.onStage })));
  }

  private onPicked(e: Event): void {
    const input = e.target as HTMLInputElement;
    const files = [...(input.files ?? [])];
    input.value = '';
    if (files.length) void this.loadFiles(files);
  }

  private onDrag(e: DragEvent, over: boolean): void {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    this.dragging = over;
  }

  /** A drop here goes on to the playground, which reads its files (a dropped folder's too) and hands them to `show`. */
  private onDrop(e: DragEvent): void {
    if (e.dataTransfer?.types.includes('Files')) this.dragging = false;
  }

  private async check(e: Event): Promise<void> {
    e.preventDefault();
    const input = this.renderRoot.querySelector<HTMLInputElement>('[data-load-url]');
    const address = input?.value.trim() ?? '';
    if (!address) return;
    this.probe = null;
    await this.run(async (signal) => {
      this.onStage({ stage: 'check' });
      this.probe = await this.loader!.probe(address, signal);
    });
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLElement>(this.probe ? '[data-load-download]' : '[data-load-url]')?.focus();
  }

  private async download(): Promise<void> {
    const p = this.probe;
    if (!p) return;
    await this.run(async (signal) => {
      // The progress bar replaces the size and its buttons at once (before the first byte arrives).
      this.onStage({ stage: 'download', done: 0, total: p.modelBytes });
      this.done(await this.loader!.fromProbe(p, { stage: this.onStage, signal }));
    });
  }

  private cancel(): void {
    this.abort?.abort();
    if (!this.stage) {
      this.probe = null;
      this.said = () => msg('Cancelled: nothing was changed.', { id: 'load.cancelled' });
    }
  }

  private async loadKept(m: KeptModel): Promise<void> {
    this.probe = null;
    await this.run(async () => this.done(await this.loader!.fromKept(m.id, { stage: this.onStage })));
  }

  private async deleteKept(m: KeptModel): Promise<void> {
    try {
      await this.loader!.kept.remove(m.id);
      this.said = () => msg(html`Deleted <strong data-model-text>${m.label}</strong> from this browser’s storage.`, { id: 'load.deleted' });
    } catch (e) {
      this.failed(e);
    }
    await this.refreshKept();
  }

  private stageLabel(s: Stage): string {
    switch (s.stage) {
      case 'check':
        return msg('Checking the model before anything large is read', { id: 'load.stage-check' });
      case 'read':
        return msg('Reading the files', { id: 'load.stage-read' });
      case 'download':
        return msg('Downloading model.safetensors', { id: 'load.stage-download' });
      case 'engine':
        return msg('Loading the model into the engine', { id: 'load.stage-engine' });
      default:
        return msg('Keeping the files in this browser', { id: 'load.stage-keep' });
    }
  }

  private busy() {
    const s = this.stage;
    if (!s) return nothing;
    const cancellable = s.stage === 'download' || s.stage === 'check';
    return html`<div class="busy" data-load-busy=${s.stage}>
      <tp-progress
        .label=${this.stageLabel(s)}
        .done=${s.stage === 'download' ? s.done : 0}
        .total=${s.stage === 'download' ? (s.total ?? Number.NaN) : Number.NaN}
        .unit=${'bytes'}
        .since=${s.since}
      ></tp-progress>
      ${cancellable ? html`<button data-load-cancel @click=${() => this.cancel()}>${msg('Cancel', { id: 'load.cancel' })}</button>` : nothing}
    </div>`;
  }

  private probeBox() {
    const p = this.probe;
    if (!p || this.stage) return nothing;
    const c = p.check;
    const size = p.modelBytes !== null ? bytes(p.modelBytes) : msg('a size the server does not tell', { id: 'load.size-unknown' });
    return html`<div class="probe" data-load-probe>
      <p>
        ${msg(str`${c.model_type} at ${p.base}: ${c.n_layers} layers × ${c.n_heads} heads, d_model ${c.d_model}, ${int(c.vocab_size)} tokens, ${int(c.params)} parameters.`, { id: 'load.probe' })}
      </p>
      <p data-load-size=${p.modelBytes ?? ''}><strong>${msg(str`model.safetensors: ${size} to download.`, { id: 'load.probe-size' })}</strong></p>
      <div class="row">
        <button class="primary" data-load-download @click=${() => void this.download()}>${msg('Download and load', { id: 'load.download' })}</button>
        <button data-load-cancel @click=${() => this.cancel()}>${msg('Cancel', { id: 'load.cancel' })}</button>
      </div>
    </div>`;
  }

  private keptList() {
    const list = this.kept;
    if (list === null) return nothing;
    return html`<h3 id="load-kept-h">${msg('Kept in this browser', { id: 'load.kept-heading' })}</h3>
      ${list.length
        ? html`<ul data-load-kept aria-labelledby="load-kept-h">
            ${list.map(
              (m) => html`<li data-kept-id=${m.id} data-kept-label=${m.label}>
                <span class="what"
                  ><strong data-model-text>${m.label}</strong>
                  <small>${msg(str`${m.layers} layers × ${m.heads} heads, d_model ${m.d_model}, ${int(m.vocab)} tokens · ${bytes(m.bytes)} · kept ${new Date(m.saved_at).toISOString().slice(0, 10)}`, { id: 'load.kept-line' })}</small></span
                >
                <span class="row">
                  <button data-kept-load ?disabled=${!!this.stage} @click=${() => void this.loadKept(m)} aria-label=${msg(str`Load ${m.label}`, { id: 'load.kept-load-label' })}>
                    ${msg('Load', { id: 'load.kept-load' })}
                  </button>
                  <button data-kept-delete ?disabled=${!!this.stage} @click=${() => void this.deleteKept(m)} aria-label=${msg(str`Delete ${m.label}`, { id: 'load.kept-delete-label' })}>
                    ${msg('Delete', { id: 'load.kept-delete' })}
                  </button>
                </span>
              </li>`,
            )}
          </ul>`
        : html`<p class="hint" data-load-kept-none>${msg('None yet: a model you load is kept here for your next visit.', { id: 'load.kept-none' })}</p>`}`;
  }

  render() {
    const busy = !!this.stage;
    const locked = this.refusal();
    return html`<dialog aria-labelledby="load-h" data-load-dialog>
      <h2 id="load-h">${msg('Load a model', { id: 'load.heading' })}</h2>
      <p class="hint">
        ${msg(
          str`A Hugging Face ${FAMILY} folder — config.json, model.safetensors, and tokenizer.json (or vocab.json and merges.txt) — or a .safetensors checkpoint the lab exported. The files are read in this browser and sent nowhere.`,
          { id: 'load.hint' },
        )}
      </p>
      ${locked ? html`<p class="alert" data-load-locked>${locked}</p>` : nothing}
      <div
        class="drop"
        data-load-drop
        ?data-dragging=${this.dragging}
        @dragenter=${(e: DragEvent) => this.onDrag(e, true)}
        @dragover=${(e: DragEvent) => this.onDrag(e, true)}
        @dragleave=${(e: DragEvent) => this.onDrag(e, false)}
        @drop=${(e: DragEvent) => this.onDrop(e)}
      >
        <p>${msg('Drop the files or their folder here, or', { id: 'load.drop' })}</p>
        <button data-load-pick ?disabled=${busy || !!locked} @click=${() => this.renderRoot.querySelector<HTMLInputElement>('[data-load-files]')?.click()}>
          ${msg('Choose files…', { id: 'load.pick-files' })}
        </button>
        <button data-load-pick-folder ?disabled=${busy || !!locked} @click=${() => this.renderRoot.querySelector<HTMLInputElement>('[data-load-folder]')?.click()}>
          ${msg('Choose a folder…', { id: 'load.pick-folder' })}
        </button>
        <input type="file" multiple hidden data-load-files accept=".json,.safetensors,.txt" @change=${(e: Event) => this.onPicked(e)} />
        <input type="file" hidden webkitdirectory data-load-folder @change=${(e: Event) => this.onPicked(e)} />
      </div>
      <form @submit=${(e: Event) => void this.check(e)}>
        <label
          >${msg('Or the address of a folder (its files are fetched from there)', { id: 'load.url-label' })}
          <input type="url" data-load-url inputmode="url" autocomplete="url" spellcheck="false" placeholder="https://…/gpt2/" ?disabled=${busy || !!locked}
        /></label>
        <button type="submit" data-load-check ?disabled=${busy || !!locked}>${msg('Check its size', { id: 'load.check' })}</button>
      </form>
      ${this.probeBox()} ${this.busy()}
      <p class="said" role="status" data-load-said>${this.said?.() ?? nothing}</p>
      ${this.error ? html`<p class="alert" role="alert" data-load-error>${this.error}</p>` : nothing} ${this.keptList()}
      <div class="row end">
        <button data-load-close @click=${() => this.close()}>${msg('Close', { id: 'load.close' })}</button>
      </div>
    </dialog>`;
  }
}

customElements.define('tp-load-dialog', TpLoadDialog);
