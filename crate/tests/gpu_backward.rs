//! Every training kernel (backward passes, loss, clipping, Adam) against the CPU function
//! it mirrors, on random inputs and edge cases: one row, sizes that are not multiples of
//! the 16 × 16 tile or the 64-thread workgroup (1, 7, 17, 33, 65), rows whose gradient is
//! zero, padded targets, label smoothing 0 and 0.1, clipping active and inactive, and
//! gradients added to buffers that already hold values (the CPU backward accumulates).
//!
//! The measure, everywhere: relative difference = max_i |gpu_i − cpu_i| / max(1, max_i |cpu_i|)
//! (an absolute difference for values of size ≤ 1, relative to the largest value above
//! that); every kernel must stay below 1e-5. Adam's moments, which are small, are held to
//! the stricter max |gpu − cpu| / max |cpu|. Each test prints its worst value, which
//! docs/gpu-training.md lists.

mod support;

use support::{config, gpu_or_skip, max_diff, model, values};
use tplay::backend::gpu::{
    AdamArgs, CrossEntropyArgs, GpuAdam, GpuBuffer, GpuContext, LinearBackwardArgs, LrRule,
    MatmulArgs, Recorder, Rows,
};
use tplay::config::{Activation, Arch, Norm, PosEncoding, Score};
use tplay::model::ffn::{ffn_forward, linear_forward, FfnRecord};
use tplay::model::norm::layernorm_forward;
use tplay::model::ParamKind;
use tplay::train::backward::embedding::embedding_backward;
use tplay::train::backward::ffn::{activation_backward, ffn_backward, linear_backward, FfnGrads};
use tplay::train::backward::head::{classifier_backward, lm_head_backward};
use tplay::train::backward::norm::layernorm_backward;
use tplay::train::backward::position::learned_positions_backward;
use tplay::train::backward::zero_grads;
use tplay::train::loss::{cross_entropy_backward, cross_entropy_forward};
use tplay::train::optim::{clip_grad_norm, Adam, AdamConfig};
use tplay::train::schedule::noam_lr;

/// The bound on [`rel_diff`] for every kernel.
const TOL: f32 = 1e-5;

/// max |got − want| / max(1, max |want|); NaN or an unshared infinity is infinite.
fn rel_diff(got: &[f32], want: &[f32]) -> f32 {
    assert_eq!(got.len(), want.len(), "compared buffers differ in length");
    let scale = want.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    max_diff(got, want) / scale
}

/// A context of its own, for a test that counts submissions (the shared one counts every
/// test's).
fn own_gpu() -> Option<GpuContext> {
    gpu_or_skip()?;
    Some(pollster::block_on(GpuContext::request()).unwrap())
}

/// Record with `f`, submit once, and read back `outs` in order.
fn run(ctx: &GpuContext, outs: &[&GpuBuffer], f: impl FnOnce(&mut Recorder)) -> Vec<Vec<f32>> {
    let mut rec = ctx.recorder().unwrap();
    f(&mut rec);
    let slots: Vec<_> = outs.iter().map(|b| rec.read_all(b).unwrap()).collect();
    let back = pollster::block_on(rec.finish()).unwrap();
    slots.iter().map(|&s| back.f32(s).to_vec()).collect()
}

/// Zero the rows listed in `rows` of an (R, width) buffer: rows with no gradient.
fn zero_rows(x: &mut [f32], width: usize, rows: &[usize]) {
    for &r in rows {
        if (r + 1) * width <= x.len() {
            x[r * width..(r + 1) * width].fill(0.0);
        }
    }
}

/// Shapes (N, IN, OUT) with one row, odd sizes and tile-sized ones.
const LINEAR_SHAPES: [(usize, usize, usize); 8] = [
    (1, 1, 1),
    (1, 7, 17),
    (7, 17, 33),
    (17, 33, 65),
    (16, 16, 16),
    (33, 65, 7),
    (65, 7, 1),
    (40, 32, 96),
];

#[test]
fn linear_backward_matches_both_operand_gradients_and_the_bias_and_adds_to_them() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for (case, &(n, c_in, c_out)) in LINEAR_SHAPES.iter().enumerate() {
        for (with_dinp, with_bias) in [(true, true), (false, true), (true, false)] {
            let seed = 100 + 10 * case as u64;
            let mut dout = values(n * c_out, seed, 1.0); // (N, OUT)
            zero_rows(&mut dout, c_out, &[0, 3]);
            let inp = values(n * c_in, seed + 1, 1.0); // (N, IN)
            let w = values(c_out * c_in, seed + 2, 0.5); // (OUT, IN)
                                                         // Gradients already holding values: both sides must add to them.
            let mut dinp = values(n * c_in, seed + 3, 0.3); // (N, IN)
            let mut dw = values(c_out * c_in, seed + 4, 0.3); // (OUT, IN)
            let mut db = values(c_out, seed + 5, 0.3); // (OUT)
            let (g_dinp, g_dw, g_db) = (
                ctx.upload("dinp", &dinp).unwrap(),
                ctx.upload("dw", &dw).unwrap(),
                ctx.upload("db", &db).unwrap(),
            );
            linear_backward(
                with_dinp.then_some(&mut dinp[..]),
                &mut dw,
                with_bias.then_some(&mut db[..]),
                &dout,
                &inp,
                &w,
                n,
                c_in,
                c_out,
            );
            let (g_dout, g_inp, g_w) = (
                ctx.upload("dout", &dout).unwrap(),
                ctx.upload("inp", &inp).unwrap(),
                ctx.upload("w", &w).unwrap(),
            );
            let got = run(&ctx, &[&g_dinp, &g_dw, &g_db], |r| {
                r.linear_backward(&LinearBackwardArgs::dense(
                    &g_dout,
                    &g_inp,
                    &g_w,
                    with_dinp.then_some(&g_dinp),
                    &g_dw,
                    with_bias.then_some(&g_db),
                    (n, c_in, c_out),
                ))
                .unwrap()
            });
            for (what, g, c) in [
                ("dinp", &got[0], &dinp),
                ("dW", &got[1], &dw),
                ("db", &got[2], &db),
            ] {
                let d = rel_diff(g, c);
                worst = worst.max(d);
                assert!(
                    d < TOL,
                    "{what} N={n} IN={c_in} OUT={c_out} dinp={with_dinp} bias={with_bias}: {d:e}"
                );
            }
        }
    }
    eprintln!("linear_backward: worst relative difference {worst:e}");
}

#[test]
fn classifier_backward_reads_and_writes_position_zero_of_each_sequence_through_strides() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for &(b, t, c, classes) in &[(1, 1, 1, 2), (3, 5, 7, 3), (7, 17, 16, 5), (2, 1, 33, 65)] {
        let dclass = values(b * classes, 200 + c as u64, 1.0); // (B, N)
        let x = values(b * t * c, 201, 1.0); // (B, T, C)
        let w = values(classes * c, 202, 0.5); // (N, C)
        let mut dx = values(b * t * c, 203, 0.2); // (B, T, C)
        let mut dw = vec![0.0; classes * c]; // (N, C)
        let mut db = vec![0.0; classes]; // (N)
        let (g_dx, g_dw, g_db) = (
            ctx.upload("dx", &dx).unwrap(),
            ctx.upload("dw", &dw).unwrap(),
            ctx.upload("db", &db).unwrap(),
        );
        classifier_backward(&mut dx, &mut dw, &mut db, &dclass, &x, &w, b, t, c, classes);
        let (g_dclass, g_x, g_w) = (
            ctx.upload("dclass", &dclass).unwrap(),
            ctx.upload("x", &x).unwrap(),
            ctx.upload("w", &w).unwrap(),
        );
        let got = run(&ctx, &[&g_dx, &g_dw, &g_db], |r| {
            // Row b of the classifier's input is row b·T of x: a row stride of T·C.
            let first = |buf| Rows {
                buf,
                stride: t * c,
                col: 0,
            };
            r.linear_backward(&LinearBackwardArgs {
                dout: Rows::dense(&g_dclass, classes),
                inp: first(&g_x),
                weight: &g_w,
                w_offset: 0,
                dinp: Some(first(&g_dx)),
                dweight: &g_dw,
                dw_offset: 0,
                dbias: Some(&g_db),
                db_offset: 0,
                n: b,
                c_in: c,
                c_out: classes,
            })
            .unwrap()
        });
        for (what, g, cpu) in [
            ("dx", &got[0], &dx),
            ("dW", &got[1], &dw),
            ("db", &got[2], &db),
        ] {
            let d = rel_diff(g, cpu);
            worst = worst.max(d);
            assert!(d < TOL, "classifier {what} B={b} T={t} C={c}: {d:e}");
        }
    }
    eprintln!("classifier backward: worst relative difference {worst:e}");
}

#[test]
fn activation_backward_matches_the_relu_and_exact_gelu_derivatives() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    let specials = [0.0, -0.0, 1e-8, -1e-8, 1e-3, -1e-3, 5.0, -5.0, 30.0, -30.0];
    for act in [Activation::Relu, Activation::Gelu, Activation::GeluTanh] {
        for n in [1, 7, 17, 63, 64, 65, 1000] {
            let mut inp = values(n, 300 + n as u64, 4.0); // (N)
            for (x, s) in inp.iter_mut().zip(specials) {
                *x = s;
            }
            let mut dout = values(n, 301, 1.0); // (N)
            if n > 2 {
                dout[1] = 0.0;
            }
            let mut dinp = values(n, 302, 0.5); // (N)
            let g_dinp = ctx.upload("dinp", &dinp).unwrap();
            activation_backward(&mut dinp, &dout, &inp, act);
            let (g_dout, g_inp) = (
                ctx.upload("dout", &dout).unwrap(),
                ctx.upload("inp", &inp).unwrap(),
            );
            let got = run(&ctx, &[&g_dinp], |r| {
                r.activation_backward(&g_dout, &g_inp, &g_dinp, n, act)
                    .unwrap()
            });
            let d = rel_diff(&got[0], &dinp);
            worst = worst.max(d);
            assert!(d < TOL, "{act:?} backward n={n}: {d:e}");
        }
    }
    eprintln!("activation_backward: worst relative difference {worst:e}");
}

#[test]
fn layer_norm_backward_matches_dx_dgamma_and_dbeta_on_narrow_and_wide_rows() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for &(rows, c) in &[
        (1, 1),
        (1, 7),
        (3, 17),
        (5, 64),
        (2, 65),
        (33, 33),
        (70, 12),
        (4, 130),
    ] {
        // A mean far from zero, as in the forward test.
        let x: Vec<f32> = values(rows * c, 400 + c as u64, 2.0)
            .iter()
            .map(|v| v + 3.0)
            .collect(); // (R, C)
        let gamma: Vec<f32> = values(c, 401, 0.2).iter().map(|v| v + 1.0).collect(); // (C)
        let beta = values(c, 402, 0.1); // (C)
        let mut dy = values(rows * c, 403, 1.0); // (R, C)
        zero_rows(&mut dy, c, &[1]);
        let mut y = vec![0.0; rows * c]; // (R, C)
        let (mut mean, mut rstd) = (vec![0.0; rows], vec![0.0; rows]); // (R), (R)
        layernorm_forward(&mut y, &mut mean, &mut rstd, &x, &gamma, &beta, rows, c);
        let mut dx = values(rows * c, 404, 0.2); // (R, C)
        let mut dgamma = values(c, 405, 0.2); // (C)
        let mut dbeta = values(c, 406, 0.2); // (C)
        let (g_dx, g_dg, g_db) = (
            ctx.upload("dx", &dx).unwrap(),
            ctx.upload("dgamma", &dgamma).unwrap(),
            ctx.upload("dbeta", &dbeta).unwrap(),
        );
        layernorm_backward(
            &mut dx,
            &mut dgamma,
            &mut dbeta,
            &dy,
            &x,
            &gamma,
            &mean,
            &rstd,
            rows,
            c,
        );
        let (g_x, g_gamma, g_dy) = (
            ctx.upload("x", &x).unwrap(),
            ctx.upload("gamma", &gamma).unwrap(),
            ctx.upload("dy", &dy).unwrap(),
        );
        let got = run(&ctx, &[&g_dx, &g_dg, &g_db], |r| {
            r.layer_norm_backward(&g_x, &g_gamma, &g_dy, &g_dx, &g_dg, &g_db, rows, c)
                .unwrap()
        });
        for (what, g, cpu) in [
            ("dx", &got[0], &dx),
            ("dgamma", &got[1], &dgamma),
            ("dbeta", &got[2], &dbeta),
        ] {
            let d = rel_diff(g, cpu);
            worst = worst.max(d);
            assert!(d < TOL, "layer norm {what} R={rows} C={c}: {d:e}");
        }
    }
    eprintln!("layer_norm_backward: worst relative difference {worst:e}");
}

#[test]
fn embedding_backward_gathers_repeated_tokens_like_the_cpu_scatter_and_is_deterministic() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for &(rows, v, c, scale) in &[
        (1, 1, 1, 1.0f32),
        (7, 14, 16, 4.0),
        (17, 33, 7, 1.0),
        (65, 14, 33, 33f32.sqrt()),
    ] {
        // Tokens with repeats (a small range) and unused table rows (v > range).
        let tokens: Vec<u32> = values(rows, 500 + rows as u64, 1.0)
            .iter()
            .map(|x| ((x.abs() * 5.0) as u32).min(v as u32 - 1))
            .collect(); // (N)
        let mut dx = values(rows * c, 501, 1.0); // (N, C)
        zero_rows(&mut dx, c, &[2]);
        let mut dtable = values(v * c, 502, 0.1); // (V, C)
        let g_dt = ctx.upload("dtable", &dtable).unwrap();
        let g_dt2 = ctx.upload("dtable again", &dtable).unwrap();
        embedding_backward(&mut dtable, &dx, &tokens, scale, rows, c);
        let (g_tok, g_dx) = (
            ctx.upload_u32("tokens", &tokens).unwrap(),
            ctx.upload("dx", &dx).unwrap(),
        );
        let got = run(&ctx, &[&g_dt, &g_dt2], |r| {
            r.embedding_backward(&g_tok, &g_dx, &g_dt, (rows, v, c), scale)
                .unwrap();
            r.embedding_backward(&g_tok, &g_dx, &g_dt2, (rows, v, c), scale)
                .unwrap();
        });
        let same_bits = got[0]
            .iter()
            .zip(&got[1])
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same_bits, "two runs gave different bits (N={rows} V={v})");
        let d = rel_diff(&got[0], &dtable);
        worst = worst.max(d);
        assert!(d < TOL, "embedding backward N={rows} V={v} C={c}: {d:e}");
    }
    eprintln!("embedding_backward: worst relative difference {worst:e}");
}

#[test]
fn learned_positions_backward_sums_each_position_over_the_batch_at_an_offset() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for &(b, t, c, pos0, max_len) in &[
        (1, 1, 1, 0, 1),
        (3, 7, 17, 0, 12),
        (5, 1, 16, 4, 8),
        (2, 33, 65, 2, 40),
    ] {
        let dx = values(b * t * c, 600 + t as u64, 1.0); // (B, T, C)
        let mut dpos = values(max_len * c, 601, 0.1); // (max_len, C)
        let g_dpos = ctx.upload("dpos", &dpos).unwrap();
        learned_positions_backward(&mut dpos, &dx, pos0, b, t, c);
        let g_dx = ctx.upload("dx", &dx).unwrap();
        let got = run(&ctx, &[&g_dpos], |r| {
            r.positions_backward(&g_dx, &g_dpos, (b, t, c), pos0)
                .unwrap()
        });
        let d = rel_diff(&got[0], &dpos);
        worst = worst.max(d);
        assert!(d < TOL, "positions backward B={b} T={t} pos0={pos0}: {d:e}");
    }
    eprintln!("positions_backward: worst relative difference {worst:e}");
}

#[test]
fn cross_entropy_matches_loss_count_and_dlogits_with_padding_and_label_smoothing() {
    let Some(ctx) = gpu_or_skip() else { return };
    let (mut worst_loss, mut worst_grad) = (0.0f32, 0.0f32);
    let pad = 0u32;
    for &(n, v) in &[(1, 1), (1, 7), (7, 17), (33, 65), (65, 100), (17, 3)] {
        for smoothing in [0.0f32, 0.1] {
            for ignore in [None, Some(pad)] {
                for all_padded in [false, true] {
                    if all_padded && ignore.is_none() {
                        continue;
                    }
                    let logits = values(n * v, 700 + (n * v) as u64, 4.0); // (N, V)
                    let mut targets: Vec<u32> = values(n, 701 + v as u64, 1.0)
                        .iter()
                        .map(|x| ((x.abs() * v as f32) as u32).min(v as u32 - 1))
                        .collect(); // (N)
                    if all_padded {
                        targets.fill(pad);
                    } else if n > 2 {
                        targets[1] = pad;
                    }
                    let mut probs = vec![0.0; n * v]; // (N, V)
                    let (loss, count) = cross_entropy_forward(
                        &mut probs, &logits, &targets, ignore, smoothing, n, v,
                    );
                    let mut dlogits = values(n * v, 702, 0.05); // (N, V)
                    let g_dl = ctx.upload("dlogits", &dlogits).unwrap();
                    cross_entropy_backward(
                        &mut dlogits,
                        &probs,
                        &targets,
                        ignore,
                        smoothing,
                        count,
                        1.0,
                        n,
                        v,
                    );
                    let (g_logits, g_targets) = (
                        ctx.upload("logits", &logits).unwrap(),
                        ctx.upload_u32("targets", &targets).unwrap(),
                    );
                    let g_loss = ctx.zeros("loss", 2).unwrap();
                    let got = run(&ctx, &[&g_loss, &g_dl], |r| {
                        r.cross_entropy(&CrossEntropyArgs {
                            logits: &g_logits,
                            targets: &g_targets,
                            ignore,
                            smoothing,
                            dloss: 1.0,
                            loss: &g_loss,
                            dlogits: Some(&g_dl),
                            rows: n,
                            v,
                        })
                        .unwrap()
                    });
                    let case = format!(
                        "N={n} V={v} ε={smoothing} ignore={ignore:?} all padded={all_padded}"
                    );
                    assert_eq!(got[0][1], count as f32, "count, {case}");
                    let dl = rel_diff(&got[0][..1], &[loss]);
                    let dg = rel_diff(&got[1], &dlogits);
                    worst_loss = worst_loss.max(dl);
                    worst_grad = worst_grad.max(dg);
                    assert!(dl < TOL, "loss {} vs {loss}, {case}: {dl:e}", got[0][0]);
                    assert!(dg < TOL, "dlogits, {case}: {dg:e}");
                }
            }
        }
    }
    eprintln!(
        "cross_entropy: worst relative difference loss {worst_loss:e}, dlogits {worst_grad:e}"
    );
}

/// A small model's gradient tree, every tensor filled with values of size `amp`.
fn gradient_tree(amp: f32, seed0: u64) -> tplay::model::ModelParams<tplay::tensor::Tensor> {
    let m = model(
        config(
            Arch::DecoderOnly,
            PosEncoding::Learned,
            Norm::PreLn,
            Score::ScaledDot,
        ),
        7,
    );
    let mut grads = zero_grads(&m);
    let mut seed = seed0;
    grads.visit_mut(&mut |_, t, _| {
        seed += 1;
        t.data = values(t.numel(), seed, amp);
    });
    grads
}

fn trained(grads: &tplay::model::ModelParams<tplay::tensor::Tensor>) -> Vec<Vec<f32>> {
    let mut out = vec![];
    grads.visit(&mut |_, t, k| {
        if k == ParamKind::Trained {
            out.push(t.data.clone());
        }
    });
    out
}

#[test]
fn clipping_computes_the_global_norm_and_scales_only_when_it_exceeds_the_limit() {
    let Some(ctx) = gpu_or_skip() else { return };
    let (mut worst_norm, mut worst_grad) = (0.0f32, 0.0f32);
    for (max_norm, active) in [(1e6f32, false), (0.5, true), (3.0, true)] {
        let mut grads = gradient_tree(0.1, 800);
        let before = trained(&grads);
        let norm = clip_grad_norm(&mut grads, max_norm);
        assert_eq!(norm > max_norm, active, "the case is what it claims");
        let after = trained(&grads);
        let bufs: Vec<GpuBuffer> = before
            .iter()
            .map(|g| ctx.upload("gradient", g).unwrap())
            .collect();
        let acc = ctx.zeros("norm²", 1).unwrap();
        let list: Vec<(&GpuBuffer, usize)> = bufs.iter().map(|b| (b, b.len())).collect();
        let mut outs: Vec<&GpuBuffer> = vec![&acc];
        outs.extend(bufs.iter());
        let got = run(&ctx, &outs, |r| {
            r.clip_grad_norm(&list, &acc, max_norm).unwrap()
        });
        let gpu_norm = got[0][0].sqrt();
        let dn = rel_diff(&[gpu_norm], &[norm]);
        worst_norm = worst_norm.max(dn);
        assert!(dn < TOL, "norm {gpu_norm} vs {norm}: {dn:e}");
        for (i, (g, cpu)) in got[1..].iter().zip(&after).enumerate() {
            let d = rel_diff(g, cpu);
            worst_grad = worst_grad.max(d);
            assert!(d < TOL, "tensor {i}, max_norm {max_norm}: {d:e}");
            if !active {
                assert_eq!(g, cpu, "inactive clipping leaves every bit alone");
            }
        }
    }
    eprintln!(
        "grad_norm: worst relative difference norm {worst_norm:e}, clipped gradients {worst_grad:e}"
    );
}

#[test]
fn adam_steps_on_the_gpu_equal_the_same_steps_of_optim_rs_with_noam_and_constant_rates() {
    let Some(ctx) = gpu_or_skip() else { return };
    let (mut worst_w, mut worst_mom, mut worst_lr) = (0.0f32, 0.0f32, 0.0f32);
    let config_ = AdamConfig::default();
    for rule in [
        LrRule::Noam {
            d_model: 16,
            warmup: 3,
            factor: 2.0,
        },
        LrRule::Constant(1e-2),
    ] {
        let mut cpu = model(
            config(
                Arch::DecoderOnly,
                PosEncoding::Learned,
                Norm::PreLn,
                Score::ScaledDot,
            ),
            11,
        );
        let mut adam = Adam::new(&cpu, config_);
        let weights = trained_weights(&cpu);
        let w_bufs: Vec<GpuBuffer> = weights
            .iter()
            .map(|w| ctx.upload("weights", w).unwrap())
            .collect();
        let m_bufs: Vec<GpuBuffer> = weights
            .iter()
            .map(|w| ctx.zeros("m", w.len()).unwrap())
            .collect();
        let v_bufs: Vec<GpuBuffer> = weights
            .iter()
            .map(|w| ctx.zeros("v", w.len()).unwrap())
            .collect();
        let lr_out = ctx.zeros("lr", 1).unwrap();
        for step in 1..=5u64 {
            // A new gradient each step, some of it zero.
            let mut grads = gradient_tree(0.2 / step as f32, 900 + 100 * step);
            grads.visit_mut(&mut |_, t, _| {
                if let Some(x) = t.data.first_mut() {
                    *x = 0.0;
                }
            });
            let lr = match rule {
                LrRule::Constant(lr) => lr,
                LrRule::Noam {
                    d_model,
                    warmup,
                    factor,
                } => noam_lr(step, d_model, warmup, factor),
            };
            adam.step(&mut cpu, &grads, lr);
            let g_bufs: Vec<GpuBuffer> = trained(&grads)
                .iter()
                .map(|g| ctx.upload("gradient", g).unwrap())
                .collect();
            let got = run(&ctx, &[&lr_out], |r| {
                for i in 0..w_bufs.len() {
                    r.adam(&AdamArgs {
                        grad: &g_bufs[i],
                        weight: &w_bufs[i],
                        m: &m_bufs[i],
                        v: &v_bufs[i],
                        lr_out: &lr_out,
                        n: w_bufs[i].len(),
                        step,
                        lr: rule,
                        config: config_,
                    })
                    .unwrap();
                }
            });
            let dl = rel_diff(&got[0], &[lr]);
            worst_lr = worst_lr.max(dl);
            assert!(dl < TOL, "step {step} lr {} vs {lr}", got[0][0]);
        }
        let want_w = trained_weights(&cpu);
        let (want_m, want_v) = adam.moments();
        let mut outs: Vec<&GpuBuffer> = vec![];
        outs.extend(w_bufs.iter());
        outs.extend(m_bufs.iter());
        outs.extend(v_bufs.iter());
        let got = run(&ctx, &outs, |_| {});
        let k = w_bufs.len();
        for i in 0..k {
            let dw = rel_diff(&got[i], &want_w[i]);
            // The moments are small (|g| ≤ 0.2): compare them relative to their own size.
            let scale = |x: &[f32]| x.iter().fold(f32::MIN_POSITIVE, |m, v| m.max(v.abs()));
            let dm = max_diff(&got[k + i], &want_m[i]) / scale(&want_m[i]);
            let dv = max_diff(&got[2 * k + i], &want_v[i]) / scale(&want_v[i]);
            worst_w = worst_w.max(dw);
            worst_mom = worst_mom.max(dm).max(dv);
            assert!(
                dw < TOL,
                "{rule:?}: weights of tensor {i} after 5 steps: {dw:e}"
            );
            assert!(
                dm < TOL && dv < TOL,
                "{rule:?}: moments of tensor {i}: {dm:e} {dv:e}"
            );
        }
    }
    eprintln!(
        "adam: worst relative difference weights {worst_w:e}, moments {worst_mom:e}, lr {worst_lr:e}"
    );
}

fn trained_weights(m: &tplay::model::Model) -> Vec<Vec<f32>> {
    let mut out = vec![];
    m.visit_params(&mut |_, t, k| {
        if k == ParamKind::Trained {
            out.push(t.data.clone());
        }
    });
    out
}

#[test]
fn a_pre_ln_ffn_block_backward_on_the_gpu_equals_the_cpu_block_in_one_submission() {
    // forward: y = x + W₂·act(W₁·LN(x) + b₁) + b₂, the pre-LN FFN sublayer with its residual.
    let Some(ctx) = own_gpu() else { return };
    let mut worst = 0.0f32;
    for &(n, c, f, act) in &[
        (1, 16, 32, Activation::Gelu),
        (7, 17, 33, Activation::Relu),
        (33, 16, 65, Activation::Gelu),
    ] {
        let seed = 1000 + (n * c) as u64;
        let x = values(n * c, seed, 2.0); // (N, C)
        let gamma: Vec<f32> = values(c, seed + 1, 0.2).iter().map(|v| v + 1.0).collect(); // (C)
        let beta = values(c, seed + 2, 0.1); // (C)
        let w1 = values(f * c, seed + 3, 0.3); // (F, C)
        let b1 = values(f, seed + 4, 0.1); // (F)
        let w2 = values(c * f, seed + 5, 0.3); // (C, F)
        let b2 = values(c, seed + 6, 0.1); // (C)
        let dy = values(n * c, seed + 7, 1.0); // (N, C)

        // The CPU block, forward then backward, as model_backward runs it.
        let mut ln = vec![0.0; n * c]; // (N, C)
        let (mut mean, mut rstd) = (vec![0.0; n], vec![0.0; n]); // (N), (N)
        layernorm_forward(&mut ln, &mut mean, &mut rstd, &x, &gamma, &beta, n, c);
        let mut sub = vec![0.0; n * c]; // (N, C)
        let mut saved = FfnRecord::default();
        ffn_forward(
            &mut sub, &mut saved, &ln, &w1, &b1, &w2, &b2, act, None, n, c, f,
        );
        // forward: y = x + sub  →  dx = dy (the residual), dsub = dy
        let mut dx = dy.clone(); // (N, C)
        let mut dln = vec![0.0; n * c]; // (N, C)
        let (mut dw1, mut db1) = (vec![0.0; f * c], vec![0.0; f]);
        let (mut dw2, mut db2) = (vec![0.0; c * f], vec![0.0; c]);
        ffn_backward(
            &mut dln,
            FfnGrads {
                w1: &mut dw1,
                b1: &mut db1,
                w2: &mut dw2,
                b2: &mut db2,
            },
            &dy,
            &ln,
            &saved,
            &w1,
            &w2,
            act,
            None,
            n,
            c,
            f,
        );
        let (mut dgamma, mut dbeta) = (vec![0.0; c], vec![0.0; c]);
        layernorm_backward(
            &mut dx,
            &mut dgamma,
            &mut dbeta,
            &dln,
            &x,
            &gamma,
            &mean,
            &rstd,
            n,
            c,
        );

        // The GPU block: the forward kernels, then the backward ones, one submission.
        let up = |what, v: &[f32]| ctx.upload(what, v).unwrap();
        let (gx, gg, gb) = (up("x", &x), up("gamma", &gamma), up("beta", &beta));
        let (gw1, gb1, gw2, gb2) = (up("w1", &w1), up("b1", &b1), up("w2", &w2), up("b2", &b2));
        let gdy = up("dy", &dy);
        let z = |what, len| ctx.zeros(what, len).unwrap();
        let (g_ln, g_pre, g_hidden, g_sub) = (
            z("ln", n * c),
            z("pre", n * f),
            z("hidden", n * f),
            z("sub", n * c),
        );
        let (g_dx, g_dln, g_dhidden, g_dpre) = (
            z("dx", n * c),
            z("dln", n * c),
            z("dhidden", n * f),
            z("dpre", n * f),
        );
        let (g_dw1, g_db1, g_dw2, g_db2) =
            (z("dw1", f * c), z("db1", f), z("dw2", c * f), z("db2", c));
        let (g_dgamma, g_dbeta) = (z("dgamma", c), z("dbeta", c));
        let before = ctx.stats();
        let outs = [&g_dx, &g_dgamma, &g_dbeta, &g_dw1, &g_db1, &g_dw2, &g_db2];
        let got = run(&ctx, &outs, |r| {
            r.layer_norm(&gx, &gg, &gb, &g_ln, n, c).unwrap();
            for out in [&g_pre, &g_hidden] {
                r.matmul(&MatmulArgs::linear(&g_ln, &gw1, Some(&gb1), out, (n, c, f)))
                    .unwrap();
            }
            r.activation(&g_hidden, n * f, act).unwrap();
            r.matmul(&MatmulArgs::linear(
                &g_hidden,
                &gw2,
                Some(&gb2),
                &g_sub,
                (n, f, c),
            ))
            .unwrap();
            // forward: y = x + sub  →  dx += dy
            r.add(&g_dx, &gdy, n * c).unwrap();
            r.linear_backward(&LinearBackwardArgs::dense(
                &gdy,
                &g_hidden,
                &gw2,
                Some(&g_dhidden),
                &g_dw2,
                Some(&g_db2),
                (n, f, c),
            ))
            .unwrap();
            r.activation_backward(&g_dhidden, &g_pre, &g_dpre, n * f, act)
                .unwrap();
            r.linear_backward(&LinearBackwardArgs::dense(
                &g_dpre,
                &g_ln,
                &gw1,
                Some(&g_dln),
                &g_dw1,
                Some(&g_db1),
                (n, c, f),
            ))
            .unwrap();
            r.layer_norm_backward(&gx, &gg, &g_dln, &g_dx, &g_dgamma, &g_dbeta, n, c)
                .unwrap();
        });
        let spent = ctx.stats().since(&before);
        assert_eq!(spent.submissions, 1, "one submission for the whole block");
        assert_eq!(spent.readbacks, 1, "one readback for every gradient");
        let want = [&dx, &dgamma, &dbeta, &dw1, &db1, &dw2, &db2];
        let names = ["dx", "dgamma", "dbeta", "dW1", "db1", "dW2", "db2"];
        for ((g, cpu), what) in got.iter().zip(want).zip(names) {
            let d = rel_diff(g, cpu);
            worst = worst.max(d);
            assert!(d < TOL, "FFN block {what} N={n} C={c} F={f} {act:?}: {d:e}");
        }
    }
    eprintln!("FFN block backward: worst relative difference {worst:e}");
}

#[test]
fn clipping_then_adam_over_every_tensor_in_one_submission_equals_the_cpu_optimiser_step() {
    let Some(ctx) = own_gpu() else { return };
    let (mut worst, mut worst_norm) = (0.0f32, 0.0f32);
    let cfg = AdamConfig::default();
    let make = || {
        model(
            config(
                Arch::DecoderOnly,
                PosEncoding::Learned,
                Norm::PreLn,
                Score::ScaledDot,
            ),
            13,
        )
    };
    let mut cpu = make();
    let mut adam = Adam::new(&cpu, cfg);
    let weights: Vec<GpuBuffer> = trained_weights(&cpu)
        .iter()
        .map(|w| ctx.upload("weights", w).unwrap())
        .collect();
    let moments = |what| -> Vec<GpuBuffer> {
        weights
            .iter()
            .map(|w| ctx.zeros(what, w.len()).unwrap())
            .collect()
    };
    let (ms, vs) = (moments("m"), moments("v"));
    let (acc, lr_out) = (ctx.zeros("norm²", 1).unwrap(), ctx.zeros("lr", 1).unwrap());
    // Large gradients early (clipping active), small ones later (inactive).
    for (step, amp, max_norm) in [(1u64, 0.5f32, 1.0f32), (2, 0.4, 1.0), (3, 1e-3, 1.0)] {
        let mut grads = gradient_tree(amp, 2000 + step);
        let raw = trained(&grads);
        let norm = clip_grad_norm(&mut grads, max_norm);
        let lr = noam_lr(step, 16, 2, 1.0);
        adam.step(&mut cpu, &grads, lr);
        let gbufs: Vec<GpuBuffer> = raw
            .iter()
            .map(|g| ctx.upload("gradient", g).unwrap())
            .collect();
        let list: Vec<(&GpuBuffer, usize)> = gbufs.iter().map(|b| (b, b.len())).collect();
        let before = ctx.stats();
        let got = run(&ctx, &[&acc], |r| {
            r.clip_grad_norm(&list, &acc, max_norm).unwrap();
            for i in 0..weights.len() {
                r.adam(&AdamArgs {
                    grad: &gbufs[i],
                    weight: &weights[i],
                    m: &ms[i],
                    v: &vs[i],
                    lr_out: &lr_out,
                    n: weights[i].len(),
                    step,
                    lr: LrRule::Noam {
                        d_model: 16,
                        warmup: 2,
                        factor: 1.0,
                    },
                    config: cfg,
                })
                .unwrap();
            }
        });
        assert_eq!(ctx.stats().since(&before).submissions, 1);
        let dn = rel_diff(&[got[0][0].sqrt()], &[norm]);
        worst_norm = worst_norm.max(dn);
        assert!(dn < TOL, "step {step}: norm {} vs {norm}", got[0][0].sqrt());
    }
    let outs: Vec<&GpuBuffer> = weights.iter().collect();
    let got = run(&ctx, &outs, |_| {});
    for (i, (g, want)) in got.iter().zip(trained_weights(&cpu)).enumerate() {
        let d = rel_diff(g, &want);
        worst = worst.max(d);
        assert!(d < TOL, "tensor {i} after three clipped steps: {d:e}");
    }
    eprintln!("clip + Adam step: worst relative difference weights {worst:e}, norm {worst_norm:e}");
}

#[test]
fn a_tied_lm_head_with_its_loss_and_the_embedding_gather_fill_one_table_gradient_like_the_cpu() {
    // forward: x0 = E[tokens]·√C … x (N, C) → logits = x·Eᵀ + b, the LM head tied to the
    // token table E (V, C): both the head and the embedding add into dE.
    let Some(ctx) = own_gpu() else { return };
    let mut worst = 0.0f32;
    let pad = 0u32;
    for &(n, c, v, smoothing) in &[(1, 16, 14, 0.0f32), (7, 17, 33, 0.1), (33, 16, 65, 0.1)] {
        let seed = 3000 + (n * v) as u64;
        let scale = (c as f32).sqrt();
        let table = values(v * c, seed, 0.5); // (V, C)
        let bias = values(v, seed + 1, 0.1); // (V)
        let x = values(n * c, seed + 2, 1.0); // (N, C)
        let dx_embed = values(n * c, seed + 3, 1.0); // (N, C): what the stack sends back
        let tokens: Vec<u32> = (0..n as u32).map(|i| (i * 5 + 1) % v as u32).collect(); // (N)
        let mut targets: Vec<u32> = (0..n as u32).map(|i| (i * 3 + 2) % v as u32).collect(); // (N)
        if n > 2 {
            targets[2] = pad;
        }

        let mut logits = vec![0.0; n * v]; // (N, V)
        linear_forward(&mut logits, &x, &table, Some(&bias), n, c, v);
        let mut probs = vec![0.0; n * v]; // (N, V)
        let (loss, count) =
            cross_entropy_forward(&mut probs, &logits, &targets, Some(pad), smoothing, n, v);
        let mut dlogits = vec![0.0; n * v]; // (N, V)
        cross_entropy_backward(
            &mut dlogits,
            &probs,
            &targets,
            Some(pad),
            smoothing,
            count,
            1.0,
            n,
            v,
        );
        let (mut dx, mut dtable, mut dbias) = (vec![0.0; n * c], vec![0.0; v * c], vec![0.0; v]);
        lm_head_backward(
            &mut dx,
            &mut dtable,
            Some(&mut dbias),
            &dlogits,
            &x,
            &table,
            n,
            c,
            v,
        );
        embedding_backward(&mut dtable, &dx_embed, &tokens, scale, n, c);

        let up = |what, d: &[f32]| ctx.upload(what, d).unwrap();
        let (g_table, g_bias, g_x, g_dxe) = (
            up("table", &table),
            up("bias", &bias),
            up("x", &x),
            up("dx embed", &dx_embed),
        );
        let g_tokens = ctx.upload_u32("tokens", &tokens).unwrap();
        let g_targets = ctx.upload_u32("targets", &targets).unwrap();
        let z = |what, len| ctx.zeros(what, len).unwrap();
        let (g_logits, g_dlogits, g_loss) = (z("logits", n * v), z("dlogits", n * v), z("loss", 2));
        let (g_dx, g_dtable, g_dbias) = (z("dx", n * c), z("dtable", v * c), z("dbias", v));
        let before = ctx.stats();
        let got = run(&ctx, &[&g_loss, &g_dx, &g_dtable, &g_dbias], |r| {
            r.matmul(&MatmulArgs::linear(
                &g_x,
                &g_table,
                Some(&g_bias),
                &g_logits,
                (n, c, v),
            ))
            .unwrap();
            r.cross_entropy(&CrossEntropyArgs {
                logits: &g_logits,
                targets: &g_targets,
                ignore: Some(pad),
                smoothing,
                dloss: 1.0,
                loss: &g_loss,
                dlogits: Some(&g_dlogits),
                rows: n,
                v,
            })
            .unwrap();
            r.linear_backward(&LinearBackwardArgs::dense(
                &g_dlogits,
                &g_x,
                &g_table,
                Some(&g_dx),
                &g_dtable,
                Some(&g_dbias),
                (n, c, v),
            ))
            .unwrap();
            r.embedding_backward(&g_tokens, &g_dxe, &g_dtable, (n, v, c), scale)
                .unwrap();
        });
        assert_eq!(ctx.stats().since(&before).submissions, 1);
        assert_eq!(got[0][1], count as f32);
        let checks = [
            ("loss", &got[0][..1], &[loss][..]),
            ("dx", &got[1][..], &dx[..]),
            ("dE", &got[2][..], &dtable[..]),
            ("db", &got[3][..], &dbias[..]),
        ];
        for (what, g, cpu) in checks {
            let d = rel_diff(g, cpu);
            worst = worst.max(d);
            assert!(
                d < TOL,
                "tied head {what} N={n} C={c} V={v} ε={smoothing}: {d:e}"
            );
        }
    }
    eprintln!("tied LM head + loss + embedding: worst relative difference {worst:e}");
}

#[test]
fn weights_and_adam_state_stay_on_the_gpu_for_steps_and_download_into_a_cpu_trainer_that_continues()
{
    let Some(ctx) = own_gpu() else { return };
    let mut cfg = config(
        Arch::DecoderOnly,
        PosEncoding::Learned,
        Norm::PreLn,
        Score::ScaledDot,
    );
    cfg.share_qk = true;
    let mut cpu = model(cfg, 17);
    let mut gpu_model = cpu.clone();
    let mut adam = Adam::new(&cpu, AdamConfig::default());
    let mut gpu = GpuAdam::upload(&ctx, &gpu_model, &adam).unwrap();
    let rule = LrRule::Noam {
        d_model: 16,
        warmup: 2,
        factor: 1.0,
    };
    let grads_of = |step: u64| {
        let mut g = gradient_tree(if step == 2 { 0.5 } else { 1e-3 }, 4000 + step);
        (trained(&g), {
            let norm = clip_grad_norm(&mut g, 1.0);
            (g, norm)
        })
    };
    // Three steps on the GPU (clipping active on step 2), one submission each.
    for step in 1..=3u64 {
        let (raw, (clipped, norm)) = grads_of(step);
        adam.step(&mut cpu, &clipped, noam_lr(step, 16, 2, 1.0));
        let bufs: Vec<GpuBuffer> = raw.iter().map(|g| ctx.upload("g", g).unwrap()).collect();
        let refs: Vec<&GpuBuffer> = bufs.iter().collect();
        let before = ctx.stats();
        let mut rec = ctx.recorder().unwrap();
        gpu.record_step(&mut rec, &refs, rule, Some(1.0)).unwrap();
        let slots = [
            rec.read_all(gpu.norm_sq()).unwrap(),
            rec.read_all(gpu.lr()).unwrap(),
        ];
        let back = pollster::block_on(rec.finish()).unwrap();
        let got = slots.map(|s| back.f32(s).to_vec());
        assert_eq!(ctx.stats().since(&before).submissions, 1);
        assert!(
            rel_diff(&[got[0][0].sqrt()], &[norm]) < TOL,
            "step {step} norm"
        );
        assert!(
            rel_diff(&got[1], &[noam_lr(step, 16, 2, 1.0)]) < TOL,
            "step {step} lr"
        );
    }
    assert_eq!(gpu.step, 3);
    // Download: the same weights and moments as three CPU steps, K rows equal to Q rows.
    let mut resumed = pollster::block_on(gpu.download(&ctx, &mut gpu_model)).unwrap();
    assert_eq!(resumed.step, 3);
    let mut worst = 0.0f32;
    for (g, c) in trained_weights(&gpu_model)
        .iter()
        .zip(trained_weights(&cpu))
    {
        worst = worst.max(rel_diff(g, &c));
    }
    let ((gm, gv), (cm, cv)) = (resumed.moments(), adam.moments());
    for (g, c) in gm.iter().zip(&cm).chain(gv.iter().zip(&cv)) {
        let scale = c.iter().fold(f32::MIN_POSITIVE, |m, v| m.max(v.abs()));
        worst = worst.max(max_diff(g, c) / scale);
    }
    assert!(worst < TOL, "after three GPU steps: {worst:e}");
    let c = 16;
    for l in &gpu_model.decoder.as_ref().expect("a decoder").layers {
        let w = &l.self_attn.in_proj_weight.data;
        assert_eq!(w[..c * c], w[c * c..2 * c * c], "shared Q/K rows");
    }
    // The CPU continues from the downloaded state: two more steps on each side.
    for step in 4..=5u64 {
        let (_, (clipped, _)) = grads_of(step);
        let lr = noam_lr(step, 16, 2, 1.0);
        adam.step(&mut cpu, &clipped, lr);
        resumed.step(&mut gpu_model, &clipped, lr);
    }
    for (g, c) in trained_weights(&gpu_model)
        .iter()
        .zip(trained_weights(&cpu))
    {
        worst = worst.max(rel_diff(g, &c));
    }
    assert!(worst < TOL, "after two more CPU steps: {worst:e}");
    eprintln!("GpuAdam three steps, download, two CPU steps: worst relative difference {worst:e}");
}

#[test]
fn linear_backward_reads_a_column_block_of_a_fused_projection_and_writes_its_block_of_the_gradients(
) {
    // The V block of a fused (N, 3·OUT) projection: dout columns 2·OUT.., weight rows
    // 2·OUT.. of (3·OUT, IN), gradients at the same offsets.
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    for &(n, c_in, c_out) in &[(1, 1, 1), (7, 17, 5), (33, 16, 17)] {
        let seed = 5000 + (n * c_out) as u64;
        let fused = values(n * 3 * c_out, seed, 1.0); // (N, 3·OUT)
        let inp = values(n * c_in, seed + 1, 1.0); // (N, IN)
        let w = values(3 * c_out * c_in, seed + 2, 0.5); // (3·OUT, IN)
        let mut dinp = values(n * c_in, seed + 3, 0.2); // (N, IN)
        let mut dw = values(3 * c_out * c_in, seed + 4, 0.2); // (3·OUT, IN)
        let mut db = values(3 * c_out, seed + 5, 0.2); // (3·OUT)
        let (g_dinp, g_dw, g_db) = (
            ctx.upload("dinp", &dinp).unwrap(),
            ctx.upload("dw", &dw).unwrap(),
            ctx.upload("db", &db).unwrap(),
        );
        let dout: Vec<f32> = fused
            .chunks_exact(3 * c_out)
            .flat_map(|row| row[2 * c_out..].to_vec())
            .collect(); // (N, OUT)
        let block = 2 * c_out * c_in..3 * c_out * c_in;
        linear_backward(
            Some(&mut dinp),
            &mut dw[block.clone()],
            Some(&mut db[2 * c_out..]),
            &dout,
            &inp,
            &w[block],
            n,
            c_in,
            c_out,
        );
        let (g_fused, g_inp, g_w) = (
            ctx.upload("fused", &fused).unwrap(),
            ctx.upload("inp", &inp).unwrap(),
            ctx.upload("w", &w).unwrap(),
        );
        let got = run(&ctx, &[&g_dinp, &g_dw, &g_db], |r| {
            r.linear_backward(&LinearBackwardArgs {
                dout: Rows {
                    buf: &g_fused,
                    stride: 3 * c_out,
                    col: 2 * c_out,
                },
                inp: Rows::dense(&g_inp, c_in),
                weight: &g_w,
                w_offset: 2 * c_out * c_in,
                dinp: Some(Rows::dense(&g_dinp, c_in)),
                dweight: &g_dw,
                dw_offset: 2 * c_out * c_in,
                dbias: Some(&g_db),
                db_offset: 2 * c_out,
                n,
                c_in,
                c_out,
            })
            .unwrap()
        });
        for (what, g, cpu) in [
            ("dinp", &got[0], &dinp),
            ("dW", &got[1], &dw),
            ("db", &got[2], &db),
        ] {
            let d = rel_diff(g, cpu);
            worst = worst.max(d);
            assert!(
                d < TOL,
                "column block {what} N={n} IN={c_in} OUT={c_out}: {d:e}"
            );
        }
    }
    eprintln!("linear_backward on a column block: worst relative difference {worst:e}");
}

#[test]
fn kernels_reach_every_element_and_row_past_one_grid_dimension() {
    // More workgroups than one dimension of the grid allows (65 535 on most devices): the
    // kernels lay them on two dimensions and must rebuild every index.
    let Some(ctx) = gpu_or_skip() else { return };
    let max_groups = ctx.limits().max_compute_workgroups_per_dimension as usize;
    let mut worst = 0.0f32;

    // Element-wise: ReLU backward and Adam over max_groups·64 + 100 elements.
    let n = max_groups * 64 + 100;
    let (dout, inp) = (values(n, 6000, 1.0), values(n, 6001, 1.0)); // (N), (N)
    let mut dinp = vec![0.0; n]; // (N)
    activation_backward(&mut dinp, &dout, &inp, Activation::Relu);
    let (g_dout, g_inp, g_dinp) = (
        ctx.upload("dout", &dout).unwrap(),
        ctx.upload("inp", &inp).unwrap(),
        ctx.zeros("dinp", n).unwrap(),
    );
    let got = run(&ctx, &[&g_dinp], |r| {
        r.activation_backward(&g_dout, &g_inp, &g_dinp, n, Activation::Relu)
            .unwrap()
    });
    assert_eq!(got[0], dinp, "ReLU backward over a 2-D grid is exact");

    // Row per workgroup: LayerNorm backward and the loss over max_groups + 3 rows.
    let rows = max_groups + 3;
    // C = 8: with 3 columns some of the 65 538 random rows are nearly constant, and there
    // the f32 statistics (the CPU's are f64) dominate what this test is about.
    let c = 8;
    let x = values(rows * c, 6002, 2.0); // (R, C)
    let gamma = values(c, 6003, 1.0); // (C)
    let dy = values(rows * c, 6004, 1.0); // (R, C)
    let (mut y, mut mean, mut rstd) = (vec![0.0; rows * c], vec![0.0; rows], vec![0.0; rows]);
    layernorm_forward(
        &mut y,
        &mut mean,
        &mut rstd,
        &x,
        &gamma,
        &vec![0.0; c],
        rows,
        c,
    );
    let (mut dx, mut dg, mut db) = (vec![0.0; rows * c], vec![0.0; c], vec![0.0; c]);
    layernorm_backward(
        &mut dx, &mut dg, &mut db, &dy, &x, &gamma, &mean, &rstd, rows, c,
    );
    let v = 2;
    let logits = values(rows * v, 6005, 3.0); // (R, V)
    let targets: Vec<u32> = (0..rows as u32).map(|r| r % 2).collect(); // (R)
    let mut probs = vec![0.0; rows * v]; // (R, V)
    let (loss, count) = cross_entropy_forward(&mut probs, &logits, &targets, Some(0), 0.1, rows, v);
    let mut dlogits = vec![0.0; rows * v]; // (R, V)
    cross_entropy_backward(
        &mut dlogits,
        &probs,
        &targets,
        Some(0),
        0.1,
        count,
        1.0,
        rows,
        v,
    );
    let up = |what, d: &[f32]| ctx.upload(what, d).unwrap();
    let (g_x, g_gamma, g_dy, g_logits) = (
        up("x", &x),
        up("gamma", &gamma),
        up("dy", &dy),
        up("logits", &logits),
    );
    let g_targets = ctx.upload_u32("targets", &targets).unwrap();
    let z = |what, len| ctx.zeros(what, len).unwrap();
    let (g_dx, g_dg, g_db) = (z("dx", rows * c), z("dgamma", c), z("dbeta", c));
    let (g_loss, g_dlogits) = (z("loss", 2), z("dlogits", rows * v));
    let got = run(&ctx, &[&g_dx, &g_dg, &g_db, &g_loss, &g_dlogits], |r| {
        r.layer_norm_backward(&g_x, &g_gamma, &g_dy, &g_dx, &g_dg, &g_db, rows, c)
            .unwrap();
        r.cross_entropy(&CrossEntropyArgs {
            logits: &g_logits,
            targets: &g_targets,
            ignore: Some(0),
            smoothing: 0.1,
            dloss: 1.0,
            loss: &g_loss,
            dlogits: Some(&g_dlogits),
            rows,
            v,
        })
        .unwrap();
    });
    assert_eq!(got[3][1], count as f32, "every counted row reached");
    let checks = [
        ("dx", &got[0][..], &dx[..]),
        ("dgamma", &got[1][..], &dg[..]),
        ("dbeta", &got[2][..], &db[..]),
        ("loss", &got[3][..1], &[loss][..]),
        ("dlogits", &got[4][..], &dlogits[..]),
    ];
    for (what, g, cpu) in checks {
        let d = rel_diff(g, cpu);
        worst = worst.max(d);
        assert!(d < TOL, "{what} over {rows} rows: {d:e}");
    }
    eprintln!("2-D grids: worst relative difference {worst:e}");
}

#[test]
fn per_thread_sums_run_past_65535_iterations() {
    // llvmpipe ends a thread's loops after 65 535 iterations in all; the kernels whose
    // threads loop over the rows (or a tensor) split such sums into several dispatches and
    // must still add everything.
    let Some(ctx) = gpu_or_skip() else { return };
    let mut worst = 0.0f32;
    let rows = 70_000;

    // Bias gradient: 3 columns, each summed over 70 000 rows.
    let w = 3;
    let dout = values(rows * w, 7000, 1.0); // (N, 3)
    let mut db = vec![0.0f32; w]; // (3)
    for row in dout.chunks_exact(w) {
        for (d, g) in db.iter_mut().zip(row) {
            *d += g;
        }
    }
    let g_dout = ctx.upload("dout", &dout).unwrap();
    let g_db = ctx.zeros("db", w).unwrap();
    let got = run(&ctx, &[&g_db], |r| {
        r.bias_backward(Rows::dense(&g_dout, w), &g_db, 0, rows, w)
            .unwrap()
    });
    assert_eq!(
        got[0], db,
        "the bias gradient adds every row, in the CPU's order"
    );

    // Embedding gradient: 70 000 rows over 3 tokens.
    let (v, c) = (3, 2);
    let tokens: Vec<u32> = (0..rows as u32).map(|r| r % 3).collect(); // (N)
    let dx = values(rows * c, 7001, 1.0); // (N, C)
    let mut dtable = vec![0.0; v * c]; // (V, C)
    embedding_backward(&mut dtable, &dx, &tokens, 1.0, rows, c);
    let (g_tok, g_dx, g_dt) = (
        ctx.upload_u32("tokens", &tokens).unwrap(),
        ctx.upload("dx", &dx).unwrap(),
        ctx.zeros("dtable", v * c).unwrap(),
    );
    let got = run(&ctx, &[&g_dt], |r| {
        r.embedding_backward(&g_tok, &g_dx, &g_dt, (rows, v, c), 1.0)
            .unwrap()
    });
    assert_eq!(got[0], dtable, "the embedding gradient adds every row");

    // A weight gradient dW (OUT, IN) += doutᵀ · inp over 70 000 rows: K = 70 000.
    let (c_in, c_out) = (2, 3);
    let dout = values(rows * c_out, 7003, 1.0); // (N, OUT)
    let inp = values(rows * c_in, 7004, 1.0); // (N, IN)
    let w = values(c_out * c_in, 7005, 1.0); // (OUT, IN)
    let mut dw = vec![0.0; c_out * c_in]; // (OUT, IN)
    linear_backward(None, &mut dw, None, &dout, &inp, &w, rows, c_in, c_out);
    let (g_dout, g_inp, g_w, g_dw) = (
        ctx.upload("dout", &dout).unwrap(),
        ctx.upload("inp", &inp).unwrap(),
        ctx.upload("w", &w).unwrap(),
        ctx.zeros("dw", c_out * c_in).unwrap(),
    );
    let got = run(&ctx, &[&g_dw], |r| {
        r.linear_backward(&LinearBackwardArgs::dense(
            &g_dout,
            &g_inp,
            &g_w,
            None,
            &g_dw,
            None,
            (rows, c_in, c_out),
        ))
        .unwrap()
    });
    let d = rel_diff(&got[0], &dw);
    worst = worst.max(d);
    assert!(d < TOL, "dW over {rows} rows: {d:e}");

    // Gradient norm: one tensor with more than 65 535 elements per thread.
    let max_groups = ctx.limits().max_compute_workgroups_per_dimension as usize;
    let n = 64 * 65_535 + 1000;
    let g = values(n, 7002, 0.01); // (n)
    let want = g.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>() as f32;
    let (g_g, acc) = (ctx.upload("g", &g).unwrap(), ctx.zeros("norm²", 1).unwrap());
    let got = run(&ctx, &[&acc], |r| {
        r.grad_norm_squared(&[(&g_g, n)], &acc).unwrap()
    });
    let d = rel_diff(&[got[0][0].sqrt()], &[want.sqrt()]);
    worst = worst.max(d);
    assert!(
        d < TOL,
        "norm of {n} elements ({max_groups} groups per dimension): {d:e}"
    );
    eprintln!("long per-thread loops: worst relative difference {worst:e}");
}
