// The characters a char-level model knows: every one-character token of its vocabulary (the
// engine's model info, not a list of the page's), as buttons; clicking one adds it to the
// text. A character that is not here would be read as <unk>. Word-level models have no
// such palette (the registry hides the view for them).

import { html, css } from 'lit';
import type { ModelInfo } from '../engine/protocol';
import { lockedNote, whyLocked } from '../ui/locked';
import { emit, panel } from '../ui/shared';
import { ifDefined } from 'lit/directives/if-defined.js';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { tokenLang } from '../ui/palette';
import { MAX_TEXT } from '../state/url';

/** The characters of a char-level vocabulary, in id order: no specials, one character each. */
export function knownCharacters(info: ModelInfo | null): string[] {
  if (!info || info.tokenizer_kind !== 'char') return [];
  const specials = new Set([info.pad, info.bos, info.eos, info.unk]);
  return info.vocab.filter((t, id) => !specials.has(id) && [...t].length === 1);
}

/** How a character is named on its button's accessible label (a space is invisible). */
function shown(ch: string): string {
  return ch === ' ' ? '␣' : ch;
}

export class TpCharacters extends LocalizedElement {
  static properties = {
    text: { type: String },
    info: { attribute: false },
    locked: { type: Boolean },
    lock: { attribute: false },
  };

  text = '';
  info: ModelInfo | null = null;
  /** The text may not be changed (a lesson or an embed locked it). */
  locked = false;
  /** Classroom mode: the settings the link locked (`text` among them disables the keys, saying why). */
  lock: readonly string[] = [];

  static styles = [
    panel,
    css`
      .keys {
        display: flex;
        flex-wrap: wrap;
        gap: 3px;
        margin: 6px 0 0;
        padding: 0;
        list-style: none;
      }
      button {
        font-size: var(--tp-text-md, 1rem);
        min-width: 2.1em;
        min-height: 2.1em;
        padding: 1px 4px;
        border: 1px solid var(--tp-line);
        border-radius: 5px;
        background: var(--tp-bg);
        color: inherit;
        cursor: pointer;
      }
      button:hover:not(:disabled),
      button:focus-visible {
        border-color: var(--tp-accent);
      }
      .hint {
        font-size: var(--tp-text-sm);
        color: var(--tp-muted);
        margin: 0;
      }
    `,
  ];

  private add(ch: string) {
    if (this.locked || this.text.length + ch.length > MAX_TEXT) return;
    emit(this, 'tp-text', this.text + ch);
  }

  render() {
    const chars = knownCharacters(this.info);
    const full = this.text.length >= MAX_TEXT;
    const why = whyLocked(this.lock, 'text');
    return html`<section aria-labelledby="h">
      <h3 id="h">${msg('Characters this model knows', { id: 'characters.title' })}</h3>
      <p class="hint">
        ${msg(str`This model reads one character per token and knows ${chars.length} characters; any other character becomes <unk>. Click one to add it to the end of the text.`, {
          id: 'characters.hint',
        })}${lockedNote('text', why)}
      </p>
      <ul class="keys" aria-label=${msg('Characters this model knows', { id: 'characters.title' })}>
        ${chars.map(
          (ch) => html`<li>
            <button
              type="button"
              lang=${ifDefined(tokenLang(ch))}
              data-char=${ch}
              ?disabled=${this.locked || full}
              aria-label=${msg(str`Add ${shown(ch)}`, { id: 'characters.add' })}
              @click=${() => this.add(ch)}
            >
              ${shown(ch)}
            </button>
          </li>`,
        )}
      </ul>
    </section>`;
  }
}

customElements.define('tp-characters', TpCharacters);
