// layer_norm.wgsl — LayerNorm over the last dimension, one row per workgroup:
//   y[r] = (x[r] − μ_r) / √(σ²_r + 1e-5) · γ + β,  μ_r = mean(x[r]),  σ²_r = mean((x[r] − μ_r)²).
//
// Mirrors `model::norm::layernorm_forward` (σ² biased, ε = 1e-5 as PyTorch).
//
// Bindings:
//   0 p      uniform Params (rows R, width C)
//   1 x      (R, C) f32, read   — e.g. the residual stream (B·T, C)
//   2 gamma  (C) f32, read      — `normN.weight`
//   3 beta   (C) f32, read      — `normN.bias`
//   4 y      (R, C) f32, written (a different buffer from x)
//
// Dispatch: one workgroup of 64 threads per row, rows laid on a 2-D grid of workgroups
// (row = wg.x + wg.y · num_workgroups.x; at most 65 535 workgroups per dimension).
// Thread l handles columns l, l + 64, l + 128, … and the 64 partial sums are combined by a
// tree reduction in workgroup memory (64 · 4 bytes). The mean and the variance are two
// passes over the row, as in the CPU code, so a large mean does not cancel the variance.

struct Params {
    rows: u32,
    c: u32,
    _pad0: u32,
    _pad1: u32,
}

const WG: u32 = 64u;
const EPS: f32 = 1e-5;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(3) var<storage, read> beta: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

var<workgroup> red: array<f32, WG>;

// Sum of `red` into red[0]. Called by all threads of the workgroup (barriers inside).
fn reduce_sum(l: u32) {
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = red[l] + red[l + s];
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    // `row` depends on the workgroup only, so this early return is uniform across the
    // workgroup and the barriers below stay in uniform control flow.
    let row = wg.x + wg.y * nwg.x;
    if (row >= p.rows) {
        return;
    }
    let l = lid.x;
    let base = row * p.c;
    let n = f32(p.c);

    var part = 0.0;
    for (var i = l; i < p.c; i = i + WG) {
        part = part + x[base + i];
    }
    red[l] = part;
    reduce_sum(l);
    let mean = red[0] / n;
    // Everyone has read red[0] before it is overwritten.
    workgroupBarrier();

    part = 0.0;
    for (var i = l; i < p.c; i = i + WG) {
        let d = x[base + i] - mean;
        part = part + d * d;
    }
    red[l] = part;
    reduce_sum(l);
    let rstd = 1.0 / sqrt(red[0] / n + EPS);

    for (var i = l; i < p.c; i = i + WG) {
        y[base + i] = (x[base + i] - mean) * rstd * gamma[i] + beta[i];
    }
}
