// What the overview draws, read off the core's layer plan (`LayerPlan`, crate/src/model/plan.rs)
// and the latest forward pass, with no DOM in it: the rows of stages (one row per stack of
// the model), each stage's kind, the chapter and view that explain it, and the numbers of
// its small picture, taken from the engine's tensors as they came (never computed here).

import type { AttnSite, AttnTrace, FfnTrace, ForwardResult, LayerPlan, ModelInfo, NormKind, StackPlan, SublayerPlan } from '../../engine/protocol';

/** Every kind of stage the overview draws. */
export type StageKind =
  | 'tokens'
  | 'embedding'
  | 'self_attention'
  | 'cross_attention'
  | 'ffn'
  | 'norm'
  | 'add'
  | 'final_norm'
  | 'memory'
  | 'logits'
  | 'next'
  | 'classes'
  | 'tags';

/** Where a stage leads: the chapter that explains it, and the view of that chapter to scroll to. */
export interface Target {
  chapter: string;
  view: string;
}

/** The chapter and view that explain each kind of stage. */
export const TARGETS: Record<StageKind, Target> = {
  tokens: { chapter: 'input', view: 'input' },
  embedding: { chapter: 'positions', view: 'embedding-scale' },
  self_attention: { chapter: 'attention', view: 'attention' },
  cross_attention: { chapter: 'attention', view: 'attention' },
  ffn: { chapter: 'blocks', view: 'ffn' },
  norm: { chapter: 'blocks', view: 'norms' },
  add: { chapter: 'blocks', view: 'hidden' },
  final_norm: { chapter: 'blocks', view: 'norms' },
  memory: { chapter: 'blocks', view: 'architecture' },
  logits: { chapter: 'output', view: 'output' },
  next: { chapter: 'output', view: 'generation' },
  classes: { chapter: 'output', view: 'output' },
  tags: { chapter: 'output', view: 'output' },
};

/** One step of a block, in the order it runs: a norm before or after, the sublayer, the residual add. */
export interface BlockStep {
  kind: 'norm' | 'add' | 'self_attention' | 'cross_attention' | 'ffn';
  /** The sublayer this step belongs to (its index in the stack's `sublayers`). */
  sublayer: number;
  /** For a norm: LayerNorm or BatchNorm, and where it sits. */
  norm?: NormKind;
  placement?: 'before' | 'after';
  /** An "Add & Norm" step: the residual add followed by the norm (post-LN, BatchNorm). */
  adds?: boolean;
  /** The attention site of an attention step. */
  site?: AttnSite;
}

/**
 * The steps of one layer of a stack, exactly in the plan's order: for each sublayer, a
 * norm placed `before` comes first, then the sublayer, then the residual add; a norm
 * placed `after` follows the add and is drawn with it as one "Add & Norm" step.
 */
export function blockSteps(stack: StackPlan): BlockStep[] {
  const out: BlockStep[] = [];
  stack.sublayers.forEach((sp: SublayerPlan, i) => {
    const n = sp.norm;
    if (n && n.placement === 'before') out.push({ kind: 'norm', sublayer: i, norm: n.kind, placement: 'before' });
    out.push({ kind: sp.kind, sublayer: i, site: sp.site ?? undefined });
    if (n && n.placement === 'after') out.push({ kind: 'norm', sublayer: i, norm: n.kind, placement: 'after', adds: sp.residual });
    else if (sp.residual) out.push({ kind: 'add', sublayer: i });
  });
  return out;
}

/** What the model ends in: the next token (a decoder), class probabilities, or a token per position. */
export function headKind(plan: LayerPlan, info: ModelInfo): 'next' | 'classes' | 'tags' {
  if (plan.head === 'classifier' || info.num_classes > 0) return 'classes';
  return plan.arch === 'encoder_only' ? 'tags' : 'next';
}

/** Position encodings added to the embedding (the others act inside attention). */
export function addsPositions(pos: string): boolean {
  return pos === 'sinusoidal' || pos === 'learned';
}

/** Position encodings that act inside self-attention. */
export function positionsInAttention(pos: string): boolean {
  return pos === 'rope' || pos === 'alibi' || pos === 'relative';
}

/** The token ids a stack reads (row 0 of the batch): the source for an encoder of a translation. */
export function stackIds(stack: StackPlan, f: ForwardResult | null): number[] {
  if (!f) return [];
  return (stack.input === 'source' ? f.src_tokens[0] : f.tokens[0]) ?? [];
}

/** The number of real (not padding) positions at the start of a row. */
export function realLength(ids: number[], pad: number): number {
  let n = ids.length;
  while (n > 0 && ids[n - 1] === pad) n--;
  return n;
}

/** The attention trace of a site and layer, or null. */
export function traceOf(f: ForwardResult | null, site: AttnSite, layer: number): AttnTrace | null {
  return f?.attention.find((a) => a.site === site && a.layer === layer) ?? null;
}

/**
 * One head's probabilities of row 0 as a (T, S) matrix, read from the trace's
 * (B, H, T, S) tensor as the engine sent it; also the masked cells (score −∞).
 */
export function headMatrix(t: AttnTrace, head: number): { rows: number; cols: number; probs: Float32Array; masked: Uint8Array } {
  const [, H, T, S] = t.probs.shape;
  const off = (0 * H + head) * T * S;
  const probs = t.probs.data.subarray(off, off + T * S);
  const scores = t.scores.data.subarray(off, off + T * S);
  const masked = new Uint8Array(T * S);
  for (let i = 0; i < T * S; i++) masked[i] = scores[i] === Number.NEGATIVE_INFINITY ? 1 : 0;
  return { rows: T, cols: S, probs, masked };
}

/**
 * The residual stream's L2 norm at every position of row 0 after `layer` layers of a stack
 * (0: what enters the first layer, the embedding with its positions), from the engine's
 * `HiddenTrace` (L + 1, B, T); [] when the pass has none for this stack.
 */
export function residualNorms(f: ForwardResult | null, site: AttnSite, layer: number): number[] {
  const h = f?.hidden.find((x) => x.stack === site);
  if (!h) return [];
  const [L1, B, T] = h.norms.shape;
  if (layer < 0 || layer >= L1 || B < 1) return [];
  return Array.from(h.norms.data.subarray(layer * B * T, layer * B * T + T));
}

/** The `k` largest entries of a distribution, largest first (ties by id), as [id, p]. */
export function topOf(p: ArrayLike<number> | null, k: number): [number, number][] {
  if (!p) return [];
  const ids = Array.from({ length: p.length }, (_, i) => i);
  ids.sort((a, b) => p[b] - p[a] || a - b);
  return ids.slice(0, k).map((i) => [i, p[i]]);
}

/** The stacks of the plan with the layer each shows in full, clamped to the stack. */
export function shownLayer(stack: StackPlan, wanted: number | undefined): number {
  return Math.min(Math.max(0, wanted ?? 0), Math.max(0, stack.layers - 1));
}

/** The FFN trace of a stack's layer (the engine sends them when the overview asks), or null. */
export function ffnTraceOf(f: ForwardResult | null, stack: AttnSite, layer: number): FfnTrace | null {
  return f?.ffn.find((x) => x.stack === stack && x.layer === layer) ?? null;
}

/**
 * The FFN's hidden units of row 0 as a (T, F) matrix (positions down, units across), read
 * from the trace's (B, T, F) tensor as the engine sent it.
 */
export function ffnMatrix(t: FfnTrace): { rows: number; cols: number; values: Float32Array } {
  const [, T, F] = t.hidden.shape;
  return { rows: T, cols: F, values: t.hidden.data.subarray(0, T * F) };
}
