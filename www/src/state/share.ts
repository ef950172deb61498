// What a picture's caption and a shared link say about the playground as it is: the
// model, the input and every setting that differs from the defaults. No DOM here.

import type { ManifestEntry } from '../engine/protocol';
import { DEFAULTS, formatHash, type PlaygroundState } from './url';

/** The settings a link to this view carries: everything but the reader's own theme. */
export function linkHash(st: PlaygroundState, view: string | null): string {
  return formatHash({ ...st, theme: 'auto', views: view ? [view] : st.views }, DEFAULTS);
}

/** The model as a caption names it: its title and file. */
export function modelLabel(st: PlaygroundState, manifest: ManifestEntry[]): string {
  const m = manifest.find((e) => e.file === st.model);
  return m ? `${m.title} (${m.file})` : st.model;
}

/** The input and the changed settings, in one line for a caption. */
export function settingsLabel(st: PlaygroundState): string {
  const parts: string[] = [];
  if (st.text) parts.push(`input "${st.text}"`);
  for (const b of st.batch) if (b.trim()) parts.push(`batch "${b}"`);
  const rest = new URLSearchParams(formatHash({ ...st, model: DEFAULTS.model, text: DEFAULTS.text, batch: [], views: [], theme: 'auto', play: DEFAULTS.play, speed: DEFAULTS.speed }, DEFAULTS));
  // Layers and heads counted from 1, as the views label them; the rest as the link says.
  for (const [k, v] of rest) parts.push(k === 'layer' || k === 'head' ? `${k} ${Number(v) + 1}` : `${k}=${v}`);
  return parts.join(', ');
}
