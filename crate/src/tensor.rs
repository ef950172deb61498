//! A small row-major f32 tensor with shape checks, and the matrix products the model
//! needs, on matrixmultiply (nalgebra's backend, with a wasm SIMD kernel).

use crate::error::{Error, Result};

#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

impl Tensor {
    pub fn new(shape: Vec<usize>, data: Vec<f32>) -> Result<Self> {
        let n: usize = shape.iter().product();
        if n != data.len() {
            return Err(Error::Other(format!(
                "tensor of shape {shape:?} needs {n} values, got {}",
                data.len()
            )));
        }
        Ok(Tensor { shape, data })
    }

    pub fn zeros(shape: &[usize]) -> Self {
        Tensor {
            shape: shape.to_vec(),
            data: vec![0.0; shape.iter().product()],
        }
    }

    pub fn numel(&self) -> usize {
        self.data.len()
    }

    /// Size of the last dimension (1 for a scalar).
    pub fn cols(&self) -> usize {
        self.shape.last().copied().unwrap_or(1)
    }

    /// Number of rows when viewed as a matrix [numel / cols, cols].
    pub fn rows(&self) -> usize {
        self.numel() / self.cols().max(1)
    }

    pub fn row(&self, i: usize) -> &[f32] {
        let c = self.cols();
        &self.data[i * c..(i + 1) * c]
    }

    /// Largest absolute element-wise difference, NaN-aware (see [`max_abs_diff`]);
    /// shapes must match.
    pub fn max_abs_diff(&self, other: &Tensor) -> f32 {
        assert_eq!(self.shape, other.shape, "max_abs_diff of different shapes");
        max_abs_diff(&self.data, &other.data)
    }
}

/// Largest absolute element-wise difference of two equally long slices — the one
/// comparison every test and the page's GPU-vs-CPU parity use. It never hides a broken
/// number: a NaN on either side, or an infinity the other side does not share (+∞ against
/// −∞ or a finite value), is an infinite difference. Equal infinities (a masked score, −∞
/// on both sides) differ by 0.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "max_abs_diff of different lengths");
    a.iter()
        .zip(b)
        .map(|(&x, &y)| abs_diff(x, y))
        .fold(0.0, f32::max)
}

/// |x − y| with the rules of [`max_abs_diff`] (`f32::max` alone would drop a NaN).
fn abs_diff(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::INFINITY
    } else if x == y {
        0.0 // also equal infinities, whose difference would be NaN
    } else {
        (x - y).abs() // an infinity on one side only gives +∞ here
    }
}

/// The one general matrix product everything else calls: `out (M, N) = A (M, K) · B (K, N)`
/// into `out` (row stride N), which it overwrites, where A and B are read through strides
/// (row stride, column stride) so that transposed operands need no copy. matrixmultiply is
/// the kernel nalgebra uses for large matrices; it is called directly because nalgebra's
/// small-matrix path mishandles strided views.
#[allow(clippy::too_many_arguments)]
fn gemm_into(
    out: &mut [f32],
    a: &[f32],
    a_strides: (usize, usize),
    b: &[f32],
    b_strides: (usize, usize),
    m: usize,
    k: usize,
    n: usize,
) {
    assert_eq!(out.len(), m * n, "gemm: out is not (M, N)");
    if m == 0 || n == 0 || k == 0 {
        out.fill(0.0);
        return;
    }
    let last =
        |(rs, cs): (usize, usize), rows: usize, cols: usize| (rows - 1) * rs + (cols - 1) * cs;
    assert!(
        last(a_strides, m, k) < a.len() && last(b_strides, k, n) < b.len(),
        "gemm: operand too short"
    );
    // SAFETY: the asserts above prove every strided index of A (M, K) and B (K, N) is in
    // bounds, and that `out` is a contiguous (M, N) buffer with row stride N.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            a_strides.0 as isize,
            a_strides.1 as isize,
            b.as_ptr(),
            b_strides.0 as isize,
            b_strides.1 as isize,
            0.0,
            out.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// `out = a · wᵀ`: a is (M, K) row-major, w is (N, K) row-major (a PyTorch `Linear`
/// weight), out is (M, N) row-major. Every row of `out` is bit-identical to the product
/// of that row of `a` alone (the KV cache's guarantee; see `crate::matmul`).
pub fn matmul_nt(a: &[f32], w: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; m * n];
    crate::matmul::matmul_nt_into(&mut out, a, w, m, k, n);
    out
}

/// [`matmul_nt`] through the general strided product (matrixmultiply), whose blocking
/// and packing make the fastest large products this build has: the benchmark's peak.
pub fn matmul_nt_packed(a: &[f32], w: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    assert_eq!(a.len(), m * k, "matmul_nt: a is not (M, K)");
    assert_eq!(w.len(), n * k, "matmul_nt: w is not (N, K)");
    let mut out = vec![0.0f32; m * n];
    gemm_into(&mut out, a, (k, 1), w, (1, k), m, k, n);
    out
}

/// `out = a · b`: a is (M, K), b is (K, N), both row-major; out (M, N) row-major.
/// Blocks of rows of `out` may be computed apart (`crate::par`): matrixmultiply sums each
/// element over K in blocks whose bounds depend on K alone, so an element comes out the
/// same whichever rows are computed with it.
pub fn matmul_nn(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    assert_eq!(a.len(), m * k, "matmul_nn: a is not (M, K)");
    assert_eq!(b.len(), k * n, "matmul_nn: b is not (K, N)");
    let mut out = vec![0.0f32; m * n];
    crate::par::rows(&mut out, n, k * n, |first, block| {
        let rows = block.len().checked_div(n).unwrap_or(m);
        let a = &a[first * k..(first + rows) * k];
        gemm_into(block, a, (k, 1), b, (n, 1), rows, k, n);
    });
    out
}

/// `out = aᵀ · b`: a is (K, M), b is (K, N), both row-major; out (M, N) row-major.
/// The shape of a weight gradient: dW = dYᵀ · X. Blocks of rows of `out` may be computed
/// apart, as in [`matmul_nn`]: each element is summed over K the same way.
pub fn matmul_tn(a: &[f32], b: &[f32], k: usize, m: usize, n: usize) -> Vec<f32> {
    assert_eq!(a.len(), k * m, "matmul_tn: a is not (K, M)");
    assert_eq!(b.len(), k * n, "matmul_tn: b is not (K, N)");
    let mut out = vec![0.0f32; m * n];
    crate::par::rows(&mut out, n, k * n, |first, block| {
        let rows = block.len().checked_div(n).unwrap_or(m);
        // Columns first .. first + rows of a: the same strides, from column `first`.
        gemm_into(
            block,
            &a[first.min(a.len())..],
            (1, m),
            b,
            (n, 1),
            rows,
            k,
            n,
        );
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_abs_diff_counts_every_nan_and_unshared_infinity_as_infinite() {
        let inf = f32::INFINITY;
        // All-NaN against finite numbers (what a broken GPU kernel returns).
        assert_eq!(max_abs_diff(&[f32::NAN; 3], &[0.0, 1.0, 2.0]), inf);
        // One NaN among good numbers, on either side, and NaN against NaN.
        assert_eq!(max_abs_diff(&[0.0, f32::NAN], &[0.0, 0.5]), inf);
        assert_eq!(max_abs_diff(&[0.0, 0.5], &[0.0, f32::NAN]), inf);
        assert_eq!(max_abs_diff(&[f32::NAN], &[f32::NAN]), inf);
        // Infinities the other side does not share.
        assert_eq!(max_abs_diff(&[inf], &[1.0e30]), inf);
        assert_eq!(max_abs_diff(&[-inf], &[inf]), inf);
        assert_eq!(max_abs_diff(&[2.0], &[-inf]), inf);
        // Shared infinities (masked scores) agree; finite numbers as usual.
        assert_eq!(max_abs_diff(&[-inf, 1.0, inf], &[-inf, 1.25, inf]), 0.25);
        assert_eq!(max_abs_diff(&[], &[]), 0.0);
        let a = Tensor::new(vec![1, 2], vec![0.0, f32::NAN]).unwrap();
        let b = Tensor::new(vec![1, 2], vec![0.0, 0.0]).unwrap();
        assert_eq!(a.max_abs_diff(&b), inf);
    }

    fn naive_nt(a: &[f32], w: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
        let mut out = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                out[i * n + j] = (0..k).map(|p| a[i * k + p] * w[j * k + p]).sum();
            }
        }
        out
    }

    fn ramp(n: usize, s: f32) -> Vec<f32> {
        (0..n).map(|i| ((i as f32) * s).sin()).collect()
    }

    #[test]
    fn matmul_variants_agree_with_the_triple_loop() {
        for &(m, k, n) in &[(1, 1, 1), (3, 5, 7), (17, 33, 9), (64, 32, 96)] {
            let a = ramp(m * k, 0.37);
            let w = ramp(n * k, 0.11);
            let want = naive_nt(&a, &w, m, k, n);
            assert!(max_abs_diff(&matmul_nt(&a, &w, m, k, n), &want) < 1e-5);
            assert!(max_abs_diff(&matmul_nt_packed(&a, &w, m, k, n), &want) < 1e-5);
            // b = wᵀ as a (K, N) row-major buffer
            let mut b = vec![0.0; k * n];
            for j in 0..n {
                for p in 0..k {
                    b[p * n + j] = w[j * k + p];
                }
            }
            assert!(max_abs_diff(&matmul_nn(&a, &b, m, k, n), &want) < 1e-5);
            // at = aᵀ as a (K, M) buffer
            let mut at = vec![0.0; k * m];
            for i in 0..m {
                for p in 0..k {
                    at[p * m + i] = a[i * k + p];
                }
            }
            assert!(max_abs_diff(&matmul_tn(&at, &b, k, m, n), &want) < 1e-5);
        }
    }

    #[test]
    fn tensor_new_checks_the_element_count() {
        assert!(Tensor::new(vec![2, 3], vec![0.0; 5]).is_err());
        assert_eq!(Tensor::new(vec![2, 3], vec![0.0; 6]).unwrap().rows(), 2);
    }
}
