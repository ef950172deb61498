// The lab's settings form, described once: every switch of a run, what it does in one
// line, its control (a list of choices, a number with its range, or on/off) and the group
// it is shown in; and the presets that set up the classic experiments side by side.

import { msg, str } from '@lit/localize';
import { HEADS_EXPERIMENT, headsRun } from '../lab/experiments';

/** The fields of a run's settings the form edits ("lr.*" are the learning-rate schedule's). */
export type FieldKey =
  | 'task'
  | 'arch'
  | 'd_model'
  | 'n_heads'
  | 'n_layers'
  | 'd_ff'
  | 'activation'
  | 'pos_encoding'
  | 'norm'
  | 'final_norm'
  | 'residual'
  | 'scale_embeddings'
  | 'score'
  | 'share_qk'
  | 'dropout'
  | 'label_smoothing'
  | 'batch'
  | 'steps'
  | 'seed'
  | 'len'
  | 'adam_beta1'
  | 'adam_beta2'
  | 'adam_eps'
  | 'lr.kind'
  | 'lr.factor'
  | 'lr.warmup'
  | 'lr.value'
  | 'cooldown'
  | 'clip'
  | 'eval_every'
  | 'backend';

export type Group = 'task' | 'shape' | 'design' | 'training' | 'optimiser';

export interface FieldDef {
  key: FieldKey;
  /** The label beside the control. */
  label: string;
  /** What the setting does, in one line. */
  help: string;
  group: Group;
  control:
    | { kind: 'select'; options: readonly (readonly [string, string])[] }
    | { kind: 'number'; min: number; max: number; step: number | 'any'; integer: boolean; nullable?: () => string }
    | { kind: 'bool' };
}

/** A pair of a key and its name, the name in the page's language when read. */
function named<K extends string>(key: K, name: () => string): readonly [K, string] {
  const pair = [key, ''] as [K, string];
  Object.defineProperty(pair, 1, { get: name, enumerable: true });
  return pair;
}

export const GROUPS: readonly (readonly [Group, string])[] = [
  named('task', () => msg('Task')),
  named('shape', () => msg('Size')),
  named('design', () => msg('Design')),
  named('training', () => msg('Training')),
  named('optimiser', () => msg('Optimiser and learning rate')),
];

/** The tasks a run can train on, with their names in the form. */
export const TASKS: readonly (readonly [string, string])[] = [
  named('copy', () => msg('copy a string')),
  named('reverse', () => msg('reverse a string')),
  named('sort', () => msg('sort a string')),
  named('add', () => msg('add two numbers')),
  named('grammar', () => msg('grammar language model')),
  named('translate', () => msg('number words → digits')),
  named('sentiment', () => msg('sentiment with negation')),
  named('tagging', () => msg('part-of-speech tagging')),
  named('zh-grammar', () => msg('Chinese grammar language model')),
  named('zh-numerals', () => msg('Chinese numerals → digits')),
  named('zh-sentiment', () => msg('Chinese sentiment')),
  named('text', () => msg('your own text (a character language model)', { id: 'lab.task.text' })),
];

export const FIELDS: readonly FieldDef[] = [
  {
    key: 'task',
    get label() {
      return msg('task');
    },
    get help() {
      return msg('What the model learns to do; it fixes the vocabulary, the data and how success is measured.');
    },
    group: 'task',
    control: { kind: 'select', options: TASKS },
  },
  {
    key: 'arch',
    get label() {
      return msg('architecture');
    },
    get help() {
      return msg('Which stacks the model has: an encoder that sees everything, a decoder that sees only the past, or both joined by cross-attention.');
    },
    group: 'task',
    control: {
      kind: 'select',
      options: [
        named('', () => msg("the task's own")),
        named('decoder_only', () => msg('decoder-only')),
        named('encoder_only', () => msg('encoder-only')),
        named('encoder_decoder', () => msg('encoder-decoder')),
      ],
    },
  },
  {
    key: 'len',
    get label() {
      return msg('length');
    },
    get help() {
      return msg('How long the training examples are (the longest string for copy, reverse and sort; the sequence length for the grammar models; the window of characters, the model’s context, for your own text).', { id: 'lab.field.len-help' });
    },
    group: 'task',
    control: { kind: 'number', min: 1, max: 256, step: 1, integer: true, nullable: () => msg("the task's own") },
  },
  {
    key: 'd_model',
    get label() {
      return msg('d_model');
    },
    get help() {
      return msg('The width of the residual stream: every token is a vector of this many numbers between the layers.');
    },
    group: 'shape',
    control: { kind: 'number', min: 4, max: 512, step: 1, integer: true },
  },
  {
    key: 'n_heads',
    get label() {
      return msg('heads');
    },
    get help() {
      return msg('Attention heads per layer; each looks at the sequence through its own d_model / heads dimensions.');
    },
    group: 'shape',
    control: { kind: 'number', min: 1, max: 16, step: 1, integer: true },
  },
  {
    key: 'n_layers',
    get label() {
      return msg('layers');
    },
    get help() {
      return msg('How many blocks are stacked (in each stack of an encoder-decoder).');
    },
    group: 'shape',
    control: { kind: 'number', min: 1, max: 12, step: 1, integer: true },
  },
  {
    key: 'd_ff',
    get label() {
      return msg('d_ff');
    },
    get help() {
      return msg('The hidden width of the feed-forward network inside each block (usually four times d_model).');
    },
    group: 'shape',
    control: { kind: 'number', min: 4, max: 2048, step: 1, integer: true },
  },
  {
    key: 'activation',
    get label() {
      return msg('activation');
    },
    get help() {
      return msg('The non-linearity between the two matrices of the feed-forward network.');
    },
    group: 'design',
    control: {
      kind: 'select',
      options: [
        ['relu', 'ReLU'],
        ['gelu', 'GELU'],
      ],
    },
  },
  {
    key: 'pos_encoding',
    get label() {
      return msg('position encoding');
    },
    get help() {
      return msg('Where each token stands: a fixed sin/cos table or a learned one added to the embeddings, distance vectors in keys and values (relative), q and k rotated by position (RoPE), a penalty growing with distance (ALiBi), or none, and attention cannot tell orders apart.');
    },
    group: 'design',
    control: {
      kind: 'select',
      options: [
        named('sinusoidal', () => msg('sinusoidal')),
        named('learned', () => msg('learned table')),
        named('relative', () => msg('relative (Shaw)')),
        ['rope', 'RoPE'],
        ['alibi', 'ALiBi'],
        named('none', () => msg('none')),
      ],
    },
  },
  {
    key: 'norm',
    get label() {
      return msg('normalisation');
    },
    get help() {
      return msg('LayerNorm after the residual sum (post-LN, the 2017 paper) or before each sublayer (pre-LN); BatchNorm, whose statistics mix the examples of a batch; or no normalisation.');
    },
    group: 'design',
    control: {
      kind: 'select',
      options: [
        named('post_ln', () => msg('post-LN')),
        named('pre_ln', () => msg('pre-LN')),
        ['batch_norm', 'BatchNorm'],
        named('none', () => msg('none')),
      ],
    },
  },
  {
    key: 'final_norm',
    get label() {
      return msg('final norm');
    },
    get help() {
      return msg('One more LayerNorm at the end of each stack; pre-LN models need it to keep the output in scale.');
    },
    group: 'design',
    control: { kind: 'bool' },
  },
  {
    key: 'residual',
    get label() {
      return msg('residual connections');
    },
    get help() {
      return msg('Add each sublayer’s input back to its output, so gradients have a direct path through deep stacks.');
    },
    group: 'design',
    control: { kind: 'bool' },
  },
  {
    key: 'scale_embeddings',
    get label() {
      return msg('embeddings × √d_model');
    },
    get help() {
      return msg('Multiply token embeddings by √d_model before adding positions, so the positions do not drown the tokens.');
    },
    group: 'design',
    control: { kind: 'bool' },
  },
  {
    key: 'score',
    get label() {
      return msg('attention score');
    },
    get help() {
      return msg('How a query and a key become a score: a dot product divided by √d_k, a plain dot product, or a small learned network (additive).');
    },
    group: 'design',
    control: {
      kind: 'select',
      options: [
        named('scaled_dot', () => msg('scaled dot product')),
        named('dot', () => msg('dot product, unscaled')),
        named('additive', () => msg('additive')),
      ],
    },
  },
  {
    key: 'share_qk',
    get label() {
      return msg('shared W_Q = W_K');
    },
    get help() {
      return msg('Queries and keys use one matrix, so token i scores token j exactly as j scores i.');
    },
    group: 'design',
    control: { kind: 'bool' },
  },
  {
    key: 'dropout',
    get label() {
      return msg('dropout');
    },
    get help() {
      return msg('The chance that each activation is zeroed during training, a guard against memorising the training set.');
    },
    group: 'training',
    control: { kind: 'number', min: 0, max: 0.9, step: 'any', integer: false },
  },
  {
    key: 'label_smoothing',
    get label() {
      return msg('label smoothing');
    },
    get help() {
      return msg('Share this much of the target probability among the wrong tokens, so the model is never pushed to be certain.');
    },
    group: 'training',
    control: { kind: 'number', min: 0, max: 0.5, step: 'any', integer: false },
  },
  {
    key: 'batch',
    get label() {
      return msg('batch size');
    },
    get help() {
      return msg('Examples averaged in each step’s gradient; more gives a steadier gradient and slower steps.');
    },
    group: 'training',
    control: { kind: 'number', min: 1, max: 512, step: 1, integer: true },
  },
  {
    key: 'steps',
    get label() {
      return msg('steps');
    },
    get help() {
      return msg('How many optimiser updates the run makes before it stops by itself.');
    },
    group: 'training',
    control: { kind: 'number', min: 1, max: 100000, step: 1, integer: true },
  },
  {
    key: 'seed',
    get label() {
      return msg('seed');
    },
    get help() {
      return msg('Picks the starting weights and the order of the examples; the same seed gives the same run.');
    },
    group: 'training',
    control: { kind: 'number', min: 0, max: 4294967295, step: 1, integer: true },
  },
  {
    key: 'eval_every',
    get label() {
      return msg('evaluate every');
    },
    get help() {
      return msg('Steps between two measurements on held-out examples (the held-out loss and the task’s metric).');
    },
    group: 'training',
    control: { kind: 'number', min: 1, max: 100000, step: 1, integer: true },
  },
  {
    key: 'backend',
    get label() {
      return msg('runs on');
    },
    get help() {
      return msg('Where the steps run: auto times the run’s first steps on the CPU and on WebGPU and keeps WebGPU only where its losses agree with the CPU’s and it is faster per step; WebGPU only; or the CPU. The curves agree to about one part in 10,000; the run says where it ran and why.', { id: 'lab.field-backend-help' });
    },
    group: 'training',
    control: {
      kind: 'select',
      options: [
        named('auto', () => msg('auto (measured)', { id: 'lab.field-backend-auto' })),
        named('webgpu', () => msg('WebGPU')),
        named('cpu', () => msg('CPU')),
      ],
    },
  },
  {
    key: 'clip',
    get label() {
      return msg('gradient clipping');
    },
    get help() {
      return msg('Scale the whole gradient down when its norm exceeds this; 0 turns clipping off.');
    },
    group: 'training',
    control: { kind: 'number', min: 0, max: 100, step: 'any', integer: false },
  },
  {
    key: 'adam_beta1',
    get label() {
      return msg('Adam β₁');
    },
    get help() {
      return msg('How much of the previous gradient direction Adam keeps (momentum).');
    },
    group: 'optimiser',
    control: { kind: 'number', min: 0, max: 0.9999, step: 'any', integer: false },
  },
  {
    key: 'adam_beta2',
    get label() {
      return msg('Adam β₂');
    },
    get help() {
      return msg('How long Adam remembers the size of past gradients when it scales each step.');
    },
    group: 'optimiser',
    control: { kind: 'number', min: 0, max: 0.99999, step: 'any', integer: false },
  },
  {
    key: 'adam_eps',
    get label() {
      return msg('Adam ε');
    },
    get help() {
      return msg('A tiny number added before Adam divides by the gradient size, so it never divides by zero.');
    },
    group: 'optimiser',
    control: { kind: 'number', min: 0, max: 1, step: 'any', integer: false },
  },
  {
    key: 'lr.kind',
    get label() {
      return msg('learning rate');
    },
    get help() {
      return msg('Noam: rise linearly during warmup, then fall as 1/√step (the 2017 paper); or one constant rate throughout.');
    },
    group: 'optimiser',
    control: {
      kind: 'select',
      options: [
        named('noam', () => msg('Noam schedule')),
        named('constant', () => msg('constant')),
      ],
    },
  },
  {
    key: 'lr.factor',
    get label() {
      return msg('Noam factor');
    },
    get help() {
      return msg('Multiplies the whole Noam curve; its peak is factor / √(d_model · warmup).');
    },
    group: 'optimiser',
    control: { kind: 'number', min: 0.001, max: 100, step: 'any', integer: false },
  },
  {
    key: 'lr.warmup',
    get label() {
      return msg('warmup steps');
    },
    get help() {
      return msg('Steps over which the rate climbs to its peak before it starts to decay.');
    },
    group: 'optimiser',
    control: { kind: 'number', min: 1, max: 100000, step: 1, integer: true },
  },
  {
    key: 'lr.value',
    get label() {
      return msg('constant rate');
    },
    get help() {
      return msg('The learning rate used at every step.');
    },
    group: 'optimiser',
    control: { kind: 'number', min: 0, max: 10, step: 'any', integer: false },
  },
  {
    key: 'cooldown',
    get label() {
      return msg('cooldown share');
    },
    get help() {
      return msg('Share of the steps, at the end of the run, over which the learning rate falls in a straight line towards zero, so the weights settle instead of jumping around (0: no cooldown).');
    },
    group: 'optimiser',
    control: { kind: 'number', min: 0, max: 1, step: 'any', integer: false },
  },
];

/** A setting's value as the form edits it. */
export type Value = string | number | boolean | null;

/** A run's settings as plain JSON (the protocol's RunSettings). */
export type Settings = Record<string, unknown> & { lr?: { kind: string; [k: string]: unknown } };

/**
 * The settings with every fractional number written to seven significant digits: the core
 * keeps them as f32, so 0.9 comes back as 0.8999999761581421, which no one typed.
 */
export function tidy<T>(s: T): T {
  const fix = (v: unknown): unknown =>
    typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(7)) : v && typeof v === 'object' && !Array.isArray(v) ? tidy(v) : v;
  return Object.fromEntries(Object.entries(s as Record<string, unknown>).map(([k, v]) => [k, fix(v)])) as T;
}

/** Read one field of a run's settings. */
export function getField(s: Settings, key: FieldKey): Value {
  if (key.startsWith('lr.')) {
    const lr = (s.lr ?? {}) as Record<string, unknown>;
    return (lr[key.slice(3)] ?? null) as Value;
  }
  return (s[key] ?? null) as Value;
}

/** The settings with one field changed (a copy). Switching the schedule's kind keeps sensible numbers. */
export function setField(s: Settings, key: FieldKey, v: Value): Settings {
  const out: Settings = { ...s };
  if (key === 'lr.kind') {
    const old = (s.lr ?? {}) as Record<string, unknown>;
    out.lr =
      v === 'constant'
        ? { kind: 'constant', value: typeof old.value === 'number' ? old.value : 1e-3 }
        : { kind: 'noam', factor: typeof old.factor === 'number' ? old.factor : 1, warmup: typeof old.warmup === 'number' ? old.warmup : 400 };
  } else if (key.startsWith('lr.')) {
    out.lr = { ...((s.lr ?? { kind: 'noam' }) as { kind: string }), [key.slice(3)]: v };
  } else {
    out[key] = v;
  }
  return out;
}

/** Whether a field is shown for these settings (the schedule's numbers follow its kind). */
export function fieldShown(s: Settings, key: FieldKey): boolean {
  const kind = (s.lr as { kind?: string } | undefined)?.kind;
  if (key === 'lr.factor' || key === 'lr.warmup') return kind === 'noam';
  if (key === 'lr.value') return kind === 'constant';
  return true;
}

/** A classic experiment: a pair (or more) of settings that differ in one idea. */
export interface Preset {
  id: string;
  title: string;
  /** What the comparison shows, in one line. */
  about: string;
  /** The task the comparison is set on (its defaults fill the rest). */
  task: string;
  /** One change of the task's defaults per run. */
  runs: readonly Record<string, unknown>[];
}

/** Short so that a comparison trains in seconds; the task's defaults fill every other field. */
export const PRESETS: readonly Preset[] = [
  {
    id: 'residual-6',
    get title() {
      return msg('No residual vs residual, 6 layers');
    },
    get about() {
      return msg('Six post-LN layers without residual connections barely learn; with them the loss falls at once.');
    },
    task: 'reverse',
    runs: [
      { n_layers: 6, norm: 'post_ln', final_norm: false, residual: false, steps: 300, eval_every: 50 },
      { n_layers: 6, norm: 'post_ln', final_norm: false, residual: true, steps: 300, eval_every: 50 },
    ],
  },
  {
    id: 'pre-post-ln',
    get title() {
      return msg('Post-LN vs pre-LN, 6 layers');
    },
    get about() {
      return msg('Where the LayerNorm sits changes how gradients reach the early layers of a deep stack.');
    },
    task: 'reverse',
    runs: [
      { n_layers: 6, norm: 'post_ln', final_norm: false, steps: 300, eval_every: 50 },
      { n_layers: 6, norm: 'pre_ln', final_norm: true, steps: 300, eval_every: 50 },
    ],
  },
  {
    id: 'warmup',
    get title() {
      return msg('Warmup 400 vs 4000');
    },
    get about() {
      return msg('A long warmup keeps the rate small for many steps: the same model learns much later.');
    },
    task: 'reverse',
    runs: [
      { lr: { kind: 'noam', factor: 1, warmup: 400 }, steps: 600, eval_every: 50 },
      { lr: { kind: 'noam', factor: 1, warmup: 4000 }, steps: 600, eval_every: 50 },
    ],
  },
  {
    id: 'layernorm-batchnorm',
    get title() {
      return msg('LayerNorm vs BatchNorm');
    },
    get about() {
      return msg('BatchNorm mixes statistics across the batch, padding included; LayerNorm normalises each token alone.');
    },
    task: 'reverse',
    runs: [
      { norm: 'post_ln', steps: 300, eval_every: 50 },
      { norm: 'batch_norm', steps: 300, eval_every: 50 },
    ],
  },
  {
    id: 'scale-embeddings',
    get title() {
      return msg('Embeddings with and without ×√d_model');
    },
    get about() {
      return msg('Without the scale nothing lifts the token embeddings, which start small, to the size of the fixed sine/cosine positions: the positions are the larger part of the sum.');
    },
    task: 'reverse',
    runs: [
      { scale_embeddings: true, steps: 300, eval_every: 50 },
      { scale_embeddings: false, steps: 300, eval_every: 50 },
    ],
  },
  {
    id: 'score',
    get title() {
      return msg('Scaled dot vs dot vs additive');
    },
    get about() {
      return msg('Three ways to score a query against a key, on the same task and seed.');
    },
    task: 'reverse',
    runs: [
      { score: 'scaled_dot', steps: 300, eval_every: 50 },
      { score: 'dot', steps: 300, eval_every: 50 },
      { score: 'additive', steps: 300, eval_every: 50 },
    ],
  },
  {
    id: 'positions',
    get title() {
      return msg('No positions vs sinusoidal vs RoPE');
    },
    get about() {
      return msg('Reversing needs to know where each letter is; without positions only the causal mask hints at it.');
    },
    task: 'reverse',
    runs: [
      { pos_encoding: 'none', steps: 300, eval_every: 50 },
      { pos_encoding: 'sinusoidal', steps: 300, eval_every: 50 },
      { pos_encoding: 'rope', steps: 300, eval_every: 50 },
    ],
  },
  {
    id: 'heads',
    get title() {
      const [a, b] = HEADS_EXPERIMENT.heads;
      return msg(str`${a} head vs ${b} heads, the same d_model`, { id: 'lab.preset.heads.title' });
    },
    get about() {
      return msg('The same width as one head or cut into slices, one per head; every other setting the same. Compare the held-out loss of the two runs.', { id: 'lab.preset.heads.about' });
    },
    task: HEADS_EXPERIMENT.task,
    runs: HEADS_EXPERIMENT.heads.map(headsRun),
  },
  {
    id: 'dropout',
    get title() {
      return msg('Dropout 0 vs 0.3');
    },
    get about() {
      return msg('Dropout slows training-set progress; watch the held-out loss against the training loss.');
    },
    task: 'reverse',
    runs: [
      { dropout: 0, steps: 300, eval_every: 50 },
      { dropout: 0.3, steps: 300, eval_every: 50 },
    ],
  },
];

/**
 * The experiment a link's run belongs to: the one whose task is the link's and one of whose
 * runs changes exactly what the link sets (a lesson's link to the first run of an
 * experiment opens the lab with that experiment chosen). Undefined when none matches.
 */
export function presetOfLink(settings: Record<string, unknown>): Preset | undefined {
  const { task, ...rest } = settings;
  const keys = Object.keys(rest).sort();
  return PRESETS.find(
    (p) =>
      p.task === task &&
      p.runs.some((r) => {
        const rk = Object.keys(r).sort();
        return rk.length === keys.length && rk.every((k, i) => k === keys[i] && JSON.stringify(r[k]) === JSON.stringify(rest[k]));
      }),
  );
}
