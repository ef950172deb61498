// rope_backward.wgsl — the backward of rotary position embedding, in place on the
// gradients of q and k: the forward rotates each pair by the angle a = pos · θ_p,
// θ_p = 10000^(−2p/D); a rotation's transpose rotates by −a:
//   (g₂ₚ, g₂ₚ₊₁) → (g₂ₚ cos a + g₂ₚ₊₁ sin a,  −g₂ₚ sin a + g₂ₚ₊₁ cos a).
//
// Mirrors `train::backward::position::rope_backward`, undoing rope.wgsl.
//
// Bindings:
//   0 p     uniform Params
//   1 rot   (max_len, D/2, 2) f32 — the (cos a, sin a) table rope.wgsl reads
//           (`gpu::rope_table`)
//   2 dx    rows of width p.stride f32, read and written in place; the heads to rotate
//           back are p.n_heads blocks of D columns starting at column p.col.
//
// As in the forward, dx may be the fused (B·T, 3C) gradient of Q|K|V: one dispatch over
// its first 2H heads turns the gradients of the rotated q and k into those of the
// projections. Row r is position pos0 + r % T.
//
// Dispatch: 64 threads per workgroup, one thread per (row, head, pair), 2-D grid:
// index e = gid.x + gid.y · (64 · num_workgroups.x).

struct Params {
    rows: u32,     // B·T
    t_len: u32,    // T
    stride: u32,   // row stride of dx
    col: u32,      // first column of the first head
    n_heads: u32,  // heads to rotate back
    d_head: u32,   // D (even)
    pos0: u32,     // absolute position of row 0
    _pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> rot: array<f32>;
@group(0) @binding(2) var<storage, read_write> dx: array<f32>;

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
    let g0 = dx[i0];
    let g1 = dx[i0 + 1u];
    dx[i0] = g0 * cos_a + g1 * sin_a;
    dx[i0 + 1u] = -g0 * sin_a + g1 * cos_a;
}
