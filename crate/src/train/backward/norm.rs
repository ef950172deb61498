//! Backward of `model/norm.rs`: LayerNorm, and BatchNorm in train and eval mode.
//! Gradients are ADDED to the `d*` buffers.

use crate::model::norm::BN_EPS;

/// Backward of `layernorm_forward` over R rows of C:
/// `n = (x − μ)·rstd`, `out = n·γ + β`, with μ and rstd per row (kept by the forward).
#[allow(clippy::too_many_arguments)]
pub fn layernorm_backward(
    dinp: &mut [f32],
    dweight: &mut [f32],
    dbias: &mut [f32],
    dout: &[f32],
    inp: &[f32],
    weight: &[f32],
    mean: &[f32],
    rstd: &[f32],
    rows: usize,
    c: usize,
) {
    assert_eq!(inp.len(), rows * c, "layernorm_backward: inp is not (R, C)");
    assert_eq!(
        dout.len(),
        rows * c,
        "layernorm_backward: dout is not (R, C)"
    );
    for r in 0..rows {
        let x = &inp[r * c..(r + 1) * c]; // (C)
        let g = &dout[r * c..(r + 1) * c]; // (C)
        let (m, s) = (mean[r], rstd[r]);
        // forward: out_i = n_i·γ_i + β_i  →  dn_i = γ_i·dout_i; the two means of the
        // normalisation's Jacobian: mean(dn) and mean(dn·n).
        let mut dn_mean = 0.0f32;
        let mut dn_n_mean = 0.0f32;
        for i in 0..c {
            let n = (x[i] - m) * s;
            let dn = weight[i] * g[i];
            dn_mean += dn;
            dn_n_mean += dn * n;
        }
        dn_mean /= c as f32;
        dn_n_mean /= c as f32;
        let dx = &mut dinp[r * c..(r + 1) * c]; // (C)
        for i in 0..c {
            let n = (x[i] - m) * s;
            let dn = weight[i] * g[i];
            // forward: β_i added  →  dβ_i += dout_i;  γ_i·n_i  →  dγ_i += n_i·dout_i
            dbias[i] += g[i];
            dweight[i] += n * g[i];
            // forward: n_i = (x_i − μ)·rstd  →  dx_i = rstd·(dn_i − mean(dn) − n_i·mean(dn·n))
            dx[i] += (dn - dn_mean - n * dn_n_mean) * s;
        }
    }
}

/// Backward of `batchnorm_train_forward`: the same normalisation as LayerNorm but per
/// feature over the R rows (μ_i, rstd_i (C) kept by the forward), so every row's
/// gradient depends on the whole batch.
#[allow(clippy::too_many_arguments)]
pub fn batchnorm_train_backward(
    dinp: &mut [f32],
    dweight: &mut [f32],
    dbias: &mut [f32],
    dout: &[f32],
    inp: &[f32],
    weight: &[f32],
    mean: &[f32],
    rstd: &[f32],
    rows: usize,
    c: usize,
) {
    assert_eq!(
        inp.len(),
        rows * c,
        "batchnorm_train_backward: inp is not (R, C)"
    );
    assert_eq!(
        dout.len(),
        rows * c,
        "batchnorm_train_backward: dout is not (R, C)"
    );
    let mut dn_mean = vec![0.0f32; c]; // (C) mean over rows of dn
    let mut dn_n_mean = vec![0.0f32; c]; // (C) mean over rows of dn·n
    for (x, g) in inp.chunks_exact(c).zip(dout.chunks_exact(c)) {
        for i in 0..c {
            let n = (x[i] - mean[i]) * rstd[i];
            let dn = weight[i] * g[i];
            dn_mean[i] += dn;
            dn_n_mean[i] += dn * n;
            // forward: out = n·γ + β
            dbias[i] += g[i];
            dweight[i] += n * g[i];
        }
    }
    for i in 0..c {
        dn_mean[i] /= rows as f32;
        dn_n_mean[i] /= rows as f32;
    }
    for ((dx, x), g) in dinp
        .chunks_exact_mut(c)
        .zip(inp.chunks_exact(c))
        .zip(dout.chunks_exact(c))
    {
        for i in 0..c {
            let n = (x[i] - mean[i]) * rstd[i];
            let dn = weight[i] * g[i];
            // forward: n = (x − μ)·rstd with μ, σ² over rows  →  the LayerNorm formula
            // with means over rows
            dx[i] += (dn - dn_mean[i] - n * dn_n_mean[i]) * rstd[i];
        }
    }
}

/// Backward of `batchnorm_eval_forward`: with the running statistics fixed it is an affine
/// map per feature, `out = (x − rm)·rs·γ + β` with `rs = 1/√(rv + ε)`.
#[allow(clippy::too_many_arguments)]
pub fn batchnorm_eval_backward(
    dinp: &mut [f32],
    dweight: &mut [f32],
    dbias: &mut [f32],
    dout: &[f32],
    inp: &[f32],
    weight: &[f32],
    running_mean: &[f32],
    running_var: &[f32],
    rows: usize,
    c: usize,
) {
    assert_eq!(
        inp.len(),
        rows * c,
        "batchnorm_eval_backward: inp is not (R, C)"
    );
    for ((dx, x), g) in dinp
        .chunks_exact_mut(c)
        .zip(inp.chunks_exact(c))
        .zip(dout.chunks_exact(c))
    {
        for i in 0..c {
            let rs = 1.0 / (running_var[i] + BN_EPS).sqrt();
            let n = (x[i] - running_mean[i]) * rs;
            dbias[i] += g[i];
            dweight[i] += n * g[i];
            dx[i] += g[i] * weight[i] * rs;
        }
    }
}
