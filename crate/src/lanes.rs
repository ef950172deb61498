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

/// `libm::erff` of eight values, bit for bit: |x| < 1.25 — nearly every pre-activation
/// of a GELU — is evaluated as libm evaluates it (the same rational functions, the same
/// operations in the same order, all f32), for all lanes at once with no branch, so the
/// compiler vectorises it; the other lanes (tails that need `expf`, tiny values, NaN and
/// infinities) are then computed by `libm::erff` itself.
#[inline]
#[allow(clippy::excessive_precision)] // libm's constants, as written there
pub fn erf_lanes(x: [f32; LANES]) -> [f32; LANES] {
    // libm's s_erff.c constants: erf on [0, 0.84375] …
    const PP0: f32 = 1.2837916613e-01;
    const PP1: f32 = -3.2504209876e-01;
    const PP2: f32 = -2.8481749818e-02;
    const PP3: f32 = -5.7702702470e-03;
    const PP4: f32 = -2.3763017452e-05;
    const QQ1: f32 = 3.9791721106e-01;
    const QQ2: f32 = 6.5022252500e-02;
    const QQ3: f32 = 5.0813062117e-03;
    const QQ4: f32 = 1.3249473704e-04;
    const QQ5: f32 = -3.9602282413e-06;
    // … and on [0.84375, 1.25].
    const ERX: f32 = 8.4506291151e-01;
    const PA0: f32 = -2.3621185683e-03;
    const PA1: f32 = 4.1485610604e-01;
    const PA2: f32 = -3.7220788002e-01;
    const PA3: f32 = 3.1834661961e-01;
    const PA4: f32 = -1.1089469492e-01;
    const PA5: f32 = 3.5478305072e-02;
    const PA6: f32 = -2.1663755178e-03;
    const QA1: f32 = 1.0642088205e-01;
    const QA2: f32 = 5.4039794207e-01;
    const QA3: f32 = 7.1828655899e-02;
    const QA4: f32 = 1.2617121637e-01;
    const QA5: f32 = 1.3637083583e-02;
    const QA6: f32 = 1.1984500103e-02;
    let small: [f32; LANES] = std::array::from_fn(|l| {
        let x = x[l];
        let z = x * x;
        let r = PP0 + z * (PP1 + z * (PP2 + z * (PP3 + z * PP4)));
        let s = 1.0 + z * (QQ1 + z * (QQ2 + z * (QQ3 + z * (QQ4 + z * QQ5))));
        let y = r / s;
        x + x * y
    });
    let mid: [f32; LANES] = std::array::from_fn(|l| {
        let s = x[l].abs() - 1.0;
        let p = PA0 + s * (PA1 + s * (PA2 + s * (PA3 + s * (PA4 + s * (PA5 + s * PA6)))));
        let q = 1.0 + s * (QA1 + s * (QA2 + s * (QA3 + s * (QA4 + s * (QA5 + s * QA6)))));
        let y = 1.0 - (1.0 - ERX - p / q);
        if x[l].is_sign_negative() {
            -y
        } else {
            y
        }
    });
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
    let hx: [u32; LANES] = std::array::from_fn(|l| x[l].to_bits() & 0x7fff_ffff);
    let mut out: [f32; LANES] = std::array::from_fn(|l| {
        let (x, hx) = (x[l], hx[l]);
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
        if x == f32::NEG_INFINITY {
            0.0
        } else {
            main_or_tiny
        }
    });
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
