// The tokenizer at work: how the loaded model's tokenizer reads the prompt, from the engine's
// `tokenizeTrace`. A byte-level BPE starts each piece (a word with its leading space) as one
// symbol per byte and merges the pair of lowest rank again and again until no pair in its
// merge list is left; the slider steps through those merges. A character or word tokenizer
// reads one token per character (word) with no merges. A symbol is drawn from its bytes: a
// space as a visible mark, and the bytes of a character that the tokenizer split over
// several symbols are drawn as that one character over a bracket of its symbols (a streaming
// UTF-8 decoder over the piece finds where characters end), never as "�". The trace comes
// from the whole engine, fetched the first time this view is on screen.

import { html, css, nothing, type TemplateResult } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import type { EngineCaller } from '../engine/client';
import type { ModelInfo, PieceTrace, SymbolBytes, TokenizeTrace } from '../engine/protocol';
import { errorText } from '../i18n/engine-text';
import { panel, SeenController } from '../ui/shared';

/** Symbols of one step that together spell whole characters: one symbol, or a run whose bytes split characters. */
export interface Group {
  /** Index of its first symbol in the step. */
  readonly start: number;
  /** Its symbols' ids. */
  readonly ids: readonly number[];
  /** The text they spell (empty for bytes that never complete a character). */
  readonly text: string;
  /** Whether a character is split across its symbols (so it is drawn with a bracket). */
  readonly split: boolean;
}

/** Bytes a UTF-8 sequence starting with `b` has in all (1 for a stray continuation byte or an invalid lead). */
function seqLen(b: number): number {
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b < 0xe0) return 2;
  if (b >= 0xe0 && b < 0xf0) return 3;
  if (b >= 0xf0 && b < 0xf5) return 4;
  return 1;
}

/**
 * Group a step's symbols as a streaming UTF-8 decoder reads their bytes: a group closes at
 * the first symbol whose last byte ends a character; a symbol that ends in the middle of
 * one joins the next. Bytes that are not valid UTF-8 close their group (their text: '').
 */
export function groupSymbols(ids: readonly number[], bytesOf: (id: number) => readonly number[]): Group[] {
  const groups: Group[] = [];
  let start = 0;
  let buf: number[] = [];
  let members: number[] = [];
  let need = 0; // bytes still owed to the character begun
  const close = (end: number) => {
    if (!members.length) return;
    let text = '';
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(buf));
    } catch {
      text = '';
    }
    groups.push({ start, ids: members, text, split: members.length > 1 });
    start = end;
    buf = [];
    members = [];
  };
  ids.forEach((id, i) => {
    members.push(id);
    for (const b of bytesOf(id)) {
      buf.push(b);
      if (need > 0 && b >= 0x80 && b < 0xc0) need--;
      else need = seqLen(b) - 1;
    }
    if (need === 0) close(i + 1);
  });
  close(ids.length);
  return groups;
}

/** A symbol's own text, as far as its bytes spell whole characters; null when they do not. */
function ownText(bytes: readonly number[]): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
}

const hex = (b: number) => b.toString(16).toUpperCase().padStart(2, '0');

/** Where a merge happened between two steps: the indexes in `next` of the merged symbols. */
export function mergedAt(prev: readonly number[], next: readonly number[], made: number): Set<number> {
  const at = new Set<number>();
  let i = 0;
  for (let j = 0; j < next.length; j++) {
    if (next[j] === made && prev[i] !== made) {
      at.add(j);
      i += 2;
    } else i += 1;
  }
  return at;
}

export class TpTokenizer extends LocalizedElement {
  static properties = {
    engine: { attribute: false },
    info: { attribute: false },
    text: { type: String },
    trace: { state: true },
    problem: { state: true },
    busy: { state: true },
    step: { state: true },
  };

  engine: EngineCaller | null = null;
  info: ModelInfo | null = null;
  /** The prompt the tokenizer reads. */
  text = '';
  /** The engine's trace of `text` (read by the browser tests). */
  trace: TokenizeTrace | null = null;
  problem = '';
  busy = false;
  /** Merges applied in each piece (null: all of them, the tokens). */
  step: number | null = null;
  private asked: { text: string; info: ModelInfo | null } | null = null;
  private bytes = new Map<number, SymbolBytes>();
  private readonly sight = new SeenController(this);

  static styles = [
    panel,
    css`
      p {
        font-size: var(--tp-text-md);
        margin: var(--tp-space-1) 0 var(--tp-space-2);
      }
      .controls {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: var(--tp-space-2);
        font-size: var(--tp-text-sm);
        margin-bottom: var(--tp-space-2);
      }
      .controls input {
        flex: 1 1 160px;
        max-width: 360px;
      }
      .pieces {
        display: flex;
        flex-wrap: wrap;
        gap: var(--tp-space-2) var(--tp-space-3);
        align-items: flex-end;
        max-height: 560px;
        overflow: auto;
      }
      .piece {
        display: flex;
        flex-direction: column;
        gap: 2px;
      }
      .syms {
        display: flex;
        gap: 2px;
        align-items: flex-end;
      }
      .group {
        display: flex;
        flex-direction: column;
        align-items: stretch;
      }
      .group.split > .char {
        text-align: center;
        font-size: var(--tp-text-md);
        border: 1px solid var(--tp-muted);
        border-bottom: none;
        border-radius: 4px 4px 0 0;
        margin: 0 2px 2px;
        padding: 0 2px;
        line-height: 1.2;
      }
      .row {
        display: flex;
        gap: 2px;
      }
      .sym {
        display: flex;
        flex-direction: column;
        align-items: center;
        min-width: 1.6em;
        padding: 1px 4px;
        border: 1px solid var(--tp-line);
        border-radius: 4px;
        background: var(--tp-bg);
        font-family: var(--tp-mono);
        font-size: var(--tp-text-md);
        line-height: 1.25;
      }
      .sym.new {
        border-color: var(--tp-accent);
        box-shadow: 0 0 0 1px var(--tp-accent);
      }
      .sym.special {
        border-style: dashed;
      }
      .sym .id {
        font-size: var(--tp-text-xs, 10px);
        color: var(--tp-muted);
      }
      .sym .bytes {
        font-size: var(--tp-text-xs, 10px);
        color: var(--tp-muted);
      }
      .sp {
        color: var(--tp-muted);
      }
      .merge {
        font-size: var(--tp-text-xs, 10px);
        color: var(--tp-muted);
        min-height: 1.2em;
      }
    `,
  ];

  updated(): void {
    if (!this.sight.seen || !this.engine || !this.info) return;
    if (this.asked && this.asked.text === this.text && this.asked.info === this.info) return;
    this.asked = { text: this.text, info: this.info };
    void this.ask();
  }

  /** Ask the engine for the trace of the text as it is now (a later answer replaces an earlier one). */
  private async ask(): Promise<void> {
    const asked = this.asked;
    if (!this.engine || !asked) return;
    this.busy = true;
    try {
      const trace = await this.engine.call('tokenizeTrace', { text: asked.text });
      if (this.asked !== asked) return;
      this.bytes = new Map(trace.symbols.map((s) => [s.id, s]));
      this.trace = trace;
      this.problem = '';
      this.step = null;
    } catch (e) {
      if (this.asked !== asked) return;
      this.problem = errorText(e instanceof Error ? e.message : String(e));
    } finally {
      if (this.asked === asked) this.busy = false;
    }
  }

  private bytesOf = (id: number): readonly number[] => this.bytes.get(id)?.bytes ?? [];

  /** Every token the text becomes, in order (read by the browser tests). */
  get tokenIds(): number[] {
    return (this.trace?.pieces ?? []).flatMap((p) => p.steps[p.steps.length - 1] ?? []);
  }

  /** A symbol's face: its text with spaces, tabs and newlines as visible marks, or its bytes when they split a character. */
  private face(id: number, special: boolean): TemplateResult {
    const s = this.bytes.get(id);
    if (!s) return html`${id}`;
    if (special) return html`${s.token}`;
    const own = ownText(s.bytes);
    if (own === null) return html`<span class="bytes">${s.bytes.map(hex).join(' ')}</span>`;
    return html`${[...own].map((c) => (c === ' ' ? html`<span class="sp">␣</span>` : c === '\n' ? html`<span class="sp">⏎</span>` : c === '\t' ? html`<span class="sp">⇥</span>` : c === '\r' ? html`<span class="sp">␍</span>` : c))}`;
  }

  /** A character's text over a bracket, with spaces shown as marks. */
  private charFace(text: string): TemplateResult | string {
    return text ? html`${[...text].map((c) => (c === ' ' ? html`<span class="sp">␣</span>` : c))}` : '…';
  }

  private piece(p: PieceTrace, k: number): TemplateResult {
    const last = p.steps.length - 1;
    const at = Math.min(k, last);
    const ids = p.steps[at] ?? [];
    const fresh = at > 0 ? mergedAt(p.steps[at - 1], ids, p.merges[at - 1][1]) : new Set<number>();
    const groups = p.special ? ids.map((id, i) => ({ start: i, ids: [id], text: '', split: false })) : groupSymbols(ids, this.bytesOf);
    const merge = at > 0 && at <= p.merges.length ? p.merges[at - 1] : null;
    const sym = (id: number, j: number) =>
      html`<span class="sym ${fresh.has(j) ? 'new' : ''} ${p.special ? 'special' : ''}" data-id=${id} title=${msg(str`token id ${id}`, { id: 'tokenizer.id' })}>
        <span>${this.face(id, p.special)}</span><span class="id">${id}</span>
      </span>`;
    return html`<div class="piece" data-final=${at === last ? '1' : '0'}>
      <div class="merge">${merge ? msg(str`merge rank ${merge[0]}`, { id: 'tokenizer.rank' }) : nothing}</div>
      <div class="syms">
        ${groups.map((g) =>
          g.split
            ? html`<span class="group split" data-char=${g.text}><span class="char">${this.charFace(g.text)}</span><span class="row">${g.ids.map((id, i) => sym(id, g.start + i))}</span></span>`
            : html`<span class="group">${sym(g.ids[0], g.start)}</span>`,
        )}
      </div>
    </div>`;
  }

  render() {
    const t = this.trace;
    const head = html`<h2 id="h">${msg('Tokenizer: bytes, merges, tokens', { id: 'tokenizer.title' })}</h2>`;
    if (!t) {
      return html`<section class="card" aria-labelledby="h" aria-busy=${this.busy ? 'true' : 'false'}>
        ${head}
        <p class="muted" role="status">
          ${this.problem ||
          (this.busy || !this.sight.seen || !this.info
            ? msg('Loading the tokenizer (it comes with the whole engine, fetched once)…', { id: 'tokenizer.loading' })
            : '')}
        </p>
      </section>`;
    }
    const pieces = t.pieces;
    const bytes = pieces.reduce((n, p) => n + (p.special ? 0 : (p.steps[0]?.length ?? 0)), 0);
    const merges = pieces.reduce((n, p) => n + p.merges.length, 0);
    const tokens = pieces.reduce((n, p) => n + (p.steps[p.steps.length - 1]?.length ?? 0), 0);
    const most = pieces.reduce((n, p) => Math.max(n, p.merges.length), 0);
    const k = this.step ?? most;
    const bpe = t.kind === 'bpe' || merges > 0;
    const note = !bpe
      ? t.kind === 'word'
        ? msg(str`This model reads one token per word, with no merges: the text is ${tokens} tokens.`, { id: 'tokenizer.word' })
        : msg(str`This model reads one token per character, with no merges: the text is ${tokens} tokens.`, { id: 'tokenizer.char' })
      : msg(
          str`The text is ${bytes} bytes, one symbol each. In each piece (a word with the space before it) the tokenizer merges the adjacent pair whose merge has the lowest rank, again and again: ${merges} merges leave ${tokens} tokens. A character whose bytes end up in several tokens is drawn once, over a bracket of its tokens.`,
          { id: 'tokenizer.bpe' },
        );
    return html`<section class="card" aria-labelledby="h" data-tokens=${this.tokenIds.join(',')} data-kind=${t.kind}>
      ${head}
      <p>${note}</p>
      ${this.problem ? html`<p class="muted" role="status">${this.problem}</p>` : nothing}
      ${bpe && most > 0
        ? html`<div class="controls">
            <label for="step">${k === 0 ? msg('Bytes: no merge yet', { id: 'tokenizer.step0' }) : k >= most ? msg(str`Tokens: all ${merges} merges done`, { id: 'tokenizer.stepAll' }) : msg(str`After ${k} merges in each piece`, { id: 'tokenizer.stepK' })}</label>
            <input id="step" type="range" min="0" max=${most} .value=${String(k)} @input=${(e: Event) => (this.step = Number((e.target as HTMLInputElement).value))} />
          </div>`
        : nothing}
      <div class="pieces" data-model-text role="list" aria-label=${msg('Pieces and their tokens', { id: 'tokenizer.pieces' })}>
        ${pieces.map((p) => html`<div role="listitem">${this.piece(p, k)}</div>`)}
      </div>
    </section>`;
  }
}

customElements.define('tp-tokenizer', TpTokenizer);
