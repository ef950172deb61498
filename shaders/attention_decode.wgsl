// attention_decode.wgsl — attention of a single query row per sequence (a decoding step,
// T = 1) in one dispatch: the scores, their softmax and the weighted sum of the values,
// the work attention_scores.wgsl, softmax.wgsl and attention_values.wgsl do in three.
//   s_j = (q · k_j) / divisor  or  Σ_d v_h[d] · tanh(q[d] + k_j[d])     (SCORE 0 / 1)
//   s_j += −m_h · |i − j|                                               (HAS_ALIBI)
//   s_j = −∞ where key j is masked (the rule, painted cells, padding keys)
//   p = softmax(s);   z_h = Σ_j p_j · v_j   (z_h = 0 for an ablated head)
//
// Mirrors `model::attention::attention_forward` with T = 1 (docs/model.md, "Attention"),
// as the KV cache's step calls it (`model::cache`). Each phase is computed exactly as the
// three kernels compute it, in the same order (the score's loop over D; the max and the
// sum over the keys by the same 64-wide tree; the values summed in increasing j), so a
// step gives the numbers the three-dispatch path gives.
//
// Used when the scheme needs at most one table: Shaw relative positions, and ALiBi with
// additive scores together, take the three-dispatch path. The scores and probabilities
// are written where the three kernels write them, so a traced step reads them as before.
//
// The query is at absolute position i = pos0; key j at position j. Each sequence's keys
// and values occupy R ≥ S rows (`kv_rows`) of `kv`: the KV cache's capacity, or S.
//
// Bindings (offsets and strides in elements):
//   0 p          uniform Params
//   1 q          query rows: row b at b·q_stride + q_col, head h at + h·D
//   2 kv         key and value rows: row b·R + j at (b·R + j)·kv_stride; the key at
//                + k_col + h·D, the value at + v_col + h·D
//   3 key_tokens (B, R) u32 — the token behind each key, for the padding mask
//   4 table      (H) ALiBi slopes when HAS_ALIBI, (H, D) `additive_v` when SCORE == 1
//   5 cells      (N, N) u32 painted cells by absolute position (N = p.cell_n, 0: none)
//   6 scores     (B, H, 1, S) f32, written (masked entries MASKED)
//   7 probs      (B, H, 1, S) f32, written
//   8 z          (B, C) f32 with C = H·D, written: the heads side by side, before W_O
// Head h is ablated (z_h = 0) when bit h of the 64-bit mask p.ablate_lo | p.ablate_hi
// << 32 is set (at most 64 heads: `limits::MAX_HEADS`).
//
// Pipeline-creation constants: SCORE (0 = dot product divided by p.divisor, 1 =
// additive), HAS_ALIBI.
//
// Masked scores are the sentinel MASKED = −f32::MAX, as in attention_scores.wgsl.
//
// Dispatch: one workgroup of 64 threads per (b, h), 2-D grid:
// (b, h) = wg.x + wg.y · num_workgroups.x. Thread l handles keys l, l + 64, …; thread d
// < D sums output column d.

struct Params {
    batch: u32,     // B
    n_heads: u32,   // H
    s_len: u32,     // S: keys per sequence
    d_head: u32,    // D
    q_stride: u32,
    q_col: u32,
    kv_stride: u32,
    k_col: u32,
    v_col: u32,
    pos0: u32,      // absolute position of the query
    rule: u32,      // the mask rule: 0 none, 1 causal, 2 prefix-LM, 3 sliding window
    padding: u32,   // 1: mask keys whose token is `pad`
    pad_id: u32,
    divisor: f32,   // √D for scaled_dot with scaling on, else 1 (a division, as the CPU)
    kv_rows: u32,   // R: rows per sequence in kv and key_tokens (≥ S)
    rule_arg: u32,  // P of prefix-LM, w of the sliding window
    cell_n: u32,    // N: side of the painted-cell table (0: no painted cells)
    ablate_lo: u32, // ablated heads 0..32, one bit each
    ablate_hi: u32, // ablated heads 32..64
    _pad0: u32,
}

override SCORE: u32 = 0u;
override HAS_ALIBI: bool = false;

const WG: u32 = 64u;
const MASKED: f32 = -3.40282346638528859811704183484516925440e+38;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> kv: array<f32>;
@group(0) @binding(3) var<storage, read> key_tokens: array<u32>;
@group(0) @binding(4) var<storage, read> table: array<f32>;
@group(0) @binding(5) var<storage, read> cells: array<u32>;
@group(0) @binding(6) var<storage, read_write> scores: array<f32>;
@group(0) @binding(7) var<storage, read_write> probs: array<f32>;
@group(0) @binding(8) var<storage, read_write> z: array<f32>;

var<workgroup> red: array<f32, WG>;

// Whether the mask hides key j from the query at absolute position i (padding aside):
// `MaskSpec::hides`, as in attention_scores.wgsl.
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
        case 3u: { return j > i || i - j >= p.rule_arg; }
        default: { return false; }
    }
}

// tanh that never overflows (attention_scores.wgsl's).
fn safe_tanh(x: f32) -> f32 {
    let e = exp(-2.0 * abs(x));
    return sign(x) * (1.0 - e) / (1.0 + e);
}

// The score of key j for head h of sequence b (MASKED when the mask hides it).
fn score(b: u32, h: u32, i: u32, j: u32) -> f32 {
    let masked = hidden(i, j)
        || (p.padding == 1u && key_tokens[b * p.kv_rows + j] == p.pad_id);
    if (masked) {
        return MASKED;
    }
    let qb = b * p.q_stride + p.q_col + h * p.d_head;
    let kb = (b * p.kv_rows + j) * p.kv_stride + p.k_col + h * p.d_head;
    var s = 0.0;
    for (var d = 0u; d < p.d_head; d = d + 1u) {
        if (SCORE == 0u) {
            s = s + q[qb + d] * kv[kb + d];
        } else {
            s = s + table[h * p.d_head + d] * safe_tanh(q[qb + d] + kv[kb + d]);
        }
    }
    if (SCORE == 0u) {
        s = s / p.divisor;
    }
    if (HAS_ALIBI) {
        let gap = f32(max(i, j) - min(i, j));
        s = s - table[h] * gap;
    }
    return s;
}

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    // Depends on the workgroup only: a uniform early return, barriers stay legal.
    let bh = wg.x + wg.y * nwg.x;
    if (bh >= p.batch * p.n_heads) {
        return;
    }
    let h = bh % p.n_heads;
    let b = bh / p.n_heads;
    let l = lid.x;
    let i = p.pos0;
    let base = bh * p.s_len;

    // Scores and their max.
    var part = MASKED;
    for (var j = l; j < p.s_len; j = j + WG) {
        let s = score(b, h, i, j);
        scores[base + j] = s;
        part = max(part, s);
    }
    red[l] = part;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = max(red[l], red[l + s]);
        }
        workgroupBarrier();
    }
    let m = red[0];
    workgroupBarrier();
    let all_masked = m == MASKED;

    // Sum of exp(s − m) over the unmasked keys (each thread reads back its own keys).
    part = 0.0;
    for (var j = l; j < p.s_len; j = j + WG) {
        let s = scores[base + j];
        if (s != MASKED) {
            part = part + exp(s - m);
        }
    }
    red[l] = part;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (l < s) {
            red[l] = red[l] + red[l + s];
        }
        workgroupBarrier();
    }
    let total = red[0];

    for (var j = l; j < p.s_len; j = j + WG) {
        let s = scores[base + j];
        var v = 0.0;
        if (!all_masked && s != MASKED) {
            v = exp(s - m) / total;
        }
        probs[base + j] = v;
    }
    // Every probability of the row is written before any thread sums the values.
    storageBarrier();

    let c = p.n_heads * p.d_head;
    var bits = p.ablate_lo;
    var bit = h;
    if (h >= 32u) {
        bits = p.ablate_hi;
        bit = h - 32u;
    }
    let ablated = ((bits >> bit) & 1u) == 1u;
    for (var d = l; d < p.d_head; d = d + WG) {
        var acc = 0.0;
        if (!ablated) {
            for (var j = 0u; j < p.s_len; j = j + 1u) {
                let vb = (b * p.kv_rows + j) * p.kv_stride + p.v_col + h * p.d_head;
                acc = acc + probs[base + j] * kv[vb + d];
            }
        }
        z[b * c + h * p.d_head + d] = acc;
    }
}
