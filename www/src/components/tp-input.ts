// Stage 1 — input: the text, its tokens as chips (pads and <unk> visible), and a batch
// of unequal-length inputs for the padding demo.

import { html, css, nothing } from 'lit';
import type { ModelInfo, Tokenized } from '../engine/protocol';
import { emit, panel } from '../ui/shared';
import { ifDefined } from 'lit/directives/if-defined.js';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { showToken, tokenLang } from '../ui/palette';
import { MAX_BATCH, MAX_TEXT } from '../state/url';
import { lockedNote, whyLocked } from '../ui/locked';

export class TpInput extends LocalizedElement {
  static properties = {
    text: { type: String },
    batch: { type: Array },
    label: { type: String },
    info: { attribute: false },
    tokenized: { attribute: false },
    padded: { attribute: false },
    promptNote: { type: String },
    lock: { attribute: false },
    showBatch: { state: true },
  };

  text = '';
  batch: string[] = [];
  label = '';
  info: ModelInfo | null = null;
  /** One entry per input row: the main text first, then the batch lines. */
  tokenized: Tokenized[] = [];
  /** The ids the model saw, after padding: (B, T). */
  padded: number[][] = [];
  /** What the page said when a model switch could not keep the prompt ('' when it could). */
  promptNote = '';
  /** Classroom mode: the settings the link locked (the text and the batch boxes of a locked one are disabled, saying why). */
  lock: readonly string[] = [];
  showBatch = false;

  static styles = [
    panel,
    css`
      textarea:disabled {
        opacity: 0.7;
        cursor: not-allowed;
      }
      textarea {
        width: 100%;
        box-sizing: border-box;
        resize: vertical;
        min-height: 2.6em;
      }
      .chips {
        display: flex;
        flex-wrap: wrap;
        gap: 3px;
        margin: 6px 0;
        list-style: none;
        padding: 0;
      }
      .chip {
        font-family: var(--tp-mono);
        font-size: var(--tp-text-sm);
        border: 1px solid var(--tp-line);
        border-radius: 5px;
        padding: 1px 5px;
        min-width: 1ch;
        text-align: center;
        background: var(--tp-bg);
      }
      .chip.pad {
        border-style: dashed;
        color: var(--tp-muted);
        background: repeating-linear-gradient(45deg, transparent 0 4px, rgba(128, 128, 128, 0.18) 4px 6px);
      }
      .chip.unk {
        border: 2px solid var(--tp-warn);
        background: var(--tp-warn-soft);
      }
      .chip.special {
        color: var(--tp-accent);
        border-color: var(--tp-accent);
      }
      .row-label {
        font-size: var(--tp-text-xs);
        color: var(--tp-muted);
      }
      .note {
        color: var(--tp-warn);
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0;
      }
      .bar {
        display: flex;
        justify-content: space-between;
        align-items: center;
        gap: var(--tp-space-2);
        flex-wrap: wrap;
      }
      label.check {
        font-size: var(--tp-text-md);
        display: inline-flex;
        gap: var(--tp-space-1);
        align-items: center;
      }
    `,
  ];

  private chip(id: number) {
    const info = this.info;
    const tok = info?.vocab[id] ?? `?${id}`;
    let cls = 'chip';
    let what = '';
    if (info && id === info.pad) {
      cls += ' pad';
      what = msg('padding');
    } else if (info && id === info.unk) {
      cls += ' unk';
      what = msg('unknown');
    } else if (info && (id === info.bos || id === info.eos)) {
      cls += ' special';
      what = msg('special');
    }
    return html`<li class=${cls} lang=${ifDefined(tokenLang(tok))} title=${`id ${id}${what ? ` (${what})` : ''}`} aria-label=${what ? msg(str`${what} token ${tok}, id ${id}`) : `${tok}, id ${id}`}>
      ${showToken(tok)}
    </li>`;
  }

  private unknownNote(t: Tokenized, row: number) {
    if (t.unknown.length === 0) return nothing;
    const list = t.unknown
      .slice(0, 8)
      .map(([pos, s]) => msg(str`“${s}” at ${pos}`))
      .join(msg(', '));
    const more = t.unknown.length > 8 ? msg(str` and ${t.unknown.length - 8} more`) : '';
    const where = row === 0 ? '' : msg(str` (batch row ${row + 1})`);
    const head =
      t.unknown.length === 1
        ? msg(str`1 piece is not in the vocabulary and became <unk>${where}:`)
        : msg(str`${t.unknown.length} pieces are not in the vocabulary and became <unk>${where}:`);
    return html`<p class="note" role="status">${head} ${list}${more}${msg('.')}</p>`;
  }

  render() {
    const rows = this.padded.length ? this.padded : this.tokenized.map((t) => t.ids);
    const lengths = this.tokenized.map((t) => t.ids.length);
    const textLocked = whyLocked(this.lock, 'text');
    const batchLocked = whyLocked(this.lock, 'batch');
    return html`<section class="card" aria-labelledby="h">
      <div class="bar">
        <h2 id="h">${this.label || msg('Input')} <span class="sub">${this.info ? (this.info.tokenizer_kind === 'char' ? msg(str`character-level tokens, vocabulary of ${this.info.vocab.length}`) : this.info.tokenizer_kind === 'word' ? msg(str`word-level tokens, vocabulary of ${this.info.vocab.length}`) : msg(str`byte-level BPE tokens, vocabulary of ${this.info.vocab.length}`, { id: 'input.kind-bpe' })) : ''}</span></h2>
        <label class="check"
          ><input
            type="checkbox"
            data-setting="batch"
            ?disabled=${!!batchLocked}
            aria-describedby=${batchLocked ? 'why-batch' : nothing}
            .checked=${this.showBatch || this.batch.length > 0}
            @change=${(e: Event) => {
              this.showBatch = (e.target as HTMLInputElement).checked;
              if (!this.showBatch && this.batch.length) emit(this, 'tp-batch', []);
            }}
          />${msg('batch of unequal lengths (padding)')}${lockedNote('batch', batchLocked, 'why-batch')}</label
        >
      </div>
      <label class="visually-hidden" for="text">${msg(str`${this.label || msg('Input')} text`)}</label>
      <textarea
        id="text"
        rows="2"
        maxlength=${MAX_TEXT}
        spellcheck="false"
        data-setting="text"
        ?disabled=${!!textLocked}
        aria-describedby=${textLocked ? 'why-text' : nothing}
        .value=${this.text}
        @input=${(e: Event) => emit(this, 'tp-text', (e.target as HTMLTextAreaElement).value)}
      ></textarea>
      ${lockedNote('text', textLocked, 'why-text')}
      ${this.promptNote
        ? html`<p class="note" role="status" data-prompt-note
            >${this.promptNote} <button @click=${() => emit(this, 'tp-dismiss-note', null)} aria-label=${msg('dismiss')}>×</button></p
          >`
        : nothing}
      ${this.showBatch || this.batch.length
        ? html`<label class="small muted" for="batch">${msg(str`More inputs, one per line (up to ${MAX_BATCH}); shorter ones are padded`)}</label>
            <textarea
              id="batch"
              rows="3"
              spellcheck="false"
              ?disabled=${!!batchLocked}
              .value=${this.batch.join('\n')}
              @input=${(e: Event) => {
                const lines = (e.target as HTMLTextAreaElement).value
                  .split('\n')
                  .slice(0, MAX_BATCH)
                  .map((l) => l.slice(0, MAX_TEXT));
                emit(this, 'tp-batch', lines);
              }}
            ></textarea>`
        : nothing}
      ${rows.map(
        (ids, b) => html`<div class="row-label">
            ${rows.length > 1 ? msg(str`row ${b + 1}: ${lengths[b] ?? ids.length} tokens, padded to ${ids.length}`) : msg(str`${ids.length} tokens`)}
          </div>
          <ul class="chips" aria-label=${msg(str`tokens of row ${b + 1}`)} data-row=${b}>
            ${ids.map((id) => this.chip(id))}
          </ul>`,
      )}
      ${this.tokenized.map((t, i) => this.unknownNote(t, i))}
    </section>`;
  }
}

customElements.define('tp-input', TpInput);
