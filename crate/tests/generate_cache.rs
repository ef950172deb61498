//! Generation with the KV cache computes what generation without it computes: at every
//! step the logits and the new token's attention agree (1e-5 on the CPU, 1e-4 on the
//! GPU), for every architecture with a decoder and every position encoding, with sampling,
//! beam search and cacheable masks. Each property is one body run on the CPU and on the
//! GPU (`name::cpu`, `name::gpu`).

mod support;

use pollster::block_on;
use support::generation::{run_to_end, runs_agree};
use support::{eos_unlikely, letters, nano_preset};
use tplay::backend::Backend;
use tplay::config::{Arch, ModelConfig, Norm, PosEncoding, Score};
use tplay::generate::{
    GenerateOptions, Generator, LengthPenalty, Sampling, Step, StopReason, Strategy,
};
use tplay::model::mask::{CellEdit, MaskRule, SiteMask};
use tplay::model::{AttnSite, ForwardOptions, Model};

fn config(arch: Arch, pos: PosEncoding) -> ModelConfig {
    let cfg = ModelConfig {
        pos_encoding: pos,
        relative_max_distance: 4,
        max_len: 32,
        ..ModelConfig::preset(nano_preset(arch), letters(16).vocab_size()).unwrap()
    };
    cfg.validate().unwrap();
    cfg
}

/// A random model whose `<eos>` logit is pushed far down, so every run uses its whole
/// budget and the comparison covers every step.
fn model(cfg: ModelConfig, seed: u64) -> Model {
    eos_unlikely(Model::init(cfg, letters(16), seed))
}

fn src_for(m: &Model) -> Option<Vec<u32>> {
    (m.config.arch == Arch::EncoderDecoder).then(|| vec![5, 9, 4, 12, 7, 6])
}

fn run_on(
    backend: Backend,
    m: &Model,
    prompt: &[u32],
    strategy: Strategy,
    use_cache: bool,
    n: usize,
) -> Vec<Step> {
    let opts = GenerateOptions {
        strategy,
        seed: 42,
        max_new_tokens: n,
        use_cache,
        top_candidates: 3,
        ..GenerateOptions::default()
    };
    run_to_end(m, backend, prompt, src_for(m), opts).0
}

fn run(m: &Model, prompt: &[u32], strategy: Strategy, use_cache: bool, n: usize) -> Vec<Step> {
    run_on(Backend::Cpu, m, prompt, strategy, use_cache, n)
}

backend_tests!(
    cached_logits_equal_full_recompute_at_every_step_for_every_decoder_and_position_encoding,
    |dev| {
        let sample = Strategy::Sample(Sampling {
            temperature: 1.0,
            top_k: None,
            top_p: None,
        });
        let mut worst = 0.0f32;
        for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
            for (k, pos) in PosEncoding::ALL.into_iter().enumerate() {
                let m = model(config(arch, pos), 100 + k as u64);
                let prompt = [m.tokenizer.spec.bos, 6, 8];
                let cached = run_on(dev.backend(), &m, &prompt, sample, true, 20);
                let full = run_on(dev.backend(), &m, &prompt, sample, false, 20);
                assert_eq!(
                    cached.len(),
                    20,
                    "{arch:?}/{pos:?}: the whole budget is used"
                );
                let what = format!("{arch:?}/{pos:?}");
                worst = worst.max(runs_agree(&what, &cached, &full, dev.pick(1e-5, 1e-4)));
            }
        }
        eprintln!("largest cached-vs-recomputed logit difference: {worst:e}");
    }
);

backend_tests!(
    cached_logits_equal_full_recompute_with_other_norms_and_scores,
    |dev| {
        let greedy = Strategy::Greedy;
        for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
            for (norm, score) in [
                (Norm::PostLn, Score::Additive),
                (Norm::BatchNorm, Score::Dot),
                (Norm::None, Score::ScaledDot),
            ] {
                let cfg = ModelConfig {
                    norm,
                    score,
                    ..config(arch, PosEncoding::Rope)
                };
                let m = model(cfg, 7);
                let prompt = [m.tokenizer.spec.bos];
                let what = format!("{arch:?}/{norm:?}/{score:?}");
                runs_agree(
                    &what,
                    &run_on(dev.backend(), &m, &prompt, greedy, true, 12),
                    &run_on(dev.backend(), &m, &prompt, greedy, false, 12),
                    dev.pick(1e-5, 1e-4),
                );
            }
        }
    }
);

backend_tests!(
    beam_search_with_the_cache_equals_beam_search_without_it,
    |dev| {
        let beam = Strategy::Beam {
            width: 3,
            length_penalty: LengthPenalty::Gnmt { alpha: 0.6 },
        };
        for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
            for pos in [
                PosEncoding::Learned,
                PosEncoding::Relative,
                PosEncoding::Alibi,
            ] {
                let m = model(config(arch, pos), 3);
                let prompt = [m.tokenizer.spec.bos, 4];
                let cached = run_on(dev.backend(), &m, &prompt, beam, true, 8);
                let full = run_on(dev.backend(), &m, &prompt, beam, false, 8);
                let what = format!("beam {arch:?}/{pos:?}");
                runs_agree(&what, &cached, &full, dev.pick(1e-5, 1e-4));
                for (i, (c, f)) in cached.iter().zip(&full).enumerate() {
                    let (cb, fb) = (c.beam.as_ref().unwrap(), f.beam.as_ref().unwrap());
                    let toks = |b: &[tplay::generate::Hypothesis]| -> Vec<Vec<u32>> {
                        b.iter().map(|h| h.tokens.clone()).collect()
                    };
                    assert_eq!(
                        toks(&cb.live),
                        toks(&fb.live),
                        "{what}, step {i}: live beams"
                    );
                    assert_eq!(toks(&cb.finished), toks(&fb.finished), "{what}, step {i}");
                    for (x, y) in cb.live.iter().zip(&fb.live) {
                        assert!((x.log_prob - y.log_prob).abs() < 1e-4, "{what}, step {i}");
                    }
                }
            }
        }
    }
);

backend_tests!(
    the_cache_grows_by_one_position_per_step_and_the_first_step_prefills_the_prompt,
    |dev| {
        let m = model(config(Arch::DecoderOnly, PosEncoding::Sinusoidal), 1);
        let prompt = [m.tokenizer.spec.bos, 4, 5, 6];
        let cached = run_on(dev.backend(), &m, &prompt, Strategy::Greedy, true, 6);
        let fed: Vec<usize> = cached.iter().map(|s| s.fed).collect();
        assert_eq!(fed, vec![4, 1, 1, 1, 1, 1]);
        let lens: Vec<usize> = cached.iter().map(|s| s.cache_len).collect();
        assert_eq!(lens, vec![4, 5, 6, 7, 8, 9]);
        // Each step's attention row covers exactly the positions in the cache.
        for s in &cached {
            for layer in &s.attention {
                assert_eq!(layer.len(), 4, "one row per head");
                for head in layer {
                    assert_eq!(head.len(), s.cache_len);
                    let total: f32 = head.iter().sum();
                    assert!((total - 1.0).abs() < 1e-5, "an attention row sums to one");
                }
            }
        }
        let full = run_on(dev.backend(), &m, &prompt, Strategy::Greedy, false, 6);
        let fed: Vec<usize> = full.iter().map(|s| s.fed).collect();
        assert_eq!(
            fed,
            vec![4, 5, 6, 7, 8, 9],
            "without the cache the prefix is refed"
        );
        assert_eq!(full.last().unwrap().stop, Some(StopReason::MaxTokens));
    }
);

backend_tests!(
    a_cacheable_mask_generates_with_the_cache_what_recomputing_generates,
    |dev| {
        for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
            let m = model(config(arch, PosEncoding::Alibi), 4);
            let prompt = vec![m.tokenizer.spec.bos, 5, 7];
            for rule in [
                MaskRule::SlidingWindow { window: 2 },
                MaskRule::PrefixLm { prefix: 3 },
            ] {
                let mask = SiteMask {
                    site: AttnSite::DecoderSelf,
                    rule,
                    cells: vec![CellEdit {
                        query: 4,
                        key: 3,
                        hidden: true,
                    }],
                };
                let (cached, why, used) =
                    run_masked(dev.backend(), &m, &prompt, mask.clone(), true);
                assert_eq!((why, used), (None, true), "{rule:?}");
                let (full, _, _) = run_masked(dev.backend(), &m, &prompt, mask, false);
                let worst = runs_agree(
                    &format!("{arch:?} {rule:?}"),
                    &cached,
                    &full,
                    dev.pick(1e-5, 1e-4),
                );
                eprintln!("{arch:?} {rule:?}: cached vs recomputed logits, worst {worst:e}");
            }
        }
    }
);

/// Generation under an explicit decoder mask, with or without the cache.
fn run_masked(
    backend: Backend,
    m: &Model,
    prompt: &[u32],
    mask: SiteMask,
    use_cache: bool,
) -> (Vec<Step>, Option<String>, bool) {
    let opts = GenerateOptions {
        seed: 42,
        max_new_tokens: 6,
        use_cache,
        forward: ForwardOptions {
            masks: vec![mask],
            ..ForwardOptions::default()
        },
        ..GenerateOptions::default()
    };
    let mut g = Generator::new(m, backend, prompt.to_vec(), src_for(m), opts).unwrap();
    let why = g.recompute_reason().map(str::to_string);
    let mut steps = vec![];
    while let Some(s) = block_on(g.step()).unwrap() {
        steps.push(s);
    }
    (steps, why, g.summary().use_cache)
}

#[test]
fn uncached_steps_cost_more_the_longer_the_sequence_and_cached_ones_barely_grow() {
    let m = model(config(Arch::DecoderOnly, PosEncoding::Sinusoidal), 1);
    let prompt = [m.tokenizer.spec.bos];
    let cached = run(&m, &prompt, Strategy::Greedy, true, 24);
    let full = run(&m, &prompt, Strategy::Greedy, false, 24);
    let macs = |s: &[Step], i: usize| s[i].multiply_adds as f64;
    // From step 4 to step 20 (context 5 → 21): the recompute's cost grows more than
    // fourfold (it is at least linear in the length, with a quadratic attention term),
    // the cached step's by less than 25 % (only its 2·C·S attention term grows).
    assert!(macs(&full, 20) > 4.0 * macs(&full, 4));
    assert!(macs(&cached, 20) < 1.25 * macs(&cached, 4));
    assert!(macs(&cached, 20) > macs(&cached, 4));
    // Quadratic: the increments of the recompute grow.
    let inc = |i: usize| macs(&full, i + 1) - macs(&full, i);
    assert!(inc(20) > inc(4));
}

#[test]
fn without_attention_tracing_steps_carry_no_maps_and_the_same_logits() {
    let m = model(config(Arch::EncoderDecoder, PosEncoding::Rope), 2);
    let prompt = vec![m.tokenizer.spec.bos, 5];
    for use_cache in [true, false] {
        let traced = run(&m, &prompt, Strategy::Greedy, use_cache, 6);
        let opts = GenerateOptions {
            max_new_tokens: 6,
            use_cache,
            trace_attention: false,
            ..GenerateOptions::default()
        };
        let mut g = Generator::new(&m, Backend::Cpu, prompt.clone(), src_for(&m), opts).unwrap();
        let mut n = 0;
        while let Some(s) = block_on(g.step()).unwrap() {
            assert!(s.attention.is_empty() && s.cross_attention.is_empty());
            assert_eq!(s.logits, traced[n].logits, "step {n}, cache {use_cache}");
            n += 1;
        }
        assert_eq!(n, traced.len());
    }
}

#[test]
fn an_edited_mask_the_cache_cannot_hold_is_recomputed_and_says_why() {
    let m = model(config(Arch::DecoderOnly, PosEncoding::Rope), 4);
    let prompt = vec![m.tokenizer.spec.bos, 5, 7];
    // Query 3 (the first generated token) is shown key 5, generated two steps later.
    let mask = SiteMask {
        site: AttnSite::DecoderSelf,
        rule: MaskRule::Causal,
        cells: vec![CellEdit {
            query: 3,
            key: 5,
            hidden: false,
        }],
    };
    let (steps, why, used) = run_masked(Backend::Cpu, &m, &prompt, mask.clone(), true);
    let why = why.expect("the generator says why it recomputes");
    assert!(why.contains("shows key 5 to query 3"), "{why}");
    assert!(!used);
    let (full, none, _) = run_masked(Backend::Cpu, &m, &prompt, mask, false);
    assert_eq!(
        none, None,
        "nothing to explain when the cache was not asked for"
    );
    for (a, b) in steps.iter().zip(&full) {
        assert_eq!(a.logits, b.logits);
    }
    // A bidirectional mask is recomputed as well, rather than refused.
    let none_rule = SiteMask {
        site: AttnSite::DecoderSelf,
        rule: MaskRule::None,
        cells: vec![],
    };
    let (_, why, _) = run_masked(Backend::Cpu, &m, &prompt, none_rule, true);
    assert!(why.unwrap().contains("bidirectional"));
}
