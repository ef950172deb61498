// attention_values_backward.wgsl — the backward of the attention-weighted sum of the
// values. The forward (attention_values.wgsl, with dropout on the probabilities) is
//   z[b, t, h·D + d] = Σ_j p̃_tj · (v[b, j, h·D + d] + rel_v[r_tj, d]),
//   p̃ = p · m (m the dropout multipliers, or 1), r_tj = clip(j − i, −K, K) + K, i = pos0 + t,
// so, from dz (B·T, C), the kernel computes one of three gradients (the OUTPUT constant):
//   OUTPUT 0  dp[b, h, t, j] = m_tj · (dz_t · v_j + dz_t · rel_v[r_tj])   (B, H, T, S), WRITTEN;
//             0 where the key was masked (scores == MASKED) or the head is ablated
//   OUTPUT 1  dv[b, j, h·D + d] += Σ_t p̃_tj · dz[b, t, h·D + d]            (B·S) rows, ADDED
//   OUTPUT 2  drel_v[r, d] += Σ_{b, h, t, j : r_tj = r} p̃_tj · dz[b, t, h·D + d]
//                                                                         (2K+1, D), ADDED
// An ablated head's z was zero whatever its probabilities: nothing flows back through it.
//
// Mirrors the weighted-sum part of `train::backward::attention::attention_backward`
// (`dp̃_j = dz_i · v_j (+ dz_i · rel_v[r])`, `dv_j += p̃_ij · dz_i`,
// `drel_v[r] += p̃_ij · dz_i`, `dp = dp̃ · m`).
//
// llvmpipe ends an invocation's loops after 65 535 iterations in all (docs/gpu-training.md),
// so the launch function splits the shared tables' sums over sequences into dispatches of
// at most 32 768 iterations per thread (b0 .. b_end), each adding to the last.
//
// Every output element is summed by one thread in a fixed order (no atomics), so the
// relative table's gradient, shared by every head and query, is deterministic.
//
// Bindings (offsets and strides in elements):
//   0 p       uniform Params
//   1 dz      gradient rows of z: row b·T + t at (b·T + t)·dz_stride + dz_col, head h at + h·D
//   2 probs   (B, H, T, S) f32 — the forward's probabilities, before dropout
//   3 drop    (B, H, T, S) f32 — dropout multipliers (0 or 1/(1 − p)); read only when HAS_DROP
//   4 v       value rows: row b·S + j at (b·S + j)·v_stride + v_col, head h at + h·D
//   5 rel_v   (2K+1, D) f32 — read only when HAS_REL
//   6 scores  (B, H, T, S) f32 — the forward's scores, MASKED where a key was hidden
//   7 ablate  (H) u32 — 1 for a head whose output was zeroed
//   8 out     OUTPUT 0: (B, H, T, S); OUTPUT 1: rows b·S + j at (b·S + j)·out_stride + out_col;
//             OUTPUT 2: (2K+1, D)
//
// Pipeline-creation constants: OUTPUT (0, 1, 2 above), HAS_DROP, HAS_REL.
//
// −∞: a masked score is the sentinel MASKED = −f32::MAX (see attention_scores.wgsl); the
// kernel compares against it exactly.
//
// Dispatch: 64 threads per workgroup, one thread per output element, 2-D grid:
// e = gid.x + gid.y · (64 · num_workgroups.x). OUTPUT 0 walks D, OUTPUT 1 walks T,
// OUTPUT 2 walks B · H · T and the keys at distance r of each query.

struct Params {
    batch: u32,
    n_heads: u32,
    t_len: u32,
    s_len: u32,
    d_head: u32,
    dz_stride: u32,
    dz_col: u32,
    v_stride: u32,
    v_col: u32,
    out_stride: u32,
    out_col: u32,
    pos0: u32,
    rel_max: u32,
    b0: u32,        // OUTPUT 2: the sequences b0 .. b_end this dispatch sums over
    b_end: u32,
    _pad0: u32,
}

override OUTPUT: u32 = 0u;
override HAS_DROP: bool = false;
override HAS_REL: bool = false;

// Written out exactly: Chrome's WGSL compiler rejects the rounded -3.4028235e38 as
// beyond the f32 range.
const MASKED: f32 = -3.40282346638528859811704183484516925440e+38;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dz: array<f32>;
@group(0) @binding(2) var<storage, read> probs: array<f32>;
@group(0) @binding(3) var<storage, read> drop: array<f32>;
@group(0) @binding(4) var<storage, read> v: array<f32>;
@group(0) @binding(5) var<storage, read> rel_v: array<f32>;
@group(0) @binding(6) var<storage, read> scores: array<f32>;
@group(0) @binding(7) var<storage, read> ablate: array<u32>;
@group(0) @binding(8) var<storage, read_write> out: array<f32>;

// Row of the relative tables for the query at absolute position i and key j.
fn rel_row(i: u32, j: u32) -> u32 {
    let dist = clamp(i32(j) - i32(i), -i32(p.rel_max), i32(p.rel_max));
    return u32(dist + i32(p.rel_max));
}

// p̃ = p · m of element e of (B, H, T, S).
fn p_tilde(e: u32) -> f32 {
    var pt = probs[e];
    if (HAS_DROP) {
        pt = pt * drop[e];
    }
    return pt;
}

fn dz_at(b: u32, t: u32, h: u32, d: u32) -> f32 {
    return dz[(b * p.t_len + t) * p.dz_stride + p.dz_col + h * p.d_head + d];
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    let c = p.n_heads * p.d_head;
    if (OUTPUT == 0u) {
        // dp of one (b, h, t, j)
        if (e >= p.batch * p.n_heads * p.t_len * p.s_len) {
            return;
        }
        let j = e % p.s_len;
        let t = (e / p.s_len) % p.t_len;
        let h = (e / (p.s_len * p.t_len)) % p.n_heads;
        let b = e / (p.s_len * p.t_len * p.n_heads);
        if (ablate[h] != 0u || scores[e] == MASKED) {
            out[e] = 0.0;
            return;
        }
        let vb = (b * p.s_len + j) * p.v_stride + p.v_col + h * p.d_head;
        let rb = rel_row(p.pos0 + t, j) * p.d_head;
        var acc = 0.0;
        var acc_rel = 0.0;
        for (var d = 0u; d < p.d_head; d = d + 1u) {
            let g = dz_at(b, t, h, d);
            acc = acc + g * v[vb + d];
            if (HAS_REL) {
                acc_rel = acc_rel + g * rel_v[rb + d];
            }
        }
        var dp = acc + acc_rel;
        if (HAS_DROP) {
            dp = dp * drop[e];
        }
        out[e] = dp;
    } else if (OUTPUT == 1u) {
        // dv of one (b, j, h·D + d)
        if (e >= p.batch * p.s_len * c) {
            return;
        }
        let col = e % c;
        let h = col / p.d_head;
        let d = col % p.d_head;
        let j = (e / c) % p.s_len;
        let b = e / (c * p.s_len);
        if (ablate[h] != 0u) {
            return;
        }
        var acc = 0.0;
        for (var t = 0u; t < p.t_len; t = t + 1u) {
            let pe = ((b * p.n_heads + h) * p.t_len + t) * p.s_len + j;
            acc = acc + p_tilde(pe) * dz_at(b, t, h, d);
        }
        let o = (b * p.s_len + j) * p.out_stride + p.out_col + col;
        out[o] = out[o] + acc;
    } else {
        // drel_v of one (r, d)
        if (e >= (2u * p.rel_max + 1u) * p.d_head) {
            return;
        }
        let r = e / p.d_head;
        let d = e % p.d_head;
        let kk = i32(p.rel_max);
        let off = i32(r) - kk; // j − i for the interior rows
        var acc = 0.0;
        for (var b = p.b0; b < p.b_end; b = b + 1u) {
            for (var h = 0u; h < p.n_heads; h = h + 1u) {
                if (ablate[h] != 0u) {
                    continue;
                }
                for (var t = 0u; t < p.t_len; t = t + 1u) {
                    let i = i32(p.pos0 + t);
                    // Keys whose clipped distance is r: one key inside the window, every
                    // key at or beyond ±K on the two edge rows (all keys when K = 0).
                    var lo = i + off;
                    var hi = i + off;
                    if (r == 0u) {
                        lo = 0;
                    }
                    if (r == 2u * p.rel_max) {
                        hi = i32(p.s_len) - 1;
                    }
                    lo = max(lo, 0);
                    hi = min(hi, i32(p.s_len) - 1);
                    let g = dz_at(b, t, h, d);
                    let prow = ((b * p.n_heads + h) * p.t_len + t) * p.s_len;
                    for (var j = lo; j <= hi; j = j + 1) {
                        acc = acc + p_tilde(prow + u32(j)) * g;
                    }
                }
            }
        }
        out[e] = out[e] + acc;
    }
}
