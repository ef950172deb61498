// The course: the lessons in the order of the seed notes (seeds/000_91cbef0ed8d39e82.txt),
// grouped by the notes' parts, and for each lesson the notes' question it answers. The big
// picture comes first (one token end to end), then attention from Q/K/V through the scaled
// dot product to the heads, the encoder and decoder, parallelism beside the KV cache, order
// before the position encodings, the residual and the norms, the FFN, training details,
// the three architectures, decoding, and a recap. The table of contents and previous /
// next of <tp-lesson> follow this order; a lesson missing here is appended at the end, so
// none can fall out of the tour.

import { msg } from '@lit/localize';
import { LESSONS, type Lesson } from './lessons';
import { PARTS, type CoursePart } from './parts';

export { PARTS, type CoursePart } from './parts';

/** The seed notes' question each lesson answers, in the page's language. */
const QUESTIONS: Readonly<Record<string, () => string>> = {
  'new-token': () => msg('How does a decoder-only model produce one new token?', { id: 'course.q.new-token' }),
  qkv: () => msg('What do Q, K and V each do, and why do Q and K get different weight matrices?', { id: 'course.q.qkv' }),
  'shared-qk': () => msg('What is lost when Q and K share one weight matrix?', { id: 'course.q.shared-qk' }),
  'scaled-dot': () => msg('Why are the scores divided by √d_k before the softmax?', { id: 'course.q.scaled-dot' }),
  'dot-vs-additive': () => msg('Why does attention score with a dot product rather than an additive network?', { id: 'course.q.dot-vs-additive' }),
  'padding-mask': () => msg('How is padding masked?', { id: 'course.q.padding-mask' }),
  heads: () => msg('Why several attention heads rather than one?', { id: 'course.q.heads' }),
  'head-dim': () => msg('Why does each head work in a smaller dimension, d_model / h?', { id: 'course.q.head-dim' }),
  'block-anatomy': () => msg('What is an encoder block made of?', { id: 'course.q.block-anatomy' }),
  'attention-sites': () => msg('How do the encoder and the decoder interact?', { id: 'course.q.attention-sites' }),
  'causal-mask': () => msg('How does the decoder’s self-attention differ from the encoder’s?', { id: 'course.q.causal-mask' }),
  parallel: () => msg('Where does a transformer compute in parallel, and can its decoder?', { id: 'course.q.parallel' }),
  'kv-cache': () => msg('Why does generation not recompute the whole text at every step?', { id: 'course.q.kv-cache' }),
  time: () => msg('Matrix products are said to suit GPUs: when does running them on one actually pay off?', { id: 'course.q.time' }),
  'embedding-scale': () => msg('Why are the input embeddings multiplied by √d_model?', { id: 'course.q.embedding-scale' }),
  order: () => msg('What is a position encoding, and why is it needed?', { id: 'course.q.order' }),
  extrapolation: () => msg('What are the strengths and weaknesses of a position encoding?', { id: 'course.q.extrapolation' }),
  positions: () => msg('Which other position encodings are there?', { id: 'course.q.positions' }),
  residual: () => msg('What is a residual connection, and what is it for?', { id: 'course.q.residual' }),
  norms: () => msg('Why does the transformer use LayerNorm rather than BatchNorm?', { id: 'course.q.norms' }),
  'pre-post-ln': () => msg('Where does LayerNorm sit in the transformer?', { id: 'course.q.pre-post-ln' }),
  'batch-norm': () => msg('What is BatchNorm, and what are its strengths and weaknesses?', { id: 'course.q.batch-norm' }),
  'residual-and-norm': () => msg('Why does the transformer need both the residual and LayerNorm?', { id: 'course.q.residual-and-norm' }),
  ffn: () => msg('What is the feed-forward network, and why is it position-wise?', { id: 'course.q.ffn' }),
  'noam-adam': () => msg('How is the learning rate set?', { id: 'course.q.noam-adam' }),
  'dropout-where': () => msg('Where does dropout go?', { id: 'course.q.dropout-where' }),
  dropout: () => msg('What must one watch for at test time because of dropout?', { id: 'course.q.dropout' }),
  'no-leak': () => msg('Can the residual path carry future tokens past the mask?', { id: 'course.q.no-leak' }),
  architectures: () => msg('How do encoder-only, decoder-only and encoder–decoder models differ?', { id: 'course.q.architectures' }),
  'which-architecture': () => msg('Which architecture suits which task?', { id: 'course.q.which-architecture' }),
  decoding: () => msg('How is the next token chosen from the last position’s logits?', { id: 'course.q.decoding' }),
  recap: () => msg('What are the most important conclusions?', { id: 'course.q.recap' }),
};

/** The lessons in the course's order (any lesson no part names comes last). */
export function courseLessons(): Lesson[] {
  const byId = new Map(LESSONS.map((l) => [l.id, l]));
  const ordered = PARTS.flatMap((p) => p.lessons.map((id) => byId.get(id)).filter((l): l is Lesson => !!l));
  const rest = LESSONS.filter((l) => !ordered.includes(l));
  return [...ordered, ...rest];
}

/** The parts with their lessons, in order; lessons no part names form a last part without a title. */
export function courseParts(): { part: CoursePart | null; lessons: Lesson[] }[] {
  const all = courseLessons();
  const parts = PARTS.map((p) => ({ part: p as CoursePart | null, lessons: all.filter((l) => p.lessons.includes(l.id)) })).filter((x) => x.lessons.length);
  const named = new Set(PARTS.flatMap((p) => p.lessons));
  const rest = all.filter((l) => !named.has(l.id));
  return rest.length ? [...parts, { part: null, lessons: rest }] : parts;
}

/** The part a lesson belongs to, if a part names it. */
export function partOf(id: string): CoursePart | undefined {
  return PARTS.find((p) => p.lessons.includes(id));
}

/** The seed notes' question a lesson answers ('' for a lesson that has none). */
export function seedQuestion(id: string): string {
  return Object.hasOwn(QUESTIONS, id) ? QUESTIONS[id]() : '';
}
