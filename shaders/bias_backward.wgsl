// bias_backward.wgsl — the gradient of a bias: column sums of the output gradient,
//   db[n] += Σ_r dout[r, n].
//
// Mirrors the bias step of `train::backward::ffn::linear_backward`
// (forward: out[r] += bias  →  dbias += Σ_r dout[r]).
//
// Bindings:
//   0 p     uniform Params (rows R, width N, dout row stride and first column, db offset)
//   1 dout  (R rows of N, row stride p.stride, from column p.d_col) f32, read — a column
//           block of a wider buffer when the layer's output is one (the Q, K or V block of
//           a fused (N, 3C) projection)
//   2 db    (N) f32 from p.b_offset, read and written (added to)
//
// Dispatch: 64 threads per workgroup, one thread per column, 2-D grid:
// column n = gid.x + gid.y · (64 · num_workgroups.x). Each thread adds its column's R
// values in increasing r, the CPU's order, so there is no atomic and no race: the sum is
// deterministic.
//
// llvmpipe (Mesa's software Vulkan, which CI uses) ends any single shader loop after
// 65 535 iterations, its guard against endless shaders. So the launch function splits a
// long sum into several dispatches of at most 32 768 rows each ([r0, r1) in Params), run
// one after another: the order of the additions, and so the result, stays the CPU's.

struct Params {
    rows: u32,
    n: u32,
    stride: u32,
    b_offset: u32,
    d_col: u32,
    r0: u32,       // the rows this dispatch adds: r0 ≤ r < r1
    r1: u32,
    _pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;
@group(0) @binding(2) var<storage, read_write> db: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let col = gid.x + gid.y * (nwg.x * 64u);
    if (col >= p.n) {
        return;
    }
    var acc = db[p.b_offset + col];
    for (var r = p.r0; r < p.r1; r = r + 1u) {
        acc = acc + dout[r * p.stride + p.d_col + col];
    }
    db[p.b_offset + col] = acc;
}
