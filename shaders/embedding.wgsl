// embedding.wgsl — token embedding, scaling and absolute positions in one pass:
//   x[b, t] = E[tokens[b, t]] · scale + PE[pos0 + t].
//
// Mirrors `model::embedding::embedding_forward` followed by
// `model::position::sinusoidal_forward` or `learned_positions_forward`.
//
// Bindings:
//   0 p       uniform Params
//   1 tokens  (B, T) u32      — token ids, checked to be < V before upload
//   2 table   (V, C) f32      — `embed.weight`
//   3 pos     (max_len, C) f32 — the position table; read only when HAS_POS
//   4 x       (B, T, C) f32, written
//
// HAS_POS (pipeline-creation constant) is false for the schemes that act inside
// attention (none, relative, RoPE, ALiBi). For `learned`, `pos` is `pos_embed.weight`;
// for `sinusoidal` it is the sin/cos table, computed once on the CPU with
// `position::sinusoidal_table` (in f64, then rounded) and uploaded with the weights.
// WGSL's sin/cos are only guaranteed to 2^-11 absolute error on [−π, π] and are unbounded
// outside it, which a real GPU may use; an uploaded table gives the CPU's exact numbers.
//
// Dispatch: 64 threads per workgroup, one thread per element of (B, T, C), 2-D grid:
// element e = gid.x + gid.y · (64 · num_workgroups.x).

struct Params {
    rows: u32,     // B·T
    t_len: u32,    // T: row r is position pos0 + r % T
    c: u32,
    pos0: u32,     // absolute position of the first row (non-zero for a cached step)
    scale: f32,    // √C when `scale_embeddings`, else 1
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

override HAS_POS: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;
@group(0) @binding(2) var<storage, read> table: array<f32>;
@group(0) @binding(3) var<storage, read> pos: array<f32>;
@group(0) @binding(4) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    if (e >= p.rows * p.c) {
        return;
    }
    let r = e / p.c;
    let i = e % p.c;
    var v = table[tokens[r] * p.c + i] * p.scale;
    if (HAS_POS) {
        let t = p.pos0 + r % p.t_len;
        v = v + pos[t * p.c + i];
    }
    x[e] = v;
}
