// Whether a newly loaded model can spell the page's prompt, and the note when it cannot.

import { msg, str } from '@lit/localize';
import type { EngineClient } from '../engine/client';
import { modelTitle } from '../i18n/models';

/** The characters (or words) of these texts the loaded model's vocabulary cannot spell, each once. */
export async function unspellable(engine: EngineClient, texts: string[]): Promise<string[]> {
  const missing = new Set<string>();
  for (const text of texts) {
    if (!text.trim()) continue;
    const t = await engine.call('tokenize', { text });
    for (const [, piece] of t.unknown) missing.add(piece);
  }
  return [...missing];
}

/** The note for a prompt the new model cannot spell. */
export function cannotSpell(entry: { file: string; title: string; default_prompt: string }, missing: string[]): string {
  const shown = missing.slice(0, 12).map((c) => `“${c}”`).join(' ');
  const more = missing.length > 12 ? msg(str` and ${missing.length - 12} more`) : '';
  return msg(str`${modelTitle(entry)} cannot spell ${shown}${more} of the prompt, so it starts from its own example, “${entry.default_prompt}”.`, {
    id: 'store.cannot-spell',
  });
}
