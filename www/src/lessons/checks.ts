// The question each lesson asks before it says what to notice, and how the page decides the
// answer: always from what the engine measured on the loaded model now (the store's forward
// pass, the model's info, a view's measured result), never from a fixed key, so an answer
// stays right when the model changes. `right` / `expected` return null while the numbers are
// not there yet (the answer box then says it is measuring). A hint says where to look, never
// what the answer is.

import { msg } from '@lit/localize';
import type { AttnSite, AttnTrace, ForwardResult, ParallelTiming, PosEncoding } from '../engine/protocol';
import type { Check, LessonCtx } from './lessons';

/** The attention trace of one sublayer and layer of a forward pass. */
function trace(f: ForwardResult | null, site: AttnSite, layer: number): AttnTrace | undefined {
  return f?.attention.find((t) => t.site === site && t.layer === layer);
}

/** Do two arrays of numbers differ anywhere (bit for bit)? null when either is missing or they differ in length. */
function differ(a: ArrayLike<number> | null | undefined, b: ArrayLike<number> | null | undefined): boolean | null {
  if (!a || !b || a.length !== b.length) return null;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return true;
  return false;
}

/**
 * The forward pass before the last switch and the one now, when both ran on the same model
 * and input; null while the pass of the new setting has not come back (the store keeps the
 * old pass as both until it does).
 */
function beforeAndNow(c: LessonCtx): [ForwardResult, ForwardResult] | null {
  const s = c.store;
  return s.previous && s.lastForward && s.previousState && s.previous !== s.lastForward ? [s.previous, s.lastForward] : null;
}

/** The forward pass now, or null while the pass of a changed setting has not come back (the store then holds the old pass as both "before" and "now"). */
function forwardNow(c: LessonCtx): ForwardResult | null {
  const s = c.store;
  return s.previous && s.previous === s.lastForward ? null : s.lastForward;
}

/** Mean of row `b` of a (B, H) tensor. */
function meanRow(d: { shape: number[]; data: ArrayLike<number> } | undefined, b: number): number | null {
  if (!d || d.shape.length !== 2 || b >= d.shape[0]) return null;
  const H = d.shape[1];
  let sum = 0;
  for (let h = 0; h < H; h++) sum += d.data[b * H + h];
  return H ? sum / H : null;
}

const yesNo = () => [msg('Yes', { id: 'check.yes' }), msg('No', { id: 'check.no' })];

/** Each lesson's check, by lesson id. */
export const CHECKS = {
  heads: {
    kind: 'choice',
    ask: () => msg('The character that was most likely before you switched the head off: what did its probability do?', { id: 'check.heads.ask' }),
    options: () => [
      msg('It rose.', { id: 'check.heads.rose' }),
      msg('It fell.', { id: 'check.heads.fell' }),
      msg('It did not change at all.', { id: 'check.heads.same' }),
    ],
    right: (c) => {
      const p = beforeAndNow(c);
      if (!p) return null;
      const [was, now] = [p[0].model_probs, p[1].model_probs];
      if (was.length === 0 || was.length !== now.length) return null;
      let top = 0;
      for (let i = 1; i < was.length; i++) if (was[i] > was[top]) top = i;
      return now[top] > was[top] ? 0 : now[top] < was[top] ? 1 : 2;
    },
    hint: () => msg('In the output view, find the character at the top of the “before” column and compare its two values, before and now.', { id: 'check.heads.hint' }),
  },
  qkv: {
    kind: 'number',
    label: () => msg('The largest |q − k| the inspector shows for the head shown', { id: 'check.qkv.label' }),
    expected: (c) => {
      const t = trace(forwardNow(c), c.store.site, c.st.layer);
      const gap = t?.qk_gap;
      if (!gap) return null;
      const [B, H] = gap.shape;
      const b = c.store.row;
      const h = c.st.head;
      return b < B && h < H ? gap.data[b * H + h] : null;
    },
    tolerance: (e) => Math.max(5e-4, Math.abs(e) * 0.01),
    hint: () => msg('Click a cell of the heatmap: the inspector beside it names the largest |q − k| of this head, over every token and dimension.', { id: 'check.qkv.hint' }),
  },
  'scaled-dot': {
    kind: 'choice',
    ask: () => msg('Without the division, what did the attention rows of this layer do?', { id: 'check.scaled-dot.ask' }),
    options: () => [
      msg('They became sharper: the mean entropy fell.', { id: 'check.scaled-dot.sharper' }),
      msg('They became flatter: the mean entropy rose.', { id: 'check.scaled-dot.flatter' }),
      msg('Nothing: the entropy is exactly the same.', { id: 'check.scaled-dot.same' }),
    ],
    right: (c) => {
      const p = beforeAndNow(c);
      if (!p) return null;
      const was = meanRow(trace(p[0], c.store.site, c.st.layer)?.entropy, c.store.row);
      const now = meanRow(trace(p[1], c.store.site, c.st.layer)?.entropy, c.store.row);
      if (was === null || now === null) return null;
      return now < was ? 0 : now > was ? 1 : 2;
    },
    hint: () => msg('In the saturation view, compare the mean entropy now with the one beside it from before the switch.', { id: 'check.scaled-dot.hint' }),
  },
  'dot-vs-additive': {
    kind: 'choice',
    ask: () => msg('What does the inspector beside the heatmap compute for the loaded model?', { id: 'check.dot-vs-additive.ask' }),
    options: () => [
      msg('A sum of products q·k over the dimensions.', { id: 'check.dot-vs-additive.dot' }),
      msg('An additive score w·tanh(q + k), not a product.', { id: 'check.dot-vs-additive.additive' }),
    ],
    right: (c) => (c.store.info ? (c.store.info.score === 'additive' ? 1 : 0) : null),
    hint: () => msg('Click a cell of the heatmap and read the formula the inspector beside it uses.', { id: 'check.dot-vs-additive.hint' }),
  },
  'padding-mask': {
    kind: 'choice',
    ask: () => msg('With the padding mask off, which cells take weight that they had not before?', { id: 'check.padding-mask.ask' }),
    options: () => [
      msg('The pad columns: real words now read from the filler.', { id: 'check.padding-mask.pads' }),
      msg('The columns of later words: each word now reads ahead.', { id: 'check.padding-mask.later' }),
      msg('None: every row is as it was.', { id: 'check.padding-mask.none' }),
    ],
    right: (c) => {
      const f = forwardNow(c);
      const info = c.store.info;
      const t = trace(f, c.store.site, c.st.layer);
      if (!f || !info || !t || t.site === 'cross') return null;
      const [B, H, T, S] = t.probs.shape;
      // Does a real query give weight to a pad key anywhere in the batch?
      for (let b = 0; b < B; b++) {
        const tok = f.tokens[b] ?? [];
        for (let h = 0; h < H; h++)
          for (let i = 0; i < T; i++) {
            if (tok[i] === info.pad) continue;
            for (let j = 0; j < S; j++) if (tok[j] === info.pad && t.probs.data[((b * H + h) * T + i) * S + j] > 0) return 0;
          }
      }
      return 2;
    },
    hint: () => msg('In the attention view, choose the short sequence and look at the columns of its pad tokens.', { id: 'check.padding-mask.hint' }),
  },
  'causal-mask': {
    kind: 'choice',
    ask: () => msg('Did the last position’s next-token distribution change when the mask went off?', { id: 'check.causal-mask.ask' }),
    options: yesNo,
    right: (c) => {
      const p = beforeAndNow(c);
      const d = p && differ(p[0].model_probs, p[1].model_probs);
      return d === null || d === undefined ? null : d ? 0 : 1;
    },
    hint: () => msg('Compare the “before” and “now” columns of the output view.', { id: 'check.causal-mask.hint' }),
  },
  'attention-sites': {
    kind: 'number',
    label: () => msg('How many columns (keys) does the cross-attention map have?', { id: 'check.attention-sites.label' }),
    expected: (c) => {
      const t = trace(forwardNow(c), 'cross', c.st.layer);
      return t ? t.probs.shape[3] : null;
    },
    tolerance: () => 0,
    hint: () => msg('Count the labels along the top of the cross-attention map: whose tokens are they?', { id: 'check.attention-sites.hint' }),
  },
  parallel: {
    kind: 'choice',
    ask: () => msg('As N grows, which time grows fastest (the largest exponent of the fit)?', { id: 'check.parallel.ask' }),
    options: () => [
      msg('One teacher-forced pass', { id: 'check.parallel.forward' }),
      msg('Token by token, with the KV cache', { id: 'check.parallel.cached' }),
      msg('Token by token, without the cache', { id: 'check.parallel.uncached' }),
    ],
    right: (c) => {
      const v = c.view<HTMLElement & { data: ParallelTiming | null; busy: boolean }>('tp-parallel');
      const x = v && !v.busy ? v.data?.exponents : undefined;
      if (!x) return null;
      const e = [x.forward_ms, x.cached_ms, x.uncached_ms];
      return e.indexOf(Math.max(...e));
    },
    hint: () => msg('Read the exponents under the time plot: time ∝ n to the power shown, once per way of producing the tokens.', { id: 'check.parallel.hint' }),
  },
  'embedding-scale': {
    kind: 'choice',
    ask: () => msg('In the loaded model, which part of the first block’s input is larger?', { id: 'check.embedding-scale.ask' }),
    options: () => [msg('The token part', { id: 'check.embedding-scale.token' }), msg('The position part', { id: 'check.embedding-scale.position' })],
    right: (c) => {
      const v = c.view<HTMLElement & { ratio: number | null; measuredInfo: unknown }>('tp-embedding-scale');
      const r = v && v.measuredInfo === c.store.info ? v.ratio : null;
      return r === null ? null : r >= 1 ? 1 : 0;
    },
    hint: () => msg('Compare the bars of the token part, as the model adds it, with the bars of the position part.', { id: 'check.embedding-scale.hint' }),
  },
  positions: {
    kind: 'choice',
    ask: () => msg('Where does the loaded model’s position information enter?', { id: 'check.positions.ask' }),
    options: () => [
      msg('It is added to the input embeddings.', { id: 'check.positions.input' }),
      msg('It adds a term to each attention score.', { id: 'check.positions.scores' }),
      msg('It rotates the queries and keys.', { id: 'check.positions.qk' }),
      msg('Nowhere: the model has no positions.', { id: 'check.positions.none' }),
    ],
    right: (c) => {
      const p: PosEncoding | undefined = c.store.info?.pos_encoding;
      if (!p) return null;
      return p === 'sinusoidal' || p === 'learned' ? 0 : p === 'relative' || p === 'alibi' ? 1 : p === 'rope' ? 2 : 3;
    },
    hint: () => msg('Look at what the positions view draws for this scheme: a table of vectors, a term per distance, or rotating pairs.', { id: 'check.positions.hint' }),
  },
  order: {
    kind: 'choice',
    ask: () => msg('For the model the view runs now, is every shuffled output row bit-identical to the row of the character it came from?', { id: 'check.order.ask' }),
    options: () => [msg('Yes, every row', { id: 'check.order.yes' }), msg('No, some rows differ', { id: 'check.order.no' })],
    right: (c) => {
      const o = c.view<HTMLElement & { result: { row_identical: boolean[] } | null; busy: boolean }>('tp-order');
      if (!o || o.busy || !o.result) return null;
      return o.result.row_identical.every(Boolean) ? 0 : 1;
    },
    hint: () => msg('The view marks each output row: 0 where it equals its original row bit for bit, the difference where it does not.', { id: 'check.order.hint' }),
  },
  extrapolation: {
    kind: 'number',
    label: () => msg('The best accuracy any scheme reaches at the longest length (the table’s last column)', { id: 'check.extrapolation.label' }),
    expected: (c) => {
      const v = c.view<HTMLElement & { results: { r: { bands: { accuracy: number }[] } }[]; progress: unknown }>('tp-extrapolation');
      if (!v || v.progress || v.results.length === 0) return null;
      const last = v.results.map(({ r }) => r.bands[r.bands.length - 1]?.accuracy).filter((a): a is number => typeof a === 'number');
      return last.length ? Math.max(...last) : null;
    },
    tolerance: () => 0.01,
    hint: () => msg('In the table under the chart, read the accuracies in the last column (before the slash), one per scheme.', { id: 'check.extrapolation.hint' }),
  },
  residual: {
    kind: 'choice',
    ask: () => msg('In the loaded model, from the input to the last layer, what does the mean norm of the stream do?', { id: 'check.residual.ask' }),
    options: () => [msg('It grows.', { id: 'check.residual.grows' }), msg('It shrinks.', { id: 'check.residual.shrinks' })],
    right: (c) => {
      const f = forwardNow(c);
      const h = f?.hidden[f.hidden.length - 1];
      if (!h) return null;
      const [L1, B, T] = h.norms.shape;
      const b = Math.min(c.store.row, B - 1);
      const mean = (l: number) => {
        let s = 0;
        for (let i = 0; i < T; i++) s += h.norms.data[(l * B + b) * T + i];
        return s / T;
      };
      return L1 < 2 || T === 0 ? null : mean(L1 - 1) >= mean(0) ? 0 : 1;
    },
    hint: () => msg('In the hidden view, compare the norms in the first row (the input) with those in the last row.', { id: 'check.residual.hint' }),
  },
  'no-leak': {
    kind: 'choice',
    ask: () => msg('In the first table (the mask the page applies now), does any value before the edited position change?', { id: 'check.no-leak.ask' }),
    options: yesNo,
    right: (c) => {
      const v = c.view<HTMLElement & { diffs: { edited: number[]; src_edited: number[]; rows: { what: string; changed: boolean[] }[] }[] }>('tp-no-leak');
      const d = v?.diffs[0];
      if (!d) return null;
      const edited = d.src_edited.length ? d.src_edited : d.edited;
      const rows = d.rows.filter((r) => r.what === 'hidden' || r.what === 'logits');
      const first = edited.length ? Math.min(...edited) : 0;
      return rows.some((r) => r.changed.slice(0, first).some(Boolean)) ? 0 : 1;
    },
    hint: () => msg('Read the line under the first table: it counts the values before the edited position that changed.', { id: 'check.no-leak.hint' }),
  },
  norms: {
    kind: 'choice',
    ask: () => msg('In train mode, does changing the other sequence of the batch move this sequence’s output in the loaded model?', { id: 'check.norms.ask' }),
    options: yesNo,
    right: (c) => {
      const m = c.view<HTMLElement & { data: { models: { norm: string; train_identical: boolean }[] } | null }>('tp-norms')?.data?.models[0];
      return m && m.norm === c.store.info?.norm ? (m.train_identical ? 1 : 0) : null;
    },
    hint: () => msg('In the norms view, read the train-mode row of the loaded model (the first one).', { id: 'check.norms.hint' }),
  },
  'pre-post-ln': {
    kind: 'choice',
    ask: () => msg('Where does the loaded model normalise?', { id: 'check.pre-post-ln.ask' }),
    options: () => [
      msg('After each residual add, on the main path.', { id: 'check.pre-post-ln.post' }),
      msg('Before each sublayer, on its branch: the stream itself is not normalised.', { id: 'check.pre-post-ln.pre' }),
      msg('Nowhere: it has no norm.', { id: 'check.pre-post-ln.none' }),
    ],
    right: (c) => {
      const n = c.store.info?.norm;
      return n === undefined ? null : n === 'pre_ln' ? 1 : n === 'none' ? 2 : 0;
    },
    hint: () => msg('Open a block in the diagram and follow the path from its input to its output: where is the norm box?', { id: 'check.pre-post-ln.hint' }),
  },
  ffn: {
    kind: 'number',
    label: () => msg('In the last layer, how many rows of the FFN output changed?', { id: 'check.ffn.label' }),
    expected: (c) => {
      const d = c.view<HTMLElement & { diff: { rows: { stack: AttnSite; what: string; layer: number; changed: boolean[] }[] } | null }>('tp-ffn')?.diff;
      const info = c.store.info;
      if (!d || !info) return null;
      // The stack whose positions the view edits: the encoder where the model has one.
      const stack: AttnSite = info.arch === 'decoder_only' ? 'decoder_self' : 'encoder_self';
      const outs = d.rows.filter((r) => r.what === 'ffn_output' && r.stack === stack);
      if (!outs.length) return null;
      const last = outs.reduce((a, r) => (r.layer > a.layer ? r : a));
      return last.changed.filter(Boolean).length;
    },
    tolerance: () => 0,
    hint: () => msg('Count the cells marked as changed in the last layer’s FFN output column, and compare them with that layer’s input column.', { id: 'check.ffn.hint' }),
  },
  dropout: {
    kind: 'choice',
    ask: () => msg('What does the dropout view measure for two runs on the same input?', { id: 'check.dropout.ask' }),
    options: () => [
      msg('Train mode: they differ. Eval mode: bit-identical.', { id: 'check.dropout.train-differs' }),
      msg('Both modes: bit-identical.', { id: 'check.dropout.both-same' }),
      msg('Both modes: they differ.', { id: 'check.dropout.both-differ' }),
    ],
    right: (c) => {
      const d = c.view<HTMLElement & { data: { train_repeat_diff: number; eval_repeat_identical: boolean } | null }>('tp-dropout')?.data;
      if (!d) return null;
      const train = d.train_repeat_diff > 0;
      if (train && d.eval_repeat_identical) return 0;
      if (!train && d.eval_repeat_identical) return 1;
      return train ? 2 : null;
    },
    hint: () => msg('Read the two lines under the masks: the largest difference of two train-mode runs, and whether two eval-mode runs agree.', { id: 'check.dropout.hint' }),
  },
  'noam-adam': {
    kind: 'number',
    label: () => msg('The peak learning rate now', { id: 'check.noam-adam.label' }),
    expected: (c) => c.store.schedule?.peak_lr ?? null,
    tolerance: (e) => Math.abs(e) * 0.02,
    hint: () => msg('Read the label at the highest point of the curve: it names the step and the learning rate there.', { id: 'check.noam-adam.hint' }),
  },
  architectures: {
    kind: 'choice',
    ask: () => msg('What does the loaded model output?', { id: 'check.architectures.ask' }),
    options: () => [
      msg('A distribution over the next token, one token at a time.', { id: 'check.architectures.next' }),
      msg('One class for the whole input.', { id: 'check.architectures.class' }),
      msg('A tag for every position of the input.', { id: 'check.architectures.tags' }),
      msg('A new sequence, written by a decoder that reads the encoder.', { id: 'check.architectures.seq' }),
    ],
    right: (c) => {
      const a = c.store.info?.arch;
      const f = forwardNow(c);
      if (!a) return null;
      if (a === 'decoder_only') return 0;
      if (a === 'encoder_decoder') return 3;
      return f ? (f.class_probs ? 1 : 2) : null;
    },
    hint: () => msg('Look at the output view and at the top of the diagram: how many stacks, and what comes out of the last one?', { id: 'check.architectures.hint' }),
  },
  'kv-cache': {
    kind: 'number',
    label: () => msg('How many tokens were run through the model in total?', { id: 'check.kv-cache.label' }),
    expected: (c) => (c.store.gen.done ? c.store.gen.stats.totalFed : null),
    tolerance: () => 0,
    hint: () => msg('The generation view counts the tokens run through the model, on the line under the text.', { id: 'check.kv-cache.hint' }),
  },
  decoding: {
    kind: 'choice',
    ask: () => msg('Does the best beam start with the token greedy would pick first?', { id: 'check.decoding.ask' }),
    options: yesNo,
    right: (c) => {
      const g = c.store.gen;
      const first = g.beamSteps[0];
      if (!g.done || !first || g.generated.length === 0) return null;
      // Greedy's first pick: the likeliest one-token extension of the prompt.
      const cands = [...first.live, ...first.newly_finished].filter((h) => h.tokens.length > 0);
      if (!cands.length) return null;
      const greedy = cands.reduce((a, h) => (h.log_prob > a.log_prob ? h : a)).tokens[0];
      return g.generated[0] === greedy ? 0 : 1;
    },
    hint: () => msg('In the beam tree, compare the first token of the kept sequence with the most probable branch of the first step.', { id: 'check.decoding.hint' }),
  },
} satisfies Record<string, Check>;
