// dropout_backward.wgsl — the backward of inverted dropout, in place on the gradient:
//   dx[e] ← dx[e] · mask[e]   (the forward was x · mask with mask 0 or 1/(1 − p)).
//
// Mirrors the dropout lines of `train::backward` (`df = dy · mask`), undoing dropout.wgsl
// with the mask it wrote.
//
// Bindings:
//   0 p     uniform Params (N)
//   1 mask  (N) f32 — from dropout.wgsl
//   2 dx    (N) f32, multiplied in place
//
// Dispatch: 64 threads per workgroup, one thread per element, 2-D grid:
// e = gid.x + gid.y · (64 · num_workgroups.x).

struct Params {
    n: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> mask: array<f32>;
@group(0) @binding(2) var<storage, read_write> dx: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    if (e >= p.n) {
        return;
    }
    dx[e] = dx[e] * mask[e];
}
