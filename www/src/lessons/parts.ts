// The course's parts (./course.ts): their titles and their lessons' ids in the order of the
// seed notes. Apart from the rest of the course, so that the first load knows where the
// course starts without the lessons' text (./catalogue.ts).

import { msg } from '@lit/localize';
import { CATALOGUE, lessonEntry } from './catalogue';

export interface CoursePart {
  readonly id: string;
  readonly title: () => string;
  /** Lesson ids, in order. */
  readonly lessons: readonly string[];
}

export const PARTS: readonly CoursePart[] = [
  { id: 'big-picture', title: () => msg('The big picture', { id: 'course.part.big-picture' }), lessons: ['new-token'] },
  {
    id: 'attention',
    title: () => msg('Attention: queries, keys, values and the score', { id: 'course.part.attention' }),
    lessons: ['qkv', 'shared-qk', 'scaled-dot', 'dot-vs-additive', 'padding-mask'],
  },
  { id: 'heads', title: () => msg('Several heads, and their dimension', { id: 'course.part.heads' }), lessons: ['heads', 'head-dim'] },
  { id: 'blocks', title: () => msg('The encoder and the decoder', { id: 'course.part.blocks' }), lessons: ['block-anatomy', 'attention-sites', 'causal-mask'] },
  { id: 'parallel', title: () => msg('Parallelism and the KV cache', { id: 'course.part.parallel' }), lessons: ['parallel', 'kv-cache', 'time'] },
  { id: 'positions', title: () => msg('Embeddings and positions', { id: 'course.part.positions' }), lessons: ['embedding-scale', 'order', 'extrapolation', 'positions'] },
  {
    id: 'norms',
    title: () => msg('Residuals, LayerNorm and BatchNorm', { id: 'course.part.norms' }),
    lessons: ['residual', 'norms', 'pre-post-ln', 'batch-norm', 'residual-and-norm'],
  },
  { id: 'ffn', title: () => msg('The feed-forward network', { id: 'course.part.ffn' }), lessons: ['ffn'] },
  { id: 'training', title: () => msg('Learning rate, dropout and the mask', { id: 'course.part.training' }), lessons: ['noam-adam', 'dropout-where', 'dropout', 'no-leak'] },
  { id: 'architectures', title: () => msg('The three architectures', { id: 'course.part.architectures' }), lessons: ['architectures', 'which-architecture'] },
  { id: 'generation', title: () => msg('Choosing the next token', { id: 'course.part.generation' }), lessons: ['decoding'] },
  { id: 'conclusions', title: () => msg('Conclusions', { id: 'course.part.conclusions' }), lessons: ['recap'] },
];

/** The lesson the course starts with (`courseLessons()[0]`): the first one a part names. */
export function courseStart(): string {
  return PARTS.flatMap((p) => p.lessons).find((id) => lessonEntry(id)) ?? CATALOGUE[0].id;
}
