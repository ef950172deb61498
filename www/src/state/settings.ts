// How the store reads settings: a link, a preset or the element's attributes, parsed by the
// URL table of ./url.ts against the defaults (the manifest's prompt for the model a link
// names, a lesson's implied settings under the link's), with the names the page does not
// know dropped and said in a note. Also the words for what a switch change did.

import { withLang } from '../i18n/scope';
import { msg, str } from '@lit/localize';
import type { ManifestEntry } from '../engine/protocol';
import { DEFAULTS, formatHash, formatMask, parseHash, quote, SETTING_NAMES, type Parsed, type PlaygroundState } from './url';
import type { StoreHost } from './host';

/** A forward pass's mode, in words. */
const modeName = (m: PlaygroundState['mode']) => (m === 'train' ? msg('train mode') : msg('eval mode'));

/** A way of choosing the next token, in words (as the output view's buttons name it). */
const strategyName = (k: PlaygroundState['strategy']) => (k === 'greedy' ? msg('greedy') : k === 'sample' ? msg('sample') : msg('beam search'));

/** A backend, by its name (the same in every language); a choice that is not one backend is shown as the setting's value. */
const backendName = (b: string) => (b === 'webgpu' ? 'WebGPU' : b === 'cpu' ? 'CPU' : b === 'auto' ? msg('Auto', { id: 'engine.backend-auto' }) : b);

/** The run-time switch that changed between two settings, in words; '' when none did. */
export function describeSwitchChange(a: PlaygroundState, b: PlaygroundState, causalDefault: boolean): string {
  const onOff = (v: boolean) => (v ? msg('on') : msg('off'));
  const parts: string[] = [];
  const ca = a.causal ?? causalDefault;
  const cb = b.causal ?? causalDefault;
  if (ca !== cb) parts.push(msg(str`causal mask ${onOff(ca)} → ${onOff(cb)}`));
  if (formatMask(a.mask) !== formatMask(b.mask)) parts.push(msg(str`mask ${formatMask(a.mask)} → ${formatMask(b.mask)}`));
  if (a.pad !== b.pad) parts.push(msg(str`padding mask ${onOff(a.pad)} → ${onOff(b.pad)}`));
  if (a.scale !== b.scale) parts.push(msg(str`√d_k scaling ${onOff(a.scale)} → ${onOff(b.scale)}`));
  if (formatHash({ ...DEFAULTS, ablate: a.ablate }) !== formatHash({ ...DEFAULTS, ablate: b.ablate })) {
    parts.push(msg(str`${a.ablate.length} → ${b.ablate.length} heads switched off`));
  }
  if (a.backend !== b.backend) parts.push(`${backendName(a.backend)} → ${backendName(b.backend)}`);
  if (a.mode !== b.mode) parts.push(`${modeName(a.mode)} → ${modeName(b.mode)}`);
  if (a.mode === 'train' && b.mode === 'train' && a.drop !== b.drop) parts.push(msg(str`dropout ${a.drop ?? msg("the model's")} → ${b.drop ?? msg("the model's")}`));
  return parts.join(msg(', '));
}

/**
 * The settings on each side of a change, in words, for the labels of a side-by-side
 * ("before: √d_k scaling on" | "after: √d_k scaling off"). `generation` also names what
 * only the generation reads (the choice of token, the cache, the length, the seed, the model).
 * Both sides are '' when nothing of the kind changed.
 */
export function switchSides(
  a: PlaygroundState,
  b: PlaygroundState,
  causalDefault: boolean,
  opts: { generation?: boolean; title?: (file: string) => string } = {},
): { before: string; after: string; what: string } {
  const onOff = (v: boolean) => (v ? msg('on') : msg('off'));
  const before: string[] = [];
  const after: string[] = [];
  const what: string[] = [];
  const side = (name: string, x: string, y: string) => {
    if (x === y) return;
    what.push(name);
    before.push(`${name} ${x}`);
    after.push(`${name} ${y}`);
  };
  if (opts.generation && a.model !== b.model) {
    const t = opts.title ?? ((f: string) => f);
    what.push(msg('the model'));
    before.push(t(a.model));
    after.push(t(b.model));
  }
  side(msg('causal mask'), onOff(a.causal ?? causalDefault), onOff(b.causal ?? causalDefault));
  side(msg('mask'), formatMask(a.mask), formatMask(b.mask));
  side(msg('padding mask'), onOff(a.pad), onOff(b.pad));
  side(msg('√d_k scaling'), onOff(a.scale), onOff(b.scale));
  const ablated = (s: PlaygroundState) => formatHash({ ...DEFAULTS, ablate: s.ablate }, DEFAULTS);
  if (ablated(a) !== ablated(b)) side(msg('heads switched off'), String(a.ablate.length), String(b.ablate.length));
  side(msg('backend'), backendName(a.backend), backendName(b.backend));
  if (opts.generation) {
    side(msg('choice'), strategyName(a.strategy), strategyName(b.strategy));
    side(msg('temperature'), String(a.temp), String(b.temp));
    side('top-k', String(a.topk), String(b.topk));
    side('top-p', String(a.topp), String(b.topp));
    side(msg('beam width'), String(a.beam), String(b.beam));
    side(msg('seed'), String(a.seed), String(b.seed));
    side(msg('KV cache'), onOff(a.cache), onOff(b.cache));
    side(msg('tokens'), String(a.max), String(b.max));
  }
  const sep = msg(', ');
  return { before: before.join(sep), after: after.join(sep), what: what.join(sep) };
}

/**
 * The Chinese model that stands for `entry` (the shipped default) in a Chinese page: the
 * same task in Chinese (`zh-<task>`) with the same position encoding, else the first model
 * of that task, else the first Chinese model; `entry` itself when it is Chinese already
 * or the list has no Chinese model.
 */
export function chineseTwin(manifest: readonly ManifestEntry[], entry: ManifestEntry): ManifestEntry {
  if (entry.task.startsWith('zh-')) return entry;
  const plain = manifest.filter((m) => !m.variant && !m.share_qk);
  const task = `zh-${entry.task}`;
  return (
    plain.find((m) => m.task === task && m.arch === entry.arch && m.pos_encoding === entry.pos_encoding) ??
    plain.find((m) => m.task === task) ??
    plain.find((m) => m.task.startsWith('zh-')) ??
    entry
  );
}

/** The parts of a model's manifest entry the page checks before using it. */
export function validManifest(x: unknown): ManifestEntry[] {
  if (!Array.isArray(x)) throw new Error('models/manifest.json is not a list');
  return x.filter(
    (m): m is ManifestEntry =>
      m && typeof m.file === 'string' && /^[A-Za-z0-9_.-]+\.safetensors$/.test(m.file) && typeof m.title === 'string',
  );
}

/** The defaults a link is read against, and the reading. */
export class SettingsReader {
  /** What a link is read against: the page's defaults, a preset's, a lesson's implied settings. */
  defaults: PlaygroundState = { ...DEFAULTS };
  /** The defaults before any implied settings (a lesson's preset). */
  base: PlaygroundState = { ...DEFAULTS };
  /** The implied settings `defaults` holds now ('' for none). */
  private impliedNow = '';

  constructor(
    private host: Pick<StoreHost, 'viewNames' | 'implied' | 'hideable' | 'chapterNames' | 'lang'>,
    private manifest: () => readonly ManifestEntry[],
  ) {}

  /** The defaults for a state that runs `model`: that model's own default prompt. */
  defaultsFor(model: string): PlaygroundState {
    const entry = this.manifest().find((m) => m.file === model);
    return { ...this.defaults, text: entry ? entry.default_prompt : this.defaults.text };
  }

  /** Parse settings; a link that names a model but no text gets that model's prompt. */
  parse(text: string, base: PlaygroundState): Parsed {
    // The notes in this playground's language.
    const lang = this.host.lang?.();
    if (lang) return withLang(lang, () => this.parseIn(text, base));
    return this.parseIn(text, base);
  }

  private parseIn(text: string, base: PlaygroundState): Parsed {
    const first = this.checkViews(parseHash(text, base), base);
    const entry = this.manifest().find((m) => m.file === first.state.model);
    if (!entry || entry.file === base.model) return first;
    return this.checkViews(parseHash(text, { ...base, text: entry.default_prompt }), base);
  }

  /**
   * The settings this link implies (a lesson's preset) become the defaults under it; a link
   * that implies other settings than before (another lesson, or none) starts from them.
   * Returns the notes about the implied settings.
   */
  implyFrom(hash: string): string[] {
    const implied = this.host.implied?.(hash) ?? '';
    if (implied === this.impliedNow) return [];
    this.impliedNow = implied;
    if (!implied) {
      this.defaults = this.base;
      return [];
    }
    const p = this.parse(implied, this.base);
    this.defaults = p.state;
    return p.notes;
  }

  /** A model named by a link must be one of the shipped ones. */
  checkModel(s: PlaygroundState, notes: string[]): PlaygroundState {
    if (this.manifest().some((m) => m.file === s.model)) return s;
    const lang = this.host.lang?.();
    const note = () => msg(str`Ignored model=${quote(s.model)}: not one of the shipped models.`);
    notes.push(lang ? withLang(lang, note) : note());
    return { ...s, model: this.defaults.model };
  }

  /** Classroom names must be known ones (settings for `lock`, controls for `hide`); the others are dropped with a note. */
  private checkClassroom(p: Parsed): Parsed {
    const notes = [...p.notes];
    const known = { lock: SETTING_NAMES, hide: this.host.hideable ?? [] };
    const state = { ...p.state };
    for (const key of ['lock', 'hide'] as const) {
      const bad = state[key].filter((n) => !known[key].includes(n));
      if (!bad.length) continue;
      state[key] = state[key].filter((n) => known[key].includes(n));
      const names = bad.map(quote).join(', ');
      notes.push(
        key === 'lock'
          ? msg(str`Ignored lock ${names}: not a setting of the page.`, { id: 'teacher.bad-lock' })
          : msg(str`Ignored hide ${names}: not a control of the page.`, { id: 'teacher.bad-hide' }),
      );
    }
    return { state, notes };
  }

  /** A chapter must be one of the page's (or `all`); another name is dropped with a note. */
  private checkChapter(p: Parsed, base: PlaygroundState): Parsed {
    const names = this.host.chapterNames;
    const c = p.state.chapter;
    if (!names || c === '' || c === 'all' || names.includes(c)) return p;
    const note = msg(str`Ignored chapter=${quote(c)}: the chapters are ${[...names, 'all'].join(', ')}.`, { id: 'chapter.bad-name' });
    return { state: { ...p.state, chapter: base.chapter }, notes: [...p.notes, note] };
  }

  /** View names must be registered ones; the others are dropped with a note. */
  private checkViews(p: Parsed, base: PlaygroundState): Parsed {
    if (p.state.lock.length || p.state.hide.length) p = this.checkClassroom(p);
    p = this.checkChapter(p, base);
    const unknown = p.state.views.filter((v) => !this.host.viewNames.includes(v));
    if (!unknown.length) return p;
    const views = p.state.views.filter((v) => this.host.viewNames.includes(v));
    const note = msg(str`Ignored views ${unknown.map(quote).join(', ')}: known views are ${this.host.viewNames.join(', ')}.`);
    return { state: { ...p.state, views: views.length ? views : base.views }, notes: [...p.notes, note] };
  }
}
