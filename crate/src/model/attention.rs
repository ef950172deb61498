//! Multi-head attention (docs/model.md, "Attention").
//!
//! Query rows `xq` (T, C) attend to key/value rows `xkv` (S, C) (the same rows for
//! self-attention). Per head h (columns h·D..(h+1)·D):
//!
//! ```text
//! q = xq·W_Qᵀ + b_Q    k = xkv·W_Kᵀ + b_K    v = xkv·W_Vᵀ + b_V          (RoPE: rotate q, k)
//! s_ij = q_i·k'_j / √D  (scaled_dot)  |  q_i·k'_j  (dot)  |  Σ_d w_h[d]·tanh(q_i[d] + k'_j[d])  (additive)
//!        k'_j = k_j + rel_k[clip(j − i, −K, K) + K]  (relative)  or  k_j
//! s_ij += −m_h·|i − j|                                 (ALiBi)
//! s_ij  = −∞ where the mask hides key j from query i (causal, prefix-LM, window, painted
//!        cells: `mask::MaskSpec`) or key j is padding
//! p_ij  = softmax_j(s_ij)      (a row with every key masked: all zeros)
//! z_i   = Σ_j p_ij·(v_j + rel_v[r])                   (dropout on p in train mode)
//! out   = concat_h(z)·W_Oᵀ + b_O                      (an ablated head's z is zero)
//! ```
//!
//! Positions are absolute: query row i sits at position `q_offset + i` and key row j at
//! position j, so one cached decoding step is the same computation with T = 1 and
//! `q_offset` = number of cached keys.
//!
//! Scores and exponentials (libm's `expf`) are f32, as in PyTorch; the two sums over keys (the softmax
//! normaliser, the weighted sum of values) accumulate in f64, so that permuting the keys
//! leaves them as they were (to f32 rounding) and an order-blind model stays order-blind
//! bit for bit. Each query row is computed on its own, in an order that does not depend on
//! T or S (each dot as `matmul` sums it, the normaliser in four fixed partial sums, the
//! values key by key), so a cached decoding step gives the full pass's numbers bit for bit.

use crate::config::Score;
use crate::model::AttentionParams;

use super::ffn::linear_forward;
use super::mask::{is_masked, MaskSpec};
use super::position::{alibi_bias, relative_index, rope_forward};
use crate::lanes::{exp_lanes, max_of, LANES};
use crate::matmul::{dot_rows2_into, dot_rows_into};

/// Shaw et al. relative position tables of one self-attention sublayer.
#[derive(Clone, Copy, Debug)]
pub struct Relative<'a> {
    /// (2K+1, D), added to the keys.
    pub rel_k: &'a [f32],
    /// (2K+1, D), added to the values.
    pub rel_v: &'a [f32],
    /// K: distances are clipped to ±K.
    pub max_distance: usize,
}

/// Everything about one attention call that is not a tensor of activations.
#[derive(Clone, Copy, Debug)]
pub struct AttnSpec<'a> {
    /// H
    pub n_heads: usize,
    /// D
    pub d_head: usize,
    pub score: Score,
    /// The run-time √D switch: divide `scaled_dot` scores by √D (no effect on the others).
    pub scale: bool,
    /// Which keys each query may not see, by absolute position (`mask::attention_mask`
    /// decides it per site; `mask::is_masked` applies it, with padding).
    pub mask: &'a MaskSpec,
    /// Absolute position of query row 0 (key row j is at position j).
    pub q_offset: usize,
    /// Rotate q and k with RoPE (self-attention only). Used by [`mha_forward`];
    /// [`attention_forward`] expects q and k already rotated.
    pub rope: bool,
    /// (H) ALiBi slopes (self-attention only).
    pub alibi: Option<&'a [f32]>,
    /// Shaw relative tables (self-attention only).
    pub relative: Option<Relative<'a>>,
    /// (H, D): the `w` of additive scoring; required when `score` is additive.
    pub additive_v: Option<&'a [f32]>,
    /// (H) or empty: `true` zeroes that head's z.
    pub ablate: &'a [bool],
}

impl AttnSpec<'_> {
    fn ablated(&self, h: usize) -> bool {
        self.ablate.get(h).copied().unwrap_or(false)
    }
}

/// Attention of one sequence for already projected (and, for RoPE, rotated) q, k, v:
/// fills `scores (H, T, S)` (after scaling and position biases, −∞ where masked),
/// `probs (H, T, S)` (softmax of the scores, before dropout; a fully masked row is zero)
/// and `z (T, C)` (heads concatenated, before W_O).
///
/// `q (T, C)`, `k (S, C)`, `v (S, C)`; `key_pad (S)`: `true` masks that key;
/// `dropout (H, T, S)`: 0 or 1/(1 − p) multipliers applied to the probabilities used for z.
/// Backward: `train::backward::attention::attention_backward`.
#[allow(clippy::too_many_arguments)]
pub fn attention_forward(
    z: &mut [f32],
    scores: &mut [f32],
    probs: &mut [f32],
    q: &[f32],
    k: &[f32],
    v: &[f32],
    key_pad: Option<&[bool]>,
    dropout: Option<&[f32]>,
    spec: &AttnSpec,
    t: usize,
    s: usize,
) {
    let _t = crate::profile::scope(crate::profile::Phase::Attention);
    let (nh, d) = (spec.n_heads, spec.d_head);
    let c = nh * d;
    assert_eq!(q.len(), t * c, "attention_forward: q is not (T, C)");
    assert!(
        k.len() == s * c && v.len() == s * c,
        "attention_forward: k, v are not (S, C)"
    );
    assert_eq!(z.len(), t * c, "attention_forward: z is not (T, C)");
    assert!(
        scores.len() == nh * t * s && probs.len() == nh * t * s,
        "attention_forward: scores, probs are not (H, T, S)"
    );
    if let Some(p) = key_pad {
        assert_eq!(p.len(), s, "attention_forward: key_pad is not (S)");
    }
    if let Some(m) = dropout {
        assert_eq!(
            m.len(),
            nh * t * s,
            "attention_forward: dropout is not (H, T, S)"
        );
    }
    let additive_v = match spec.score {
        Score::Additive => Some(
            spec.additive_v
                .expect("attention_forward: additive scoring needs additive_v (H, D)"),
        ),
        _ => None,
    };
    let sqrt_d = (d as f32).sqrt();
    let scaled = spec.score == Score::ScaledDot && spec.scale;
    // Plain dot-product scores read q and k in place; relative keys (k + rel_k) and
    // additive scores go through `kprime`.
    let plain = additive_v.is_none() && spec.relative.is_none();
    let mut kprime = if plain { vec![] } else { vec![0.0f32; d] }; // (D) k_j (+ rel_k)
    let mut zacc = vec![0.0f64; d]; // (D) z_i accumulated in f64
                                    // Under the causal mask keys past the query are never looked at (they are −∞ below);
                                    // a cached step (T = 1, S = q_pos + 1) computes the same dots.
    let causal = spec.mask.is_causal();
    let seen_by = |i: usize| {
        if causal {
            s.min(spec.q_offset + i + 1)
        } else {
            s
        }
    };
    for h in 0..nh {
        let col = h * d; // head h: columns h·D..(h+1)·D of every row
        if plain {
            // s_ij = q_i·k_j for every query row of head h (Q_h·K_hᵀ), two rows at a time;
            // each dot summed as `matmul` sums it, whatever T and S are.
            let head = &mut scores[h * t * s..(h + 1) * t * s]; // (T, S)
            let mut i = 0;
            while i < t {
                let (qi, seen) = (i * c + col, seen_by(i));
                if i + 1 == t {
                    dot_rows_into(&mut head[i * s..i * s + seen], q, qi, k, col, c, d);
                    break;
                }
                let seen1 = seen_by(i + 1);
                let both = seen.min(seen1);
                let (r0, r1) = head[i * s..(i + 2) * s].split_at_mut(s);
                dot_rows2_into(
                    &mut r0[..both],
                    &mut r1[..both],
                    q,
                    qi,
                    qi + c,
                    k,
                    col,
                    c,
                    d,
                );
                let rest = col + both * c; // key row `both` of head h
                dot_rows_into(&mut r0[both..seen], q, qi, k, rest, c, d);
                dot_rows_into(&mut r1[both..seen1], q, qi + c, k, rest, c, d);
                i += 2;
            }
        }
        for i in 0..t {
            let q_pos = spec.q_offset + i;
            let qi = i * c + col; // q_i of head h: q[qi .. qi + D]
            let row = (h * t + i) * s..(h * t + i + 1) * s;
            let srow = &mut scores[row.clone()]; // (S)
            let seen = seen_by(i);
            // s_ij = q_i·k'_j (plain dots: above)
            if !plain {
                for (j, sc) in srow[..seen].iter_mut().enumerate() {
                    kprime.copy_from_slice(&k[j * c + col..j * c + col + d]);
                    if let Some(rel) = &spec.relative {
                        let r = relative_index(q_pos, j, rel.max_distance);
                        for (kp, rk) in kprime.iter_mut().zip(&rel.rel_k[r * d..(r + 1) * d]) {
                            *kp += rk;
                        }
                    }
                    *sc = match additive_v {
                        None => {
                            let mut one = [0.0f32];
                            dot_rows_into(&mut one, q, qi, &kprime, 0, d, d);
                            one[0]
                        }
                        Some(w) => {
                            let wh = &w[h * d..(h + 1) * d]; // (D)
                            let qh = &q[qi..qi + d]; // (D)
                            let mut acc = 0.0f32;
                            for ((a, b), w) in qh.iter().zip(&kprime).zip(wh) {
                                acc += w * (a + b).tanh();
                            }
                            acc
                        }
                    };
                }
            }
            // Keys past `seen` are hidden by the causal mask (never looked at above).
            srow[seen..].fill(f32::NEG_INFINITY);
            // The causal rule hides no key before `seen`: only padding can, so without a
            // padded key there nothing is hidden. Then every score is scaled and biased, in
            // loops with no branch per key (simd128 in wasm); a hidden score stays −∞.
            if !causal || key_pad.is_some_and(|p| p[..seen].contains(&true)) {
                for (j, sc) in srow[..seen].iter_mut().enumerate() {
                    let pad = key_pad.is_some_and(|p| p[j]);
                    if (causal && pad) || (!causal && is_masked(spec.mask, q_pos, j, pad)) {
                        *sc = f32::NEG_INFINITY;
                    }
                }
            }
            if scaled {
                for sc in &mut srow[..seen] {
                    *sc /= sqrt_d;
                }
            }
            if let Some(slopes) = spec.alibi {
                for (j, sc) in srow[..seen].iter_mut().enumerate() {
                    *sc += alibi_bias(slopes[h], q_pos, j);
                }
            }
            softmax_row(&mut probs[row.clone()], &scores[row.clone()]);

            // z_i = Σ_j p_ij · (v_j + rel_v[r]), D lanes at a time, accumulated in f64 (each
            // product of two f32 is exact there, so the order of the keys does not show);
            // an ablated head contributes zeros.
            let zi = &mut z[i * c + col..i * c + col + d]; // (D)
            zi.fill(0.0);
            if spec.ablated(h) {
                continue;
            }
            if spec.relative.is_none() {
                // The same sums, ZL dimensions at a time with their accumulators in
                // registers: each dimension still adds p_ij·v_j[d] over j = 0, 1, … in
                // order from 0, skipping p = 0 (every key at or past `seen` has p = 0).
                for (g, zg) in zi.chunks_mut(ZL).enumerate() {
                    let base = col + g * ZL;
                    let mut acc = [0.0f64; ZL];
                    for j in 0..seen {
                        let mut p = probs[row.start + j];
                        if let Some(m) = dropout {
                            p *= m[row.start + j];
                        }
                        if p == 0.0 {
                            continue;
                        }
                        let p = p as f64;
                        let vj = &v[j * c + base..j * c + base + zg.len()];
                        if let Ok(vj) = <&[f32; ZL]>::try_from(vj) {
                            for (a, &x) in acc.iter_mut().zip(vj) {
                                *a += p * x as f64;
                            }
                        } else {
                            for (a, &x) in acc.iter_mut().zip(vj) {
                                *a += p * x as f64;
                            }
                        }
                    }
                    for (zv, a) in zg.iter_mut().zip(&acc) {
                        *zv = *a as f32;
                    }
                }
                continue;
            }
            zacc.fill(0.0);
            for j in 0..s {
                let mut p = probs[row.start + j];
                if let Some(m) = dropout {
                    p *= m[row.start + j];
                }
                if p == 0.0 {
                    continue; // masked (or dropped): adds nothing, in either pass
                }
                let p = p as f64;
                let vj = &v[j * c + col..j * c + col + d]; // (D)
                for (za, vv) in zacc.iter_mut().zip(vj) {
                    *za += p * *vv as f64;
                }
                if let Some(rel) = &spec.relative {
                    let r = relative_index(q_pos, j, rel.max_distance);
                    for (za, rv) in zacc.iter_mut().zip(&rel.rel_v[r * d..(r + 1) * d]) {
                        *za += p * *rv as f64;
                    }
                }
            }
            for (zv, za) in zi.iter_mut().zip(&zacc) {
                *zv = *za as f32;
            }
        }
    }
}

/// Dimensions of z accumulated together (f64 accumulators held in registers).
const ZL: usize = 16;

/// `out = softmax(inp)` over one row, where −∞ entries are masked keys. A row whose every
/// entry is −∞ gives all zeros (never NaN): the query attends to nothing. The max is
/// subtracted first; the exponentials are libm's `expf` in f32 (`lanes::exp_lanes`, eight
/// at a time; a masked entry's is exactly 0), summed in f64, in four partial sums (entry j
/// goes to partial j mod 4), so that masked entries past a row's last key add exact zeros
/// and reordering the keys leaves the normaliser as it was (to f32 rounding).
/// Backward: inside `train::backward::attention::attention_backward` (`ds_j = p_j · (dp_j − Σ_k p_k dp_k)`).
pub fn softmax_row(out: &mut [f32], inp: &[f32]) {
    let max = max_of(inp);
    if max == f32::NEG_INFINITY {
        out.fill(0.0);
        return;
    }
    const _: () = assert!(
        LANES.is_multiple_of(4),
        "a lane's partial sum is its index mod 4"
    );
    // Entries past the last finite one (the keys a causal row does not see) are −∞: their
    // exponential is exactly 0 and adds exactly 0 to a partial sum, so they are written
    // as 0 without being computed.
    let end = inp
        .iter()
        .rposition(|&x| x != f32::NEG_INFINITY)
        .map_or(0, |j| j + 1);
    let (out, zeros) = out.split_at_mut(end);
    zeros.fill(0.0);
    let inp = &inp[..end];
    let mut part = [0.0f64; 4];
    let mut oc = out.chunks_mut(LANES);
    for (o, x) in (&mut oc).zip(inp.chunks(LANES)) {
        // The last group may be short: its missing lanes are −∞, whose exponential (0) is
        // neither kept nor added.
        let mut shifted = [f32::NEG_INFINITY; LANES];
        for (s, &x) in shifted.iter_mut().zip(x) {
            *s = x - max;
        }
        let e = exp_lanes(shifted);
        o.copy_from_slice(&e[..o.len()]);
        for (l, &e) in e[..o.len()].iter().enumerate() {
            part[l % 4] += e as f64; // LANES is a multiple of 4: entry j → partial j mod 4
        }
    }
    let sum = (part[0] + part[2]) + (part[1] + part[3]);
    for o in out.iter_mut() {
        *o = (*o as f64 / sum) as f32;
    }
}

/// The three projections' weights and biases inside the packed `in_proj_*` tensors:
/// `(W_Q, W_K, W_V)`, each (C, C), and `(b_Q, b_K, b_V)`, each (C).
pub type QkvSlices<'a> = ([&'a [f32]; 3], [&'a [f32]; 3]);

/// Split `in_proj_weight (3C, C)` and `in_proj_bias (3C)` into W_Q, W_K, W_V and b_Q, b_K,
/// b_V. With `share_qk` the W_K rows already hold copies of W_Q (see `sync_shared_qk`).
pub fn qkv_slices(params: &AttentionParams, c: usize) -> QkvSlices<'_> {
    let w = &params.in_proj_weight.data;
    let b = &params.in_proj_bias.data;
    (
        [&w[..c * c], &w[c * c..2 * c * c], &w[2 * c * c..]],
        [&b[..c], &b[c..2 * c], &b[2 * c..]],
    )
}

/// What a multi-head attention sublayer keeps for its backward pass (and the trace).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AttnRecord {
    /// (B, T, C) queries, after RoPE.
    pub q: Vec<f32>,
    /// (B, S, C) keys, after RoPE.
    pub k: Vec<f32>,
    /// (B, S, C) values.
    pub v: Vec<f32>,
    /// (B, H, T, S) scores after scaling and biases, −∞ where masked.
    pub scores: Vec<f32>,
    /// (B, H, T, S) softmax probabilities, before dropout.
    pub probs: Vec<f32>,
    /// (B, T, C) heads concatenated (after ablation), the input of W_O.
    pub z: Vec<f32>,
}

/// Multi-head attention over a batch: `out (B, T, C)` from query rows `xq (B, T, C)` and
/// key/value rows `xkv (B, S, C)`: projections, RoPE (when `spec.rope`; queries at
/// positions `q_offset ..`, keys at `0 .. S`), [`attention_forward`] per sequence, then W_O.
/// `key_pad (B, S)` masks padding keys; `dropout (B, H, T, S)` are probability multipliers.
/// Backward: `train::backward::attention::mha_backward`.
#[allow(clippy::too_many_arguments)]
pub fn mha_forward(
    out: &mut [f32],
    saved: &mut AttnRecord,
    xq: &[f32],
    xkv: &[f32],
    params: &AttentionParams,
    key_pad: Option<&[bool]>,
    dropout: Option<&[f32]>,
    spec: &AttnSpec,
    b: usize,
    t: usize,
    s: usize,
) {
    let (nh, d) = (spec.n_heads, spec.d_head);
    let c = nh * d;
    let ([wq, wk, wv], [bq, bk, bv]) = qkv_slices(params, c);
    saved.q.resize(b * t * c, 0.0); // (B, T, C)
    saved.k.resize(b * s * c, 0.0); // (B, S, C)
    saved.v.resize(b * s * c, 0.0); // (B, S, C)
    linear_forward(&mut saved.q, xq, wq, Some(bq), b * t, c, c);
    linear_forward(&mut saved.k, xkv, wk, Some(bk), b * s, c, c);
    linear_forward(&mut saved.v, xkv, wv, Some(bv), b * s, c, c);
    if spec.rope {
        rope_forward(&mut saved.q, spec.q_offset, b, t, nh, d);
        rope_forward(&mut saved.k, 0, b, s, nh, d);
    }
    saved.scores.resize(b * nh * t * s, 0.0); // (B, H, T, S)
    saved.probs.resize(b * nh * t * s, 0.0); // (B, H, T, S)
    saved.z.resize(b * t * c, 0.0); // (B, T, C)
    let hts = nh * t * s;
    // The sequences are independent: each writes its own rows of z, scores and probs.
    let (q, k, v) = (&saved.q, &saved.k, &saved.v);
    let tasks: Vec<_> = saved
        .z
        .chunks_mut(t * c)
        .zip(saved.scores.chunks_mut(hts))
        .zip(saved.probs.chunks_mut(hts))
        .enumerate()
        .collect();
    crate::par::run(tasks, |(seq, ((z, scores), probs))| {
        attention_forward(
            z,
            scores,
            probs,
            &q[seq * t * c..(seq + 1) * t * c],
            &k[seq * s * c..(seq + 1) * s * c],
            &v[seq * s * c..(seq + 1) * s * c],
            key_pad.map(|p| &p[seq * s..(seq + 1) * s]),
            dropout.map(|m| &m[seq * hts..(seq + 1) * hts]),
            spec,
            t,
            s,
        );
    });
    linear_forward(
        out,
        &saved.z,
        &params.out_proj_weight.data,
        Some(&params.out_proj_bias.data),
        b * t,
        c,
        c,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::position::alibi_slopes;

    use crate::model::mask::MaskRule;

    static NO_MASK: MaskSpec = MaskSpec {
        rule: MaskRule::None,
        cells: Vec::new(),
        padding: true,
    };

    fn spec(n_heads: usize, d_head: usize) -> AttnSpec<'static> {
        AttnSpec {
            n_heads,
            d_head,
            score: Score::ScaledDot,
            scale: true,
            mask: &NO_MASK,
            q_offset: 0,
            rope: false,
            alibi: None,
            relative: None,
            additive_v: None,
            ablate: &[],
        }
    }

    fn ramp(n: usize, a: f32) -> Vec<f32> {
        (0..n).map(|i| ((i as f32 + 1.0) * a).sin()).collect()
    }

    struct Out {
        z: Vec<f32>,
        scores: Vec<f32>,
        probs: Vec<f32>,
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        sp: &AttnSpec,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        pad: Option<&[bool]>,
        drop: Option<&[f32]>,
        t: usize,
        s: usize,
    ) -> Out {
        let (h, c) = (sp.n_heads, sp.n_heads * sp.d_head);
        let mut o = Out {
            z: vec![f32::NAN; t * c],
            scores: vec![f32::NAN; h * t * s],
            probs: vec![f32::NAN; h * t * s],
        };
        attention_forward(
            &mut o.z,
            &mut o.scores,
            &mut o.probs,
            q,
            k,
            v,
            pad,
            drop,
            sp,
            t,
            s,
        );
        o
    }

    #[test]
    fn fully_masked_softmax_row_is_zero_not_nan() {
        let mut out = vec![f32::NAN; 3];
        softmax_row(&mut out, &[f32::NEG_INFINITY; 3]);
        assert_eq!(out, vec![0.0; 3]);
        softmax_row(&mut out, &[0.0, f32::NEG_INFINITY, 0.0]);
        assert_eq!(out, vec![0.5, 0.0, 0.5]);
    }

    #[test]
    fn fully_masked_query_row_gives_zero_probabilities_and_zero_output() {
        let (t, s, h, d) = (2, 3, 2, 2);
        let (q, k, v) = (ramp(t * 4, 0.3), ramp(s * 4, 0.7), ramp(s * 4, 1.1));
        let o = run(&spec(h, d), &q, &k, &v, Some(&[true; 3]), None, t, s);
        assert!(o.probs.iter().all(|&p| p == 0.0));
        assert!(o.z.iter().all(|&x| x == 0.0));
        assert!(o.scores.iter().all(|&x| x == f32::NEG_INFINITY));
    }

    #[test]
    fn scaled_dot_matches_a_hand_computed_two_key_example() {
        // One head, D = 4: q = (1, 0, 0, 0), keys (2, 0, 0, 0) and (0, 0, 0, 0).
        let q = [1.0f32, 0.0, 0.0, 0.0];
        let k = [2.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let v = [1.0f32, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
        let o = run(&spec(1, 4), &q, &k, &v, None, None, 1, 2);
        // s = (2/√4, 0) = (1, 0); p = (e/(e+1), 1/(e+1)).
        assert_eq!(o.scores, vec![1.0, 0.0]);
        let e = std::f32::consts::E;
        let p0 = e / (e + 1.0);
        assert!((o.probs[0] - p0).abs() < 1e-6);
        assert!((o.z[0] - p0).abs() < 1e-6 && (o.z[1] - (1.0 - p0)).abs() < 1e-6);
        let unscaled = AttnSpec {
            scale: false,
            ..spec(1, 4)
        };
        assert_eq!(
            run(&unscaled, &q, &k, &v, None, None, 1, 2).scores,
            vec![2.0, 0.0]
        );
    }

    #[test]
    fn causal_mask_uses_absolute_query_positions() {
        let (s, d) = (4, 2);
        let q = ramp(d, 0.5);
        let (k, v) = (ramp(s * d, 0.9), ramp(s * d, 0.4));
        let causal = MaskSpec::new(MaskRule::Causal, &[], true);
        let sp = AttnSpec {
            mask: &causal,
            q_offset: 1,
            ..spec(1, d)
        };
        let o = run(&sp, &q, &k, &v, None, None, 1, s);
        // Query at position 1 sees keys 0 and 1 only.
        assert!(o.scores[0].is_finite() && o.scores[1].is_finite());
        assert_eq!(o.scores[2], f32::NEG_INFINITY);
        assert_eq!(o.probs[2], 0.0);
        assert_eq!(o.probs[3], 0.0);
        assert!((o.probs[0] + o.probs[1] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn alibi_and_relative_terms_follow_the_formulas() {
        let (t, s, h, d) = (2, 3, 3, 2);
        let c = h * d;
        let (q, k, v) = (ramp(t * c, 0.3), ramp(s * c, 0.7), ramp(s * c, 1.1));
        let base = run(&spec(h, d), &q, &k, &v, None, None, t, s);
        let slopes = alibi_slopes(h);
        let al = AttnSpec {
            alibi: Some(&slopes),
            ..spec(h, d)
        };
        let o = run(&al, &q, &k, &v, None, None, t, s);
        for (hh, slope) in slopes.iter().enumerate() {
            for i in 0..t {
                for j in 0..s {
                    let idx = (hh * t + i) * s + j;
                    let want = base.scores[idx] - slope * (i as f32 - j as f32).abs();
                    assert!((o.scores[idx] - want).abs() < 1e-6);
                }
            }
        }
        // Relative, K = 1: table rows are distances −1, 0, +1.
        let rel_k = [0.0f32, 0.0, 0.0, 0.0, 10.0, 0.0]; // (3, D): only distance +1 moves keys
        let rel_v = [0.0f32, 0.0, 0.0, 0.0, 0.0, 100.0]; // (3, D)
        let rl = AttnSpec {
            relative: Some(Relative {
                rel_k: &rel_k,
                rel_v: &rel_v,
                max_distance: 1,
            }),
            ..spec(h, d)
        };
        let o = run(&rl, &q, &k, &v, None, None, t, s);
        let sd = (d as f32).sqrt();
        for hh in 0..h {
            for i in 0..t {
                for j in 0..s {
                    let idx = (hh * t + i) * s + j;
                    let extra = if j > i {
                        q[i * c + hh * d] * 10.0 / sd
                    } else {
                        0.0
                    };
                    assert!((o.scores[idx] - (base.scores[idx] + extra)).abs() < 1e-5);
                }
                // z gains 100 · (weight of keys at distance ≥ +1) in the second dimension.
                let far: f32 = (i + 1..s).map(|j| o.probs[(hh * t + i) * s + j]).sum();
                let plain: f32 = (0..s)
                    .map(|j| o.probs[(hh * t + i) * s + j] * v[j * c + hh * d + 1])
                    .sum();
                let got = o.z[i * c + hh * d + 1];
                assert!(
                    (got - (plain + 100.0 * far)).abs() < 1e-4,
                    "{got} vs {}",
                    plain + 100.0 * far
                );
            }
        }
    }

    #[test]
    fn additive_score_is_w_dot_tanh_of_the_sum() {
        let (h, d) = (1, 2);
        let q = [0.5f32, -0.25];
        let k = [0.25f32, 1.0];
        let v = [1.0f32, 2.0];
        let w = [2.0f32, -1.0];
        let sp = AttnSpec {
            score: Score::Additive,
            additive_v: Some(&w),
            ..spec(h, d)
        };
        let o = run(&sp, &q, &k, &v, None, None, 1, 1);
        let want = 2.0 * 0.75f32.tanh() - 0.75f32.tanh();
        assert!((o.scores[0] - want).abs() < 1e-6);
        assert_eq!(o.z, vec![1.0, 2.0]);
    }

    #[test]
    fn values_summed_a_group_of_dimensions_at_a_time_equal_the_key_by_key_sum_bit_for_bit() {
        // Zero relative tables send z through the key-by-key loop (k + 0 and p·0 change
        // no bit); without them z is summed ZL dimensions at a time. D = 12: one full group
        // and a partial one; causal, with dropout zeroing some keys.
        let (t, s, h, d) = (5, 5, 2, 12);
        let c = h * d;
        let (q, k, v) = (ramp(t * c, 0.3), ramp(s * c, 0.7), ramp(s * c, 1.1));
        let drop: Vec<f32> = (0..h * t * s)
            .map(|i| if i % 3 == 0 { 0.0 } else { 1.25 })
            .collect();
        let causal = MaskSpec::new(MaskRule::Causal, &[], true);
        let zeros = vec![0.0f32; 3 * d];
        let base = AttnSpec {
            mask: &causal,
            ..spec(h, d)
        };
        let rel = AttnSpec {
            relative: Some(Relative {
                rel_k: &zeros,
                rel_v: &zeros,
                max_distance: 1,
            }),
            ..base
        };
        let pad = [false, false, true, false, false];
        for drop in [None, Some(&drop[..])] {
            let a = run(&base, &q, &k, &v, Some(&pad), drop, t, s);
            let b = run(&rel, &q, &k, &v, Some(&pad), drop, t, s);
            let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a.probs), bits(&b.probs));
            assert_eq!(bits(&a.z), bits(&b.z));
            assert!(a.z.iter().any(|&x| x != 0.0));
        }
    }

    #[test]
    fn ablated_head_has_zero_output_but_keeps_its_probabilities() {
        let (t, s, h, d) = (2, 2, 2, 2);
        let c = h * d;
        let (q, k, v) = (ramp(t * c, 0.3), ramp(s * c, 0.7), ramp(s * c, 1.1));
        let base = run(&spec(h, d), &q, &k, &v, None, None, t, s);
        let sp = AttnSpec {
            ablate: &[false, true],
            ..spec(h, d)
        };
        let o = run(&sp, &q, &k, &v, None, None, t, s);
        assert_eq!(o.probs, base.probs);
        for i in 0..t {
            assert_eq!(o.z[i * c..i * c + d], base.z[i * c..i * c + d]);
            assert!(o.z[i * c + d..(i + 1) * c].iter().all(|&x| x == 0.0));
        }
    }

    #[test]
    fn dropout_multipliers_change_z_but_not_the_traced_probabilities() {
        let (t, s, h, d) = (1, 2, 1, 2);
        let (q, k, v) = (ramp(2, 0.3), ramp(4, 0.7), ramp(4, 1.1));
        let base = run(&spec(h, d), &q, &k, &v, None, None, t, s);
        let o = run(&spec(h, d), &q, &k, &v, None, Some(&[2.0, 0.0]), t, s);
        assert_eq!(o.probs, base.probs);
        let want = [2.0 * base.probs[0] * v[0], 2.0 * base.probs[0] * v[1]];
        assert!((o.z[0] - want[0]).abs() < 1e-6 && (o.z[1] - want[1]).abs() < 1e-6);
    }
}
