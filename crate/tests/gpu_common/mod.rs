//! Shared by the GPU test files: one device for the whole test binary, and the rule that a
//! missing GPU is a visible skip under a plain `cargo test` and a failure where
//! `TPLAY_REQUIRE_GPU=1` (which `cargo xtask test` sets unless run with `--no-gpu`).

#![allow(dead_code)]

use std::sync::OnceLock;

use tplay::backend::gpu::GpuContext;

/// The shared GPU context, or `None` (after printing "skipped: no GPU adapter") when there
/// is no adapter. With `TPLAY_REQUIRE_GPU=1` a missing adapter fails the test instead.
pub fn gpu_or_skip() -> Option<GpuContext> {
    static CTX: OnceLock<Result<GpuContext, String>> = OnceLock::new();
    let got =
        CTX.get_or_init(|| pollster::block_on(GpuContext::request()).map_err(|e| e.to_string()));
    match got {
        Ok(ctx) => Some(ctx.clone()),
        Err(why) => {
            if std::env::var("TPLAY_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("TPLAY_REQUIRE_GPU=1 but the GPU backend cannot start: {why}");
            }
            eprintln!("skipped: no GPU adapter ({why})");
            None
        }
    }
}

/// Deterministic values in [-amp, amp]: a small xorshift generator, so every test sees the
/// same numbers on every run.
pub fn values(n: usize, seed: u64, amp: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let unit = (s >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
            (unit * 2.0 - 1.0) * amp
        })
        .collect()
}

/// Largest |a − b|, with −∞ equal only to −∞ (a mismatch counts as infinite) and a NaN
/// on either side counting as infinite (`f32::max` alone would skip it).
pub fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "compared slices differ in length");
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            if x.is_nan() || y.is_nan() {
                f32::INFINITY
            } else if x.is_infinite() || y.is_infinite() {
                if x == y {
                    0.0
                } else {
                    f32::INFINITY
                }
            } else {
                (x - y).abs()
            }
        })
        .fold(0.0, f32::max)
}
