// A run's settings as URL text (a link a teacher hands out: "train this"), and back. A link
// describes settings, never weights. It is untrusted text: every value is checked against
// its field's type and range before it is used, and whatever is refused is reported, one
// sentence per key, never applied. The engine validates the whole run again at trainStart.

import { msg, str } from '@lit/localize';
import type { RunSettings } from '../engine/protocol';

/** Longest settings text accepted from a link, and longest value. */
export const MAX_QUERY = 2000;
const MAX_VALUE = 40;

const ARCHS = ['encoder_only', 'decoder_only', 'encoder_decoder'] as const;
const ENUMS: Record<string, readonly string[]> = {
  activation: ['relu', 'gelu'],
  pos_encoding: ['none', 'sinusoidal', 'learned', 'relative', 'rope', 'alibi'],
  norm: ['post_ln', 'pre_ln', 'batch_norm', 'none'],
  score: ['scaled_dot', 'dot', 'additive'],
  backend: ['auto', 'webgpu', 'cpu'],
};
const TASKS = ['copy', 'reverse', 'sort', 'add', 'grammar', 'translate', 'sentiment', 'tagging', 'zh-grammar', 'zh-numerals', 'zh-sentiment', 'text'];
/** Whole-number fields and their ranges. */
const INTS: Record<string, [number, number]> = {
  d_model: [1, 4096],
  n_heads: [1, 64],
  n_layers: [1, 64],
  d_ff: [1, 16384],
  batch: [1, 1024],
  steps: [1, 1_000_000],
  seed: [0, Number.MAX_SAFE_INTEGER],
  eval_every: [0, 1_000_000],
};
/** Real fields and their ranges (`open`: the upper end is excluded; `positive`: the lower end is). */
const REALS: Record<string, { min: number; max: number; open?: boolean; positive?: boolean }> = {
  dropout: { min: 0, max: 1, open: true },
  label_smoothing: { min: 0, max: 1, open: true },
  adam_beta1: { min: 0, max: 1, open: true },
  adam_beta2: { min: 0, max: 1, open: true },
  adam_eps: { min: 0, max: 1, positive: true },
  clip: { min: 0, max: 1e6 },
  cooldown: { min: 0, max: 1 },
};
const BOOLS = ['final_norm', 'residual', 'scale_embeddings', 'share_qk'];

/** Every field a link may set, in the order links write them. */
export const RUN_KEYS = [
  'task',
  'arch',
  'd_model',
  'n_heads',
  'n_layers',
  'd_ff',
  'activation',
  'pos_encoding',
  'norm',
  'final_norm',
  'residual',
  'scale_embeddings',
  'score',
  'share_qk',
  'dropout',
  'label_smoothing',
  'batch',
  'steps',
  'seed',
  'len',
  'adam_beta1',
  'adam_beta2',
  'adam_eps',
  'lr',
  'cooldown',
  'clip',
  'eval_every',
  'backend',
] as const;

/** Untrusted text, quoted for a note: bounded, control characters dropped. */
function quote(s: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, '');
  return clean.length > 40 ? `"${clean.slice(0, 40)}…"` : `"${clean}"`;
}

function int(v: string, [min, max]: [number, number]): number | undefined {
  if (!/^\d{1,16}$/.test(v)) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
}

function real(v: string, r: { min: number; max: number; open?: boolean; positive?: boolean }): number | undefined {
  if (!/^\d{0,12}(\.\d{1,12})?(e-?\d{1,2})?$/i.test(v) || v === '' || v.startsWith('e')) return undefined;
  const x = Number(v);
  if (!Number.isFinite(x) || x < r.min || x > r.max) return undefined;
  if (r.open && x >= r.max) return undefined;
  if (r.positive && x <= r.min) return undefined;
  return x;
}

function lrOf(v: string): RunSettings['lr'] | undefined {
  const m = /^(noam):([^:]+):([^:]+)$|^(constant):([^:]+)$/.exec(v);
  if (!m) return undefined;
  if (m[1]) {
    const factor = real(m[2], { min: 0, max: 1000, positive: true });
    const warmup = int(m[3], [1, 1_000_000]);
    return factor === undefined || warmup === undefined ? undefined : { kind: 'noam', factor, warmup };
  }
  const value = real(m[5], { min: 0, max: 1, positive: true });
  return value === undefined ? undefined : { kind: 'constant', value };
}

/** What a field accepts, for notes. */
function expect(key: string): string {
  if (key === 'task') return msg(str`one of ${TASKS.join(', ')}`);
  if (key === 'arch') return msg(str`empty (the task's own) or one of ${ARCHS.join(', ')}`);
  if (key in ENUMS) return msg(str`one of ${ENUMS[key].join(', ')}`);
  if (key in INTS) return msg(str`a whole number from ${INTS[key][0]} to ${INTS[key][1]}`);
  if (key in REALS) {
    const r = REALS[key];
    if (r.positive) return r.open ? msg(str`a number above ${r.min} and below ${r.max}`) : msg(str`a number above ${r.min} to ${r.max}`);
    return r.open ? msg(str`a number from ${r.min} and below ${r.max}`) : msg(str`a number from ${r.min} to ${r.max}`);
  }
  if (BOOLS.includes(key)) return msg('1 or 0');
  if (key === 'len') return msg("empty (the task's own) or a whole number from 1 to 4096");
  if (key === 'lr') return msg('noam:<factor>:<warmup steps> or constant:<rate>');
  return 'nothing: it is not a run setting';
}

/** One value of one field, or undefined when it is not acceptable. */
function parseValue(key: string, v: string): unknown {
  if (key === 'task') return TASKS.includes(v) ? v : undefined;
  if (key === 'arch') return v === '' ? null : (ARCHS as readonly string[]).includes(v) ? v : undefined;
  if (key in ENUMS) return ENUMS[key].includes(v) ? v : undefined;
  if (key in INTS) return int(v, INTS[key]);
  if (key in REALS) return real(v, REALS[key]);
  if (BOOLS.includes(key)) return v === '1' ? true : v === '0' ? false : undefined;
  if (key === 'len') return v === '' ? null : int(v, [1, 4096]);
  if (key === 'lr') return lrOf(v);
  return undefined;
}

function formatValue(key: string, v: unknown): string {
  if (v === null) return '';
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (key === 'lr') {
    const lr = v as RunSettings['lr'];
    return lr.kind === 'noam' ? `noam:${lr.factor}:${lr.warmup}` : `constant:${lr.value}`;
  }
  return String(v);
}

/** The settings as URL query text: the task, then every field that differs from `base` (the task's defaults). */
export function formatRunQuery(s: RunSettings, base?: RunSettings): string {
  const parts: string[] = [];
  for (const key of RUN_KEYS) {
    const v = (s as unknown as Record<string, unknown>)[key];
    // Settings saved before a field existed do not have it (`backend`): the link leaves it out.
    if (v === undefined) continue;
    const b = base ? (base as unknown as Record<string, unknown>)[key] : undefined;
    const text = formatValue(key, v);
    if (key !== 'task' && base && text === formatValue(key, b)) continue;
    parts.push(`${key}=${encodeURIComponent(text)}`);
  }
  return parts.join('&');
}

/** Settings from URL query text: what is acceptable, and a sentence for everything refused. */
export function parseRunQuery(text: string): { settings: Partial<RunSettings>; notes: string[] } {
  const notes: string[] = [];
  const settings: Record<string, unknown> = {};
  let t = text.startsWith('#') || text.startsWith('?') ? text.slice(1) : text;
  if (t.length > MAX_QUERY) {
    notes.push(msg(str`Ignored the run settings of the link: ${t.length} characters, more than ${MAX_QUERY}.`));
    return { settings: {}, notes };
  }
  t = t.trim();
  if (!t) return { settings: {}, notes };
  const seen = new Set<string>();
  for (const part of t.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
      value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '));
    } catch {
      notes.push(msg(str`Ignored ${quote(part)}: it is not valid URL text.`));
      continue;
    }
    if (!(RUN_KEYS as readonly string[]).includes(key)) {
      notes.push(msg(str`Ignored ${quote(key)}: not a run setting (known: ${RUN_KEYS.join(', ')}).`));
      continue;
    }
    if (seen.has(key)) {
      notes.push(msg(str`Ignored a second ${key}: a link sets each setting once.`));
      continue;
    }
    seen.add(key);
    const parsed = value.length > MAX_VALUE ? undefined : parseValue(key, value);
    if (parsed === undefined) {
      notes.push(msg(str`Ignored ${key}=${quote(value)}: expected ${expect(key)}.`));
      continue;
    }
    settings[key] = parsed;
  }
  return { settings: settings as Partial<RunSettings>, notes };
}
