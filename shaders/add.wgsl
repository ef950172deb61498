// add.wgsl — the residual connection, element by element, in place: x = x + y.
//
// Mirrors the residual sums of `Model::forward` (`x + sublayer(x)`).
//
// Bindings:
//   0 p  uniform Params (n: number of elements)
//   1 y  (N) f32, read                 — the sublayer's output (B·T, C)
//   2 x  (N) f32, read and written     — the residual stream (B·T, C), updated in place
//
// Dispatch: 64 threads per workgroup, one thread per element, 2-D grid of workgroups:
// element i = gid.x + gid.y · (64 · num_workgroups.x). Threads past the end do nothing.

struct Params {
    n: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = gid.x + gid.y * (nwg.x * 64u);
    if (i >= p.n) {
        return;
    }
    x[i] = x[i] + y[i];
}
