// The views whose code is not part of the first load: each chapter's views but those of the
// first screen (the overview, the controls, the input, the generation and the small views
// of the input chapter) come as one file per chapter (./chunks/), the tokenizer view and
// the lab as files of their own. The frame of such a view (../components/
// transformer-playground.ts) fetches its file when it first comes into sight
// (../ui/lazy.ts), and keeps the view's room (./reserve.ts) until it has drawn; the
// element waits undefined until then. `loadView(name)` fetches it at once (the scripting
// API's `el.loadView`, the projector, a chapter opened on a view). No numbers here.

/** A file of view code, fetched at most once (the same promise for every caller). */
export type ViewLoader = () => Promise<unknown>;

function once(load: () => Promise<unknown>): ViewLoader {
  let p: Promise<unknown> | null = null;
  return () => {
    // A failed fetch (a network gone for a moment) is tried again by the next caller.
    p ??= load().catch((e: unknown) => {
      p = null;
      throw e;
    });
    return p;
  };
}

const ATTENTION = once(() => import('./chunks/attention'));
const POSITIONS = once(() => import('./chunks/positions'));
const BLOCKS = once(() => import('./chunks/blocks'));
const OUTPUT = once(() => import('./chunks/output'));
const COST = once(() => import('./chunks/cost'));

/** Each view fetched when first seen, and the file that defines its element. */
export const VIEW_LOADERS: Readonly<Record<string, ViewLoader>> = {
  tokenizer: once(() => import('../components/tp-tokenizer')),
  attention: ATTENTION,
  saturation: ATTENTION,
  'sqrt-dk': ATTENTION,
  masks: ATTENTION,
  positions: POSITIONS,
  'embedding-scale': POSITIONS,
  order: POSITIONS,
  extrapolation: POSITIONS,
  architecture: BLOCKS,
  ffn: BLOCKS,
  norms: BLOCKS,
  hidden: BLOCKS,
  'no-leak': BLOCKS,
  dropout: BLOCKS,
  weights: BLOCKS,
  output: OUTPUT,
  beams: OUTPUT,
  parallel: OUTPUT,
  cost: COST,
  schedule: COST,
  time: COST,
  // It brings uPlot with it.
  lab: once(() => import('../components/tp-lab')),
};

/** The loader of a view fetched when first seen (undefined: its code is in the first load). */
export function loaderOf(view: string): ViewLoader | undefined {
  return VIEW_LOADERS[view];
}

/** What `loadViewIn` needs of the playground. */
export interface ViewHost {
  readonly renderRoot: ParentNode;
  requestUpdate(): void;
  readonly updateComplete: Promise<unknown>;
}

/**
 * Fetch the code of the view `name` drawn by `tag` now, if it is not in the first load, and
 * settle once the playground `host` has drawn it (its element, where shown, included).
 */
export async function loadViewIn(host: ViewHost, name: string, tag: string): Promise<void> {
  const load = loaderOf(name);
  if (!load) return;
  await load();
  await customElements.whenDefined(tag);
  host.requestUpdate();
  await host.updateComplete;
  const el = host.renderRoot.querySelector<HTMLElement & { updateComplete?: Promise<unknown> }>(`.view[data-view="${name}"] > ${tag}`);
  await el?.updateComplete;
}

/**
 * The views shown in `root` whose code is fetched when seen and whose frame is within a
 * screen of the viewport now (../ui/lazy.ts fetches theirs already).
 */
export function lazyInSight(root: ParentNode): string[] {
  const names: string[] = [];
  for (const f of root.querySelectorAll<HTMLElement>('.view[data-view]')) {
    const name = f.dataset.view ?? '';
    if (!loaderOf(name)) continue;
    const r = f.getBoundingClientRect();
    if (r.bottom >= -innerHeight && r.top <= 2 * innerHeight && r.right >= 0 && r.left <= innerWidth) names.push(name);
  }
  return names;
}
