//! Backward of `model/ffn.rs`: linear layers, ReLU, GELU and the position-wise FFN.
//! Each function undoes its forward namesake; gradients are ADDED to the `d*` buffers
//! (zeroed once per step by the caller).

use crate::config::Activation;
use crate::lanes::{erf_lanes, LANES};
use crate::model::ffn::{FfnRecord, ACTIVATION_WORK};
use crate::tensor::{matmul_nn, matmul_tn};

/// Backward of `linear_forward`: `out (N, OUT) = inp (N, IN) · weightᵀ + bias`.
/// `dinp` is skipped when `None` (an input that needs no gradient, e.g. token ids upstream).
#[allow(clippy::too_many_arguments)]
pub fn linear_backward(
    dinp: Option<&mut [f32]>,
    dweight: &mut [f32],
    dbias: Option<&mut [f32]>,
    dout: &[f32],
    inp: &[f32],
    weight: &[f32],
    n: usize,
    c_in: usize,
    c_out: usize,
) {
    assert_eq!(
        dout.len(),
        n * c_out,
        "linear_backward: dout is not (N, OUT)"
    );
    assert_eq!(inp.len(), n * c_in, "linear_backward: inp is not (N, IN)");
    assert_eq!(
        dweight.len(),
        c_out * c_in,
        "linear_backward: dweight is not (OUT, IN)"
    );
    if let Some(dinp) = dinp {
        // forward: out = inp · weightᵀ  →  dinp += dout · weight
        let di = matmul_nn(dout, weight, n, c_out, c_in); // (N, IN)
        for (a, b) in dinp.iter_mut().zip(&di) {
            *a += b;
        }
    }
    // forward: out[n, o] = Σ_i inp[n, i] · weight[o, i]  →  dweight += doutᵀ · inp
    let dw = matmul_tn(dout, inp, n, c_out, c_in); // (OUT, IN)
    for (a, b) in dweight.iter_mut().zip(&dw) {
        *a += b;
    }
    if let Some(db) = dbias {
        // forward: out[n] += bias  →  dbias += Σ_n dout[n]
        for row in dout.chunks_exact(c_out) {
            for (a, b) in db.iter_mut().zip(row) {
                *a += b;
            }
        }
    }
}

/// Backward of `relu_forward`: `out = max(inp, 0)` passes the gradient where inp > 0.
pub fn relu_backward(dinp: &mut [f32], dout: &[f32], inp: &[f32]) {
    for ((d, &g), &x) in dinp.iter_mut().zip(dout).zip(inp) {
        if x > 0.0 {
            *d += g;
        }
    }
}

/// Backward of `gelu_forward`: `out = x·Φ(x)` has derivative `Φ(x) + x·φ(x)`, with Φ the
/// normal CDF `0.5·(1 + erf(x/√2))` and φ its density; in f32 like the forward. The erf is
/// libm's `erff` (`lanes::erf_lanes`, eight at a time), the exponential `f32::exp`
/// ([`platform_exp_lanes`]).
pub fn gelu_backward(dinp: &mut [f32], dout: &[f32], inp: &[f32]) {
    // 1/√(2π)
    let inv_sqrt_2pi = std::f32::consts::FRAC_2_SQRT_PI * std::f32::consts::FRAC_1_SQRT_2 * 0.5;
    let slope = |x: f32, erf: f32, exp: f32| {
        let cdf = 0.5 * (1.0 + erf);
        let pdf = inv_sqrt_2pi * exp;
        cdf + x * pdf
    };
    let mut dc = dinp.chunks_exact_mut(LANES);
    let mut gc = dout.chunks_exact(LANES);
    let mut xc = inp.chunks_exact(LANES);
    for ((d, g), x) in (&mut dc).zip(&mut gc).zip(&mut xc) {
        let x: &[f32; LANES] = x.try_into().expect("chunks of LANES");
        // Plain loops, not `array::map`, which wasm keeps as a call (see `lanes`).
        let (mut scaled, mut square) = (*x, *x);
        for (s, q) in scaled.iter_mut().zip(&mut square) {
            *s *= std::f32::consts::FRAC_1_SQRT_2;
            *q = -0.5 * *q * *q;
        }
        let erf = erf_lanes(scaled);
        let exp = platform_exp_lanes(square);
        for l in 0..LANES {
            d[l] += g[l] * slope(x[l], erf[l], exp[l]);
        }
    }
    let rest = dc.into_remainder().iter_mut().zip(gc.remainder());
    for ((d, &g), &x) in rest.zip(xc.remainder()) {
        let erf = libm::erff(x * std::f32::consts::FRAC_1_SQRT_2);
        *d += g * slope(x, erf, (-0.5 * x * x).exp());
    }
}

/// `f32::exp` of eight values, bit for bit. In wasm `f32::exp` is compiler-builtins' copy
/// of libm's `expf` (equal to `libm::expf` on every one of the 2³² inputs with this
/// toolchain), so it is [`exp_lanes`]; natively it is the C library's `expf`, called once
/// a value.
#[inline]
fn platform_exp_lanes(x: [f32; LANES]) -> [f32; LANES] {
    #[cfg(target_arch = "wasm32")]
    {
        crate::lanes::exp_lanes(x)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        x.map(f32::exp)
    }
}

/// Backward of `gelu_tanh_forward`: with `u = √(2/π)·(x + 0.044715·x³)`,
/// `out = 0.5·x·(1 + tanh u)` has derivative
/// `0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·√(2/π)·(1 + 3·0.044715·x²)`.
pub fn gelu_tanh_backward(dinp: &mut [f32], dout: &[f32], inp: &[f32]) {
    use crate::model::ffn::SQRT_2_OVER_PI;
    for ((d, &g), &x) in dinp.iter_mut().zip(dout).zip(inp) {
        let t = (SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)).tanh();
        let du = SQRT_2_OVER_PI * (1.0 + 3.0 * 0.044_715 * x * x);
        *d += g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du);
    }
}

/// Backward of `activation_forward`.
pub fn activation_backward(dinp: &mut [f32], dout: &[f32], inp: &[f32], act: Activation) {
    assert!(
        dinp.len() == dout.len() && dinp.len() == inp.len(),
        "activation_backward: lengths differ"
    );
    // Element by element: blocks of whole lane groups may run apart.
    crate::par::rows(dinp, LANES, LANES * ACTIVATION_WORK, |first, dinp| {
        let at = first * LANES..first * LANES + dinp.len();
        let (dout, inp) = (&dout[at.clone()], &inp[at]);
        match act {
            Activation::Relu => relu_backward(dinp, dout, inp),
            Activation::Gelu => gelu_backward(dinp, dout, inp),
            Activation::GeluTanh => gelu_tanh_backward(dinp, dout, inp),
        }
    });
}

/// Gradients of the FFN's four tensors.
pub struct FfnGrads<'a> {
    /// (F, C)
    pub w1: &'a mut [f32],
    /// (F)
    pub b1: &'a mut [f32],
    /// (C, F)
    pub w2: &'a mut [f32],
    /// (C)
    pub b2: &'a mut [f32],
}

/// Backward of `ffn_forward` for N rows: `pre = inp·W₁ᵀ + b₁`, `hidden = act(pre) ⊙ mask`,
/// `out = hidden·W₂ᵀ + b₂`.
#[allow(clippy::too_many_arguments)]
pub fn ffn_backward(
    dinp: &mut [f32],
    grads: FfnGrads,
    dout: &[f32],
    inp: &[f32],
    saved: &FfnRecord,
    w1: &[f32],
    w2: &[f32],
    act: Activation,
    dropout_mask: Option<&[f32]>,
    n: usize,
    c: usize,
    f: usize,
) {
    // forward: out = hidden · W₂ᵀ + b₂
    let mut dhidden = vec![0.0f32; n * f]; // (N, F)
    linear_backward(
        Some(&mut dhidden),
        grads.w2,
        Some(grads.b2),
        dout,
        &saved.hidden,
        w2,
        n,
        f,
        c,
    );
    // forward: hidden *= mask
    if let Some(mask) = dropout_mask {
        for (d, m) in dhidden.iter_mut().zip(mask) {
            *d *= m;
        }
    }
    // forward: hidden = act(pre)
    let mut dpre = vec![0.0f32; n * f]; // (N, F)
    activation_backward(&mut dpre, &dhidden, &saved.pre, act);
    // forward: pre = inp · W₁ᵀ + b₁
    linear_backward(
        Some(dinp),
        grads.w1,
        Some(grads.b1),
        &dpre,
        inp,
        w1,
        n,
        c,
        f,
    );
}
