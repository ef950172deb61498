//! Numbers the page draws beside a trace: residual-stream norms, how saturated each
//! head's softmax is, and each head's recorded q, k, v.

use crate::model::attention::AttnRecord;
use crate::model::forward::{Activations, AttnSite, SublayerKind};
use crate::tensor::{max_abs_diff, Tensor};

/// (L + 1, B, T): the L2 norm of every position's hidden vector, per recorded state.
pub fn state_norms(states: &[Tensor]) -> (Vec<usize>, Vec<f32>) {
    let Some(first) = states.first() else {
        return (vec![0, 0, 0], vec![]);
    };
    let (b, t, c) = (first.shape[0], first.shape[1], first.shape[2]);
    let mut out = Vec::with_capacity(states.len() * b * t); // (L+1, B, T)
    for s in states {
        for row in s.data.chunks(c) {
            out.push(row.iter().map(|x| x * x).sum::<f32>().sqrt());
        }
    }
    (vec![states.len(), b, t], out)
}

/// Entropy (nats) and largest probability of each query row of an attention map,
/// averaged over the first `real` query rows of each sequence: `((B, H), (B, H))`.
pub fn saturation(probs: &Tensor, real: &[usize]) -> (Vec<f32>, Vec<f32>) {
    let (b, h, t, s) = (
        probs.shape[0],
        probs.shape[1],
        probs.shape[2],
        probs.shape[3],
    );
    let mut entropy = Vec::with_capacity(b * h); // (B, H)
    let mut max_prob = Vec::with_capacity(b * h); // (B, H)
    for bi in 0..b {
        let rows = real.get(bi).copied().unwrap_or(t).clamp(1, t);
        for hi in 0..h {
            let (mut e_sum, mut m_sum) = (0.0f64, 0.0f64);
            for i in 0..rows {
                let start = ((bi * h + hi) * t + i) * s;
                let row = &probs.data[start..start + s]; // (S)
                e_sum -= row
                    .iter()
                    .filter(|&&p| p > 0.0)
                    .map(|&p| p as f64 * (p as f64).ln())
                    .sum::<f64>();
                m_sum += row.iter().fold(0.0f32, |m, &p| m.max(p)) as f64;
            }
            entropy.push((e_sum / rows as f64) as f32);
            max_prob.push((m_sum / rows as f64) as f32);
        }
    }
    (entropy, max_prob)
}

/// Columns h·D..(h+1)·D of a (B, N, H·D) projection, regrouped by head: (B, H, N, D).
pub fn by_head(x: &[f32], b: usize, n: usize, h: usize, d: usize) -> Vec<f32> {
    let c = h * d;
    let mut out = Vec::with_capacity(b * h * n * d); // (B, H, N, D)
    for bi in 0..b {
        for hi in 0..h {
            for ni in 0..n {
                let start = (bi * n + ni) * c + hi * d;
                out.extend_from_slice(&x[start..start + d]); // (D)
            }
        }
    }
    out
}

/// Largest |q − k| over the tokens and dimensions of each head, (B, H): zero exactly
/// when every query equals its own token's key (W_Q = W_K); a NaN is an infinite gap, never
/// a tie ([`max_abs_diff`]). Self-attention only.
pub fn qk_gap(q: &[f32], k: &[f32], b: usize, h: usize, n: usize, d: usize) -> Vec<f32> {
    (0..b * h) // (B, H)
        .map(|head| {
            let rows = head * n * d..(head + 1) * n * d;
            max_abs_diff(&q[rows.clone()], &k[rows])
        })
        .collect()
}

/// The recorded q, k, v of the attention sublayer at `site`/`layer`, if it ran.
pub fn recorded_qkv(acts: &Activations, site: AttnSite, layer: usize) -> Option<&AttnRecord> {
    let kind = match site {
        AttnSite::Cross => SublayerKind::CrossAttention,
        _ => SublayerKind::SelfAttention,
    };
    [&acts.encoder, &acts.decoder]
        .into_iter()
        .flatten()
        .filter(|s| site == AttnSite::Cross || s.site == site)
        .find_map(|s| {
            s.layers
                .get(layer)?
                .iter()
                .find(|r| r.kind == kind)?
                .attn
                .as_ref()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturation_of_uniform_and_one_hot_rows() {
        // B 1, H 2, T 2, S 4: head 0 uniform rows, head 1 one-hot rows.
        let mut data = vec![0.25; 8];
        data.extend([1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        let probs = Tensor::new(vec![1, 2, 2, 4], data).unwrap();
        let (entropy, max_prob) = saturation(&probs, &[2]);
        assert!((entropy[0] - 4f32.ln()).abs() < 1e-6, "{entropy:?}");
        assert_eq!((entropy[1], max_prob[0], max_prob[1]), (0.0, 0.25, 1.0));
    }

    #[test]
    fn qk_gap_is_zero_only_when_q_equals_k() {
        let q = [0.5, -1.0, 2.0, 0.0];
        assert_eq!(qk_gap(&q, &q, 1, 1, 2, 2), vec![0.0]);
        let k = [0.5, -1.0, 2.0, 0.75];
        assert_eq!(qk_gap(&q, &k, 1, 1, 2, 2), vec![0.75]);
        // A NaN query is no tie with its key (a fold of f32::max would drop it and say 0).
        let nan = [0.5, -1.0, f32::NAN, 0.0];
        assert_eq!(qk_gap(&nan, &q, 1, 1, 2, 2), vec![f32::INFINITY]);
        assert_eq!(qk_gap(&nan, &nan, 1, 1, 2, 2), vec![f32::INFINITY]);
    }

    #[test]
    fn by_head_regroups_columns() {
        // B 1, N 2, H 2, D 1: rows [a0 b0], [a1 b1] → head a: [a0 a1], head b: [b0 b1].
        assert_eq!(
            by_head(&[1.0, 2.0, 3.0, 4.0], 1, 2, 2, 1),
            vec![1.0, 3.0, 2.0, 4.0]
        );
    }
}
