//! The position-wise feed-forward network and its pieces (docs/model.md, "FFN, norms"):
//! `h = act(x·W₁ᵀ + b₁)`, dropout in train mode, `y = h·W₂ᵀ + b₂`.
//! Every row is transformed on its own: a position's output never depends on another's.

use crate::config::Activation;
use crate::lanes::{erf_lanes, LANES};
use crate::matmul::matmul_nt_into;

/// A PyTorch `Linear`: `out (N, OUT) = inp (N, IN) · weightᵀ + bias`, with
/// `weight (OUT, IN)` and an optional `bias (OUT)`.
/// Backward: `train::backward::ffn::linear_backward`.
#[allow(clippy::too_many_arguments)]
pub fn linear_forward(
    out: &mut [f32],
    inp: &[f32],
    weight: &[f32],
    bias: Option<&[f32]>,
    n: usize,
    c_in: usize,
    c_out: usize,
) {
    assert_eq!(out.len(), n * c_out, "linear_forward: out is not (N, OUT)");
    let _t = crate::profile::scope(if n == 1 {
        crate::profile::Phase::MatmulRow
    } else {
        crate::profile::Phase::Matmul
    });
    // Every row is summed on its own (`crate::matmul`), so blocks of rows may run apart.
    crate::par::rows(out, c_out, c_in * c_out, |first, block| {
        let rows = block.len() / c_out.max(1);
        let inp = &inp[first * c_in..(first + rows) * c_in];
        matmul_nt_into(block, inp, weight, rows, c_in, c_out); // (rows, OUT)
    });
    if let Some(b) = bias {
        assert_eq!(b.len(), c_out, "linear_forward: bias is not (OUT)");
        for row in out.chunks_exact_mut(c_out) {
            for (o, bv) in row.iter_mut().zip(b) {
                *o += bv;
            }
        }
    }
}

/// `out = max(inp, 0)`, element by element.
/// Backward: `train::backward::ffn::relu_backward`.
pub fn relu_forward(out: &mut [f32], inp: &[f32]) {
    assert_eq!(out.len(), inp.len(), "relu_forward: lengths differ");
    for (o, &x) in out.iter_mut().zip(inp) {
        *o = x.max(0.0);
    }
}

/// Exact GELU `out = 0.5 · x · (1 + erf(x / √2))`, element by element, in f32 as PyTorch
/// computes it (erf from libm's `erff`, within an ulp or so), matching `F.gelu` within 1e-6.
/// The erf is `lanes::erf_lanes`: libm's `erff` bit for bit, eight elements at a time.
/// Backward: `train::backward::ffn::gelu_backward`.
pub fn gelu_forward(out: &mut [f32], inp: &[f32]) {
    assert_eq!(out.len(), inp.len(), "gelu_forward: lengths differ");
    let gelu = |x: f32, e: f32| 0.5 * x * (1.0 + e);
    let mut oc = out.chunks_exact_mut(LANES);
    let mut ic = inp.chunks_exact(LANES);
    for (o, x) in (&mut oc).zip(&mut ic) {
        let x: &[f32; LANES] = x.try_into().expect("chunks of LANES");
        let mut scaled = *x;
        for v in &mut scaled {
            *v *= std::f32::consts::FRAC_1_SQRT_2;
        }
        let e = erf_lanes(scaled);
        for l in 0..LANES {
            o[l] = gelu(x[l], e[l]);
        }
    }
    for (o, &x) in oc.into_remainder().iter_mut().zip(ic.remainder()) {
        *o = gelu(x, libm::erff(x * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// `√(2/π)`, the constant of GELU's tanh approximation.
pub const SQRT_2_OVER_PI: f32 = 0.797_884_6;

/// GELU's tanh approximation (GPT-2's `gelu_new`, PyTorch's `approximate="tanh"`):
/// `out = 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))`, element by element, in f32.
/// Backward: `train::backward::ffn::gelu_tanh_backward`.
pub fn gelu_tanh_forward(out: &mut [f32], inp: &[f32]) {
    assert_eq!(out.len(), inp.len(), "gelu_tanh_forward: lengths differ");
    for (o, &x) in out.iter_mut().zip(inp) {
        let u = SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x);
        *o = 0.5 * x * (1.0 + u.tanh());
    }
}

/// The configured non-linearity.
/// Backward: `train::backward::ffn::activation_backward`.
pub fn activation_forward(out: &mut [f32], inp: &[f32], act: Activation) {
    let _t = crate::profile::scope(crate::profile::Phase::Activation);
    assert_eq!(out.len(), inp.len(), "activation_forward: lengths differ");
    // Element by element: blocks of whole lane groups may run apart.
    crate::par::rows(out, LANES, LANES * ACTIVATION_WORK, |first, out| {
        let inp = &inp[first * LANES..first * LANES + out.len()];
        match act {
            Activation::Relu => relu_forward(out, inp),
            Activation::Gelu => gelu_forward(out, inp),
            Activation::GeluTanh => gelu_tanh_forward(out, inp),
        }
    });
}

/// About what one element of GELU costs, in multiply-adds (erf and its exponential), for
/// `crate::par`'s choice of whether to split the work.
pub const ACTIVATION_WORK: usize = 32;

/// What the FFN's backward pass needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FfnRecord {
    /// (N, F): `x·W₁ᵀ + b₁`, before the activation.
    pub pre: Vec<f32>,
    /// (N, F): `act(pre)` after dropout, the input of the second linear layer.
    pub hidden: Vec<f32>,
}

/// The FFN for N rows: `pre = inp·W₁ᵀ + b₁`, `hidden = act(pre) ⊙ mask`,
/// `out = hidden·W₂ᵀ + b₂`, with `w1 (F, C)`, `b1 (F)`, `w2 (C, F)`, `b2 (C)`.
/// `dropout_mask (N, F)` holds 0 or 1/(1 − p) per element (train mode) or is `None`.
/// Backward: `train::backward::ffn::ffn_backward`.
#[allow(clippy::too_many_arguments)]
pub fn ffn_forward(
    out: &mut [f32],
    saved: &mut FfnRecord,
    inp: &[f32],
    w1: &[f32],
    b1: &[f32],
    w2: &[f32],
    b2: &[f32],
    act: Activation,
    dropout_mask: Option<&[f32]>,
    n: usize,
    c: usize,
    f: usize,
) {
    saved.pre.resize(n * f, 0.0); // (N, F)
    saved.hidden.resize(n * f, 0.0); // (N, F)
    linear_forward(&mut saved.pre, inp, w1, Some(b1), n, c, f);
    activation_forward(&mut saved.hidden, &saved.pre, act);
    if let Some(mask) = dropout_mask {
        assert_eq!(mask.len(), n * f, "ffn_forward: dropout mask is not (N, F)");
        for (h, m) in saved.hidden.iter_mut().zip(mask) {
            *h *= m;
        }
    }
    linear_forward(out, &saved.hidden, w2, Some(b2), n, f, c);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_matches_the_erf_form_at_known_points() {
        // Values of 0.5·x·(1 + erf(x/√2)) from the normal CDF Φ: x·Φ(x).
        let xs = [0.0f32, 1.0, -1.0, 2.0, -3.0, 0.5];
        let want: [f64; 6] = [
            0.0,
            0.841_344_746_068_543,  // Φ(1) = 0.8413447461
            -0.158_655_253_931_457, // −(1 − Φ(1))
            1.954_499_736_103_642,  // 2 · Φ(2) = 2 · 0.9772498681
            -0.004_049_694_094_890, // −3 · (1 − Φ(3)) = −3 · 0.0013498980
            0.345_731_230_637_007,  // 0.5 · Φ(0.5) = 0.5 · 0.6914624613
        ];
        let mut out = vec![0.0f32; xs.len()];
        gelu_forward(&mut out, &xs);
        for ((o, w), x) in out.iter().zip(want).zip(xs) {
            assert!((*o as f64 - w).abs() < 1e-6, "gelu({x}) = {o}, want {w}");
        }
    }

    #[test]
    fn gelu_is_the_scalar_erf_form_bit_for_bit() {
        // Every element, the remainder past the last group of eight included.
        let ys: Vec<f32> = (0..1003).map(|i| (i as f32 - 501.0) * 0.013).collect();
        let mut out = vec![0.0f32; ys.len()];
        gelu_forward(&mut out, &ys);
        for (o, &x) in out.iter().zip(&ys) {
            let want = 0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2));
            assert_eq!(o.to_bits(), want.to_bits(), "gelu({x})");
        }
    }

    #[test]
    fn relu_zeroes_negatives_only() {
        let mut out = vec![9.0f32; 4];
        relu_forward(&mut out, &[-1.0, 0.0, 2.5, -0.1]);
        assert_eq!(out, vec![0.0, 0.0, 2.5, 0.0]);
    }

    #[test]
    fn linear_adds_the_bias_to_every_row() {
        let inp = [1.0f32, 2.0, 3.0, 4.0]; // (2, 2)
        let w = [1.0f32, 0.0, 1.0, 1.0, 0.0, 2.0]; // (3, 2)
        let mut out = vec![0.0f32; 6]; // (2, 3)
        linear_forward(&mut out, &inp, &w, Some(&[0.5, 0.0, -1.0]), 2, 2, 3);
        assert_eq!(out, vec![1.5, 3.0, 3.0, 3.5, 7.0, 7.0]);
        linear_forward(&mut out, &inp, &w, None, 2, 2, 3);
        assert_eq!(out, vec![1.0, 3.0, 4.0, 3.0, 7.0, 8.0]);
    }

    #[test]
    fn ffn_rows_are_independent_and_dropout_mask_scales_hidden_units() {
        let (c, f) = (2, 3);
        let w1 = [1.0f32, -1.0, 0.5, 0.5, -1.0, 2.0]; // (F, C)
        let b1 = [0.0f32, 0.1, 0.2]; // (F)
        let w2 = [1.0f32, 1.0, 1.0, 0.0, 2.0, -1.0]; // (C, F)
        let b2 = [0.0f32, 1.0]; // (C)
        let one = |x: [f32; 2], mask: Option<&[f32]>| {
            let mut out = vec![0.0f32; c];
            let mut saved = FfnRecord::default();
            ffn_forward(
                &mut out,
                &mut saved,
                &x,
                &w1,
                &b1,
                &w2,
                &b2,
                Activation::Relu,
                mask,
                1,
                c,
                f,
            );
            (out, saved)
        };
        let mut both = vec![0.0f32; 2 * c];
        let mut saved = FfnRecord::default();
        let inp = [0.3f32, -0.7, 1.5, 0.2]; // (2, C)
        ffn_forward(
            &mut both,
            &mut saved,
            &inp,
            &w1,
            &b1,
            &w2,
            &b2,
            Activation::Relu,
            None,
            2,
            c,
            f,
        );
        assert_eq!(&both[..c], one([0.3, -0.7], None).0.as_slice());
        assert_eq!(&both[c..], one([1.5, 0.2], None).0.as_slice());
        // Dropout scales the hidden units and leaves the pre-activations alone.
        let (_, plain) = one([0.3, -0.7], None);
        let (_, dropped) = one([0.3, -0.7], Some(&[2.0, 0.0, 2.0]));
        assert_eq!(plain.pre, dropped.pre);
        for k in 0..f {
            let m = [2.0, 0.0, 2.0][k];
            assert_eq!(dropped.hidden[k], plain.hidden[k] * m);
        }
    }
}
