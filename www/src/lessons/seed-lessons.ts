// The lessons for the seed notes' questions that the first lessons left open: the head
// dimension, one block's anatomy, why the residual and LayerNorm are both needed,
// BatchNorm, where dropout goes, one new token end to end, what tying W_Q to W_K costs,
// which architecture suits which task, and a recap. Same `Lesson` shape and the same rules
// as lessons.ts: every number in a sentence is the engine's or the manifest's, a step is
// done only when the page sees the experiment, and each `check` is decided from what the
// engine measured on the loaded model now. lessons.ts's LESSONS includes this list; the
// course's order and each lesson's seed question are in course.ts.

import { msg, str } from '@lit/localize';
import type { Lesson, LessonCtx, LessonText } from './lessons';
import type { DeviceRates, DropoutDemo, EvalPoint, ManifestEntry, NormCoupling, WidthTime } from '../engine/protocol';
import type { RunRecord } from '../lab/types';
import { HEADS_EXPERIMENT } from '../lab/experiments';
import { catalogued } from './catalogue';

/** A share 0…1 as a percentage, as precise as the manifest gives it ("99.6 %", "100 %"). */
function pct(x: number): string {
  return `${String(Math.round(x * 1000) / 10)} %`;
}

/** A shipped model's manifest entry, by file. */
function entry(c: LessonText, file: string): ManifestEntry | undefined {
  return c.store?.manifest.find((m) => m.file === file);
}

/** The held-out scores of two shipped models (what `tplay train` measured), when both are known. */
function scores(c: LessonText, a: string, b: string): { a: number; b: number } | null {
  const x = entry(c, a)?.held_out_accuracy;
  const y = entry(c, b)?.held_out_accuracy;
  return x === undefined || y === undefined ? null : { a: x, b: y };
}

/** The main stack's self-attention mask of the last forward pass (the decoder's when there are two). */
function mainMask(c: LessonText) {
  const masks = c.store?.lastForward?.masks ?? [];
  return masks.find((m) => m.site === 'decoder_self') ?? masks.find((m) => m.site === 'encoder_self') ?? null;
}

/** What the head-dimension lesson reads of the lab view: its runs. */
type LabView = HTMLElement & { runs: RunRecord[] };

/** A run's settings without its number of heads, as text to compare. */
function allButHeads(r: RunRecord): string {
  const rest: Record<string, unknown> = { ...r.settings };
  delete rest.n_heads;
  return JSON.stringify(Object.keys(rest).sort().map((k) => [k, rest[k]]));
}

/**
 * The lab's latest pair of finished runs of the head-dimension experiment: one with one head,
 * one with several (HEADS_EXPERIMENT.heads), every other setting alike, each with its final
 * held-out evaluation. Null until the lab holds such a pair: a run is in the lab's list only
 * if the lab trained it (a model loaded into the page is not a run).
 */
function headPair(c: LessonText): { one: RunRecord; many: RunRecord; oneEval: EvalPoint; manyEval: EvalPoint } | null {
  const runs = c.view<LabView>('tp-lab')?.runs;
  if (!runs?.length) return null;
  const [one, many] = HEADS_EXPERIMENT.heads;
  const finished = runs.filter((r) => r.status === 'done' && (r.settings.n_heads === one || r.settings.n_heads === many) && r.log.lastEval() !== null);
  // Newest first: the pair the learner trained last.
  finished.sort((a, b) => b.created_at - a.created_at);
  for (const a of finished) {
    const b = finished.find((x) => x.settings.n_heads !== a.settings.n_heads && allButHeads(x) === allButHeads(a));
    if (!b) continue;
    const [o, m] = a.settings.n_heads === one ? [a, b] : [b, a];
    return { one: o, many: m, oneEval: o.log.lastEval()!, manyEval: m.log.lastEval()! };
  }
  return null;
}

/** What the lesson reads of the timing view. */
type TimeView = HTMLElement & { widths: WidthTime[]; rates: DeviceRates | null; busy: boolean; asked: number };

/** The timing view, once its code has loaded (until then the element is there without its properties). */
function timeView(c: LessonText): TimeView | null {
  const v = c.view<TimeView>('tp-time');
  return v && Array.isArray(v.widths) ? v : null;
}

/**
 * How much a decoding step's multiply-adds and its time grew from the smallest width
 * measured to the widest, on the GPU where it was measured at both, else on the CPU.
 */
function growth(c: LessonText): { backend: string; lo: number; hi: number; macs: number; time: number } | null {
  const ws = timeView(c)?.widths ?? [];
  if (ws.length < 2) return null;
  const a = ws[0];
  const b = ws[ws.length - 1];
  const gpu = a.decode_gpu && b.decode_gpu;
  const sa = gpu ? a.decode_gpu! : a.decode_cpu;
  const sb = gpu ? b.decode_gpu! : b.decode_cpu;
  if (!(sa.ms > 0 && sa.multiply_adds > 0)) return null;
  return { backend: gpu ? 'GPU' : 'CPU', lo: a.d_model, hi: b.d_model, macs: sb.multiply_adds / sa.multiply_adds, time: sb.ms / sa.ms };
}

export const SEED_LESSONS: readonly Lesson[] = [
  {
    ...catalogued('new-token'),
    title: () => msg('One new token, end to end', { id: 'lesson.new-token.title' }),
    explain: (c) => {
      const info = c.store?.info;
      const first = msg(
        'A decoder-only model writes by repeating one journey. The text is cut into tokens and each token becomes its id; each id picks its row of the embedding table, and the position is added; the vectors pass through every block; the last position’s vector is turned into one score (a logit) for every token of the vocabulary; a decoding rule picks one token; it is appended to the text, and the journey starts again.',
        { id: 'lesson.new-token.explain1' },
      );
      const sizes = info
        ? msg(str`Here the vectors have ${info.d_model} numbers, there are ${info.decoder_layers || info.encoder_layers} blocks, and the vocabulary has ${info.vocab.length} tokens: so each step ends in ${info.vocab.length} logits.`, {
            id: 'lesson.new-token.explain-sizes',
          })
        : '';
      return sizes ? [first, sizes] : [first];
    },
    formula: 'x_t = E[id_t]·√d_model + PE(t),   h = Block_L(… Block_1(x)),   p = softmax(h_T · W_out),   id_{T+1} ~ p',
    task: () => msg('Press “Step” under the generation view once, and follow the new token through the picture above it.', { id: 'lesson.new-token.task' }),
    question: () => msg('Which position’s vector becomes the logits, and was the appended token the most likely one?', { id: 'lesson.new-token.question' }),
    notice: (c) => {
      const first = msg(
        'Only the last position’s vector was turned into the choice. The other positions were computed too (training uses every one of them), but generating ignores their outputs. The new token then joins the token chips, and the next step starts from the longer text.',
        { id: 'lesson.new-token.notice' },
      );
      const fed = c.store?.gen.stats.totalFed ?? 0;
      const steps = c.store?.gen.generated.length ?? 0;
      return fed > 0 && steps > 0
        ? `${first} ${msg(str`Tokens generated so far: ${steps}; positions run through the model: ${fed}. With the KV cache, each step after the first feeds only the newest token.`, { id: 'lesson.new-token.notice-fed' })}`
        : first;
    },
    // Done once a step has appended a token since the lesson opened.
    done: (c) => {
      const moved = c.changed('new-token.generated', c.store.gen.generated.length);
      return moved && c.store.gen.generated.length > 0;
    },
    check: {
      kind: 'choice',
      options: () => [
        msg('Yes: the most likely token at the last position', { id: 'lesson.new-token.check.yes' }),
        msg('No: a less likely token was drawn', { id: 'lesson.new-token.check.no' }),
      ],
      right: (c: LessonCtx) => {
        const s = c.store.gen.step?.step;
        if (!s || s.token === null || !s.candidates.length) return null;
        return s.candidates[0].id === s.token ? 0 : 1;
      },
      hint: () => msg('Compare the chosen token with the longest bar of the probabilities it was chosen from, and look at the decoding rule the generation view uses.', { id: 'lesson.new-token.check.hint' }),
    },
    code: ['crate/src/model/forward.rs', 'crate/src/generate'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('shared-qk'),
    title: () => msg('What tying W_Q to W_K costs', { id: 'lesson.shared-qk.title' }),
    explain: () => [
      msg('This grammar model was trained exactly like the one with sinusoidal positions, except that a single matrix serves as both W_Q and W_K. Every query then equals its own token’s key, so the raw score of i on j equals that of j on i.', {
        id: 'lesson.shared-qk.explain1',
      }),
      msg('A token can then only look for what it also offers. One-sided relations — a word that seeks its subject while the subject seeks something else — have to be squeezed through the values and the other heads.', {
        id: 'lesson.shared-qk.explain2',
      }),
    ],
    formula: () => msg('W_Q = W_K = W  ⇒  score(i, j) = (x_i·W)·(x_j·W) = score(j, i)', { id: 'lesson.shared-qk.formula' }),
    task: () => msg('Read the largest |q − k| beside the heatmap, then load the grammar model with sinusoidal positions (separate W_Q and W_K) from the model list and read it again.', { id: 'lesson.shared-qk.task' }),
    question: () => msg('Is the largest |q − k| still 0 with separate matrices?', { id: 'lesson.shared-qk.question' }),
    notice: (c) => {
      const first = msg('With separate matrices a query no longer equals its own key, and the score matrix is no longer symmetric before the mask: token i can attend to j without j attending to i.', {
        id: 'lesson.shared-qk.notice',
      });
      const s = scores(c, 'grammar-sinusoidal.safetensors', 'grammar-shared-qk.safetensors');
      return s
        ? `${first} ${msg(str`Trained with the same recipe, the model with separate W_Q and W_K writes ${pct(s.a)} of its held-out sentences grammatically, the tied one ${pct(s.b)}: on a task this small the tie costs little, but it removes a freedom.`, { id: 'lesson.shared-qk.notice-scores' })}`
        : first;
    },
    // Done once the model with separate matrices is loaded after the tied one the lesson opens on.
    done: (c) => {
      const moved = c.changed('shared-qk.model', c.store.info ? c.st.model : null);
      return moved && c.st.model === 'grammar-sinusoidal.safetensors' && !!c.store.trace?.qk_gap;
    },
    check: {
      kind: 'choice',
      options: () => [
        msg('Yes: every query still equals its own key', { id: 'lesson.shared-qk.check.yes' }),
        msg('No: queries and keys now differ', { id: 'lesson.shared-qk.check.no' }),
      ],
      right: (c: LessonCtx) => {
        const gap = c.store.trace?.qk_gap?.data;
        if (!gap || !gap.length) return null;
        return Array.from(gap).every((g) => g === 0) ? 0 : 1;
      },
      hint: () => msg('The inspector beside the heatmap ends with the head’s largest |q − k|; hover a cell if it is not shown.', { id: 'lesson.shared-qk.check.hint' }),
    },
    code: ['crate/src/model/attention.rs'],
    doc: 'attention',
  },
  {
    ...catalogued('head-dim'),
    title: () => msg('The head dimension d_model / h', { id: 'lesson.head-dim.title' }),
    explain: () => {
      const first = msg(
        'Multi-head attention does not give every head the whole width. The width d_model is cut into h slices, and each head computes its queries, keys and values in a slice of d_k = d_model / h numbers. Side by side, the heads’ projections are exactly one d_model × d_model matrix, so splitting costs no extra parameters, and the scores cost about as much as one full-width head.',
        { id: 'lesson.head-dim.explain1' },
      );
      const why = msg('What the split buys is variety: each head gets its own softmax, so one can attend sharply to the previous token while another spreads over the whole prefix. One wide head has a single pattern per query.', {
        id: 'lesson.head-dim.explain2',
      });
      return [first, why];
    },
    formula: 'd_k = d_model / h,   W_Q = [W_Q^1 | … | W_Q^h],   W_Q^i ∈ ℝ^(d_model × d_k)',
    task: () => {
      const [one, many] = HEADS_EXPERIMENT.heads;
      return msg(str`In the lab, press “Train these ${HEADS_EXPERIMENT.heads.length} runs”: the experiment chosen above the form trains the run with ${one} head and the same run with ${many} heads side by side. Wait until both are done. (Or press “Train” for the form’s run, set “heads” to ${many} and press “Train” again.)`, {
        id: 'lesson.head-dim.task-lab',
      });
    },
    question: () => msg('Which of the two runs learns the task better: one wide head, or several narrow ones?', { id: 'lesson.head-dim.question-lab' }),
    notice: (c) => {
      const p = headPair(c);
      if (!p) return msg('Compare the two runs’ curves and the table’s held-out columns.', { id: 'lesson.head-dim.notice-wait' });
      const d = p.one.settings.d_model;
      const [one, many] = [p.one.settings.n_heads, p.many.settings.n_heads];
      const measured = msg(
        str`Both runs have d_model = ${d}. With ${one} head the held-out loss ended at ${p.oneEval.loss.toFixed(3)} and the held-out metric at ${pct(p.oneEval.metric)}; with ${many} heads of ${d / many} dimensions, at ${p.manyEval.loss.toFixed(3)} and ${pct(p.manyEval.metric)}. Training took ${(p.one.elapsed_ms / 1000).toFixed(1)} s and ${(p.many.elapsed_ms / 1000).toFixed(1)} s.`,
        { id: 'lesson.head-dim.notice-runs' },
      );
      const verdict =
        p.manyEval.loss < p.oneEval.loss
          ? msg('The same width cut into slices did better: each narrow head has its own softmax, so one can pick out one relation while another picks out a different one, where a single wide head must blend them into one pattern per query.', {
              id: 'lesson.head-dim.notice-many',
            })
          : msg('Here the single wide head did at least as well: on this task and budget one pattern per query was enough, and each narrow head sees only a slice of the width. Splitting is a bet on variety, not a free gain; try more steps or another task, the lab keeps both runs for comparison.', {
              id: 'lesson.head-dim.notice-one',
            });
      return `${measured} ${verdict}`;
    },
    // Done once the lab holds a finished run with one head and a finished run with several,
    // alike in every other setting (d_model included): trained in the lab, not loaded.
    done: (c) => headPair(c) !== null,
    check: {
      kind: 'choice',
      ask: () => msg('Which run ended with the lower held-out loss?', { id: 'lesson.head-dim.check.ask' }),
      options: () => {
        const [one, many] = HEADS_EXPERIMENT.heads;
        return [msg(str`The run with ${one} head`, { id: 'lesson.head-dim.check.one' }), msg(str`The run with ${many} heads`, { id: 'lesson.head-dim.check.many' })];
      },
      right: (c: LessonCtx) => {
        const p = headPair(c);
        if (!p || p.oneEval.loss === p.manyEval.loss) return null;
        return p.oneEval.loss < p.manyEval.loss ? 0 : 1;
      },
      hint: () => msg('In the lab’s table of runs, compare the “held-out loss” column of the two runs; the “differs by” column names each one’s heads.', { id: 'lesson.head-dim.check.hint' }),
    },
    code: ['crate/src/model/attention.rs', 'crate/src/train'],
    doc: 'attention',
  },
  {
    ...catalogued('block-anatomy'),
    title: () => msg('One block, piece by piece: Add & Norm', { id: 'lesson.block-anatomy.title' }),
    explain: () => [
      msg('A block of the original transformer has two sublayers: self-attention, where the positions read each other, and the position-wise feed-forward network. Around each one the same two steps follow: add the sublayer’s input back to its output (the residual), then normalise each position (LayerNorm). The paper calls the pair “Add & Norm”.', {
        id: 'lesson.block-anatomy.explain1',
      }),
      msg('This model keeps the original order (post-LN). A decoder of an encoder–decoder model has a third sublayer, cross-attention, with its own Add & Norm.', { id: 'lesson.block-anatomy.explain2' }),
    ],
    formula: 'x ← LN(x + SelfAttention(x));   x ← LN(x + FFN(x))',
    task: () => msg('In the diagram, click a layer’s first “Add &” norm box, the one after its self-attention, to open it on the live numbers.', { id: 'lesson.block-anatomy.task' }),
    question: () => msg('What does the norm take its mean and variance over, and how many sublayers, each with its own Add & Norm, does one layer have?', { id: 'lesson.block-anatomy.question' }),
    notice: () =>
      msg('Each position is normalised over its own features only: μ and σ² are one pair per position, and nothing from another position enters. The residual arcs beside the column show what each Add adds back.', {
        id: 'lesson.block-anatomy.notice',
      }),
    done: (c) => {
      const v = c.view<HTMLElement & { opened: { kind: string } | null; probe: unknown }>('tp-architecture');
      return !!v && v.opened?.kind === 'norm' && !!v.probe;
    },
    check: {
      kind: 'number',
      label: () => msg('sublayers in one layer of this model (each with its own Add & Norm)', { id: 'lesson.block-anatomy.check.label' }),
      expected: (c: LessonCtx) => {
        const stacks = c.store.plan?.stacks;
        if (!stacks?.length) return null;
        return stacks[stacks.length - 1].sublayers.filter((s) => s.residual).length;
      },
      tolerance: () => 0,
      hint: () => msg('Count the boxes with a residual arc between one layer’s input and the next layer in the diagram.', { id: 'lesson.block-anatomy.check.hint' }),
    },
    code: ['crate/src/model/plan.rs', 'crate/src/model/norm.rs'],
    doc: 'ffn-norms',
  },
  {
    ...catalogued('residual-and-norm'),
    title: () => msg('Why both the residual and LayerNorm', { id: 'lesson.residual-and-norm.title' }),
    explain: () => [
      msg('The two do different jobs. The residual keeps a path on which a token’s information, and the gradient on the way back, pass every layer unchanged. LayerNorm keeps the numbers each sublayer sees at a steady size, whatever the layers before them added.', {
        id: 'lesson.residual-and-norm.explain1',
      }),
      msg('Neither replaces the other: without the norm the stream’s size drifts from layer to layer; without the residual every layer has to carry everything through its own weights.', {
        id: 'lesson.residual-and-norm.explain2',
      }),
    ],
    formula: 'x_{l+1} = x_l + F(LN(x_l))',
    task: () => msg('Under “Design”, load the sibling trained with no residual connections, and compare its diagram and its stream sizes with this one.', { id: 'lesson.residual-and-norm.task' }),
    question: () => msg('Without the residual, are the norms still there?', { id: 'lesson.residual-and-norm.question' }),
    notice: (c) => {
      const first = msg('The norms stayed and only the arcs went: the sizes are still kept steady, yet each layer now has to pass the tokens on through its own weights.', {
        id: 'lesson.residual-and-norm.notice',
      });
      const s = scores(c, 'reverse.safetensors', 'reverse-no-residual.safetensors');
      return s
        ? `${first} ${msg(str`Trained with the same recipe, the model with both reverses ${pct(s.a)} of held-out strings exactly, the one with LayerNorm alone ${pct(s.b)}.`, { id: 'lesson.residual-and-norm.notice-scores' })}`
        : first;
    },
    done: (c) => c.st.model === 'reverse-no-residual.safetensors' && !!c.store.plan && c.store.plan.stacks.every((s) => s.sublayers.every((x) => !x.residual)),
    check: {
      kind: 'choice',
      options: () => [
        msg('Yes: every sublayer still has its LayerNorm', { id: 'lesson.residual-and-norm.check.yes' }),
        msg('No: the norms went with the residuals', { id: 'lesson.residual-and-norm.check.no' }),
      ],
      right: (c: LessonCtx) => {
        const stacks = c.store.plan?.stacks;
        if (!stacks?.length) return null;
        return stacks.every((s) => s.sublayers.every((x) => x.norm !== null)) ? 0 : 1;
      },
      hint: () => msg('Look for the norm boxes in the diagram of the model you loaded.', { id: 'lesson.residual-and-norm.check.hint' }),
    },
    code: ['crate/src/model/forward.rs', 'crate/src/model/norm.rs'],
    doc: 'ffn-norms',
  },
  {
    ...catalogued('batch-norm'),
    title: () => msg('BatchNorm: what it is good at, and what it costs', { id: 'lesson.batch-norm.title' }),
    explain: () => [
      msg('BatchNorm normalises each feature with the mean and variance of the whole mini-batch, then scales and shifts it with learned parameters. While training it also keeps running averages of those statistics, and in evaluation it uses them instead.', {
        id: 'lesson.batch-norm.explain1',
      }),
      msg('Its strengths: training is steadier and tolerates larger learning rates, which made it the standard in convolutional networks. Its weaknesses: it depends on the batch, so small batches give noisy statistics; training and evaluation compute different things; and in a sequence model the statistics mix positions and sentences.', {
        id: 'lesson.batch-norm.explain2',
      }),
    ],
    formula: 'BN(x)_f = γ_f · (x_f − μ_f) / √(σ²_f + ε) + β_f',
    task: () => msg('Choose “train mode” for the forward pass and compare the output probabilities with those of eval mode beside them.', { id: 'lesson.batch-norm.task' }),
    question: () => msg('When only the other sequence of the batch changes, in which mode does this sequence’s output move?', { id: 'lesson.batch-norm.question' }),
    notice: (c) => {
      const first = msg('In train mode the batch’s own statistics are used, so the output differs from eval mode, and in the norms view it moves when only the other sequence changes; in eval mode the stored averages make every sequence independent. A LayerNorm model has no such split.', {
        id: 'lesson.batch-norm.notice',
      });
      const s = scores(c, 'reverse-batch-norm.safetensors', 'reverse.safetensors');
      return s
        ? `${first} ${msg(str`Trained with the same recipe, this model reverses ${pct(s.a)} of held-out strings exactly, the LayerNorm model ${pct(s.b)}.`, { id: 'lesson.batch-norm.notice-scores' })}`
        : first;
    },
    done: (c) => c.st.mode === 'train' && c.store.lastForward?.train_note != null && c.store.info?.norm === 'batch_norm',
    check: {
      kind: 'choice',
      options: () => [
        msg('Train mode only', { id: 'lesson.batch-norm.check.train' }),
        msg('Eval mode only', { id: 'lesson.batch-norm.check.eval' }),
        msg('Both modes', { id: 'lesson.batch-norm.check.both' }),
        msg('Neither', { id: 'lesson.batch-norm.check.neither' }),
      ],
      right: (c: LessonCtx) => {
        const m = c.view<HTMLElement & { data: NormCoupling | null }>('tp-norms')?.data?.models[0];
        if (!m) return null;
        const train = !m.train_identical;
        const evalMoves = !m.eval_identical;
        return train && !evalMoves ? 0 : !train && evalMoves ? 1 : train ? 2 : 3;
      },
      hint: () => msg('The norms view compares this sequence’s outputs when only the other one changes, once in train mode and once in eval mode, for the loaded model first.', { id: 'lesson.batch-norm.check.hint' }),
    },
    code: ['crate/src/model/norm.rs'],
    doc: 'ffn-norms',
  },
  {
    ...catalogued('dropout-where'),
    title: () => msg('Where dropout goes', { id: 'lesson.dropout-where.title' }),
    explain: () => [
      msg('The original recipe drops units in two kinds of place: on the sum of the embeddings and the positions, and on each sublayer’s output just before it is added back to the residual stream. Libraries add more, for example on the attention weights and inside the feed-forward network.', {
        id: 'lesson.dropout-where.explain1',
      }),
      msg('All of them act only in train mode. A model in use must be in eval mode, or its answers change from run to run.', { id: 'lesson.dropout-where.explain2' }),
    ],
    formula: 'x_0 = Dropout(E·√d_model + PE),   x ← x + Dropout(Sublayer(x))',
    task: () => msg('In the dropout view, pick another place in the table to see its mask.', { id: 'lesson.dropout-where.task' }),
    question: () => msg('How many of the listed places belong to the original paper’s recipe?', { id: 'lesson.dropout-where.question' }),
    notice: (c) => {
      const d = c.view<HTMLElement & { data: DropoutDemo | null }>('tp-dropout')?.data;
      const first = msg('Every mask is a pattern of zeros and of the factor 1/(1 − p); eval mode replaces all of them by the identity.', { id: 'lesson.dropout-where.notice' });
      if (!d) return first;
      const paper = d.sites.filter((s) => s.in_paper).length;
      return `${msg(str`This model applies dropout in ${d.sites.length} places, ${paper} of them from the original recipe.`, { id: 'lesson.dropout-where.notice-count' })} ${first}`;
    },
    done: (c) => {
      const v = c.view<HTMLElement & { data: DropoutDemo | null; shown: number }>('tp-dropout');
      return !!v?.data && c.changed('dropout-where.shown', v.shown);
    },
    check: {
      kind: 'number',
      label: () => msg('places from the original paper’s recipe', { id: 'lesson.dropout-where.check.label' }),
      expected: (c: LessonCtx) => {
        const d = c.view<HTMLElement & { data: DropoutDemo | null }>('tp-dropout')?.data;
        return d ? d.sites.filter((s) => s.in_paper).length : null;
      },
      tolerance: () => 0,
      hint: () => msg('The table’s “source” column says for each place whether it comes from the paper or from the library’s layers.', { id: 'lesson.dropout-where.check.hint' }),
    },
    code: ['crate/src/model/dropout.rs'],
    doc: 'ffn-norms',
  },
  {
    ...catalogued('which-architecture'),
    title: () => msg('Which architecture for which task', { id: 'lesson.which-architecture.title' }),
    explain: () => [
      msg('An encoder-only model lets every position see the whole input, which suits understanding it: a label for the text or a tag per word. A decoder-only model lets each position see only the past, which suits writing one token after another. An encoder–decoder reads a whole source with its encoder and writes a new sequence with its decoder, reading the source through cross-attention: it suits turning one sequence into another.', {
        id: 'lesson.which-architecture.explain1',
      }),
      msg('The shipped models are one of each kind, each on a task that suits it.', { id: 'lesson.which-architecture.explain2' }),
    ],
    task: () => msg('In the model list, load the model that turns number words into digits, and watch the picture gain a second stack.', { id: 'lesson.which-architecture.task' }),
    question: () => msg('What kind of task does the model you loaded do?', { id: 'lesson.which-architecture.question' }),
    notice: () =>
      msg('The encoder row reads the whole source at once; the decoder row writes the digits one by one and reads the encoder’s output at every layer. The sentiment and tagging models have only the encoder row and end in a class or a tag per position; the grammar and reversing models have only the decoder row.', {
        id: 'lesson.which-architecture.notice',
      }),
    done: (c) => c.store.info?.arch === 'encoder_decoder',
    check: {
      kind: 'choice',
      options: () => [
        msg('It continues a text one token at a time', { id: 'lesson.which-architecture.check.continue' }),
        msg('It labels its input: a class, or a tag per token', { id: 'lesson.which-architecture.check.label' }),
        msg('It turns one sequence into another', { id: 'lesson.which-architecture.check.transduce' }),
      ],
      right: (c: LessonCtx) => {
        const arch = c.store.info?.arch;
        return arch === 'decoder_only' ? 0 : arch === 'encoder_only' ? 1 : arch === 'encoder_decoder' ? 2 : null;
      },
      hint: () => msg('Count the stacks in the picture and see what the last stage gives: next-token probabilities, classes or tags, or a new sequence.', { id: 'lesson.which-architecture.check.hint' }),
    },
    code: ['crate/src/model/plan.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('time'),
    title: () => msg('Where the time goes: CPU against GPU', { id: 'lesson.time.title' }),
    explain: (c) => {
      const v = timeView(c);
      const w = v?.widths[0];
      const g = v?.rates?.gpu;
      const first = msg(
        'A GPU has thousands of lanes for arithmetic, but every piece of work must be sent to it: the page records the kernels of a step, submits them, and waits for the answer to come back. Each submission is a round trip and each kernel launch has a fixed cost, whatever the size of the matrices.',
        { id: 'lesson.time.explain1' },
      );
      const second = msg(
        'A small model does little arithmetic per step, so those fixed costs are most of its time, and the CPU, which starts at once, wins. As d_model grows the products grow about with its square while the number of launches stays the same: at some width the GPU starts to win. The view measures where on this device.',
        { id: 'lesson.time.explain2' },
      );
      const measured =
        w && g && w.decode_gpu
          ? msg(str`Measured here: one round trip to the GPU takes ${g.round_trip_ms.toFixed(3)} ms, and a decoding step of the model at d_model ${w.d_model} launches ${Math.round(w.decode_gpu.dispatches)} kernels in ${Math.round(w.decode_gpu.submissions)} submissions.`, {
              id: 'lesson.time.explain-measured',
            })
          : '';
      return measured ? [first, second, measured] : [first, second];
    },
    task: () => msg('Choose how wide to go in “Measure up to d_model”, press “Measure again”, and compare the two curves of each chart.', { id: 'lesson.time.task' }),
    question: () => msg('From the smallest width to the widest, did the decoding step’s time grow as much as its multiply-adds?', { id: 'lesson.time.question' }),
    notice: (c) => {
      const g = growth(c);
      const first = msg('What does not grow with the width — a submission, a kernel launch, a call — sets the floor of a small model’s step. That is why a small model runs best on the CPU, and why the GPU pays off only for wide layers or large batches.', {
        id: 'lesson.time.notice',
      });
      return g
        ? `${msg(str`On the ${g.backend} from d_model ${g.lo} to ${g.hi}, the multiply-adds of a decoding step grew ${g.macs.toFixed(1)}-fold and its time ${g.time.toFixed(1)}-fold.`, { id: 'lesson.time.notice-growth' })} ${first}`
        : first;
    },
    // Done once a measurement the learner asked for has run to the end over at least three widths.
    done: (c) => {
      const v = timeView(c);
      return !!v && !v.busy && v.asked > 0 && v.widths.length >= 3;
    },
    check: {
      kind: 'choice',
      options: () => [
        msg('Less: a cost that does not grow with the width hid most of the growth', { id: 'lesson.time.check.less' }),
        msg('As much or more: the time followed the arithmetic', { id: 'lesson.time.check.more' }),
      ],
      right: (c: LessonCtx) => {
        const g = growth(c);
        return g ? (g.time < g.macs ? 0 : 1) : null;
      },
      hint: () => msg('The table under the bars gives each step’s multiply-adds and time; compare the smallest width with the widest in the width menu.', { id: 'lesson.time.check.hint' }),
    },
    code: ['crate/src/explain/timing.rs', 'crate/src/backend/gpu/context/recorder.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('recap'),
    title: () => msg('What to remember', { id: 'lesson.recap.title' }),
    explain: () => [
      msg('Several heads let attention model different relations side by side, each in its own slice of the width. Separate W_Q and W_K let a query look for something other than what its token offers. Dividing by √d_k keeps the softmax out of saturation.', {
        id: 'lesson.recap.explain1',
      }),
      msg('The encoder’s self-attention sees everything; the decoder’s must be masked causally. LayerNorm needs no batch statistics, which suits sequence models. A block is attention, which mixes positions, and a feed-forward network, which works on each position alone.', {
        id: 'lesson.recap.explain2',
      }),
      msg('Encoder-only models understand, decoder-only models generate, encoder–decoders transform one sequence into another. And a decoder-only model writes by predicting the next token from the prefix and appending it, over and over.', {
        id: 'lesson.recap.explain3',
      }),
    ],
    task: () => msg('Press “Play” and let the model write to the end, watching each token pass through the picture.', { id: 'lesson.recap.task' }),
    question: () => msg('While it wrote, could a position’s self-attention read a later position?', { id: 'lesson.recap.question' }),
    notice: (c) => {
      const n = c.store?.gen.generated.length ?? 0;
      const first = msg('Every stage you passed is one of the course’s answers: the ids and embeddings, the masked self-attention of each block, the feed-forward network, the norms and residuals, the logits of the last position and the choice.', {
        id: 'lesson.recap.notice',
      });
      return n > 0 ? `${msg(str`Tokens the model appended: ${n}, each one predicted from the prefix before it.`, { id: 'lesson.recap.notice-count' })} ${first}` : first;
    },
    // Done once a generation that started after the lesson opened has run to its end.
    done: (c) => {
      const moved = c.changed('recap.generated', c.store.gen.generated.length);
      return moved && c.store.gen.done && c.store.gen.generated.length > 0;
    },
    check: {
      kind: 'choice',
      options: () => [
        msg('No: the causal mask hid every later position', { id: 'lesson.recap.check.no' }),
        msg('Yes: attention read the whole text', { id: 'lesson.recap.check.yes' }),
      ],
      right: (c: LessonCtx) => {
        const m = mainMask(c);
        if (!m) return null;
        return m.rule.kind === 'causal' ? 0 : m.rule.kind === 'none' ? 1 : null;
      },
      hint: () => msg('The self-attention stage of the picture names its mask; the attention chapter draws which cells it hides.', { id: 'lesson.recap.check.hint' }),
    },
    code: ['crate/src/model/forward.rs', 'crate/src/generate'],
    doc: 'forward-pass',
  },
];
