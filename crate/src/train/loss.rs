//! Cross-entropy with optional label smoothing, as PyTorch's `F.cross_entropy`:
//! per counted row `(1 − ε)·(−log p_y) + (ε/V)·Σ_c (−log p_c)` over all V classes, averaged
//! over the counted rows. Rows whose target is `ignore_index` are not counted (LM targets
//! use the pad id); a classifier counts every row.

/// Mean loss of N rows of V logits, and how many rows it counts. Fills `probs (N, V)` with
/// the softmax for the backward pass. With no counted row the loss is 0 (PyTorch gives
/// NaN): nothing to learn from, and nothing flows back.
pub fn cross_entropy_forward(
    probs: &mut [f32],
    logits: &[f32],
    targets: &[u32],
    ignore_index: Option<u32>,
    smoothing: f32,
    n: usize,
    v: usize,
) -> (f32, usize) {
    assert_eq!(
        logits.len(),
        n * v,
        "cross_entropy_forward: logits are not (N, V)"
    );
    assert_eq!(
        probs.len(),
        n * v,
        "cross_entropy_forward: probs are not (N, V)"
    );
    assert_eq!(
        targets.len(),
        n,
        "cross_entropy_forward: targets are not (N)"
    );
    let eps = smoothing as f64;
    let mut total = 0.0f64;
    let mut count = 0usize;
    for ((row, p), &y) in logits
        .chunks_exact(v)
        .zip(probs.chunks_exact_mut(v))
        .zip(targets)
    {
        // log-sum-exp in f64: −log p_c = lse − x_c
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let sum: f64 = row.iter().map(|&x| (x as f64 - max).exp()).sum();
        let lse = max + sum.ln();
        for (pc, &x) in p.iter_mut().zip(row) {
            *pc = ((x as f64 - lse).exp()) as f32;
        }
        if ignore_index == Some(y) {
            continue;
        }
        let nll_y = lse - row[y as usize] as f64;
        let nll_all: f64 = v as f64 * lse - row.iter().map(|&x| x as f64).sum::<f64>();
        total += (1.0 - eps) * nll_y + eps / v as f64 * nll_all;
        count += 1;
    }
    if count == 0 {
        return (0.0, 0);
    }
    ((total / count as f64) as f32, count)
}

/// Backward of `cross_entropy_forward` for `dloss` = d(objective)/d(mean loss):
/// `dlogits_c += dloss/count · (p_c − (1 − ε)·[c = y] − ε/V)` on counted rows.
#[allow(clippy::too_many_arguments)]
pub fn cross_entropy_backward(
    dlogits: &mut [f32],
    probs: &[f32],
    targets: &[u32],
    ignore_index: Option<u32>,
    smoothing: f32,
    count: usize,
    dloss: f32,
    n: usize,
    v: usize,
) {
    assert_eq!(
        dlogits.len(),
        n * v,
        "cross_entropy_backward: dlogits are not (N, V)"
    );
    if count == 0 {
        return;
    }
    let scale = dloss / count as f32;
    let off = smoothing / v as f32;
    for ((d, p), &y) in dlogits
        .chunks_exact_mut(v)
        .zip(probs.chunks_exact(v))
        .zip(targets)
    {
        if ignore_index == Some(y) {
            continue;
        }
        for (cidx, (dc, &pc)) in d.iter_mut().zip(p).enumerate() {
            let hit = if cidx == y as usize {
                1.0 - smoothing
            } else {
                0.0
            };
            *dc += scale * (pc - hit - off);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_logits_give_log_v_with_or_without_smoothing() {
        let (n, v) = (2, 5);
        let logits = vec![0.3f32; n * v];
        let mut probs = vec![0.0; n * v];
        for eps in [0.0, 0.1] {
            let (loss, count) =
                cross_entropy_forward(&mut probs, &logits, &[1, 4], None, eps, n, v);
            assert_eq!(count, 2);
            assert!((loss - (5.0f32).ln()).abs() < 1e-6, "{loss}");
        }
    }

    #[test]
    fn ignored_rows_are_not_counted_and_get_no_gradient() {
        let (n, v) = (3, 3);
        let logits = [1.0f32, 2.0, 3.0, 0.0, 0.0, 9.0, -1.0, 0.5, 0.2];
        let mut probs = vec![0.0; n * v];
        let (loss, count) =
            cross_entropy_forward(&mut probs, &logits, &[2, 0, 1], Some(0), 0.0, n, v);
        assert_eq!(count, 2);
        // Hand-computed: row 0 −log softmax(1,2,3)[2], row 2 −log softmax(−1,.5,.2)[1].
        let r0 = (1f64.exp() + 2f64.exp() + 3f64.exp()).ln() - 3.0;
        let r2 = ((-1f64).exp() + 0.5f64.exp() + 0.2f64.exp()).ln() - 0.5;
        assert!((loss as f64 - (r0 + r2) / 2.0).abs() < 1e-6);
        let mut d = vec![0.0; n * v];
        cross_entropy_backward(&mut d, &probs, &[2, 0, 1], Some(0), 0.0, count, 1.0, n, v);
        assert_eq!(&d[3..6], &[0.0, 0.0, 0.0]);
        // Each counted row's gradient sums to zero (softmax minus a distribution).
        assert!(d[0..3].iter().sum::<f32>().abs() < 1e-6);
    }

    #[test]
    fn smoothing_matches_the_pytorch_formula_on_a_hand_example() {
        // V = 2, logits (0, ln 3): p = (1/4, 3/4); target 1, ε = 0.2:
        // 0.8·(−ln 3/4) + 0.1·(−ln 1/4 − ln 3/4)
        let logits = [0.0f32, 3f32.ln()];
        let mut probs = vec![0.0; 2];
        let (loss, _) = cross_entropy_forward(&mut probs, &logits, &[1], None, 0.2, 1, 2);
        let want = 0.8 * -(0.75f64).ln() + 0.1 * (-(0.25f64).ln() - (0.75f64).ln());
        assert!((loss as f64 - want).abs() < 1e-6, "{loss} vs {want}");
        let mut d = vec![0.0; 2];
        cross_entropy_backward(&mut d, &probs, &[1], None, 0.2, 1, 1.0, 1, 2);
        // p − (0.8·onehot + 0.1)
        assert!((d[0] - (0.25 - 0.1)).abs() < 1e-6 && (d[1] - (0.75 - 0.9)).abs() < 1e-6);
    }
}
