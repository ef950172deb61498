//! Every WGSL kernel against the CPU op it mirrors, on several shapes with edge cases
//! (length 1, sizes that are not multiples of the tile or workgroup size, fully masked
//! rows, every score function and position scheme, head ablation, queries at an offset).
//!
//! One helper per op runs the CPU function and the kernel on the same inputs and returns
//! the largest difference; each test body loops over its cases.

mod gpu_common;

use gpu_common::{gpu_or_skip, max_diff, values};
use tplay::backend::gpu::{GpuContext, MatmulArgs, Rows};
use tplay::model::ffn::linear_forward;

/// Largest |GPU − CPU| allowed for one kernel on inputs of size ~1 (f32 rounding in a
/// different summation order, and the shader's own erf/exp).
const TOL: f32 = 2e-5;

/// `linear_forward` on the CPU vs matmul.wgsl, for `out (M, N) = a (M, K) · w (N, K)ᵀ + b`.
fn matmul_case(ctx: &GpuContext, m: usize, k: usize, n: usize, with_bias: bool) -> f32 {
    let a = values(m * k, 1 + m as u64, 1.0); // (M, K)
    let w = values(n * k, 2 + n as u64, 1.0); // (N, K)
    let b = values(n, 3, 1.0); // (N)
    let mut want = vec![0.0; m * n]; // (M, N)
    linear_forward(&mut want, &a, &w, with_bias.then_some(&b[..]), m, k, n);

    let ga = ctx.upload("a", &a).unwrap();
    let gw = ctx.upload("w", &w).unwrap();
    let gb = ctx.upload("b", &b).unwrap();
    let out = ctx.zeros("out", m * n).unwrap();
    let mut rec = ctx.recorder().unwrap();
    rec.matmul(&MatmulArgs {
        a: Rows::dense(&ga, k),
        w: &gw,
        w_offset: 0,
        bias: with_bias.then_some(&gb),
        b_offset: 0,
        out: Rows::dense(&out, n),
        m,
        k,
        n,
    })
    .unwrap();
    let slot = rec.read_all(&out).unwrap();
    let got = pollster::block_on(rec.finish()).unwrap();
    max_diff(got.f32(slot), &want)
}

#[test]
fn matmul_matches_linear_forward_on_odd_and_tile_sized_shapes() {
    let Some(ctx) = gpu_or_skip() else { return };
    for &(m, k, n) in &[
        (1, 1, 1),
        (1, 16, 3),
        (7, 5, 9),
        (16, 16, 16),
        (17, 33, 15),
        (40, 32, 96),
        (3, 64, 13),
    ] {
        for bias in [true, false] {
            let d = matmul_case(&ctx, m, k, n, bias);
            assert!(
                d < TOL,
                "matmul M={m} K={k} N={n} bias={bias}: max diff {d}"
            );
        }
    }
}
