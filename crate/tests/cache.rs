//! The KV cache computes what a full recompute computes: at every decoding step the new
//! position's logits and attention equal those of a forward pass over the
//! whole sequence, for decoder-only and encoder-decoder models, every position encoding,
//! score, norm, run-time switch and cacheable mask. Each property is one body run on the
//! CPU cache and on the GPU cache (`name::cpu`, `name::gpu`); on the GPU every step also
//! equals the CPU cache's step. Tolerances: 1e-5 on the CPU (the prefill's logits bit for
//! bit), 1e-4 on the GPU.

mod support;

use support::steps::{hidden_agree, steps_agree};
use support::{config, letters, max_diff, model, two_head_config};
use support::{input_error, padded_prompts, step_tokens, with_separate_embeddings, Device};
use tplay::config::{Activation, Arch, ModelConfig, Norm, PosEncoding, Score};
use tplay::model::forward::Batch;
use tplay::model::mask::{CellEdit, MaskRule, SiteMask};
use tplay::model::{AttnSite, ForwardOptions, HeadRef, Mode, Model, Trace};

/// (V) logits of sequence `seq` at position `t` of a full trace (B, T, V).
fn last_logits(tr: &Trace, seq: usize, t: usize) -> &[f32] {
    let (tt, v) = (tr.logits.shape[1], tr.logits.shape[2]);
    &tr.logits.data[(seq * tt + t) * v..(seq * tt + t + 1) * v]
}

/// Attention and the residual stream traced: every number a step reports is compared.
fn traced(opts: &ForwardOptions) -> ForwardOptions {
    ForwardOptions {
        trace_attention: true,
        trace_hidden: true,
        ..opts.clone()
    }
}

/// Prefill `prompts` on `dev`, then feed `steps[i]` (one token per sequence) and compare
/// every step with a full recompute of the sequences so far on `dev` (logits and the new
/// query's attention rows); on the GPU every step also with the CPU cache's step (logits,
/// scores, probabilities, hidden states). Returns the worst logit difference.
fn check_against_recompute(
    dev: &Device,
    m: &Model,
    prompts: Vec<Vec<u32>>,
    src: Option<Vec<Vec<u32>>>,
    steps: &[Vec<u32>],
    opts: &ForwardOptions,
) -> f32 {
    let tol = dev.pick(1e-5, 1e-4);
    let with_src = |b: Batch| match &src {
        Some(s) => b.with_source(s.clone()).unwrap(),
        None => b,
    };
    let opts = &traced(opts);
    let batch = with_src(Batch::new(prompts.clone()).unwrap());
    let (mut cache, prompt_trace) = dev.prefill(m, &batch, opts).unwrap();
    let full = dev.forward(m, &batch, opts).unwrap();
    let d = max_diff(&prompt_trace.logits.data, &full.logits.data);
    assert!(
        d <= dev.pick(0.0, tol),
        "prefill's trace is the forward pass: logits differ by {d}"
    );
    // The CPU cache beside the GPU's: the GPU's prefill and every GPU step must equal the
    // CPU's too.
    let mut reference = match dev {
        Device::Cpu => None,
        Device::Gpu(_) => {
            let (cpu, cpu_trace) = m.prefill(&batch, opts).unwrap();
            prompts_agree(&cpu_trace, &prompt_trace, tol);
            Some(cpu)
        }
    };
    let mut seqs = prompts;
    let mut worst = 0.0f32;
    for (k, step) in steps.iter().enumerate() {
        let before = cache.size_bytes();
        let out = cache.decode_step(m, step, opts).unwrap();
        assert!(
            cache.size_bytes() > before,
            "the cache grows with every step"
        );
        for (s, &t) in seqs.iter_mut().zip(step) {
            s.push(t);
        }
        let t = seqs[0].len() - 1;
        assert_eq!(out.position, t);
        assert_eq!(cache.len(), t + 1);
        assert_eq!(cache.tokens(), &seqs[..], "cached tokens");
        if let Some(cpu) = reference.as_mut() {
            let c = m.decode_step(cpu, step, opts).unwrap();
            worst = worst.max(steps_agree(
                &format!("step {k}, GPU vs CPU cache"),
                &c,
                &out,
                tol,
            ));
            assert_eq!(cache.size_bytes(), cpu.size_bytes(), "bytes held");
        }
        let recompute = dev
            .forward(m, &with_src(Batch::new(seqs.clone()).unwrap()), opts)
            .unwrap();
        let v = out.logits.shape[1];
        for seq in 0..seqs.len() {
            let d = max_diff(
                &out.logits.data[seq * v..(seq + 1) * v],
                last_logits(&recompute, seq, t),
            );
            assert!(
                d <= tol,
                "step at position {t}, sequence {seq}: logits differ by {d}"
            );
            worst = worst.max(d);
        }
        // The step's attention rows are the last query rows of the recompute's maps.
        assert_eq!(out.attention.len(), recompute.attention.len() - enc_maps(m));
        for step_att in &out.attention {
            let full_att = recompute
                .attention
                .iter()
                .find(|a| a.site == step_att.site && a.layer == step_att.layer)
                .expect("the recompute traces every attention sublayer");
            let [b, h, tq, s] = full_att.probs.shape[..] else {
                panic!("probs are (B, H, T, S)")
            };
            assert_eq!(step_att.probs.shape, vec![b, h, 1, s]);
            for bh in 0..b * h {
                let want = &full_att.probs.data[(bh * tq + tq - 1) * s..(bh * tq + tq) * s];
                let got = &step_att.probs.data[bh * s..(bh + 1) * s];
                let d = max_diff(got, want);
                assert!(
                    d <= tol,
                    "{:?} layer {} probabilities differ by {d}",
                    step_att.site,
                    step_att.layer
                );
            }
        }
    }
    worst
}

/// The GPU's prefill trace is the CPU's: logits, attention probabilities, hidden states.
fn prompts_agree(cpu: &Trace, gpu: &Trace, tol: f32) {
    let d = max_diff(&cpu.logits.data, &gpu.logits.data);
    assert!(d <= tol, "prefill logits differ by {d}");
    assert_eq!(cpu.attention.len(), gpu.attention.len(), "prefill traces");
    for (c, g) in cpu.attention.iter().zip(&gpu.attention) {
        let d = max_diff(&c.probs.data, &g.probs.data);
        assert!(d <= tol, "prefill attention differs by {d}");
    }
    hidden_agree("prefill", &cpu.hidden, &gpu.hidden, tol);
}

/// Number of encoder self-attention maps in a full trace (the steps do not repeat them).
fn enc_maps(m: &Model) -> usize {
    match m.config.arch {
        Arch::EncoderDecoder => m.config.n_encoder_layers,
        _ => 0,
    }
}

/// [`check_against_recompute`] on [`padded_prompts`] and `n` steps of [`step_tokens`].
fn check_padded(dev: &Device, m: &Model, n: usize, opts: &ForwardOptions) -> f32 {
    let (prompts, src) = padded_prompts(m);
    let steps: Vec<Vec<u32>> = (0..n).map(|k| step_tokens(k, 2)).collect();
    check_against_recompute(dev, m, prompts, src, &steps, opts)
}

/// One sequence of `prompt` (and `src`) fed `steps` single tokens, on a model of `arch`
/// for every position encoding and each of `norms` (weights from `seed` + the encoding's
/// index); returns the worst logit difference from the recompute.
fn every_position_encoding(
    dev: &Device,
    arch: Arch,
    norms: &[Norm],
    seed: u64,
    prompt: Vec<u32>,
    src: Option<Vec<u32>>,
    steps: &[u32],
) -> f32 {
    let steps: Vec<Vec<u32>> = steps.iter().map(|&t| vec![t]).collect();
    let mut worst = 0.0f32;
    for (i, pos) in PosEncoding::ALL.into_iter().enumerate() {
        for &norm in norms {
            let m = model(config(arch, pos, norm, Score::ScaledDot), seed + i as u64);
            let d = check_against_recompute(
                dev,
                &m,
                vec![prompt.clone()],
                src.clone().map(|s| vec![s]),
                &steps,
                &ForwardOptions::default(),
            );
            eprintln!("{arch:?} {pos:?} {norm:?}: worst |diff| {d:.2e}");
            worst = worst.max(d);
        }
    }
    worst
}

backend_tests!(
    cached_decoding_equals_full_recompute_for_every_position_encoding_decoder_only,
    |dev| {
        let norms = [Norm::PreLn, Norm::PostLn, Norm::BatchNorm];
        let steps = [7, 4, 12, 5, 9, 13, 6];
        let worst = every_position_encoding(
            dev,
            Arch::DecoderOnly,
            &norms,
            10,
            vec![1, 5, 8],
            None,
            &steps,
        );
        eprintln!("decoder-only worst |diff| {worst:.2e}");
    }
);

backend_tests!(
    cached_decoding_equals_full_recompute_for_every_position_encoding_encoder_decoder,
    |dev| {
        let norms = [Norm::PreLn, Norm::PostLn];
        let src = Some(vec![9, 4, 7, 12, 5]);
        let steps = [6, 11, 4, 8, 10];
        let worst =
            every_position_encoding(dev, Arch::EncoderDecoder, &norms, 20, vec![1], src, &steps);
        eprintln!("encoder-decoder worst |diff| {worst:.2e}");
    }
);

// Two heads, a pad inside the second prompt, and 4 + 6 positions: past the relative
// clipping distance of 3.
backend_tests!(
    cached_decoding_equals_full_recompute_with_a_pad_inside_the_prompt_past_the_relative_clipping,
    |dev| {
        let mut worst = 0.0f32;
        for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
            for pos in PosEncoding::ALL {
                let m = Model::init(two_head_config(arch, pos), letters(12), 7);
                worst = worst.max(check_padded(dev, &m, 6, &ForwardOptions::default()));
            }
        }
        eprintln!("largest logit difference (cache vs recompute): {worst:e}");
    }
);

backend_tests!(
    cached_decoding_equals_full_recompute_with_separate_source_and_target_embeddings,
    |dev| {
        for pos in [
            PosEncoding::Sinusoidal,
            PosEncoding::Learned,
            PosEncoding::Rope,
        ] {
            let cfg = config(Arch::EncoderDecoder, pos, Norm::PreLn, Score::ScaledDot);
            let m = with_separate_embeddings(model(cfg, 6), 60);
            let src = Some(vec![vec![9, 4, 7, 5], vec![5, 6, 0, 0]]);
            let steps = vec![vec![4, 7], vec![11, 8], vec![6, 12]];
            let d = check_against_recompute(
                dev,
                &m,
                vec![vec![1, 5, 8], vec![1, 9, 0]],
                src,
                &steps,
                &ForwardOptions::default(),
            );
            eprintln!("separate embeddings {pos:?}: worst |diff| {d:.2e}");
            let m = Model::init(two_head_config(Arch::EncoderDecoder, pos), letters(12), 8);
            let m = with_separate_embeddings(m, 80);
            check_padded(dev, &m, 6, &ForwardOptions::default());
        }
    }
);

backend_tests!(
    cached_decoding_equals_full_recompute_for_every_score_and_run_time_switch,
    |dev| {
        for score in [Score::ScaledDot, Score::Dot, Score::Additive] {
            for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
                let m = model(config(arch, PosEncoding::Rope, Norm::PreLn, score), 3);
                let src = (arch == Arch::EncoderDecoder)
                    .then(|| vec![vec![9, 4, 7, 0], vec![5, 6, 0, 0]]);
                let opts = ForwardOptions {
                    scale: false,
                    ablate: vec![HeadRef {
                        site: AttnSite::DecoderSelf,
                        layer: 1,
                        head: 2,
                    }],
                    ..ForwardOptions::default()
                };
                // Two sequences, the second prompt padded: pads stay masked keys in the cache.
                let steps = vec![vec![4, 7], vec![11, 0], vec![6, 12]];
                check_against_recompute(
                    dev,
                    &m,
                    vec![vec![1, 5, 8], vec![1, 9, 0]],
                    src,
                    &steps,
                    &opts,
                );
            }
        }
    }
);

backend_tests!(
    cached_decoding_equals_full_recompute_for_every_score_norm_and_switch_combination,
    |dev| {
        let ablate_one = vec![HeadRef {
            site: AttnSite::DecoderSelf,
            layer: 1,
            head: 0,
        }];
        let cases = [
            (Score::Additive, Norm::PostLn, false, true, vec![]),
            (Score::Dot, Norm::BatchNorm, true, false, vec![]),
            (Score::ScaledDot, Norm::None, true, true, ablate_one.clone()),
            (Score::ScaledDot, Norm::PreLn, false, true, vec![]),
        ];
        let mut worst = 0.0f32;
        for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
            for (score, norm, scale, padding_mask, ablate) in cases.clone() {
                let mut ablate = ablate;
                if arch == Arch::EncoderDecoder && !ablate.is_empty() {
                    ablate.push(HeadRef {
                        site: AttnSite::Cross,
                        layer: 0,
                        head: 1,
                    });
                }
                let cfg = ModelConfig {
                    score,
                    norm,
                    activation: Activation::Gelu,
                    final_norm: norm != Norm::BatchNorm,
                    ..two_head_config(arch, PosEncoding::Rope)
                };
                let m = Model::init(cfg, letters(12), 9);
                let opts = ForwardOptions {
                    scale,
                    padding_mask,
                    ablate,
                    ..ForwardOptions::default()
                };
                worst = worst.max(check_padded(dev, &m, 4, &opts));
            }
        }
        eprintln!("largest logit difference over the switches: {worst:e}");
    }
);

backend_tests!(
    cached_decoding_equals_full_recompute_under_every_cacheable_mask,
    |dev| {
        // Painted cells that hide keys (and one that shows a prompt key to an earlier
        // prompt query): known at prefill, so the cache can hold them.
        let painted = vec![
            CellEdit {
                query: 4,
                key: 1,
                hidden: true,
            },
            CellEdit {
                query: 0,
                key: 2,
                hidden: false,
            },
            CellEdit {
                query: 5,
                key: 5,
                hidden: true,
            },
        ];
        let other_painted = vec![
            CellEdit {
                query: 5,
                key: 2,
                hidden: true,
            },
            CellEdit {
                query: 1,
                key: 2,
                hidden: false,
            },
        ];
        let masks = [
            (MaskRule::Causal, vec![]),
            (MaskRule::SlidingWindow { window: 2 }, vec![]),
            (MaskRule::PrefixLm { prefix: 3 }, vec![]),
            (MaskRule::PrefixLm { prefix: 2 }, painted.clone()),
            (MaskRule::SlidingWindow { window: 3 }, painted),
            (MaskRule::Causal, other_painted.clone()),
            (MaskRule::SlidingWindow { window: 3 }, other_painted),
        ];
        let with = |rule: &MaskRule, cells: &Vec<CellEdit>| ForwardOptions {
            masks: vec![SiteMask {
                site: AttnSite::DecoderSelf,
                rule: *rule,
                cells: cells.clone(),
            }],
            ..ForwardOptions::default()
        };
        for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
            for pos in [PosEncoding::Rope, PosEncoding::Alibi, PosEncoding::Relative] {
                let m = model(config(arch, pos, Norm::PostLn, Score::ScaledDot), 5);
                let src = (arch == Arch::EncoderDecoder)
                    .then(|| vec![vec![9, 4, 7, 0], vec![5, 6, 0, 0]]);
                for (rule, cells) in &masks {
                    let steps = vec![vec![4, 7], vec![11, 0], vec![6, 12], vec![5, 5]];
                    let worst = check_against_recompute(
                        dev,
                        &m,
                        vec![vec![1, 5, 8], vec![1, 9, 0]],
                        src.clone(),
                        &steps,
                        &with(rule, cells),
                    );
                    eprintln!(
                        "{arch:?} {pos:?} {rule:?} + {} cells: worst {worst:e}",
                        cells.len()
                    );
                }
            }
            // Two heads and a pad inside the prompt.
            let m = Model::init(two_head_config(arch, PosEncoding::Alibi), letters(12), 9);
            for (rule, cells) in &masks[1..] {
                check_padded(dev, &m, 5, &with(rule, cells));
            }
        }
    }
);

#[test]
fn cached_greedy_generation_picks_the_same_tokens_as_recomputing() {
    let m = model(
        config(
            Arch::DecoderOnly,
            PosEncoding::Alibi,
            Norm::PreLn,
            Score::ScaledDot,
        ),
        5,
    );
    let opts = ForwardOptions::default();
    let argmax = |x: &[f32]| {
        x.iter()
            .enumerate()
            .fold((0, f32::NEG_INFINITY), |(bi, bv), (i, &v)| {
                if v > bv {
                    (i, v)
                } else {
                    (bi, bv)
                }
            })
            .0 as u32
    };
    let mut slow = vec![1u32, 6];
    for _ in 0..8 {
        let tr = m.forward(&Batch::single(&slow).unwrap(), &opts).unwrap();
        slow.push(argmax(last_logits(&tr, 0, slow.len() - 1)));
    }
    let (mut cache, tr) = m.prefill(&Batch::single(&[1, 6]).unwrap(), &opts).unwrap();
    let mut fast = vec![1u32, 6];
    let mut next = argmax(last_logits(&tr, 0, 1));
    for _ in 0..8 {
        fast.push(next);
        if fast.len() == slow.len() {
            break;
        }
        next = argmax(
            m.decode_step(&mut cache, &[next], &opts)
                .unwrap()
                .logits
                .data
                .as_slice(),
        );
    }
    assert_eq!(fast, slow);
}

#[test]
fn learned_positions_refuse_to_decode_past_max_len() {
    let m = model(
        config(
            Arch::DecoderOnly,
            PosEncoding::Learned,
            Norm::PreLn,
            Score::ScaledDot,
        ),
        1,
    );
    let opts = ForwardOptions::default();
    let (mut cache, _) = m
        .prefill(
            &Batch::single(&[1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]).unwrap(),
            &opts,
        )
        .unwrap();
    m.decode_step(&mut cache, &[4], &opts).unwrap(); // position 11, the last row of the table
    let e = input_error(m.decode_step(&mut cache, &[4], &opts));
    assert_eq!(
        e,
        "learned positions stop at max_len = 12; the cache already holds 12 positions"
    );
    assert_eq!(cache.len, 12, "a refused step leaves the cache as it was");
    // Sinusoidal positions run on.
    let m = model(
        config(
            Arch::DecoderOnly,
            PosEncoding::Sinusoidal,
            Norm::PreLn,
            Score::ScaledDot,
        ),
        1,
    );
    let (mut cache, _) = m.prefill(&Batch::single(&[1; 12]).unwrap(), &opts).unwrap();
    assert!(m.decode_step(&mut cache, &[4], &opts).is_ok());
}

#[test]
fn the_cache_refuses_a_mask_under_which_a_position_sees_a_later_token() {
    let dec = model(
        config(
            Arch::DecoderOnly,
            PosEncoding::Rope,
            Norm::PreLn,
            Score::ScaledDot,
        ),
        1,
    );
    let batch = Batch::single(&[1, 4, 5]).unwrap();
    let with = |rule, cells: Vec<CellEdit>| ForwardOptions {
        masks: vec![SiteMask {
            site: AttnSite::DecoderSelf,
            rule,
            cells,
        }],
        ..ForwardOptions::default()
    };
    let e = input_error(dec.prefill(&batch, &with(MaskRule::None, vec![])));
    assert!(e.contains("bidirectional"), "{e}");
    let e = input_error(dec.prefill(&batch, &with(MaskRule::PrefixLm { prefix: 4 }, vec![])));
    assert!(e.contains("longer than the prompt"), "{e}");
    let future = CellEdit {
        query: 3,
        key: 5,
        hidden: false,
    };
    let e = input_error(dec.prefill(&batch, &with(MaskRule::Causal, vec![future])));
    assert!(e.contains("shows key 5 to query 3"), "{e}");
}

#[test]
fn the_cache_refuses_what_it_cannot_reproduce() {
    let dec = model(
        config(
            Arch::DecoderOnly,
            PosEncoding::Rope,
            Norm::PreLn,
            Score::ScaledDot,
        ),
        1,
    );
    let batch = Batch::single(&[1, 4]).unwrap();
    let train = ForwardOptions {
        mode: Mode::Train { seed: 1 },
        ..ForwardOptions::default()
    };
    assert!(input_error(dec.prefill(&batch, &train)).contains("eval mode"));
    let bidirectional = ForwardOptions {
        causal: Some(false),
        ..ForwardOptions::default()
    };
    assert!(input_error(dec.prefill(&batch, &bidirectional)).contains("causal mask"));
    let enc = model(
        config(
            Arch::EncoderOnly,
            PosEncoding::Rope,
            Norm::PreLn,
            Score::ScaledDot,
        ),
        1,
    );
    assert!(input_error(enc.prefill(&batch, &ForwardOptions::default())).contains("no decoder"));

    let opts = ForwardOptions::default();
    let (mut cache, _) = dec.prefill(&batch, &opts).unwrap();
    let e = input_error(dec.decode_step(&mut cache, &[4, 5], &opts));
    assert!(
        e.contains("one token per sequence") && e.contains("got 2 tokens"),
        "{e}"
    );
    let e = input_error(dec.decode_step(&mut cache, &[99], &opts));
    assert!(e.contains("token id 99"), "{e}");
    let unscaled = ForwardOptions {
        scale: false,
        ..ForwardOptions::default()
    };
    let e = input_error(dec.decode_step(&mut cache, &[4], &unscaled));
    assert!(e.contains("prefill again"), "{e}");
    assert_eq!(cache.len, 2, "refused steps leave the cache as it was");
    // Trace switches may change between steps.
    let traced = ForwardOptions {
        trace_hidden: true,
        ..ForwardOptions::default()
    };
    let out = dec.decode_step(&mut cache, &[4], &traced).unwrap();
    assert_eq!(out.hidden[0].states.len(), 3);
    assert_eq!(out.hidden[0].states[0].shape, vec![1, 1, 16]);
}

#[test]
fn cached_keys_per_head_grow_by_one_row_per_step() {
    let m = model(
        config(
            Arch::EncoderDecoder,
            PosEncoding::Rope,
            Norm::PostLn,
            Score::ScaledDot,
        ),
        2,
    );
    let opts = ForwardOptions::default();
    let batch = Batch::single(&[1, 4])
        .unwrap()
        .with_source(vec![vec![5, 6, 7]])
        .unwrap();
    let (mut cache, _) = m.prefill(&batch, &opts).unwrap();
    assert_eq!(cache.head_keys(1, 0, 3).len(), 2 * 4);
    assert_eq!(cache.layers[0].cross_k[0].len(), 3 * 16);
    let before = cache.layers[0].cross_k.clone();
    m.decode_step(&mut cache, &[8], &opts).unwrap();
    assert_eq!(cache.head_keys(1, 0, 3).len(), 3 * 4);
    assert_eq!(cache.head_values(0, 0, 0).len(), 3 * 4);
    assert_eq!(
        cache.layers[0].cross_k, before,
        "the encoder memory is computed once"
    );
    assert_eq!(cache.size_bytes(), 2 * (2 * 3 * 16 + 2 * 3 * 16) * 4);
}
