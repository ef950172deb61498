//! Decoding strategies on real (random) models through the Generator: greedy is beam
//! search of width 1 and sampling with top-k = 1 or τ → 0; beam search finds the sequence
//! an exhaustive search scores best; seeds make sampling reproducible.

mod support;

use pollster::block_on;
use support::{eos_unlikely, letters, nano_preset};
use tplay::backend::Backend;
use tplay::config::{Arch, ModelConfig};
use tplay::generate::{
    GenerateOptions, Generator, LengthPenalty, Sampling, StopReason, Strategy, Summary,
};
use tplay::model::forward::Batch;
use tplay::model::{ForwardOptions, HeadParams, Model};
use tplay::Tokenizer;

/// A nano model over sixteen letters; with `suppress_eos` runs use their whole budget.
fn model(arch: Arch, seed: u64, suppress_eos: bool) -> Model {
    let tok = letters(16);
    let cfg = ModelConfig::preset(nano_preset(arch), tok.vocab_size()).unwrap();
    let m = Model::init(cfg, tok, seed);
    if suppress_eos {
        eos_unlikely(m)
    } else {
        m
    }
}

fn src_for(m: &Model) -> Option<Vec<u32>> {
    (m.config.arch == Arch::EncoderDecoder).then(|| vec![5, 9, 4, 12, 7])
}

fn generate(m: &Model, strategy: Strategy, seed: u64, n: usize) -> Summary {
    let opts = GenerateOptions {
        strategy,
        seed,
        max_new_tokens: n,
        ..GenerateOptions::default()
    };
    let prompt = vec![m.tokenizer.spec.bos, 4, 5];
    let mut g = Generator::new(m, Backend::Cpu, prompt, src_for(m), opts).unwrap();
    block_on(g.run_to_end()).unwrap()
}

fn sample(temperature: f32, top_k: Option<usize>, top_p: Option<f32>) -> Strategy {
    Strategy::Sample(Sampling {
        temperature,
        top_k,
        top_p,
    })
}

fn beam(width: usize, length_penalty: LengthPenalty) -> Strategy {
    Strategy::Beam {
        width,
        length_penalty,
    }
}

#[test]
fn greedy_equals_beam_search_of_width_one() {
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        for seed in 0..4 {
            // With <eos> allowed: both must stop at the same place too.
            let m = model(arch, seed, false);
            let g = generate(&m, Strategy::Greedy, 0, 16);
            for lp in [LengthPenalty::None, LengthPenalty::Gnmt { alpha: 0.6 }] {
                let b = generate(&m, beam(1, lp), 0, 16);
                assert_eq!(g.tokens, b.tokens, "{arch:?}, model seed {seed}, {lp:?}");
                assert!((g.log_prob - b.log_prob).abs() < 1e-6);
            }
        }
    }
}

#[test]
fn top_k_of_one_equals_greedy() {
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        let m = model(arch, 11, true);
        let g = generate(&m, Strategy::Greedy, 0, 20);
        for seed in [1, 2, 3] {
            let k1 = generate(&m, sample(1.5, Some(1), None), seed, 20);
            assert_eq!(g.tokens, k1.tokens, "{arch:?}, sampling seed {seed}");
        }
    }
}

#[test]
fn temperature_going_to_zero_behaves_as_greedy() {
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        let m = model(arch, 12, true);
        let g = generate(&m, Strategy::Greedy, 0, 20);
        for t in [0.0, 1e-4, 1e-6] {
            for seed in [1, 2] {
                let s = generate(&m, sample(t, None, None), seed, 20);
                assert_eq!(g.tokens, s.tokens, "{arch:?}, τ = {t}, seed {seed}");
            }
        }
        // A high temperature does not (the check above is not vacuous).
        let hot = generate(&m, sample(2.0, None, None), 1, 20);
        assert_ne!(g.tokens, hot.tokens);
    }
}

#[test]
fn the_same_seed_gives_the_same_tokens_and_other_seeds_do_not() {
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        let m = model(arch, 13, true);
        let s = sample(1.0, None, Some(0.95));
        let first = generate(&m, s, 7, 20);
        assert_eq!(first.tokens.len(), 20);
        assert_eq!(first.tokens, generate(&m, s, 7, 20).tokens);
        let differing = (100..110)
            .filter(|&seed| generate(&m, s, seed, 20).tokens != first.tokens)
            .count();
        assert!(
            differing >= 9,
            "{arch:?}: only {differing} of 10 other seeds changed the output"
        );
    }
}

#[test]
fn filtered_tokens_are_never_drawn() {
    // 300 first tokens from different seeds: each is among the 3 most probable (top-k 3)
    // and lies in the nucleus the step reports (sample_prob > 0).
    let m = model(Arch::DecoderOnly, 14, true);
    let opts = |seed| GenerateOptions {
        strategy: sample(1.0, Some(3), Some(0.6)),
        seed,
        max_new_tokens: 1,
        top_candidates: m.config.vocab_size,
        ..GenerateOptions::default()
    };
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..300 {
        let prompt = vec![m.tokenizer.spec.bos, 4, 5];
        let mut g = Generator::new(&m, Backend::Cpu, prompt, None, opts(seed)).unwrap();
        let step = block_on(g.step()).unwrap().unwrap();
        let tok = step.token.unwrap();
        let rank = step.candidates.iter().position(|c| c.id == tok).unwrap();
        assert!(rank < 3, "drew the token ranked {rank}");
        assert!(step.candidates[rank].sample_prob > 0.0);
        let mass: f32 = step.candidates.iter().map(|c| c.sample_prob).sum();
        assert!(
            (mass - 1.0).abs() < 1e-5,
            "the drawn distribution sums to one"
        );
        let model_mass: f32 = step.candidates.iter().map(|c| c.prob).sum();
        assert!(
            (model_mass - 1.0).abs() < 1e-5,
            "model probabilities are over the whole vocabulary"
        );
        seen.insert(tok);
        assert_eq!(step.stop, Some(StopReason::MaxTokens));
    }
    assert!(
        seen.len() >= 2,
        "sampling drew more than one token: {seen:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Beam search against exhaustive search
// ---------------------------------------------------------------------------------------

/// The length penalties, written out here independently of the library.
fn lp(penalty: LengthPenalty, len: usize) -> f64 {
    let len = len as f64;
    match penalty {
        LengthPenalty::None => 1.0,
        LengthPenalty::Gnmt { alpha } => ((5.0 + len) / 6.0).powf(alpha),
        LengthPenalty::Power { alpha } => len.powf(alpha),
    }
}

fn log_softmax(l: &[f32]) -> Vec<f64> {
    let m = l.iter().fold(f64::NEG_INFINITY, |a, &x| a.max(x as f64));
    let z: f64 = l.iter().map(|&x| (x as f64 - m).exp()).sum();
    l.iter().map(|&x| x as f64 - m - z.ln()).collect()
}

/// Every complete sequence of at most `budget` tokens (ending at its first <eos>, or
/// `budget` tokens without one) with its log-probability, from full forward passes.
fn enumerate(
    m: &Model,
    prompt: &[u32],
    budget: usize,
    src: Option<&[u32]>,
) -> Vec<(Vec<u32>, f64)> {
    let eos = m.tokenizer.spec.eos;
    let v = m.config.vocab_size;
    let mut done = vec![];
    let mut frontier = vec![(vec![], 0.0f64)];
    for len in 1..=budget {
        let mut next = vec![];
        for (seq, lp) in frontier {
            let tokens: Vec<u32> = prompt.iter().copied().chain(seq.iter().copied()).collect();
            let mut batch = Batch::single(&tokens).unwrap();
            if let Some(src) = src {
                batch = batch.with_source(vec![src.to_vec()]).unwrap();
            }
            let trace = m.forward(&batch, &ForwardOptions::default()).unwrap();
            let t = tokens.len();
            let logp = log_softmax(&trace.logits.data[(t - 1) * v..t * v]);
            for (tok, &x) in logp.iter().enumerate() {
                let mut s: Vec<u32> = seq.clone();
                s.push(tok as u32);
                if tok as u32 == eos || len == budget {
                    done.push((s, lp + x));
                } else {
                    next.push((s, lp + x));
                }
            }
        }
        frontier = next;
    }
    done
}

#[test]
fn beam_search_returns_the_sequence_exhaustive_search_scores_best() {
    // V = 6 (<pad> <bos> <eos> <unk> a b), a budget of 4: 1 + 5 + 25 + 125 prefixes.
    // The widest step has 125 · 6 = 750 candidates; a beam that wide prunes nothing.
    let tok = Tokenizer::char_level("ab");
    let mut checked = 0;
    let mut greedy_missed = 0;
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        let preset = match arch {
            Arch::DecoderOnly => "gpt-pico",
            _ => "seq2seq-nano",
        };
        let cfg = ModelConfig {
            max_len: 8,
            ..ModelConfig::preset(preset, tok.vocab_size()).unwrap()
        };
        for seed in 0..3 {
            let mut m = Model::init(cfg.clone(), tok.clone(), seed);
            // Flatten the distributions: close alternatives make greedy miss the optimum often.
            if let HeadParams::Lm {
                weight: Some(w), ..
            } = &mut m.head
            {
                w.data.iter_mut().for_each(|x| *x *= 0.5);
            }
            let src: Option<Vec<u32>> = (arch == Arch::EncoderDecoder).then(|| vec![4, 5, 5, 4]);
            let prompt = vec![m.tokenizer.spec.bos];
            let all = enumerate(&m, &prompt, 4, src.as_deref());
            for penalty in [
                LengthPenalty::None,
                LengthPenalty::Gnmt { alpha: 0.6 },
                LengthPenalty::Power { alpha: 1.0 },
                LengthPenalty::Power { alpha: 2.0 },
            ] {
                let score = |s: &(Vec<u32>, f64)| s.1 / lp(penalty, s.0.len());
                let best = all.iter().map(score).fold(f64::NEG_INFINITY, f64::max);
                let opts = GenerateOptions {
                    strategy: beam(750, penalty),
                    max_new_tokens: 4,
                    ..GenerateOptions::default()
                };
                let mut g =
                    Generator::new(&m, Backend::Cpu, prompt.clone(), src.clone(), opts).unwrap();
                let got = block_on(g.run_to_end()).unwrap();
                let mine = all
                    .iter()
                    .find(|s| s.0 == got.tokens)
                    .expect("beam search returned a complete sequence");
                let what = format!("{arch:?}, seed {seed}, {penalty:?}");
                assert!(
                    (score(mine) - best).abs() < 1e-5,
                    "{what}: beam found {:?} scoring {}, exhaustive best is {best}",
                    got.tokens,
                    score(mine)
                );
                assert!((got.score - best).abs() < 1e-5, "{what}: reported score");
                checked += 1;
                // Width 1 (greedy) as a control: it must sometimes miss the optimum,
                // or these models would not tell beam search from greedy.
                let opts = GenerateOptions {
                    strategy: beam(1, penalty),
                    max_new_tokens: 4,
                    ..GenerateOptions::default()
                };
                let mut g =
                    Generator::new(&m, Backend::Cpu, prompt.clone(), src.clone(), opts).unwrap();
                if block_on(g.run_to_end()).unwrap().score < best - 1e-5 {
                    greedy_missed += 1;
                }
            }
        }
    }
    assert_eq!(checked, 24);
    eprintln!("greedy missed the optimum in {greedy_missed} of {checked} cases");
    assert!(greedy_missed > 0, "greedy found the optimum every time");
}

/// Every token of a generation on the CPU that moves to `Backend::Cpu` again after `k`
/// steps (its cache rebuilt, the random stream kept), next to an uninterrupted run.
fn resumed_after(m: &Model, strategy: Strategy, seed: u64, n: usize, k: usize) -> Vec<u32> {
    let opts = GenerateOptions {
        strategy,
        seed,
        max_new_tokens: n,
        ..GenerateOptions::default()
    };
    let prompt = vec![m.tokenizer.spec.bos, 4, 5];
    let mut g = Generator::new(m, Backend::Cpu, prompt, src_for(m), opts).unwrap();
    for _ in 0..k {
        block_on(g.step()).unwrap();
    }
    block_on(g.resume_on(Backend::Cpu)).unwrap();
    block_on(g.run_to_end()).unwrap().tokens
}

#[test]
fn resuming_mid_generation_rebuilds_the_cache_and_keeps_the_random_stream() {
    let strategies = [
        Strategy::Greedy,
        sample(1.3, None, None),
        sample(0.9, Some(6), Some(0.95)),
        beam(3, LengthPenalty::Gnmt { alpha: 0.6 }),
    ];
    for arch in [Arch::DecoderOnly, Arch::EncoderDecoder] {
        let m = model(arch, 31, true);
        for strategy in strategies {
            let whole = generate(&m, strategy, 77, 9).tokens;
            assert_eq!(whole.len(), 9, "{arch:?} {strategy:?}: the whole budget");
            for k in [1, 4, 8] {
                let resumed = resumed_after(&m, strategy, 77, 9, k);
                assert_eq!(
                    resumed, whole,
                    "{arch:?} {strategy:?}, resumed after step {k}"
                );
            }
        }
    }
    // What carrying on from a fresh generator with the same seed does instead (the old
    // recovery): its random stream starts over, so a sampled tail differs.
    let m = model(Arch::DecoderOnly, 31, true);
    let strategy = sample(1.3, None, None);
    let whole = generate(&m, strategy, 77, 9).tokens;
    let opts = GenerateOptions {
        strategy,
        seed: 77,
        max_new_tokens: 5,
        ..GenerateOptions::default()
    };
    let prompt = [&[m.tokenizer.spec.bos, 4, 5][..], &whole[..4]].concat();
    let restarted = block_on(
        Generator::new(&m, Backend::Cpu, prompt, None, opts)
            .unwrap()
            .run_to_end(),
    )
    .unwrap()
    .tokens;
    assert_ne!(
        restarted,
        whole[4..],
        "a restarted stream draws other tokens"
    );
}
