// attention_scores_backward.wgsl — the backward of the attention scores. From
// ds (B, H, T, S), the gradient of the scores (softmax_backward.wgsl; 0 at masked keys),
// the kernel computes one of four gradients (the OUTPUT constant), each ADDED to `out`:
//   scaled_dot / dot (SCORE 0), s = α · q_i · k'_j (α = 1/√D or 1):
//     ∂s/∂q_i = α · k'_j,   ∂s/∂k'_j = α · q_i
//   additive (SCORE 1), s = Σ_d w_h[d] · tanh(q_i[d] + k'_j[d]), θ = tanh(q_i[d] + k'_j[d]):
//     ∂s/∂q_i[d] = ∂s/∂k'_j[d] = w_h[d] · (1 − θ²),   ∂s/∂w_h[d] = θ
//   with k'_j = k_j + rel_k[r_ij] (HAS_REL; r_ij = clip(j − i, −K, K) + K) or k_j:
//   OUTPUT 0  dq[b, t, h·D + d] += Σ_j ds_tj · ∂s/∂q                     (B·T) rows
//   OUTPUT 1  dk[b, j, h·D + d] += Σ_t ds_tj · ∂s/∂k'                    (B·S) rows
//   OUTPUT 2  drel_k[r, d]      += Σ_{b, h, t, j : r_tj = r} ds_tj · ∂s/∂k'   (2K+1, D)
//   OUTPUT 3  dw[h, d]          += Σ_{b, t, j} ds_tj · θ                 (H, D), additive only
// ALiBi adds a constant and the masks a constant −∞: neither has a gradient of its own;
// they act through ds (masked keys have ds = 0).
//
// Mirrors the score part of `train::backward::attention::attention_backward`
// (`dq_i += α·ds·k'_j`, `dk'_j = α·ds·q_i`; additive `g = ds·w·(1 − θ²)`, `dw += ds·θ`;
// `dk_j += dk'_j`, `drel_k[r] += dk'_j`), undoing attention_scores.wgsl.
//
// llvmpipe ends an invocation's loops after 65 535 iterations in all (docs/gpu-training.md),
// so the launch function splits the shared tables' sums over sequences into dispatches of
// at most 32 768 iterations per thread (b0 .. b_end), each adding to the last.
//
// Every output element is summed by one thread in a fixed order (no atomics): the
// relative table's gradient, shared by every head and query, is deterministic.
//
// Bindings (offsets and strides in elements):
//   0 p       uniform Params
//   1 ds      (B, H, T, S) f32 — gradient of the scores
//   2 q       query rows: row b·T + t at (b·T + t)·q_stride + q_col, head h at + h·D
//   3 k       key rows: row b·S + j at (b·S + j)·k_stride + k_col, head h at + h·D
//   4 rel_k   (2K+1, D) f32 — read only when HAS_REL
//   5 add_v   (H, D) f32 — the additive score's w; read only when SCORE == 1
//   6 out     OUTPUT 0: rows b·T + t, OUTPUT 1: rows b·S + j, both at
//             row·out_stride + out_col; OUTPUT 2: (2K+1, D); OUTPUT 3: (H, D)
//
// Pipeline-creation constants: OUTPUT (0–3 above), SCORE (0 dot product, 1 additive),
// HAS_REL.
//
// Dispatch: 64 threads per workgroup, one thread per output element, 2-D grid:
// e = gid.x + gid.y · (64 · num_workgroups.x). OUTPUT 0 walks the S keys, OUTPUT 1 the
// T queries, OUTPUT 2 the B · H · T queries and the keys at distance r of each, OUTPUT 3
// the B · T · S scores of its head.

struct Params {
    batch: u32,
    n_heads: u32,
    t_len: u32,
    s_len: u32,
    d_head: u32,
    q_stride: u32,
    q_col: u32,
    k_stride: u32,
    k_col: u32,
    out_stride: u32,
    out_col: u32,
    pos0: u32,
    rel_max: u32,
    alpha: f32,     // 1/√D for scaled_dot with scaling on, else 1 (a product, as the CPU)
    b0: u32,        // OUTPUT 2, 3: the sequences b0 .. b_end this dispatch sums over
    b_end: u32,
}

override OUTPUT: u32 = 0u;
override SCORE: u32 = 0u;
override HAS_REL: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ds: array<f32>;
@group(0) @binding(2) var<storage, read> q: array<f32>;
@group(0) @binding(3) var<storage, read> k: array<f32>;
@group(0) @binding(4) var<storage, read> rel_k: array<f32>;
@group(0) @binding(5) var<storage, read> add_v: array<f32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;

// tanh that never overflows (as in attention_scores.wgsl):
// tanh(z) = sign(z) · (1 − e^(−2|z|)) / (1 + e^(−2|z|)).
fn safe_tanh(z: f32) -> f32 {
    let e = exp(-2.0 * abs(z));
    return sign(z) * (1.0 - e) / (1.0 + e);
}

fn rel_row(i: u32, j: u32) -> u32 {
    let dist = clamp(i32(j) - i32(i), -i32(p.rel_max), i32(p.rel_max));
    return u32(dist + i32(p.rel_max));
}

fn q_at(b: u32, t: u32, h: u32, d: u32) -> f32 {
    return q[(b * p.t_len + t) * p.q_stride + p.q_col + h * p.d_head + d];
}

// k'_j[d] = k_j[d] (+ rel_k[r_tj, d]) for the query t.
fn kprime_at(b: u32, j: u32, t: u32, h: u32, d: u32) -> f32 {
    var kd = k[(b * p.s_len + j) * p.k_stride + p.k_col + h * p.d_head + d];
    if (HAS_REL) {
        kd = kd + rel_k[rel_row(p.pos0 + t, j) * p.d_head + d];
    }
    return kd;
}

fn ds_at(b: u32, h: u32, t: u32, j: u32) -> f32 {
    return ds[((b * p.n_heads + h) * p.t_len + t) * p.s_len + j];
}

// ds · ∂s/∂k'_j[d] of one score (also ds · ∂s/∂q_i[d] for additive scores).
fn dkprime(g: f32, qd: f32, kd: f32, h: u32, d: u32) -> f32 {
    if (SCORE == 0u) {
        return p.alpha * g * qd;
    }
    let th = safe_tanh(qd + kd);
    return g * add_v[h * p.d_head + d] * (1.0 - th * th);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    let c = p.n_heads * p.d_head;
    if (OUTPUT == 0u) {
        // dq of one (b, t, h·D + d)
        if (e >= p.batch * p.t_len * c) {
            return;
        }
        let col = e % c;
        let h = col / p.d_head;
        let d = col % p.d_head;
        let t = (e / c) % p.t_len;
        let b = e / (c * p.t_len);
        let qd = q_at(b, t, h, d);
        var acc = 0.0;
        for (var j = 0u; j < p.s_len; j = j + 1u) {
            let g = ds_at(b, h, t, j);
            if (g == 0.0) {
                continue; // masked key (or no gradient): adds nothing
            }
            let kd = kprime_at(b, j, t, h, d);
            if (SCORE == 0u) {
                acc = acc + p.alpha * g * kd;
            } else {
                acc = acc + dkprime(g, qd, kd, h, d);
            }
        }
        let o = (b * p.t_len + t) * p.out_stride + p.out_col + col;
        out[o] = out[o] + acc;
    } else if (OUTPUT == 1u) {
        // dk of one (b, j, h·D + d)
        if (e >= p.batch * p.s_len * c) {
            return;
        }
        let col = e % c;
        let h = col / p.d_head;
        let d = col % p.d_head;
        let j = (e / c) % p.s_len;
        let b = e / (c * p.s_len);
        var acc = 0.0;
        for (var t = 0u; t < p.t_len; t = t + 1u) {
            let g = ds_at(b, h, t, j);
            if (g == 0.0) {
                continue;
            }
            acc = acc + dkprime(g, q_at(b, t, h, d), kprime_at(b, j, t, h, d), h, d);
        }
        let o = (b * p.s_len + j) * p.out_stride + p.out_col + col;
        out[o] = out[o] + acc;
    } else if (OUTPUT == 2u) {
        // drel_k of one (r, d)
        if (e >= (2u * p.rel_max + 1u) * p.d_head) {
            return;
        }
        let r = e / p.d_head;
        let d = e % p.d_head;
        let off = i32(r) - i32(p.rel_max); // j − i for the interior rows
        var acc = 0.0;
        for (var b = p.b0; b < p.b_end; b = b + 1u) {
            for (var h = 0u; h < p.n_heads; h = h + 1u) {
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
                    let qd = q_at(b, t, h, d);
                    for (var j = lo; j <= hi; j = j + 1) {
                        let g = ds_at(b, h, t, u32(j));
                        if (g == 0.0) {
                            continue;
                        }
                        acc = acc + dkprime(g, qd, kprime_at(b, u32(j), t, h, d), h, d);
                    }
                }
            }
        }
        out[e] = out[e] + acc;
    } else {
        // dw of one (h, d), additive scores
        if (e >= c) {
            return;
        }
        let h = e / p.d_head;
        let d = e % p.d_head;
        var acc = 0.0;
        for (var b = p.b0; b < p.b_end; b = b + 1u) {
            for (var t = 0u; t < p.t_len; t = t + 1u) {
                let qd = q_at(b, t, h, d);
                for (var j = 0u; j < p.s_len; j = j + 1u) {
                    let g = ds_at(b, h, t, j);
                    if (g == 0.0) {
                        continue;
                    }
                    acc = acc + g * safe_tanh(qd + kprime_at(b, j, t, h, d));
                }
            }
        }
        out[e] = out[e] + acc;
    }
}
