// A run's curves, one row per step, kept as columns of numbers rather than one object per
// step: a long run adds 8 bytes per number to a typed array (outside the JS heap's object
// graph) instead of an object, two arrays and their boxed numbers (about 200 bytes per step
// measured in Chromium's heap snapshots), so 5,000 steps of a 2-layer run take
// (7 + 2·2) · 8 · 5,000 = 440 kB and the page's heap stays flat while it trains.
// Held-out evaluations are rare (every few hundred steps) and stay objects beside the columns.
//
// Layout: `cols` holds `length` rows of `stride` numbers,
//   [step, loss, lr, grad_norm, elapsed_ms, #residual_norms, #grad_norms,
//    residual_norms[0..layers], grad_norms[0..layers]],
// the two counts saying how many per-layer entries the step had (a diverged run's NaN is a
// value, not a gap); capacity doubles as rows arrive. Every number is an f64 (the core's
// f32 values convert exactly), so a point read back equals the point pushed.

import type { EvalPoint, TrainPoint } from '../engine/protocol';

const FIXED = 7;
const [STEP, LOSS, LR, GRAD, ELAPSED, NRES, NGRAD] = [0, 1, 2, 3, 4, 5, 6];

/** What IndexedDB keeps of a PointLog (a structured-cloneable object). */
export interface StoredPoints {
  length: number;
  layers: number;
  /** length · (7 + 2·layers) numbers, rows as above. */
  cols: Float64Array;
  /** The evaluations, by row. */
  evals: [number, EvalPoint][];
}

export class PointLog {
  private cols: Float64Array = new Float64Array(0);
  private n = 0;
  private layers = 0;
  /** Row → its held-out evaluation, in row order. */
  private evals = new Map<number, EvalPoint>();

  get length(): number {
    return this.n;
  }

  /** Bytes the columns take (their capacity, not only the rows used). */
  get bytes(): number {
    return this.cols.byteLength;
  }

  private get stride(): number {
    return FIXED + 2 * this.layers;
  }

  push(p: TrainPoint): void {
    const want = Math.max(p.residual_norms.length, p.grad_norms.length);
    if (want > this.layers) this.widen(want);
    const s = this.stride;
    if ((this.n + 1) * s > this.cols.length) {
      const grown = new Float64Array(Math.max(64 * s, 2 * this.cols.length));
      grown.set(this.cols.subarray(0, this.n * s));
      this.cols = grown;
    }
    const o = this.n * s;
    const c = this.cols;
    c[o + STEP] = p.step;
    c[o + LOSS] = p.loss;
    c[o + LR] = p.lr;
    c[o + GRAD] = p.grad_norm;
    c[o + ELAPSED] = p.elapsed_ms;
    c[o + NRES] = p.residual_norms.length;
    c[o + NGRAD] = p.grad_norms.length;
    for (let l = 0; l < this.layers; l++) {
      c[o + FIXED + l] = p.residual_norms[l] ?? 0;
      c[o + FIXED + this.layers + l] = p.grad_norms[l] ?? 0;
    }
    if (p.eval) this.evals.set(this.n, p.eval);
    this.n++;
  }

  /** Re-lay the rows out with room for `layers` per-layer entries (NaN where none). */
  private widen(layers: number) {
    const old = this.layers;
    const os = this.stride;
    const ns = FIXED + 2 * layers;
    const cols = new Float64Array(Math.max(64, 2 * this.n) * ns);
    for (let i = 0; i < this.n; i++) {
      const from = this.cols.subarray(i * os, i * os + os);
      cols.set(from.subarray(0, FIXED + old), i * ns);
      cols.set(from.subarray(FIXED + old), i * ns + FIXED + layers);
    }
    this.cols = cols;
    this.layers = layers;
  }

  step(i: number): number {
    return this.cols[i * this.stride + STEP];
  }
  loss(i: number): number {
    return this.cols[i * this.stride + LOSS];
  }
  lr(i: number): number {
    return this.cols[i * this.stride + LR];
  }
  gradNorm(i: number): number {
    return this.cols[i * this.stride + GRAD];
  }
  /** Layer l's residual-stream norm at row i, or null where that step had none. */
  residual(i: number, l: number): number | null {
    const o = i * this.stride;
    return l < this.cols[o + NRES] ? this.cols[o + FIXED + l] : null;
  }
  /** Layer l's gradient norm at row i, or null where that step had none. */
  layerGrad(i: number, l: number): number | null {
    const o = i * this.stride;
    return l < this.cols[o + NGRAD] ? this.cols[o + FIXED + this.layers + l] : null;
  }
  /** How many per-layer entries row i has (the plots draw one line each). */
  layersAt(i: number): { residual: number; grad: number } {
    const o = i * this.stride;
    return { residual: this.cols[o + NRES], grad: this.cols[o + NGRAD] };
  }
  /** Rows that carry an evaluation, in order. */
  evalRows(): number[] {
    return [...this.evals.keys()];
  }
  evalAt(i: number): EvalPoint | null {
    return this.evals.get(i) ?? null;
  }
  /** The latest evaluation, or null. */
  lastEval(): EvalPoint | null {
    let last: EvalPoint | null = null;
    for (const e of this.evals.values()) last = e;
    return last;
  }

  /** Row i as the core reported it. */
  at(i: number): TrainPoint {
    const o = i * this.stride;
    const c = this.cols;
    const { residual, grad } = this.layersAt(i);
    return {
      step: c[o + STEP],
      loss: c[o + LOSS],
      lr: c[o + LR],
      grad_norm: c[o + GRAD],
      elapsed_ms: c[o + ELAPSED],
      eval: this.evalAt(i),
      residual_norms: Array.from({ length: residual }, (_, l) => c[o + FIXED + l]),
      grad_norms: Array.from({ length: grad }, (_, l) => c[o + FIXED + this.layers + l]),
      // Measured every few steps for the health watch (its alarms keep what matters), not kept per row.
      update_ratios: [],
      attn_entropy: [],
    };
  }

  /** Every row as objects (a fresh array). */
  toArray(): TrainPoint[] {
    return Array.from({ length: this.n }, (_, i) => this.at(i));
  }

  /** Drop every row after the one of step `step`; returns how many were dropped. */
  truncateAfter(step: number): number {
    let keep = this.n;
    while (keep > 0 && this.step(keep - 1) > step) keep--;
    const dropped = this.n - keep;
    this.n = keep;
    for (const i of [...this.evals.keys()]) if (i >= keep) this.evals.delete(i);
    return dropped;
  }

  stored(): StoredPoints {
    return { length: this.n, layers: this.layers, cols: this.cols.slice(0, this.n * this.stride), evals: [...this.evals] };
  }

  static fromPoints(points: readonly TrainPoint[]): PointLog {
    const log = new PointLog();
    for (const p of points) log.push(p);
    return log;
  }

  /** A stored log back, or null if `v` is not one (an old or foreign entry). */
  static fromStored(v: unknown): PointLog | null {
    const s = v as StoredPoints;
    if (!s || typeof s !== 'object' || !(s.cols instanceof Float64Array) || !Array.isArray(s.evals)) return null;
    const { length, layers } = s;
    if (!Number.isInteger(length) || !Number.isInteger(layers) || length < 0 || layers < 0) return null;
    const stride = FIXED + 2 * layers;
    if (s.cols.length !== length * stride) return null;
    for (let i = 0; i < length; i++) {
      const [r, g] = [s.cols[i * stride + NRES], s.cols[i * stride + NGRAD]];
      if (!Number.isInteger(r) || !Number.isInteger(g) || r < 0 || g < 0 || r > layers || g > layers) return null;
    }
    const log = new PointLog();
    log.cols = s.cols;
    log.n = length;
    log.layers = layers;
    for (const [i, e] of s.evals) if (Number.isInteger(i) && i >= 0 && i < length && e && typeof e === 'object') log.evals.set(i, e);
    return log;
  }
}
