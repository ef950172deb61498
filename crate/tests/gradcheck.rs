//! Finite-difference gradient checks: every backward function, and whole small models of
//! every architecture, position encoding, score function and norm.
//!
//! Method. For an op `out = f(inputs)` the objective is `J = Σ r·out` with a fixed random
//! `r`; its analytic gradient is the op's backward with `dout = r`. For a model the
//! objective is the training loss (cross-entropy with label smoothing 0.1), recomputed in
//! f64 from the f32 logits of `Model::forward`, independently of the code under test.
//! The numeric gradient is the central difference `(J(x + ε) − J(x − ε)) / 2ε` on a seeded
//! random subset of each input's coordinates.
//!
//! Tolerance. The forward passes run in f32, so J carries rounding noise of about 1e-7
//! relative; divided by 2ε with ε = 1e-2 that is ~1e-5 absolute per coordinate, and the
//! truncation error of central differences is O(ε²·J''') ~ 1e-4 relative. Each input's
//! sampled gradient vector must therefore satisfy
//! `‖g_analytic − g_numeric‖ ≤ REL·max(‖g_analytic‖, ‖g_numeric‖) + ABS·√n` with
//! REL = 1e-2 and ABS = 2e-4 (the noise floor per coordinate, with margin): a wrong formula —
//! a missing term, a sign, a transposed index — gives relative errors of order 1.
//! ReLU is checked at inputs at least 0.05 from its kink, and the models that use it keep
//! their pre-activations away from it with the same ε, so no difference straddles a kink.

mod support;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::letters;

use tplay::config::{Activation, Arch, ModelConfig, Norm, PosEncoding, Score};
use tplay::model::attention::{attention_forward, mha_forward, AttnRecord, AttnSpec, Relative};
use tplay::model::embedding::embedding_forward;
use tplay::model::ffn::{activation_forward, ffn_forward, linear_forward, FfnRecord};
use tplay::model::forward::Batch;
use tplay::model::mask::{MaskRule, MaskSpec};
use tplay::model::norm::{batchnorm_eval_forward, batchnorm_train_forward, layernorm_forward};
use tplay::model::position::{alibi_slopes, learned_positions_forward, rope_forward};
use tplay::model::{
    AttentionParams, AttnSite, ForwardOptions, HeadParams, HeadRef, Mode, Model, ParamKind,
};
use tplay::tensor::Tensor;
use tplay::train::backward::attention::{attention_backward, mha_backward, AttnExtraGrads};
use tplay::train::backward::embedding::embedding_backward;
use tplay::train::backward::ffn::{activation_backward, ffn_backward, linear_backward, FfnGrads};
use tplay::train::backward::head::classifier_backward;
use tplay::train::backward::norm::{
    batchnorm_eval_backward, batchnorm_train_backward, layernorm_backward,
};
use tplay::train::backward::position::{learned_positions_backward, rope_backward};
use tplay::train::loss::{cross_entropy_backward, cross_entropy_forward};
use tplay::train::{loss_and_grads, to_batch};

const EPS: f32 = 1e-2;
/// The step for whole models with ReLU (see the module comment).
const RELU_EPS: f32 = 1e-3;
const REL: f64 = 1e-2;
const ABS: f64 = 2e-4;
/// Coordinates sampled per input tensor.
const SAMPLES: usize = 12;

fn randn(rng: &mut ChaCha8Rng, n: usize, scale: f32) -> Vec<f32> {
    // Sum of uniforms: a cheap bell shape, enough for test inputs.
    (0..n)
        .map(|_| {
            let u: f32 = (0..4).map(|_| rng.random::<f32>()).sum::<f32>() - 2.0;
            u * scale
        })
        .collect()
}

fn dot(r: &[f32], out: &[f32]) -> f64 {
    r.iter().zip(out).map(|(&a, &b)| a as f64 * b as f64).sum()
}

fn sample(rng: &mut ChaCha8Rng, n: usize) -> Vec<usize> {
    if n <= SAMPLES {
        return (0..n).collect();
    }
    let mut idx: Vec<usize> = (0..SAMPLES).map(|_| rng.random_range(0..n)).collect();
    idx.sort_unstable();
    idx.dedup();
    idx
}

/// Compare analytic and numeric gradients of one input; panics with the numbers on failure.
/// Returns the relative error.
fn compare(what: &str, analytic: &[f64], numeric: &[f64]) -> f64 {
    let diff: f64 = analytic
        .iter()
        .zip(numeric)
        .map(|(a, n)| (a - n).powi(2))
        .sum::<f64>()
        .sqrt();
    let na = analytic.iter().map(|a| a * a).sum::<f64>().sqrt();
    let nn = numeric.iter().map(|a| a * a).sum::<f64>().sqrt();
    let bound = REL * na.max(nn) + ABS * (analytic.len() as f64).sqrt();
    assert!(
        diff <= bound,
        "{what}: |analytic − numeric| = {diff:.3e} > {bound:.3e}\n analytic {analytic:?}\n numeric  {numeric:?}"
    );
    // The relative error is reported only for gradients well above the noise floor (a
    // gradient that is zero analytically, e.g. a bias in front of BatchNorm, is all noise).
    if na.max(nn) > 10.0 * ABS * (analytic.len() as f64).sqrt() {
        if std::env::var_os("GRADCHECK_VERBOSE").is_some() {
            eprintln!("  {what}: relative error {:.2e}", diff / na.max(nn));
        }
        diff / na.max(nn)
    } else {
        0.0
    }
}

/// Check the gradient of J with respect to each input. `j` evaluates J for a set of inputs;
/// `grads[k]` is the analytic dJ/d(inputs[k]).
fn check_inputs(
    op: &str,
    names: &[&str],
    inputs: &[Vec<f32>],
    grads: &[Vec<f32>],
    eps: f32,
    j: &dyn Fn(&[Vec<f32>]) -> f64,
) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut worst = 0.0f64;
    for (k, name) in names.iter().enumerate() {
        let idx = sample(&mut rng, inputs[k].len());
        let mut numeric = vec![];
        let mut analytic = vec![];
        for &i in &idx {
            let mut plus = inputs.to_vec();
            plus[k][i] += eps;
            let mut minus = inputs.to_vec();
            minus[k][i] -= eps;
            let d = (plus[k][i] - minus[k][i]) as f64; // the step actually taken in f32
            numeric.push((j(&plus) - j(&minus)) / d);
            analytic.push(grads[k][i] as f64);
        }
        worst = worst.max(compare(&format!("{op}: d/d{name}"), &analytic, &numeric));
    }
    eprintln!("{op}: worst relative error {worst:.2e}");
    worst
}

// ------------------------------------------------------------------------------------
// Per-op checks
// ------------------------------------------------------------------------------------

#[test]
fn linear_backward_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (n, ci, co) = (5, 4, 3);
    let inputs = vec![
        randn(&mut rng, n * ci, 1.0),
        randn(&mut rng, co * ci, 0.5),
        randn(&mut rng, co, 0.5),
    ];
    let r = randn(&mut rng, n * co, 1.0);
    let j = |x: &[Vec<f32>]| {
        let mut out = vec![0.0; n * co]; // (N, OUT)
        linear_forward(&mut out, &x[0], &x[1], Some(&x[2]), n, ci, co);
        dot(&r, &out)
    };
    let mut g = vec![vec![0.0; n * ci], vec![0.0; co * ci], vec![0.0; co]];
    let (gi, rest) = g.split_at_mut(1);
    let (gw, gb) = rest.split_at_mut(1);
    linear_backward(
        Some(&mut gi[0]),
        &mut gw[0],
        Some(&mut gb[0]),
        &r,
        &inputs[0],
        &inputs[1],
        n,
        ci,
        co,
    );
    check_inputs("linear", &["inp", "weight", "bias"], &inputs, &g, EPS, &j);
}

#[test]
fn relu_and_gelu_backward_match_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for act in [Activation::Relu, Activation::Gelu, Activation::GeluTanh] {
        // Keep ReLU inputs ≥ 0.05 away from the kink (ε = 1e-2 never crosses it).
        let x: Vec<f32> = randn(&mut rng, 40, 1.5)
            .into_iter()
            .map(|v| {
                if v.abs() < 0.05 {
                    v.signum() * 0.05 + v
                } else {
                    v
                }
            })
            .collect();
        let r = randn(&mut rng, 40, 1.0);
        let j = |x: &[Vec<f32>]| {
            let mut out = vec![0.0; 40];
            activation_forward(&mut out, &x[0], act);
            dot(&r, &out)
        };
        let mut g = vec![0.0; 40];
        activation_backward(&mut g, &r, &x, act);
        check_inputs(&format!("{act:?}"), &["x"], &[x], &[g], EPS, &j);
    }
}

#[test]
fn ffn_backward_with_dropout_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (n, c, f) = (4, 3, 5);
    for act in [Activation::Gelu, Activation::Relu, Activation::GeluTanh] {
        let inputs = vec![
            randn(&mut rng, n * c, 1.0),
            randn(&mut rng, f * c, 0.6),
            randn(&mut rng, f, 0.3),
            randn(&mut rng, c * f, 0.6),
            randn(&mut rng, c, 0.3),
        ];
        // Dropout p = 0.25: multipliers 0 or 4/3.
        let mask: Vec<f32> = (0..n * f)
            .map(|i| if i % 4 == 1 { 0.0 } else { 4.0 / 3.0 })
            .collect();
        let r = randn(&mut rng, n * c, 1.0);
        let run = |x: &[Vec<f32>]| {
            let mut out = vec![0.0; n * c]; // (N, C)
            let mut cache = FfnRecord::default();
            ffn_forward(
                &mut out,
                &mut cache,
                &x[0],
                &x[1],
                &x[2],
                &x[3],
                &x[4],
                act,
                Some(&mask),
                n,
                c,
                f,
            );
            (out, cache)
        };
        if act == Activation::Relu {
            let (_, cache) = run(&inputs);
            let closest = cache.pre.iter().fold(f32::MAX, |m, p| m.min(p.abs()));
            assert!(
                closest > 0.02,
                "a ReLU pre-activation sits at {closest}, too close to the kink"
            );
        }
        let j = |x: &[Vec<f32>]| dot(&r, &run(x).0);
        let (_, cache) = run(&inputs);
        let mut g: Vec<Vec<f32>> = inputs.iter().map(|x| vec![0.0; x.len()]).collect();
        let [gi, gw1, gb1, gw2, gb2] = &mut g[..] else {
            unreachable!()
        };
        ffn_backward(
            gi,
            FfnGrads {
                w1: gw1,
                b1: gb1,
                w2: gw2,
                b2: gb2,
            },
            &r,
            &inputs[0],
            &cache,
            &inputs[1],
            &inputs[3],
            act,
            Some(&mask),
            n,
            c,
            f,
        );
        check_inputs(
            &format!("ffn {act:?}"),
            &["inp", "w1", "b1", "w2", "b2"],
            &inputs,
            &g,
            EPS,
            &j,
        );
    }
}

#[test]
fn layernorm_backward_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let (rows, c) = (4, 6);
    let inputs = vec![
        randn(&mut rng, rows * c, 2.0),
        randn(&mut rng, c, 0.5).iter().map(|v| v + 1.0).collect(),
        randn(&mut rng, c, 0.3),
    ];
    let r = randn(&mut rng, rows * c, 1.0);
    let run = |x: &[Vec<f32>]| {
        let (mut out, mut mean, mut rstd) = (vec![0.0; rows * c], vec![0.0; rows], vec![0.0; rows]);
        layernorm_forward(&mut out, &mut mean, &mut rstd, &x[0], &x[1], &x[2], rows, c);
        (out, mean, rstd)
    };
    let j = |x: &[Vec<f32>]| dot(&r, &run(x).0);
    let (_, mean, rstd) = run(&inputs);
    let mut g: Vec<Vec<f32>> = inputs.iter().map(|x| vec![0.0; x.len()]).collect();
    let [gx, gw, gb] = &mut g[..] else {
        unreachable!()
    };
    layernorm_backward(
        gx, gw, gb, &r, &inputs[0], &inputs[1], &mean, &rstd, rows, c,
    );
    check_inputs(
        "layernorm",
        &["inp", "weight", "bias"],
        &inputs,
        &g,
        EPS,
        &j,
    );
}

#[test]
fn batchnorm_backward_in_train_and_eval_mode_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (rows, c) = (6, 4);
    let inputs = vec![
        randn(&mut rng, rows * c, 2.0),
        randn(&mut rng, c, 0.5).iter().map(|v| v + 1.0).collect(),
        randn(&mut rng, c, 0.3),
    ];
    let r = randn(&mut rng, rows * c, 1.0);
    // Train mode: statistics over the rows, so every row's gradient involves the others.
    let run = |x: &[Vec<f32>]| {
        let mut out = vec![0.0; rows * c];
        let (mut mean, mut var, mut rstd) = (vec![0.0; c], vec![0.0; c], vec![0.0; c]);
        batchnorm_train_forward(
            &mut out, &mut mean, &mut var, &mut rstd, &x[0], &x[1], &x[2], rows, c,
        );
        (out, mean, rstd)
    };
    let j = |x: &[Vec<f32>]| dot(&r, &run(x).0);
    let (_, mean, rstd) = run(&inputs);
    let mut g: Vec<Vec<f32>> = inputs.iter().map(|x| vec![0.0; x.len()]).collect();
    let [gx, gw, gb] = &mut g[..] else {
        unreachable!()
    };
    batchnorm_train_backward(
        gx, gw, gb, &r, &inputs[0], &inputs[1], &mean, &rstd, rows, c,
    );
    check_inputs(
        "batchnorm train",
        &["inp", "weight", "bias"],
        &inputs,
        &g,
        EPS,
        &j,
    );

    // Eval mode: running statistics are constants.
    let rm = randn(&mut rng, c, 0.5);
    let rv: Vec<f32> = randn(&mut rng, c, 0.3)
        .iter()
        .map(|v| 1.0 + v.abs())
        .collect();
    let j = |x: &[Vec<f32>]| {
        let mut out = vec![0.0; rows * c];
        batchnorm_eval_forward(&mut out, &x[0], &x[1], &x[2], &rm, &rv, rows, c);
        dot(&r, &out)
    };
    let mut g: Vec<Vec<f32>> = inputs.iter().map(|x| vec![0.0; x.len()]).collect();
    let [gx, gw, gb] = &mut g[..] else {
        unreachable!()
    };
    batchnorm_eval_backward(gx, gw, gb, &r, &inputs[0], &inputs[1], &rm, &rv, rows, c);
    check_inputs(
        "batchnorm eval",
        &["inp", "weight", "bias"],
        &inputs,
        &g,
        EPS,
        &j,
    );
}

#[test]
fn embedding_and_learned_position_backward_match_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let (v, c, b, t) = (7, 4, 2, 3);
    let tokens = [3u32, 5, 3, 0, 6, 5]; // repeated ids collect both gradients
    let table = randn(&mut rng, v * c, 1.0);
    let scale = 2.0;
    let r = randn(&mut rng, b * t * c, 1.0);
    let j = |x: &[Vec<f32>]| {
        let mut out = vec![0.0; b * t * c]; // (B·T, C)
        embedding_forward(&mut out, &tokens, &x[0], scale, b * t, c);
        dot(&r, &out)
    };
    let mut g = vec![0.0; v * c];
    embedding_backward(&mut g, &r, &tokens, scale, b * t, c);
    assert!(
        g[c..2 * c].iter().all(|&x| x == 0.0),
        "id 1 is unused: no gradient"
    );
    check_inputs("embedding", &["table"], &[table], &[g], EPS, &j);

    let max_len = 6;
    let pos = randn(&mut rng, max_len * c, 1.0);
    let base = randn(&mut rng, b * t * c, 1.0);
    let j = |x: &[Vec<f32>]| {
        let mut out = base.clone(); // (B, T, C)
        learned_positions_forward(&mut out, &x[0], 2, b, t, c);
        dot(&r, &out)
    };
    let mut g = vec![0.0; max_len * c];
    learned_positions_backward(&mut g, &r, 2, b, t, c);
    check_inputs("learned positions", &["pos_embed"], &[pos], &[g], EPS, &j);
}

#[test]
fn rope_backward_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (b, t, h, d) = (2, 5, 2, 4);
    let x = randn(&mut rng, b * t * h * d, 1.0);
    let r = randn(&mut rng, b * t * h * d, 1.0);
    let j = |x: &[Vec<f32>]| {
        let mut out = x[0].clone(); // (B, T, H·D)
        rope_forward(&mut out, 3, b, t, h, d);
        dot(&r, &out)
    };
    let mut g = r.clone();
    rope_backward(&mut g, 3, b, t, h, d);
    check_inputs("rope", &["x"], &[x], &[g], EPS, &j);
}

/// One attention configuration for the single-sequence check.
#[derive(Clone, Copy)]
struct AttnCase {
    name: &'static str,
    score: Score,
    scale: bool,
    causal: bool,
    q_offset: usize,
    relative: bool,
    alibi: bool,
    pad: bool,
    all_pad: bool,
    dropout: bool,
    ablate: bool,
}

const PLAIN: AttnCase = AttnCase {
    name: "scaled_dot",
    score: Score::ScaledDot,
    scale: true,
    causal: false,
    q_offset: 0,
    relative: false,
    alibi: false,
    pad: false,
    all_pad: false,
    dropout: false,
    ablate: false,
};

static CAUSAL_MASK: MaskSpec = MaskSpec {
    rule: MaskRule::Causal,
    cells: Vec::new(),
    padding: true,
};
static NO_MASK: MaskSpec = MaskSpec {
    rule: MaskRule::None,
    cells: Vec::new(),
    padding: true,
};

/// The plain causal mask or none (padding comes with the key flags).
fn mask_of(causal: bool) -> &'static MaskSpec {
    if causal {
        &CAUSAL_MASK
    } else {
        &NO_MASK
    }
}

/// The attention spec of a check case, reading the relative and additive tables from the
/// check inputs (x[3] rel_k, x[4] rel_v, x[5] additive_v).
fn attn_case_spec<'a>(
    case: AttnCase,
    h: usize,
    d: usize,
    k_max: usize,
    slopes: &'a [f32],
    ablate: &'a [bool],
    x: &'a [Vec<f32>],
) -> AttnSpec<'a> {
    AttnSpec {
        n_heads: h,
        d_head: d,
        score: case.score,
        scale: case.scale,
        mask: mask_of(case.causal),
        q_offset: case.q_offset,
        rope: false,
        alibi: case.alibi.then_some(slopes),
        relative: case.relative.then(|| Relative {
            rel_k: &x[3],
            rel_v: &x[4],
            max_distance: k_max,
        }),
        additive_v: Some(&x[5]),
        ablate,
    }
}

#[test]
fn attention_backward_matches_finite_differences_for_every_score_position_and_mask() {
    let cases = [
        PLAIN,
        AttnCase {
            name: "scaled_dot, √D off",
            scale: false,
            ..PLAIN
        },
        AttnCase {
            name: "dot",
            score: Score::Dot,
            ..PLAIN
        },
        AttnCase {
            name: "additive",
            score: Score::Additive,
            ..PLAIN
        },
        AttnCase {
            name: "causal + padding",
            causal: true,
            pad: true,
            ..PLAIN
        },
        AttnCase {
            name: "causal, query offset 2",
            causal: true,
            q_offset: 2,
            ..PLAIN
        },
        AttnCase {
            name: "relative",
            relative: true,
            causal: true,
            ..PLAIN
        },
        AttnCase {
            name: "relative + additive",
            relative: true,
            score: Score::Additive,
            ..PLAIN
        },
        AttnCase {
            name: "alibi",
            alibi: true,
            causal: true,
            ..PLAIN
        },
        AttnCase {
            name: "every key padded",
            all_pad: true,
            ..PLAIN
        },
        AttnCase {
            name: "dropout on probabilities",
            dropout: true,
            ..PLAIN
        },
        AttnCase {
            name: "head 1 ablated",
            ablate: true,
            ..PLAIN
        },
    ];
    let (t, s, h, d) = (4, 5, 2, 4);
    let c = h * d;
    let k_max = 2;
    let slopes = alibi_slopes(h);
    for case in cases {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let inputs = vec![
            randn(&mut rng, t * c, 1.0),               // q
            randn(&mut rng, s * c, 1.0),               // k
            randn(&mut rng, s * c, 1.0),               // v
            randn(&mut rng, (2 * k_max + 1) * d, 0.7), // rel_k
            randn(&mut rng, (2 * k_max + 1) * d, 0.7), // rel_v
            randn(&mut rng, h * d, 1.0),               // additive_v
        ];
        let key_pad: Vec<bool> = (0..s)
            .map(|j| case.all_pad || (case.pad && j >= 3))
            .collect();
        let drop: Vec<f32> = (0..h * t * s)
            .map(|i| if i % 3 == 0 { 0.0 } else { 1.5 })
            .collect();
        let ablate = [false, case.ablate];
        let r = randn(&mut rng, t * c, 1.0);
        let run = |x: &[Vec<f32>]| {
            let (mut z, mut sc, mut p) =
                (vec![0.0; t * c], vec![0.0; h * t * s], vec![0.0; h * t * s]);
            attention_forward(
                &mut z,
                &mut sc,
                &mut p,
                &x[0],
                &x[1],
                &x[2],
                Some(&key_pad),
                case.dropout.then_some(drop.as_slice()),
                &attn_case_spec(case, h, d, k_max, &slopes, &ablate, x),
                t,
                s,
            );
            (z, sc, p)
        };
        let j = |x: &[Vec<f32>]| dot(&r, &run(x).0);
        let (_, sc, p) = run(&inputs);
        let mut g: Vec<Vec<f32>> = inputs.iter().map(|x| vec![0.0; x.len()]).collect();
        let [gq, gk, gv, grk, grv, gadd] = &mut g[..] else {
            unreachable!()
        };
        let mut extra = AttnExtraGrads {
            rel_k: Some(grk),
            rel_v: Some(grv),
            additive_v: Some(gadd),
        };
        attention_backward(
            gq,
            gk,
            gv,
            &mut extra,
            &r,
            &inputs[0],
            &inputs[1],
            &inputs[2],
            &sc,
            &p,
            case.dropout.then_some(drop.as_slice()),
            &attn_case_spec(case, h, d, k_max, &slopes, &ablate, &inputs),
            t,
            s,
        );
        if case.all_pad {
            assert!(
                g.iter().flatten().all(|&x| x == 0.0),
                "a fully masked query gets no gradient"
            );
        }
        if case.ablate {
            for row in g[0].chunks(c) {
                assert!(
                    row[d..].iter().all(|&x| x == 0.0),
                    "an ablated head gets no gradient"
                );
            }
        }
        check_inputs(
            &format!("attention ({})", case.name),
            &["q", "k", "v", "rel_k", "rel_v", "additive_v"],
            &inputs,
            &g,
            EPS,
            &j,
        );
    }
}

fn attention_params(rng: &mut ChaCha8Rng, c: usize, h: usize, k_max: usize) -> AttentionParams {
    let t = |shape: &[usize], data: Vec<f32>| Tensor::new(shape.to_vec(), data).unwrap();
    let d = c / h;
    AttentionParams {
        in_proj_weight: t(&[3 * c, c], randn(rng, 3 * c * c, 0.5)),
        in_proj_bias: t(&[3 * c], randn(rng, 3 * c, 0.3)),
        out_proj_weight: t(&[c, c], randn(rng, c * c, 0.5)),
        out_proj_bias: t(&[c], randn(rng, c, 0.3)),
        additive_v: Some(t(&[h, d], randn(rng, h * d, 1.0))),
        rel_k: Some(t(&[2 * k_max + 1, d], randn(rng, (2 * k_max + 1) * d, 0.5))),
        rel_v: Some(t(&[2 * k_max + 1, d], randn(rng, (2 * k_max + 1) * d, 0.5))),
    }
}

/// Flatten the attention parameters into check inputs and back.
fn attn_to_inputs(p: &AttentionParams) -> Vec<Vec<f32>> {
    vec![
        p.in_proj_weight.data.clone(),
        p.in_proj_bias.data.clone(),
        p.out_proj_weight.data.clone(),
        p.out_proj_bias.data.clone(),
        p.rel_k.as_ref().unwrap().data.clone(),
        p.rel_v.as_ref().unwrap().data.clone(),
        p.additive_v.as_ref().unwrap().data.clone(),
    ]
}

fn attn_from_inputs(base: &AttentionParams, x: &[Vec<f32>], share_qk: bool) -> AttentionParams {
    let mut p = base.clone();
    p.in_proj_weight.data = x[0].clone();
    p.in_proj_bias.data = x[1].clone();
    p.out_proj_weight.data = x[2].clone();
    p.out_proj_bias.data = x[3].clone();
    p.rel_k.as_mut().unwrap().data = x[4].clone();
    p.rel_v.as_mut().unwrap().data = x[5].clone();
    p.additive_v.as_mut().unwrap().data = x[6].clone();
    if share_qk {
        // What the model stores: the K rows are copies of the Q rows.
        let c = p.out_proj_bias.data.len();
        let (q, k) = p.in_proj_weight.data.split_at_mut(c * c);
        k[..c * c].copy_from_slice(q);
        let (qb, kb) = p.in_proj_bias.data.split_at_mut(c);
        kb[..c].copy_from_slice(qb);
    }
    p
}

#[test]
fn multi_head_attention_backward_matches_finite_differences_with_projections() {
    let (b, t, h, c) = (2, 4, 2, 8);
    let k_max = 2;
    let slopes = alibi_slopes(h);
    // (name, score, rope, relative, alibi, share_qk, cross (S ≠ T))
    let cases = [
        (
            "self, scaled_dot",
            Score::ScaledDot,
            false,
            false,
            false,
            false,
            false,
        ),
        (
            "self, rope",
            Score::ScaledDot,
            true,
            false,
            false,
            false,
            false,
        ),
        (
            "self, relative, additive",
            Score::Additive,
            false,
            true,
            false,
            false,
            false,
        ),
        (
            "self, alibi, dot",
            Score::Dot,
            false,
            false,
            true,
            false,
            false,
        ),
        (
            "self, shared W_Q = W_K",
            Score::ScaledDot,
            false,
            false,
            false,
            true,
            false,
        ),
        (
            "cross, S = 3",
            Score::ScaledDot,
            false,
            false,
            false,
            false,
            true,
        ),
        (
            "cross, additive",
            Score::Additive,
            false,
            false,
            false,
            false,
            true,
        ),
    ];
    for (name, score, rope, relative, alibi, share_qk, cross) in cases {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let s = if cross { 3 } else { t };
        let params = attention_params(&mut rng, c, h, k_max);
        let mut inputs = attn_to_inputs(&params);
        let xq = randn(&mut rng, b * t * c, 1.0);
        let xkv = if cross {
            randn(&mut rng, b * s * c, 1.0)
        } else {
            xq.clone()
        };
        inputs.push(xq);
        inputs.push(xkv);
        let key_pad: Vec<bool> = (0..b * s).map(|i| i == b * s - 1).collect();
        let ablate = [false, false];
        let r = randn(&mut rng, b * t * c, 1.0);
        let run = |x: &[Vec<f32>]| {
            let p = attn_from_inputs(&params, x, share_qk);
            let spec = AttnSpec {
                n_heads: h,
                d_head: c / h,
                score,
                scale: true,
                mask: mask_of(!cross),
                q_offset: 0,
                rope,
                alibi: alibi.then_some(slopes.as_slice()),
                relative: relative.then(|| Relative {
                    rel_k: &p.rel_k.as_ref().unwrap().data,
                    rel_v: &p.rel_v.as_ref().unwrap().data,
                    max_distance: k_max,
                }),
                additive_v: Some(&p.additive_v.as_ref().unwrap().data),
                ablate: &ablate,
            };
            let mut out = vec![0.0; b * t * c]; // (B, T, C)
            let mut cache = AttnRecord::default();
            // Self-attention reads one tensor as queries and keys: perturbing it moves both.
            let xkv = if cross { &x[8] } else { &x[7] };
            mha_forward(
                &mut out,
                &mut cache,
                &x[7],
                xkv,
                &p,
                Some(&key_pad),
                None,
                &spec,
                b,
                t,
                s,
            );
            (out, cache, p)
        };
        let j = |x: &[Vec<f32>]| dot(&r, &run(x).0);
        let (_, cache, p) = run(&inputs);
        let spec = AttnSpec {
            n_heads: h,
            d_head: c / h,
            score,
            scale: true,
            mask: mask_of(!cross),
            q_offset: 0,
            rope,
            alibi: alibi.then_some(slopes.as_slice()),
            relative: relative.then(|| Relative {
                rel_k: &p.rel_k.as_ref().unwrap().data,
                rel_v: &p.rel_v.as_ref().unwrap().data,
                max_distance: k_max,
            }),
            additive_v: Some(&p.additive_v.as_ref().unwrap().data),
            ablate: &ablate,
        };
        let mut grads = p.clone();
        for tns in [
            &mut grads.in_proj_weight,
            &mut grads.in_proj_bias,
            &mut grads.out_proj_weight,
            &mut grads.out_proj_bias,
        ] {
            tns.data.fill(0.0);
        }
        for tns in [&mut grads.rel_k, &mut grads.rel_v, &mut grads.additive_v]
            .into_iter()
            .flatten()
        {
            tns.data.fill(0.0);
        }
        let mut dxq = vec![0.0; b * t * c];
        let mut dxkv = vec![0.0; b * s * c];
        let xkv = if cross { &inputs[8] } else { &inputs[7] };
        mha_backward(
            &mut dxq, &mut dxkv, &mut grads, &r, &inputs[7], xkv, &p, &cache, None, &spec,
            share_qk, b, t, s,
        );
        let mut g = attn_to_inputs(&grads);
        if !relative {
            g[4].fill(0.0);
            g[5].fill(0.0);
        }
        if cross {
            g.push(dxq);
            g.push(dxkv);
        } else {
            for (a, k) in dxq.iter_mut().zip(&dxkv) {
                *a += k;
            }
            g.push(dxq);
            g.push(vec![0.0; b * s * c]); // unused: self-attention reads x[7] only
        }
        if share_qk {
            assert!(
                g[0][c * c..2 * c * c].iter().all(|&x| x == 0.0),
                "K rows get no gradient of their own"
            );
        }
        check_inputs(
            &format!("mha ({name})"),
            &[
                "in_proj_weight",
                "in_proj_bias",
                "out_proj.weight",
                "out_proj.bias",
                "rel_k",
                "rel_v",
                "additive_v",
                "xq",
                "xkv",
            ],
            &inputs,
            &g,
            EPS,
            &j,
        );
    }
}

#[test]
fn cross_entropy_backward_with_smoothing_and_ignore_index_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let (n, v) = (5, 6);
    let logits = randn(&mut rng, n * v, 2.0);
    let targets = [2u32, 0, 5, 1, 0];
    for (ignore, eps_ls) in [(Some(0u32), 0.1f32), (None, 0.0), (None, 0.3)] {
        let j = |x: &[Vec<f32>]| {
            let mut probs = vec![0.0; n * v];
            cross_entropy_forward(&mut probs, &x[0], &targets, ignore, eps_ls, n, v).0 as f64
        };
        let mut probs = vec![0.0; n * v];
        let (_, count) = cross_entropy_forward(&mut probs, &logits, &targets, ignore, eps_ls, n, v);
        let mut g = vec![0.0; n * v];
        cross_entropy_backward(&mut g, &probs, &targets, ignore, eps_ls, count, 1.0, n, v);
        // ε = 1e-2 on logits of size ~2: the f32 loss moves by ~1e-3, well above its rounding.
        check_inputs(
            &format!("cross-entropy (ignore {ignore:?}, ε {eps_ls})"),
            &["logits"],
            std::slice::from_ref(&logits),
            &[g],
            EPS,
            &j,
        );
    }
}

#[test]
fn classifier_head_backward_reads_only_position_zero_and_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (b, t, c, n) = (2, 3, 4, 3);
    let inputs = vec![
        randn(&mut rng, b * t * c, 1.0),
        randn(&mut rng, n * c, 0.5),
        randn(&mut rng, n, 0.3),
    ];
    let r = randn(&mut rng, b * n, 1.0);
    let j = |x: &[Vec<f32>]| {
        let first: Vec<f32> = x[0].chunks(t * c).flat_map(|s| s[..c].to_vec()).collect(); // (B, C)
        let mut out = vec![0.0; b * n]; // (B, N)
        linear_forward(&mut out, &first, &x[1], Some(&x[2]), b, c, n);
        dot(&r, &out)
    };
    let mut g: Vec<Vec<f32>> = inputs.iter().map(|x| vec![0.0; x.len()]).collect();
    let [gx, gw, gb] = &mut g[..] else {
        unreachable!()
    };
    classifier_backward(gx, gw, gb, &r, &inputs[0], &inputs[1], b, t, c, n);
    for seq in g[0].chunks(t * c) {
        assert!(
            seq[c..].iter().all(|&x| x == 0.0),
            "positions after 0 get no gradient"
        );
    }
    check_inputs(
        "classifier head",
        &["x", "weight", "bias"],
        &inputs,
        &g,
        EPS,
        &j,
    );
}

// ------------------------------------------------------------------------------------
// Whole models
// ------------------------------------------------------------------------------------

/// The training loss recomputed in f64 from the model's f32 logits: the cross-entropy of
/// docs/model.md (label smoothing 0.1), written out here independently of `train::loss`.
fn loss_f64(
    model: &Model,
    batch: &Batch,
    tb: &tplay::tasks::TrainBatch,
    opts: &ForwardOptions,
) -> f64 {
    let trace = model.forward(batch, opts).expect("forward");
    let eps = 0.1f64;
    let (logits, targets, v, ignore): (&[f32], &[u32], usize, bool) = match &trace.class_logits {
        Some(cl) => (&cl.data, &tb.labels, model.config.num_classes, false),
        None => (
            &trace.logits.data,
            &tb.targets,
            model.config.vocab_size,
            true,
        ),
    };
    let mut total = 0.0;
    let mut count = 0;
    for (row, &y) in logits.chunks(v).zip(targets) {
        if ignore && y == 0 {
            continue;
        }
        let lse = row.iter().map(|&x| (x as f64).exp()).sum::<f64>().ln();
        let nll: Vec<f64> = row.iter().map(|&x| lse - x as f64).collect();
        total += (1.0 - eps) * nll[y as usize] + eps / v as f64 * nll.iter().sum::<f64>();
        count += 1;
    }
    total / count as f64
}

/// A small model with every parameter (biases, norms, tables) randomised a little, so no
/// gradient is special because a bias is zero or γ is one.
fn small_model(cfg: ModelConfig, seed: u64) -> Model {
    let mut m = Model::init(cfg, letters(8), seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed + 100);
    m.visit_params_mut(&mut |name, t, kind| {
        let jitter = randn(&mut rng, t.numel(), 0.1);
        if kind == ParamKind::Buffer {
            if name.ends_with("running_var") {
                t.data
                    .iter_mut()
                    .zip(&jitter)
                    .for_each(|(x, j)| *x = 1.0 + j.abs() * 3.0);
            } else {
                t.data
                    .iter_mut()
                    .zip(&jitter)
                    .for_each(|(x, j)| *x = *j * 3.0);
            }
            return;
        }
        t.data.iter_mut().zip(&jitter).for_each(|(x, j)| *x += j);
    });
    m.sync_shared_qk();
    m
}

fn base_config(arch: Arch) -> ModelConfig {
    ModelConfig {
        arch,
        vocab_size: 12,
        d_model: 8,
        n_heads: 2,
        d_ff: 12,
        max_len: 8,
        n_layers: if arch == Arch::EncoderDecoder { 0 } else { 2 },
        n_encoder_layers: if arch == Arch::EncoderDecoder { 1 } else { 0 },
        n_decoder_layers: if arch == Arch::EncoderDecoder { 2 } else { 0 },
        pos_encoding: PosEncoding::Sinusoidal,
        relative_max_distance: 2,
        norm: Norm::PreLn,
        final_norm: true,
        activation: Activation::Gelu,
        score: Score::ScaledDot,
        share_qk: false,
        scale_embeddings: true,
        residual: true,
        dropout: 0.0,
        tie_embeddings: false,
        num_classes: 0,
    }
}

/// Whole-model check: the analytic gradient of every trained tensor against central
/// differences of [`loss_f64`] on sampled coordinates.
fn check_model(name: &str, cfg: ModelConfig, opts: ForwardOptions) -> f64 {
    cfg.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut model = small_model(cfg.clone(), 3);
    if let (HeadParams::Lm { bias, .. }, true) = (&mut model.head, name.contains("no lm bias")) {
        *bias = None;
    }
    if name.contains("separate embeddings") {
        model.separate_embeddings().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(77);
        let src = model.src_embed.as_mut().unwrap();
        src.data = randn(&mut rng, src.numel(), 0.5);
    }
    let (tokens, src) = (
        vec![1u32, 5, 6, 7, 8, 1, 9, 4, 0, 0],
        vec![5u32, 6, 7, 11, 8, 9, 10, 0],
    );
    let is_enc_dec = cfg.arch == Arch::EncoderDecoder;
    let tb = tplay::tasks::TrainBatch {
        b: 2,
        t: 5,
        s: if is_enc_dec { 4 } else { 0 },
        tokens: tokens.clone(),
        src: if is_enc_dec { src } else { vec![] },
        targets: if cfg.is_classifier() {
            vec![]
        } else {
            vec![5, 6, 7, 8, 2, 9, 4, 2, 0, 0]
        },
        labels: if cfg.is_classifier() {
            vec![0, 2]
        } else {
            vec![]
        },
    };
    let batch = to_batch(&tb);
    let lg = loss_and_grads(&model, &tb, &opts, 0.1).unwrap_or_else(|e| panic!("{name}: {e}"));
    let j0 = loss_f64(&model, &batch, &tb, &opts);
    assert!(
        (lg.loss as f64 - j0).abs() < 1e-5,
        "{name}: loss {} vs {j0}",
        lg.loss
    );

    let mut grads = vec![];
    lg.grads.visit(&mut |n, t, k| {
        if k == ParamKind::Trained {
            grads.push((n.to_string(), t.data.clone()));
        }
    });
    // ReLU: a smaller step, so that no difference straddles a kink of any hidden unit.
    let eps = match cfg.activation {
        Activation::Relu => RELU_EPS,
        Activation::Gelu | Activation::GeluTanh => EPS,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut worst = 0.0f64;
    for (ti, (pname, g)) in grads.iter().enumerate() {
        let idx = sample(&mut rng, g.len());
        let mut numeric = vec![];
        let mut analytic = vec![];
        for &i in &idx {
            let eval = |delta: f32| {
                let mut m = model.clone();
                let mut k = 0;
                m.visit_params_mut(&mut |_, t, kind| {
                    if kind == ParamKind::Trained {
                        if k == ti {
                            t.data[i] += delta;
                        }
                        k += 1;
                    }
                });
                // With share_qk the stored K rows follow the Q rows, as after every step.
                m.sync_shared_qk();
                loss_f64(&m, &batch, &tb, &opts)
            };
            numeric.push((eval(eps) - eval(-eps)) / (2.0 * eps as f64));
            analytic.push(g[i] as f64);
        }
        worst = worst.max(compare(&format!("{name}: {pname}"), &analytic, &numeric));
    }
    eprintln!(
        "{name}: {} tensors, worst relative error {worst:.2e}",
        grads.len()
    );
    worst
}

fn train_mode() -> ForwardOptions {
    ForwardOptions {
        mode: Mode::Train { seed: 7 },
        ..ForwardOptions::default()
    }
}

#[test]
fn decoder_only_gradients_match_for_every_position_encoding() {
    for pos in PosEncoding::ALL {
        let cfg = ModelConfig {
            pos_encoding: pos,
            ..base_config(Arch::DecoderOnly)
        };
        check_model(
            &format!("decoder-only {pos:?}"),
            cfg,
            ForwardOptions::default(),
        );
    }
}

#[test]
fn decoder_only_gradients_match_for_every_score_function_and_the_scaling_switch() {
    for score in [Score::ScaledDot, Score::Dot, Score::Additive] {
        let cfg = ModelConfig {
            score,
            ..base_config(Arch::DecoderOnly)
        };
        check_model(
            &format!("decoder-only score {score:?}"),
            cfg,
            ForwardOptions::default(),
        );
    }
    let unscaled = ForwardOptions {
        scale: false,
        ..ForwardOptions::default()
    };
    check_model(
        "decoder-only √D off",
        base_config(Arch::DecoderOnly),
        unscaled,
    );
}

#[test]
fn decoder_only_gradients_match_for_every_norm_placement() {
    for (norm, final_norm) in [
        (Norm::PostLn, false),
        (Norm::PreLn, true),
        (Norm::PreLn, false),
        (Norm::None, false),
        (Norm::BatchNorm, true),
    ] {
        let cfg = ModelConfig {
            norm,
            final_norm,
            ..base_config(Arch::DecoderOnly)
        };
        check_model(
            &format!("decoder-only {norm:?} final_norm {final_norm}"),
            cfg.clone(),
            ForwardOptions::default(),
        );
        if norm == Norm::BatchNorm {
            // Train mode: batch statistics couple the sequences of the batch.
            check_model("decoder-only BatchNorm in train mode", cfg, train_mode());
        }
    }
}

#[test]
fn decoder_only_gradients_match_with_the_other_switches() {
    let base = base_config(Arch::DecoderOnly);
    let cases: Vec<(&str, ModelConfig, ForwardOptions)> = vec![
        (
            "residual off",
            ModelConfig {
                residual: false,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "relu, post-LN",
            ModelConfig {
                activation: Activation::Relu,
                norm: Norm::PostLn,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "tied embeddings",
            ModelConfig {
                tie_embeddings: true,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        ("no lm bias", base.clone(), ForwardOptions::default()),
        (
            "shared W_Q = W_K",
            ModelConfig {
                share_qk: true,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "embeddings not scaled",
            ModelConfig {
                scale_embeddings: false,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "dropout 0.2 in train mode",
            ModelConfig {
                dropout: 0.2,
                ..base.clone()
            },
            train_mode(),
        ),
        (
            "head ablated, causal mask off, padding mask off",
            base.clone(),
            ForwardOptions {
                causal: Some(false),
                padding_mask: false,
                ablate: vec![HeadRef {
                    site: AttnSite::DecoderSelf,
                    layer: 1,
                    head: 0,
                }],
                ..ForwardOptions::default()
            },
        ),
    ];
    for (name, cfg, opts) in cases {
        check_model(&format!("decoder-only {name}"), cfg, opts);
    }
}

#[test]
fn encoder_only_gradients_match_for_the_token_head_and_the_classifier() {
    let base = base_config(Arch::EncoderOnly);
    check_model(
        "encoder-only token head",
        base.clone(),
        ForwardOptions::default(),
    );
    check_model(
        "encoder-only relative, post-LN",
        ModelConfig {
            pos_encoding: PosEncoding::Relative,
            norm: Norm::PostLn,
            final_norm: false,
            ..base.clone()
        },
        ForwardOptions::default(),
    );
    check_model(
        "encoder-only classifier",
        ModelConfig {
            num_classes: 3,
            ..base.clone()
        },
        ForwardOptions::default(),
    );
    check_model(
        "encoder-only classifier, rope, BatchNorm train mode",
        ModelConfig {
            num_classes: 3,
            pos_encoding: PosEncoding::Rope,
            norm: Norm::BatchNorm,
            final_norm: false,
            ..base
        },
        train_mode(),
    );
}

#[test]
fn encoder_decoder_gradients_match_including_cross_attention() {
    let base = base_config(Arch::EncoderDecoder);
    let cases: Vec<(&str, ModelConfig, ForwardOptions)> = vec![
        ("pre-LN sinusoidal", base.clone(), ForwardOptions::default()),
        (
            "post-LN relu (the 2017 layout)",
            ModelConfig {
                norm: Norm::PostLn,
                activation: Activation::Relu,
                final_norm: false,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "learned positions, tied",
            ModelConfig {
                pos_encoding: PosEncoding::Learned,
                tie_embeddings: true,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "rope",
            ModelConfig {
                pos_encoding: PosEncoding::Rope,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "relative",
            ModelConfig {
                pos_encoding: PosEncoding::Relative,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "alibi, additive",
            ModelConfig {
                pos_encoding: PosEncoding::Alibi,
                score: Score::Additive,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "separate embeddings (src_embed, tgt_embed)",
            base.clone(),
            ForwardOptions::default(),
        ),
        (
            "separate embeddings, learned positions, tied to the target table",
            ModelConfig {
                pos_encoding: PosEncoding::Learned,
                tie_embeddings: true,
                ..base.clone()
            },
            ForwardOptions::default(),
        ),
        (
            "cross head ablated",
            base.clone(),
            ForwardOptions {
                ablate: vec![HeadRef {
                    site: AttnSite::Cross,
                    layer: 0,
                    head: 1,
                }],
                ..ForwardOptions::default()
            },
        ),
        (
            "dropout 0.2 in train mode",
            ModelConfig {
                dropout: 0.2,
                ..base
            },
            train_mode(),
        ),
    ];
    for (name, cfg, opts) in cases {
        check_model(&format!("encoder-decoder {name}"), cfg, opts);
    }
}
