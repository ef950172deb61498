//! The whole forward pass on the GPU equals the CPU reference: on random models of every
//! architecture and config switch, under every run-time switch, and on every PyTorch
//! fixture; logits within 1e-4, and the traced attention scores, probabilities and hidden
//! states too. One pass is one submission and one readback.

mod support;

use support::fixtures::{every_forward_fixture_matches_pytorch, Tolerance};
use support::{
    assert_differ, gpu_forward, gpu_or_skip, nano_preset, tokenizer, with_separate_embeddings,
    Device,
};
use tplay::backend::gpu::{GpuContext, GpuModel};
use tplay::backend::Backend;
use tplay::config::{Activation, Arch, ModelConfig, Norm, PosEncoding, Score};
use tplay::model::forward::Batch;
use tplay::model::mask::{CellEdit, MaskRule, SiteMask};
use tplay::model::{AttnSite, ForwardOptions, HeadRef, Mode, Model, Trace};
use tplay::tensor::Tensor;
use tplay::Error;

/// Largest difference allowed: absolute for logits and probabilities; for hidden states
/// and scores, relative to the largest magnitude in the tensor (a post-norm BatchNorm
/// model's residual stream reaches ~150, where f32 itself is only good to ~1e-5).
const TOL: f32 = 1e-4;

/// How a comparison scales its tolerance.
#[derive(Clone, Copy, PartialEq)]
enum Scale {
    Absolute,
    OfLargest,
}

fn close(what: &str, a: &Tensor, b: &Tensor, tol: f32, scale: Scale) -> Result<(), String> {
    if a.shape != b.shape {
        return Err(format!("{what}: shapes {:?} vs {:?}", a.shape, b.shape));
    }
    let largest = a
        .data
        .iter()
        .filter(|x| x.is_finite())
        .fold(1.0f32, |m, x| m.max(x.abs()));
    let bound = match scale {
        Scale::Absolute => tol,
        Scale::OfLargest => tol * largest,
    };
    for (i, (x, y)) in a.data.iter().zip(&b.data).enumerate() {
        let ok = if x.is_infinite() || y.is_infinite() {
            x == y
        } else {
            (x - y).abs() <= bound
        };
        if !ok {
            return Err(format!(
                "{what}: element {i}: CPU {x} vs GPU {y} (allowed ±{bound})"
            ));
        }
    }
    Ok(())
}

/// Every part of two traces agrees; the error names the first that does not.
fn traces_agree(cpu: &Trace, gpu: &Trace) -> Result<(), String> {
    close("logits", &cpu.logits, &gpu.logits, TOL, Scale::Absolute)?;
    match (&cpu.class_logits, &gpu.class_logits) {
        (Some(a), Some(b)) => close("class logits", a, b, TOL, Scale::Absolute)?,
        (None, None) => {}
        _ => return Err("class logits present on one side only".into()),
    }
    if cpu.attention.len() != gpu.attention.len() {
        return Err(format!(
            "{} attention traces on the CPU, {} on the GPU",
            cpu.attention.len(),
            gpu.attention.len()
        ));
    }
    for (a, b) in cpu.attention.iter().zip(&gpu.attention) {
        if (a.site, a.layer) != (b.site, b.layer) {
            return Err(format!(
                "attention order: {:?} {} vs {:?} {}",
                a.site, a.layer, b.site, b.layer
            ));
        }
        let at = format!("{} layer {}", a.site.name(), a.layer);
        close(
            &format!("{at} scores"),
            &a.scores,
            &b.scores,
            TOL,
            Scale::OfLargest,
        )?;
        close(
            &format!("{at} probs"),
            &a.probs,
            &b.probs,
            TOL,
            Scale::Absolute,
        )?;
    }
    if cpu.hidden.len() != gpu.hidden.len() {
        return Err("hidden traces differ in number".into());
    }
    for (a, b) in cpu.hidden.iter().zip(&gpu.hidden) {
        if a.stack != b.stack || a.states.len() != b.states.len() {
            return Err(format!("hidden trace of {:?} differs in layout", a.stack));
        }
        for (l, (x, y)) in a.states.iter().zip(&b.states).enumerate() {
            close(
                &format!("{} hidden state {l}", a.stack.name()),
                x,
                y,
                TOL,
                Scale::OfLargest,
            )?;
        }
    }
    Ok(())
}

/// The largest logit and probability differences of two traces (for the printed summary).
fn worst_diffs(cpu: &Trace, gpu: &Trace) -> (f32, f32) {
    let mut logits = 0.0f32;
    if cpu.logits.shape == gpu.logits.shape {
        logits = cpu.logits.max_abs_diff(&gpu.logits);
    }
    if let (Some(a), Some(b)) = (&cpu.class_logits, &gpu.class_logits) {
        logits = logits.max(a.max_abs_diff(b));
    }
    let probs = cpu
        .attention
        .iter()
        .zip(&gpu.attention)
        .filter(|(a, b)| a.probs.shape == b.probs.shape)
        .map(|(a, b)| a.probs.max_abs_diff(&b.probs))
        .fold(0.0f32, f32::max);
    (logits, probs)
}

fn traced() -> ForwardOptions {
    ForwardOptions {
        trace_attention: true,
        trace_hidden: true,
        ..ForwardOptions::default()
    }
}

/// Run `model` on both backends and return the worst (logit, probability) differences,
/// or the GPU error or the disagreement.
fn compare(
    ctx: &GpuContext,
    model: &Model,
    batch: &Batch,
    opts: &ForwardOptions,
) -> Result<(f32, f32), String> {
    let cpu = model
        .forward(batch, opts)
        .map_err(|e| format!("CPU forward: {e}"))?;
    let gpu = gpu_forward(ctx, model, batch, opts).map_err(|e| format!("GPU forward: {e}"))?;
    traces_agree(&cpu, &gpu)?;
    Ok(worst_diffs(&cpu, &gpu))
}

/// Two rows of unequal length (the second right-padded), ids from the tokenizer.
fn batch_for(model: &Model) -> Batch {
    let pad = model.tokenizer.spec.pad;
    let rows = vec![vec![1, 5, 6, 7, 8, 9, 4, 10], vec![1, 4, 12, 5, 6]];
    let batch = Batch::padded(rows, pad).unwrap();
    if model.config.arch == Arch::EncoderDecoder {
        batch
            .with_padded_source(vec![vec![7, 8, 9], vec![4, 5, 6, 11, 12, 13]], pad)
            .unwrap()
    } else {
        batch
    }
}

fn base(arch: Arch) -> ModelConfig {
    let mut cfg = ModelConfig::preset(nano_preset(arch), tokenizer().vocab_size()).unwrap();
    // Smaller than the presets: lavapipe runs the kernels on the CPU.
    cfg.d_model = 16;
    cfg.n_heads = 2;
    cfg.d_ff = 24;
    cfg.max_len = 16;
    cfg
}

/// The base config of `arch` with one switch changed at a time, and a few combinations.
fn variants(arch: Arch) -> Vec<(String, ModelConfig)> {
    let b = base(arch);
    let mut out = vec![("base".to_string(), b.clone())];
    let mut add = |name: &str, f: &dyn Fn(&mut ModelConfig)| {
        let mut c = b.clone();
        f(&mut c);
        c.validate()
            .unwrap_or_else(|e| panic!("variant {name}: {e}"));
        out.push((name.to_string(), c));
    };
    for pos in PosEncoding::ALL {
        add(&format!("pos {pos:?}"), &|c| {
            c.pos_encoding = pos;
            c.relative_max_distance = 3;
        });
    }
    for norm in [Norm::PostLn, Norm::PreLn, Norm::BatchNorm, Norm::None] {
        add(&format!("norm {norm:?}"), &|c| c.norm = norm);
    }
    for act in [Activation::Relu, Activation::Gelu] {
        add(&format!("activation {act:?}"), &|c| c.activation = act);
    }
    for score in [Score::ScaledDot, Score::Dot, Score::Additive] {
        add(&format!("score {score:?}"), &|c| c.score = score);
    }
    add("share_qk", &|c| c.share_qk = true);
    add("no embedding scale", &|c| c.scale_embeddings = false);
    add("no residual", &|c| c.residual = false);
    add("no residual, pre-LN", &|c| {
        c.residual = false;
        c.norm = Norm::PreLn;
    });
    add("final norm flipped", &|c| c.final_norm = !c.final_norm);
    add("3 heads, ALiBi, additive", &|c| {
        c.d_model = 12;
        c.n_heads = 3;
        c.pos_encoding = PosEncoding::Alibi;
        c.score = Score::Additive;
    });
    add("1 head, relative, batch norm", &|c| {
        c.n_heads = 1;
        c.pos_encoding = PosEncoding::Relative;
        c.relative_max_distance = 2;
        c.norm = Norm::BatchNorm;
    });
    add("rope, dot, post-LN, 3 layers", &|c| {
        c.pos_encoding = PosEncoding::Rope;
        c.score = Score::Dot;
        c.norm = Norm::PostLn;
        match c.arch {
            Arch::EncoderDecoder => {
                c.n_encoder_layers = 3;
                c.n_decoder_layers = 1;
            }
            _ => c.n_layers = 3,
        }
    });
    if arch != Arch::EncoderOnly {
        add("tied embeddings", &|c| c.tie_embeddings = true);
    }
    if arch == Arch::EncoderOnly {
        add("classifier", &|c| c.num_classes = 3);
        add("classifier, learned positions", &|c| {
            c.num_classes = 5;
            c.pos_encoding = PosEncoding::Learned;
        });
    }
    out
}

/// Give BatchNorm layers the running statistics training would leave: the statistics of
/// the model's own activations (train-mode passes on the test batch, 40 momentum-0.1
/// updates). With `Model::init`'s mean 0 / variance 1 the eval-mode BatchNorm would
/// rescale every layer's output, and the residual stream would grow without bound.
fn calibrate_batch_norm(model: &mut Model) {
    if model.config.norm != Norm::BatchNorm {
        return;
    }
    let batch = batch_for(model);
    let opts = ForwardOptions {
        mode: Mode::Train { seed: 0 },
        ..ForwardOptions::default()
    };
    for _ in 0..40 {
        let trace = model.forward(&batch, &opts).unwrap();
        assert!(!trace.running_stats.is_empty());
        model.apply_running_stats(&trace.running_stats).unwrap();
    }
}

fn check_arch(arch: Arch) {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut failures = vec![];
    let mut worst = (0.0f32, 0.0f32);
    let count = variants(arch).len();
    for (i, (name, cfg)) in variants(arch).into_iter().enumerate() {
        let mut model = Model::init(cfg, tokenizer(), 100 + i as u64);
        calibrate_batch_norm(&mut model);
        let batch = batch_for(&model);
        match compare(&ctx, &model, &batch, &traced()) {
            Ok((l, p)) => worst = (worst.0.max(l), worst.1.max(p)),
            Err(e) => failures.push(format!("{arch:?} {name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "GPU ≠ CPU:\n{}", failures.join("\n"));
    eprintln!(
        "{arch:?}: {count} configs, worst |GPU − CPU| logits {:e}, probabilities {:e}",
        worst.0, worst.1
    );
}

#[test]
fn decoder_only_models_of_every_switch_match_the_cpu() {
    check_arch(Arch::DecoderOnly);
}

#[test]
fn encoder_only_models_of_every_switch_match_the_cpu() {
    check_arch(Arch::EncoderOnly);
}

#[test]
fn encoder_decoder_models_of_every_switch_match_the_cpu() {
    check_arch(Arch::EncoderDecoder);
}

#[test]
fn encoder_decoder_models_with_separate_source_and_target_embeddings_match_the_cpu() {
    let Some(ctx) = gpu_or_skip() else { return };
    for (i, tie) in [false, true].into_iter().enumerate() {
        let cfg = ModelConfig {
            tie_embeddings: tie,
            ..base(Arch::EncoderDecoder)
        };
        let model = with_separate_embeddings(Model::init(cfg, tokenizer(), 200 + i as u64), 7);
        let (l, p) = compare(&ctx, &model, &batch_for(&model), &traced())
            .unwrap_or_else(|e| panic!("tied {tie}: {e}"));
        eprintln!(
            "separate embeddings, tied {tie}: worst |GPU − CPU| logits {l:e}, probabilities {p:e}"
        );
    }
}

#[test]
fn every_run_time_switch_matches_the_cpu() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut failures = vec![];
    let mut worst = (0.0f32, 0.0f32);
    for arch in [Arch::DecoderOnly, Arch::EncoderOnly, Arch::EncoderDecoder] {
        let mut cfg = base(arch);
        cfg.pos_encoding = PosEncoding::Relative;
        cfg.relative_max_distance = 2;
        let model = Model::init(cfg, tokenizer(), 7);
        let batch = batch_for(&model);
        let main_site = match arch {
            Arch::EncoderOnly => AttnSite::EncoderSelf,
            _ => AttnSite::DecoderSelf,
        };
        let mut cases: Vec<(&str, ForwardOptions, Batch)> = vec![
            (
                "causal on",
                ForwardOptions {
                    causal: Some(true),
                    ..traced()
                },
                batch.clone(),
            ),
            (
                "causal off",
                ForwardOptions {
                    causal: Some(false),
                    ..traced()
                },
                batch.clone(),
            ),
            (
                "padding mask off",
                ForwardOptions {
                    padding_mask: false,
                    ..traced()
                },
                batch.clone(),
            ),
            (
                "no √D",
                ForwardOptions {
                    scale: false,
                    ..traced()
                },
                batch.clone(),
            ),
            (
                "two heads ablated",
                ForwardOptions {
                    ablate: vec![
                        HeadRef {
                            site: main_site,
                            layer: 0,
                            head: 1,
                        },
                        HeadRef {
                            site: main_site,
                            layer: 1,
                            head: 0,
                        },
                    ],
                    ..traced()
                },
                batch.clone(),
            ),
            ("no trace", ForwardOptions::default(), batch.clone()),
        ];
        let one = Batch::single(&[1]).unwrap();
        let one = if arch == Arch::EncoderDecoder {
            one.with_source(vec![vec![5]]).unwrap()
        } else {
            one
        };
        cases.push(("T = 1", traced(), one));
        // A row made only of pads: with the padding mask every key of that row is masked.
        let pads = Batch::new(vec![vec![4, 5, 6], vec![0, 0, 0]]).unwrap();
        let pads = if arch == Arch::EncoderDecoder {
            pads.with_source(vec![vec![7, 8], vec![0, 0]]).unwrap()
        } else {
            pads
        };
        cases.push(("a row of pads (fully masked rows)", traced(), pads));
        if arch == Arch::EncoderDecoder {
            let mut o = traced();
            o.ablate = vec![HeadRef {
                site: AttnSite::Cross,
                layer: 1,
                head: 1,
            }];
            cases.push(("cross head ablated", o, batch.clone()));
        }
        for (name, opts, b) in cases {
            match compare(&ctx, &model, &b, &opts) {
                Ok((l, p)) => worst = (worst.0.max(l), worst.1.max(p)),
                Err(e) => failures.push(format!("{arch:?} {name}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "GPU ≠ CPU:\n{}", failures.join("\n"));
    eprintln!(
        "run-time switches: worst |GPU − CPU| logits {:e}, probabilities {:e}",
        worst.0, worst.1
    );
}

/// The explicit masks the mask editor offers: every rule, and painted cells on top of a
/// rule (one hidden past key, one shown future key, one hidden diagonal).
fn mask_kinds() -> Vec<(&'static str, MaskRule, Vec<CellEdit>)> {
    let painted = vec![
        CellEdit {
            query: 3,
            key: 1,
            hidden: true,
        },
        CellEdit {
            query: 1,
            key: 4,
            hidden: false,
        },
        CellEdit {
            query: 2,
            key: 2,
            hidden: true,
        },
    ];
    vec![
        ("none", MaskRule::None, vec![]),
        ("causal", MaskRule::Causal, vec![]),
        ("prefix-LM 3", MaskRule::PrefixLm { prefix: 3 }, vec![]),
        (
            "sliding window 2",
            MaskRule::SlidingWindow { window: 2 },
            vec![],
        ),
        ("causal + painted cells", MaskRule::Causal, painted.clone()),
        (
            "window 3 + painted cells",
            MaskRule::SlidingWindow { window: 3 },
            painted,
        ),
    ]
}

#[test]
fn every_mask_kind_on_every_self_attention_site_matches_the_cpu() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut failures = vec![];
    let mut worst: Vec<(&str, f32, f32)> = vec![];
    for arch in [Arch::DecoderOnly, Arch::EncoderOnly, Arch::EncoderDecoder] {
        let mut cfg = base(arch);
        cfg.pos_encoding = PosEncoding::Alibi;
        let model = Model::init(cfg, tokenizer(), 11);
        let batch = batch_for(&model);
        let sites: &[AttnSite] = match arch {
            Arch::DecoderOnly => &[AttnSite::DecoderSelf],
            Arch::EncoderOnly => &[AttnSite::EncoderSelf],
            Arch::EncoderDecoder => &[AttnSite::EncoderSelf, AttnSite::DecoderSelf],
        };
        for &site in sites {
            for (name, rule, cells) in mask_kinds() {
                let opts = ForwardOptions {
                    masks: vec![SiteMask {
                        site,
                        rule,
                        cells: cells.clone(),
                    }],
                    ..traced()
                };
                // The painted hidden cell (3, 1) has probability 0 on the CPU (and so,
                // by the comparison, on the GPU).
                let cpu = model.forward(&batch, &opts).unwrap();
                let a = cpu.attention.iter().find(|a| a.site == site).unwrap();
                let s = a.probs.shape[3];
                if !cells.is_empty() {
                    assert_eq!(a.probs.data[3 * s + 1], 0.0, "{name}: painted cell");
                }
                match compare(&ctx, &model, &batch, &opts) {
                    Ok((l, p)) => match worst.iter_mut().find(|w| w.0 == name) {
                        Some(w) => (w.1, w.2) = (w.1.max(l), w.2.max(p)),
                        None => worst.push((name, l, p)),
                    },
                    Err(e) => failures.push(format!("{arch:?} {site:?} {name}: {e}")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "GPU ≠ CPU:\n{}", failures.join("\n"));
    for (name, l, p) in worst {
        eprintln!("mask {name}: worst |GPU − CPU| logits {l:e}, probabilities {p:e}");
    }
}

#[test]
fn inputs_longer_than_max_len_match_the_cpu_with_sinusoidal_and_rope() {
    let Some(ctx) = gpu_or_skip() else { return };
    for pos in [PosEncoding::Sinusoidal, PosEncoding::Rope] {
        let mut cfg = base(Arch::DecoderOnly);
        cfg.pos_encoding = pos;
        cfg.max_len = 4;
        let model = Model::init(cfg, tokenizer(), 3);
        let batch = Batch::single(&[1, 4, 5, 6, 7, 8, 9]).unwrap(); // T = 7 > max_len
        compare(&ctx, &model, &batch, &traced()).unwrap_or_else(|e| panic!("{pos:?}: {e}"));
    }
}

#[test]
fn one_forward_pass_is_one_submission_and_one_readback() {
    if gpu_or_skip().is_none() {
        return;
    }
    // A private context: the shared one counts the passes of tests running in parallel.
    let ctx = pollster::block_on(GpuContext::request()).unwrap();
    let model = Model::init(base(Arch::EncoderDecoder), tokenizer(), 5);
    let batch = batch_for(&model);
    for opts in [ForwardOptions::default(), traced()] {
        let before = ctx.stats();
        let trace = gpu_forward(&ctx, &model, &batch, &opts).unwrap();
        let d = ctx.stats().since(&before);
        assert_eq!((d.submissions, d.readbacks), (1, 1), "{d:?}");
        assert!(
            d.dispatches > 20,
            "a 2 + 2 layer model runs dozens of kernels: {d:?}"
        );
        // The traced pass brought everything back in that one readback.
        if opts.trace_attention {
            assert_eq!(trace.attention.len(), 2 + 2 * 2);
            assert_eq!(trace.hidden.len(), 2);
        }
    }
}

/// Train mode on the GPU is the CPU's train mode: the same dropout masks (drawn from the
/// pass's seed in the same order: embedding, attention probabilities, FFN hidden units,
/// sublayer outputs, stack by stack), BatchNorm with the batch's statistics, and the same
/// running-statistic updates in the trace; on every config variant of every architecture.
#[test]
fn train_mode_forward_equals_the_cpu_with_its_dropout_masks_and_batch_statistics() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut failures = vec![];
    let (mut worst, mut worst_stats, mut with_stats) = ((0.0f32, 0.0f32), 0.0f32, 0);
    for arch in [Arch::DecoderOnly, Arch::EncoderOnly, Arch::EncoderDecoder] {
        for (i, (name, cfg)) in variants(arch).into_iter().enumerate() {
            // Dropout 0.2 everywhere; BatchNorm models also without dropout.
            let ps: &[f32] = if cfg.norm == Norm::BatchNorm {
                &[0.2, 0.0]
            } else {
                &[0.2]
            };
            for &p in ps {
                let mut cfg = cfg.clone();
                cfg.dropout = p;
                let model = Model::init(cfg, tokenizer(), 300 + i as u64);
                let batch = batch_for(&model);
                let opts = ForwardOptions {
                    mode: Mode::Train {
                        seed: 40 + i as u64,
                    },
                    ..traced()
                };
                let what = format!("{arch:?} {name} dropout {p}");
                let cpu = model.forward(&batch, &opts).unwrap();
                let gpu = match gpu_forward(&ctx, &model, &batch, &opts) {
                    Ok(g) => g,
                    Err(e) => {
                        failures.push(format!("{what}: GPU forward: {e}"));
                        continue;
                    }
                };
                if let Err(e) = traces_agree(&cpu, &gpu) {
                    failures.push(format!("{what}: {e}"));
                    continue;
                }
                let (l, pr) = worst_diffs(&cpu, &gpu);
                worst = (worst.0.max(l), worst.1.max(pr));
                let names = |t: &Trace| -> Vec<String> {
                    t.running_stats.iter().map(|u| u.name.clone()).collect()
                };
                if names(&cpu) != names(&gpu) {
                    failures.push(format!(
                        "{what}: running statistics {:?} vs {:?}",
                        names(&cpu),
                        names(&gpu)
                    ));
                    continue;
                }
                with_stats += !cpu.running_stats.is_empty() as usize;
                for (a, b) in cpu.running_stats.iter().zip(&gpu.running_stats) {
                    let scale = a.value.data.iter().fold(1.0f32, |m, v| m.max(v.abs()));
                    let d = a.value.max_abs_diff(&b.value) / scale;
                    worst_stats = worst_stats.max(d);
                    if d > 1e-5 {
                        failures.push(format!("{what}: {} differs by {d:e}", a.name));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "GPU ≠ CPU in train mode:\n{}",
        failures.join("\n")
    );
    assert!(with_stats > 0, "some variants use BatchNorm");
    eprintln!(
        "train mode: worst logit difference {:e}, probability {:e}, running statistic \
         (relative) {worst_stats:e}",
        worst.0, worst.1
    );
}

#[test]
fn train_mode_batch_norm_refuses_a_single_position_as_the_cpu_does() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut cfg = base(Arch::DecoderOnly);
    cfg.norm = Norm::BatchNorm;
    let model = Model::init(cfg, tokenizer(), 1);
    let batch = Batch::single(&[1]).unwrap();
    let opts = ForwardOptions {
        mode: Mode::Train { seed: 1 },
        ..ForwardOptions::default()
    };
    let Err(Error::Input(cpu)) = model.forward(&batch, &opts) else {
        panic!("the CPU refuses one position");
    };
    match gpu_forward(&ctx, &model, &batch, &opts) {
        Err(Error::Input(m)) => assert_eq!(m, cpu),
        other => panic!("expected Error::Input, got {other:?}"),
    }
}

#[test]
fn bad_input_is_an_input_error_before_anything_runs() {
    if gpu_or_skip().is_none() {
        return;
    }
    let ctx = pollster::block_on(GpuContext::request()).unwrap();
    let model = Model::init(base(Arch::DecoderOnly), tokenizer(), 1);
    let bad = Batch::single(&[1, 99]).unwrap(); // 99 is outside the vocabulary
    let got = gpu_forward(&ctx, &model, &bad, &ForwardOptions::default());
    match got {
        Err(Error::Input(m)) => assert!(m.contains("99"), "{m}"),
        other => panic!("expected Error::Input, got {other:?}"),
    }
    assert_eq!(ctx.stats().submissions, 0, "nothing was sent to the GPU");
}

#[test]
fn a_changed_model_is_uploaded_again() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut model = Model::init(base(Arch::DecoderOnly), tokenizer(), 11);
    let batch = batch_for(&model);
    let backend = Backend::Gpu(ctx.clone());
    let first =
        pollster::block_on(backend.forward(&model, &batch, &ForwardOptions::default())).unwrap();
    model.embed.data[5 * model.config.d_model] += 0.5; // token 5's embedding changes
    let cpu = model.forward(&batch, &ForwardOptions::default()).unwrap();
    let second =
        pollster::block_on(backend.forward(&model, &batch, &ForwardOptions::default())).unwrap();
    close(
        "logits after the change",
        &cpu.logits,
        &second.logits,
        TOL,
        Scale::Absolute,
    )
    .unwrap();
    assert_differ(
        "logits before and after the change",
        &first.logits.data,
        &second.logits.data,
        1e-3,
    );
}

#[test]
fn the_backend_switch_gives_the_same_numbers_on_cpu_and_gpu() {
    let Some(ctx) = gpu_or_skip() else { return };
    let model = Model::init(base(Arch::EncoderOnly), tokenizer(), 21);
    let batch = batch_for(&model);
    let cpu = pollster::block_on(Backend::Cpu.forward(&model, &batch, &traced())).unwrap();
    let gpu = pollster::block_on(Backend::Gpu(ctx).forward(&model, &batch, &traced())).unwrap();
    traces_agree(&cpu, &gpu).unwrap();
    assert_eq!(Backend::Cpu.name(), "cpu");
}

#[test]
fn a_lost_device_is_an_error_value_not_a_panic() {
    // A private device, destroyed on purpose.
    if gpu_or_skip().is_none() {
        return;
    }
    let ctx = pollster::block_on(GpuContext::request()).unwrap();
    let model = Model::init(base(Arch::DecoderOnly), tokenizer(), 2);
    let batch = batch_for(&model);
    gpu_forward(&ctx, &model, &batch, &ForwardOptions::default()).unwrap();
    ctx.device().destroy();
    match gpu_forward(&ctx, &model, &batch, &ForwardOptions::default()) {
        Err(Error::Gpu(m)) => assert!(!m.is_empty()),
        other => panic!("expected Error::Gpu after the device was destroyed, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// PyTorch fixtures (tests/fixtures/*.json, see tests/fixtures/README.md)
// ---------------------------------------------------------------------------------------

/// The body `pytorch_fixtures.rs` runs on the CPU, here on the GPU, which must also agree
/// with the CPU's trace of every case (logits, scores, probabilities, hidden states).
#[test]
fn every_pytorch_fixture_matches_on_the_gpu() {
    let Some(ctx) = gpu_or_skip() else { return };
    let mut vs_cpu = (0.0f32, 0.0f32);
    let vs_torch = every_forward_fixture_matches_pytorch(
        &Device::Gpu(ctx),
        Tolerance {
            logits: 2e-4,
            probs: 1e-4,
        },
        |_, model, batch, opts, gpu| {
            let cpu = model
                .forward(batch, opts)
                .map_err(|e| format!("CPU forward: {e}"))?;
            traces_agree(&cpu, gpu).map_err(|e| format!("GPU vs CPU: {e}"))?;
            let (l, p) = worst_diffs(&cpu, gpu);
            vs_cpu = (vs_cpu.0.max(l), vs_cpu.1.max(p));
            Ok(())
        },
    );
    eprintln!(
        "worst |GPU − CPU| logits {:e}, probabilities {:e}; \
         worst |GPU − PyTorch| logits {:e}, probabilities {:e}",
        vs_cpu.0, vs_cpu.1, vs_torch.0, vs_torch.1
    );
}

#[test]
fn a_model_too_large_for_the_device_is_refused_by_name_before_any_upload() {
    if gpu_or_skip().is_none() {
        return;
    }
    // The device is handed in: here one whose storage bindings stop at 4 KiB.
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 4096,
        ..adapter.limits()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: limits,
        ..Default::default()
    }))
    .unwrap();
    let ctx = GpuContext::new(device, queue, "a 4 KiB-binding device").unwrap();
    // gpt-nano's largest tensor: in_proj_weight (3·32, 32) = 3 072 floats = 12 KiB.
    let cfg = ModelConfig::preset("gpt-nano", tokenizer().vocab_size()).unwrap();
    let model = Model::init(cfg, tokenizer(), 1);
    match GpuModel::upload(&ctx, &model) {
        Err(Error::Gpu(m)) => {
            assert!(m.contains("in_proj_weight") && m.contains("4096"), "{m}")
        }
        Ok(_) => panic!("a 12 KiB tensor must not fit a 4 KiB binding"),
        Err(e) => panic!("expected Error::Gpu, got {e}"),
    }
    // A model that fits runs on the same device.
    let mut small = base(Arch::DecoderOnly);
    small.d_model = 8;
    small.d_ff = 8;
    small.max_len = 8;
    let model = Model::init(small, tokenizer(), 1);
    let batch = Batch::single(&[1, 4, 5]).unwrap();
    compare(&ctx, &model, &batch, &traced()).unwrap();
}
