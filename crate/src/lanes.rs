//! libm's `erff` and `expf`, eight values at a time, bit for bit.
//!
//! The CPU reference computes GELU's erf with `libm::erff` and the attention softmax's
//! exponentials with `libm::expf`. Called one value at a time they are scalar code (and in
//! wasm, a call each). Here the common range of each is evaluated exactly as libm
//! evaluates it — the same constants, the same f32 operations in the same order (Rust
//! never fuses a multiply and an add) — for all lanes at once with no branch, which the
//! compiler turns into SIMD (AVX natively, simd128 in wasm); every other lane (special
//! values, the ranges that need more) is then computed by libm itself. So the results are
//! libm's, to the bit, in every build.

/// Values per call.
pub const LANES: usize = 8;

// libm's s_erff.c constants (as written there).
#[allow(clippy::excessive_precision)]
mod erf_consts {
    // libm's s_erff.c constants: erf on [0, 0.84375] …
    pub const PP0: f32 = 1.2837916613e-01;
    pub const PP1: f32 = -3.2504209876e-01;
    pub const PP2: f32 = -2.8481749818e-02;
    pub const PP3: f32 = -5.7702702470e-03;
    pub const PP4: f32 = -2.3763017452e-05;
    pub const QQ1: f32 = 3.9791721106e-01;
    pub const QQ2: f32 = 6.5022252500e-02;
    pub const QQ3: f32 = 5.0813062117e-03;
    pub const QQ4: f32 = 1.3249473704e-04;
    pub const QQ5: f32 = -3.9602282413e-06;
    // … and on [0.84375, 1.25].
    pub const ERX: f32 = 8.4506291151e-01;
    pub const PA0: f32 = -2.3621185683e-03;
    pub const PA1: f32 = 4.1485610604e-01;
    pub const PA2: f32 = -3.7220788002e-01;
    pub const PA3: f32 = 3.1834661961e-01;
    pub const PA4: f32 = -1.1089469492e-01;
    pub const PA5: f32 = 3.5478305072e-02;
    pub const PA6: f32 = -2.1663755178e-03;
    pub const QA1: f32 = 1.0642088205e-01;
    pub const QA2: f32 = 5.4039794207e-01;
    pub const QA3: f32 = 7.1828655899e-02;
    pub const QA4: f32 = 1.2617121637e-01;
    pub const QA5: f32 = 1.3637083583e-02;
    pub const QA6: f32 = 1.1984500103e-02;
}
use erf_consts::*;

/// The two rational functions of libm's `erff` for every lane: `small` is erf's value for
/// 2⁻²⁸ ≤ |x| < 0.84375, `mid` for 0.84375 ≤ |x| < 1.25 (other lanes hold values that
/// are not used). The same f32 operations in the same order as libm, lane by lane:
/// [`erf_rational_f4`] in wasm, [`erf_rational`] elsewhere.
#[inline(always)]
fn rational(x: &[f32; LANES]) -> ([f32; LANES], [f32; LANES]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        erf_rational_f4(x)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        erf_rational(x)
    }
}

/// [`rational`] as plain loops over arrays (not `std::array::from_fn`, which wasm leaves
/// as a call). Natively the compiler keeps them scalar: sixteen independent chains, which
/// measured faster there than the same operations in SSE registers.
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
#[inline(always)]
fn erf_rational(x: &[f32; LANES]) -> ([f32; LANES], [f32; LANES]) {
    let mut small = [0.0f32; LANES];
    for (sm, &x) in small.iter_mut().zip(x) {
        let z = x * x;
        let r = PP0 + z * (PP1 + z * (PP2 + z * (PP3 + z * PP4)));
        let s = 1.0 + z * (QQ1 + z * (QQ2 + z * (QQ3 + z * (QQ4 + z * QQ5))));
        let y = r / s;
        *sm = x + x * y;
    }
    let mut mid = [0.0f32; LANES];
    for (md, &x) in mid.iter_mut().zip(x) {
        let s = x.abs() - 1.0;
        let p = PA0 + s * (PA1 + s * (PA2 + s * (PA3 + s * (PA4 + s * (PA5 + s * PA6)))));
        let q = 1.0 + s * (QA1 + s * (QA2 + s * (QA3 + s * (QA4 + s * (QA5 + s * QA6)))));
        let y = 1.0 - (1.0 - ERX - p / q);
        *md = if x.is_sign_negative() { -y } else { y };
    }
    (small, mid)
}

/// [`rational`] four lanes at a time through [`F4`]: what wasm runs, where the compiler
/// leaves the loops of [`erf_rational`] scalar. Natively `F4` is an array, so the tests
/// check this very expression against libm.
#[cfg_attr(
    not(all(target_arch = "wasm32", target_feature = "simd128")),
    allow(dead_code)
)]
#[inline(always)]
fn erf_rational_f4(x: &[f32; LANES]) -> ([f32; LANES], [f32; LANES]) {
    let (mut small, mut mid) = ([0.0f32; LANES], [0.0f32; LANES]);
    let k = F4::splat;
    for q4 in 0..LANES / 4 {
        let at = q4 * 4..q4 * 4 + 4;
        let x = F4::load(&x[at.clone()]);
        let z = x * x;
        let r = k(PP0) + z * (k(PP1) + z * (k(PP2) + z * (k(PP3) + z * k(PP4))));
        let s = k(1.0) + z * (k(QQ1) + z * (k(QQ2) + z * (k(QQ3) + z * (k(QQ4) + z * k(QQ5)))));
        let y = r / s;
        (x + x * y).store(&mut small[at.clone()]);
        let s = x.abs() - k(1.0);
        let p = k(PA0)
            + s * (k(PA1) + s * (k(PA2) + s * (k(PA3) + s * (k(PA4) + s * (k(PA5) + s * k(PA6))))));
        let q = k(1.0)
            + s * (k(QA1) + s * (k(QA2) + s * (k(QA3) + s * (k(QA4) + s * (k(QA5) + s * k(QA6))))));
        let y = k(1.0) - (k(1.0) - k(ERX) - p / q);
        y.negated_where_negative(x).store(&mut mid[at]);
    }
    (small, mid)
}

/// `libm::erff` of eight values, bit for bit: |x| < 1.25 — nearly every pre-activation
/// of a GELU — is evaluated as libm evaluates it (the same rational functions, the same
/// operations in the same order, all f32), for all lanes at once with no branch (four lanes
/// to a simd128 register in wasm); the other lanes (tails that need `expf`, tiny values,
/// NaN and infinities) are then computed by `libm::erff` itself.
#[inline]
pub fn erf_lanes(x: [f32; LANES]) -> [f32; LANES] {
    let (small, mid) = rational(&x);
    select(&x, small, mid)
}

/// erf of each lane from its range: `small` or `mid` (from [`rational`]), else libm.
#[inline(always)]
fn select(x: &[f32; LANES], small: [f32; LANES], mid: [f32; LANES]) -> [f32; LANES] {
    let mut out = [0.0f32; LANES];
    for l in 0..LANES {
        let ix = x[l].to_bits() & 0x7fff_ffff;
        out[l] = if (0x3180_0000..0x3f58_0000).contains(&ix) {
            small[l] // 2⁻²⁸ ≤ |x| < 0.84375
        } else if (0x3f58_0000..0x3fa0_0000).contains(&ix) {
            mid[l] // 0.84375 ≤ |x| < 1.25
        } else {
            libm::erff(x[l])
        };
    }
    out
}

/// Four f32 lanes with IEEE addition, subtraction, multiplication and division lane by lane
/// (never fused): a simd128 register in wasm, an array elsewhere.
#[derive(Clone, Copy)]
struct F4(
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))] core::arch::wasm32::v128,
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))] [f32; 4],
);

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod f4_ops {
    use super::F4;
    use core::arch::wasm32::*;

    impl F4 {
        #[inline(always)]
        pub fn splat(x: f32) -> F4 {
            F4(f32x4_splat(x))
        }
        /// The first four values of `x`.
        #[inline(always)]
        pub fn load(x: &[f32]) -> F4 {
            let x: &[f32; 4] = x[..4].try_into().expect("four lanes");
            // SAFETY: `x` is four readable f32 (16 bytes); v128.load needs no alignment.
            F4(unsafe { v128_load(x.as_ptr() as *const v128) })
        }
        /// Into the first four values of `out`.
        #[inline(always)]
        pub fn store(self, out: &mut [f32]) {
            let o: &mut [f32; 4] = (&mut out[..4]).try_into().expect("four lanes");
            // SAFETY: `o` is four writable f32 (16 bytes); v128.store needs no alignment.
            unsafe { v128_store(o.as_mut_ptr() as *mut v128, self.0) }
        }
        #[inline(always)]
        pub fn abs(self) -> F4 {
            F4(f32x4_abs(self.0))
        }
        /// `-self` in the lanes where `sign` has its sign bit set, `self` elsewhere.
        #[inline(always)]
        pub fn negated_where_negative(self, sign: F4) -> F4 {
            F4(v128_xor(self.0, v128_and(sign.0, u32x4_splat(0x8000_0000))))
        }
    }

    macro_rules! op {
        ($tr:ident, $f:ident, $simd:ident) => {
            impl core::ops::$tr for F4 {
                type Output = F4;
                #[inline(always)]
                fn $f(self, o: F4) -> F4 {
                    F4($simd(self.0, o.0))
                }
            }
        };
    }
    op!(Add, add, f32x4_add);
    op!(Sub, sub, f32x4_sub);
    op!(Mul, mul, f32x4_mul);
    op!(Div, div, f32x4_div);
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[allow(dead_code)] // natively only the tests run `erf_rational_f4`
mod f4_ops {
    use super::F4;

    impl F4 {
        pub fn splat(x: f32) -> F4 {
            F4([x; 4])
        }
        /// The first four values of `x`.
        pub fn load(x: &[f32]) -> F4 {
            F4([x[0], x[1], x[2], x[3]])
        }
        /// Into the first four values of `out`.
        pub fn store(self, out: &mut [f32]) {
            out[..4].copy_from_slice(&self.0);
        }
        pub fn abs(self) -> F4 {
            F4(self.0.map(f32::abs))
        }
        /// `-self` in the lanes where `sign` has its sign bit set, `self` elsewhere.
        pub fn negated_where_negative(self, sign: F4) -> F4 {
            F4(std::array::from_fn(|l| {
                f32::from_bits(self.0[l].to_bits() ^ (sign.0[l].to_bits() & 0x8000_0000))
            }))
        }
    }

    macro_rules! op {
        ($tr:ident, $f:ident, $o:tt) => {
            impl core::ops::$tr for F4 {
                type Output = F4;
                fn $f(self, o: F4) -> F4 {
                    F4(std::array::from_fn(|l| self.0[l] $o o.0[l]))
                }
            }
        };
    }
    op!(Add, add, +);
    op!(Sub, sub, -);
    op!(Mul, mul, *);
    op!(Div, div, /);
}

/// `libm::expf` of eight values, bit for bit: 2⁻¹⁴ < |x| < 87 (every exponential of a
/// softmax but the maximum's, which is `exp(0)`) by libm's argument reduction and
/// polynomial, |x| ≤ 2⁻¹⁴ as `1 + x` and x = −∞ (a masked score) as 0, as libm returns
/// them, all lanes at once with no branch per lane; other lanes (NaN, |x| ≥ 87) are
/// `libm::expf`.
#[inline]
#[allow(clippy::excessive_precision)] // libm's constants, as written there
pub fn exp_lanes(x: [f32; LANES]) -> [f32; LANES] {
    const LN2_HI: f32 = 6.9314575195e-01;
    const LN2_LO: f32 = 1.4286067653e-06;
    const INV_LN2: f32 = 1.4426950216e+00;
    const P1: f32 = 1.6666625440e-1;
    const P2: f32 = -2.7667332906e-3;
    // Plain loops over arrays (see `erf_rational`), which wasm gets as simd128 code.
    let mut hx = [0u32; LANES];
    for (h, &x) in hx.iter_mut().zip(&x) {
        *h = x.to_bits() & 0x7fff_ffff;
    }
    let mut out = [0.0f32; LANES];
    for ((o, &x), &hx) in out.iter_mut().zip(&x).zip(&hx) {
        let neg = x.is_sign_negative();
        // libm: k = round(x/ln2) above 1.5·ln2, ±1 above 0.5·ln2, else 0. Every candidate
        // is computed and one is selected, so that no lane branches.
        let half = if neg { -0.5 } else { 0.5 };
        let rounded = (INV_LN2 * x + half) as i32;
        let one = if neg { -1 } else { 1 };
        let k = if hx > 0x3f85_1592 {
            rounded
        } else if hx > 0x3eb1_7218 {
            one
        } else {
            0
        };
        let kf = k as f32;
        // With k = 0 these are hi = x, lo = 0 and x unchanged, as libm has them.
        let hi = x - kf * LN2_HI;
        let lo = kf * LN2_LO;
        let xr = hi - lo;
        let xx = xr * xr;
        let c = xr - xx * (P1 + xx * P2);
        let y = 1. + (xr * c / (2. - c) - lo + hi);
        // scalbnf(y, k) for |k| ≤ 126: one multiplication by 2^k (exact for k = 0). (The
        // clamp only keeps lanes outside the range, answered below, in bounds.)
        let main = y * f32::from_bits(((0x7f + k.clamp(-126, 127)) as u32) << 23);
        let tiny = 1. + x; // libm's branch for |x| ≤ 2⁻¹⁴
        let main_or_tiny = if hx <= 0x3900_0000 { tiny } else { main };
        // −∞ (a masked score) is 0; 2⁻¹⁴ < |x| < 87 is `main` (other lanes: below).
        *o = if x == f32::NEG_INFINITY {
            0.0
        } else {
            main_or_tiny
        };
    }
    let special = |l: usize| hx[l] >= 0x42ae_0000 && x[l] != f32::NEG_INFINITY;
    if (0..LANES).fold(false, |any, l| any | special(l)) {
        for l in 0..LANES {
            if special(l) {
                out[l] = libm::expf(x[l]);
            }
        }
    }
    out
}

/// The largest of `xs`, −∞ for none, NaN ignored: the value of
/// `xs.fold(−∞, f32::max)` (±0 may come out with either sign, as there; every caller
/// subtracts it or compares with it, where the sign of a zero does not show). In wasm
/// `f32::max` is a call to `fmaxf` per value, this a comparison. Eight running maxima,
/// value j going to lane j mod 8, then the lanes': one chain of comparisons, each waiting
/// on the one before, took a third of a training step's softmax; the largest value is the
/// same in any order.
#[inline]
pub fn max_of(xs: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let mut groups = xs.chunks_exact(LANES);
    for g in &mut groups {
        for (m, &x) in lanes.iter_mut().zip(g) {
            if x > *m {
                *m = x;
            }
        }
    }
    let mut m = f32::NEG_INFINITY;
    for &x in lanes.iter().chain(groups.remainder()) {
        if x > m {
            m = x;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 1021st f32 bit pattern (both signs, every range: tiny, normal, the tails, NaN
    /// and the infinities), every f32 in [−2, 2] with its last 8 bits zero, and `extra`,
    /// eight at a time in every lane: `f` must equal `want` to the bit.
    fn check(f: fn([f32; LANES]) -> [f32; LANES], want: fn(f32) -> f32, extra: &[f32]) {
        let mut xs: Vec<f32> = (0..=u32::MAX / 1021)
            .map(|i| f32::from_bits(i * 1021))
            .collect();
        let dense = (0x0000_0000u32..0x4000_0001)
            .step_by(256)
            .map(f32::from_bits);
        xs.extend(dense.clone().chain(dense.map(|x| -x)));
        xs.extend([0.0, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY]);
        xs.extend([f32::MIN_POSITIVE, f32::from_bits(1), f32::MAX, f32::MIN]);
        xs.extend(extra);
        for chunk in xs.chunks(LANES) {
            let x: [f32; LANES] = std::array::from_fn(|l| chunk[l % chunk.len()]);
            for (g, x) in f(x).iter().zip(x) {
                let w = want(x);
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "f({x:e}) = {g:e}, libm says {w:e}"
                );
            }
        }
    }

    #[test]
    fn erf_lanes_is_libms_erff_bit_for_bit() {
        let mut edges = vec![1.25, 0.84375, 2f32.powi(-28), 6.0, -6.0, -1.25, -0.84375];
        // Every f32 in [1, 7) with its last 4 bits zero, both signs (erfc's tails, past
        // the dense range of `check`), and each bound of libm's ranges with its neighbours.
        let tails = (0x3f80_0000u32..0x40e0_0000)
            .step_by(16)
            .map(f32::from_bits);
        edges.extend(tails.clone().chain(tails.map(|x| -x)));
        for b in [
            0x3180_0000u32,
            0x3f58_0000,
            0x3fa0_0000,
            0x4036_db6d,
            0x40c0_0000,
        ] {
            for n in b - 2..b + 3 {
                edges.extend([f32::from_bits(n), -f32::from_bits(n)]);
            }
        }
        check(erf_lanes, libm::erff, &edges);
        // The four-lane form wasm runs, the same expressions on arrays here.
        check(
            |x| {
                let (small, mid) = erf_rational_f4(&x);
                select(&x, small, mid)
            },
            libm::erff,
            &edges,
        );
    }

    #[test]
    fn max_of_is_a_fold_of_f32_max() {
        let cases: [&[f32]; 6] = [
            &[],
            &[f32::NAN],
            &[1.0, f32::NAN, 3.0, -2.0],
            &[f32::NAN, -5.0, f32::NEG_INFINITY],
            &[f32::NEG_INFINITY; 3],
            &[-1e30, 2.5, 2.5, f32::INFINITY, 7.0],
        ];
        for xs in cases {
            let want = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(max_of(xs).to_bits(), want.to_bits(), "{xs:?}");
        }
        // Every length from 0 to 40 (whole groups of lanes and a remainder), the largest
        // value at every position, NaN and −∞ sprinkled in: the same value as the fold
        // (zeros of both signs are left out, whose sign may differ).
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            match seed >> 28 {
                0 => f32::NAN,
                1 => f32::NEG_INFINITY,
                _ => (seed >> 8) as f32 / 65_536.0 - 128.0 + 0.5,
            }
        };
        for n in 0..=40 {
            for top in 0..n.max(1) {
                let mut xs: Vec<f32> = (0..n).map(|_| next()).collect();
                if n > 0 {
                    xs[top] = 1000.0 + top as f32;
                }
                let want = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                assert_eq!(max_of(&xs).to_bits(), want.to_bits(), "{xs:?}");
            }
        }
    }

    #[test]
    fn exp_lanes_is_libms_expf_bit_for_bit() {
        let mut edges = vec![87.0, -87.0, 88.7, -88.7, -103.9, -104.0, 2f32.powi(-14)];
        // Every f32 in [−90, 0] with its last 4 bits zero: a softmax's whole range.
        edges.extend(
            (0xbf80_0000u32..=0xc2b4_0000)
                .step_by(16)
                .map(f32::from_bits),
        );
        edges.extend((0x3f00_0000u32..0x3fc0_0000).map(|b| -f32::from_bits(b)));
        check(exp_lanes, libm::expf, &edges);
    }
}
