//! A whole training step on the GPU ([`GpuTrainer`]) equals the CPU's `train_step`: the
//! loss, the gradient norm, every gradient, every Adam-updated weight, Adam's moments and
//! the BatchNorm running statistics, for every architecture × norm × position encoding ×
//! score (with the config switches cycled over the cases); fifty steps of the shipped
//! reverse recipe give the CPU's losses; and the state goes back and forth between the GPU
//! and the CPU trainer without changing a step.

mod support;

use std::collections::BTreeMap;

use support::{finite_diff, gpu_or_skip, max_diff, tokenizer, values, with_separate_embeddings};
use tplay::backend::gpu::{GpuContext, GpuTrainer};
use tplay::config::{Activation, Arch, ModelConfig, Norm, PosEncoding, Score};
use tplay::model::{ForwardOptions, Mode, Model, ParamKind};
use tplay::tasks::TrainBatch;
use tplay::train::optim::{Adam, AdamConfig};
use tplay::train::recipes::recipes;
use tplay::train::step::{train_step, train_step_observed, StepStats};
use tplay::train::trainer::Trainer;

/// Bound on the relative difference of every compared tensor.
const TOL: f32 = 1e-5;

/// Adam with ε = 1e-3 (= the tests' learning rate) where weights are compared. Adam's first
/// step moves a weight by lr·g/(|g| + ε), whose sensitivity to g is lr·ε/(|g| + ε)² ≤ lr/ε:
/// with the default ε = 1e-9 a gradient that is zero up to rounding (the K bias, which
/// softmax ignores) moves its weight by ±lr whichever way it rounded, so the CPU and the
/// GPU would differ by 2·lr there although their gradients agree to 1e-7. With ε = lr the
/// weights differ by no more than the gradients do, and real gradients (≥ 1e-2) still take
/// Adam's normalised step.
fn adam_config() -> AdamConfig {
    AdamConfig {
        eps: 1e-3,
        ..AdamConfig::default()
    }
}

/// `max |gpu − cpu| / max(1, max |cpu|)`.
fn rel(gpu: &[f32], cpu: &[f32]) -> f32 {
    assert_eq!(gpu.len(), cpu.len(), "lengths differ");
    let scale = cpu.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    max_diff(gpu, cpu) / scale
}

/// Every parameter (trained and running statistics) by name.
fn params(m: &Model) -> Vec<(String, Vec<f32>, ParamKind)> {
    let mut out = vec![];
    m.visit_params(&mut |n, t, k| out.push((n.to_string(), t.data.clone(), k)));
    out
}

/// A context of its own, for a test that counts submissions (the shared one counts every
/// test's).
fn own_gpu() -> Option<GpuContext> {
    gpu_or_skip()?;
    Some(pollster::block_on(GpuContext::request()).unwrap())
}

/// The elements of a parameter whose gradient is exactly zero in exact arithmetic: under
/// BatchNorm without dropout, a bias that only adds the same vector to every row of a
/// sublayer's output shifts each feature's batch mean, which the norm subtracts. That is
/// the bias of a sublayer's last Linear (`out_proj.bias`, `linear2.bias`), and the value
/// bias (the last third of `in_proj_bias`): every probability row sums to 1, so b_V adds
/// b_V·W_Oᵀ to every row. Both sides compute such a gradient as a cancellation of terms of
/// size γ·rstd·|dy|, so what they get is rounding noise of that size (1e-5 on either side
/// when a feature's batch variance is small), not a value to compare; the test holds both
/// to being that small.
fn zero_by_construction(cfg: &ModelConfig, name: &str, len: usize) -> std::ops::Range<usize> {
    if cfg.norm != Norm::BatchNorm || cfg.dropout != 0.0 {
        0..0
    } else if name.ends_with("out_proj.bias") || name.ends_with("linear2.bias") {
        0..len
    } else if name.ends_with("in_proj_bias") {
        2 * len / 3..len
    } else {
        0..0
    }
}

/// The elements of `v` outside `zero`.
fn outside(v: &[f32], zero: &std::ops::Range<usize>) -> Vec<f32> {
    v.iter()
        .enumerate()
        .filter(|(k, _)| !zero.contains(k))
        .map(|(_, x)| *x)
        .collect()
}

/// The bound on such a gradient on either side.
const NOISE: f32 = 1e-4;

/// One whole-step case.
#[derive(Clone, Debug)]
struct Case {
    arch: Arch,
    norm: Norm,
    pos: PosEncoding,
    score: Score,
    /// Cycles the config switches and shapes.
    i: usize,
}

impl Case {
    fn classifier(&self) -> bool {
        self.arch == Arch::EncoderOnly && self.i % 2 == 1
    }

    fn config(&self) -> ModelConfig {
        let i = self.i;
        let (n_layers, n_enc, n_dec) = match self.arch {
            Arch::EncoderDecoder => (0, 1 + i % 2, 2 - i % 2),
            _ => (1 + i % 2, 0, 0),
        };
        let classifier = self.classifier();
        let cfg = ModelConfig {
            arch: self.arch,
            vocab_size: tokenizer().vocab_size(),
            d_model: 12,
            n_heads: 2,
            d_ff: 20,
            max_len: 12,
            n_layers,
            n_encoder_layers: n_enc,
            n_decoder_layers: n_dec,
            pos_encoding: self.pos,
            relative_max_distance: 2,
            norm: self.norm,
            final_norm: i.is_multiple_of(2),
            activation: if i.is_multiple_of(2) {
                Activation::Gelu
            } else {
                Activation::Relu
            },
            score: self.score,
            share_qk: i % 4 == 1,
            scale_embeddings: i % 5 != 2,
            residual: i % 7 != 3,
            dropout: if i.is_multiple_of(3) { 0.0 } else { 0.15 },
            tie_embeddings: !classifier && i % 3 == 2,
            num_classes: if classifier { 3 } else { 0 },
        };
        cfg.validate().expect("test configs are valid");
        cfg
    }

    fn model(&self) -> Model {
        let m = Model::init(self.config(), tokenizer(), 100 + self.i as u64);
        if self.arch == Arch::EncoderDecoder && self.i.is_multiple_of(2) {
            with_separate_embeddings(m, 7 + self.i as u64)
        } else {
            m
        }
    }

    /// (B, T, S): T = 1 included, sizes off the 16-wide tiles.
    fn shape(&self) -> (usize, usize, usize) {
        let t = [5, 1, 7, 11, 3][self.i % 5];
        let b = 2 + self.i % 2;
        let s = if self.arch == Arch::EncoderDecoder {
            [6, 3, 9, 1][self.i % 4]
        } else {
            0
        };
        (b, t, s)
    }

    /// Random tokens; the last sequence ends in padding (tokens and targets), one more
    /// target is padding.
    fn batch(&self) -> TrainBatch {
        let (b, t, s) = self.shape();
        let v = tokenizer().vocab_size() as u32;
        let ids = |n: usize, seed: u64| -> Vec<u32> {
            values(n, seed, 1.0)
                .into_iter()
                .map(|x| 4 + ((x + 1.0) * 0.5 * (v - 4) as f32) as u32 % (v - 4))
                .collect()
        };
        let mut tokens = ids(b * t, 11 + self.i as u64);
        let mut targets = ids(b * t, 12 + self.i as u64);
        let mut src = ids(b * s, 13 + self.i as u64);
        if t >= 3 {
            for j in t - 2..t {
                tokens[(b - 1) * t + j] = 0;
                targets[(b - 1) * t + j] = 0;
            }
            targets[1] = 0;
        }
        if s >= 3 {
            src[(b - 1) * s + s - 1] = 0;
        }
        let labels = if self.classifier() {
            (0..b as u32).map(|k| (k + self.i as u32) % 3).collect()
        } else {
            vec![]
        };
        TrainBatch {
            b,
            t,
            s,
            tokens,
            src,
            targets: if self.classifier() { vec![] } else { targets },
            labels,
        }
    }

    fn smoothing(&self) -> f32 {
        if self.i % 2 == 1 {
            0.1
        } else {
            0.0
        }
    }

    fn clip(&self) -> Option<f32> {
        match self.i % 3 {
            0 => None,
            1 => Some(0.5),
            _ => Some(100.0),
        }
    }
}

fn cases() -> Vec<Case> {
    let mut out = vec![];
    let mut i = 0;
    for arch in [Arch::DecoderOnly, Arch::EncoderOnly, Arch::EncoderDecoder] {
        for norm in [Norm::PreLn, Norm::PostLn, Norm::BatchNorm, Norm::None] {
            for pos in [
                PosEncoding::None,
                PosEncoding::Sinusoidal,
                PosEncoding::Learned,
                PosEncoding::Relative,
                PosEncoding::Rope,
                PosEncoding::Alibi,
            ] {
                for score in [Score::ScaledDot, Score::Dot, Score::Additive] {
                    out.push(Case {
                        arch,
                        norm,
                        pos,
                        score,
                        i,
                    });
                    i += 1;
                }
            }
        }
    }
    out
}

/// The worst relative differences of one step: loss, grad norm, gradients, weights (and
/// running statistics), Adam moments.
#[derive(Clone, Copy, Debug, Default)]
struct Worst {
    loss: f32,
    norm: f32,
    grads: f32,
    weights: f32,
    moments: f32,
}

impl Worst {
    fn max(self, o: Worst) -> Worst {
        Worst {
            loss: self.loss.max(o.loss),
            norm: self.norm.max(o.norm),
            grads: self.grads.max(o.grads),
            weights: self.weights.max(o.weights),
            moments: self.moments.max(o.moments),
        }
    }

    fn all(&self) -> f32 {
        [self.loss, self.norm, self.grads, self.weights, self.moments]
            .into_iter()
            .fold(0.0, f32::max)
    }
}

/// One step of `case` on both sides; the worst differences, or what went wrong, with the
/// name of the worst tensor.
fn one_step(ctx: &GpuContext, case: &Case) -> Result<(Worst, String), String> {
    let model = case.model();
    let adam = Adam::new(&model, adam_config());
    let tb = case.batch();
    let opts = ForwardOptions {
        mode: Mode::Train {
            seed: 900 + case.i as u64,
        },
        ..ForwardOptions::default()
    };
    let lr = 1e-3;
    // CPU
    let (mut cpu_model, mut cpu_adam) = (model.clone(), adam.clone());
    let mut cpu_grads: Vec<(String, Vec<f32>)> = vec![];
    let mut cpu_loss = 0.0;
    let cpu_stats = train_step_observed(
        &mut cpu_model,
        &mut cpu_adam,
        &tb,
        &opts,
        case.smoothing(),
        lr,
        case.clip(),
        &mut |lg| {
            cpu_loss = lg.loss;
            lg.grads.visit(&mut |n, t, k| {
                if k == ParamKind::Trained {
                    cpu_grads.push((n.to_string(), t.data.clone()));
                }
            });
        },
    )
    .map_err(|e| format!("CPU step: {e}"))?;
    // GPU
    let mut trainer = GpuTrainer::new(ctx, &model, &adam).map_err(|e| format!("new: {e}"))?;
    let (gpu_stats, gpu_grads) =
        pollster::block_on(trainer.step_observed(&tb, &opts, case.smoothing(), lr, case.clip()))
            .map_err(|e| format!("GPU step: {e}"))?;
    let mut gpu_model = model.clone();
    let gpu_adam = pollster::block_on(trainer.download(&mut gpu_model))
        .map_err(|e| format!("download: {e}"))?;

    let mut w = Worst {
        loss: rel(&[gpu_stats.loss], &[cpu_stats.loss]),
        norm: rel(&[gpu_stats.grad_norm], &[cpu_stats.grad_norm]),
        ..Worst::default()
    };
    let mut worst_name = String::new();
    let mut worst_value = 0.0f32;
    let mut note = |name: &str, d: f32| {
        if d > worst_value {
            worst_value = d;
            worst_name = name.to_string();
        }
    };
    if gpu_grads.len() != cpu_grads.len() {
        return Err(format!(
            "{} gradients on the GPU, {} on the CPU",
            gpu_grads.len(),
            cpu_grads.len()
        ));
    }
    let mut worst_grad = (0.0f32, String::new());
    let cfg = &model.config;
    for ((gn, g), (cn, c)) in gpu_grads.iter().zip(&cpu_grads) {
        if gn != cn {
            return Err(format!("gradient order: {gn} vs {cn}"));
        }
        let zero = zero_by_construction(cfg, gn, c.len());
        // Largest |value| of either side there (a NaN or an infinity is infinite).
        let nothing = vec![0.0; zero.len()];
        let big =
            finite_diff(&g[zero.clone()], &nothing).max(finite_diff(&c[zero.clone()], &nothing));
        if big > NOISE {
            return Err(format!(
                "d{gn}[{zero:?}] should be 0 up to rounding: {big:e}"
            ));
        }
        let (g, c) = (&outside(g, &zero), &outside(c, &zero));
        let d = rel(g, c);
        let big = c.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        if d > worst_grad.0 {
            worst_grad = (d, format!("d{gn} (max |cpu| {big:.1e})"));
        }
        w.grads = w.grads.max(d);
    }
    for ((gn, g, _), (cn, c, _)) in params(&gpu_model).iter().zip(params(&cpu_model)) {
        if *gn != cn {
            return Err(format!("parameter order: {gn} vs {cn}"));
        }
        let zero = zero_by_construction(cfg, gn, c.len());
        // Adam moves those by lr·g/(|g| + ε) ≤ lr·NOISE/ε on either side.
        let d = max_diff(&g[zero.clone()], &c[zero.clone()]);
        if d > 2.0 * lr * NOISE / adam_config().eps {
            return Err(format!(
                "{gn}[{zero:?}] moved by {d:e} from a zero gradient"
            ));
        }
        let d = rel(&outside(g, &zero), &outside(&c, &zero));
        note(gn, d);
        w.weights = w.weights.max(d);
    }
    if gpu_adam.step != cpu_adam.step {
        return Err(format!("Adam step {} vs {}", gpu_adam.step, cpu_adam.step));
    }
    let ((gm, gv), (cm, cv)) = (gpu_adam.moments(), cpu_adam.moments());
    for (g, c) in gm.iter().zip(&cm).chain(gv.iter().zip(&cv)) {
        let d = rel(g, c);
        note("an Adam moment", d);
        w.moments = w.moments.max(d);
    }
    let counts = trainer.counts();
    if counts.submissions != 1 || counts.readbacks != 1 {
        return Err(format!("{counts:?}: not one submission and one readback"));
    }
    Ok((
        w,
        format!(
            "{worst_name} {worst_value:.1e}; gradient {} {:.1e}",
            worst_grad.1, worst_grad.0
        ),
    ))
}

#[test]
fn one_gpu_step_equals_the_cpu_step_for_every_architecture_norm_position_and_score() {
    let Some(ctx) = own_gpu() else { return };
    let mut failures = vec![];
    let mut by_group: BTreeMap<String, Worst> = BTreeMap::new();
    let mut by_pos: BTreeMap<String, Worst> = BTreeMap::new();
    let mut by_score: BTreeMap<String, Worst> = BTreeMap::new();
    let mut all = Worst::default();
    for case in cases() {
        let what = format!(
            "#{} {:?} {:?} {:?} {:?} (B, T, S) = {:?}",
            case.i,
            case.arch,
            case.norm,
            case.pos,
            case.score,
            case.shape()
        );
        match one_step(&ctx, &case) {
            Ok((w, worst)) => {
                if w.all() > TOL {
                    failures.push(format!("{what}: {w:?} (worst {worst})"));
                }
                let group = format!("{:?} {:?}", case.arch, case.norm);
                let e = by_group.entry(group).or_default();
                *e = e.max(w);
                let e = by_pos.entry(format!("{:?}", case.pos)).or_default();
                *e = e.max(w);
                let e = by_score.entry(format!("{:?}", case.score)).or_default();
                *e = e.max(w);
                all = all.max(w);
            }
            Err(e) => failures.push(format!("{what}: {e}")),
        }
    }
    for (title, table) in [
        ("architecture, norm", &by_group),
        ("position encoding", &by_pos),
        ("score", &by_score),
    ] {
        eprintln!(
            "worst relative difference by {title} (loss, grad norm, gradients, weights, moments):"
        );
        for (k, w) in table {
            eprintln!(
                "  {k:<28} {:.1e} {:.1e} {:.1e} {:.1e} {:.1e}",
                w.loss, w.norm, w.grads, w.weights, w.moments
            );
        }
    }
    eprintln!("all cases: {all:?}");
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases().len(),
        failures.join("\n")
    );
}

/// The shipped reverse recipe's run: its model, data, learning-rate schedule, clipping and
/// label smoothing; the dropout seed of step k is 5000 + k on both sides.
fn reverse_trainer() -> Trainer<'static> {
    let recipe = recipes()
        .into_iter()
        .find(|r| r.file == "reverse.safetensors")
        .expect("the reverse recipe ships");
    let spec = recipe.run;
    let task = spec.task().unwrap();
    let cfg = spec.model_config(task.as_ref()).unwrap();
    let opts = spec.train_options().unwrap();
    Trainer::owning(task, cfg, opts).unwrap()
}

fn train_opts(step: u64) -> ForwardOptions {
    ForwardOptions {
        mode: Mode::Train { seed: 5000 + step },
        ..ForwardOptions::default()
    }
}

/// The next batch and learning rate of the recipe's run, advancing it by one step.
fn next(data: &mut Trainer) -> (TrainBatch, f32) {
    let tb = data.next_batch();
    let lr = data.lr();
    data.step += 1;
    (tb, lr)
}

#[test]
fn fifty_steps_of_the_reverse_recipe_give_the_cpu_losses() {
    let Some(ctx) = own_gpu() else { return };
    let mut data = reverse_trainer();
    let (smoothing, clip) = (data.opts.label_smoothing, data.opts.clip);
    let mut cpu = data.model.clone();
    let mut cpu_adam = Adam::new(&cpu, data.opts.adam);
    let mut gpu = GpuTrainer::new(&ctx, &cpu, &cpu_adam).unwrap();
    let (mut worst, mut worst_step) = (0.0f32, 0);
    for step in 1..=50u64 {
        let (tb, lr) = next(&mut data);
        let opts = train_opts(step);
        let c: StepStats =
            train_step(&mut cpu, &mut cpu_adam, &tb, &opts, smoothing, lr, clip).unwrap();
        let g = pollster::block_on(gpu.step(&tb, &opts, smoothing, lr, clip)).unwrap();
        let d = (g.loss - c.loss).abs() / c.loss.abs().max(1e-12);
        assert!(
            d <= 1e-4,
            "step {step}: loss GPU {} vs CPU {} (relative {d:e})",
            g.loss,
            c.loss
        );
        if d > worst {
            (worst, worst_step) = (d, step);
        }
        let counts = gpu.counts();
        assert_eq!(
            (counts.submissions, counts.readbacks),
            (1, 1),
            "one submission and one readback per step"
        );
    }
    let mut back = data.model.clone();
    pollster::block_on(gpu.download(&mut back)).unwrap();
    let mut w = 0.0f32;
    for ((_, g, _), (_, c, _)) in params(&back).iter().zip(params(&cpu)) {
        w = w.max(rel(g, &c));
    }
    eprintln!(
        "reverse recipe, 50 steps: worst loss difference {worst:e} (step {worst_step}); \
         weights after 50 steps {w:e}; {:?} per step",
        gpu.counts()
    );
}

#[test]
fn gpu_steps_continue_from_cpu_steps_and_back_through_download() {
    let Some(ctx) = gpu_or_skip() else { return };
    // A BatchNorm model with dropout: the running statistics and the dropout stream
    // travel too.
    let case = Case {
        arch: Arch::EncoderDecoder,
        norm: Norm::BatchNorm,
        pos: PosEncoding::Learned,
        score: Score::ScaledDot,
        i: 4,
    };
    let model = case.model();
    let tb = case.batch();
    let mut cpu = model.clone();
    let mut cpu_adam = Adam::new(&cpu, adam_config());
    let lr = 1e-3;
    let clip = Some(1.0);
    let cpu_step = |m: &mut Model, a: &mut Adam, k: u64| {
        train_step(m, a, &tb, &train_opts(k), 0.1, lr, clip).unwrap()
    };
    // Seven CPU steps: the reference.
    let mut losses = vec![];
    for k in 0..7 {
        losses.push(cpu_step(&mut cpu, &mut cpu_adam, k).loss);
    }
    // GPU 3 steps → download → CPU 2 steps → a new GPU trainer → GPU 2 steps → download.
    let mut mixed = model.clone();
    let mut gpu = GpuTrainer::new(&ctx, &mixed, &Adam::new(&mixed, adam_config())).unwrap();
    let mut got = vec![];
    for k in 0..3 {
        got.push(
            pollster::block_on(gpu.step(&tb, &train_opts(k), 0.1, lr, clip))
                .unwrap()
                .loss,
        );
    }
    let mut adam = pollster::block_on(gpu.download(&mut mixed)).unwrap();
    assert_eq!(adam.step, 3);
    for k in 3..5 {
        got.push(cpu_step(&mut mixed, &mut adam, k).loss);
    }
    let mut gpu = GpuTrainer::new(&ctx, &mixed, &adam).unwrap();
    for k in 5..7 {
        got.push(
            pollster::block_on(gpu.step(&tb, &train_opts(k), 0.1, lr, clip))
                .unwrap()
                .loss,
        );
    }
    let adam = pollster::block_on(gpu.download(&mut mixed)).unwrap();
    assert_eq!(adam.step, 7);
    let d = rel(&got, &losses);
    assert!(d <= TOL, "losses {got:?} vs {losses:?}");
    let mut w = 0.0f32;
    for ((n, g, _), (_, c, _)) in params(&mixed).iter().zip(params(&cpu)) {
        let d = rel(g, &c);
        assert!(d <= 1e-4, "{n} after 7 mixed steps: {d:e}");
        w = w.max(d);
    }
    eprintln!(
        "GPU → CPU → GPU round trip, 7 steps: losses {d:e}, weights and running statistics {w:e}"
    );
}

#[test]
fn a_batch_norm_step_in_eval_mode_is_refused_with_its_reason() {
    let Some(ctx) = gpu_or_skip() else { return };
    let case = Case {
        arch: Arch::DecoderOnly,
        norm: Norm::BatchNorm,
        pos: PosEncoding::Rope,
        score: Score::Dot,
        i: 0,
    };
    let model = case.model();
    let adam = Adam::new(&model, AdamConfig::default());
    let mut gpu = GpuTrainer::new(&ctx, &model, &adam).unwrap();
    let err =
        pollster::block_on(gpu.step(&case.batch(), &ForwardOptions::default(), 0.0, 1e-3, None))
            .unwrap_err();
    assert!(err.to_string().contains("BatchNorm"), "{err}");
    // A bad batch is an input error, not a panic, and leaves the trainer usable.
    let mut bad = case.batch();
    bad.targets[0] = 99;
    let err = pollster::block_on(gpu.step(&bad, &train_opts(0), 0.0, 1e-3, None)).unwrap_err();
    assert!(err.to_string().contains("outside the vocabulary"), "{err}");
    pollster::block_on(gpu.step(&case.batch(), &train_opts(0), 0.0, 1e-3, None)).unwrap();
}
