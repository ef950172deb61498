// The lab's own-text task: the box a learner pastes a text into (or fills from a .txt file),
// what the text is made of and how it is split, every reason a text cannot be trained on in
// the page's language, and what a text run wrote from prompts taken from its held-out part.
//
// The limits are the core's (crate/src/tasks/text.rs; tests/unit/text-input.test.mjs reads
// them from there): the core checks the text again when the run starts.

import { html, nothing } from 'lit';
import { msg, str } from '@lit/localize';
import { int, num } from '../ui/format';
import type { RunRecord } from './host';

/** The largest text, in bytes of UTF-8 (`MAX_TEXT_BYTES`). */
export const MAX_TEXT_BYTES = 1 << 20;
/** The largest vocabulary of a text model, the four specials included (`MAX_TEXT_VOCAB`). */
export const MAX_TEXT_VOCAB = 8192;
/** The tokens every vocabulary starts with (`<pad>`, `<bos>`, `<eos>`, `<unk>`). */
export const SPECIAL_TOKENS = 4;
/** The shortest text, in characters (`MIN_TEXT_CHARS`). */
export const MIN_TEXT_CHARS = 20;
/** The last 1/HELD_OUT_DIVISOR of the characters is held out (`HELD_OUT_DIVISOR`). */
export const HELD_OUT_DIVISOR = 10;
/** Characters of the held-out text the playground starts from when a text run is used there. */
export const PLAYGROUND_PROMPT_CHARS = 24;

/** The encoding a text file must have (a name, not a number about a model). */
const UTF8 = 'UTF-8';

/** What a text is made of, counted as the core counts it (characters are Unicode scalar values). */
export interface TextStats {
  bytes: number;
  chars: number;
  distinct: number;
  /** Characters trained on (the first part) and held out (the last tenth). */
  train: number;
  heldOut: number;
}

let memo: { text: string; stats: TextStats } | null = null;

/** The text's counts (remembered for the last text: the form draws often while runs train). */
export function textStats(text: string): TextStats {
  if (memo && memo.text === text) return memo.stats;
  const bytes = new TextEncoder().encode(text).length;
  let chars = 0;
  const seen = new Set<string>();
  for (const c of text) {
    chars++;
    seen.add(c);
  }
  const heldOut = Math.floor(chars / HELD_OUT_DIVISOR);
  const stats = { bytes, chars, distinct: seen.size, train: chars - heldOut, heldOut };
  memo = { text, stats };
  return stats;
}

/** Why the text cannot be trained on, in the page's language; '' when it can. */
export function textProblem(text: string): string {
  const s = textStats(text);
  if (s.bytes > MAX_TEXT_BYTES) {
    return msg(str`The text is ${int(s.bytes)} bytes, more than the ${int(MAX_TEXT_BYTES)} bytes a text may have: use a shorter excerpt.`, { id: 'lab.text.too-big' });
  }
  if (!text.trim()) return msg('The text is empty: paste or upload some text to train on.', { id: 'lab.text.empty' });
  if (s.chars < MIN_TEXT_CHARS) {
    return msg(str`The text has ${int(s.chars)} characters; it needs at least ${MIN_TEXT_CHARS} so that a tenth can be held out.`, { id: 'lab.text.too-short' });
  }
  if (s.distinct < 2) return msg('The text repeats one character: there is nothing to predict. It needs at least two different characters.', { id: 'lab.text.one-char' });
  const most = MAX_TEXT_VOCAB - SPECIAL_TOKENS;
  if (s.distinct > most) {
    return msg(str`The text has ${int(s.distinct)} different characters, more than the ${int(most)} a text model may have: use a text with fewer different characters.`, {
      id: 'lab.text.too-many-chars',
    });
  }
  return '';
}

/** A .txt file's text, or why it cannot be read (too large, not UTF-8); the size is checked before reading. */
export async function readTextFile(file: File): Promise<{ text: string } | { error: string }> {
  if (file.size > MAX_TEXT_BYTES) {
    return { error: msg(str`${file.name} is ${int(file.size)} bytes, more than the ${int(MAX_TEXT_BYTES)} bytes a text may have.`, { id: 'lab.text.file-too-big' }) };
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { error: msg(str`${file.name} is not ${UTF8} text: save it as ${UTF8} and upload it again.`, { id: 'lab.text.not-utf8' }) };
  }
}

/** The opening of the text's held-out part: where the playground starts when a text run is used there. */
export function heldOutPrompt(text: string, n = PLAYGROUND_PROMPT_CHARS): string {
  const chars = Array.from(text);
  const from = chars.length - Math.floor(chars.length / HELD_OUT_DIVISOR);
  return chars.slice(from, from + n).join('');
}

/** What the text box shows and where its edits go. */
export interface TextBoxView {
  readonly text: string;
  /** A note about the last upload ('' when none). */
  readonly note: string;
  readonly locked: boolean;
  setText(text: string): void;
  pick(file: File): void;
}

/** The text to learn: a box to paste into, a .txt picker, and what the text is made of or why it cannot be used. */
export function textBox(view: TextBoxView) {
  const s = textStats(view.text);
  const problem = view.text ? textProblem(view.text) : '';
  return html`<section class="text-task" data-text-task aria-labelledby="text-task-h">
    <h3 id="text-task-h">${msg('Your text', { id: 'lab.text.heading' })}</h3>
    <p class="help small">
      ${msg(
        'The model learns to continue this text one character at a time: its vocabulary is the text’s different characters (any script). The last tenth of the text is held out: the held-out loss and the next-character accuracy are measured there, on windows the run never trains on. Training windows are drawn from the first nine tenths with the run’s seed. The text is kept with the run in this browser, never put in a link.',
        { id: 'lab.text.help' },
      )}
    </p>
    <label for="f-text">${msg('Paste a text', { id: 'lab.text.paste' })}</label>
    <textarea
      id="f-text"
      name="text"
      rows="6"
      spellcheck="false"
      ?disabled=${view.locked}
      .value=${view.text}
      @input=${(e: Event) => view.setText((e.target as HTMLTextAreaElement).value)}
    ></textarea>
    <label class="upload"
      >${msg(str`or upload a .txt file (${UTF8})`, { id: 'lab.text.upload' })}
      <input
        type="file"
        accept=".txt,text/plain"
        data-text-file
        ?disabled=${view.locked}
        @change=${(e: Event) => {
          const input = e.target as HTMLInputElement;
          const f = input.files?.[0];
          if (f) view.pick(f);
          input.value = '';
        }}
    /></label>
    ${view.note ? html`<p class="note" role="status" data-text-note>${view.note}</p>` : nothing}
    ${problem
      ? html`<p class="alert" role="alert" data-text-problem>${problem}</p>`
      : view.text
        ? html`<p class="small" data-text-stats=${`${s.chars}:${s.distinct}:${s.train}:${s.heldOut}`}>
            ${msg(str`${int(s.chars)} characters (${int(s.bytes)} bytes), ${int(s.distinct)} different: trained on the first ${int(s.train)}, held out the last ${int(s.heldOut)}.`, {
              id: 'lab.text.stats',
            })}
          </p>`
        : nothing}
  </section>`;
}

/** What a text run wrote at its latest evaluation, from prompts that open held-out windows, with its held-out numbers per character. */
export function textRunBox(r: RunRecord | undefined) {
  if (!r || r.settings.task !== 'text') return nothing;
  const ev = r.log.lastEval();
  if (!ev) return nothing;
  const bits = ev.loss / Math.LN2;
  const ppl = Math.exp(ev.loss);
  const samples = ev.samples ?? [];
  return html`<section class="text-samples" data-text-samples aria-label=${msg('what the model writes', { id: 'lab.text.samples-label' })}>
    <h3>${msg(str`What ${r.name} writes`, { id: 'lab.text.samples-title' })}</h3>
    <p class="small" data-text-eval=${`${ev.loss}:${ev.metric}`}>
      ${msg(str`Held out: ${num(ev.loss, 3)} nats per character (${num(bits, 3)} bits, perplexity ${num(ppl, 3)}); the next character is guessed right ${num(100 * ev.metric, 3)} % of the time.`, {
        id: 'lab.text.eval',
      })}
    </p>
    <p class="help">${msg('Each line: a prompt taken from the held-out text, then what the model wrote after it (each character drawn from the model’s own probabilities).', { id: 'lab.text.samples-help' })}</p>
    <ol data-model-text>
      ${samples.map((line) => {
        const [prompt, rest] = splitSample(line);
        return html`<li data-sample><span class="prompt">${prompt}</span><span class="muted"> → </span><span class="continuation">${rest}</span></li>`;
      })}
    </ol>
  </section>`;
}

/** "prompt → continuation" as the core writes a sample, split at its first arrow. */
function splitSample(line: string): [string, string] {
  const i = line.indexOf(' → ');
  return i < 0 ? ['', line] : [line.slice(0, i), line.slice(i + 3)];
}
