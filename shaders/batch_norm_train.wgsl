// batch_norm_train.wgsl — BatchNorm in train mode, statistics over all R rows of each
// feature i (the B·T positions of the batch, pads included):
//   μ_i = mean_r x[r, i],  σ²_i = mean_r (x[r, i] − μ_i)²  (biased),
//   rstd_i = 1 / √(σ²_i + 1e-5),  y[r, i] = (x[r, i] − μ_i) · rstd_i · γ_i + β_i,
// and, with HAS_UPDATE, the running statistics (momentum 0.1, unbiased variance):
//   running_mean_i ← (1 − 0.1) · running_mean_i + 0.1 · μ_i,
//   running_var_i  ← (1 − 0.1) · running_var_i  + 0.1 · σ²_i · R / (R − 1).
//
// Mirrors `model::norm::batchnorm_train_forward` and `batchnorm_running_update`. The CPU
// accumulates the statistics in f64; WGSL has no f64, so here they are f32 sums (the mean,
// a correction of it, then the squared deviations from it, as the CPU does).
//
// Bindings:
//   0 p      uniform Params (rows R, width C, and the update's factors computed on the
//            host exactly as the CPU computes them: 1 − momentum, momentum, R / (R − 1))
//   1 x      (R, C) f32
//   2 gamma  (C) f32 — `normN.weight`
//   3 beta   (C) f32 — `normN.bias`
//   4 y      (R, C) f32, written (a different buffer from x)
//   5 stats  (3, C) f32, written: μ, σ² (biased), rstd — what the backward pass and the
//            running update read
//   6 running_mean (C) f32, updated in place when HAS_UPDATE
//   7 running_var  (C) f32, updated in place when HAS_UPDATE
//
// Pipeline-creation constant: HAS_UPDATE.
//
// Dispatch: one workgroup of 64 threads per feature, features on a 2-D grid of workgroups
// (i = wg.x + wg.y · num_workgroups.x). Thread l handles rows l, l + 64, …; the two sums
// are tree reductions in workgroup memory (64 · 4 bytes).

struct Params {
    rows: u32,
    c: u32,
    keep: f32,      // 1 − momentum
    momentum: f32,
    unbias: f32,    // R / (R − 1)
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

const WG: u32 = 64u;
const EPS: f32 = 1e-5;

override HAS_UPDATE: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(3) var<storage, read> beta: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<storage, read_write> stats: array<f32>;
@group(0) @binding(6) var<storage, read_write> running_mean: array<f32>;
@group(0) @binding(7) var<storage, read_write> running_var: array<f32>;

var<workgroup> red: array<f32, WG>;

// Tree reduction of every thread's `part`; every thread gets the total.
fn sum_all(l: u32, part: f32) -> f32 {
    red[l] = part;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = red[l] + red[l + s];
        }
        workgroupBarrier();
    }
    let total = red[0];
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    // Depends on the workgroup only: a uniform early return, barriers stay legal.
    let i = wg.x + wg.y * nwg.x;
    if (i >= p.c) {
        return;
    }
    let l = lid.x;
    let n = f32(p.rows);

    var part = 0.0;
    for (var r = l; r < p.rows; r = r + WG) {
        part = part + x[r * p.c + i];
    }
    // The mean as two f32 parts, hi + lo: hi the f32 sum's mean, lo the mean of the
    // deviations from it. The CPU takes the deviations x − μ from its f64 mean; here they
    // are (x − hi) − lo, where x − hi is exact for rows near the mean, so each deviation
    // is rounded about once, as the CPU's is. A deviation from a rounded f32 mean would
    // carry that rounding (ulp(μ), large against σ when a feature's batch variance is
    // small) into every output, and rstd would magnify it. Σ (x − μ) over the rows, which
    // the backward's dx relies on being 0, is then as small in f32 as on the CPU.
    let hi = sum_all(l, part) / n;
    part = 0.0;
    for (var r = l; r < p.rows; r = r + WG) {
        part = part + (x[r * p.c + i] - hi);
    }
    let lo = sum_all(l, part) / n;
    let mean = hi + lo;

    part = 0.0;
    for (var r = l; r < p.rows; r = r + WG) {
        let dev = (x[r * p.c + i] - hi) - lo;
        part = part + dev * dev;
    }
    let var_b = sum_all(l, part) / n;
    let rstd = 1.0 / sqrt(var_b + EPS);

    for (var r = l; r < p.rows; r = r + WG) {
        let e = r * p.c + i;
        y[e] = ((x[e] - hi) - lo) * rstd * gamma[i] + beta[i];
    }
    if (l == 0u) {
        stats[i] = mean;
        stats[p.c + i] = var_b;
        stats[2u * p.c + i] = rstd;
        if (HAS_UPDATE) {
            running_mean[i] = p.keep * running_mean[i] + p.momentum * mean;
            running_var[i] = p.keep * running_var[i] + p.momentum * var_b * p.unbias;
        }
    }
}
