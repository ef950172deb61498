// The lab's legend: runs named by how their settings differ. Two runs that differ only in
// where the LayerNorm sits are "post-LN" and "pre-LN"; two that differ in warmup and seed
// are "warmup 400, seed 1" and "warmup 4000, seed 2". Only the fields that differ among
// the runs are named, each in a few words, in a fixed order.
//
// Pure functions with no imports, so the unit tests (tests/unit/lab-labels.test.mjs) load
// this file under node.

import { msg, str } from '@lit/localize';

/** A run's settings as the labels read them (the fields of the protocol's RunSettings). */
export interface LabelledSettings {
  task?: string;
  arch?: string | null;
  d_model?: number;
  n_heads?: number;
  n_layers?: number;
  d_ff?: number;
  activation?: string;
  pos_encoding?: string;
  norm?: string;
  final_norm?: boolean;
  residual?: boolean;
  scale_embeddings?: boolean;
  score?: string;
  share_qk?: boolean;
  dropout?: number;
  label_smoothing?: number;
  batch?: number;
  steps?: number;
  seed?: number;
  len?: number | null;
  adam_beta1?: number;
  adam_beta2?: number;
  adam_eps?: number;
  lr?: { kind: 'noam'; factor: number; warmup: number } | { kind: 'constant'; value: number };
  cooldown?: number;
  clip?: number;
  eval_every?: number;
  backend?: string;
}

/**
 * A number as written in a label: to seven significant digits, the precision the core
 * keeps settings in (f32), in its shortest form (0.1, 1e-9, 4000).
 */
function num(v: number): string {
  return String(Number(v.toPrecision(7)));
}

const ARCH: Record<string, string> = {
  get encoder_only() {
    return msg('encoder-only');
  },
  get decoder_only() {
    return msg('decoder-only');
  },
  get encoder_decoder() {
    return msg('encoder-decoder');
  },
};
const POS: Record<string, string> = {
  get none() {
    return msg('no positions');
  },
  get sinusoidal() {
    return msg('sinusoidal positions');
  },
  get learned() {
    return msg('learned positions');
  },
  get relative() {
    return msg('relative positions');
  },
  rope: 'RoPE',
  alibi: 'ALiBi',
};
const NORM: Record<string, string> = {
  get post_ln() {
    return msg('post-LN');
  },
  get pre_ln() {
    return msg('pre-LN');
  },
  batch_norm: 'BatchNorm',
  get none() {
    return msg('no norm');
  },
};
const SCORE: Record<string, string> = {
  get scaled_dot() {
    return msg('scaled dot');
  },
  get dot() {
    return msg('dot (unscaled)');
  },
  get additive() {
    return msg('additive');
  },
};
const ACT: Record<string, string> = { relu: 'ReLU', gelu: 'GELU' };
const BACKEND: Record<string, string> = {
  get auto() {
    return msg('backend auto');
  },
  webgpu: 'WebGPU',
  cpu: 'CPU',
};

const word = (table: Record<string, string>, v: string) => table[v] ?? v;

/**
 * Each field in label order: its words for one run's settings, or undefined where the
 * field does not apply to that run (a constant learning rate has no warmup).
 */
export const LABEL_FIELDS: readonly { key: string; words: (s: LabelledSettings) => string | undefined }[] = [
  { key: 'task', words: (s) => s.task },
  { key: 'arch', words: (s) => (s.arch === undefined ? undefined : s.arch === null ? msg("the task's architecture") : word(ARCH, s.arch)) },
  { key: 'residual', words: (s) => (s.residual === undefined ? undefined : s.residual ? msg('residual') : msg('no residual')) },
  { key: 'norm', words: (s) => (s.norm === undefined ? undefined : word(NORM, s.norm)) },
  { key: 'final_norm', words: (s) => (s.final_norm === undefined ? undefined : s.final_norm ? msg('final norm') : msg('no final norm')) },
  { key: 'n_layers', words: (s) => (s.n_layers === undefined ? undefined : s.n_layers === 1 ? msg('1 layer') : msg(str`${num(s.n_layers)} layers`)) },
  { key: 'd_model', words: (s) => (s.d_model === undefined ? undefined : `d_model ${num(s.d_model)}`) },
  { key: 'n_heads', words: (s) => (s.n_heads === undefined ? undefined : s.n_heads === 1 ? msg('1 head') : msg(str`${num(s.n_heads)} heads`)) },
  { key: 'd_ff', words: (s) => (s.d_ff === undefined ? undefined : `d_ff ${num(s.d_ff)}`) },
  { key: 'activation', words: (s) => (s.activation === undefined ? undefined : word(ACT, s.activation)) },
  { key: 'pos_encoding', words: (s) => (s.pos_encoding === undefined ? undefined : word(POS, s.pos_encoding)) },
  { key: 'score', words: (s) => (s.score === undefined ? undefined : word(SCORE, s.score)) },
  { key: 'share_qk', words: (s) => (s.share_qk === undefined ? undefined : s.share_qk ? 'W_Q = W_K' : msg('separate W_Q and W_K')) },
  {
    key: 'scale_embeddings',
    words: (s) => (s.scale_embeddings === undefined ? undefined : s.scale_embeddings ? msg('embeddings ×√d_model') : msg('embeddings unscaled')),
  },
  { key: 'dropout', words: (s) => (s.dropout === undefined ? undefined : msg(str`dropout ${num(s.dropout)}`)) },
  { key: 'label_smoothing', words: (s) => (s.label_smoothing === undefined ? undefined : msg(str`label smoothing ${num(s.label_smoothing)}`)) },
  {
    key: 'lr.kind',
    words: (s) => (s.lr === undefined ? undefined : s.lr.kind === 'noam' ? msg('Noam schedule') : msg(str`constant lr ${num(s.lr.value)}`)),
  },
  { key: 'lr.warmup', words: (s) => (s.lr?.kind === 'noam' ? msg(str`warmup ${num(s.lr.warmup)}`) : undefined) },
  { key: 'lr.factor', words: (s) => (s.lr?.kind === 'noam' ? msg(str`lr factor ${num(s.lr.factor)}`) : undefined) },
  { key: 'cooldown', words: (s) => (s.cooldown === undefined ? undefined : s.cooldown > 0 ? msg(str`cooldown ${num(s.cooldown)}`) : msg('no cooldown')) },
  { key: 'adam_beta1', words: (s) => (s.adam_beta1 === undefined ? undefined : `β₁ ${num(s.adam_beta1)}`) },
  { key: 'adam_beta2', words: (s) => (s.adam_beta2 === undefined ? undefined : `β₂ ${num(s.adam_beta2)}`) },
  { key: 'adam_eps', words: (s) => (s.adam_eps === undefined ? undefined : `ε ${num(s.adam_eps)}`) },
  { key: 'batch', words: (s) => (s.batch === undefined ? undefined : msg(str`batch ${num(s.batch)}`)) },
  { key: 'steps', words: (s) => (s.steps === undefined ? undefined : msg(str`${num(s.steps)} steps`)) },
  { key: 'len', words: (s) => (s.len === undefined ? undefined : s.len === null ? msg("the task's length") : msg(str`length ${num(s.len)}`)) },
  { key: 'clip', words: (s) => (s.clip === undefined ? undefined : s.clip > 0 ? msg(str`clip ${num(s.clip)}`) : msg('no clipping')) },
  { key: 'eval_every', words: (s) => (s.eval_every === undefined ? undefined : msg(str`eval every ${num(s.eval_every)}`)) },
  { key: 'seed', words: (s) => (s.seed === undefined ? undefined : msg(str`seed ${num(s.seed)}`)) },
  { key: 'backend', words: (s) => (s.backend === undefined ? undefined : word(BACKEND, s.backend)) },
];

/** The keys of the fields on which these runs differ (among the runs the field applies to). */
export function differingFields(runs: readonly LabelledSettings[]): string[] {
  const out: string[] = [];
  for (const f of LABEL_FIELDS) {
    const seen = new Set<string>();
    for (const s of runs) {
      const w = f.words(s);
      if (w !== undefined) seen.add(w);
    }
    if (seen.size > 1) out.push(f.key);
  }
  return out;
}

/**
 * One label per run, in the runs' order: the words of the fields on which the runs differ,
 * joined with ", ". A lone run, or runs with equal settings, are named by their task;
 * runs whose labels would still coincide get "(2)", "(3)", … after the first.
 */
export function differenceLabels(runs: readonly LabelledSettings[]): string[] {
  const keys = new Set(differingFields(runs));
  const fields = LABEL_FIELDS.filter((f) => keys.has(f.key));
  const labels = runs.map((s) => {
    const words = fields.map((f) => f.words(s)).filter((w): w is string => w !== undefined);
    return words.length ? words.join(msg(', ')) : (s.task ?? msg('run'));
  });
  const count = new Map<string, number>();
  return labels.map((l) => {
    const n = (count.get(l) ?? 0) + 1;
    count.set(l, n);
    return n === 1 ? l : `${l} (${n})`;
  });
}
