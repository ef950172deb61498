//! Attention the slow, obvious way: the formulas at the top of [`super::attention`]
//! written once, in f64, one head, one query and one key at a time. No lanes, no two rows
//! at a time, no causal shortcut, no cached layout. The tuned
//! [`attention_forward`](super::attention::attention_forward) and
//! [`mha_forward`](super::attention::mha_forward) are tested against these
//! (crate/tests/attention_reference.rs); nothing in the model calls them.

use crate::config::Score;
use crate::model::AttentionParams;

use super::attention::{qkv_slices, AttnSpec};
use super::mask::is_masked;
use super::position::{alibi_bias, relative_index, rope_forward};

/// What one attention call computes, for one sequence.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceAttention {
    /// (H, T, S) scores after scaling and position biases, −∞ where masked.
    pub scores: Vec<f32>,
    /// (H, T, S) softmax of the scores (before dropout); a fully masked row is zeros.
    pub probs: Vec<f32>,
    /// (T, C) the heads' weighted values, concatenated (before W_O).
    pub z: Vec<f32>,
}

/// [`attention_forward`](super::attention::attention_forward)'s contract for one sequence:
/// `q (T, C)`, `k (S, C)`, `v (S, C)` already projected (and rotated, for RoPE);
/// `key_pad (S)`; `dropout (H, T, S)` multipliers on the probabilities used for z.
#[allow(clippy::too_many_arguments)]
pub fn attention_reference(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    key_pad: Option<&[bool]>,
    dropout: Option<&[f32]>,
    spec: &AttnSpec,
    t: usize,
    s: usize,
) -> ReferenceAttention {
    let (nh, d) = (spec.n_heads, spec.d_head);
    let c = nh * d;
    let mut scores = vec![f64::NEG_INFINITY; nh * t * s]; // (H, T, S)
    let mut probs = vec![0.0f64; nh * t * s]; // (H, T, S)
    let mut z = vec![0.0f64; t * c]; // (T, C)
    for h in 0..nh {
        for i in 0..t {
            let q_pos = spec.q_offset + i;
            let qi = &q[i * c + h * d..i * c + h * d + d]; // (D)
            let row = (h * t + i) * s; // start of scores[h, i, :]

            // 1. Scores: s_ij = q_i · k'_j (or Σ w·tanh(q + k')), scaled, biased, masked.
            for j in 0..s {
                let pad = key_pad.is_some_and(|p| p[j]);
                if is_masked(spec.mask, q_pos, j, pad) {
                    continue; // stays −∞
                }
                let mut kj: Vec<f64> = k[j * c + h * d..j * c + h * d + d]
                    .iter()
                    .map(|&x| x as f64)
                    .collect(); // (D)
                if let Some(rel) = &spec.relative {
                    let r = relative_index(q_pos, j, rel.max_distance);
                    for (x, &rk) in kj.iter_mut().zip(&rel.rel_k[r * d..(r + 1) * d]) {
                        *x += rk as f64;
                    }
                }
                let mut score = match spec.score {
                    Score::Dot | Score::ScaledDot => {
                        qi.iter().zip(&kj).map(|(&a, &b)| a as f64 * b).sum::<f64>()
                    }
                    Score::Additive => {
                        let w = &spec.additive_v.expect("additive scoring needs w (H, D)")
                            [h * d..(h + 1) * d];
                        (0..d)
                            .map(|x| w[x] as f64 * (qi[x] as f64 + kj[x]).tanh())
                            .sum::<f64>()
                    }
                };
                if spec.score == Score::ScaledDot && spec.scale {
                    score /= (d as f64).sqrt();
                }
                if let Some(slopes) = spec.alibi {
                    score += alibi_bias(slopes[h], q_pos, j) as f64;
                }
                scores[row + j] = score;
            }

            // 2. Softmax over the keys; a row with every key masked attends to nothing.
            let srow = &scores[row..row + s];
            let max = srow.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if max > f64::NEG_INFINITY {
                let total: f64 = srow.iter().map(|&x| (x - max).exp()).sum();
                for j in 0..s {
                    probs[row + j] = (srow[j] - max).exp() / total;
                }
            }

            // 3. Weighted values: z_i = Σ_j p_ij · drop_ij · (v_j + rel_v[r]).
            if spec.ablate.get(h).copied().unwrap_or(false) {
                continue; // an ablated head's z is zero
            }
            for j in 0..s {
                let keep = dropout.map_or(1.0, |m| m[row + j] as f64);
                let p = probs[row + j] * keep;
                for x in 0..d {
                    let mut vj = v[j * c + h * d + x] as f64;
                    if let Some(rel) = &spec.relative {
                        vj += rel.rel_v[relative_index(q_pos, j, rel.max_distance) * d + x] as f64;
                    }
                    z[i * c + h * d + x] += p * vj;
                }
            }
        }
    }
    let f32s = |x: Vec<f64>| x.into_iter().map(|v| v as f32).collect();
    ReferenceAttention {
        scores: f32s(scores),
        probs: f32s(probs),
        z: f32s(z),
    }
}

/// `x (N, C_in) · Wᵀ + b` with `w (C_out, C_in)`, summed in f64.
fn linear(x: &[f32], w: &[f32], b: &[f32], n: usize, c_in: usize, c_out: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; n * c_out]; // (N, C_out)
    for r in 0..n {
        for o in 0..c_out {
            let dot: f64 = (0..c_in)
                .map(|i| x[r * c_in + i] as f64 * w[o * c_in + i] as f64)
                .sum();
            out[r * c_out + o] = (dot + b[o] as f64) as f32;
        }
    }
    out
}

/// [`mha_forward`](super::attention::mha_forward)'s contract: `xq (B, T, C)` attends to
/// `xkv (B, S, C)` through `params`; returns the sublayer's output (B, T, C) and each
/// sequence's [`ReferenceAttention`]. `key_pad (B, S)`, `dropout (B, H, T, S)`.
#[allow(clippy::too_many_arguments)]
pub fn mha_reference(
    xq: &[f32],
    xkv: &[f32],
    params: &AttentionParams,
    key_pad: Option<&[bool]>,
    dropout: Option<&[f32]>,
    spec: &AttnSpec,
    b: usize,
    t: usize,
    s: usize,
) -> (Vec<f32>, Vec<ReferenceAttention>) {
    let (nh, d) = (spec.n_heads, spec.d_head);
    let c = nh * d;
    let ([wq, wk, wv], [bq, bk, bv]) = qkv_slices(params, c);
    let mut q = linear(xq, wq, bq, b * t, c, c); // (B, T, C)
    let mut k = linear(xkv, wk, bk, b * s, c, c); // (B, S, C)
    let v = linear(xkv, wv, bv, b * s, c, c); // (B, S, C)
    if spec.rope {
        rope_forward(&mut q, spec.q_offset, b, t, nh, d);
        rope_forward(&mut k, 0, b, s, nh, d);
    }
    let hts = nh * t * s;
    let heads: Vec<ReferenceAttention> = (0..b)
        .map(|seq| {
            attention_reference(
                &q[seq * t * c..(seq + 1) * t * c],
                &k[seq * s * c..(seq + 1) * s * c],
                &v[seq * s * c..(seq + 1) * s * c],
                key_pad.map(|p| &p[seq * s..(seq + 1) * s]),
                dropout.map(|m| &m[seq * hts..(seq + 1) * hts]),
                spec,
                t,
                s,
            )
        })
        .collect();
    let z: Vec<f32> = heads.iter().flat_map(|a| a.z.iter().copied()).collect(); // (B, T, C)
    let out = linear(
        &z,
        &params.out_proj_weight.data,
        &params.out_proj_bias.data,
        b * t,
        c,
        c,
    ); // (B, T, C)
    (out, heads)
}
