// What a picture's caption and a shared link say about the playground as it is: the
// model, the input and every setting that differs from the defaults. No DOM here.

import type { ManifestEntry } from '../engine/protocol';
import { msg, str } from '@lit/localize';
import { DEFAULTS, formatHash, type Lang, type PlaygroundState } from './url';
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

/** What an embed snippet says besides the settings. */
export interface EmbedOptions {
  /** The module that defines the element (the built folder's playground.js), absolute. */
  script: string;
  /** embed.html, absolute ('' where there is none beside the module: no iframe form). */
  page: string;
  /** Where the element finds its models when they are not beside its module ('': beside it). */
  models: string;
  /** iframe-resize.js, absolute. */
  resize: string;
  /** The picture alone (`chrome="none"`), keeping these parts (null: the full view). */
  keep: readonly string[] | null;
  /** The interface's language to ask for (null: the reader's). */
  lang: Lang | null;
  /** Generated so far, and whether the generation is running now (the play state). */
  generated: number;
  playing: boolean;
  /** The iframe's height before embed.html reports its own (CSS pixels). */
  height: number;
  /** The room the view takes (CSS pixels): the element's min-height, so the post keeps it before any script runs. */
  room: number;
  /** The iframe's title (the view's). */
  title: string;
}

/**
 * The settings of an embed of this view: every setting as it is, but the reader's theme,
 * the views, the chapter and the lesson (the snippet names the view itself), and always the
 * play state — a generation the author stopped part-way plays exactly as far (`max`), one
 * not started stays still (`play=0`), so the picture in the post is the one on the page.
 */
export function embedPreset(st: PlaygroundState, o: Pick<EmbedOptions, 'generated' | 'playing'>): string {
  const still = !st.play && !o.playing && o.generated === 0;
  const stopped = !o.playing && o.generated > 0 && o.generated < st.max;
  const s: PlaygroundState = { ...st, theme: 'auto', lang: null, views: [], chapter: '', lesson: '', chrome: 'full', keep: [], play: !still, max: stopped ? o.generated : st.max };
  const p = new URLSearchParams(formatHash(s, DEFAULTS));
  p.set('play', still ? '0' : '1');
  return p.toString();
}

/** An attribute's value in HTML (`&`, `"` and `<` escaped). */
const attr = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The two snippets that put this view into a post: the script and the element, and an iframe of embed.html. */
export function embedSnippets(st: PlaygroundState, view: string, o: EmbedOptions): { element: string; iframe: string } {
  const preset = embedPreset(st, o);
  const alone = o.keep ? ` chrome="none"${o.keep.length ? ` keep="${attr(o.keep.join(','))}"` : ''}` : '';
  const lang = o.lang ? ` lang="${o.lang}"` : '';
  const room = o.room > 0 ? ` style="display:block;min-height:${Math.ceil(o.room)}px"` : '';
  const models = o.models ? ` models="${attr(o.models)}"` : '';
  const element = `<script type="module" src="${attr(o.script)}"></script>\n<transformer-playground no-hash views="${attr(view)}"${alone}${lang}${models}${room} preset="${attr(preset)}"></transformer-playground>`;
  if (!o.page) return { element, iframe: '' };
  const hash = new URLSearchParams(`views=${view}`);
  if (o.keep) {
    hash.set('chrome', 'none');
    if (o.keep.length) hash.set('keep', o.keep.join(','));
  }
  if (o.lang) hash.set('lang', o.lang);
  for (const [k, v] of new URLSearchParams(preset)) hash.set(k, v);
  const src = `${o.page}#${hash.toString()}`;
  const iframe = `<iframe src="${attr(src)}" title="${attr(o.title)}" style="width:100%;height:${Math.ceil(o.height)}px;border:0"></iframe>\n<script type="module" src="${attr(o.resize)}"></script>`;
  return { element, iframe };
}
