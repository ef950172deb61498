// rope.wgsl — rotary position embedding (Su et al. 2021), in place on q and k:
//   for each head and each pair p < D/2, with the angle a = pos · θ_p, θ_p = 10000^(−2p/D),
//   (x₂ₚ, x₂ₚ₊₁) → (x₂ₚ cos a − x₂ₚ₊₁ sin a,  x₂ₚ sin a + x₂ₚ₊₁ cos a).
//
// Mirrors `model::position::rope_forward`.
//
// Bindings:
//   0 p     uniform Params
//   1 rot   (max_len, D/2, 2) f32 — (cos a, sin a) per position and pair, computed once on
//           the CPU with `position::rope_angle` (f64, then rounded) and uploaded with the
//           weights: WGSL's cos/sin promise only 2^-11 absolute error, the table is exact.
//   2 x     rows of width p.stride f32, read and written in place; the heads to rotate
//           are p.n_heads blocks of D columns starting at column p.col.
//
// In the forward pass x is the fused (B·T, 3C) Q|K|V buffer and the kernel rotates its
// first 2H heads — the H query heads then the H key heads — in one dispatch, leaving V.
// Row r is position pos0 + r % T, so a cached decoding step (T = 1, pos0 = cache length)
// uses the same kernel.
//
// Dispatch: 64 threads per workgroup, one thread per (row, head, pair), 2-D grid:
// index e = gid.x + gid.y · (64 · num_workgroups.x).

struct Params {
    rows: u32,     // B·T
    t_len: u32,    // T
    stride: u32,   // row stride of x
    col: u32,      // first column of the first head
    n_heads: u32,  // heads to rotate
    d_head: u32,   // D (even)
    pos0: u32,     // absolute position of row 0
    _pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> rot: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let half = p.d_head / 2u;
    let e = gid.x + gid.y * (nwg.x * 64u);
    if (e >= p.rows * p.n_heads * half) {
        return;
    }
    let pair = e % half;
    let head = (e / half) % p.n_heads;
    let r = e / (half * p.n_heads);
    let pos = p.pos0 + r % p.t_len;
    let cs = pos * half + pair;
    let cos_a = rot[2u * cs];
    let sin_a = rot[2u * cs + 1u];
    let i0 = r * p.stride + p.col + head * p.d_head + 2u * pair;
    let x0 = x[i0];
    let x1 = x[i0 + 1u];
    x[i0] = x0 * cos_a - x1 * sin_a;
    x[i0 + 1u] = x0 * sin_a + x1 * cos_a;
}
