// Every control of the playground as one plain table that round-trips through the URL
// hash. The hash is untrusted: each value is checked, bad values and unknown keys are
// ignored with a note the page shows, and nothing here touches the DOM.

import { msg, str } from '@lit/localize';
import type { AttnSite, BackendWant, HeadRef, MaskEdit, Sampling } from '../engine/protocol';

export interface PlaygroundState {
  /** A lab run's settings as link text (`task=reverse&n_layers=6&residual=0`): the lab's form starts from them ('' for none). */
  train: string;
  /** File name of a shipped model (an entry of models/manifest.json). */
  model: string;
  /** The prompt (decoder-only), the source sentence (encoder-decoder) or the input (encoder). */
  text: string;
  /** More inputs of other lengths, run as one padded batch with `text` (padding demo). */
  batch: string[];
  /** null: the architecture's default (decoders causal, encoders not). */
  causal: boolean | null;
  /** The mask editor's mask of the main stack's self-attention; null: the causal switch decides. */
  mask: MaskEdit | null;
  pad: boolean;
  scale: boolean;
  ablate: HeadRef[];
  backend: BackendWant;
  seed: number;
  strategy: Sampling['strategy'];
  temp: number;
  topk: number;
  topp: number;
  beam: number;
  /** Pause between generated tokens, in milliseconds. */
  speed: number;
  /** Tokens to generate before stopping. */
  max: number;
  /** Start generating on load. */
  play: boolean;
  /**
   * The inference views' forward pass: eval mode, or train mode (dropout masks drawn from
   * `seed`, BatchNorm with the batch's own statistics), which runs on the CPU.
   */
  mode: Mode;
  /** Dropout probability in train mode (null: the model's own). */
  drop: number | null;
  /** Generate with the KV cache (off: every step recomputes the whole prefix). */
  cache: boolean;
  /** The attention sublayer, layer and head the views show. */
  site: AttnSite | null;
  layer: number;
  head: number;
  /** Colours: the reader's system preference (auto), or light or dark. */
  theme: Theme;
  /** The interface's language; null: the reader's own (remembered choice, else the browser's). */
  lang: Lang | null;
  /** The views shown, by registered name (empty: the overview and the chapter `chapter`). */
  views: string[];
  /** The chapter opened below the overview (www/src/views/chapters.ts; '' for none, 'all' for every view). */
  chapter: string;
  /** The lesson shown above the views (its id, www/src/lessons/; '' for none). */
  lesson: string;
  /** Classroom mode: settings the learner may not change (names of this table). */
  lock: string[];
  /** Classroom mode: controls not shown (names in www/src/lessons/classroom.ts). */
  hide: string[];
  /** An assignment: the lessons it gives, in the teacher's order (ids; empty: none). */
  lessons: string[];
  /** An assignment's instruction from the teacher, shown as text in the lesson panel ('' for none). */
  note: string;
  /** An assignment's class example sentence, shown in the lesson panel with a button that puts it in the text box ('' for none). */
  example: string;
  /** The frame around each view: `full` (title, prose, controls, ⋯ menu) or `none` (the picture alone). */
  chrome: Chrome;
  /** With `chrome=none`: the parts of each view kept besides its picture (names per view, www/src/views/alone.ts). */
  keep: string[];
}

export type Theme = 'auto' | 'light' | 'dark';
/** The interface's languages: English and Simplified Chinese. */
export type Lang = 'en' | 'zh-Hans';
export const LANGS: readonly Lang[] = ['en', 'zh-Hans'];
export type Mode = 'eval' | 'train';
export type Chrome = 'full' | 'none';

/**
 * The names embeds use — view names, setting keys and model file names — are a contract,
 * versioned here and in www/README.md ("Stable names"): a name is never removed, and one
 * that is renamed keeps working through these tables (old name → current name). The
 * version goes up when a name is added or renamed.
 */
export const CONTRACT_VERSION = 1;
/** Setting keys accepted under another spelling (old or long form → the key of the table below). */
export const SETTING_ALIASES: Readonly<Record<string, string>> = {
  temperature: 'temp',
  'top-k': 'topk',
  'top-p': 'topp',
  ablation: 'ablate',
  speed_ms: 'speed',
};
/** View names accepted under another spelling (→ the registered name, www/src/views/registry.ts). */
export const VIEW_ALIASES: Readonly<Record<string, string>> = {
  heatmap: 'attention',
  probabilities: 'output',
  badge: 'backend',
  sqrtdk: 'sqrt-dk',
  'scaled-dot': 'sqrt-dk',
  residual: 'hidden',
  beam: 'beams',
  tokens: 'input',
};
/** Model files accepted under another name (→ a file of models/manifest.json). */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  'grammar.safetensors': 'grammar-alibi.safetensors',
  'grammar-lm.safetensors': 'grammar-alibi.safetensors',
};

/** A name with its alias in `table` resolved (the table's own keys only: `__proto__` is no alias). */
export function unalias(table: Readonly<Record<string, string>>, name: string): string {
  return Object.hasOwn(table, name) ? table[name] : name;
}

/** A view name with its alias resolved. */
export function viewAlias(name: string): string {
  return unalias(VIEW_ALIASES, name);
}

export const DEFAULTS: PlaygroundState = {
  model: '',
  text: '',
  batch: [],
  causal: null,
  mask: null,
  pad: true,
  scale: true,
  ablate: [],
  backend: 'auto',
  seed: 0,
  strategy: 'greedy',
  temp: 1,
  topk: 0,
  topp: 1,
  beam: 3,
  speed: 150,
  max: 32,
  play: true,
  mode: 'eval',
  drop: null,
  cache: true,
  site: null,
  layer: 0,
  head: 0,
  theme: 'auto',
  lang: null,
  views: [],
  chapter: '',
  train: '',
  lesson: '',
  lock: [],
  hide: [],
  lessons: [],
  note: '',
  example: '',
  chrome: 'full',
  keep: [],
};

/** Longest text accepted from a link; longer values are refused, not cut. */
export const MAX_TEXT = 200;
export const MAX_BATCH = 4;
/** Longest teacher's instruction accepted from a link; longer ones are refused, not cut. */
export const MAX_NOTE = 300;
/** Most lessons an assignment may give. */
export const MAX_ASSIGNED = 16;
/** A lab run's settings in a link: `key=value` pairs joined by `&`, plain or %-escaped characters only. */
const RUN_TEXT = /^[a-z][a-z0-9_]{0,19}=[A-Za-z0-9_.:%+-]{0,60}(&[a-z][a-z0-9_]{0,19}=[A-Za-z0-9_.:%+-]{0,60}){0,39}$/;
const MAX_RUN_TEXT = 2000;
const SITES: AttnSite[] = ['encoder_self', 'decoder_self', 'cross'];

export interface Parsed {
  state: PlaygroundState;
  /** One sentence per ignored key or value, safe to show as text. */
  notes: string[];
}

/** Quote untrusted text for a note: bounded length, control characters dropped. */
export function quote(s: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, '');
  return clean.length > 40 ? `"${clean.slice(0, 40)}…"` : `"${clean}"`;
}

function parseBool(v: string): boolean | undefined {
  if (v === '1' || v === 'true' || v === 'on') return true;
  if (v === '0' || v === 'false' || v === 'off') return false;
  return undefined;
}

export function parseTheme(v: string): Theme | undefined {
  return v === 'auto' || v === 'light' || v === 'dark' ? v : undefined;
}

export function parseLang(v: string): Lang | undefined {
  return (LANGS as readonly string[]).includes(v) ? (v as Lang) : undefined;
}

function parseNumber(v: string, min: number, max: number, integer: boolean): number | undefined {
  if (!/^-?\d+(\.\d+)?$/.test(v)) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) return undefined;
  if (integer && !Number.isInteger(n)) return undefined;
  return n;
}

/** `site.layer.head` items joined by commas, e.g. `decoder_self.0.2,cross.1.0`. */
function parseAblate(v: string): HeadRef[] | undefined {
  if (v === '') return [];
  const out: HeadRef[] = [];
  const items = v.split(',');
  if (items.length > 64) return undefined;
  for (const item of items) {
    const m = /^(encoder_self|decoder_self|cross)\.(\d{1,2})\.(\d{1,2})$/.exec(item);
    if (!m) return undefined;
    out.push({ site: m[1] as AttnSite, layer: Number(m[2]), head: Number(m[3]) });
  }
  return out;
}

/** Most painted cells a link may carry. */
export const MAX_PAINTED = 256;

/**
 * A mask as `rule[;cells]`: the rule `none`, `causal`, `prefix-P` or `window-W`, then the
 * painted cells as `query.key.h` (hidden) or `query.key.s` (shown), comma-separated, e.g.
 * `window-3;4.1.h,0.2.s`. Positions and lengths are checked against the model by the core.
 */
export function parseMask(v: string): MaskEdit | null | undefined {
  if (v === '' || v === 'auto') return null;
  const [rule, cells, extra] = v.split(';');
  if (extra !== undefined) return undefined;
  let m: MaskEdit['rule'];
  const num = /^(prefix|window)-(\d{1,4})$/.exec(rule);
  if (rule === 'none') m = { kind: 'none' };
  else if (rule === 'causal') m = { kind: 'causal' };
  else if (num && num[1] === 'prefix') m = { kind: 'prefix_lm', prefix: Number(num[2]) };
  else if (num && Number(num[2]) >= 1) m = { kind: 'sliding_window', window: Number(num[2]) };
  else return undefined;
  const out: MaskEdit = { rule: m, cells: [] };
  if (cells === undefined || cells === '') return out;
  const items = cells.split(',');
  if (items.length > MAX_PAINTED) return undefined;
  for (const item of items) {
    const c = /^(\d{1,4})\.(\d{1,4})\.([hs])$/.exec(item);
    if (!c) return undefined;
    out.cells.push({ query: Number(c[1]), key: Number(c[2]), hidden: c[3] === 'h' });
  }
  return out;
}

export function formatMask(m: MaskEdit | null): string {
  if (m === null) return 'auto';
  const r = m.rule;
  const rule = r.kind === 'prefix_lm' ? `prefix-${r.prefix}` : r.kind === 'sliding_window' ? `window-${r.window}` : r.kind;
  return m.cells.length ? `${rule};${m.cells.map((c) => `${c.query}.${c.key}.${c.hidden ? 'h' : 's'}`).join(',')}` : rule;
}

function formatAblate(a: HeadRef[]): string {
  return a.map((h) => `${h.site}.${h.layer}.${h.head}`).join(',');
}

/**
 * What changing a setting makes the page do. A change does the union of its settings'
 * effects, in this order; every change is drawn again.
 */
export type Effect =
  /** load the model the setting names (then tokenize, restart and run, as below) */
  | 'reload'
  /** switch the engine to the backend the setting names */
  | 'backend'
  /** run the input through the tokenizer again */
  | 'tokenize'
  /** start the generation again from the prompt (and run the forward pass) */
  | 'restart'
  /** run the forward pass again, traces and all */
  | 'forward';

type Field = {
  [K in keyof PlaygroundState]: {
    parse: (v: string) => PlaygroundState[K] | undefined;
    format: (v: PlaygroundState[K]) => string;
    /** What a valid value looks like, for the note (in the page's language). */
    expect: () => string;
    /** What a change of this setting makes happen ([]: it is only drawn again). */
    effects: readonly Effect[];
  };
};

const RESTART: readonly Effect[] = ['restart'];
const REDRAW: readonly Effect[] = [];

const FIELDS: Field = {
  model: {
    parse: (v) => (/^[A-Za-z0-9_.-]{1,80}\.safetensors$/.test(v) ? v : undefined),
    format: (v) => v,
    expect: () => msg('a model file name ending in .safetensors', { id: 'url.expect.model' }),
    effects: ['reload', 'tokenize', 'restart'],
  },
  text: {
    parse: (v) => (v.length <= MAX_TEXT ? v : undefined),
    format: (v) => v,
    expect: () => msg(str`text of at most ${MAX_TEXT} characters`, { id: 'url.expect.text' }),
    effects: ['tokenize', 'restart'],
  },
  batch: {
    parse: (v) => {
      if (v === '') return [];
      const lines = v.split('\n');
      if (lines.length > MAX_BATCH || lines.some((l) => l.length > MAX_TEXT)) return undefined;
      return lines;
    },
    format: (v) => v.join('\n'),
    expect: () => msg(str`at most ${MAX_BATCH} lines of at most ${MAX_TEXT} characters`, { id: 'url.expect.batch' }),
    effects: ['tokenize', 'forward'],
  },
  causal: {
    parse: (v) => (v === 'auto' ? null : parseBool(v)),
    format: (v) => (v === null ? 'auto' : v ? '1' : '0'),
    expect: () => msg('1, 0 or auto', { id: 'url.expect.causal' }),
    effects: RESTART,
  },
  mask: {
    parse: parseMask,
    format: formatMask,
    expect: () => msg(str`auto, none, causal, prefix-P or window-W (W ≥ 1), then optionally ;query.key.h or .s cells (at most ${MAX_PAINTED})`, { id: 'url.expect.mask' }),
    effects: RESTART,
  },
  pad: { parse: parseBool, format: (v) => (v ? '1' : '0'), expect: () => msg('1 or 0', { id: 'url.expect.pad' }), effects: RESTART },
  scale: { parse: parseBool, format: (v) => (v ? '1' : '0'), expect: () => msg('1 or 0', { id: 'url.expect.scale' }), effects: RESTART },
  ablate: { parse: parseAblate, format: formatAblate, expect: () => msg('heads like decoder_self.0.1, comma-separated', { id: 'url.expect.ablate' }), effects: RESTART },
  backend: {
    parse: (v) => (v === 'auto' || v === 'webgpu' || v === 'cpu' ? v : undefined),
    format: (v) => v,
    expect: () => msg('auto, webgpu or cpu', { id: 'url.expect.backend-auto' }),
    effects: ['backend', 'restart'],
  },
  seed: { parse: (v) => parseNumber(v, 0, 4294967295, true), format: String, expect: () => msg('a whole number from 0 to 4294967295', { id: 'url.expect.seed' }), effects: RESTART },
  strategy: {
    parse: (v) => (v === 'greedy' || v === 'sample' || v === 'beam' ? v : undefined),
    format: (v) => v,
    expect: () => msg('greedy, sample or beam', { id: 'url.expect.strategy' }),
    effects: RESTART,
  },
  temp: { parse: (v) => parseNumber(v, 0.05, 5, false), format: String, expect: () => msg('a number from 0.05 to 5', { id: 'url.expect.temp' }), effects: RESTART },
  topk: { parse: (v) => parseNumber(v, 0, 10000, true), format: String, expect: () => msg('a whole number from 0 (off) to 10000', { id: 'url.expect.topk' }), effects: RESTART },
  topp: { parse: (v) => parseNumber(v, 0.01, 1, false), format: String, expect: () => msg('a number from 0.01 to 1', { id: 'url.expect.topp' }), effects: RESTART },
  beam: { parse: (v) => parseNumber(v, 1, 8, true), format: String, expect: () => msg('a whole number from 1 to 8', { id: 'url.expect.beam' }), effects: RESTART },
  speed: { parse: (v) => parseNumber(v, 0, 2000, true), format: String, expect: () => msg('milliseconds from 0 to 2000', { id: 'url.expect.speed' }), effects: REDRAW },
  max: { parse: (v) => parseNumber(v, 1, 200, true), format: String, expect: () => msg('a whole number from 1 to 200', { id: 'url.expect.max' }), effects: RESTART },
  play: { parse: parseBool, format: (v) => (v ? '1' : '0'), expect: () => msg('1 or 0', { id: 'url.expect.play' }), effects: REDRAW },
  // Train mode changes what the forward pass computes (generation stays in eval mode).
  mode: { parse: (v) => (v === 'eval' || v === 'train' ? v : undefined), format: (v) => v, expect: () => msg('eval or train', { id: 'url.expect.mode' }), effects: ['forward'] },
  drop: {
    parse: (v) => (v === 'model' ? null : parseNumber(v, 0, 0.9, false)),
    format: (v) => (v === null ? 'model' : String(v)),
    expect: () => msg("a number from 0 to 0.9, or 'model' (the model's own)", { id: 'url.expect.drop' }),
    effects: ['forward'],
  },
  // The same tokens either way: only the cost differs, so the generation starts again to show it.
  cache: { parse: parseBool, format: (v) => (v ? '1' : '0'), expect: () => msg('1 or 0', { id: 'url.expect.cache' }), effects: RESTART },
  site: {
    parse: (v) => (SITES.includes(v as AttnSite) ? (v as AttnSite) : undefined),
    format: (v) => v ?? '',
    expect: () => msg('encoder_self, decoder_self or cross', { id: 'url.expect.site' }),
    effects: REDRAW,
  },
  layer: { parse: (v) => parseNumber(v, 0, 63, true), format: String, expect: () => msg('a layer number from 0 to 63', { id: 'url.expect.layer' }), effects: REDRAW },
  head: { parse: (v) => parseNumber(v, 0, 63, true), format: String, expect: () => msg('a head number from 0 to 63', { id: 'url.expect.head' }), effects: REDRAW },
  // A newly shown view may need more of the forward pass (the q·k inspector's q, k, v).
  views: {
    parse: (v) => (v === '' ? [] : /^[a-z][a-z0-9-]{0,31}(,[a-z][a-z0-9-]{0,31}){0,31}$/.test(v) ? v.split(',') : undefined),
    format: (v) => v.join(','),
    expect: () => msg('view names, comma-separated', { id: 'url.expect.views' }),
    effects: ['forward'],
  },
  // Checked for its shape here; the store drops (and names) an unknown chapter.
  chapter: { parse: (v) => (/^([a-z][a-z-]{0,23})?$/.test(v) ? v : undefined), format: (v) => v, expect: () => msg('a chapter name such as attention', { id: 'url.expect.chapter' }), effects: ['forward'] },
  theme: { parse: parseTheme, format: (v) => v, expect: () => msg('auto, light or dark', { id: 'url.expect.theme' }), effects: REDRAW },
  // The page's strings change; nothing is computed again (numbers are the same in every language).
  lang: { parse: (v) => (v === 'auto' ? null : parseLang(v)), format: (v) => v ?? 'auto', expect: () => msg('en, zh-Hans or auto', { id: 'url.expect.lang' }), effects: REDRAW },
  // Checked here for its shape only; the lab checks every value (www/src/lab/url.ts) and
  // reports what it refuses.
  train: {
    parse: (v) => (v === '' || (v.length <= MAX_RUN_TEXT && RUN_TEXT.test(v)) ? v : undefined),
    format: (v) => v,
    expect: () => msg('run settings like task=reverse&n_layers=6', { id: 'url.expect.train' }),
    effects: REDRAW,
  },
  // The lesson's own settings are its preset, applied as the defaults under the link's.
  lesson: { parse: (v) => (/^([a-z][a-z0-9-]{0,39})?$/.test(v) ? v : undefined), format: (v) => v, expect: () => msg('a lesson id such as scaled-dot', { id: 'url.expect.lesson' }), effects: REDRAW },
  // Names checked for their shape here; the store drops (and names) the unknown ones.
  lock: { parse: parseNames, format: (v) => v.join(','), expect: () => msg('setting names, comma-separated', { id: 'url.expect.lock' }), effects: REDRAW },
  hide: { parse: parseNames, format: (v) => v.join(','), expect: () => msg('control names, comma-separated', { id: 'url.expect.hide' }), effects: REDRAW },
  // An assignment: lesson ids checked for their shape here; the lesson panel drops (and names) unknown ones.
  lessons: {
    parse: (v) => (v === '' ? [] : new RegExp(`^[a-z][a-z0-9-]{0,39}(,[a-z][a-z0-9-]{0,39}){0,${MAX_ASSIGNED - 1}}$`).test(v) ? [...new Set(v.split(','))] : undefined),
    format: (v) => v.join(','),
    expect: () => msg(str`at most ${MAX_ASSIGNED} lesson ids, comma-separated`, { id: 'url.expect.lessons' }),
    effects: REDRAW,
  },
  // Shown as text, never as markup.
  note: { parse: (v) => (v.length <= MAX_NOTE ? v : undefined), format: (v) => v, expect: () => msg(str`text of at most ${MAX_NOTE} characters`, { id: 'url.expect.note' }), effects: REDRAW },
  example: { parse: (v) => (v.length <= MAX_TEXT ? v : undefined), format: (v) => v, expect: () => msg(str`text of at most ${MAX_TEXT} characters`, { id: 'url.expect.example' }), effects: REDRAW },
  chrome: {
    parse: (v) => (v === 'full' || v === 'none' ? v : undefined),
    format: (v) => v,
    expect: () => msg('full or none', { id: 'url.expect.chrome' }),
    effects: REDRAW,
  },
  // Names checked for their shape here; a name a view does not have keeps nothing.
  keep: { parse: parseNames, format: (v) => v.join(','), expect: () => msg('part names, comma-separated', { id: 'url.expect.keep' }), effects: REDRAW },
};

/** Every setting's name (what `lock` may name). */
export const SETTING_NAMES: readonly string[] = Object.keys(FIELDS);

/** Names, comma-separated: the shape of `lock` and `hide` (each name is checked by the page). */
function parseNames(v: string): string[] | undefined {
  if (v === '') return [];
  return /^[a-z][a-z0-9-]{0,31}(,[a-z][a-z0-9-]{0,31}){0,63}$/.test(v) ? [...new Set(v.split(','))] : undefined;
}

const KEYS = Object.keys(FIELDS) as (keyof PlaygroundState)[];

/** Read a location hash (with or without its `#`). Never throws. */
export function parseHash(hash: string, defaults: PlaygroundState = DEFAULTS): Parsed {
  const state: PlaygroundState = { ...defaults, batch: [...defaults.batch], ablate: [...defaults.ablate], views: [...defaults.views] };
  const notes: string[] = [];
  const raw = hash.startsWith('#') ? hash.slice(1) : hash;
  if (raw === '') return { state, notes };
  if (raw.length > 8000) {
    notes.push(msg(str`The link's settings are too long (${raw.length} characters) and were ignored.`));
    return { state, notes };
  }
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(raw);
  } catch {
    notes.push(msg("The link's settings could not be read and were ignored."));
    return { state, notes };
  }
  const seen = new Set<string>();
  for (const [given, raw] of params) {
    // Renamed keys and values keep working (the aliases above).
    const key = unalias(SETTING_ALIASES, given);
    const value = key === 'views' ? raw.split(',').map(viewAlias).join(',') : key === 'model' ? unalias(MODEL_ALIASES, raw) : raw;
    if (seen.has(key)) {
      notes.push(msg(str`Ignored a repeated setting ${quote(key)}.`));
      continue;
    }
    seen.add(key);
    if (!(KEYS as string[]).includes(key)) {
      notes.push(msg(str`Ignored unknown setting ${quote(key)}.`));
      continue;
    }
    const k = key as keyof PlaygroundState;
    const v = (FIELDS[k].parse as (s: string) => unknown)(value);
    if (v === undefined) {
      notes.push(msg(str`Ignored ${k}=${quote(value)}: expected ${FIELDS[k].expect()}.`));
      continue;
    }
    (state as unknown as Record<string, unknown>)[k] = v;
  }
  return { state, notes: notes.slice(0, 12) };
}

/** Write the settings that differ from the defaults as a hash (without `#`). */
export function formatHash(state: PlaygroundState, defaults: PlaygroundState = DEFAULTS): string {
  const params = new URLSearchParams();
  for (const k of KEYS) {
    const f = FIELDS[k].format as (v: unknown) => string;
    const v = f(state[k]);
    if (v !== f(defaults[k])) params.set(k, v);
  }
  return params.toString();
}

/** Is this head switched off in the state? */
export function isAblated(state: PlaygroundState, h: HeadRef): boolean {
  return state.ablate.some((a) => a.site === h.site && a.layer === h.layer && a.head === h.head);
}

/** The state with this head's ablation toggled. */
export function toggleAblation(state: PlaygroundState, h: HeadRef): HeadRef[] {
  return isAblated(state, h)
    ? state.ablate.filter((a) => !(a.site === h.site && a.layer === h.layer && a.head === h.head))
    : [...state.ablate, h];
}

/** What changing `prev` into `next` makes happen: the union of the changed settings' effects. */
export function effectsOf(prev: PlaygroundState, next: PlaygroundState): Set<Effect> {
  const out = new Set<Effect>();
  for (const k of KEYS) {
    const f = FIELDS[k].format as (v: unknown) => string;
    if (f(prev[k]) !== f(next[k])) for (const e of FIELDS[k].effects) out.add(e);
  }
  return out;
}
