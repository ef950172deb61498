// What the `ffn` and `no-leak` views share: a "before" and an "after" input, one token
// apart. Editing the page's text keeps the previous input as "before"; the perturb
// controls replace one token of the current input without touching the text. The core
// runs both (`blockDiff`) and says, position by position and bit-exactly, which rows
// changed; the views only draw that.

import { html, css, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { errorText } from '../i18n/engine-text';
import type { EngineCaller } from '../engine/client';
import type { BlockDiff, BlockDiffRequest, ModelInfo, SequenceInput, Switches, TrainMode } from '../engine/protocol';
import { panel } from '../ui/shared';
import { showToken } from '../ui/palette';

/** The ids a user edits: the source of an encoder-decoder, the tokens otherwise. */
/** A vocabulary larger than this is not listed in a drop-down: the replacement is picked by its id. */
const LISTED_VOCAB = 1000;

export function editedIds(s: SequenceInput): number[] {
  return s.src ?? s.tokens;
}

function withEdited(s: SequenceInput, ids: number[]): SequenceInput {
  return s.src ? { tokens: s.tokens, src: ids } : { tokens: ids };
}

const key = (s: SequenceInput | null) => (s ? `${s.tokens.join(',')}|${s.src?.join(',') ?? ''}` : '');

export abstract class EditView extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    info: { attribute: false },
    input: { attribute: false },
    switches: { attribute: false },
    train: { attribute: false },
    beforeInput: { state: true },
    afterInput: { state: true },
    how: { state: true },
    pos: { state: true },
    repl: { state: true },
    problem: { state: true },
  };

  engine: EngineCaller | null = null;
  info: ModelInfo | null = null;
  /** The page's current input (row 0), as the model reads it. */
  input: SequenceInput | null = null;
  switches: Switches | null = null;
  train: TrainMode | undefined = undefined;
  /** The two inputs compared (read by the browser tests). */
  beforeInput: SequenceInput | null = null;
  afterInput: SequenceInput | null = null;
  /** How "after" came from "before", in words. */
  how = '';
  /** The perturb controls: position and replacement token id (null: the defaults). */
  pos: number | null = null;
  repl: number | null = null;
  problem = '';
  private seenInput = '';
  private prevInput: SequenceInput | null = null;
  private modelKey = '';
  /** Bumped whenever another model (another `info`) arrives: siblings share every size. */
  private modelEpoch = 0;
  private modelSeen: ModelInfo | null = null;
  private asked = '';

  static styles = [
    panel,
    css`
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
      .edit {
        display: flex;
        flex-wrap: wrap;
        gap: 8px 14px;
        align-items: center;
        font-size: var(--tp-text-md);
        margin-bottom: var(--tp-space-2);
      }
      .wrap {
        overflow-x: auto;
      }
      table {
        border-collapse: collapse;
        font-size: var(--tp-text-sm);
        font-variant-numeric: tabular-nums;
      }
      td,
      th {
        padding: 1px 6px;
        border-bottom: 1px solid var(--tp-line);
        text-align: center;
        white-space: nowrap;
      }
      th {
        font-weight: normal;
        color: var(--tp-muted);
      }
      td.same {
        color: var(--tp-muted);
      }
      td.changed {
        background: var(--tp-warn-soft);
        color: var(--tp-warn);
        font-weight: 700;
      }
      tr.edited th {
        color: var(--tp-fg);
        font-weight: 700;
      }
      .argument {
        border-left: 3px solid var(--tp-accent);
        padding-left: var(--tp-space-2);
      }
      .verdict {
        font-weight: 600;
      }
    `,
  ];

  /** The switches each compared pair runs with (one diff per entry). */
  protected abstract variants(): Switches[];
  /** The diffs arrived (one per variant, run with `variants`). */
  protected abstract got(diffs: BlockDiff[], variants: Switches[]): void;

  /** The replacement the perturb controls would use at `pos`: the chosen one, or the next word. */
  private replacement(ids: number[], pos: number): number {
    const info = this.info!;
    if (this.repl !== null && this.repl !== ids[pos]) return this.repl;
    const v = info.vocab.length;
    const special = new Set([info.pad, info.bos, info.eos, info.unk]);
    for (let k = 1; k < v; k++) {
      const id = (ids[pos] + k) % v;
      if (!special.has(id)) return id;
    }
    return ids[pos];
  }

  /** Replace one token of the current input (the default: the last one). */
  perturb(pos?: number, token?: number): void {
    if (!this.input || !this.info) return;
    const ids = editedIds(this.input);
    const p = Math.min(pos ?? this.pos ?? ids.length - 1, ids.length - 1);
    if (p < 0) return;
    if (token !== undefined) this.repl = token;
    this.pos = p;
    const out = [...ids];
    out[p] = this.replacement(ids, p);
    this.beforeInput = this.input;
    this.afterInput = withEdited(this.input, out);
    const v = this.info.vocab;
    this.how = msg(str`position ${p}: “${showToken(v[ids[p]] ?? '')}” → “${showToken(v[out[p]] ?? '')}”`);
  }

  willUpdate(): void {
    if (this.info !== this.modelSeen) {
      this.modelSeen = this.info;
      this.modelEpoch++;
    }
    // Another model: the inputs of the last one mean nothing to it.
    const mk = this.info ? `${this.info.arch}/${this.info.params}/${this.info.vocab.length}/${this.info.pos_encoding}` : '';
    if (mk !== this.modelKey) {
      this.modelKey = mk;
      this.prevInput = null;
      this.seenInput = '';
    }
    const k = key(this.input);
    if (this.input && k !== this.seenInput) {
      const prev = this.prevInput;
      this.seenInput = k;
      this.prevInput = this.input;
      if (prev && this.info) {
        // A text edit: the previous input stays as "before".
        this.beforeInput = prev;
        this.afterInput = this.input;
        this.how = msg('your edit of the text (the previous input is kept as “before”)');
      } else {
        this.pos = null;
        this.perturb();
      }
    }
  }

  updated(): void {
    if (!this.engine || !this.beforeInput || !this.afterInput || !this.switches) return;
    const variants = this.variants();
    const k = JSON.stringify([this.modelEpoch, key(this.beforeInput), key(this.afterInput), variants, this.train ?? null]);
    if (k === this.asked) return;
    this.asked = k;
    void this.load(variants);
  }

  private async load(variants: Switches[]) {
    try {
      const out: BlockDiff[] = [];
      for (const switches of variants) {
        const req: BlockDiffRequest = { before: this.beforeInput!, after: this.afterInput!, switches };
        if (this.train) req.train = this.train;
        out.push(await this.engine!.call('blockDiff', req));
      }
      this.problem = '';
      this.got(out, variants);
    } catch (e) {
      this.problem = e instanceof Error ? e.message : String(e);
    }
  }

  /** Labels of the edited sequence's positions (after the edit). */
  protected labels(): string[] {
    const v = this.info?.vocab ?? [];
    return this.afterInput ? editedIds(this.afterInput).map((id) => showToken(v[id] ?? `?${id}`)) : [];
  }

  /** The perturb controls. */
  protected controls() {
    const info = this.info;
    if (!info || !this.input) return nothing;
    const ids = editedIds(this.input);
    const pos = Math.min(this.pos ?? ids.length - 1, ids.length - 1);
    const special = new Set([info.pad, info.bos, info.eos]);
    return html`<div class="edit">
        <label
          >${msg('position')}
          <select aria-label=${msg('position to perturb')} @change=${(e: Event) => this.perturb(Number((e.target as HTMLSelectElement).value))}>
            ${ids.map((id, i) => html`<option value=${i} ?selected=${i === pos}>${i}: ${showToken(info.vocab[id] ?? '')}</option>`)}
          </select></label
        >
        <label
          >${msg('becomes')}
          ${info.vocab.length > LISTED_VOCAB
            ? html`<input
                  type="number"
                  min="0"
                  max=${info.vocab.length - 1}
                  aria-label=${msg('replacement token id', { id: 'edit.replacement-id' })}
                  .value=${String(this.afterInput ? editedIds(this.afterInput)[pos] : '')}
                  @change=${(e: Event) => {
                    const id = Math.round(Number((e.target as HTMLInputElement).value));
                    if (Number.isInteger(id) && id >= 0 && id < info.vocab.length && !special.has(id)) this.perturb(pos, id);
                  }}
                /><span class="mono" data-model-text>${this.afterInput ? showToken(info.vocab[editedIds(this.afterInput)[pos]] ?? '') : ''}</span>`
            : html`<select aria-label=${msg('replacement token')} @change=${(e: Event) => this.perturb(pos, Number((e.target as HTMLSelectElement).value))}>
                ${info.vocab.map((t, id) =>
                  special.has(id) || id === ids[pos] ? nothing : html`<option value=${id} ?selected=${this.afterInput && editedIds(this.afterInput)[pos] === id}>${showToken(t)}</option>`,
                )}
              </select>`}</label
        >
        <span class="small muted">${msg('compared:')} ${this.how}</span>
      </div>
      ${this.problem ? html`<p role="alert">${errorText(this.problem)}</p>` : nothing}`;
  }
}
