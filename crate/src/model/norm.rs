//! Normalisation (docs/model.md, "FFN, norms").
//!
//! - LayerNorm normalises each position over its C features:
//!   `y = (x − μ) / √(σ² + 1e-5) · γ + β`, σ² biased. One position never sees another.
//! - BatchNorm normalises each feature over the positions of the batch. Eval mode uses
//!   the running statistics; train mode uses the batch's own μ, σ² (biased) over all B·T
//!   rows, pads included, and updates the running statistics with momentum 0.1 and the
//!   unbiased variance, as PyTorch's `BatchNorm1d` on `x.reshape(B·T, C)`. In train mode
//!   another sequence of the batch therefore changes this one's output.
//!
//! Statistics are accumulated and applied in f64; inputs, outputs and the kept statistics
//! are f32.

/// LayerNorm ε.
pub const LN_EPS: f32 = 1e-5;
/// BatchNorm ε.
pub const BN_EPS: f32 = 1e-5;
/// BatchNorm momentum: `running ← (1 − momentum) · running + momentum · batch`.
pub const BN_MOMENTUM: f32 = 0.1;

/// LayerNorm over the last dimension:
/// `out[r] = (inp[r] − μ_r) · rstd_r · γ + β` with `μ_r = mean(inp[r])`,
/// `rstd_r = 1 / √(mean((inp[r] − μ_r)²) + 1e-5)`.
/// `mean` and `rstd` (R) are kept for the backward pass.
/// Backward: `train::backward::norm::layernorm_backward`.
#[allow(clippy::too_many_arguments)]
pub fn layernorm_forward(
    out: &mut [f32],
    mean: &mut [f32],
    rstd: &mut [f32],
    inp: &[f32],
    weight: &[f32],
    bias: &[f32],
    rows: usize,
    c: usize,
) {
    let _t = crate::profile::scope(crate::profile::Phase::Norm);
    assert_eq!(inp.len(), rows * c, "layernorm_forward: inp is not (R, C)");
    assert_eq!(out.len(), rows * c, "layernorm_forward: out is not (R, C)");
    assert!(
        mean.len() == rows && rstd.len() == rows,
        "layernorm_forward: stats are not (R)"
    );
    for r in 0..rows {
        let x = &inp[r * c..(r + 1) * c]; // (C)
        let m = x.iter().map(|&v| v as f64).sum::<f64>() / c as f64;
        let var = x.iter().map(|&v| (v as f64 - m).powi(2)).sum::<f64>() / c as f64;
        let s = 1.0 / (var + LN_EPS as f64).sqrt();
        let o = &mut out[r * c..(r + 1) * c]; // (C)
        for i in 0..c {
            o[i] = ((x[i] as f64 - m) * s) as f32 * weight[i] + bias[i];
        }
        mean[r] = m as f32;
        rstd[r] = s as f32;
    }
}

/// BatchNorm in eval mode: `out[r, i] = (inp[r, i] − running_mean[i]) /
/// √(running_var[i] + 1e-5) · γ[i] + β[i]`. Each row is normalised on its own.
/// Backward: `train::backward::norm::batchnorm_eval_backward`.
#[allow(clippy::too_many_arguments)]
pub fn batchnorm_eval_forward(
    out: &mut [f32],
    inp: &[f32],
    weight: &[f32],
    bias: &[f32],
    running_mean: &[f32],
    running_var: &[f32],
    rows: usize,
    c: usize,
) {
    assert_eq!(
        inp.len(),
        rows * c,
        "batchnorm_eval_forward: inp is not (R, C)"
    );
    assert_eq!(
        out.len(),
        rows * c,
        "batchnorm_eval_forward: out is not (R, C)"
    );
    for (o, x) in out.chunks_exact_mut(c).zip(inp.chunks_exact(c)) {
        for i in 0..c {
            let s = 1.0 / (running_var[i] + BN_EPS).sqrt();
            o[i] = (x[i] - running_mean[i]) * s * weight[i] + bias[i];
        }
    }
}

/// BatchNorm in train mode, statistics over all R rows:
/// `μ_i = mean_r inp[r, i]`, `σ²_i = mean_r (inp[r, i] − μ_i)²` (biased),
/// `rstd_i = 1 / √(σ²_i + 1e-5)`, `out[r, i] = (inp[r, i] − μ_i) · rstd_i · γ_i + β_i`.
/// `mean`, `var` (biased) and `rstd` (C) are kept for the running statistics and the
/// backward pass.
/// Backward: `train::backward::norm::batchnorm_train_backward`.
#[allow(clippy::too_many_arguments)]
pub fn batchnorm_train_forward(
    out: &mut [f32],
    mean: &mut [f32],
    var: &mut [f32],
    rstd: &mut [f32],
    inp: &[f32],
    weight: &[f32],
    bias: &[f32],
    rows: usize,
    c: usize,
) {
    assert_eq!(
        inp.len(),
        rows * c,
        "batchnorm_train_forward: inp is not (R, C)"
    );
    assert_eq!(
        out.len(),
        rows * c,
        "batchnorm_train_forward: out is not (R, C)"
    );
    assert!(
        mean.len() == c && var.len() == c && rstd.len() == c,
        "batchnorm_train_forward: stats are not (C)"
    );
    let mut m64 = vec![0.0f64; c]; // (C)
    let mut v64 = vec![0.0f64; c]; // (C)
    for x in inp.chunks_exact(c) {
        for i in 0..c {
            m64[i] += x[i] as f64;
        }
    }
    for m in m64.iter_mut() {
        *m /= rows as f64;
    }
    for x in inp.chunks_exact(c) {
        for i in 0..c {
            v64[i] += (x[i] as f64 - m64[i]).powi(2);
        }
    }
    let mut s64 = vec![0.0f64; c]; // (C)
    for i in 0..c {
        v64[i] /= rows as f64;
        s64[i] = 1.0 / (v64[i] + BN_EPS as f64).sqrt();
        mean[i] = m64[i] as f32;
        var[i] = v64[i] as f32;
        rstd[i] = s64[i] as f32;
    }
    for (o, x) in out.chunks_exact_mut(c).zip(inp.chunks_exact(c)) {
        for i in 0..c {
            o[i] = ((x[i] as f64 - m64[i]) * s64[i]) as f32 * weight[i] + bias[i];
        }
    }
}

/// Running statistics after one train-mode batch of `rows` rows (rows ≥ 2):
/// `running_mean ← 0.9 · running_mean + 0.1 · μ`,
/// `running_var ← 0.9 · running_var + 0.1 · σ² · rows / (rows − 1)` (unbiased variance).
/// Backward: none: running statistics take no gradient.
pub fn batchnorm_running_update(
    running_mean: &mut [f32],
    running_var: &mut [f32],
    mean: &[f32],
    var: &[f32],
    rows: usize,
) {
    assert!(
        rows >= 2,
        "batchnorm_running_update: needs at least two rows"
    );
    let unbias = rows as f32 / (rows - 1) as f32;
    for i in 0..running_mean.len() {
        running_mean[i] = (1.0 - BN_MOMENTUM) * running_mean[i] + BN_MOMENTUM * mean[i];
        running_var[i] = (1.0 - BN_MOMENTUM) * running_var[i] + BN_MOMENTUM * var[i] * unbias;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layernorm_gives_zero_mean_unit_variance_rows_before_the_affine() {
        let inp = [1.0f32, 2.0, 3.0, 4.0, -2.0, 0.0, 2.0, 8.0]; // (2, 4)
        let (mut out, mut mean, mut rstd) = (vec![0.0; 8], vec![0.0; 2], vec![0.0; 2]);
        layernorm_forward(
            &mut out, &mut mean, &mut rstd, &inp, &[1.0; 4], &[0.0; 4], 2, 4,
        );
        assert_eq!(mean, vec![2.5, 2.0]);
        // Row 0: σ² = 1.25, so x − μ = −1.5 becomes −1.5 / √(1.25 + 1e-5).
        assert!((out[0] - (-1.5 / (1.25f32 + 1e-5).sqrt())).abs() < 1e-6);
        for row in out.chunks(4) {
            let m: f32 = row.iter().sum::<f32>() / 4.0;
            let v: f32 = row.iter().map(|x| (x - m) * (x - m)).sum::<f32>() / 4.0;
            assert!(
                m.abs() < 1e-6 && (v - 1.0).abs() < 1e-4,
                "mean {m}, var {v}"
            );
        }
    }

    #[test]
    fn layernorm_applies_gamma_and_beta_per_feature() {
        let inp = [0.0f32, 2.0]; // (1, 2): normalised to (−1, 1) (up to ε)
        let (mut out, mut mean, mut rstd) = (vec![0.0; 2], vec![0.0], vec![0.0]);
        layernorm_forward(
            &mut out,
            &mut mean,
            &mut rstd,
            &inp,
            &[2.0, 3.0],
            &[0.5, -0.5],
            1,
            2,
        );
        assert!((out[0] - (-2.0 + 0.5)).abs() < 1e-4 && (out[1] - (3.0 - 0.5)).abs() < 1e-4);
    }

    #[test]
    fn batchnorm_eval_uses_the_running_statistics() {
        let inp = [3.0f32, -1.0]; // (1, 2)
        let mut out = vec![0.0; 2];
        batchnorm_eval_forward(
            &mut out,
            &inp,
            &[1.0, 2.0],
            &[0.0, 1.0],
            &[1.0, 1.0],
            &[4.0, 1.0],
            1,
            2,
        );
        let want0 = 2.0 / (4.0f32 + 1e-5).sqrt();
        let want1 = -2.0 / (1.0f32 + 1e-5).sqrt() * 2.0 + 1.0;
        assert!((out[0] - want0).abs() < 1e-6 && (out[1] - want1).abs() < 1e-6);
    }

    #[test]
    fn batchnorm_train_normalises_each_feature_over_rows_and_updates_running_stats() {
        let inp = [1.0f32, 10.0, 3.0, 10.0, 5.0, 10.0, 7.0, 10.0]; // (4, 2)
        let mut out = vec![0.0; 8];
        let (mut mean, mut var, mut rstd) = (vec![0.0; 2], vec![0.0; 2], vec![0.0; 2]);
        batchnorm_train_forward(
            &mut out, &mut mean, &mut var, &mut rstd, &inp, &[1.0; 2], &[0.0; 2], 4, 2,
        );
        assert_eq!(mean, vec![4.0, 10.0]);
        assert_eq!(var, vec![5.0, 0.0]); // biased: (9 + 1 + 1 + 9) / 4
        assert!((out[0] - (-3.0 / (5.0f32 + 1e-5).sqrt())).abs() < 1e-6);
        assert_eq!(out[1], 0.0, "a constant feature normalises to β");
        let (mut rm, mut rv) = (vec![0.0f32; 2], vec![1.0f32; 2]);
        batchnorm_running_update(&mut rm, &mut rv, &mean, &var, 4);
        assert!((rm[0] - 0.4).abs() < 1e-6 && (rm[1] - 1.0).abs() < 1e-6);
        // unbiased variance 5 · 4/3 = 20/3: 0.9 · 1 + 0.1 · 20/3
        assert!((rv[0] - (0.9 + 2.0 / 3.0)).abs() < 1e-6 && (rv[1] - 0.9).abs() < 1e-6);
    }
}
