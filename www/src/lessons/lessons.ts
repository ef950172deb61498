// The lessons: one per idea of the concept map (../shared/DESIGN.md §1), each a short
// explanation, the formula where there is one, a preset (the URL settings it opens with,
// only the views it needs), one experiment with a question, and what to notice. A step is
// done when the page sees the learner do it: `done` reads the store (the settings, the
// model, the generation) or a view's measured result, never a button of the lesson's own.
//
// Every sentence goes through `msg` with an explicit id (`lesson.<id>.<part>`), so the
// localisation tools can translate it. A formula of pure math is a plain string, the same in
// every language; one with words in it is a msg() (`lesson.<id>.formula`) like the prose.

import { msg, str } from '@lit/localize';
import type { PlaygroundStore } from '../state/store';
import type { PlaygroundState } from '../state/url';
import type { ManifestEntry, MaskEdit, ParallelTiming, Positions } from '../engine/protocol';
import { CHECKS } from './checks';
import { SEED_LESSONS } from './seed-lessons';
import { catalogued } from './catalogue';

/**
 * What a lesson's sentences may read: a number in a sentence is the engine's (a view's
 * measured result, the loaded model's info) or the training CLI's (the manifest's
 * `held_out_accuracy`), never typed into the text.
 */
export interface LessonText {
  /** The page's store (null before the page has one). */
  store: PlaygroundStore | null;
  /** A shown view's element, by tag (to read its measured result), or null. */
  view<T = HTMLElement>(tag: string): T | null;
}

/** What a lesson's `done` may look at. */
export interface LessonCtx extends LessonText {
  /** The settings now. */
  st: PlaygroundState;
  store: PlaygroundStore;
  /**
   * Has this value changed since the lesson first saw it (its first non-null value)?
   * Keyed by `key`; the value is compared as JSON.
   */
  changed(key: string, value: unknown): boolean;
}

/**
 * How a lesson checks what the learner understood: after the experiment, the learner commits
 * an answer to the lesson's question, and the page checks it against what the engine
 * measured on the loaded model now (never a fixed key, so it stays true when the model
 * changes). "What to notice" shows once the answer is right; a wrong one gets the hint,
 * which points at what to look at, never at the answer.
 */
export type Check =
  | {
      readonly kind: 'choice';
      /** The narrower question the options answer, when the lesson's `question` is broader (else the question itself). */
      readonly ask?: () => string;
      /** The options, in the page's language; each one a claim the engine can decide. */
      readonly options: () => readonly string[];
      /** The index of the right option, decided from the engine's numbers now; null while they are not measured yet. */
      readonly right: (c: LessonCtx) => number | null;
      /** Where to look after a wrong answer. */
      readonly hint: (c: LessonText) => string;
    }
  | {
      readonly kind: 'number';
      /** What number to read off the view ("the largest |q − k|"). */
      readonly label: () => string;
      /** The engine's value on the loaded model now; null while it is not measured yet. */
      readonly expected: (c: LessonCtx) => number | null;
      /** How far an answer may lie from the expected value and still be right (absolute). */
      readonly tolerance: (expected: number) => number;
      /** Where to look after a wrong answer. */
      readonly hint: (c: LessonText) => string;
    };

export interface Lesson {
  /** The id in `#lesson=<id>` and `<transformer-playground lesson="<id>">`. */
  readonly id: string;
  readonly title: () => string;
  /** The explanation, a paragraph or two. */
  readonly explain: (c: LessonText) => string[];
  /** The formula, as plain text: a string when it is pure math (the same in every language), a msg() when it has words in it. */
  readonly formula?: string | (() => string);
  /** The settings it opens with, in the URL-hash format. */
  readonly preset: string;
  /** What to do, and the question to answer while doing it. */
  readonly task: () => string;
  readonly question: () => string;
  /** What to notice once it is done. */
  readonly notice: (c: LessonText) => string;
  /** Has the learner done it? */
  readonly done: (c: LessonCtx) => boolean;
  /** The answer to `question` the learner commits once the experiment is done; "what to notice" shows once it is right. */
  readonly check: Check;
  /** The setting the experiment changes (a classroom link leaves it unlocked), if it is one. */
  readonly setting?: keyof PlaygroundState;
  /** The code it is about, paths in the repository. */
  readonly code: readonly string[];
  /** The section of docs/model.md. */
  readonly doc: string;
}

/** A shipped model's manifest entry, by file. */
function entry(c: LessonText, file: string): ManifestEntry | undefined {
  return c.store?.manifest.find((m) => m.file === file);
}

/** A share 0…1 as a percentage, as precise as the manifest gives it ("99.6 %", "100 %"). */
export function percent(x: number): string {
  return `${String(Math.round(x * 1000) / 10)} %`;
}

/** What the training CLI measured on held-out data for a shipped model, as a percentage ('' if unknown). */
export function heldOut(c: LessonText, file: string): string {
  const a = entry(c, file)?.held_out_accuracy;
  return a === undefined ? '' : percent(a);
}

/** The two held-out scores of a lesson that compares two models, when both are known. */
function pair(c: LessonText, a: string, b: string): [string, string] | null {
  const x = heldOut(c, a);
  const y = heldOut(c, b);
  return x && y ? [x, y] : null;
}

export const LESSONS: readonly Lesson[] = [
  {
    ...catalogued('heads'),
    title: () => msg('Several heads, each looking its own way', { id: 'lesson.heads.title' }),
    explain: () => [
      msg(
        'An attention layer does not look at the sequence once but h times in parallel. Each head gets its own slice of the model width, d_model / h numbers per token, and learns its own pattern: one may watch the previous character, another the start of the word.',
        { id: 'lesson.heads.explain1' },
      ),
      msg('The heads’ outputs are concatenated and mixed by one more matrix, W_O. Splitting the width this way costs about as much as one wide head.', {
        id: 'lesson.heads.explain2',
      }),
    ],
    formula: 'MultiHead(X) = Concat(head_1, …, head_h) · W_O,   head_i = Attention(X·W_Q^i, X·W_K^i, X·W_V^i)',
    task: () => msg('Switch one head off with its h button under the small heatmaps.', { id: 'lesson.heads.task' }),
    question: () => msg('Does the next-character distribution change, and do all heads matter equally?', { id: 'lesson.heads.question' }),
    notice: () =>
      msg('The small heatmaps differ from head to head. Switching one off moves some probabilities a little and some a lot: heads share the work unevenly, and a model often survives the loss of one.', {
        id: 'lesson.heads.notice',
      }),
    done: (c) => c.st.ablate.length > 0,
    check: CHECKS['heads'],
    code: ['crate/src/model/attention.rs'],
    doc: 'attention',
  },
  {
    ...catalogued('qkv'),
    title: () => msg('Queries, keys and values are three different projections', { id: 'lesson.qkv.title' }),
    explain: () => [
      msg('Every token is projected three times. Its query says what it is looking for, its key says what it offers to others, and its value is what it hands over when it is chosen.', {
        id: 'lesson.qkv.explain1',
      }),
      msg('Because W_Q and W_K differ, token i can attend strongly to token j while j ignores i. With one shared matrix the scores would be symmetric.', {
        id: 'lesson.qkv.explain2',
      }),
    ],
    formula: () => msg('q_i = x_i·W_Q,   k_j = x_j·W_K,   v_j = x_j·W_V,   score(i, j) = q_i·k_j', { id: 'lesson.qkv.formula' }),
    task: () => msg('In the model list, load “Grammar LM · shared W_Q = W_K”.', { id: 'lesson.qkv.task' }),
    question: () => msg('What does the inspector beside the heatmap now say about the largest |q − k|, and what does that make of the score matrix?', { id: 'lesson.qkv.question' }),
    notice: () =>
      msg('With W_Q = W_K every query equals its own token’s key, so the largest |q − k| is 0 and the raw score of (i, j) equals that of (j, i): the matrix is symmetric before the causal mask hides its upper half. Separate projections are what let attention be one-sided.', {
        id: 'lesson.qkv.notice',
      }),
    done: (c) => c.st.model === 'grammar-shared-qk.safetensors',
    check: CHECKS['qkv'],
    code: ['crate/src/model/attention.rs'],
    doc: 'attention',
  },
  {
    ...catalogued('scaled-dot'),
    title: () => msg('Scaled dot product: why divide by √d_k', { id: 'lesson.scaled-dot.title' }),
    explain: () => [
      msg('A score is the dot product of a query and a key: a sum of d_k products. If the entries are roughly independent with variance 1, the sum has variance d_k, so wider heads give larger scores.', {
        id: 'lesson.scaled-dot.explain1',
      }),
      msg('Large scores push softmax towards a single 1 and many 0s, where its gradient almost vanishes. Dividing by √d_k brings the variance back to about 1.', {
        id: 'lesson.scaled-dot.explain2',
      }),
    ],
    formula: 'Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V',
    task: () => msg('Untick “scale by √d_k” in the settings.', { id: 'lesson.scaled-dot.task' }),
    question: () => msg('Do the attention rows become sharper or flatter, and what happens to each head’s entropy?', { id: 'lesson.scaled-dot.question' }),
    notice: () =>
      msg('Without the division the rows concentrate on fewer keys: entropy falls and the largest probability rises in the saturation view. The √d_k plot shows the same growth of score variance with width.', {
        id: 'lesson.scaled-dot.notice',
      }),
    done: (c) => !c.st.scale,
    check: CHECKS['scaled-dot'],
    code: ['crate/src/model/attention.rs'],
    doc: 'attention',
  },
  {
    ...catalogued('dot-vs-additive'),
    title: () => msg('Dot-product against additive scores', { id: 'lesson.dot-vs-additive.title' }),
    explain: () => [
      msg('A dot product is one of many ways to score a query against a key. Additive attention passes both through a small network with a tanh and reads one number out.', {
        id: 'lesson.dot-vs-additive.explain1',
      }),
      msg('The dot product is cheap: all scores are one matrix product, which hardware does very well. The additive score does as many multiply-adds, plus an addition and a tanh for every dimension of every query–key pair; the timing table of the parallel view measures both on this device.', {
        id: 'lesson.dot-vs-additive.explain2',
      }),
    ],
    formula: () => msg('dot: score(q, k) = q·k / √d_k        additive: score(q, k) = vᵀ · tanh(q + k)', { id: 'lesson.dot-vs-additive.formula' }),
    task: () => msg('Under “Design”, load the sibling trained with additive scores.', { id: 'lesson.dot-vs-additive.task' }),
    question: () => msg('Does the additive model still solve the task, and do its attention maps look alike?', { id: 'lesson.dot-vs-additive.question' }),
    notice: (c) => {
      const p = pair(c, 'reverse-additive.safetensors', 'reverse.safetensors');
      const scores = !p
        ? ''
        : p[0] === p[1]
          ? msg(str`Both learn the task equally well: trained with the same recipe, each reverses ${p[0]} of held-out strings exactly.`, {
              id: 'lesson.dot-vs-additive.notice-scores-equal',
            })
          : msg(str`Both learn the task, not equally well: trained with the same recipe, the additive model reverses ${p[0]} of held-out strings exactly, the scaled-dot model ${p[1]}.`, {
              id: 'lesson.dot-vs-additive.notice-scores',
            });
      return `${scores} ${msg('Compare their attention maps. The q·k inspector shows the additive formula instead of a row of products, and the timing table under the parallel view shows what the tanh costs.', {
        id: 'lesson.dot-vs-additive.notice',
      })}`.trim();
    },
    done: (c) => c.st.model === 'reverse-additive.safetensors',
    check: CHECKS['dot-vs-additive'],
    code: ['crate/src/model/attention.rs'],
    doc: 'attention',
  },
  {
    ...catalogued('padding-mask'),
    title: () => msg('The padding mask', { id: 'lesson.padding-mask.title' }),
    explain: () => [
      msg('Sequences of different lengths are run together as one rectangular batch, so the short ones are filled up with a pad token. Pads are not text: no real token should read from them.', {
        id: 'lesson.padding-mask.explain1',
      }),
      msg('The padding mask adds −∞ to the score of every pad key before softmax, so its weight becomes exactly 0.', { id: 'lesson.padding-mask.explain2' }),
    ],
    formula: () => msg('score(i, j) + (0 if key j is a real token, −∞ if key j is a pad)', { id: 'lesson.padding-mask.formula' }),
    task: () => msg('Untick “padding mask”, then look at sequence 1 (the short one) in the attention view.', { id: 'lesson.padding-mask.task' }),
    question: () => msg('Which cells start to receive weight, and should they?', { id: 'lesson.padding-mask.question' }),
    notice: () =>
      msg('The pad columns of the short sequence take weight: its real words now read from filler, so their outputs depend on how much padding the batch needed. With the mask on the pad columns get exactly 0. This model reads in both directions; under a causal mask, pads at the end would be hidden anyway.', {
        id: 'lesson.padding-mask.notice',
      }),
    done: (c) => !c.st.pad,
    check: CHECKS['padding-mask'],
    code: ['crate/src/model/mask.rs'],
    doc: 'attention',
  },
  {
    ...catalogued('causal-mask'),
    title: () => msg('The causal mask is not the padding mask', { id: 'lesson.causal-mask.title' }),
    explain: () => [
      msg('A language model learns to predict each next token from the ones before it. In training all positions run at once, so something must stop position i from reading positions after i.', {
        id: 'lesson.causal-mask.explain1',
      }),
      msg('The causal mask hides every key to the right of the query. It depends on positions only; the padding mask depends on which tokens are pads. A batch can need both.', {
        id: 'lesson.causal-mask.explain2',
      }),
    ],
    formula: () => msg('mask(i, j) = 0 if j ≤ i,  −∞ if j > i', { id: 'lesson.causal-mask.formula' }),
    task: () => msg('Untick “causal mask” in the settings.', { id: 'lesson.causal-mask.task' }),
    question: () => msg('Which cells fill in? The last position could already see every token: does its prediction change anyway?', { id: 'lesson.causal-mask.question' }),
    notice: () =>
      msg('The upper triangle fills in: every position now reads the future. The last position’s prediction moves too, because in the second layer it reads earlier positions that have now read ahead. The model was never trained to see this, so its guesses get worse.', {
        id: 'lesson.causal-mask.notice',
      }),
    done: (c) => c.st.causal === false,
    check: CHECKS['causal-mask'],
    code: ['crate/src/model/mask.rs'],
    doc: 'attention',
  },
  {
    ...catalogued('attention-sites'),
    title: () => msg('The three places attention is used', { id: 'lesson.attention-sites.title' }),
    explain: () => [
      msg('An encoder–decoder model attends in three places. Encoder self-attention lets the source tokens read each other freely. Decoder self-attention lets each target token read the earlier target tokens, under the causal mask.', {
        id: 'lesson.attention-sites.explain1',
      }),
      msg('Cross-attention joins the two: its queries come from the decoder, its keys and values from the encoder’s output.', { id: 'lesson.attention-sites.explain2' }),
    ],
    formula: () => msg('cross-attention: Q = decoder states · W_Q,   K = encoder output · W_K,   V = encoder output · W_V', { id: 'lesson.attention-sites.formula' }),
    task: () => msg('In the attention view, switch to cross-attention.', { id: 'lesson.attention-sites.task' }),
    question: () => msg('What are the rows and what are the columns now, and is the map square?', { id: 'lesson.attention-sites.question' }),
    notice: () =>
      msg('Rows are target positions and columns are source words, so the map need not be square, and no causal mask applies: every output word may read the whole source.', {
        id: 'lesson.attention-sites.notice',
      }),
    done: (c) => c.st.site === 'cross',
    check: CHECKS['attention-sites'],
    code: ['crate/src/model/forward.rs', 'crate/src/model/attention.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('parallel'),
    title: () => msg('Parallel in training, one token at a time in inference', { id: 'lesson.parallel.title' }),
    explain: () => [
      msg('In training the whole target sentence is known, so the model is given the true previous tokens (teacher forcing) and computes every position in one pass.', {
        id: 'lesson.parallel.explain1',
      }),
      msg('When it generates, token t+1 depends on the token it just chose, so it must run step by step. The view measures both on this device.', { id: 'lesson.parallel.explain2' }),
    ],
    task: () => msg('Change “tokens N” and press “Measure again”.', { id: 'lesson.parallel.task' }),
    question: () => msg('How does each of the three times grow as N grows?', { id: 'lesson.parallel.question' }),
    notice: (c) => {
      const d = c.view<HTMLElement & { data: ParallelTiming | null }>('tp-parallel')?.data;
      const cpu = c.store?.backendInfo?.backend !== 'webgpu';
      const growth = msg('Token by token with the cache grows about linearly; without the cache each step redoes the whole prefix, so the total grows about with N².', {
        id: 'lesson.parallel.notice',
      });
      const where = cpu
        ? msg('Here the CPU backend runs: the one pass does the same arithmetic as the cached steps, one position after another on one core, so what it saves is the work around each step, not the arithmetic. On WebGPU the one pass also computes the positions side by side.', {
            id: 'lesson.parallel.notice-cpu',
          })
        : msg('Here WebGPU runs: the one pass computes the positions side by side, while each serial step also pays a round trip to the device.', {
            id: 'lesson.parallel.notice-gpu',
          });
      const n = d?.tokens.length ?? 0;
      const k = d ? d.forward_lengths.indexOf(n) : -1;
      const measured =
        d && k >= 0
          ? msg(str`Measured now for N = ${n}: one pass ${d.forward_ms[k].toFixed(2)} ms, token by token ${d.cached_ms[n - 1].toFixed(2)} ms with the cache and ${d.uncached_ms[n - 1].toFixed(2)} ms without.`, {
              id: 'lesson.parallel.notice-measured',
            })
          : '';
      return [measured, growth, where].filter(Boolean).join(' ');
    },
    done: (c) => {
      const d = c.view<HTMLElement & { data: { tokens: unknown[] } | null }>('tp-parallel')?.data;
      return !!d && c.changed('parallel.n', d.tokens.length);
    },
    check: CHECKS['parallel'],
    code: ['crate/src/generate', 'crate/src/model/cache.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('embedding-scale'),
    title: () => msg('Why embeddings are multiplied by √d_model', { id: 'lesson.embedding-scale.title' }),
    explain: () => [
      msg('The input of the first block is a token embedding plus a position vector. Learned embeddings start small, while sinusoidal position values lie between −1 and 1.', {
        id: 'lesson.embedding-scale.explain1',
      }),
      msg('Multiplying the embedding by √d_model makes the two comparable in size, so the position does not drown out which token it is.', { id: 'lesson.embedding-scale.explain2' }),
    ],
    formula: 'x_t = E[token_t] · √d_model + PE(t)',
    task: () => msg('Under “Design”, load the sibling trained without ×√d_model.', { id: 'lesson.embedding-scale.task' }),
    question: () => msg('Which is larger now, the token part or the position part?', { id: 'lesson.embedding-scale.question' }),
    notice: (c) => {
      const first = msg('The view draws the token part with and without the factor beside the position part, and states the ratio in the loaded weights. Compare the balance in the model trained with the factor and in the one trained without it.', {
        id: 'lesson.embedding-scale.notice',
      });
      // The view's ratio, once it is the one of a model trained without the factor.
      const v = c.view<HTMLElement & { ratio: number | null; data: { scaled_in_model: boolean } | null }>('tp-embedding-scale');
      const r = v?.ratio ?? null;
      if (r === null || v?.data?.scaled_in_model !== false || c.store?.st.model !== 'reverse-no-embed-scale.safetensors') return first;
      const x = (Math.round(r * 10) / 10).toFixed(1);
      return `${first} ${r >= 1
        ? msg(str`In the model trained without it the position vectors are about ${x}× the token vectors they are added to, so the position dominates the sum.`, { id: 'lesson.embedding-scale.notice-ratio' })
        : msg(str`In the model trained without it the position vectors are about ${x}× the token vectors they are added to.`, { id: 'lesson.embedding-scale.notice-ratio-small' })}`;
    },
    done: (c) => c.st.model === 'reverse-no-embed-scale.safetensors',
    check: CHECKS['embedding-scale'],
    code: ['crate/src/model/embedding.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('positions'),
    title: () => msg('Position encodings, one by one', { id: 'lesson.positions.title' }),
    explain: () => [
      msg('Sinusoidal and learned encodings add a vector per position to the input. Relative positions (Shaw) add a learned term per distance to the scores. RoPE rotates queries and keys by an angle that grows with position. ALiBi subtracts a penalty proportional to distance.', {
        id: 'lesson.positions.explain1',
      }),
      msg('Each grammar model here was trained with one of them, otherwise identically.', { id: 'lesson.positions.explain2' }),
    ],
    formula: 'PE(t, 2i) = sin(t / 10000^(2i/d)),   PE(t, 2i+1) = cos(t / 10000^(2i/d))',
    task: () => msg('Pick another scheme in “Position encoding”, for example rope or alibi.', { id: 'lesson.positions.task' }),
    question: () => msg('Where does the position enter now: the input, the scores, or the queries and keys?', { id: 'lesson.positions.question' }),
    notice: () =>
      msg('The view changes with the scheme: a table of vectors for sinusoidal and learned, rotating pairs for RoPE, a slope per head for ALiBi. Only the first two touch the input at all.', {
        id: 'lesson.positions.notice',
      }),
    // Done when the positions view has drawn a grammar model (English or, in a Chinese page,
    // Chinese: ./zh-presets.ts) with another encoding (the W_Q = W_K model keeps sinusoidal
    // positions, so it does not count).
    done: (c) => {
      const e = c.store.manifest.find((m) => m.file === c.st.model);
      const d = c.view<HTMLElement & { data: Positions | null }>('tp-positions')?.data;
      return !!e && (e.task === 'grammar' || e.task === 'zh-grammar') && e.pos_encoding !== 'sinusoidal' && c.store.info?.pos_encoding === e.pos_encoding && d?.scheme === e.pos_encoding;
    },
    check: CHECKS['positions'],
    code: ['crate/src/model/position.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('order'),
    title: () => msg('Without positions, order is invisible', { id: 'lesson.order.title' }),
    explain: () => [
      msg('Attention itself is a weighted sum over a set: it does not know which key came first. Without any position information, reordering the input only reorders the output.', {
        id: 'lesson.order.explain1',
      }),
      msg('“the cat chases the dog” and “the dog chases the cat” would mean the same thing to such a model.', { id: 'lesson.order.explain2' }),
    ],
    task: () => msg('Press “shuffle the characters”.', { id: 'lesson.order.task' }),
    question: () => msg('With the model without positions, is every output row the same as before, only moved?', { id: 'lesson.order.question' }),
    notice: () =>
      msg('For the model without positions each row is bit-identical to the row of the character it came from. Any position encoding breaks this symmetry.', { id: 'lesson.order.notice' }),
    done: (c) => {
      const o = c.view<HTMLElement & { perm: number[]; result: unknown; busy: boolean }>('tp-order');
      return !!o && c.changed('order.perm', o.perm) && !!o.result && !o.busy;
    },
    check: CHECKS['order'],
    code: ['crate/src/model/position.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('extrapolation'),
    title: () => msg('Train short, test long', { id: 'lesson.extrapolation.title' }),
    explain: () => [
      msg('A model sees sequences up to some length in training. What happens after that length depends on the position encoding: a learned table has rows past it, up to the model’s context, but no training sequence ever reached them, so they keep the random values they started with; schemes based on distance may carry on.', {
        id: 'lesson.extrapolation.explain1',
      }),
    ],
    task: () => msg('Press “Measure”.', { id: 'lesson.extrapolation.task' }),
    question: () => msg('Which schemes keep their accuracy beyond the training length?', { id: 'lesson.extrapolation.question' }),
    notice: () =>
      msg('Up to the training length the schemes are close. Past it they part: watch which curves hold their level and which fall away, and compare that with where each scheme puts the position.', { id: 'lesson.extrapolation.notice' }),
    // Done once every grammar model of the view was measured, not after the first of them.
    done: (c) => {
      const v = c.view<HTMLElement & { results: unknown[]; progress: unknown; expected: number }>('tp-extrapolation');
      return !!v && !v.progress && v.expected > 0 && v.results.length === v.expected;
    },
    check: CHECKS['extrapolation'],
    code: ['crate/src/model/position.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('residual'),
    title: () => msg('Residual connections', { id: 'lesson.residual.title' }),
    explain: () => [
      msg('Each sublayer adds its output to its input instead of replacing it. The sum is a stream running through the model, which every layer reads and writes a little to.', {
        id: 'lesson.residual.explain1',
      }),
      msg('Gradients flow back along the stream unchanged, so deep stacks train. Without it every layer must pass everything on through its own weights.', { id: 'lesson.residual.explain2' }),
    ],
    formula: 'x ← x + Sublayer(LN(x))',
    task: () => msg('Under “Design”, load the sibling trained with no residual connections.', { id: 'lesson.residual.task' }),
    question: () => msg('How do the norms per layer change, and is the output still right?', { id: 'lesson.residual.question' }),
    notice: (c) => {
      const p = pair(c, 'reverse-no-residual.safetensors', 'reverse.safetensors');
      const first = msg('The norms per layer follow a different course without the residual stream.', { id: 'lesson.residual.notice' });
      return p
        ? `${first} ${msg(str`The model without it was trained with the same recipe and is weaker: it reverses ${p[0]} of held-out strings exactly, against ${p[1]} with residuals.`, { id: 'lesson.residual.notice-scores' })}`
        : first;
    },
    done: (c) => c.st.model === 'reverse-no-residual.safetensors',
    check: CHECKS['residual'],
    code: ['crate/src/model/forward.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('no-leak'),
    title: () => msg('The residual path does not leak the future', { id: 'lesson.no-leak.title' }),
    explain: () => [
      msg('The residual, LayerNorm and the FFN all work on one position at a time. With LayerNorm, the only place positions meet is attention, so under the causal mask nothing from a later token can reach an earlier one.', {
        id: 'lesson.no-leak.explain1',
      }),
      msg('BatchNorm in train mode is different: it normalises each feature with a mean and variance taken over every position of the batch, so a later token moves the earlier rows through the norm, whatever the mask.', {
        id: 'lesson.no-leak.explain-batch-norm',
      }),
      msg('The view changes the last token and compares every earlier row bit for bit: first under the mask the page applies now, then under the opposite for comparison.', { id: 'lesson.no-leak.explain2' }),
    ],
    task: () => msg('Untick “causal mask” and read the first table again: it follows the mask the page applies.', { id: 'lesson.no-leak.task' }),
    question: () => msg('Which earlier rows change now?', { id: 'lesson.no-leak.question' }),
    notice: (c) => {
      // The BatchNorm model is a sibling (under “Design”) of the reversing model only; on
      // another model (a Chinese grammar model, in a Chinese page) it is in the model list.
      const bn = entry(c, 'reverse-batch-norm.safetensors');
      const here = c.store ? entry(c, c.store.st.model) : undefined;
      if (!bn || !here || here.task === bn.task)
        return msg('With the causal mask every earlier row is bit-identical. Without it the change spreads to earlier positions from the first attention layer on: in this LayerNorm model the leak comes through attention only. Load the BatchNorm sibling under “Design” and choose train mode: the earlier rows change even under the causal mask, through the batch statistics.', {
          id: 'lesson.no-leak.notice',
        });
      return msg('With the causal mask every earlier row is bit-identical. Without it the change spreads to earlier positions from the first attention layer on: in this LayerNorm model the leak comes through attention only. In the model list, load the string-reversing model trained with BatchNorm and choose train mode: the earlier rows change even under the causal mask, through the batch statistics.', {
        id: 'lesson.no-leak.notice-other',
      });
    },
    // Done when the view's first table runs under a mask that lets positions read later keys.
    done: (c) => {
      const v = c.view<HTMLElement & { diffs: unknown[]; ran: MaskEdit[] }>('tp-no-leak');
      return !!v && v.diffs.length === 2 && v.ran[0]?.rule.kind === 'none';
    },
    check: CHECKS['no-leak'],
    code: ['crate/src/model/forward.rs', 'crate/src/model/mask.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('norms'),
    title: () => msg('LayerNorm against BatchNorm', { id: 'lesson.norms.title' }),
    explain: () => [
      msg('Both subtract a mean and divide by a standard deviation. LayerNorm takes them over the features of one token. BatchNorm takes them over the whole batch for each feature.', {
        id: 'lesson.norms.explain1',
      }),
      msg('So with BatchNorm in training, one sentence’s output depends on the other sentences in its batch and on every position of its own, and padding counts too.', { id: 'lesson.norms.explain2' }),
    ],
    formula: () => msg('LN(x) = γ ⊙ (x − mean(x)) / √(var(x) + ε) + β,   statistics over one token’s features', { id: 'lesson.norms.formula' }),
    task: () => msg('Under “Design”, load the sibling trained with BatchNorm (it changes two things: BatchNorm instead of LayerNorm, and after the residual add instead of before the sublayer).', { id: 'lesson.norms.task' }),
    question: () => msg('In train mode, does another sequence in the batch change this one’s output?', { id: 'lesson.norms.question' }),
    notice: () =>
      msg('With BatchNorm the batch statistics couple the sequences; LayerNorm never does, which is one reason transformers use it.', { id: 'lesson.norms.notice' }),
    done: (c) => c.st.model === 'reverse-batch-norm.safetensors',
    check: CHECKS['norms'],
    code: ['crate/src/model/norm.rs'],
    doc: 'ffn-norms',
  },
  {
    ...catalogued('pre-post-ln'),
    title: () => msg('Post-LN against pre-LN', { id: 'lesson.pre-post-ln.title' }),
    explain: () => [
      msg('The original transformer normalised after adding the residual (post-LN). Most models now normalise the sublayer’s input and leave the stream itself untouched (pre-LN).', {
        id: 'lesson.pre-post-ln.explain1',
      }),
      msg('Pre-LN keeps a clean path for gradients and trains without a long warmup; post-LN keeps the stream’s size fixed.', { id: 'lesson.pre-post-ln.explain2' }),
    ],
    formula: 'Post-LN: x ← LN(x + F(x))        Pre-LN: x ← x + F(LN(x))',
    task: () => msg('Under “Design”, load the post-LN sibling.', { id: 'lesson.pre-post-ln.task' }),
    question: () => msg('Where do the norm boxes sit in the diagram now, and how do the residual norms per layer differ?', { id: 'lesson.pre-post-ln.question' }),
    notice: () =>
      msg('In post-LN the norm sits on the main path after each sum, so the stream is renormalised every sublayer; in pre-LN it grows from layer to layer.', { id: 'lesson.pre-post-ln.notice' }),
    done: (c) => c.st.model === 'reverse-post-ln.safetensors',
    check: CHECKS['pre-post-ln'],
    code: ['crate/src/model/norm.rs', 'crate/src/model/plan.rs'],
    doc: 'ffn-norms',
  },
  {
    ...catalogued('ffn'),
    title: () => msg('The position-wise feed-forward network', { id: 'lesson.ffn.title' }),
    explain: () => [
      msg('After attention, each position goes through the same small two-layer network on its own: widen, apply a nonlinearity, narrow again. It holds a large share of a block’s parameters; the view says how many in the loaded model.', {
        id: 'lesson.ffn.explain1',
      }),
    ],
    formula: () => msg('FFN(x) = W_2 · act(W_1 · x + b_1) + b_2', { id: 'lesson.ffn.formula' }),
    task: () => msg('Pick another position to change in the view.', { id: 'lesson.ffn.task' }),
    question: () => msg('In each layer, which rows of the FFN output change?', { id: 'lesson.ffn.question' }),
    notice: (c) => {
      const first = msg('An FFN output row changes exactly where its input row changed. The FFN never mixes positions; the spreading you see comes from attention in between (and, in a BatchNorm model in train mode, from the norm’s statistics).', {
        id: 'lesson.ffn.notice',
      });
      const sh = c.view<HTMLElement & { share: { ffn: number; layer: number } | null }>('tp-ffn')?.share;
      return sh
        ? `${first} ${msg(str`Here the FFN holds ${percent(sh.ffn / sh.layer)} of a layer’s parameters.`, { id: 'lesson.ffn.notice-share' })}`
        : first;
    },
    done: (c) => {
      const d = c.view<HTMLElement & { diff: unknown }>('tp-ffn')?.diff;
      return !!d && c.changed('ffn.diff', d);
    },
    check: CHECKS['ffn'],
    code: ['crate/src/model/ffn.rs'],
    doc: 'ffn-norms',
  },
  {
    ...catalogued('dropout'),
    title: () => msg('Dropout: on in training, off in evaluation', { id: 'lesson.dropout.title' }),
    explain: () => [
      msg('In training, dropout sets a random fraction p of activations to zero and scales the rest by 1/(1 − p), so no unit can rely on any one other.', { id: 'lesson.dropout.explain1' }),
      msg('In evaluation it does nothing at all. The scaling in training keeps the expected value the same in both modes.', { id: 'lesson.dropout.explain2' }),
    ],
    formula: () => msg('train: y = m ⊙ x / (1 − p),  m_i ~ Bernoulli(1 − p)        eval: y = x', { id: 'lesson.dropout.formula' }),
    task: () => msg('Choose “train mode” for the forward pass, then press “run again”.', { id: 'lesson.dropout.task' }),
    question: () => msg('Does the output change from run to run? Does it in eval mode?', { id: 'lesson.dropout.question' }),
    notice: () => msg('In train mode each run draws new masks and the numbers change; in eval mode repeated runs are identical.', { id: 'lesson.dropout.notice' }),
    // Done after two train-mode passes with different draws have been drawn: a rerun in
    // eval mode, then a switch to train mode, is one train-mode pass only.
    done: (c) => {
      const f = c.store.lastForward;
      const trainDraw = c.st.mode === 'train' && f?.train_note != null ? c.store.draw : null;
      return trainDraw !== null && c.changed('dropout.train-draw', trainDraw);
    },
    check: CHECKS['dropout'],
    code: ['crate/src/model/dropout.rs'],
    doc: 'ffn-norms',
  },
  {
    ...catalogued('noam-adam'),
    title: () => msg('The Noam schedule and Adam', { id: 'lesson.noam-adam.title' }),
    explain: () => [
      msg('The models here are trained with Adam, which scales each weight’s step by running averages of its gradient and squared gradient.', { id: 'lesson.noam-adam.explain1' }),
      msg('Early on those averages are unreliable, so the learning rate first rises linearly for a number of warmup steps, then falls as one over the square root of the step.', {
        id: 'lesson.noam-adam.explain2',
      }),
    ],
    formula: () => msg('lr = d_model^−0.5 · min(step^−0.5, step · warmup^−1.5)', { id: 'lesson.noam-adam.formula' }),
    task: () => msg('Set the warmup to 400 steps.', { id: 'lesson.noam-adam.task' }),
    question: () => msg('Where is the peak now, and how high?', { id: 'lesson.noam-adam.question' }),
    notice: () => msg('The peak is always at step = warmup, and a shorter warmup gives a higher peak: (d_model · warmup)^−0.5.', { id: 'lesson.noam-adam.notice' }),
    done: (c) => !!c.store.schedule && c.changed('noam.warmup', c.store.schedule.warmup),
    check: CHECKS['noam-adam'],
    code: ['crate/src/train'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('architectures'),
    title: () => msg('Encoder-only, decoder-only, encoder–decoder', { id: 'lesson.architectures.title' }),
    explain: () => [
      msg('The same blocks build three kinds of model. A decoder-only model predicts the next token under a causal mask. An encoder-only model reads its whole input both ways and labels or classifies it. An encoder–decoder reads a source with its encoder and writes a target with its decoder.', {
        id: 'lesson.architectures.explain1',
      }),
    ],
    task: () => msg('In the model list, load an encoder-only or an encoder–decoder model.', { id: 'lesson.architectures.task' }),
    question: () => msg('What does the diagram gain or lose, and what does the output become?', { id: 'lesson.architectures.question' }),
    notice: () =>
      msg('An encoder-only model has no causal mask and gives a class or a tag per position; an encoder–decoder gains a second stack and cross-attention and writes a new sequence.', {
        id: 'lesson.architectures.notice',
      }),
    done: (c) => !!c.store.info && c.store.info.arch !== 'decoder_only',
    check: CHECKS['architectures'],
    code: ['crate/src/model/plan.rs', 'crate/src/model/forward.rs'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('kv-cache'),
    title: () => msg('Prefill and the KV cache', { id: 'lesson.kv-cache.title' }),
    explain: () => [
      msg('Generation starts with prefill: the whole prompt in one pass, keeping every layer’s keys and values. Each next step then computes only the newest position and appends its key and value to the cache.', {
        id: 'lesson.kv-cache.explain1',
      }),
      msg('Without the cache every step recomputes the keys and values of the entire prefix, getting the same tokens at a growing cost.', { id: 'lesson.kv-cache.explain2' }),
    ],
    formula: () => msg('step t: q_t, k_t, v_t from token t;   K ← [K; k_t],  V ← [V; v_t];   out_t = softmax(q_t·Kᵀ / √d_k) · V', { id: 'lesson.kv-cache.formula' }),
    task: () => msg('Untick “KV cache”, press “↺ Restart” and let the generation run to the end.', { id: 'lesson.kv-cache.task' }),
    question: () => msg('Are the tokens the same? How many positions were run in total?', { id: 'lesson.kv-cache.question' }),
    notice: () =>
      msg('The text is identical. With the cache each step feeds one position; without it step t feeds all of them again, so the positions run grow quadratically.', {
        id: 'lesson.kv-cache.notice',
      }),
    done: (c) => !c.st.cache && c.store.gen.done && c.store.gen.generated.length > 0,
    check: CHECKS['kv-cache'],
    code: ['crate/src/model/cache.rs', 'crate/src/generate'],
    doc: 'forward-pass',
  },
  {
    ...catalogued('decoding'),
    title: () => msg('Greedy, sampling, beam search', { id: 'lesson.decoding.title' }),
    explain: () => [
      msg('The model gives a probability for every possible next token; a decoding rule picks one. Greedy takes the most likely. Sampling draws at random, sharpened or flattened by a temperature and cut to the top k or top p.', {
        id: 'lesson.decoding.explain1',
      }),
      msg('Beam search keeps the few best partial sequences and extends each, trading time for a more probable whole.', { id: 'lesson.decoding.explain2' }),
    ],
    formula: 'p_i = exp(z_i / T) / Σ_j exp(z_j / T)',
    task: () => msg('Choose “beam search” under the output probabilities, then press “↺ Restart”.', { id: 'lesson.decoding.task' }),
    question: () => msg('Does the best beam start with the token greedy would pick?', { id: 'lesson.decoding.question' }),
    notice: () =>
      msg('The tree keeps several branches alive and drops the weak ones. The sequence it keeps can begin with a token that was not the single most likely one.', { id: 'lesson.decoding.notice' }),
    done: (c) => c.st.strategy === 'beam' && c.store.gen.beamSteps.length > 0,
    check: CHECKS['decoding'],
    code: ['crate/src/generate'],
    doc: 'forward-pass',
  },
  ...SEED_LESSONS,
];

/** The lesson of this id, if there is one. */
export function lessonNamed(id: string): Lesson | undefined {
  return LESSONS.find((l) => l.id === id);
}

/** The lesson ids, in tour order. */
export const LESSON_IDS: readonly string[] = LESSONS.map((l) => l.id);
