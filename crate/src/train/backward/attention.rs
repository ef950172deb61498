//! Backward of `model/attention.rs`: one sequence's attention (`attention_forward`) and the
//! whole multi-head sublayer with its projections and RoPE (`mha_forward`).
//! Gradients are ADDED to the `d*` buffers.

use crate::config::Score;
use crate::matmul::dot_rows_into;
use crate::model::attention::{qkv_slices, AttnRecord, AttnSpec};
use crate::model::position::relative_index;
use crate::model::AttentionParams;

use super::ffn::linear_backward;
use super::position::rope_backward;

/// Gradients of the tensors an attention call reads besides q, k, v.
#[derive(Default)]
pub struct AttnExtraGrads<'a> {
    /// (2K+1, D) Shaw key table.
    pub rel_k: Option<&'a mut [f32]>,
    /// (2K+1, D) Shaw value table.
    pub rel_v: Option<&'a mut [f32]>,
    /// (H, D) additive-score vectors.
    pub additive_v: Option<&'a mut [f32]>,
}

/// Backward of `attention_forward` for one sequence: from `dz (T, C)` to `dq (T, C)`,
/// `dk (S, C)`, `dv (S, C)` (q and k as the forward saw them, i.e. after RoPE), and the
/// relative / additive tables. `scores`, `probs (H, T, S)` come from the forward;
/// `dropout (H, T, S)` are the multipliers it used.
#[allow(clippy::too_many_arguments)]
pub fn attention_backward(
    dq: &mut [f32],
    dk: &mut [f32],
    dv: &mut [f32],
    extra: &mut AttnExtraGrads,
    dz: &[f32],
    q: &[f32],
    k: &[f32],
    v: &[f32],
    scores: &[f32],
    probs: &[f32],
    dropout: Option<&[f32]>,
    spec: &AttnSpec,
    t: usize,
    s: usize,
) {
    let (nh, d) = (spec.n_heads, spec.d_head);
    let c = nh * d;
    assert_eq!(dz.len(), t * c, "attention_backward: dz is not (T, C)");
    assert!(
        dq.len() == t * c && q.len() == t * c,
        "attention_backward: q is not (T, C)"
    );
    assert!(
        dk.len() == s * c && dv.len() == s * c && k.len() == s * c && v.len() == s * c,
        "attention_backward: k, v are not (S, C)"
    );
    assert!(
        scores.len() == nh * t * s && probs.len() == nh * t * s,
        "attention_backward: scores, probs are not (H, T, S)"
    );
    // forward: s /= √D for scaled_dot with the switch on
    let alpha = if spec.score == Score::ScaledDot && spec.scale {
        1.0 / (d as f32).sqrt()
    } else {
        1.0
    };
    let mut dp = vec![0.0f32; s]; // (S) gradient of one row of probabilities
                                  // Plain dot-product scores read k in place; relative keys and additive scores go
                                  // through `kprime`.
    let plain = spec.score != Score::Additive && spec.relative.is_none();
    let mut kprime = vec![0.0f32; d]; // (D) k_j (+ rel_k)
    let mut dkprime = vec![0.0f32; d]; // (D)
    let causal = spec.mask.is_causal();
    for h in 0..nh {
        // forward: an ablated head's z is zero, so nothing flows back into it
        if spec.ablate.get(h).copied().unwrap_or(false) {
            continue;
        }
        let col = h * d; // head h: columns h·D..(h+1)·D of every row
        for i in 0..t {
            let q_pos = spec.q_offset + i;
            let row = (h * t + i) * s;
            let dzi = &dz[i * c + col..i * c + col + d]; // (D)

            // Under the causal rule keys past the query are masked (p = 0, no gradient):
            // their dp is 0 and the loops below stop before them.
            let seen = if causal { s.min(q_pos + 1) } else { s };
            // forward: z_i = Σ_j p̃_ij · (v_j + rel_v[r]),  p̃ = p · dropout
            // dp̃_j = dz_i · v_j (+ dz_i · rel_v[r])
            dot_rows_into(&mut dp[..seen], dz, i * c + col, v, col, c, d);
            dp[seen..].fill(0.0);
            for j in 0..seen {
                if scores[row + j] == f32::NEG_INFINITY {
                    dp[j] = 0.0;
                    continue; // masked: p = 0, no gradient either way
                }
                let r = spec
                    .relative
                    .map(|rel| relative_index(q_pos, j, rel.max_distance));
                if let (Some(rel), Some(r)) = (&spec.relative, r) {
                    let mut g = [0.0f32];
                    dot_rows_into(&mut g, dz, i * c + col, rel.rel_v, r * d, d, d);
                    dp[j] += g[0];
                }
                let m = dropout.map_or(1.0, |m| m[row + j]);
                let p_tilde = probs[row + j] * m;
                // dv_j += p̃_ij · dz_i ;  drel_v[r] += p̃_ij · dz_i
                let dvj = &mut dv[j * c + col..j * c + col + d]; // (D)
                for (a, b) in dvj.iter_mut().zip(dzi) {
                    *a += p_tilde * b;
                }
                if let (Some(drv), Some(r)) = (extra.rel_v.as_deref_mut(), r) {
                    for (a, b) in drv[r * d..(r + 1) * d].iter_mut().zip(dzi) {
                        *a += p_tilde * b;
                    }
                }
                // forward: p̃ = p · m  →  dp = dp̃ · m
                dp[j] *= m;
            }
            // forward: p = softmax(s)  →  ds_j = p_j · (dp_j − Σ_k p_k dp_k)
            let p = &probs[row..row + s]; // (S)
            let mut dot = [0.0f32];
            dot_rows_into(&mut dot, p, 0, &dp, 0, s, s);
            let dot = dot[0];
            let qi = &q[i * c + col..i * c + col + d]; // (D)
            for j in 0..seen {
                if scores[row + j] == f32::NEG_INFINITY {
                    continue;
                }
                let ds = p[j] * (dp[j] - dot);
                if ds == 0.0 {
                    continue;
                }
                let dqi = &mut dq[i * c + col..i * c + col + d]; // (D)
                if plain {
                    // forward: s = α · q_i·k_j (+ ALiBi, a constant)
                    // dq_i += α·ds·k_j ;  dk_j += α·ds·q_i
                    let g = alpha * ds;
                    let kj = &k[j * c + col..j * c + col + d]; // (D)
                    for (a, b) in dqi.iter_mut().zip(kj) {
                        *a += g * b;
                    }
                    let dkj = &mut dk[j * c + col..j * c + col + d]; // (D)
                    for (a, b) in dkj.iter_mut().zip(qi) {
                        *a += g * b;
                    }
                    continue;
                }
                // forward: k'_j = k_j (+ rel_k[r])
                let r = spec
                    .relative
                    .map(|rel| relative_index(q_pos, j, rel.max_distance));
                kprime.copy_from_slice(&k[j * c + col..j * c + col + d]);
                if let (Some(rel), Some(r)) = (&spec.relative, r) {
                    for (kp, rk) in kprime.iter_mut().zip(&rel.rel_k[r * d..(r + 1) * d]) {
                        *kp += rk;
                    }
                }
                match spec.score {
                    Score::ScaledDot | Score::Dot => {
                        // forward: s = α · q_i·k'_j (+ ALiBi, a constant)
                        for e in 0..d {
                            dqi[e] += alpha * ds * kprime[e];
                            dkprime[e] = alpha * ds * qi[e];
                        }
                    }
                    Score::Additive => {
                        // forward: s = Σ_e w_h[e]·tanh(q_i[e] + k'_j[e])
                        let w = spec
                            .additive_v
                            .expect("attention_backward: additive scoring needs additive_v");
                        let wh = &w[h * d..(h + 1) * d]; // (D)
                        for e in 0..d {
                            let th = (qi[e] + kprime[e]).tanh();
                            let g = ds * wh[e] * (1.0 - th * th);
                            dqi[e] += g;
                            dkprime[e] = g;
                            if let Some(dw) = extra.additive_v.as_deref_mut() {
                                dw[h * d + e] += ds * th;
                            }
                        }
                    }
                }
                // dk_j += dk'_j ;  drel_k[r] += dk'_j
                let dkj = &mut dk[j * c + col..j * c + col + d]; // (D)
                for (a, b) in dkj.iter_mut().zip(&dkprime) {
                    *a += b;
                }
                if let (Some(drk), Some(r)) = (extra.rel_k.as_deref_mut(), r) {
                    for (a, b) in drk[r * d..(r + 1) * d].iter_mut().zip(&dkprime) {
                        *a += b;
                    }
                }
            }
        }
    }
}

/// Backward of `mha_forward` over a batch: from `dout (B, T, C)` to the query rows
/// `dxq (B, T, C)`, the key/value rows `dxkv (B, S, C)` (for self-attention the caller
/// passes the same rows twice to the forward; it adds both gradients), and every parameter
/// gradient in `grads` (laid out like the parameters).
///
/// With `share_qk` the forward used W_K = W_Q: the gradient of the K rows is added to the
/// Q rows of `in_proj_weight` / `in_proj_bias` and the K rows get none.
#[allow(clippy::too_many_arguments)]
pub fn mha_backward(
    dxq: &mut [f32],
    dxkv: &mut [f32],
    grads: &mut AttentionParams,
    dout: &[f32],
    xq: &[f32],
    xkv: &[f32],
    params: &AttentionParams,
    saved: &AttnRecord,
    dropout: Option<&[f32]>,
    spec: &AttnSpec,
    share_qk: bool,
    b: usize,
    t: usize,
    s: usize,
) {
    let (nh, d) = (spec.n_heads, spec.d_head);
    let c = nh * d;
    // forward: out = z · W_Oᵀ + b_O
    let mut dz = vec![0.0f32; b * t * c]; // (B, T, C)
    linear_backward(
        Some(&mut dz),
        &mut grads.out_proj_weight.data,
        Some(&mut grads.out_proj_bias.data),
        dout,
        &saved.z,
        &params.out_proj_weight.data,
        b * t,
        c,
        c,
    );
    // forward: per sequence attention_forward(q, k, v)
    let mut dq = vec![0.0f32; b * t * c]; // (B, T, C)
    let mut dk = vec![0.0f32; b * s * c]; // (B, S, C)
    let mut dv = vec![0.0f32; b * s * c]; // (B, S, C)
    let mut extra = AttnExtraGrads {
        rel_k: spec
            .relative
            .and(grads.rel_k.as_mut())
            .map(|t| t.data.as_mut_slice()),
        rel_v: spec
            .relative
            .and(grads.rel_v.as_mut())
            .map(|t| t.data.as_mut_slice()),
        additive_v: grads.additive_v.as_mut().map(|t| t.data.as_mut_slice()),
    };
    let hts = nh * t * s;
    let one =
        |seq: usize, dq: &mut [f32], dk: &mut [f32], dv: &mut [f32], extra: &mut AttnExtraGrads| {
            let (tq, sk) = (
                seq * t * c..(seq + 1) * t * c,
                seq * s * c..(seq + 1) * s * c,
            );
            attention_backward(
                dq,
                dk,
                dv,
                extra,
                &dz[tq.clone()],
                &saved.q[tq],
                &saved.k[sk.clone()],
                &saved.v[sk],
                &saved.scores[seq * hts..(seq + 1) * hts],
                &saved.probs[seq * hts..(seq + 1) * hts],
                dropout.map(|m| &m[seq * hts..(seq + 1) * hts]),
                spec,
                t,
                s,
            );
        };
    let (dq_seqs, dk_seqs, dv_seqs) = (
        dq.chunks_mut(t * c),
        dk.chunks_mut(s * c),
        dv.chunks_mut(s * c),
    );
    let seqs = dq_seqs.zip(dk_seqs).zip(dv_seqs).enumerate();
    if extra.rel_k.is_none() && extra.rel_v.is_none() && extra.additive_v.is_none() {
        // Each sequence writes only its own rows: the sequences may run apart.
        crate::par::run(seqs.collect(), |(seq, ((dq, dk), dv))| {
            one(seq, dq, dk, dv, &mut AttnExtraGrads::default())
        });
    } else {
        // The relative and additive tables gather every sequence's gradient in one sum,
        // added sequence by sequence.
        for (seq, ((dq, dk), dv)) in seqs {
            one(seq, dq, dk, dv, &mut extra);
        }
    }
    // forward: rope_forward(q, q_offset), rope_forward(k, 0)
    if spec.rope {
        rope_backward(&mut dq, spec.q_offset, b, t, nh, d);
        rope_backward(&mut dk, 0, b, s, nh, d);
    }
    // forward: q = xq·W_Qᵀ + b_Q,  k = xkv·W_Kᵀ + b_K,  v = xkv·W_Vᵀ + b_V
    let ([wq, wk, wv], _) = qkv_slices(params, c);
    let (dwq, rest) = grads.in_proj_weight.data.split_at_mut(c * c);
    let (dwk, dwv) = rest.split_at_mut(c * c);
    let (dbq, rest) = grads.in_proj_bias.data.split_at_mut(c);
    let (dbk, dbv) = rest.split_at_mut(c);
    linear_backward(Some(dxq), dwq, Some(dbq), &dq, xq, wq, b * t, c, c);
    linear_backward(
        Some(&mut *dxkv),
        dwk,
        Some(&mut *dbk),
        &dk,
        xkv,
        wk,
        b * s,
        c,
        c,
    );
    linear_backward(Some(dxkv), dwv, Some(dbv), &dv, xkv, wv, b * s, c, c);
    if share_qk {
        // forward: W_K ≡ W_Q, b_K ≡ b_Q  →  their gradients add up in the shared tensor
        for (q, k) in dwq.iter_mut().zip(dwk.iter_mut()) {
            *q += *k;
            *k = 0.0;
        }
        for (q, k) in dbq.iter_mut().zip(dbk.iter_mut()) {
            *q += *k;
            *k = 0.0;
        }
    }
}
