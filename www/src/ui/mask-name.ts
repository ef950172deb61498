// The name of the mask a self-attention site runs under, the same words in every view
// (the masks view, the settings, the architecture diagram, the no-leak view). The mask
// itself is the core's: `ForwardResult.masks` says which rule and which painted cells it
// applied; a view names what the core applied, never what a switch would suggest.

import { msg, str } from '@lit/localize';
import type { MaskEdit, MaskView } from '../engine/protocol';

/** The rule of a mask by name (`null`: no editor rule, the causal switch decides). */
export function ruleName(m: MaskView | MaskEdit | null): string {
  const r = m?.rule;
  if (!r) return msg('causal switch');
  switch (r.kind) {
    case 'none':
      return msg('no mask');
    case 'causal':
      return msg('causal');
    case 'prefix_lm':
      return msg(str`prefix-LM (prefix ${r.prefix})`);
    case 'sliding_window':
      return msg(str`sliding window (w = ${r.window})`);
  }
}

/** The rule and the painted cells, in words ("sliding window (w = 3) + 2 painted"). */
export function maskName(m: MaskView | MaskEdit): string {
  return m.cells.length ? `${ruleName(m)} + ${msg(str`${m.cells.length} painted`)}` : ruleName(m);
}

/** Does this mask hide every later key from every query (a causal rule, nothing painted visible)? */
export function hidesTheFuture(m: MaskView | MaskEdit): boolean {
  const r = m.rule;
  const ruleHides = r.kind === 'causal' || r.kind === 'sliding_window';
  return ruleHides && m.cells.every((c) => c.hidden || c.key <= c.query);
}
