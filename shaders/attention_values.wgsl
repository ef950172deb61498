// attention_values.wgsl — the attention-weighted sum of the values, heads merged:
//   z[b, t, h·D + d] = Σ_j probs[b, h, t, j] · (v[b, j, h·D + d] + rel_v[r_tj, d]),
//   r_tj = clip(j − i, −K, K) + K with i = pos0 + t (the rel_v term only when HAS_REL),
//   and z of an ablated head set to zero.
//
// Mirrors the weighted-sum and head-ablation steps of `model::attention`
// (docs/model.md, "Weighted sum", "Head ablation"). Writing head h at columns h·D.. is the
// head merge: z is (B·T, C), ready for the output projection.
//
// Bindings (offsets and strides in elements):
//   0 p       uniform Params
//   1 probs   (B, H, T, S) f32 — from softmax.wgsl (masked keys are exactly 0)
//   2 v       value rows: row b·R + j at (b·R + j)·v_stride + v_col, head h at + h·D, where
//             R ≥ S (`kv_rows`) is the rows each sequence occupies: S in a plain forward
//             pass, the capacity of the KV cache in a cached step
//   3 rel_v   (2K+1, D) f32 — read only when HAS_REL
//   4 ablate  (H) u32 — 1 for a head whose output is zeroed
//   5 z       (B·T, C) f32, written
//
// Dispatch: 64 threads per workgroup, one thread per element of z, 2-D grid:
// e = gid.x + gid.y · (64 · num_workgroups.x). Each thread walks the S keys.

struct Params {
    batch: u32,
    n_heads: u32,
    t_len: u32,
    s_len: u32,
    d_head: u32,
    v_stride: u32,
    v_col: u32,
    pos0: u32,
    rel_max: u32,
    kv_rows: u32,   // R: rows per sequence in v (≥ S)
    _pad1: u32,
    _pad2: u32,
}

override HAS_REL: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> probs: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read> rel_v: array<f32>;
@group(0) @binding(4) var<storage, read> ablate: array<u32>;
@group(0) @binding(5) var<storage, read_write> z: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let c = p.n_heads * p.d_head;
    let e = gid.x + gid.y * (nwg.x * 64u);
    if (e >= p.batch * p.t_len * c) {
        return;
    }
    let col = e % c;
    let h = col / p.d_head;
    let d = col % p.d_head;
    let bt = e / c;          // row b·T + t
    let t = bt % p.t_len;
    let b = bt / p.t_len;
    if (ablate[h] != 0u) {
        z[e] = 0.0;
        return;
    }
    let i = p.pos0 + t;
    let prow = ((b * p.n_heads + h) * p.t_len + t) * p.s_len;
    var acc = 0.0;
    for (var j = 0u; j < p.s_len; j = j + 1u) {
        var vd = v[(b * p.kv_rows + j) * p.v_stride + p.v_col + h * p.d_head + d];
        if (HAS_REL) {
            let dist = clamp(i32(j) - i32(i), -i32(p.rel_max), i32(p.rel_max));
            vd = vd + rel_v[u32(dist + i32(p.rel_max)) * p.d_head + d];
        }
        acc = acc + probs[prow + j] * vd;
    }
    z[e] = acc;
}
