//! (Kept in docs/ until nalgebra is a dependency of the crate: copy to crate/benches/, add
//! `nalgebra = { version = "0.35", default-features = false, features = ["std"] }` and a
//! `[[bench]] name = "nalgebra" harness = false` entry.)
//!
//! Could `Tensor` be nalgebra's `DMatrix` (or views of it) without losing speed? Times this
//! crate's matrix product (`tensor::matmul_nt`, the path `linear_forward` takes) against
//! nalgebra on the shapes the model multiplies, and prints a table (`cargo bench -p tplay
//! --bench nalgebra`); nothing here asserts on time. docs/nalgebra.md records the numbers
//! and the decision.
//!
//! Each row computes `out (M, N) = a (M, K) · wᵀ` with `w (N, K)` row-major, as a PyTorch
//! `Linear` does:
//! - `tplay matmul_nt`: this crate's product on the row-major slices (crate/src/matmul.rs).
//! - `packed`: `tensor::matmul_nt_packed`, matrixmultiply's sgemm through strides.
//! - `nalgebra views`: the same slices seen as column-major views without a copy (a
//!   row-major (M, K) buffer is a column-major (K, M) matrix), `out = (wᵀᵀ·aᵀ)ᵀ` through
//!   `tr_mul`, written into a reused output.
//! - `nalgebra DMatrix`: owned matrices in nalgebra's own layout, `a * w.transpose()`
//!   allocating its result, as code written against `DMatrix` would.
//!
//! Environment: `TPLAY_BENCH_RUNS` (timed repetitions per row, default 200).

use std::hint::black_box;
use std::time::Instant;

use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut};
use tplay::tensor::{matmul_nt, matmul_nt_packed};

/// Median of the timed runs, in microseconds.
fn median_us(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    let mut v = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = Instant::now();
        f();
        v.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    median_us(v)
}

fn ramp(n: usize, a: f32) -> Vec<f32> {
    (0..n).map(|i| ((i as f32 + 1.0) * a).sin()).collect()
}

fn main() {
    let runs: usize = std::env::var("TPLAY_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(200);
    // (what, M, K, N)
    let shapes = [
        ("decode step: one row through W_Q (C = 64)", 1, 64, 64),
        ("one row through the FFN's W1 (C 64 → F 256)", 1, 64, 256),
        ("a 64-token sequence through W1 (C 64 → F 256)", 64, 64, 256),
        ("a 64-token sequence through W_Q (C = 64)", 64, 64, 64),
        (
            "32 sequences of 64 tokens through W_Q (C = 64)",
            32 * 64,
            64,
            64,
        ),
        (
            "32 × 64 tokens through the LM head (C 64 → V 40)",
            32 * 64,
            64,
            40,
        ),
    ];
    println!("out (M, N) = a (M, K) · wᵀ, f32; median of {runs} runs after 3 warm-up runs, µs");
    println!(
        "{:<62} {:>10} {:>10} {:>12} {:>14} {:>9}",
        "shape (M × K · K × N)", "tplay µs", "packed µs", "nalg views", "nalg DMatrix", "max |Δ|"
    );
    for (what, m, k, n) in shapes {
        let a = ramp(m * k, 0.37); // (M, K)
        let w = ramp(n * k, 0.11); // (N, K)
        let ours = time(runs, || {
            black_box(matmul_nt(black_box(&a), black_box(&w), m, k, n));
        });
        let packed = time(runs, || {
            black_box(matmul_nt_packed(black_box(&a), black_box(&w), m, k, n));
        });
        // Column-major views of the row-major buffers: aᵀ (K, M), wᵀ (K, N).
        let at = DMatrixView::from_slice(&a, k, m);
        let wt = DMatrixView::from_slice(&w, k, n);
        let mut out_cm = vec![0.0f32; m * n]; // column-major (N, M) = row-major (M, N)
        let views = time(runs, || {
            let mut o = DMatrixViewMut::from_slice(&mut out_cm, n, m);
            // outᵀ (N, M) = wᵀᵀ (N, K) · aᵀ (K, M)
            wt.tr_mul_to(&at, &mut o);
            black_box(&o);
        });
        let am = DMatrix::from_row_slice(m, k, &a); // (M, K)
        let wm = DMatrix::from_row_slice(n, k, &w); // (N, K)
        let owned = time(runs, || {
            black_box(black_box(&am) * black_box(&wm).transpose());
        });
        let want = matmul_nt(&a, &w, m, k, n);
        let got = &am * wm.transpose();
        let mut diff = 0.0f32;
        for i in 0..m {
            for j in 0..n {
                diff = diff
                    .max((want[i * n + j] - out_cm[i * n + j]).abs())
                    .max((want[i * n + j] - got[(i, j)]).abs());
            }
        }
        println!(
            "{:<62} {:>10.2} {:>10.2} {:>12.2} {:>14.2} {:>9.1e}",
            format!("{what}: {m}×{k}·{k}×{n}"),
            ours,
            packed,
            views,
            owned,
            diff
        );
    }
}
