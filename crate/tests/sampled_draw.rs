//! A sampled token's step says how the sampler drew it (`Step::draw`): the shaped
//! distribution's tokens in walk order with their running sum, and the uniform number u
//! that fell into the chosen token's interval. The record reproduces every token, and
//! reporting it leaves the seeded run as it was: the tokens are those of the plain sampler
//! (`sampling::choose`) driven by the same seed.

mod support;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use support::generation::run_to_end;
use support::{eos_unlikely, model, nano_preset, tokenizer};
use tplay::backend::Backend;
use tplay::config::{Arch, ModelConfig};
use tplay::generate::sampling::{self, explain_draw, sampling_distribution, SampleDraw};
use tplay::generate::{GenerateOptions, LengthPenalty, Sampling, Strategy};

fn gpt() -> tplay::model::Model {
    let cfg =
        ModelConfig::preset(nano_preset(Arch::DecoderOnly), tokenizer().vocab_size()).unwrap();
    eos_unlikely(model(cfg, 21))
}

fn opts(strategy: Strategy, seed: u64) -> GenerateOptions {
    GenerateOptions {
        strategy,
        seed,
        max_new_tokens: 24,
        ..GenerateOptions::default()
    }
}

/// The token whose listed interval `[cum − prob, cum)` holds `u`, walking the record.
fn token_at(d: &SampleDraw) -> Option<u32> {
    d.ids
        .iter()
        .zip(d.cum.iter().zip(&d.probs))
        .find(|(_, (c, p))| **c - **p <= d.u && d.u < **c)
        .map(|(id, _)| *id)
}

const SHAPES: [Sampling; 4] = [
    Sampling {
        temperature: 1.0,
        top_k: None,
        top_p: None,
    },
    Sampling {
        temperature: 1.6,
        top_k: None,
        top_p: None,
    },
    Sampling {
        temperature: 0.9,
        top_k: Some(5),
        top_p: None,
    },
    Sampling {
        temperature: 1.2,
        top_k: None,
        top_p: Some(0.8),
    },
];

#[test]
fn the_reported_u_and_interval_reproduce_every_sampled_token() {
    let m = gpt();
    let prompt = [m.tokenizer.spec.bos, 4, 5];
    let mut not_most_likely = 0;
    for (k, shape) in SHAPES.iter().enumerate() {
        let (steps, _) = run_to_end(
            &m,
            Backend::Cpu,
            &prompt,
            None,
            opts(Strategy::Sample(*shape), 40 + k as u64),
        );
        assert!(!steps.is_empty());
        for s in &steps {
            let d = s.draw.as_ref().expect("a sampled step reports its draw");
            let token = s.token.unwrap();
            assert_eq!(d.chosen, token);
            assert_eq!(d.ids[d.chosen_at], token);
            assert!(
                d.lo <= d.u && d.u < d.hi,
                "step {}: u {} outside [{}, {})",
                s.index,
                d.u,
                d.lo,
                d.hi
            );
            assert_eq!(
                token_at(d),
                Some(token),
                "step {}: the interval holding u",
                s.index
            );
            assert!((0.0..1.0 + 1e-9).contains(&d.u));
            // The record is the sampler's distribution of this step's logits, in walk order.
            let probs = sampling_distribution(&s.logits, shape).unwrap();
            let walked: Vec<u32> = (0..probs.len() as u32)
                .filter(|&i| probs[i as usize] > 0.0)
                .collect();
            assert_eq!(d.possible, walked.len());
            assert!(
                d.ids.windows(2).all(|w| w[0] < w[1]),
                "walk order is id order"
            );
            let mut cum = 0.0;
            for &i in &walked {
                cum += probs[i as usize];
                if let Some(at) = d.ids.iter().position(|&x| x == i) {
                    assert_eq!(d.probs[at], probs[i as usize]);
                    assert_eq!(d.cum[at], cum, "running sum at token {i}");
                }
            }
            assert!(
                (d.hi - d.lo - probs[token as usize]).abs() < 1e-12,
                "the interval is as long as the probability"
            );
            assert_eq!(d.most_likely as usize, sampling::rank(&probs)[0]);
            if token != d.most_likely {
                not_most_likely += 1;
            }
        }
    }
    // The picture explains something: some draws did not take the most likely token.
    assert!(not_most_likely > 0);
}

#[test]
fn reporting_the_draw_leaves_the_seeded_tokens_as_the_plain_sampler_draws_them() {
    let m = gpt();
    let prompt = [m.tokenizer.spec.bos, 6, 7, 4];
    for (k, shape) in SHAPES.iter().enumerate() {
        let seed = 7 + k as u64;
        let (steps, summary) = run_to_end(
            &m,
            Backend::Cpu,
            &prompt,
            None,
            opts(Strategy::Sample(*shape), seed),
        );
        // The same seed through `sampling::choose`, one call per step's logits.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let replay: Vec<u32> = steps
            .iter()
            .map(|s| sampling::choose(&s.logits, shape, &mut rng).unwrap())
            .collect();
        assert_eq!(summary.tokens, replay, "shape {k}");
        // And a second run gives the same tokens and the same draws.
        let (again, _) = run_to_end(
            &m,
            Backend::Cpu,
            &prompt,
            None,
            opts(Strategy::Sample(*shape), seed),
        );
        assert_eq!(
            steps.iter().map(|s| &s.draw).collect::<Vec<_>>(),
            again.iter().map(|s| &s.draw).collect::<Vec<_>>()
        );
    }
}

#[test]
fn greedy_and_beam_steps_report_no_draw() {
    let m = gpt();
    let prompt = [m.tokenizer.spec.bos, 4];
    for strategy in [
        Strategy::Greedy,
        Strategy::Sample(Sampling {
            temperature: 0.0,
            top_k: None,
            top_p: None,
        }),
        Strategy::Sample(Sampling {
            temperature: 1.0,
            top_k: Some(1),
            top_p: None,
        }),
        Strategy::Beam {
            width: 2,
            length_penalty: LengthPenalty::Gnmt { alpha: 0.6 },
        },
    ] {
        let (steps, _) = run_to_end(&m, Backend::Cpu, &prompt, None, opts(strategy, 3));
        assert!(steps.iter().all(|s| s.draw.is_none()), "{strategy:?}");
    }
}

#[test]
fn a_draw_over_a_known_distribution_lists_its_intervals() {
    let probs = [0.1, 0.0, 0.5, 0.4];
    let d = explain_draw(&probs, 0.55, 2);
    assert_eq!(d.ids, vec![0, 2, 3]);
    assert_eq!(d.cum, vec![0.1, 0.6, 1.0]);
    assert_eq!((d.lo, d.hi, d.chosen_at), (0.1, 0.6, 1));
    assert_eq!(d.most_likely, 2);
    assert_eq!(d.possible, 3);
    // A large vocabulary lists the most probable intervals and the chosen one, with their
    // true running sums.
    let mut wide = vec![1.0 / 2000.0; 2000];
    wide[1500] = 0.0;
    let d = explain_draw(&wide, 0.999, 1999);
    assert_eq!(d.ids.len(), sampling::DRAW_INTERVALS + 1);
    assert_eq!(*d.ids.last().unwrap(), 1999);
    assert_eq!(d.possible, 1999);
    assert!((d.hi - 1999.0 / 2000.0).abs() < 1e-12);
}
