// batch_norm.wgsl — BatchNorm in eval mode, element by element:
//   y[r, i] = (x[r, i] − running_mean[i]) / √(running_var[i] + 1e-5) · γ[i] + β[i].
//
// Mirrors `model::norm::batchnorm_eval_forward`. Eval mode uses the stored running
// statistics, so each position is normalised on its own (train mode, with statistics over
// the batch, is batch_norm_train.wgsl).
//
// Bindings:
//   0 p     uniform Params (rows R, width C)
//   1 x     (R, C) f32, read      — e.g. the residual stream (B·T, C)
//   2 gamma (C) f32               — `normN.weight`
//   3 beta  (C) f32               — `normN.bias`
//   4 mean  (C) f32               — `normN.running_mean`
//   5 var   (C) f32               — `normN.running_var`
//   6 y     (R, C) f32, written (a different buffer from x)
//
// Dispatch: 64 threads per workgroup, one thread per element of (R, C), 2-D grid of
// workgroups: element e = gid.x + gid.y · (64 · num_workgroups.x).

struct Params {
    rows: u32,
    c: u32,
    _pad0: u32,
    _pad1: u32,
}

const EPS: f32 = 1e-5;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(3) var<storage, read> beta: array<f32>;
@group(0) @binding(4) var<storage, read> running_mean: array<f32>;
@group(0) @binding(5) var<storage, read> running_var: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    if (e >= p.rows * p.c) {
        return;
    }
    let i = e % p.c;
    let s = 1.0 / sqrt(running_var[i] + EPS);
    y[e] = (x[e] - running_mean[i]) * s * gamma[i] + beta[i];
}
