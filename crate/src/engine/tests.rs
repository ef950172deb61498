//! The engine answers from the core: its numbers, its modes, its generation.

use super::generate::TOP_CANDIDATES;
use super::*;
use crate::backend::Backend;
use crate::config::Arch;
use crate::config::ModelConfig;
use crate::explain::blocks::{SequenceInput, TrainMode};
use crate::generate::sampling::softmax;
use crate::generate::{GenerateOptions, Generator};
use crate::model::forward::Batch;
use crate::model::HeadParams;
use crate::model::Model;
use crate::protocol::{
    BackendName, BlockDiffRequest, BlockProbeRequest, ForwardRequest, GenerateStartRequest,
    GenerateStepsRequest, NoamRequest, SamplingRequest, StrategyName, Switches,
};
use crate::Tokenizer;
use pollster::block_on;

fn engine(arch: Arch) -> Engine {
    let tok = Tokenizer::char_level("abcdefgh");
    let preset = if arch == Arch::DecoderOnly {
        "gpt-pico"
    } else {
        "seq2seq-nano"
    };
    let cfg = ModelConfig::preset(preset, tok.vocab_size()).unwrap();
    let mut m = Model::init(cfg, tok, 5);
    let eos = m.tokenizer.spec.eos as usize;
    if let HeadParams::Lm {
        bias: Some(bias), ..
    } = &mut m.head
    {
        bias.data[eos] = -30.0; // runs use their whole budget
    }
    let mut e = Engine::new();
    let info = e.load(&crate::checkpoint::save(&m).unwrap()).unwrap();
    assert_eq!(info.arch, arch);
    e
}

fn sampling(strategy: StrategyName) -> SamplingRequest {
    SamplingRequest {
        strategy,
        temperature: 0.8,
        top_k: 0,
        top_p: 0.9,
        beam_width: 3,
        seed: 12,
    }
}

fn switches() -> Switches {
    Switches {
        causal: Some(true),
        padding_mask: true,
        scale: true,
        ablate: vec![],
        mask: None,
    }
}

#[test]
fn forward_results_carry_the_cores_numbers() {
    let mut e = engine(Arch::DecoderOnly);
    let req = ForwardRequest {
        batch: vec![vec![1, 4, 5, 6], vec![1, 7]],
        src: None,
        switches: switches(),
        sampling: sampling(StrategyName::Sample),
        qkv: Some(true),
        ffn: None,
        train: None,
    };
    let r = block_on(e.forward(&req)).unwrap();
    let m = e.model().unwrap().clone();
    let batch = Batch::padded(req.batch.clone(), m.tokenizer.spec.pad).unwrap();
    let trace =
        block_on(Backend::Cpu.forward(&m, &batch, &forward_options(&req.switches, &m).unwrap()))
            .unwrap();
    let v = m.config.vocab_size;
    // The model's distribution after the last real token of row 0, over the whole vocabulary.
    assert_eq!(r.model_probs.0, softmax(&trace.logits.data[3 * v..4 * v]));
    let total: f32 = r.next_probs.0.iter().sum();
    assert!((total - 1.0).abs() < 1e-5, "{total}");
    // FLOPs counted by hand for gpt-pico (C = 16, H = 2, F = 32, one layer) over the
    // padded batch (B = 2, T = 4) and V = 12 (four specials and eight letters):
    //   per row:   4·C² (Q, K, V, output) + 2·C·F (FFN)       = 1024 + 1024 = 2048
    //   per pair:  C (score over H heads of D) + C (sum of v) = 32, and causal T = 4
    //              has 1 + 2 + 3 + 4 = 10 (query, key) pairs  = 320
    //   LM head:   C·V per row                                 = 16·12 = 192
    //   sequence:  4·2048 + 320 + 4·192                        = 9280 multiply-adds
    //   batch:     2 · 9280 = 18560 multiply-adds = 37120 FLOPs
    assert_eq!(
        (m.config.d_model, m.config.n_heads, m.config.d_ff),
        (16, 2, 32)
    );
    assert_eq!((m.config.decoder_layers(), v), (1, 12));
    assert_eq!(r.flops, 37120.0);
    assert_eq!(r.tokens, vec![vec![1, 4, 5, 6], vec![1, 7, 0, 0]]);
    let a = &r.attention[0];
    assert_eq!(a.probs.shape, vec![2, m.config.n_heads, 4, 4]); // (B, H, T, S)
    assert!(a.q.is_some() && a.qk_gap.is_some(), "q, k, v asked for");
    assert_eq!(r.backend, BackendName::Cpu);
    assert!(r.fallback.is_none());
}

#[test]
fn train_mode_forward_runs_on_the_cpu_and_repeats_differ_only_with_a_new_seed() {
    let mut e = engine(Arch::DecoderOnly);
    let req = |train: Option<TrainMode>| ForwardRequest {
        batch: vec![vec![1, 4, 5, 6, 7]],
        src: None,
        switches: switches(),
        sampling: sampling(StrategyName::Greedy),
        qkv: None,
        ffn: None,
        train,
    };
    let t = |seed| {
        Some(TrainMode {
            seed,
            dropout: Some(0.3),
        })
    };
    let a = block_on(e.forward(&req(t(1)))).unwrap();
    let a2 = block_on(e.forward(&req(t(1)))).unwrap();
    let b = block_on(e.forward(&req(t(2)))).unwrap();
    let ev = block_on(e.forward(&req(None))).unwrap();
    let ev2 = block_on(e.forward(&req(None))).unwrap();
    assert_eq!(a.logits, a2.logits, "one seed, one set of masks");
    assert_ne!(a.logits, b.logits);
    assert_ne!(a.logits, ev.logits);
    assert_eq!(ev.logits, ev2.logits);
    assert!(a.train_note.as_deref().unwrap().contains("p = 0.3"));
    assert!(ev.train_note.is_none());
    let bad = req(Some(TrainMode {
        seed: 1,
        dropout: Some(1.5),
    }));
    assert!(matches!(block_on(e.forward(&bad)), Err(Error::Input(_))));
}

#[test]
fn block_requests_check_their_input_and_answer_from_the_core() {
    let e = engine(Arch::DecoderOnly);
    let p = e
        .block_probe(&BlockProbeRequest {
            batch: vec![vec![1, 4, 5], vec![1, 6]],
            src: None,
            switches: switches(),
            train: None,
        })
        .unwrap();
    let c = e.model().unwrap().config.d_model;
    assert_eq!(p.stacks[0].ffn[0].input.shape, vec![2, 3, c]);
    let seq = |tokens: Vec<u32>| SequenceInput { tokens, src: None };
    let d = e
        .block_diff(&BlockDiffRequest {
            before: seq(vec![1, 4, 5, 6]),
            after: seq(vec![1, 4, 5, 7]),
            switches: switches(),
            train: None,
        })
        .unwrap();
    assert_eq!(d.edited, vec![3]);
    let bad = e.block_diff(&BlockDiffRequest {
        before: seq(vec![1, 4, 500]),
        after: seq(vec![1]),
        switches: switches(),
        train: None,
    });
    assert!(matches!(bad, Err(Error::Input(_))), "{bad:?}");
}

#[test]
fn the_schedule_peaks_where_the_closed_form_says() {
    let e = engine(Arch::DecoderOnly);
    let s = e
        .noam(&NoamRequest {
            warmup: 300,
            last_step: 2000,
            points: 50,
            cooldown: None,
        })
        .unwrap();
    assert_eq!((s.peak_step, s.steps.len(), s.cooldown_steps), (300, 50, 0));
    let cooled = e
        .noam(&NoamRequest {
            cooldown: Some(0.25),
            warmup: 300,
            last_step: 2000,
            points: 50,
        })
        .unwrap();
    assert_eq!((cooled.peak_step, cooled.cooldown_steps), (300, 500));
    // The last step keeps 1/500 of the rate.
    assert_eq!(cooled.lr.last(), Some(&(s.lr[49] * (1.0 / 500.0))));
    for bad in [
        NoamRequest {
            warmup: 0,
            last_step: 2000,
            points: 50,
            cooldown: None,
        },
        NoamRequest {
            warmup: 300,
            last_step: 2000,
            points: 50,
            cooldown: Some(1.5),
        },
    ] {
        assert!(matches!(e.noam(&bad), Err(Error::Input(_))));
    }
}

#[test]
fn generation_steps_through_the_engine_like_the_generator() {
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        let mut e = engine(arch);
        let src = (arch == Arch::EncoderDecoder).then(|| vec![4, 5, 6]);
        let req = GenerateStartRequest {
            prompt: vec![1],
            src: src.clone(),
            switches: switches(),
            sampling: sampling(StrategyName::Sample),
            max_new_tokens: 5,
            trace: Some(false),
            use_cache: None,
        };
        e.generate_start(&req).unwrap();
        let mut last = None;
        for _ in 0..5 {
            last = Some(block_on(e.generate_step()).unwrap());
        }
        let last = last.unwrap();
        assert!(last.done);
        let m = e.model().unwrap().clone();
        let opts = GenerateOptions {
            strategy: req.sampling.strategy().unwrap(),
            seed: 12,
            max_new_tokens: 5,
            top_candidates: TOP_CANDIDATES,
            trace_attention: false,
            forward: ForwardOptions {
                trace_attention: false,
                trace_hidden: false,
                ..forward_options(&req.switches, &m).unwrap()
            },
            ..GenerateOptions::default()
        };
        let mut g = Generator::new(m, Backend::Cpu, vec![1], src, opts).unwrap();
        assert_eq!(last.generated, block_on(g.run_to_end()).unwrap().tokens);
        assert!(matches!(block_on(e.generate_step()), Err(Error::Input(_))));
    }
}

#[test]
fn an_untraced_step_answers_compactly_with_the_full_steps_numbers() {
    for (arch, strategy) in [
        (Arch::DecoderOnly, StrategyName::Sample),
        (Arch::DecoderOnly, StrategyName::Beam),
        (Arch::EncoderDecoder, StrategyName::Greedy),
    ] {
        let src = (arch == Arch::EncoderDecoder).then(|| vec![4, 5, 6]);
        let req = |trace| GenerateStartRequest {
            prompt: vec![1, 4],
            src: src.clone(),
            switches: switches(),
            sampling: sampling(strategy),
            max_new_tokens: 4,
            trace: Some(trace),
            use_cache: None,
        };
        let what = format!("{arch:?} {strategy:?}");
        // The full record of an untraced generation, step by step, beside the reply.
        let (mut full, mut reply) = (engine(arch), engine(arch));
        full.generate_start(&req(false)).unwrap();
        reply.generate_start(&req(false)).unwrap();
        for _ in 0..4 {
            let want = block_on(full.generate_step()).unwrap();
            let StepReply::Compact(got) = block_on(reply.generate_step_reply()).unwrap() else {
                panic!("{what}: an untraced generation answers compactly");
            };
            let (s, w) = (&got.step, &want.step);
            assert_eq!(
                (s.index, s.fed, s.token),
                (w.index, w.fed, w.token),
                "{what}"
            );
            assert_eq!(s.text, w.text, "{what}");
            assert_eq!(s.logits.0, w.logits, "{what}");
            let ids: Vec<u32> = w.candidates.iter().map(|c| c.id).collect();
            let probs: Vec<f32> = w.candidates.iter().map(|c| c.prob).collect();
            let drawn: Vec<f32> = w.candidates.iter().map(|c| c.sample_prob).collect();
            assert_eq!(s.candidate_ids.0, ids, "{what}");
            assert_eq!(s.candidate_probs.0, probs, "{what}");
            assert_eq!(s.candidate_sample_probs.0, drawn, "{what}");
            assert!(!ids.is_empty(), "{what}");
            assert_eq!(
                (s.cache_len, s.multiply_adds, s.flops),
                (w.cache_len, w.multiply_adds, w.flops),
                "{what}"
            );
            assert_eq!((s.stop, &s.beam), (w.stop, &w.beam), "{what}");
            assert_eq!(got.generated.0, want.generated, "{what}");
            assert_eq!((got.done, got.backend), (want.done, want.backend), "{what}");
        }
        // A traced generation keeps the full record, attention included.
        let mut traced = engine(arch);
        traced.generate_start(&req(true)).unwrap();
        match block_on(traced.generate_step_reply()).unwrap() {
            StepReply::Full(s) => assert!(!s.step.attention.is_empty(), "{what}"),
            StepReply::Compact(_) => panic!("{what}: a traced generation answers in full"),
        }
    }
    let mut idle = engine(Arch::DecoderOnly);
    assert!(matches!(
        block_on(idle.generate_step_reply()),
        Err(Error::Input(_))
    ));
}

#[test]
fn several_steps_per_call_give_the_same_steps_as_one_step_per_call() {
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        for strategy in [
            StrategyName::Greedy,
            StrategyName::Sample,
            StrategyName::Beam,
        ] {
            for use_cache in [true, false] {
                let src = (arch == Arch::EncoderDecoder).then(|| vec![4, 5, 6]);
                let req = GenerateStartRequest {
                    prompt: vec![1, 4],
                    src,
                    switches: switches(),
                    sampling: sampling(strategy),
                    max_new_tokens: 7,
                    trace: Some(false),
                    use_cache: Some(use_cache),
                };
                let mut one = engine(arch);
                one.generate_start(&req).unwrap();
                let mut singles = vec![];
                loop {
                    let s = block_on(one.generate_step()).unwrap();
                    let done = s.done;
                    singles.push(s);
                    if done {
                        break;
                    }
                }
                let mut many = engine(arch);
                many.generate_start(&req).unwrap();
                // Batches of 3 that do not divide the 7 steps: the last batch stops at the end.
                let mut batches = vec![];
                loop {
                    let b = block_on(many.generate_steps(&GenerateStepsRequest { n: 3 })).unwrap();
                    let done = b.done;
                    batches.push(b);
                    if done {
                        break;
                    }
                }
                let what = format!("{arch:?} {strategy:?} cache {use_cache}");
                assert_eq!(
                    batches.iter().map(|b| b.steps).collect::<Vec<_>>(),
                    [3, 3, 1],
                    "{what}"
                );
                let index: Vec<u32> = batches.iter().flat_map(|b| b.index.0.clone()).collect();
                let want: Vec<u32> = singles.iter().map(|s| s.step.index as u32).collect();
                assert_eq!(index, want, "{what}");
                let tokens: Vec<u32> = batches.iter().flat_map(|b| b.tokens.0.clone()).collect();
                let want: Vec<u32> = singles.iter().filter_map(|s| s.step.token).collect();
                assert_eq!(tokens, want, "{what}");
                let fed: Vec<u32> = batches.iter().flat_map(|b| b.fed.0.clone()).collect();
                let want: Vec<u32> = singles.iter().map(|s| s.step.fed as u32).collect();
                assert_eq!(fed, want, "{what}");
                assert!(batches.iter().all(|b| b.gpu.is_none()), "{what}");
                let last = batches.last().unwrap();
                let single = singles.last().unwrap();
                assert_eq!(last.generated.0, single.generated, "{what}");
                assert_eq!(last.last.logits, single.step.logits, "{what}");
                assert_eq!(last.last.candidates, single.step.candidates, "{what}");
                assert_eq!(last.last.stop, single.step.stop, "{what}");
                let macs: u64 = singles.iter().map(|s| s.step.multiply_adds).sum();
                assert_eq!(
                    batches.iter().map(|b| b.multiply_adds).sum::<u64>(),
                    macs,
                    "{what}"
                );
                // Past the end, and a bad count: clear refusals, nothing lost.
                let past = block_on(many.generate_steps(&GenerateStepsRequest { n: 2 }));
                assert!(matches!(past, Err(Error::Input(_))), "{what}");
                let zero = block_on(many.generate_steps(&GenerateStepsRequest { n: 0 }));
                assert!(matches!(zero, Err(Error::Input(_))), "{what}");
            }
        }
    }
    let mut idle = engine(Arch::DecoderOnly);
    let none = block_on(idle.generate_steps(&GenerateStepsRequest { n: 4 }));
    assert!(matches!(none, Err(Error::Input(_))));
}
