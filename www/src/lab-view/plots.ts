// The lab's plots: every shown run's curves overlaid (loss, held-out metric, learning rate
// used and planned, gradient norm, and per layer the residual stream and the gradient),
// each curve thinned to a few hundred points however long the run grows.

import { html } from 'lit';
import { msg, str } from '@lit/localize';
import type { RunRecord } from './host';
import { LABEL_FIELDS, differingFields, type LabelledSettings } from './labels';
import type { Settings } from './fields';
import { shade, type Theme } from './colors';
import type { Line } from './tp-lab-plot';
import { METRIC_WORDS } from './run-text';

/**
 * The most points one line of a plot keeps. A longer curve is cut into buckets of
 * consecutive steps, each keeping its first, lowest, highest and last point: spikes stay
 * visible, the last step is always drawn, and drawing (and the memory the plots hold)
 * stays the same however long a run grows — a plot is a few hundred pixels wide.
 */
export const MAX_LINE_POINTS = 1200;

/**
 * A curve of `n` rows as plot points [x(i), y(i)], thinned to at most MAX_LINE_POINTS.
 * Rows are read by index (a run's curves are columns, lab/points.ts), so drawing
 * allocates only the points it keeps.
 */
export function series(n: number, x: (i: number) => number, y: (i: number) => number | null): [number, number | null][] {
  if (n <= MAX_LINE_POINTS) return Array.from({ length: n }, (_, i) => [x(i), y(i)]);
  const buckets = Math.floor(MAX_LINE_POINTS / 4);
  const out: [number, number | null][] = [];
  for (let b = 0; b < buckets; b++) {
    const lo = Math.floor((b * n) / buckets);
    const hi = Math.floor(((b + 1) * n) / buckets);
    let iMin = lo;
    let iMax = lo;
    let vMin = Infinity;
    let vMax = -Infinity;
    for (let i = lo; i < hi; i++) {
      const v = y(i);
      if (v === null || !Number.isFinite(v)) continue;
      if (v < vMin) [vMin, iMin] = [v, i];
      if (v > vMax) [vMax, iMax] = [v, i];
    }
    for (const i of [...new Set([lo, iMin, iMax, hi - 1])].sort((a, c) => a - c)) out.push([x(i), y(i)]);
  }
  return out;
}

/** The Noam rate of step `step` (the core's `train::schedule::noam_lr`: steps count from 1). */
export function noamLr(step: number, dModel: number, warmup: number, factor: number): number {
  const s = Math.max(1, step);
  const w = Math.max(1, warmup);
  return factor * dModel ** -0.5 * Math.min(s ** -0.5, s * w ** -1.5);
}

/**
 * The steps of a run's cooldown when it takes `share` of its `steps`
 * (`train::schedule::cooldown_steps`): the nearest whole number, from the share as the
 * core stores it (an f32).
 */
export function cooldownSteps(share: number, steps: number): number {
  return Math.round(Math.fround(Math.min(Math.max(share, 0), 1)) * steps);
}

/**
 * The cooldown's share of the rate at `step` of a `steps`-step run whose last `cooldown`
 * steps fall in a straight line (`train::schedule::cooldown_scale`): 1 before them, then
 * (steps − step + 1) / cooldown.
 */
export function cooldownScale(step: number, steps: number, cooldown: number): number {
  if (!(cooldown > 0) || step <= steps - cooldown) return 1;
  return Math.min(Math.max(steps - step, 0) + 1, cooldown) / cooldown;
}

/** Every plot's lines: each run's curves in its colour, labelled by how its settings differ. */
function lines(runs: readonly RunRecord[], labels: string[], colors: string[], theme: Theme) {
  const bg = theme === 'dark' ? '#1d2026' : '#ffffff';
  const loss: Line[] = [];
  const metric: Line[] = [];
  const lr: Line[] = [];
  const grad: Line[] = [];
  const resid: Line[] = [];
  const layerGrad: Line[] = [];
  let metricName = '';
  runs.forEach((r, i) => {
    const log = r.log;
    const n = log.length;
    const step = (k: number) => log.step(k);
    const c = colors[i];
    const label = labels[i];
    loss.push({ label: msg(str`${label} · training`, { id: 'lab.plot.line-training' }), color: c, points: series(n, step, (k) => log.loss(k)) });
    const evals = log.evalRows();
    const ev = (k: number) => log.evalAt(evals[k])!;
    const evStep = (k: number) => log.step(evals[k]);
    loss.push({ label: msg(str`${label} · held-out`, { id: 'lab.plot.line-held-out' }), color: c, dash: [6, 4], points: series(evals.length, evStep, (k) => ev(k).loss) });
    metric.push({ label, color: c, points: series(evals.length, evStep, (k) => 100 * ev(k).metric) });
    if (evals.length) metricName = ev(evals.length - 1).metric_name;
    lr.push({ label: msg(str`${label} · used`, { id: 'lab.plot.line-used' }), color: c, points: series(n, step, (k) => log.lr(k)) });
    const s = r.settings as unknown as Settings;
    const sched = s.lr as { kind: string; factor?: number; warmup?: number; value?: number } | undefined;
    const steps = Number(s.steps ?? 0);
    if (sched && steps > 0) {
      const n = Math.min(steps, 240);
      const xs = Array.from({ length: n }, (_, k) => (n === 1 ? 1 : 1 + Math.round((k * (steps - 1)) / (n - 1))));
      // The cooldown's first step is where the line bends: drawn exactly, not between samples.
      const cooldown = cooldownSteps(Number(s.cooldown ?? 0), steps);
      if (cooldown > 0 && steps - cooldown >= 1) xs.push(steps - cooldown, steps - cooldown + 1);
      const base = (x: number) => (sched.kind === 'noam' ? noamLr(x, Number(s.d_model), Number(sched.warmup), Number(sched.factor)) : Number(sched.value));
      const plan = (x: number) => base(x) * cooldownScale(x, steps, cooldown);
      const at = [...new Set(xs)].sort((a, b) => a - b);
      lr.push({ label: msg(str`${label} · planned`, { id: 'lab.plot.line-planned' }), color: shade(c, bg, 0.45), dash: [3, 3], width: 1.2, points: at.map((x) => [x, plan(x)]) });
    }
    if (n) lr.push({ label: msg(str`${label} · now`, { id: 'lab.plot.line-now' }), color: c, dotsOnly: true, points: [[log.step(n - 1), log.lr(n - 1)]] });
    grad.push({ label, color: c, points: series(n, step, (k) => log.gradNorm(k)) });
    const at = n ? log.layersAt(n - 1) : { residual: 0, grad: 0 };
    const layers = at.residual;
    for (let l = 0; l < layers; l++) {
      const lc = layers === 1 ? c : shade(c, bg, 0.65 * (1 - l / (layers - 1)));
      resid.push({ label: `${label} L${l + 1}`, color: lc, points: series(n, step, (k) => log.residual(k, l)) });
    }
    const gl = at.grad;
    for (let l = 0; l < gl; l++) {
      const lc = gl === 1 ? c : shade(c, bg, 0.65 * (1 - l / (gl - 1)));
      layerGrad.push({ label: `${label} L${l + 1}`, color: lc, points: series(n, step, (k) => log.layerGrad(k, l)) });
    }
  });
  return { loss, metric, lr, grad, resid, layerGrad, metricName };
}

/** The six plots of the shown runs, captioned with what the runs share and how they differ. */
export function runPlots(runs: readonly RunRecord[], labels: string[], colors: string[], theme: Theme, themeKey: string) {
  const l = lines(runs, labels, colors, theme);
  // A picture's caption: the runs by name and difference, and the settings they share.
  const all = runs.map((r) => r.settings as unknown as LabelledSettings);
  const differ = new Set(differingFields(all));
  const shared = all.length ? LABEL_FIELDS.filter((f) => !differ.has(f.key)).map((f) => f.words(all[0])).filter((w) => w !== undefined) : [];
  const caption = {
    model: runs.length ? msg(str`lab runs ${runs.map((r, i) => `${r.name} (${labels[i]})`).join(msg(', '))}`, { id: 'lab.caption-runs' }) : msg('no runs', { id: 'lab.caption-none' }),
    settings: shared.join(', '),
  };
  const t = `${theme}:${themeKey}`;
  const metric = METRIC_WORDS[l.metricName] ?? (l.metricName || msg('metric'));
  const empty = msg('Train a run to see its curves here.');
  // Runs with steps but no per-layer curves took them on WebGPU, whose step reports the loss, the rate and the global norm only.
  const perLayerEmpty = runs.some((r) => r.log.length) ? msg('The per-layer norms are measured on the CPU: steps taken on WebGPU have none.') : empty;
  return html`<div class="plots">
    <tp-lab-plot data-plot="loss" heading=${msg('Loss: training (solid) and held-out (dashed)')} .yLabel=${msg('cross-entropy, nats')} .lines=${l.loss} .themeKey=${t} .caption=${caption} .empty=${empty}></tp-lab-plot>
    <tp-lab-plot data-plot="metric" heading=${msg(str`Held-out ${metric}`)} .yLabel=${msg('percent')} .lines=${l.metric} .themeKey=${t} .caption=${caption} .empty=${empty}></tp-lab-plot>
    <tp-lab-plot data-plot="lr" heading=${msg('Learning rate: used (solid), planned (dotted), now (dot)')} .yLabel=${msg('learning rate')} .lines=${l.lr} .themeKey=${t} .caption=${caption} .empty=${empty}></tp-lab-plot>
    <tp-lab-plot data-plot="grad" heading=${msg('Gradient norm before clipping (log scale)')} .yLabel=${'‖g‖₂'} .yLog=${true} .lines=${l.grad} .themeKey=${t} .caption=${caption} .empty=${empty}></tp-lab-plot>
    <tp-lab-plot data-plot="residual" heading=${msg('Residual stream after each layer (lighter: earlier layer)')} .yLabel=${msg('mean ‖x‖₂ per token')} .lines=${l.resid} .themeKey=${t} .caption=${caption} .empty=${perLayerEmpty}></tp-lab-plot>
    <tp-lab-plot data-plot="layer-grad" heading=${msg("Gradient of each layer's weights (log scale; lighter: earlier layer)")} .yLabel=${'‖g‖₂'} .yLog=${true} .lines=${l.layerGrad} .themeKey=${t} .caption=${caption} .empty=${perLayerEmpty}></tp-lab-plot>
  </div>`;
}
