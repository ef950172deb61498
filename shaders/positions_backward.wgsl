// positions_backward.wgsl — the gradient of the learned position table: position
// pos0 + t collects the gradient of row t of every sequence,
//   dpos[pos0 + t, i] += Σ_b dx[b, t, i].
//
// Mirrors `train::backward::position::learned_positions_backward` (forward: x[b, t] +=
// pos_embed[pos0 + t], the HAS_POS step of embedding.wgsl).
//
// Bindings:
//   0 p     uniform Params (batch B, length T, width C, first position pos0)
//   1 dx    (B, T, C) f32, read — the gradient of the embedding's output
//   2 dpos  (max_len, C) f32, read and written (rows pos0 .. pos0 + T added to)
//
// Dispatch: 64 threads per workgroup, one thread per element (t, i) of the T rows,
// 2-D grid: element e = gid.x + gid.y · (64 · num_workgroups.x). Each thread adds its
// B values in increasing b, the CPU's order: no atomics, deterministic.

struct Params {
    batch: u32,
    t_len: u32,
    c: u32,
    pos0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dx: array<f32>;
@group(0) @binding(2) var<storage, read_write> dpos: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    let per_seq = p.t_len * p.c;
    if (e >= per_seq) {
        return;
    }
    let at = p.pos0 * p.c + e;
    var acc = dpos[at];
    for (var b = 0u; b < p.batch; b = b + 1u) {
        acc = acc + dx[b * per_seq + e];
    }
    dpos[at] = acc;
}
