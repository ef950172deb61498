// What a picture's caption and a shared link say about the playground as it is: the
// model, the input and every setting that differs from the defaults. No DOM here.

import type { ManifestEntry } from '../engine/protocol';
import { msg, str } from '@lit/localize';
import { DEFAULTS, formatHash, type PlaygroundState } from './url';
import { modelTitle } from '../i18n/models';

/** The settings a link to this view carries: everything but the reader's own theme and language. */
export function linkHash(st: PlaygroundState, view: string | null): string {
  return formatHash({ ...st, theme: 'auto', lang: null, views: view ? [view] : st.views }, DEFAULTS);
}

/** The model as a caption names it: its title and file. */
export function modelLabel(st: PlaygroundState, manifest: ManifestEntry[]): string {
  const m = manifest.find((e) => e.file === st.model);
  return m ? `${modelTitle(m)} (${m.file})` : st.model;
}

/** The input and the changed settings, in one line for a caption. */
export function settingsLabel(st: PlaygroundState): string {
  const parts: string[] = [];
  if (st.text) parts.push(msg(str`input "${st.text}"`));
  for (const b of st.batch) if (b.trim()) parts.push(msg(str`batch "${b}"`));
  const rest = new URLSearchParams(formatHash({ ...st, model: DEFAULTS.model, text: DEFAULTS.text, batch: [], views: [], theme: 'auto', lang: null, play: DEFAULTS.play, speed: DEFAULTS.speed }, DEFAULTS));
  // Layers and heads counted from 1, as the views label them; the rest as the link says.
  for (const [k, v] of rest) parts.push(k === 'layer' ? msg(str`layer ${Number(v) + 1}`) : k === 'head' ? msg(str`head ${Number(v) + 1}`) : `${k}=${v}`);
  return parts.join(msg(', '));
}
