//! Every WGSL kernel against the CPU op it mirrors, on several shapes with edge cases
//! (length 1, sizes that are not multiples of the tile or workgroup size, fully masked
//! rows, every score function and position scheme, head ablation, queries at an offset).
//!
//! One helper per op runs the CPU function and the kernel on the same inputs and returns
//! the largest difference; each test body loops over its cases.

mod support;

use support::{gpu_or_skip, max_diff, values};
use tplay::backend::gpu::{
    rope_table, AttnDims, CopyArgs, DecodeAttnArgs, Epilogue, GpuBuffer, GpuContext, MatmulArgs,
    Recorder, Rows, ScoreArgs, SeqRows, ValueArgs, MASKED,
};
use tplay::config::{Activation, PosEncoding, Score};
use tplay::model::attention::{attention_forward, AttnSpec, Relative};
use tplay::model::embedding::embedding_forward;
use tplay::model::ffn::{activation_forward, linear_forward};
use tplay::model::mask::{CellEdit, MaskRule, MaskSpec};
use tplay::model::norm::{batchnorm_eval_forward, layernorm_forward};
use tplay::model::position::{
    alibi_slopes, learned_positions_forward, rope_forward, sinusoidal_forward, sinusoidal_table,
};

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
    let mut worst = 0.0f32;
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
            worst = worst.max(d);
            assert!(
                d < TOL,
                "matmul M={m} K={k} N={n} bias={bias}: max diff {d}"
            );
        }
    }
    eprintln!(
        "matmul_matches_linear_forward_on_odd_and_tile_sized_shapes: worst difference {worst:e}"
    );
}

#[test]
fn matmul_reads_and_writes_through_strides_and_offsets() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    // a: the middle K columns of (M, 3K) rows; w: rows N.. of a (2N, K) weight (the K/V
    // half of an in_proj weight); bias: elements N.. of (2N); out: columns 2.. of (M, N+3).
    for &(m, k, n) in &[(1, 1, 1), (5, 7, 3), (19, 16, 17)] {
        let big_a = values(m * 3 * k, 11, 1.0); // (M, 3K)
        let big_w = values(2 * n * k, 12, 1.0); // (2N, K)
        let big_b = values(2 * n, 13, 1.0); // (2N)
        let a: Vec<f32> = (0..m)
            .flat_map(|r| big_a[r * 3 * k + k..r * 3 * k + 2 * k].to_vec())
            .collect(); // (M, K)
        let mut want = vec![0.0; m * n]; // (M, N)
        linear_forward(&mut want, &a, &big_w[n * k..], Some(&big_b[n..]), m, k, n);

        let ga = ctx.upload("a", &big_a).unwrap();
        let gw = ctx.upload("w", &big_w).unwrap();
        let gb = ctx.upload("b", &big_b).unwrap();
        let out = ctx.zeros("out", m * (n + 3)).unwrap();
        let mut rec = ctx.recorder().unwrap();
        rec.matmul(&MatmulArgs {
            a: Rows {
                buf: &ga,
                stride: 3 * k,
                col: k,
            },
            w: &gw,
            w_offset: n * k,
            bias: Some(&gb),
            b_offset: n,
            out: Rows {
                buf: &out,
                stride: n + 3,
                col: 2,
            },
            m,
            k,
            n,
        })
        .unwrap();
        let slot = rec.read_all(&out).unwrap();
        let back = pollster::block_on(rec.finish()).unwrap();
        let got = back.f32(slot);
        let got: Vec<f32> = (0..m)
            .flat_map(|r| got[r * (n + 3) + 2..r * (n + 3) + 2 + n].to_vec())
            .collect();
        let d = max_diff(&got, &want);
        worst = worst.max(d);
        assert!(d < TOL, "strided matmul M={m} K={k} N={n}: max diff {d}");
        // The columns outside the written block stay untouched (zero).
        let back_all = back.f32(slot);
        for r in 0..m {
            assert_eq!(back_all[r * (n + 3)], 0.0);
            assert_eq!(back_all[r * (n + 3) + 1], 0.0);
        }
    }
    eprintln!("matmul_reads_and_writes_through_strides_and_offsets: worst difference {worst:e}");
}

/// Run one recorder and read `out` back.
fn run_and_read(ctx: &GpuContext, out: &GpuBuffer, f: impl FnOnce(&mut Recorder)) -> Vec<f32> {
    let mut rec = ctx.recorder().unwrap();
    f(&mut rec);
    let slot = rec.read_all(out).unwrap();
    let back = pollster::block_on(rec.finish()).unwrap();
    back.f32(slot).to_vec()
}

#[test]
fn activation_matches_relu_and_exact_gelu_including_large_and_tiny_inputs() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    let specials = [
        0.0, -0.0, 1e-8, -1e-8, 1e-3, -1e-3, 10.0, -10.0, 30.0, -30.0, 1e4, -1e4,
    ];
    for act in [Activation::Relu, Activation::Gelu, Activation::GeluTanh] {
        for n in [1, 12, 63, 64, 65, 1000] {
            let mut x = values(n, 20 + n as u64, 6.0); // (N)
            for (xi, s) in x.iter_mut().zip(specials) {
                *xi = s;
            }
            let mut want = vec![0.0; n]; // (N)
            activation_forward(&mut want, &x, act);
            let buf = ctx.upload("x", &x).unwrap();
            let got = run_and_read(&ctx, &buf, |r| r.activation(&buf, n, act).unwrap());
            assert!(
                got.iter().all(|v| v.is_finite()),
                "{act:?}: non-finite output"
            );
            let d = max_diff(&got, &want);
            worst = worst.max(d);
            assert!(d < TOL, "{act:?} n={n}: max diff {d}");
        }
    }
    eprintln!("activation_matches_relu_and_exact_gelu_including_large_and_tiny_inputs: worst difference {worst:e}");
}

/// matmul.wgsl with its epilogue: the activation (`linear_forward` then
/// `activation_forward`, as the FFN's first layer) and the residual (`linear_forward`
/// plus the sublayer's input), each in the product's one dispatch, on shapes that are
/// and are not multiples of the tile, with and without bias.
#[test]
fn matmul_with_activation_or_residual_matches_linear_forward_then_the_same_step() {
    if gpu_or_skip().is_none() {
        return;
    }
    // A private context: the shared one counts the dispatches of tests running in parallel.
    let ctx = pollster::block_on(GpuContext::request()).unwrap();
    let mut worst = 0.0f32;
    for &(m, k, n) in &[
        (1, 64, 256),
        (1, 256, 64),
        (5, 7, 3),
        (17, 33, 40),
        (32, 16, 16),
    ] {
        for with_bias in [true, false] {
            let a = values(m * k, 40 + m as u64, 0.5); // (M, K)
            let w = values(n * k, 41 + n as u64, 0.25); // (N, K)
            let b = values(n, 42, 1.0); // (N)
            let res = values(m * n, 43, 2.0); // (M, N)
            let mut lin = vec![0.0; m * n]; // (M, N)
            linear_forward(&mut lin, &a, &w, with_bias.then_some(&b[..]), m, k, n);
            let ga = ctx.upload("a", &a).unwrap();
            let gw = ctx.upload("w", &w).unwrap();
            let gb = ctx.upload("b", &b).unwrap();
            let gres = ctx.upload("residual", &res).unwrap();
            // Outputs 0..4: ReLU, GELU, GELU tanh, residual; 5 holds the residual itself.
            let outs: Vec<GpuBuffer> = (0..5)
                .map(|_| ctx.zeros("out", m * n).unwrap())
                .chain([ctx.upload("out", &res).unwrap()])
                .collect();
            let args = |i: usize| MatmulArgs {
                a: Rows::dense(&ga, k),
                w: &gw,
                w_offset: 0,
                bias: with_bias.then_some(&gb),
                b_offset: 0,
                out: Rows::dense(&outs[i], n),
                m,
                k,
                n,
            };
            let mut cases: Vec<(String, Epilogue, Vec<f32>)> = vec![];
            for act in [Activation::Relu, Activation::Gelu, Activation::GeluTanh] {
                let mut want = vec![0.0; m * n];
                activation_forward(&mut want, &lin, act);
                cases.push((format!("{act:?}"), Epilogue::Activation(act), want));
            }
            let summed: Vec<f32> = lin.iter().zip(&res).map(|(y, x)| y + x).collect();
            cases.push(("residual".into(), Epilogue::Residual(&gres), summed));
            for (i, (what, then, want)) in cases.into_iter().enumerate() {
                let before = ctx.stats();
                let got = run_and_read(&ctx, &outs[i], |r| r.matmul_then(&args(i), then).unwrap());
                assert_eq!(
                    ctx.stats().since(&before).dispatches,
                    1,
                    "{what}: one dispatch"
                );
                let d = max_diff(&got, &want);
                worst = worst.max(d);
                assert!(
                    d < TOL,
                    "({m}, {k}, {n}) bias={with_bias} {what}: max diff {d}"
                );
            }
            // The residual must be another buffer than the output.
            let mut rec = ctx.recorder().unwrap();
            assert!(rec
                .matmul_then(&args(5), Epilogue::Residual(&outs[5]))
                .is_err());
        }
    }
    eprintln!("matmul_with_activation_or_residual_matches_linear_forward_then_the_same_step: worst difference {worst:e}");
}

#[test]
fn residual_add_matches_the_sum_on_one_and_two_dimensional_grids() {
    let Some(ctx) = gpu_or_skip() else { return };
    let max_groups = ctx.limits().max_compute_workgroups_per_dimension as usize;
    // The last size needs more than `max_groups` workgroups of 64: a 2-D grid.
    for n in [1, 64, 100, 4097, max_groups * 64 + 100] {
        let x = values(n, 30, 1.0); // (N)
        let y = values(n, 31, 1.0); // (N)
        let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
        let gx = ctx.upload("x", &x).unwrap();
        let gy = ctx.upload("y", &y).unwrap();
        let got = run_and_read(&ctx, &gx, |r| r.add(&gx, &gy, n).unwrap());
        assert_eq!(got, want, "n={n}: the sum is exact in f32");
    }
}

#[test]
fn layer_norm_matches_layernorm_forward_on_narrow_and_wide_rows() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for &(rows, c) in &[
        (1, 1),
        (1, 16),
        (3, 7),
        (5, 64),
        (2, 65),
        (4, 130),
        (70, 12),
    ] {
        // A mean far from zero: the two-pass variance must not cancel.
        let x: Vec<f32> = values(rows * c, 40 + c as u64, 2.0)
            .iter()
            .map(|v| v + 3.0)
            .collect(); // (R, C)
        let gamma: Vec<f32> = values(c, 41, 0.2).iter().map(|v| v + 1.0).collect(); // (C)
        let beta = values(c, 42, 0.1); // (C)
        let mut want = vec![0.0; rows * c]; // (R, C)
        let (mut mean, mut rstd) = (vec![0.0; rows], vec![0.0; rows]); // (R), (R)
        layernorm_forward(&mut want, &mut mean, &mut rstd, &x, &gamma, &beta, rows, c);
        let (gx, gg, gb) = (
            ctx.upload("x", &x).unwrap(),
            ctx.upload("gamma", &gamma).unwrap(),
            ctx.upload("beta", &beta).unwrap(),
        );
        let out = ctx.zeros("y", rows * c).unwrap();
        let got = run_and_read(&ctx, &out, |r| {
            r.layer_norm(&gx, &gg, &gb, &out, rows, c).unwrap()
        });
        let d = max_diff(&got, &want);
        worst = worst.max(d);
        assert!(d < TOL, "layer norm R={rows} C={c}: max diff {d}");
    }
    eprintln!(
        "layer_norm_matches_layernorm_forward_on_narrow_and_wide_rows: worst difference {worst:e}"
    );
}

#[test]
fn batch_norm_matches_batchnorm_eval_forward() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for &(rows, c) in &[(1, 1), (3, 7), (70, 5), (2, 33)] {
        let x = values(rows * c, 50, 2.0); // (R, C)
        let gamma: Vec<f32> = values(c, 51, 0.2).iter().map(|v| v + 1.0).collect(); // (C)
        let beta = values(c, 52, 0.1); // (C)
        let rm = values(c, 53, 0.5); // (C)
        let rv: Vec<f32> = values(c, 54, 0.9).iter().map(|v| v + 1.1).collect(); // (C) in [0.2, 2]
        let mut want = vec![0.0; rows * c]; // (R, C)
        batchnorm_eval_forward(&mut want, &x, &gamma, &beta, &rm, &rv, rows, c);
        let up = |n: &str, v: &[f32]| ctx.upload(n, v).unwrap();
        let (gx, gg, gb, gm, gv) = (
            up("x", &x),
            up("gamma", &gamma),
            up("beta", &beta),
            up("mean", &rm),
            up("var", &rv),
        );
        let out = ctx.zeros("y", rows * c).unwrap();
        let got = run_and_read(&ctx, &out, |r| {
            r.batch_norm(&gx, &gg, &gb, (&gm, &gv), &out, rows, c)
                .unwrap()
        });
        let d = max_diff(&got, &want);
        worst = worst.max(d);
        assert!(d < TOL, "batch norm R={rows} C={c}: max diff {d}");
    }
    eprintln!("batch_norm_matches_batchnorm_eval_forward: worst difference {worst:e}");
}

#[test]
fn embedding_matches_gather_scale_and_every_absolute_position_scheme() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    let v = 11;
    for &(b, t, c) in &[(1, 1, 4), (2, 5, 6), (3, 7, 10)] {
        for pos in [
            PosEncoding::None,
            PosEncoding::Sinusoidal,
            PosEncoding::Learned,
        ] {
            for pos0 in [0, 3] {
                for scale in [1.0, (c as f32).sqrt()] {
                    let p = pos0 + t; // positions the table must cover
                    let table = values(v * c, 60, 1.0); // (V, C)
                    let tokens: Vec<u32> = (0..b * t).map(|i| ((i * 7 + 3) % v) as u32).collect(); // (B, T)
                    let learned = values(p * c, 61, 1.0); // (P, C)
                    let mut sin_table = vec![0.0; p * c]; // (P, C)
                    sinusoidal_table(&mut sin_table, 0, p, c);

                    let mut want = vec![0.0; b * t * c]; // (B, T, C)
                    embedding_forward(&mut want, &tokens, &table, scale, b * t, c);
                    match pos {
                        PosEncoding::Sinusoidal => sinusoidal_forward(&mut want, pos0, b, t, c),
                        PosEncoding::Learned => {
                            learned_positions_forward(&mut want, &learned, pos0, b, t, c)
                        }
                        _ => {}
                    }

                    let gt = ctx.upload_u32("tokens", &tokens).unwrap();
                    let ge = ctx.upload("table", &table).unwrap();
                    let gp = match pos {
                        PosEncoding::Sinusoidal => Some(ctx.upload("pe", &sin_table).unwrap()),
                        PosEncoding::Learned => Some(ctx.upload("pe", &learned).unwrap()),
                        _ => None,
                    };
                    let out = ctx.zeros("x", b * t * c).unwrap();
                    let got = run_and_read(&ctx, &out, |r| {
                        r.embedding(&gt, &ge, gp.as_ref(), &out, (b * t, t, c), pos0, scale)
                            .unwrap()
                    });
                    let d = max_diff(&got, &want);
                    worst = worst.max(d);
                    assert!(
                        d < TOL,
                        "embedding B={b} T={t} C={c} {pos:?} pos0={pos0} scale={scale}: {d}"
                    );
                }
            }
        }
    }
    eprintln!("embedding_matches_gather_scale_and_every_absolute_position_scheme: worst difference {worst:e}");
}

#[test]
fn rope_matches_rope_forward_on_queries_and_keys_and_leaves_values_alone() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for &(b, t, h, d, pos0) in &[
        (1, 1, 1, 2, 0),
        (2, 5, 2, 4, 3),
        (1, 9, 3, 6, 0),
        (2, 1, 2, 8, 7),
    ] {
        let c = h * d;
        let qkv = values(b * t * 3 * c, 70 + d as u64, 1.0); // (B·T, 3C)
        let part = |off: usize| -> Vec<f32> {
            (0..b * t)
                .flat_map(|r| qkv[r * 3 * c + off..r * 3 * c + off + c].to_vec())
                .collect()
        }; // (B·T, C)
        let (mut q, mut k) = (part(0), part(c));
        rope_forward(&mut q, pos0, b, t, h, d);
        rope_forward(&mut k, pos0, b, t, h, d);

        let rot = ctx.upload("rot", &rope_table(pos0 + t, d)).unwrap();
        let buf = ctx.upload("qkv", &qkv).unwrap();
        let got = run_and_read(&ctx, &buf, |r| {
            r.rope(&rot, Rows::dense(&buf, 3 * c), b * t, t, 2 * h, d, pos0)
                .unwrap()
        });
        let cols = |v: &[f32], off: usize| -> Vec<f32> {
            (0..b * t)
                .flat_map(|r| v[r * 3 * c + off..r * 3 * c + off + c].to_vec())
                .collect()
        };
        let dq = max_diff(&cols(&got, 0), &q);
        let dk = max_diff(&cols(&got, c), &k);
        worst = worst.max(dq).max(dk);
        assert!(
            dq < TOL && dk < TOL,
            "rope B={b} T={t} H={h} D={d} pos0={pos0}: {dq} {dk}"
        );
        assert_eq!(cols(&got, 2 * c), part(2 * c), "values must not move");
    }
    eprintln!("rope_matches_rope_forward_on_queries_and_keys_and_leaves_values_alone: worst difference {worst:e}");
}

// ---------------------------------------------------------------------------------------
// Attention: scores, softmax and weighted values, each against `attention_forward`.
// ---------------------------------------------------------------------------------------

/// One attention configuration with its inputs and the CPU's outputs.
struct AttnCase {
    name: String,
    b: usize,
    h: usize,
    d: usize,
    t: usize,
    s: usize,
    pos0: usize,
    score: Score,
    scale: bool,
    mask: MaskSpec,
    /// K of the relative tables, when used.
    rel: Option<usize>,
    alibi: bool,
    ablate: Vec<bool>,
    /// (B·T, C)
    q: Vec<f32>,
    /// (B·S, 2C): k | v side by side
    kv: Vec<f32>,
    /// (B, S) true for a padding key
    key_pad: Vec<bool>,
    rel_k: Vec<f32>,
    rel_v: Vec<f32>,
    add_v: Vec<f32>,
    slopes: Vec<f32>,
    /// CPU outputs: (B, H, T, S), (B, H, T, S), (B·T, C)
    scores: Vec<f32>,
    probs: Vec<f32>,
    z: Vec<f32>,
}

impl AttnCase {
    #[allow(clippy::too_many_arguments)]
    fn new(
        (b, h, d, t, s, pos0): (usize, usize, usize, usize, usize, usize),
        score: Score,
        scale: bool,
        mask: MaskSpec,
        rel: Option<usize>,
        alibi: bool,
        ablate_first: bool,
        seed: u64,
    ) -> AttnCase {
        let c = h * d;
        let kk = rel.unwrap_or(1);
        // Key padding: the last key of sequence 0 (when S > 1), and every key of sequence 1
        // (its queries then attend to nothing: fully masked rows).
        let key_pad: Vec<bool> = (0..b * s)
            .map(|i| (i / s == 0 && s > 1 && i % s == s - 1) || i / s == 1)
            .collect();
        let mut case = AttnCase {
            name: format!(
                "B={b} H={h} D={d} T={t} S={s} pos0={pos0} {score:?} scale={scale} mask={}+{} cells rel={rel:?} alibi={alibi} ablate={ablate_first}",
                mask.rule.name(),
                mask.cells.len()
            ),
            b,
            h,
            d,
            t,
            s,
            pos0,
            score,
            scale,
            mask,
            rel,
            alibi,
            ablate: (0..h).map(|i| ablate_first && i == 0).collect(),
            q: values(b * t * c, seed, 1.5),
            kv: values(b * s * 2 * c, seed + 1, 1.5),
            key_pad,
            rel_k: values((2 * kk + 1) * d, seed + 2, 0.5),
            rel_v: values((2 * kk + 1) * d, seed + 3, 0.5),
            add_v: values(h * d, seed + 4, 1.0),
            slopes: alibi_slopes(h),
            scores: vec![0.0; b * h * t * s],
            probs: vec![0.0; b * h * t * s],
            z: vec![0.0; b * t * c],
        };
        case.run_cpu();
        case
    }

    fn run_cpu(&mut self) {
        let (b, h, d, t, s) = (self.b, self.h, self.d, self.t, self.s);
        let c = h * d;
        let spec = AttnSpec {
            n_heads: h,
            d_head: d,
            score: self.score,
            scale: self.scale,
            mask: &self.mask,
            q_offset: self.pos0,
            rope: false,
            alibi: self.alibi.then_some(&self.slopes[..]),
            relative: self.rel.map(|k| Relative {
                rel_k: &self.rel_k,
                rel_v: &self.rel_v,
                max_distance: k,
            }),
            additive_v: Some(&self.add_v),
            ablate: &self.ablate,
        };
        let hts = h * t * s;
        for seq in 0..b {
            let kv = &self.kv[seq * s * 2 * c..(seq + 1) * s * 2 * c];
            let k: Vec<f32> = kv.chunks(2 * c).flat_map(|r| r[..c].to_vec()).collect(); // (S, C)
            let v: Vec<f32> = kv.chunks(2 * c).flat_map(|r| r[c..].to_vec()).collect(); // (S, C)
            attention_forward(
                &mut self.z[seq * t * c..(seq + 1) * t * c],
                &mut self.scores[seq * hts..(seq + 1) * hts],
                &mut self.probs[seq * hts..(seq + 1) * hts],
                &self.q[seq * t * c..(seq + 1) * t * c],
                &k,
                &v,
                Some(&self.key_pad[seq * s..(seq + 1) * s]),
                None,
                &spec,
                t,
                s,
            );
        }
    }

    fn dims(&self) -> AttnDims {
        AttnDims {
            batch: self.b,
            n_heads: self.h,
            t_len: self.t,
            s_len: self.s,
            d_head: self.d,
            pos0: self.pos0,
            kv_rows: self.s,
        }
    }

    /// Scores on the GPU (MASKED mapped back to −∞).
    fn gpu_scores(&self, ctx: &GpuContext) -> Vec<f32> {
        let c = self.h * self.d;
        let q = ctx.upload("q", &self.q).unwrap();
        let kv = ctx.upload("kv", &self.kv).unwrap();
        let toks: Vec<u32> = self
            .key_pad
            .iter()
            .map(|&p| if p { 0 } else { 5 })
            .collect();
        let toks = ctx.upload_u32("key tokens", &toks).unwrap();
        let rel_k = ctx.upload("rel_k", &self.rel_k).unwrap();
        let slopes = ctx.upload("slopes", &self.slopes).unwrap();
        let add_v = ctx.upload("add_v", &self.add_v).unwrap();
        let out = ctx.zeros("scores", self.scores.len()).unwrap();
        let cells = self
            .mask
            .cell_table()
            .map(|(table, n)| (ctx.upload_u32("cells", &table).unwrap(), n));
        let divisor = if self.score == Score::ScaledDot && self.scale {
            (self.d as f32).sqrt()
        } else {
            1.0
        };
        let got = run_and_read(ctx, &out, |r| {
            r.attention_scores(&ScoreArgs {
                q: Rows::dense(&q, c),
                k: Rows {
                    buf: &kv,
                    stride: 2 * c,
                    col: 0,
                },
                key_tokens: &toks,
                rel_k: self.rel.map(|_| &rel_k),
                rel_max: self.rel.unwrap_or(0),
                alibi_slopes: self.alibi.then_some(&slopes),
                additive_v: (self.score == Score::Additive).then_some(&add_v),
                divisor,
                mask: &self.mask,
                cells: cells.as_ref().map(|(b, n)| (b, *n)),
                pad_id: 0,
                out: &out,
                dims: self.dims(),
            })
            .unwrap()
        });
        got.into_iter()
            .map(|v| if v == MASKED { f32::NEG_INFINITY } else { v })
            .collect()
    }

    /// Softmax on the GPU of the CPU's scores.
    fn gpu_probs(&self, ctx: &GpuContext) -> Vec<f32> {
        let scores: Vec<f32> = self
            .scores
            .iter()
            .map(|&v| if v == f32::NEG_INFINITY { MASKED } else { v })
            .collect(); // (B, H, T, S)
        let gs = ctx.upload("scores", &scores).unwrap();
        let out = ctx.zeros("probs", scores.len()).unwrap();
        let rows = self.b * self.h * self.t;
        run_and_read(ctx, &out, |r| r.softmax(&gs, &out, rows, self.s).unwrap())
    }

    /// Weighted values on the GPU from the CPU's probabilities.
    fn gpu_z(&self, ctx: &GpuContext) -> Vec<f32> {
        let c = self.h * self.d;
        let probs = ctx.upload("probs", &self.probs).unwrap();
        let kv = ctx.upload("kv", &self.kv).unwrap();
        let rel_v = ctx.upload("rel_v", &self.rel_v).unwrap();
        let flags: Vec<u32> = self.ablate.iter().map(|&a| a as u32).collect();
        let ablate = ctx.upload_u32("ablate", &flags).unwrap();
        let out = ctx.zeros("z", self.z.len()).unwrap();
        run_and_read(ctx, &out, |r| {
            r.attention_values(&ValueArgs {
                probs: &probs,
                v: Rows {
                    buf: &kv,
                    stride: 2 * c,
                    col: c,
                },
                rel_v: self.rel.map(|_| &rel_v),
                rel_max: self.rel.unwrap_or(0),
                ablate: &ablate,
                out: &out,
                dims: self.dims(),
            })
            .unwrap()
        })
    }
}

/// The masks a case of shape (B, H, D, T, S, pos0) runs under: none, causal, prefix-LM,
/// a sliding window, and causal with painted cells in the case's own query rows (one
/// hidden, one future key shown, one past key hidden).
fn masks((_, _, _, t, s, pos0): (usize, usize, usize, usize, usize, usize)) -> Vec<MaskSpec> {
    let last = pos0 + t - 1;
    let cells = [
        CellEdit {
            query: pos0,
            key: 0,
            hidden: true,
        },
        CellEdit {
            query: pos0,
            key: s - 1,
            hidden: false,
        },
        CellEdit {
            query: last,
            key: last.min(s - 1) / 2,
            hidden: true,
        },
    ];
    vec![
        MaskSpec::new(MaskRule::None, &[], true),
        MaskSpec::new(MaskRule::Causal, &[], true),
        MaskSpec::new(MaskRule::PrefixLm { prefix: 3 }, &[], true),
        MaskSpec::new(MaskRule::SlidingWindow { window: 2 }, &[], true),
        MaskSpec::new(MaskRule::Causal, &cells, true),
    ]
}

/// Every score function × position bias × mask × shape (including T = 1 with a query
/// offset, as in a cached decoding step, and sizes that are not powers of two).
fn attention_cases() -> Vec<AttnCase> {
    let shapes = [
        (2, 2, 4, 5, 5, 0),
        (2, 3, 3, 1, 7, 6),
        (3, 1, 8, 3, 9, 4),
        (2, 2, 2, 70, 70, 0),
        // A cached step of three sequences: the third has no padding keys.
        (3, 2, 4, 1, 6, 5),
    ];
    let scores = [
        (Score::ScaledDot, true),
        (Score::ScaledDot, false),
        (Score::Dot, true),
        (Score::Additive, true),
    ];
    let mut out = vec![];
    let mut seed = 1000;
    for &shape in &shapes {
        for &(score, scale) in &scores {
            for (rel, alibi) in [(None, false), (Some(2), false), (None, true)] {
                // Every mask kind with the plain score; none and causal with every score.
                let kinds = if (score, scale) == (Score::ScaledDot, true) {
                    masks(shape).len()
                } else {
                    2
                };
                for mask in masks(shape).into_iter().take(kinds) {
                    seed += 10;
                    let ablate = seed % 20 == 0 && shape.1 > 1;
                    out.push(AttnCase::new(
                        shape, score, scale, mask, rel, alibi, ablate, seed,
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn attention_scores_match_for_every_score_function_mask_and_position_bias() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for case in attention_cases() {
        let got = case.gpu_scores(&ctx);
        // Masked entries must be −∞ on both sides; finite ones close (relative to size).
        for (i, (g, w)) in got.iter().zip(&case.scores).enumerate() {
            if w.is_infinite() || g.is_infinite() {
                assert_eq!(g, w, "{}: element {i}", case.name);
            } else {
                let d = (g - w).abs() / w.abs().max(1.0);
                worst = worst.max(d);
                assert!(d < TOL, "{}: element {i}: GPU {g} vs CPU {w}", case.name);
            }
        }
    }
    eprintln!("attention_scores_match_for_every_score_function_mask_and_position_bias: worst relative difference {worst:e}");
}

#[test]
fn softmax_matches_the_cpu_and_gives_zeros_for_fully_masked_rows() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    let mut fully_masked = 0;
    for case in attention_cases() {
        let got = case.gpu_probs(&ctx);
        assert!(got.iter().all(|p| p.is_finite()), "{}: NaN or ∞", case.name);
        let d = max_diff(&got, &case.probs);
        worst = worst.max(d);
        assert!(d < TOL, "{}: max diff {d}", case.name);
        for (row_g, row_w) in got.chunks(case.s).zip(case.probs.chunks(case.s)) {
            if row_w.iter().all(|&p| p == 0.0) {
                fully_masked += 1;
                assert!(
                    row_g.iter().all(|&p| p == 0.0),
                    "{}: a masked row",
                    case.name
                );
            }
        }
    }
    assert!(fully_masked > 0, "the cases include fully masked rows");
    eprintln!(
        "softmax_matches_the_cpu_and_gives_zeros_for_fully_masked_rows: worst difference {worst:e}"
    );
}

#[test]
fn attention_values_match_with_relative_values_and_ablated_heads() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    let mut ablated = 0;
    for case in attention_cases() {
        let got = case.gpu_z(&ctx);
        let d = max_diff(&got, &case.z);
        worst = worst.max(d);
        assert!(d < TOL, "{}: max diff {d}", case.name);
        if case.ablate.iter().any(|&a| a) {
            ablated += 1;
            let c = case.h * case.d;
            assert!(
                got.chunks(c)
                    .all(|row| row[..case.d].iter().all(|&v| v == 0.0)),
                "{}: head 0 is ablated",
                case.name
            );
        }
    }
    assert!(ablated > 0, "the cases include ablated heads");
    eprintln!(
        "attention_values_match_with_relative_values_and_ablated_heads: worst difference {worst:e}"
    );
}

/// The one-dispatch attention of a decoding step (attention_decode.wgsl) against
/// `attention_forward` with T = 1: scores, probabilities and the heads' outputs, over a cache
/// with unfilled (NaN) rows after each sequence's keys, for every score function, mask,
/// ALiBi, padding keys (sequence 1 fully masked) and ablated heads, and rows longer than
/// the kernel's 64 threads.
#[test]
fn fused_decode_attention_matches_the_cpu_for_one_query_row() {
    if gpu_or_skip().is_none() {
        return;
    }
    // A private context: the shared one counts the dispatches of tests running in parallel.
    let ctx = pollster::block_on(GpuContext::request()).unwrap();
    let mut cases: Vec<AttnCase> = attention_cases()
        .into_iter()
        .filter(|c| c.t == 1 && c.rel.is_none() && !(c.alibi && c.score == Score::Additive))
        .collect();
    let long = (2, 2, 4, 1, 150, 149);
    let mut seed = 9000;
    for mask in masks(long) {
        for (score, scale, alibi) in [
            (Score::ScaledDot, true, false),
            (Score::ScaledDot, true, true),
            (Score::Additive, true, false),
        ] {
            seed += 10;
            cases.push(AttnCase::new(
                long,
                score,
                scale,
                mask.clone(),
                None,
                alibi,
                seed % 20 == 0,
                seed,
            ));
        }
    }
    let mut worst = 0.0f32;
    let (mut ablated, mut fully_masked) = (0, 0);
    for case in &cases {
        let c = case.h * case.d;
        let extra = 3;
        let (kv, toks) = cache_layout(case, extra);
        let dims = AttnDims {
            kv_rows: case.s + extra,
            ..case.dims()
        };
        let q = ctx.upload("q", &case.q).unwrap();
        let gkv = ctx.upload("kv cache", &kv).unwrap();
        let gt = ctx.upload_u32("cached tokens", &toks).unwrap();
        let slopes = ctx.upload("slopes", &case.slopes).unwrap();
        let add_v = ctx.upload("add_v", &case.add_v).unwrap();
        let scores = ctx.zeros("scores", case.scores.len()).unwrap();
        let probs = ctx.zeros("probs", case.probs.len()).unwrap();
        let z = ctx.zeros("z", case.z.len()).unwrap();
        let cells = case
            .mask
            .cell_table()
            .map(|(table, n)| (ctx.upload_u32("cells", &table).unwrap(), n));
        let divisor = if case.score == Score::ScaledDot && case.scale {
            (case.d as f32).sqrt()
        } else {
            1.0
        };
        let before = ctx.stats();
        let mut rec = ctx.recorder().unwrap();
        rec.attention_decode(&DecodeAttnArgs {
            q: Rows::dense(&q, c),
            k: Rows {
                buf: &gkv,
                stride: 2 * c,
                col: 0,
            },
            v: Rows {
                buf: &gkv,
                stride: 2 * c,
                col: c,
            },
            key_tokens: &gt,
            alibi_slopes: case.alibi.then_some(&slopes),
            additive_v: (case.score == Score::Additive).then_some(&add_v),
            divisor,
            mask: &case.mask,
            cells: cells.as_ref().map(|(b, n)| (b, *n)),
            pad_id: 0,
            ablate: &case.ablate,
            scores: &scores,
            probs: &probs,
            out: &z,
            dims,
        })
        .unwrap();
        let s_slot = rec.read_all(&scores).unwrap();
        let p_slot = rec.read_all(&probs).unwrap();
        let z_slot = rec.read_all(&z).unwrap();
        let back = pollster::block_on(rec.finish()).unwrap();
        assert_eq!(ctx.stats().since(&before).dispatches, 1, "{}", case.name);
        let got_s: Vec<f32> = back
            .f32(s_slot)
            .iter()
            .map(|&v| if v == MASKED { f32::NEG_INFINITY } else { v })
            .collect();
        let got_p = back.f32(p_slot);
        let ds = max_diff(&got_s, &case.scores);
        let dp = max_diff(got_p, &case.probs);
        let dz = max_diff(back.f32(z_slot), &case.z);
        assert!(
            ds < 1e-4 && dp < TOL && dz < TOL,
            "{}: scores {ds}, probs {dp}, z {dz}",
            case.name
        );
        worst = worst.max(dp).max(dz);
        if case.ablate.iter().any(|&a| a) {
            ablated += 1;
            assert!(
                back.f32(z_slot)
                    .chunks(c)
                    .all(|row| row[..case.d].iter().all(|&v| v == 0.0)),
                "{}: head 0 is ablated",
                case.name
            );
        }
        for (row_g, row_w) in got_p.chunks(case.s).zip(case.probs.chunks(case.s)) {
            if row_w.iter().all(|&p| p == 0.0) {
                fully_masked += 1;
                assert!(
                    row_g.iter().all(|&p| p == 0.0),
                    "{}: a masked row",
                    case.name
                );
            }
        }
    }
    assert!(
        ablated > 0 && fully_masked > 0,
        "the cases include ablated heads and masked rows"
    );
    assert!(
        cases.iter().any(|c| c.s > 64),
        "the cases include rows past 64 keys"
    );
    eprintln!("fused_decode_attention_matches_the_cpu_for_one_query_row: {} cases, worst difference {worst:e}", cases.len());
}

/// A KV cache layout of the case's keys and values: each sequence's S rows followed by
/// `extra` rows of NaN (room the cache has not filled), keys tokens likewise with a pad
/// id in the unfilled rows. A kernel that read past S would show NaN or a changed mask.
fn cache_layout(case: &AttnCase, extra: usize) -> (Vec<f32>, Vec<u32>) {
    let (b, s, c) = (case.b, case.s, case.h * case.d);
    let r = s + extra;
    let mut kv = vec![f32::NAN; b * r * 2 * c]; // (B·R, 2C)
    let mut toks = vec![0u32; b * r]; // (B·R)
    for seq in 0..b {
        for j in 0..s {
            let from = (seq * s + j) * 2 * c;
            let to = (seq * r + j) * 2 * c;
            kv[to..to + 2 * c].copy_from_slice(&case.kv[from..from + 2 * c]);
            toks[seq * r + j] = if case.key_pad[seq * s + j] { 0 } else { 5 };
        }
    }
    (kv, toks)
}

#[test]
fn attention_over_a_partly_filled_cache_reads_only_its_filled_rows() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    // Sequence 1 of every case is all padding; the cases with B = 3 check the rows of a
    // sequence after it.
    for case in attention_cases()
        .iter()
        .filter(|c| c.t == 1 && c.mask.rule != MaskRule::None)
    {
        let c = case.h * case.d;
        let extra = 4;
        let (kv, toks) = cache_layout(case, extra);
        let dims = AttnDims {
            kv_rows: case.s + extra,
            ..case.dims()
        };
        let q = ctx.upload("q", &case.q).unwrap();
        let gkv = ctx.upload("kv cache", &kv).unwrap();
        let gt = ctx.upload_u32("cached tokens", &toks).unwrap();
        let rel_k = ctx.upload("rel_k", &case.rel_k).unwrap();
        let rel_v = ctx.upload("rel_v", &case.rel_v).unwrap();
        let slopes = ctx.upload("slopes", &case.slopes).unwrap();
        let add_v = ctx.upload("add_v", &case.add_v).unwrap();
        let flags: Vec<u32> = case.ablate.iter().map(|&a| a as u32).collect();
        let ablate = ctx.upload_u32("ablate", &flags).unwrap();
        let probs = ctx.upload("probs", &case.probs).unwrap();
        let scores = ctx.zeros("scores", case.scores.len()).unwrap();
        let z = ctx.zeros("z", case.z.len()).unwrap();
        let cells = case
            .mask
            .cell_table()
            .map(|(table, n)| (ctx.upload_u32("cells", &table).unwrap(), n));
        let divisor = if case.score == Score::ScaledDot && case.scale {
            (case.d as f32).sqrt()
        } else {
            1.0
        };
        let mut rec = ctx.recorder().unwrap();
        rec.attention_scores(&ScoreArgs {
            q: Rows::dense(&q, c),
            k: Rows {
                buf: &gkv,
                stride: 2 * c,
                col: 0,
            },
            key_tokens: &gt,
            rel_k: case.rel.map(|_| &rel_k),
            rel_max: case.rel.unwrap_or(0),
            alibi_slopes: case.alibi.then_some(&slopes),
            additive_v: (case.score == Score::Additive).then_some(&add_v),
            divisor,
            mask: &case.mask,
            cells: cells.as_ref().map(|(b, n)| (b, *n)),
            pad_id: 0,
            out: &scores,
            dims,
        })
        .unwrap();
        // The values from the CPU's probabilities, so each kernel is checked on its own.
        rec.attention_values(&ValueArgs {
            probs: &probs,
            v: Rows {
                buf: &gkv,
                stride: 2 * c,
                col: c,
            },
            rel_v: case.rel.map(|_| &rel_v),
            rel_max: case.rel.unwrap_or(0),
            ablate: &ablate,
            out: &z,
            dims,
        })
        .unwrap();
        let s_slot = rec.read_all(&scores).unwrap();
        let z_slot = rec.read_all(&z).unwrap();
        let back = pollster::block_on(rec.finish()).unwrap();
        let got_scores: Vec<f32> = back
            .f32(s_slot)
            .iter()
            .map(|&v| if v == MASKED { f32::NEG_INFINITY } else { v })
            .collect();
        let ds = max_diff(&got_scores, &case.scores);
        let dz = max_diff(back.f32(z_slot), &case.z);
        assert!(ds < 1e-4 && dz < TOL, "{}: scores {ds}, z {dz}", case.name);
        worst = worst.max(ds).max(dz);
    }
    eprintln!("attention over a partly filled cache: worst difference {worst:e}");
}

/// What copy_rows.wgsl must do, written out: element i of row t of destination
/// sequence b comes from row t of source sequence `from[b]`.
#[allow(clippy::too_many_arguments)]
fn copy_reference(
    src: &[u32],
    dst: &mut [u32],
    (s_seq, s_first, s_stride, s_col): (usize, usize, usize, usize),
    (d_seq, d_first, d_stride, d_col): (usize, usize, usize, usize),
    from: Option<&[u32]>,
    b: usize,
    t: usize,
    w: usize,
) {
    for seq in 0..b {
        let f = from.map_or(seq, |m| m[seq] as usize);
        for row in 0..t {
            for i in 0..w {
                dst[(seq * d_seq + d_first + row) * d_stride + d_col + i] =
                    src[(f * s_seq + s_first + row) * s_stride + s_col + i];
            }
        }
    }
}

#[test]
fn copy_rows_moves_exact_bits_for_cache_appends_and_beam_gathers() {
    let Some(ctx) = gpu_or_skip() else { return };
    // Bit patterns an f32 copy could change: small integers (subnormal floats), −0, NaNs
    // with payloads, ∞, and ordinary floats.
    let pattern = |n: usize, seed: u32| -> Vec<u32> {
        (0..n as u32)
            .map(|i| match (i + seed) % 6 {
                0 => i % 37,
                1 => 0x8000_0000,
                2 => 0x7fc0_0000 | (i & 0xff),
                3 => 0x7f80_0000,
                4 => 0x0000_0001 + i,
                _ => (1.5f32 + i as f32).to_bits(),
            })
            .collect()
    };
    // (B, T, W, source (seq rows, first, stride, col), destination (…), from)
    type Layout = (usize, usize, usize, usize);
    type Case = (usize, usize, usize, Layout, Layout, Option<Vec<u32>>);
    let cases: Vec<Case> = vec![
        // Append: K | V columns of (B·T, 3C) projections, C = 4 → rows 2.. of a P = 7 cache.
        (2, 3, 8, (3, 0, 12, 4), (7, 2, 8, 0), None),
        // Append one token per sequence (W = 1) at position 5 of 6.
        (3, 1, 1, (1, 0, 1, 0), (6, 5, 1, 0), None),
        // Gather: survivors of a beam, with repeats, from 3 rows to 4.
        (4, 5, 6, (9, 0, 6, 0), (9, 0, 6, 0), Some(vec![2, 0, 2, 1])),
        // Gather down to one sequence of one row.
        (1, 1, 3, (2, 0, 3, 0), (2, 0, 3, 0), Some(vec![1])),
        // Nothing to copy.
        (2, 0, 4, (3, 0, 4, 0), (3, 0, 4, 0), None),
    ];
    for (i, (b, t, w, sl, dl, from)) in cases.into_iter().enumerate() {
        let src_seqs = from
            .as_ref()
            .map_or(b, |m| *m.iter().max().unwrap() as usize + 1);
        let src = pattern(src_seqs * sl.0 * sl.2, 1);
        let init = pattern(b * dl.0 * dl.2, 4);
        let mut want = init.clone();
        copy_reference(&src, &mut want, sl, dl, from.as_deref(), b, t, w);
        let gs = ctx.upload_u32("src", &src).unwrap();
        let gd = ctx.upload_u32("dst", &init).unwrap();
        let got = run_and_read(&ctx, &gd, |r| {
            r.copy_rows(&CopyArgs {
                src: SeqRows {
                    buf: &gs,
                    seq_rows: sl.0,
                    first: sl.1,
                    stride: sl.2,
                    col: sl.3,
                },
                dst: SeqRows {
                    buf: &gd,
                    seq_rows: dl.0,
                    first: dl.1,
                    stride: dl.2,
                    col: dl.3,
                },
                from_seq: from.as_deref(),
                batch: b,
                t_len: t,
                width: w,
            })
            .unwrap()
        });
        let got: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "copy case {i}");
    }
}

#[test]
fn copy_rows_refuses_rows_past_a_sequence_or_a_buffer() {
    let Some(ctx) = gpu_or_skip() else { return };
    let a = ctx.zeros("a", 12).unwrap();
    let b = ctx.zeros("b", 12).unwrap();
    let seq = |buf, seq_rows, first| SeqRows {
        buf,
        seq_rows,
        first,
        stride: 2,
        col: 0,
    };
    let mut rec = ctx.recorder().unwrap();
    let mut args = CopyArgs {
        src: seq(&a, 3, 0),
        dst: seq(&b, 3, 2),
        from_seq: None,
        batch: 2,
        t_len: 2,
        width: 2,
    };
    // Rows 2..4 of a 3-row sequence.
    let e = rec.copy_rows(&args).unwrap_err().to_string();
    assert!(e.contains("past the"), "{e}");
    // A source sequence that is not in the buffer.
    args.dst = seq(&b, 3, 0);
    let from = [0, 5];
    args.from_seq = Some(&from);
    let e = rec.copy_rows(&args).unwrap_err().to_string();
    assert!(e.contains("copy source"), "{e}");
}
