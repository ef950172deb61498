// A run's curves as CSV: one row per step, the per-layer norms as numbered columns.

import type { RunRecord } from './types';

export function runCsv(r: RunRecord): string {
  const log = r.log;
  let layers = 0;
  for (let i = 0; i < log.length; i++) {
    const a = log.layersAt(i);
    layers = Math.max(layers, a.residual, a.grad);
  }
  const head = ['step', 'loss', 'lr', 'grad_norm', 'elapsed_ms', 'eval_loss', 'eval_metric', 'eval_metric_name'];
  for (let l = 0; l < layers; l++) head.push(`residual_norm_${l}`);
  for (let l = 0; l < layers; l++) head.push(`grad_norm_${l}`);
  const rows = [head.join(',')];
  const num = (x: number | null | undefined) => (x === null || x === undefined ? '' : String(x));
  for (let i = 0; i < log.length; i++) {
    const p = log.at(i);
    const row = [
      num(p.step),
      num(p.loss),
      num(p.lr),
      num(p.grad_norm),
      num(Math.round(p.elapsed_ms * 1000) / 1000),
      num(p.eval?.loss),
      num(p.eval?.metric),
      p.eval ? p.eval.metric_name : '',
    ];
    for (let l = 0; l < layers; l++) row.push(num(p.residual_norms[l]));
    for (let l = 0; l < layers; l++) row.push(num(p.grad_norms[l]));
    rows.push(row.join(','));
  }
  return rows.join('\n') + '\n';
}
