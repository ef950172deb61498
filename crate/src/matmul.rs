//! The forward pass's matrix product `out (M, N) = a (M, K) · wᵀ` with `w (N, K)` (a
//! PyTorch `Linear` weight), written so that **every output element is computed the same
//! way whatever M is**: row i of a product over M rows equals, bit for bit, the product of
//! row i alone. The KV cache relies on this: a decoding step multiplies one row, the full
//! recompute multiplies T rows, and their logits must be identical.
//!
//! Each element is the dot product of two contiguous rows of length K, summed in `L`
//! interleaved partial sums (element p of the rows goes to partial p mod L; the K mod L
//! elements past the last full group go, in order, to partials 0, 1, …), then the partials
//! are added pairwise in a fixed order. Blocking (R rows × C columns of outputs at a time,
//! columns in cache-sized panels) only decides which elements are computed together, never
//! how one element is summed. There is no packing: a one-row product (a decoding step's
//! GEMV) reads each weight once, which is all it can do.
//!
//! `L` is 4 in wasm (one simd128 f32x4 register per partial-sum vector) and 8 natively
//! (one AVX register where the CPU has AVX, chosen once at run time; two SSE registers
//! otherwise): a build sums in one order everywhere in its process.

/// Lanes of one partial-sum vector.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod lanes {
    use core::arch::wasm32::*;

    pub const L: usize = 4;
    pub type V = v128;

    #[inline(always)]
    pub fn zero() -> V {
        f32x4_splat(0.0)
    }

    /// # Safety
    /// `p .. p + L` must be readable.
    #[inline(always)]
    pub unsafe fn load(p: *const f32) -> V {
        unsafe { v128_load(p as *const v128) }
    }

    /// `acc + a·b`, lane by lane (a multiply, then an add: no fused rounding).
    #[inline(always)]
    pub fn madd(acc: V, a: V, b: V) -> V {
        f32x4_add(acc, f32x4_mul(a, b))
    }

    #[inline(always)]
    pub fn to_array(v: V) -> [f32; L] {
        [
            f32x4_extract_lane::<0>(v),
            f32x4_extract_lane::<1>(v),
            f32x4_extract_lane::<2>(v),
            f32x4_extract_lane::<3>(v),
        ]
    }

    /// The fixed pairwise order: (0 + 2) + (1 + 3).
    #[inline(always)]
    pub fn reduce(x: [f32; L]) -> f32 {
        (x[0] + x[2]) + (x[1] + x[3])
    }
}

/// Lanes of one partial-sum vector: plain arrays, which LLVM turns into SIMD registers.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod lanes {
    pub const L: usize = 8;
    pub type V = [f32; L];

    #[inline(always)]
    pub fn zero() -> V {
        [0.0; L]
    }

    /// # Safety
    /// `p .. p + L` must be readable.
    #[inline(always)]
    pub unsafe fn load(p: *const f32) -> V {
        unsafe { (p as *const V).read_unaligned() }
    }

    /// `acc + a·b`, lane by lane (a multiply, then an add: no fused rounding).
    #[inline(always)]
    pub fn madd(acc: V, a: V, b: V) -> V {
        std::array::from_fn(|l| acc[l] + a[l] * b[l])
    }

    #[inline(always)]
    pub fn to_array(v: V) -> [f32; L] {
        v
    }

    /// The fixed pairwise order: ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)).
    #[inline(always)]
    pub fn reduce(x: [f32; L]) -> f32 {
        let h = [x[0] + x[4], x[1] + x[5], x[2] + x[6], x[3] + x[7]];
        (h[0] + h[2]) + (h[1] + h[3])
    }
}

use lanes::{load, madd, reduce, to_array, zero, L, V};

/// `out[r][c] = a_r · w_c` for R rows of `a` and C rows of `w` (each K long, starting at
/// the given offsets). Every element is summed the way the module comment describes,
/// independently of R and C.
///
/// # Safety
/// `a[ai[r] .. ai[r] + k]` and `w[wi[c] .. wi[c] + k]` must be in bounds.
#[inline(always)]
unsafe fn dots<const R: usize, const C: usize>(
    a: &[f32],
    ai: [usize; R],
    w: &[f32],
    wi: [usize; C],
    k: usize,
) -> [[f32; C]; R] {
    let groups = k / L;
    let mut acc = [[zero(); C]; R];
    let (ap, wp) = (a.as_ptr(), w.as_ptr());
    for g in 0..groups {
        let o = g * L;
        // SAFETY: o + L ≤ k, so every load stays inside its row (caller's contract).
        let av: [V; R] = std::array::from_fn(|r| unsafe { load(ap.add(ai[r] + o)) });
        if R == 1 {
            // One row uses each column's vector once: load it where it is used, so that
            // the C accumulators, not C loaded vectors besides, hold the registers.
            for (acc_c, &wi_c) in acc[0].iter_mut().zip(&wi) {
                *acc_c = madd(*acc_c, av[0], unsafe { load(wp.add(wi_c + o)) });
            }
            continue;
        }
        let wv: [V; C] = std::array::from_fn(|c| unsafe { load(wp.add(wi[c] + o)) });
        for (acc_r, &a_r) in acc.iter_mut().zip(&av) {
            for (acc_rc, &w_c) in acc_r.iter_mut().zip(&wv) {
                *acc_rc = madd(*acc_rc, a_r, w_c);
            }
        }
    }
    // Loops, not `std::array::from_fn`, which wasm leaves as a call per block.
    let mut out = [[0.0f32; C]; R];
    for r in 0..R {
        for c in 0..C {
            let mut part = to_array(acc[r][c]);
            for (l, p) in (groups * L..k).enumerate() {
                // SAFETY: p < k (caller's contract).
                let (x, y) = unsafe { (*ap.add(ai[r] + p), *wp.add(wi[c] + p)) };
                part[l] += x * y;
            }
            out[r][c] = reduce(part);
        }
    }
    out
}

/// `[first, first + step, first + 2·step, …]`: the starts of N rows (a loop, see `dots`).
#[inline(always)]
fn offsets<const N: usize>(first: usize, step: usize) -> [usize; N] {
    let mut o = [0; N];
    for (c, x) in o.iter_mut().enumerate() {
        *x = first + c * step;
    }
    o
}

/// Outputs per block: R rows × C columns. Rows of `a` are taken two at a time, columns of
/// `w` four at a time; a row left alone (a GEMV has one) takes C1 columns at a time.
const R: usize = 2;
const C: usize = 4;
/// Columns per block of a single row (a decoding step's GEMV, or the last row of an odd M).
const C1: usize = 8;

/// Columns of `w` per panel: the panel's K·cols floats stay in the L1 cache while every
/// row of `a` passes over it.
fn panel_cols(k: usize) -> usize {
    let floats = 8 * 1024; // 32 KiB
    (floats / k.max(1)).clamp(C, 512) / C * C
}

/// The blocked loops; `inline(always)` so that each caller's target features apply.
#[inline(always)]
fn matmul_nt_impl(out: &mut [f32], a: &[f32], w: &[f32], m: usize, k: usize, n: usize) {
    let panel = panel_cols(k);
    let mut j0 = 0;
    while j0 < n {
        let j1 = (j0 + panel).min(n);
        let mut i = 0;
        while i < m {
            let rows = if m - i >= R { R } else { 1 };
            let mut j = j0;
            while j < j1 {
                // A single row takes twice the columns: its C1 sums are independent chains
                // of additions, which a one-row block of C would leave waiting on latency.
                let cols = match (rows, j1 - j) {
                    (1, left) if left >= C1 => C1,
                    (_, left) if left >= C => C,
                    _ => 1,
                };
                // SAFETY: i + rows ≤ m and j + cols ≤ n, and `a` is (M, K), `w` (N, K)
                // (checked by the caller), so every row read is in bounds.
                unsafe {
                    match (rows, cols) {
                        (R, C) => {
                            let v = dots::<R, C>(a, [i * k, (i + 1) * k], w, offsets(j * k, k), k);
                            for (r, vr) in v.iter().enumerate() {
                                out[(i + r) * n + j..(i + r) * n + j + C].copy_from_slice(vr);
                            }
                        }
                        (1, C1) => {
                            let v = dots::<1, C1>(a, [i * k], w, offsets(j * k, k), k);
                            out[i * n + j..i * n + j + C1].copy_from_slice(&v[0]);
                        }
                        (1, C) => {
                            let v = dots::<1, C>(a, [i * k], w, offsets(j * k, k), k);
                            out[i * n + j..i * n + j + C].copy_from_slice(&v[0]);
                        }
                        (R, _) => {
                            let v = dots::<R, 1>(a, [i * k, (i + 1) * k], w, [j * k], k);
                            out[i * n + j] = v[0][0];
                            out[(i + 1) * n + j] = v[1][0];
                        }
                        _ => {
                            out[i * n + j] = dots::<1, 1>(a, [i * k], w, [j * k], k)[0][0];
                        }
                    }
                }
                j += cols;
            }
            i += rows;
        }
        j0 = j1;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn matmul_nt_avx(out: &mut [f32], a: &[f32], w: &[f32], m: usize, k: usize, n: usize) {
    matmul_nt_impl(out, a, w, m, k, n)
}

/// `out (M, N) = a (M, K) · wᵀ` for `w (N, K)`, every element summed independently of M
/// (see the module comment). Overwrites `out`.
pub fn matmul_nt_into(out: &mut [f32], a: &[f32], w: &[f32], m: usize, k: usize, n: usize) {
    assert_eq!(a.len(), m * k, "matmul_nt: a is not (M, K)");
    assert_eq!(w.len(), n * k, "matmul_nt: w is not (N, K)");
    assert_eq!(out.len(), m * n, "matmul_nt: out is not (M, N)");
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX (checked just above).
            unsafe { matmul_nt_avx(out, a, w, m, k, n) };
            return;
        }
    }
    matmul_nt_impl(out, a, w, m, k, n)
}

/// `out[j] = a[ai .. ai + k] · w[w0 + j·stride .. w0 + j·stride + k]` for every j: one
/// row against N rows of `w` that sit `stride` floats apart (attention: one query head
/// against the same head of every key row, heads interleaved in rows of C). Each element
/// is summed exactly as [`matmul_nt_into`] sums it, independently of N.
///
/// Panics when a row runs past the end of `a` or `w`.
pub fn dot_rows_into(
    out: &mut [f32],
    a: &[f32],
    ai: usize,
    w: &[f32],
    w0: usize,
    stride: usize,
    k: usize,
) {
    let n = out.len();
    assert!(ai + k <= a.len(), "dot_rows: the row of a is out of bounds");
    if n > 0 {
        assert!(
            w0 + (n - 1) * stride + k <= w.len(),
            "dot_rows: a row of w is out of bounds"
        );
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX (checked just above); bounds are checked above.
            unsafe { dot_rows_avx(out, a, ai, w, w0, stride, k) };
            return;
        }
    }
    // SAFETY: bounds are checked above.
    unsafe { dot_rows_impl(out, a, ai, w, w0, stride, k) }
}

/// [`dot_rows_into`] for two rows of `a` at once (at `ai0` and `ai1`) against the same N
/// rows of `w`: `out0[j] = a[ai0 ..]·w_j`, `out1[j] = a[ai1 ..]·w_j`, each element summed
/// exactly as [`dot_rows_into`] (and [`matmul_nt_into`]) sums it; each row of `w` is read
/// once for both (attention: two query rows of a head against its keys).
///
/// Panics when the outputs differ in length or a row runs past the end of `a` or `w`.
#[allow(clippy::too_many_arguments)]
pub fn dot_rows2_into(
    out0: &mut [f32],
    out1: &mut [f32],
    a: &[f32],
    ai0: usize,
    ai1: usize,
    w: &[f32],
    w0: usize,
    stride: usize,
    k: usize,
) {
    let n = out0.len();
    assert_eq!(out1.len(), n, "dot_rows2: the outputs differ in length");
    assert!(
        ai0.max(ai1) + k <= a.len(),
        "dot_rows2: a row of a is out of bounds"
    );
    if n > 0 {
        assert!(
            w0 + (n - 1) * stride + k <= w.len(),
            "dot_rows2: a row of w is out of bounds"
        );
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX (checked just above); bounds are checked above.
            unsafe { dot_rows2_avx(out0, out1, a, [ai0, ai1], w, w0, stride, k) };
            return;
        }
    }
    // SAFETY: bounds are checked above.
    unsafe { dot_rows2_impl(out0, out1, a, [ai0, ai1], w, w0, stride, k) }
}

/// # Safety
/// `a[ai[r] .. ai[r] + k]` and every `w[w0 + j·stride ..][.. k]`, j < out0.len(), are in
/// bounds, and `out1` is as long as `out0`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn dot_rows2_impl(
    out0: &mut [f32],
    out1: &mut [f32],
    a: &[f32],
    ai: [usize; R],
    w: &[f32],
    w0: usize,
    stride: usize,
    k: usize,
) {
    let n = out0.len();
    let mut j = 0;
    while j + C <= n {
        // SAFETY: the caller's contract.
        let v = unsafe { dots::<R, C>(a, ai, w, offsets(w0 + j * stride, stride), k) };
        out0[j..j + C].copy_from_slice(&v[0]);
        out1[j..j + C].copy_from_slice(&v[1]);
        j += C;
    }
    while j < n {
        // SAFETY: the caller's contract.
        let v = unsafe { dots::<R, 1>(a, ai, w, [w0 + j * stride], k) };
        out0[j] = v[0][0];
        out1[j] = v[1][0];
        j += 1;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[allow(clippy::too_many_arguments)]
unsafe fn dot_rows2_avx(
    out0: &mut [f32],
    out1: &mut [f32],
    a: &[f32],
    ai: [usize; R],
    w: &[f32],
    w0: usize,
    stride: usize,
    k: usize,
) {
    // SAFETY: the caller's contract.
    unsafe { dot_rows2_impl(out0, out1, a, ai, w, w0, stride, k) }
}

/// # Safety
/// `a[ai .. ai + k]` and every `w[w0 + j·stride ..][.. k]`, j < out.len(), are in bounds.
#[inline(always)]
unsafe fn dot_rows_impl(
    out: &mut [f32],
    a: &[f32],
    ai: usize,
    w: &[f32],
    w0: usize,
    stride: usize,
    k: usize,
) {
    let n = out.len();
    let mut j = 0;
    while j + C <= n {
        // SAFETY: the caller's contract.
        let v = unsafe { dots::<1, C>(a, [ai], w, offsets(w0 + j * stride, stride), k) };
        out[j..j + C].copy_from_slice(&v[0]);
        j += C;
    }
    while j < n {
        // SAFETY: the caller's contract.
        out[j] = unsafe { dots::<1, 1>(a, [ai], w, [w0 + j * stride], k) }[0][0];
        j += 1;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[allow(clippy::too_many_arguments)]
unsafe fn dot_rows_avx(
    out: &mut [f32],
    a: &[f32],
    ai: usize,
    w: &[f32],
    w0: usize,
    stride: usize,
    k: usize,
) {
    // SAFETY: the caller's contract.
    unsafe { dot_rows_impl(out, a, ai, w, w0, stride, k) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(n: usize, s: f32) -> Vec<f32> {
        (0..n).map(|i| ((i as f32) * s).sin()).collect()
    }

    #[test]
    fn every_row_of_a_product_equals_that_row_alone_bit_for_bit() {
        for &(m, k, n) in &[
            (1, 1, 1),
            (3, 5, 7),
            (5, 64, 192),
            (17, 33, 9),
            (64, 256, 64),
            (9, 3000, 5),
        ] {
            let a = ramp(m * k, 0.37);
            let w = ramp(n * k, 0.11);
            let mut all = vec![0.0; m * n];
            matmul_nt_into(&mut all, &a, &w, m, k, n);
            for i in 0..m {
                let mut one = vec![0.0; n];
                matmul_nt_into(&mut one, &a[i * k..(i + 1) * k], &w, 1, k, n);
                assert_eq!(
                    one.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    all[i * n..(i + 1) * n]
                        .iter()
                        .map(|x| x.to_bits())
                        .collect::<Vec<_>>(),
                    "row {i} of ({m}, {k}, {n})"
                );
            }
        }
    }

    #[test]
    fn strided_dot_rows_equal_the_product_of_the_gathered_rows_bit_for_bit() {
        // Heads of width k inside rows of width `stride`, as attention reads them.
        for &(n, k, stride, col) in &[(1, 16, 64, 0), (7, 16, 64, 48), (9, 5, 13, 8), (4, 8, 8, 0)]
        {
            let a = ramp(k + 3, 0.21);
            let w = ramp(n * stride, 0.17);
            let gathered: Vec<f32> = (0..n)
                .flat_map(|j| w[j * stride + col..j * stride + col + k].to_vec())
                .collect();
            let mut want = vec![0.0; n];
            matmul_nt_into(&mut want, &a[3..3 + k], &gathered, 1, k, n);
            let mut got = vec![0.0; n];
            dot_rows_into(&mut got, &a, 3, &w, col, stride, k);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "({n}, {k}, {stride}, {col})");
            // Two rows at once: row 3 as above, beside row 0, each bit for bit.
            let mut want0 = vec![0.0; n];
            matmul_nt_into(&mut want0, &a[..k], &gathered, 1, k, n);
            let (mut got0, mut got3) = (vec![0.0; n], vec![0.0; n]);
            dot_rows2_into(&mut got0, &mut got3, &a, 0, 3, &w, col, stride, k);
            assert_eq!(
                bits(&got3),
                bits(&want),
                "two rows ({n}, {k}, {stride}, {col})"
            );
            assert_eq!(
                bits(&got0),
                bits(&want0),
                "two rows ({n}, {k}, {stride}, {col})"
            );
        }
    }

    #[test]
    fn products_agree_with_f64_dot_products() {
        for &(m, k, n) in &[(1, 1, 1), (2, 7, 5), (33, 65, 130), (1, 256, 64)] {
            let a = ramp(m * k, 0.29);
            let w = ramp(n * k, 0.13);
            let mut out = vec![0.0; m * n];
            matmul_nt_into(&mut out, &a, &w, m, k, n);
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k)
                        .map(|p| a[i * k + p] as f64 * w[j * k + p] as f64)
                        .sum();
                    let got = out[i * n + j] as f64;
                    assert!(
                        (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                        "({i}, {j}) of ({m}, {k}, {n}): {got} vs {want}"
                    );
                }
            }
        }
    }
}
