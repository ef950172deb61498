// attention_scores.wgsl — the score of every query against every key, per head, with the
// position biases and masks applied:
//   scaled_dot / dot:  s = (q_i · k'_j) / divisor        (divisor = √D, or 1)
//   additive:          s = Σ_d v_h[d] · tanh(q_i[d] + k'_j[d])
//   with k'_j = k_j + rel_k[clip(j − i, −K, K) + K] for Shaw relative positions (HAS_REL),
//   then s += −m_h · |i − j| for ALiBi (HAS_ALIBI),
//   and s = −∞ where key j is masked for query i: hidden(i, j) or (padding and
//   key_tokens[b, j] == pad), where hidden(i, j) is the painted cell at (i, j) if there is
//   one (cells[i·N + j]: 1 hidden, 2 shown, 0 the rule decides), else the rule's:
//     none never | causal j > i | prefix-LM j > i and j ≥ P | sliding window j > i or i − j ≥ w.
//
// Mirrors the score step of `model::attention` (docs/model.md, "Attention") and the mask
// of `model::mask::MaskSpec::hides`. Query i is at
// absolute position pos0 + t, key j at position j: a cached decoding step is this same
// kernel with T = 1, pos0 = the cache length and S = the keys in the cache.
//
// Each sequence's keys occupy R ≥ S rows (`kv_rows`) of the key and key-token buffers:
// R = S in a plain forward pass; in the KV cache R is the cache's capacity, of which the
// first S rows are filled.
//
// Bindings (offsets and strides in elements):
//   0 p          uniform Params
//   1 q          query rows: row b·T + t at (b·T + t)·q_stride + q_col, head h at + h·D
//   2 k          key rows:   row b·R + j at (b·R + j)·k_stride + k_col, head h at + h·D
//   3 key_tokens (B, R) u32 — the token behind each key, for the padding mask
//   4 rel_k      (2K+1, D) f32 — read only when HAS_REL
//   5 slopes     (H) f32 — ALiBi slopes m_h (`position::alibi_slopes`); only when HAS_ALIBI
//   6 add_v      (H, D) f32 — `additive_v`; read only when SCORE == 1
//   7 scores     (B, H, T, S) f32, written
//   8 cells      (N, N) u32 — painted cells by absolute (query, key) position
//                (`MaskSpec::cell_table`); read only for i, j < N = p.cell_n (0: none)
//
// Pipeline-creation constants: SCORE (0 = dot product, divided by p.divisor; 1 = additive),
// HAS_REL, HAS_ALIBI.
//
// −∞: WGSL has no infinity literal, and the WGSL spec lets implementations assume floats
// are finite (comparisons with ∞ may be compiled away). A masked score is therefore the
// sentinel MASKED = −f32::MAX ≈ −3.4028235e38, the most negative finite f32, which no
// real score can reach. softmax.wgsl tests for it exactly and never feeds it to exp();
// the host turns it back into −∞ when it reads scores for the trace.
//
// Dispatch: 64 threads per workgroup, one thread per (b, h, t, j) element of the output,
// 2-D grid: e = gid.x + gid.y · (64 · num_workgroups.x). Each thread walks the D
// dimensions of its head (D is small: 4–16 in the playground's models).

struct Params {
    batch: u32,     // B
    n_heads: u32,   // H
    t_len: u32,     // T: queries per sequence
    s_len: u32,     // S: keys per sequence
    d_head: u32,    // D
    q_stride: u32,
    q_col: u32,
    k_stride: u32,
    k_col: u32,
    pos0: u32,      // absolute position of query t = 0
    rule: u32,      // the mask rule: 0 none, 1 causal, 2 prefix-LM, 3 sliding window
    padding: u32,   // 1: mask keys whose token is `pad`
    pad_id: u32,
    rel_max: u32,   // K, the clipping distance of relative positions
    divisor: f32,   // √D for scaled_dot with scaling on, else 1 (a division, as the CPU)
    kv_rows: u32,   // R: rows per sequence in k and key_tokens (≥ S)
    rule_arg: u32,  // P of prefix-LM, w of the sliding window
    cell_n: u32,    // N: side of the painted-cell table (0: no painted cells)
    _pad0: u32,
    _pad1: u32,
}

override SCORE: u32 = 0u;
override HAS_REL: bool = false;
override HAS_ALIBI: bool = false;

// Written out exactly: Chrome's WGSL compiler rejects the rounded -3.4028235e38 as
// beyond the f32 range.
const MASKED: f32 = -3.40282346638528859811704183484516925440e+38;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> key_tokens: array<u32>;
@group(0) @binding(4) var<storage, read> rel_k: array<f32>;
@group(0) @binding(5) var<storage, read> slopes: array<f32>;
@group(0) @binding(6) var<storage, read> add_v: array<f32>;
@group(0) @binding(7) var<storage, read_write> scores: array<f32>;
@group(0) @binding(8) var<storage, read> cells: array<u32>;

// Whether the mask hides key j from the query at absolute position i (padding aside):
// `MaskSpec::hides`.
fn hidden(i: u32, j: u32) -> bool {
    if (i < p.cell_n && j < p.cell_n) {
        let painted = cells[i * p.cell_n + j];
        if (painted != 0u) {
            return painted == 1u;
        }
    }
    switch p.rule {
        case 1u: { return j > i; }
        case 2u: { return j > i && j >= p.rule_arg; }
        // j > i first: i − j would wrap around in u32 otherwise.
        case 3u: { return j > i || i - j >= p.rule_arg; }
        default: { return false; }
    }
}

// tanh that never overflows: tanh(z) = sign(z) · (1 − e^(−2|z|)) / (1 + e^(−2|z|)).
// Some implementations build WGSL's tanh from exp(2z) and return NaN (∞/∞) for |z| > 44.
fn safe_tanh(z: f32) -> f32 {
    let e = exp(-2.0 * abs(z));
    return sign(z) * (1.0 - e) / (1.0 + e);
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let e = gid.x + gid.y * (nwg.x * 64u);
    if (e >= p.batch * p.n_heads * p.t_len * p.s_len) {
        return;
    }
    let j = e % p.s_len;
    let t = (e / p.s_len) % p.t_len;
    let h = (e / (p.s_len * p.t_len)) % p.n_heads;
    let b = e / (p.s_len * p.t_len * p.n_heads);
    let i = p.pos0 + t; // absolute position of the query

    let masked = hidden(i, j)
        || (p.padding == 1u && key_tokens[b * p.kv_rows + j] == p.pad_id);
    if (masked) {
        scores[e] = MASKED;
        return;
    }

    let qb = (b * p.t_len + t) * p.q_stride + p.q_col + h * p.d_head;
    let kb = (b * p.kv_rows + j) * p.k_stride + p.k_col + h * p.d_head;
    // Row of the relative tables: clip(j − i, −K, K) + K.
    let dist = clamp(i32(j) - i32(i), -i32(p.rel_max), i32(p.rel_max));
    let rb = u32(dist + i32(p.rel_max)) * p.d_head;

    var s = 0.0;
    for (var d = 0u; d < p.d_head; d = d + 1u) {
        var kd = k[kb + d];
        if (HAS_REL) {
            kd = kd + rel_k[rb + d];
        }
        if (SCORE == 0u) {
            s = s + q[qb + d] * kd;
        } else {
            s = s + add_v[h * p.d_head + d] * safe_tanh(q[qb + d] + kd);
        }
    }
    if (SCORE == 0u) {
        s = s / p.divisor;
    }
    if (HAS_ALIBI) {
        // |i − j| as a float: positions stay far below 2^24, so the conversion is exact.
        let gap = f32(max(i, j) - min(i, j));
        s = s - slopes[h] * gap;
    }
    scores[e] = s;
}
