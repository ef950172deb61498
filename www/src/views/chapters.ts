// The chapters of the page: the registered views (./registry.ts) grouped by the idea they
// explain, in the order a course meets them. The page opens on the overview (one picture of
// the running model); each chapter opens below it, with its own link (`#chapter=attention`),
// and each stage of the overview opens the chapter that explains it. `views=` in a link or
// on the element still shows exactly the views it names, without chapters (old links, embeds,
// lessons). `chapter=all` shows every view, in the registry's order.

import { msg } from '@lit/localize';

export interface Chapter {
  /** The name in `#chapter=<name>`: lower case and dashes. */
  readonly name: string;
  readonly title: () => string;
  /** What the chapter is about, in one line (the chapter bar's tooltip, the chapter's heading). */
  readonly blurb: () => string;
  /** Its views, by registered name, in the order they are drawn. */
  readonly views: readonly string[];
}

export const CHAPTERS: readonly Chapter[] = [
  {
    name: 'input',
    title: () => msg('Input & tokens', { id: 'chapter.input.title' }),
    blurb: () => msg('The model, the switches, the text and the tokens it becomes.', { id: 'chapter.input.blurb' }),
    views: ['controls', 'backend', 'input', 'tokenizer', 'characters'],
  },
  {
    name: 'attention',
    title: () => msg('Attention', { id: 'chapter.attention.title' }),
    blurb: () => msg('Who looks at whom: the maps, one score taken apart, saturation, why √d_k, and the masks.', { id: 'chapter.attention.blurb' }),
    views: ['attention', 'saturation', 'sqrt-dk', 'masks'],
  },
  {
    name: 'positions',
    title: () => msg('Positions', { id: 'chapter.positions.title' }),
    blurb: () => msg('How the model knows the order: the encodings, their size, order-blindness and longer inputs.', { id: 'chapter.positions.blurb' }),
    views: ['positions', 'embedding-scale', 'order', 'extrapolation'],
  },
  {
    name: 'blocks',
    title: () => msg('Blocks', { id: 'chapter.blocks.title' }),
    blurb: () => msg('One block taken apart: its diagram, the FFN, the norms, the residual stream and dropout.', { id: 'chapter.blocks.blurb' }),
    views: ['architecture', 'ffn', 'norms', 'hidden', 'no-leak', 'dropout', 'weights'],
  },
  {
    name: 'output',
    title: () => msg('Output & decoding', { id: 'chapter.output.title' }),
    blurb: () => msg('From the last position to the next token: the distribution, sampling, beams, the KV cache.', { id: 'chapter.output.blurb' }),
    views: ['output', 'generation', 'beams', 'parallel'],
  },
  {
    name: 'cost',
    title: () => msg('Cost', { id: 'chapter.cost.title' }),
    blurb: () => msg('What the model costs: parameters and FLOPs per part, the learning-rate schedule, and where the time of a step goes on this device.', { id: 'chapter.cost.blurb' }),
    views: ['cost', 'schedule', 'time'],
  },
  {
    name: 'lab',
    title: () => msg('Lab', { id: 'chapter.lab.title' }),
    blurb: () => msg('Train a variant yourself and compare the runs.', { id: 'chapter.lab.blurb' }),
    views: ['lab'],
  },
];

/** Every chapter's name, in order (`all` is not one of them: it means every view). */
export const CHAPTER_NAMES: readonly string[] = CHAPTERS.map((c) => c.name);

/** The chapter of this name. */
export function chapterNamed(name: string): Chapter | undefined {
  return CHAPTERS.find((c) => c.name === name);
}

/** The chapter that holds a view (the first, if several do). */
export function chapterOf(view: string): Chapter | undefined {
  return CHAPTERS.find((c) => c.views.includes(view));
}
